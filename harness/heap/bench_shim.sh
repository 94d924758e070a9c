#!/usr/bin/env bash
# bench_shim.sh: overhead of libmemleak_heap.so: malloc-heavy loops and reference-engine infer loops, run with
# and without the shim under each allocator; prints medians and ratios. A benchmark: it must never fail on a number.
#
# env: MLK_BUILD_DIR (default <repo>/build), MLK_BENCH_DIR (default $MLK_BUILD_DIR/bench; heap_shim.jsonl goes
#      there), MLK_BENCH_REPS (default 5), MLK_BENCH_ALLOCATORS (default "glibc jemalloc"; also tcmalloc mimalloc),
#      MLK_BENCH_OPS (malloc loop operations, default 5000000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
out="${MLK_BENCH_DIR:-$build/bench}"
reps="${MLK_BENCH_REPS:-5}"
allocators="${MLK_BENCH_ALLOCATORS:-glibc jemalloc}"
n_ops="${MLK_BENCH_OPS:-5000000}"
bench="$build/tests/bench_heap_shim"
shim="$build/lib/libmemleak_heap.so"
refengine="$build/bin/refengine"
libdir=/usr/lib/x86_64-linux-gnu

if [ ! -x "$bench" ] || [ ! -f "$shim" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)" --target bench_heap_shim memleak_heap
fi
mkdir -p "$out/models"
results="$out/heap_shim.jsonl"
: > "$results"

allocator_lib() {
  case "$1" in
    glibc) echo "" ;;
    jemalloc) echo "$libdir/libjemalloc.so.2" ;;
    tcmalloc) echo "$libdir/libtcmalloc_minimal.so.4" ;;
    mimalloc) echo "$libdir/libmimalloc.so.2" ;;
    *) echo "bench_shim.sh: unknown allocator '$1'" >&2; return 1 ;;
  esac
}

median() { # numbers on stdin -> their median
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                       else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure PRELOAD CMD...: one figure from a run: bench_heap_shim's CPU ns/op (the wall clock on a loaded machine
# measures the wait for a core), or refengine's infer median in ms (wall: compare on a quiet machine); with
# MEASURE=cpu, the whole run's user+system seconds instead (read and compile included, robust to load).
measure() {
  local preload=$1; shift
  if [ "${MEASURE:-}" = cpu ]; then
    local TIMEFORMAT='%U %S'
    { time LD_PRELOAD="$preload" "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.3f\n", $1 + $2 }'
  elif [ "$1" = "$refengine" ]; then
    LD_PRELOAD="$preload" "$@" | grep -o '"infer_median_ms":[0-9.]*' | cut -d: -f2
  else
    LD_PRELOAD="$preload" "$@" | awk '{ print $3 }'
  fi
}

# compare ALLOCATOR NAME UNIT CMD...: runs CMD reps times each way, alternating which goes first so that
# drift on a shared machine hits both sides alike; prints a row and appends a JSON line.
compare() {
  local alloc=$1 name=$2 unit=$3; shift 3
  local lib without with plain shimmed
  lib=$(allocator_lib "$alloc")
  plain="$lib"
  shimmed="$shim${lib:+ $lib}"
  without=$(mktemp) with=$(mktemp)
  for r in $(seq "$reps"); do
    if [ $((r % 2)) -eq 1 ]; then
      measure "$plain" "$@" >> "$without"; measure "$shimmed" "$@" >> "$with"
    else
      measure "$shimmed" "$@" >> "$with"; measure "$plain" "$@" >> "$without"
    fi
  done
  local m0 m1 ratio
  m0=$(median < "$without") m1=$(median < "$with")
  ratio=$(awk -v a="$m0" -v b="$m1" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "nan" }')
  printf '%-9s %-22s %10s %-6s %10s %-6s %7s\n' "$alloc" "$name" "$m0" "$unit" "$m1" "$unit" "$ratio"
  printf '{"allocator":"%s","loop":"%s","unit":"%s","reps":%d,"median_without":%s,"median_with":%s,"ratio":%s}\n' \
    "$alloc" "$name" "$unit" "$reps" "$m0" "$m1" "$ratio" >> "$results"
  rm -f "$without" "$with"
}

have_refengine=0
if [ -x "$refengine" ]; then
  have_refengine=1
  for arch in mlp mobilenetv2; do
    [ -f "$out/models/$arch.onnx" ] || "$refengine" gen "$arch" --out "$out/models/$arch.onnx" >/dev/null
  done
else
  echo "bench_shim.sh: no $refengine, infer loops not measured" >&2
fi

printf '%-9s %-22s %17s %17s %7s\n' allocator loop without with ratio
for alloc in $allocators; do
  lib=$(allocator_lib "$alloc")
  if [ -n "$lib" ] && [ ! -e "$lib" ]; then
    echo "bench_shim.sh: $alloc not installed ($lib), skipped" >&2
    continue
  fi
  compare "$alloc" "malloc/free 64 B" cpu-ns "$bench" tiny "$n_ops"
  compare "$alloc" "realistic sizes" cpu-ns "$bench" mixed "$n_ops"
  compare "$alloc" "64 B on 2 threads" cpu-ns "$bench" threads "$n_ops"
  if [ "$have_refengine" = 1 ]; then
    # --arena off: every infer allocates its activations, the engine's heaviest heap traffic (mobilenetv2:
    # 188 allocations, 87 MB per infer). Wall-clock medians are noisy on a shared machine: the CPU rows aren't.
    mlp=("$refengine" run "$out/models/mlp.onnx" --json --iterations 300 --arena off)
    mnv2=("$refengine" run "$out/models/mobilenetv2.onnx" --json --iterations 10 --arena off)
    compare "$alloc" "mlp infer median" ms "${mlp[@]}"
    MEASURE=cpu compare "$alloc" "mlp whole run" cpu-s "${mlp[@]}"
    compare "$alloc" "mobilenetv2 infer med." ms "${mnv2[@]}"
    MEASURE=cpu compare "$alloc" "mobilenetv2 whole run" cpu-s "${mnv2[@]}"
  fi
done
echo "results: $results" >&2

#!/usr/bin/env bash
# bench_sites.sh: what allocation sites cost (issue 9): bench_heap_shim's malloc-heavy loops under the heap shim with
# MLK_HEAP_SITES=off, sample (the default interval) and exact, each side alternating first, medians of CPU ns per
# operation; then memleak-run cells that name a planted leak (reference engine; ONNX Runtime when built), for the
# shim's cost per stack and the worker's time to symbolize. A benchmark: it must never fail on a number.
#
# env: MLK_BUILD_DIR (default <repo>/build), MLK_BENCH_DIR (default $MLK_BUILD_DIR/bench; heap_sites.jsonl goes
#      there), MLK_BENCH_REPS (default 5), MLK_BENCH_OPS (malloc loop operations, default 2000000),
#      MLK_BENCH_ALLOCATORS (default "glibc jemalloc")
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
out="${MLK_BENCH_DIR:-$build/bench}"
reps="${MLK_BENCH_REPS:-5}"
n_ops="${MLK_BENCH_OPS:-2000000}"
allocators="${MLK_BENCH_ALLOCATORS:-glibc jemalloc}"
bench="$build/tests/bench_heap_shim"
shim="$build/lib/libmemleak_heap.so"
libdir=/usr/lib/x86_64-linux-gnu
if [ ! -x "$bench" ] || [ ! -f "$shim" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)" --target bench_heap_shim memleak_heap
fi
mkdir -p "$out"
results="$out/heap_sites.jsonl"
: > "$results"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                                else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "nan" }'; }

# One loop under one allocator: CPU ns/op without the shim, and with it in each sites mode, rotating the order.
loops() {
  local alloc=$1 loop=$2 lib="" modes="off sample exact"
  case "$alloc" in
    glibc) lib="" ;;
    jemalloc) lib="$libdir/libjemalloc.so.2" ;;
    tcmalloc) lib="$libdir/libtcmalloc_minimal.so.4" ;;
    mimalloc) lib="$libdir/libmimalloc.so.2" ;;
  esac
  if [ -n "$lib" ] && [ ! -e "$lib" ]; then echo "bench_sites.sh: $alloc not installed, skipped" >&2; return; fi
  local tmp
  tmp=$(mktemp -d)
  for r in $(seq "$reps"); do
    local order="none $modes"
    [ $((r % 2)) -eq 0 ] && order="exact sample off none"
    for m in $order; do
      if [ "$m" = none ]; then
        LD_PRELOAD="$lib" "$bench" "$loop" "$n_ops" | awk '{ print $3 }' >> "$tmp/none"
      else
        MLK_HEAP_SITES=$m LD_PRELOAD="$shim${lib:+ $lib}" "$bench" "$loop" "$n_ops" | awk '{ print $3 }' >> "$tmp/$m"
      fi
    done
  done
  local none off sample exact
  none=$(median < "$tmp/none") off=$(median < "$tmp/off") sample=$(median < "$tmp/sample") exact=$(median < "$tmp/exact")
  printf '%-9s %-8s %9s %9s %9s %9s %8s %8s\n' "$alloc" "$loop" "$none" "$off" "$sample" "$exact" \
    "$(ratio "$off" "$sample")" "$(ratio "$off" "$exact")"
  printf '{"allocator":"%s","loop":"%s","unit":"cpu-ns/op","reps":%d,"no_shim":%s,"sites_off":%s,"sites_sample":%s,"sites_exact":%s,"sample_over_off":%s,"exact_over_off":%s}\n' \
    "$alloc" "$loop" "$reps" "$none" "$off" "$sample" "$exact" "$(ratio "$off" "$sample")" "$(ratio "$off" "$exact")" \
    >> "$results"
  rm -rf "$tmp"
}

echo "shim overhead, CPU ns per operation (median of $reps), $n_ops operations" >&2
printf '%-9s %-8s %9s %9s %9s %9s %8s %8s\n' allocator loop no-shim off sample exact smp/off exa/off
for alloc in $allocators; do
  for loop in tiny mixed threads; do loops "$alloc" "$loop"; done
done

# Cells that name a planted leak: the shim's mean cost per stack (cold caches included) and the worker's time to
# name the growing sites (libdw), from the db.
run="$build/bin/memleak-run"
if [ ! -x "$run" ] || [ ! -x "$build/bin/refengine" ]; then
  echo "bench_sites.sh: memleak-run or refengine not built: no cell figures" >&2
  echo "results: $results" >&2
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$out/cache}"
cell() { # tag, engine, heap_sites, engine options
  cat > "$work/s.yaml" <<YAML
name: bench-sites-$1
engine: $2
model: {generate: mobilenetv2}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 30
warmup: 3
heap_sites: $3
engine_options: {$4}
YAML
  local db="$work/$1.db"
  for r in $(seq "$reps"); do
    rm -f "$db"
    "$run" --db "$db" --quiet "$work/s.yaml" > /dev/null 2>&1 || true
    sqlite3 -batch -noheader "$db" "SELECT unwind_ns, symbolize_ms, sampled_allocs, n_sites FROM site_reports" \
      | tr '|' ' ' >> "$work/$1.txt"
  done
  local unwind sym stacks sites
  unwind=$(awk '{ print $1 }' "$work/$1.txt" | median)
  sym=$(awk '{ print $2 }' "$work/$1.txt" | median)
  stacks=$(awk '{ print $3 }' "$work/$1.txt" | median)
  sites=$(awk '{ print $4 }' "$work/$1.txt" | median)
  printf '%-22s %8s %10s %12s %14s\n' "$1" "$stacks" "$sites" "$unwind" "$sym"
  printf '{"cell":"%s","reps":%d,"stacks":%s,"sites":%s,"unwind_ns_per_stack":%s,"symbolize_ms":%s}\n' "$1" "$reps" \
    "$stacks" "$sites" "$unwind" "$sym" >> "$results"
}
if command -v sqlite3 >/dev/null; then
  echo "per cell (mobilenetv2, 30 iterations, a planted 64 KiB/iter leak), medians of $reps" >&2
  printf '%-22s %8s %10s %12s %14s\n' cell stacks sites ns/stack symbolize-ms
  cell ref-sample ref sample "inject_leak_bytes: 65536"
  cell ref-exact ref exact "inject_leak_bytes: 65536"
  if [ -f "$build/lib/engine_ort.so" ]; then
    cell ort-sample ort sample "threads: 1"
    cell ort-exact ort exact "threads: 1"
  fi
fi
echo "results: $results" >&2

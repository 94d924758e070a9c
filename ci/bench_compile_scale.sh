#!/usr/bin/env bash
# Compile time against graph length: the reference engine compiles generated chains (refengine gen chain) of 10k to
# 1M nodes and prints read and compile milliseconds per length, and how each grows against the previous length.
# Not a test: it measures, and fails only when a 100,000-node chain compiles in 10 s or more (issue 25's bound), or
# when compile time grows clearly faster than the node count (more than twice the node ratio between two lengths at
# least 2.5x apart: linear is 2.5x, quadratic 6.25x; the margin is for a machine shared with other work).
# It must never report a number it did not measure on this run.
#   MLK_SCALE_NODES="10000 40000 100000 400000 1000000"   lengths to measure
#   MLK_SCALE_REPS=3                                      runs per length; the median is reported
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
bin="$build/bin"
out="${MLK_BENCH_DIR:-$build/bench}/scale"
nodes="${MLK_SCALE_NODES:-10000 40000 100000 400000 1000000}"
reps="${MLK_SCALE_REPS:-3}"
mkdir -p "$out"
if [ ! -x "$bin/refengine" ]; then
  echo "bench_compile_scale: $bin/refengine is not built (cmake --build $build)" >&2
  exit 2
fi

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

status=0
prev_n="" prev_ms=""
printf '%10s %12s %12s %10s\n' nodes read_ms compile_ms growth
for n in $nodes; do
  m="$out/chain$n.onnx"
  [ -f "$m" ] || "$bin/refengine" gen chain --layers "$n" --hidden 4 --out "$m" >/dev/null
  reads=() compiles=()
  for _ in $(seq "$reps"); do
    line=$("$bin/refengine" run "$m" --json --iterations 1 --warmup 0)
    reads+=("$(printf '%s' "$line" | sed -n 's/.*"read_ms":\([0-9.]*\).*/\1/p')")
    compiles+=("$(printf '%s' "$line" | sed -n 's/.*"compile_ms":\([0-9.]*\).*/\1/p')")
  done
  read_ms=$(printf '%s\n' "${reads[@]}" | median)
  ms=$(printf '%s\n' "${compiles[@]}" | median)
  growth="-"
  if [ -n "$prev_n" ]; then
    growth=$(awk -v a="$prev_ms" -v b="$ms" -v na="$prev_n" -v nb="$n" \
      'BEGIN {printf "%.2fx/%.2fx", b / (a > 0.001 ? a : 0.001), nb / na}')
    # only judged on steps of at least 2.5x in length from at least 1 ms, where noise cannot dominate
    if awk -v a="$prev_ms" -v b="$ms" -v na="$prev_n" -v nb="$n" \
      'BEGIN {exit !(nb / na >= 2.5 && a >= 1 && b / a > 2 * (nb / na))}'; then
      echo "bench_compile_scale: compile time grew ${growth} (time/nodes) from $prev_n to $n nodes" >&2
      status=1
    fi
  fi
  printf '%10s %12s %12s %10s\n' "$n" "$read_ms" "$ms" "$growth"
  if [ "$n" = 100000 ] && awk -v t="$ms" 'BEGIN {exit !(t >= 10000)}'; then
    echo "bench_compile_scale: a 100,000-node chain compiled in $ms ms (bound: 10 s)" >&2
    status=1
  fi
  prev_n=$n prev_ms=$ms
done
exit $status

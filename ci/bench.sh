#!/usr/bin/env bash
# Benchmarks: the reference engine on the generated models (compile time, infer latency at 1 and 2 threads, VmHWM
# with mmap on/off, planner figures), then memleak-run itself (ci/bench_harness.sh). Not a test: it measures.
# It must never report a number it did not measure on this run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
bin="$build/bin"
out="${MLK_BENCH_DIR:-$build/bench}"
reps="${MLK_BENCH_REPS:-3}"
iters="${MLK_BENCH_ITERS:-20}"
mkdir -p "$out/models"

if [ ! -x "$bin/refengine" ]; then
  "$root/ci/setup.sh"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)"
fi

gen() { # name arch extra-args...
  local name=$1 arch=$2; shift 2
  [ -f "$out/models/$name.onnx" ] || "$bin/refengine" gen "$arch" --out "$out/models/$name.onnx" "$@" >/dev/null
}
gen mlp mlp
gen mobilenetv2 mobilenetv2
gen resnet18 resnet18
gen resnet50 resnet50
gen transformer transformer --layers 4 --hidden 256
gen resnet50_ext resnet50 --external-data

results="$out/results.jsonl"
: > "$results"
run() { # model tag args...
  local model=$1 tag=$2; shift 2
  for r in $(seq "$reps"); do
    printf '{"tag":"%s","rep":%d,"run":' "$tag" "$r" >> "$results"
    "$bin/refengine" run "$out/models/$model.onnx" --json --iterations "$iters" "$@" | tr -d '\n' >> "$results"
    printf '}\n' >> "$results"
  done
}
for m in mlp mobilenetv2 resnet18 resnet50 transformer; do
  echo "bench: $m" >&2
  run "$m" "$m/t1" --threads 1
  run "$m" "$m/t2" --threads 2
  run "$m" "$m/t1-mmap-off" --threads 1 --mmap off
  "$bin/refengine" plan "$out/models/$m.onnx" --json > "$out/plan-$m.json"
done
echo "bench: resnet50 external data, mmap on/off" >&2
run resnet50_ext "resnet50_ext/mmap-on" --mmap on --iterations 3
run resnet50_ext "resnet50_ext/mmap-off" --mmap off --iterations 3
for ct in 1 2; do
  run resnet50_ext "resnet50_ext/compile-threads-$ct" --compile-threads "$ct" --iterations 3
done

status=0
/usr/bin/python3 "$root/ci/bench_report.py" "$out" || status=1
MLK_BUILD_DIR="$build" MLK_BENCH_DIR="$out" "$root/ci/bench_harness.sh" || status=1
MLK_BUILD_DIR="$build" MLK_BENCH_DIR="$out" "$root/ci/bench_verdicts.sh" || status=1
# What allocation sites cost (issue 9): the shim with sites off, sampled and exact; stacks and time to name them.
MLK_BUILD_DIR="$build" MLK_BENCH_DIR="$out" "$root/harness/heap/bench_sites.sh" || status=1
# Long runs at constant memory (issue 14): the parent's peak and the db at 1e4, 1e5, 1e6 iterations.
MLK_BUILD_DIR="$build" MLK_BENCH_DIR="$out" "$root/ci/bench_soak.sh" || status=1
exit "$status"

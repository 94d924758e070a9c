#!/usr/bin/env bash
# Installs dependencies, builds memleak and runs the quickstart: until memleak-run lands, refengine on a generated model.
# It must never need anything installed by hand: setup.sh provides every package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/ci/setup.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build" -j "$(nproc)"

bin="$root/build/bin"
work="${MLK_QUICKSTART_DIR:-$root/build/quickstart}"
mkdir -p "$work"
model="$work/mobilenetv2.onnx"
if [ ! -f "$model" ]; then
  "$bin/refengine" gen mobilenetv2 --out "$model" --external-data
fi
echo "== plan"
"$bin/refengine" plan "$model"
for mmap in on off; do
  echo "== run (mmap $mmap)"
  "$bin/refengine" run "$model" --mmap "$mmap" --threads 2 --iterations 10
done

#!/usr/bin/env bash
# Installs dependencies, builds memleak twice (plain, and ASan+UBSan), and runs every test with ctest.
# It must never hide a failure: the sanitizer pass is itself a ctest test, so the last line is ctest's summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

"$root/ci/setup.sh"

echo "== build: ASan+UBSan (unit tests)"
cmake -S "$root" -B "$root/build-asan" -DMLK_SANITIZE=ON -DMLK_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build-asan" -j "$jobs"

echo "== build: release"
cmake -S "$root" -B "$root/build" -DMLK_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLK_ASAN_BUILD_DIR="$root/build-asan" >/dev/null
cmake --build "$root/build" -j "$jobs"

echo "== ctest"
cd "$root/build"
exec ctest --output-on-failure -j "$jobs" "$@"

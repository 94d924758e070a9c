#!/usr/bin/env bash
# The torture suite's long form, for the nightly job: >= 1000 kills of memleak-run across run, report and merge, 60
# attacks on workers, 60 write limits, the parent's allocations failing once (every one up to 5000, else an even stride
# over all) and 200 failing for good, then the bad-input corpora. ci/test.sh runs the short form through ctest (label
# torture). It must never hide a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
[ -x "$build/bin/memleak-run" ] || { echo "torture.sh: build first (ci/test.sh or cmake --build $build)" >&2; exit 2; }
export MLK_BIN_DIR="$build/bin" MLK_BUILD_DIR="$build" MLK_SOURCE_DIR="$root"
python3 "$root/tests/torture/torture.py" --long --seed "${MLK_TORTURE_SEED:-14}" "$@"
python3 "$root/tests/torture/corpus.py"

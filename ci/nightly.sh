#!/usr/bin/env bash
# nightly.sh: builds memleak, runs scenarios/nightly.yaml into the nightly db, compares the run with the nights before
# and writes its report; exits with compare's status. It must never hide a regression nor a run that could not run.
#
#   ci/nightly.sh                 build, run, compare, report (exit: compare's 0 none, 1 regression; 2/3 errors)
#   MLK_SHARD=I/N MLK_RUN_KEY=K ci/nightly.sh
#                                 one shard of a batch: build and run only the cells idx % N == I into the db, under
#                                 run key K (the same for every shard); compare and report wait for the merge. Exit 0
#                                 when it ran (a leaking cell is judged after the merge), else memleak-run's status.
#   ci/nightly.sh merge SHARD.db...
#                                 build, merge the shard dbs into the nightly db (which may hold the nights before),
#                                 then compare and report like the first form.
# Environment: MLK_NIGHTLY_DB (default build/nightly/memleak.db), MLK_NIGHTLY_REPORT (default build/nightly/report),
# MLK_NIGHTLY_SCENARIO (default scenarios/nightly.yaml), MLK_NIGHTLY_BUILD_DIR (default build), MLK_SHARD,
# MLK_RUN_KEY, MLK_COMMIT (default $GITHUB_SHA, else git's HEAD). CI calls this script; nothing lives only in CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_NIGHTLY_BUILD_DIR:-$root/build}"
db="${MLK_NIGHTLY_DB:-$build/nightly/memleak.db}"
report="${MLK_NIGHTLY_REPORT:-$build/nightly/report}"
scenario="${MLK_NIGHTLY_SCENARIO:-$root/scenarios/nightly.yaml}"
commit="${MLK_COMMIT:-${GITHUB_SHA:-$(git -C "$root" rev-parse HEAD 2>/dev/null || true)}}"
mode=run
if [ $# -gt 0 ]; then
  if [ "$1" != merge ] || [ $# -lt 2 ]; then
    echo "usage: ci/nightly.sh [merge SHARD.db...]   (see the header of ci/nightly.sh)" >&2
    exit 2
  fi
  mode=merge
  shift
fi
if [ "$mode" = merge ] && [ -n "${MLK_SHARD:-}" ]; then
  echo "nightly: MLK_SHARD is for running a shard, not for merging" >&2
  exit 2
fi

"$root/ci/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
bin="$build/bin/memleak-run"
mkdir -p "$(dirname "$db")"

if [ "$mode" = run ]; then
  args=(--db "$db")
  [ -n "$commit" ] && args+=(--commit "$commit")
  [ -n "${MLK_SHARD:-}" ] && args+=(--shard "$MLK_SHARD")
  [ -n "${MLK_RUN_KEY:-}" ] && args+=(--run-key "$MLK_RUN_KEY")
  echo "== nightly: memleak-run ${args[*]} $scenario"
  set +e
  "$bin" "${args[@]}" "$scenario"
  code=$?
  set -e
  # 0 every cell passed, 1 a finding (still compared: the report shows it), else nothing sensible to compare.
  if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
    echo "nightly: memleak-run exited $code" >&2
    exit "$code"
  fi
  if [ -n "${MLK_SHARD:-}" ]; then
    echo "nightly: shard $MLK_SHARD stored in $db; merge the shards with: ci/nightly.sh merge SHARD.db..."
    exit 0
  fi
else
  echo "== nightly: memleak-run merge $db $*"
  "$bin" merge "$db" "$@"
fi

echo "== nightly: memleak-run compare --db $db --run latest"
set +e
"$bin" compare --db "$db" --run latest
compare=$?
set -e
if [ "$compare" -ne 0 ] && [ "$compare" -ne 1 ]; then
  echo "nightly: compare exited $compare" >&2
  exit "$compare"
fi

# Change points over the whole history, each stored once at its first bad night (the report draws them).
echo "== nightly: memleak-run history --db $db --all --quiet"
"$bin" history --db "$db" --all --quiet || echo "nightly: history failed (the report goes on without change points)" >&2

echo "== nightly: memleak-run report --db $db --run latest --out $report"
mkdir -p "$report"
set +e
"$bin" report --db "$db" --run latest --out "$report"
rep=$?
set -e
if [ "$rep" -ne 0 ]; then
  echo "nightly: report exited $rep" >&2
  # A regression stays the headline; otherwise a missing report is a failure of its own.
  [ "$compare" -eq 1 ] && exit 1
  exit "$rep"
fi
echo "nightly: results in $db, report in $report"
[ "$compare" -eq 1 ] && echo "nightly: compare found a regression (see above and the report)" >&2
exit "$compare"

#!/usr/bin/env bash
# releases.sh: ONNX Runtime releases as if they were commits. Runs a scenario once per release (N times with --repeat),
# oldest release first, each run with MLK_ORT_VERSION=<release> and --commit <release>, into one db; then memleak-run
# history over it, so a change point names the first release where memory moved; then the table per release.
# `releases.sh table --db DB` prints that table from any db with ORT cells (ort-releases.yaml's axis too).
# It must never download anything (fetch.sh does, beforehand), delete a db, or mix a release into another's runs.
#
# usage: engines/ort/releases.sh [--versions "1.17.3 1.23.2 1.30.0"] [--repeat N] [--db DB] [--append] [SCENARIO]
#        engines/ort/releases.sh table --db DB
#   SCENARIO   default scenarios/ort-release-history.yaml; it must not set the ORT option version itself
#   --versions default "1.12.1 1.17.3 1.22.0 1.23.2 1.27.0 1.30.0" (also MLK_ORT_VERSIONS); sorted oldest first
#   --repeat   runs per release (default 5). history compares up to 5 runs before a candidate with 3 from it: with
#              5 runs per release, each release's step stands against the previous release's own level (with fewer,
#              a second step within 5 runs of the first hides in the mixed window)
#   --db       default $MLK_BUILD_DIR/ort-releases/history.db; an existing db is refused unless --append (history
#              orders runs by start time, so releases must be run oldest first)
# Environment: MLK_BUILD_DIR (default build), MLK_ORT_VERSIONS.
# Exit: 0 done (a leak verdict is a finding, not a failure), 1 a run failed, 2 usage, 77 engine_ort.so not built.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
run="$build/bin/memleak-run"

usage() { sed -n '/^# usage:/,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# The table: one row per cell, its release from the metric ort_release (what the cell really loaded).
table() {
  local db=$1
  command -v sqlite3 >/dev/null ||
    { echo "releases.sh: the sqlite3 CLI is needed (Debian package sqlite3)" >&2; exit 1; }
  echo "| release | run (commit) | model | verdict | peak RSS MiB | peak VmPeak MiB | growth B/iter (judged series) |" \
       "late B/iter | RSS B/iter | live heap at iteration end MiB |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  sqlite3 -batch -noheader -separator ' | ' "$db" "
    WITH c AS (
      SELECT cells.id, cells.run_id, cells.status, cells.metric, cells.slope_per_iter AS slope,
             cells.late_slope_per_iter AS late, runs.commit_sha,
             coalesce(json_extract(cells.axes, '\$.model'),
                      substr(cells.model, length(rtrim(cells.model, replace(cells.model, '/', ''))) + 1)) AS model,
             (SELECT max(value) FROM metrics m WHERE m.cell_id = cells.id AND m.name = 'ort_release') AS rel
      FROM cells JOIN runs ON runs.id = cells.run_id WHERE cells.engine = 'ort')
    SELECT CASE WHEN rel IS NULL THEN '?' ELSE printf('%d.%d.%d', rel / 1000000, rel / 1000 % 1000, rel % 1000) END,
           printf('%d (%s)', run_id, coalesce(commit_sha, '-')), model, status,
           printf('%.1f', (SELECT max(vm_hwm_kib) FROM samples s WHERE s.cell_id = c.id) / 1024.0),
           printf('%.1f', (SELECT max(vm_peak_kib) FROM samples s WHERE s.cell_id = c.id) / 1024.0),
           CASE WHEN slope IS NULL THEN '-' ELSE printf('%.0f (%s)', slope, replace(metric, '_bytes', '')) END,
           CASE WHEN late IS NULL THEN '-' ELSE printf('%.0f', late) END,
           coalesce((SELECT printf('%.0f', rss_growth_per_iter) FROM step_stats st
                     WHERE st.cell_id = c.id AND st.step = 'iteration'), '-'),
           coalesce((SELECT printf('%.2f', final_heap_bytes / 1048576.0) FROM step_stats st
                     WHERE st.cell_id = c.id AND st.step = 'iteration'), '-')
    FROM c ORDER BY rel, run_id, id" | sed -e 's/^/| /' -e 's/$/ |/'
}

if [ "${1:-}" = "table" ]; then
  shift
  db=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --db) [ $# -ge 2 ] || usage; db=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [ -n "$db" ] && [ -f "$db" ] || { echo "releases.sh table: --db DB, an existing memleak db" >&2; exit 2; }
  table "$db"
  exit 0
fi

versions="${MLK_ORT_VERSIONS:-1.12.1 1.17.3 1.22.0 1.23.2 1.27.0 1.30.0}"
repeat=5
db="$build/ort-releases/history.db"
append=0
scenario="$root/scenarios/ort-release-history.yaml"
while [ $# -gt 0 ]; do
  case "$1" in
    --versions) [ $# -ge 2 ] || usage; versions=$2; shift 2 ;;
    --repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
    --db) [ $# -ge 2 ] || usage; db=$2; shift 2 ;;
    --append) append=1; shift ;;
    -h|--help) usage ;;
    -*) echo "releases.sh: unknown option $1" >&2; usage ;;
    *) scenario=$1; shift ;;
  esac
done
[[ $repeat =~ ^[1-9][0-9]?$ ]] || { echo "releases.sh: --repeat $repeat: expected 1 to 99" >&2; exit 2; }
[ -f "$scenario" ] || { echo "releases.sh: no scenario $scenario" >&2; exit 2; }
if grep -Eq '^[^#]*(^|[^a-z_.])(ort\.)?version[[:space:]]*:' "$scenario"; then
  echo "releases.sh: $scenario sets the ORT option version: every run would load that release. Leave it out;" \
       "releases.sh gives each run its release through MLK_ORT_VERSION" >&2
  exit 2
fi
if [ ! -f "$build/lib/engine_ort.so" ]; then
  echo "SKIP: $build/lib/engine_ort.so is not built (run engines/ort/fetch.sh, then cmake and build)"
  exit 77
fi
if [ -e "$db" ] && [ "$append" -eq 0 ]; then
  echo "releases.sh: $db exists: history orders runs by start time, so add to it only on purpose (--append)," \
       "or name another --db" >&2
  exit 2
fi
if [ -n "${MLK_ORT_LIBRARY:-}" ]; then
  echo "releases.sh: MLK_ORT_LIBRARY is set: every run would load $MLK_ORT_LIBRARY; unset it" >&2
  exit 2
fi
sorted=$(printf '%s\n' ${versions//,/ } | sort -t. -k1,1n -k2,2n -k3,3n -u)
# Every release must be fetched before the first run: a missing one would leave a hole in the history. The plugin
# looks for releases beside the library it was built with, in fetch.sh's layout.
default_lib=$(grep -a -o '/[^[:space:][:cntrl:]]*/libonnxruntime\.so\.1' "$build/lib/engine_ort.so" | grep -v '%' | head -n 1) # not ort_release.c's format string
cache=$(dirname "$(dirname "$default_lib")")
missing=""
for v in $sorted; do
  lib=$(MLK_ORT_CACHE="$cache" "$root/engines/ort/fetch.sh" --print-lib "$v")
  [ -f "$lib" ] || missing="$missing $v"
done
if [ -n "$missing" ]; then
  echo "releases.sh: not fetched into $cache:$missing; fetch them with:" \
       "MLK_ORT_CACHE=$cache engines/ort/fetch.sh --versions \"${missing# }\"" >&2
  exit 1
fi
mkdir -p "$(dirname "$db")"
status=0
for v in $sorted; do
  for ((i = 1; i <= repeat; i++)); do
    echo "== ONNX Runtime $v, run $i of $repeat" >&2
    code=0
    MLK_ORT_VERSION=$v "$run" --db "$db" --commit "$v" --quiet "$scenario" > /dev/null || code=$?
    # 1 is a finding (a leak verdict, say): a measurement all the same.
    [ "$code" -le 1 ] || { echo "releases.sh: ONNX Runtime $v: memleak-run exited $code" >&2; status=1; }
  done
done
echo "== memleak-run history --db $db --all"
"$run" history --db "$db" --all || status=1
echo
table "$db"
exit "$status"

#!/usr/bin/env bash
# scenarios/ref-vs-ort.yaml end to end: both engines on the same models in one run, every cell passes, compare judges
# ORT's cells against ref's (--baseline-engine), and the report draws the engines side by side. ort-sessions.yaml shows
# ORT's per-session retention as a leak while ref passes.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -e "$MLK_BUILD_DIR/lib/engine_ort.so" ] || { echo "SKIP: engine_ort.so not built (engines/ort/fetch.sh)"; exit 77; }
db="$work/rvo.db"
set +e
"$bin/memleak-run" --db "$db" --quiet "$src/scenarios/ref-vs-ort.yaml" > /dev/null
code=$?
set -e
check "every cell passes: exit 0" eq "$code" 0
check "48 cells, half per engine" eq "$(q "SELECT group_concat(engine || ':' || n) FROM (SELECT engine, count(*) n FROM cells GROUP BY engine ORDER BY engine)")" "ort:24,ref:24"
check "both engines ran the same models" eq "$(q "SELECT count(DISTINCT model) FROM cells")" 3
check "ORT's arena stats were recorded" test "$(q "SELECT count(*) FROM metrics WHERE name = 'ort_num_allocs'")" -gt 0
set +e
"$bin/memleak-run" compare --db "$db" --baseline-engine ref > "$work/cmp.txt" 2>&1
set -e
check "compare names the baseline engine" grep -q "against engine ref in the same run" "$work/cmp.txt"
check "every ORT cell step had a ref peer" grep -q "over 96 cell steps (96 without a baseline)" "$work/cmp.txt"
"$bin/memleak-run" report --db "$db" --out "$work/report" > /dev/null
check "the report has the engines side by side" test -s "$work/report/plots/engines-infer.png"
check "index.html shows it" grep -q "engines-infer" "$work/report/index.html"

db="$work/sessions.db"
set +e
"$bin/memleak-run" --db "$db" --quiet "$src/scenarios/ort-sessions.yaml" > /dev/null
code=$?
set -e
check "ORT's session retention is a finding: exit 1" eq "$code" 1
check "ref cells pass, ORT cells leak" eq "$(q "SELECT group_concat(engine || ':' || status) FROM (SELECT DISTINCT engine, status FROM cells ORDER BY engine)")" "ort:leak,ref:pass"
finish

#!/usr/bin/env bash
# scenarios/ref-vs-ort.yaml end to end: ref, ORT and OpenVINO on the same models in one run, every cell passes, compare
# judges ORT's and OpenVINO's cells against ref's (--baseline-engine), and the report draws the engines side by side
# (without engine_openvino.so, engines/openvino/fetch.sh, ref and ORT alone, and the test says so).
# ort-sessions.yaml: with telemetry off (the plugin's default) ORT keeps nothing per session; on, ORT queues heap per
# session and writes its db.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -e "$MLK_BUILD_DIR/lib/engine_ort.so" ] || { echo "SKIP: engine_ort.so not built (engines/ort/fetch.sh)"; exit 77; }
db="$work/rvo.db"
engines="ort ref openvino"
if [ ! -f "$MLK_BUILD_DIR/lib/engine_openvino.so" ]; then
  echo "note: engine_openvino.so not built (engines/openvino/fetch.sh): OpenVINO is left out"
  engines="ort ref"
fi
n=$(echo $engines | wc -w)
sed "s/^  engine: \[ref, ort, openvino\]/  engine: [$(echo $engines | sed 's/ /, /g')]/" "$src/scenarios/ref-vs-ort.yaml" > "$work/rvo.yaml"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/rvo.yaml" > /dev/null
code=$?
set -e
# OpenVINO's 2-thread cells on a busy machine: the TBB allocator OpenVINO ships (libtbbmalloc, which its TBB uses when it
# sits beside libtbb) grows anonymous memory per request while another process holds a core, +15 KiB/iter and not
# levelling off in 200 iterations, flat on a quiet machine or without libtbbmalloc (engines/openvino/README.md). The
# judge calling that a leak is a finding about OpenVINO as shipped, not a failure: those cells may leak, no other may.
# It is not the harness's own memory: with no heap shim at all (--no-heap) the transformer cell of ref-vs-ort.yaml
# (2 threads, mmap off) grew RssAnon +10 KiB/iter over 200 iterations with one core busy (1 run of 2), glibc holding
# nothing more; the shim's own tables are left out of anon (samples.shim_bytes, tests/e2e_shim_own.sh).
ov2="engine = 'openvino' AND json_extract(axes, '\$.threads') = '2' AND status = 'leak'"
others() { q "SELECT count(*) FROM cells WHERE status NOT IN ('pass', 'plateau') AND NOT ($ov2)"; }
ov_note() {
  local n_ov
  n_ov=$(q "SELECT count(*) FROM cells WHERE $ov2")
  [ "$n_ov" -eq 0 ] || echo "note: $n_ov OpenVINO 2-thread cell(s) judged leak (the shim's sampling under contention):" \
    "$(q "SELECT group_concat(model || ' ' || axes, '; ') FROM cells WHERE $ov2")"
}
check "every cell passes (exit 0), or only OpenVINO's 2-thread cells leak (exit 1)" \
  test "$code" -eq 0 -o \( "$code" -eq 1 -a "$(others)" -eq 0 \)
ov_note
# A failing night must say which cell and why, or the log is no use to the reader.
if [ "$(others)" -ne 0 ]; then
  q "SELECT engine, model, axes, status, metric, detail, error FROM cells WHERE status != 'pass'"
  q "SELECT c.engine, c.model, c.axes, r.series, r.verdict, r.detail FROM series_results r JOIN cells c ON c.id = r.cell_id
     WHERE r.verdict != 'pass'"
fi
check "24 cells per engine" eq "$(q "SELECT group_concat(engine || ':' || n) FROM (SELECT engine, count(*) n FROM cells GROUP BY engine ORDER BY engine)")" \
  "$(printf '%s\n' $engines | sort | sed 's/$/:24/' | paste -sd,)"
check "the engines ran the same models" eq "$(q "SELECT count(DISTINCT model) FROM cells")" 3
check "ORT's arena stats were recorded" test "$(q "SELECT count(*) FROM metrics WHERE name = 'ort_num_allocs'")" -gt 0
[ "$n" -eq 2 ] ||
  check "OpenVINO's release was recorded" test "$(q "SELECT count(*) FROM metrics WHERE name = 'openvino_release'")" -gt 0
set +e
"$bin/memleak-run" compare --db "$db" --baseline-engine ref > "$work/cmp.txt" 2>&1
set -e
check "compare names the baseline engine" grep -q "against engine ref in the same run" "$work/cmp.txt"
check "every ORT and OpenVINO cell step had a ref peer (ref's own 96 have none)" \
  grep -q "over $((96 * (n - 1))) cell steps (96 without a baseline)" "$work/cmp.txt"
"$bin/memleak-run" report --db "$db" --out "$work/report" > /dev/null
check "the report has the engines side by side" test -s "$work/report/plots/engines-infer.png"
check "index.html shows it" grep -q "engines-infer" "$work/report/index.html"

db="$work/sessions.db"
# ORT switches its telemetry off by itself on CI machines: unset what it looks at, so both settings are measured.
noci=(env -u CI -u TF_BUILD -u GITHUB_ACTIONS -u GITLAB_CI -u CIRCLECI -u TRAVIS -u JENKINS_URL -u CODEBUILD_BUILD_ID
  -u BUILDKITE -u TEAMCITY_VERSION -u APPVEYOR -u BITBUCKET_BUILD_NUMBER -u SYSTEM_TEAMFOUNDATIONCOLLECTIONURI
  -u ORT_DISABLE_TELEMETRY)
tdir="$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime"
sed 's/^iterations: 1000/iterations: 60/; s/^  engine: \[ref, ort\]/  engine: [ort]/' "$src/scenarios/ort-sessions.yaml" |
  sed '/- {name: on, ort.telemetry: on}/d' > "$work/off.yaml"
set +e
"${noci[@]}" "$bin/memleak-run" --db "$db" --quiet "$work/off.yaml" > "$work/off.txt" 2>&1
code=$?
set -e
check "ORT with telemetry off (the plugin's default): no finding, exit 0" eq "$code" 0
check "ORT's sessions keep nothing: the cells pass" eq "$(q "SELECT group_concat(DISTINCT status) FROM cells")" pass
check "telemetry off: ORT wrote no telemetry db" test ! -e "$tdir/onnxruntime.db"
db="$work/sessions-on.db"
sed 's/^iterations: 1000/iterations: 20/; s/^  engine: \[ref, ort\]/  engine: [ort]/; /- {name: off}/d' \
  "$src/scenarios/ort-sessions.yaml" > "$work/on.yaml"
set +e
"${noci[@]}" "$bin/memleak-run" --db "$db" --quiet "$work/on.yaml" > "$work/on.txt" 2>&1
code=$?
set -e
check "telemetry on runs (a verdict: exit 0 or 1)" test "$code" -le 1
check "telemetry on reaches ORT: it writes its telemetry db" test -s "$tdir/onnxruntime.db"
grown=$(q "SELECT max(heap_live_bytes) - min(heap_live_bytes) FROM samples WHERE step='iteration' AND phase='measure'")
check "telemetry on, ORT keeps heap per session: growth is measured" test "$grown" -gt 32768
set +e
CI=true "$bin/memleak-run" --db "$work/ci.db" --dry-run "$src/scenarios/ort-sessions.yaml" > "$work/ci.txt" 2>&1
code=$?
set -e
check "telemetry on where ORT ignores it (CI=true): exit 2" eq "$code" 2
check "...naming the variable and the scenario line" \
  grep -q "ort-sessions.yaml:[0-9]*:[0-9]*: option telemetry: 'on', but CI=true is set" "$work/ci.txt"
finish

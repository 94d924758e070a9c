#!/usr/bin/env bash
# memleak-run compare and history on a stored history: exit codes for a regression, an improvement only and no baseline
# yet; a pinned baseline; a +8% HWM step at run 6 of 10 reported once at run 6; a single +30% night not reported.
source "$(dirname "$0")/lib.sh"
need_sqlite
db="$work/h.db"
cat > "$work/h.yaml" <<'YAML'
name: e2e-history
engine: ref
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 20
warmup: 2
thresholds: {latency_rel: 0.95, latency_abs_ms: 100000} # latency is for benchmarks: a loaded machine moves it 5x
matrix:
  threads: [1, 2]
YAML
run() { "$bin/memleak-run" --db "$db" --quiet --commit "$1" --branch main "$work/h.yaml" > /dev/null; }
compare() { set +e; "$bin/memleak-run" compare --db "$db" "$@" > "$work/cmp.txt" 2>&1; code=$?; set -e; }

run c1
compare
check "first run: no baseline yet, exit 0" eq "$code" 0
check "first run: says so" grep -q "no baseline yet" "$work/cmp.txt"
run c2
compare
check "same code again: exit 0" eq "$code" 0
check "same code again: no memory alert" eq "$(grep -c 'REGRESSION memory' "$work/cmp.txt" || true)" 0
last=$(q "SELECT max(id) FROM runs")
q "UPDATE step_stats SET peak_kib = peak_kib * 2 + 4096 WHERE cell_id IN (SELECT id FROM cells WHERE run_id = $last)"
compare
check "a grown peak is a regression: exit 1" eq "$code" 1
check "the regression names peak_kib" grep -qE "^ +regression +memory +[a-z_]+ peak_kib" "$work/cmp.txt"
check "findings are stored" test "$(q "SELECT count(*) FROM findings WHERE kind = 'regression' AND metric = 'peak_kib'")" -ge 2
q "UPDATE step_stats SET peak_kib = peak_kib / 4 WHERE cell_id IN (SELECT id FROM cells WHERE run_id = $last)"
compare
check "improvements only: exit 0" eq "$code" 0
check "improvements are listed" grep -qE "^ +improvement +memory +[a-z_]+ peak_kib" "$work/cmp.txt"
# Every judged series is tracked: fds leaking now and in no baseline cell is a regression, named series.fds.
q "UPDATE series_results SET verdict = 'leak', late_slope_per_iter = 1 WHERE series = 'fds' AND cell_id IN (SELECT id FROM cells WHERE run_id = $last)"
compare
check "a series that starts leaking is a regression: exit 1" eq "$code" 1
check "the regression names the series" grep -qE "^ +regression +memory +iteration series.fds .*leaks now, did not in the baseline" "$work/cmp.txt"
check "series findings are stored" test "$(q "SELECT count(*) FROM findings WHERE kind = 'regression' AND metric = 'series.fds'")" -ge 2
q "UPDATE series_results SET verdict = 'pass', late_slope_per_iter = 0 WHERE series = 'fds' AND cell_id IN (SELECT id FROM cells WHERE run_id = $last)"
q "UPDATE series_results SET verdict = 'leak', late_slope_per_iter = 1 WHERE series = 'fds' AND cell_id IN (SELECT id FROM cells WHERE run_id < $last)"
compare
check "a series that stops leaking is an improvement" grep -qE "^ +improvement +memory +iteration series.fds .*no longer leaks" "$work/cmp.txt"
q "UPDATE series_results SET verdict = 'pass' WHERE series = 'fds'"
compare --baseline 1
check "against run 1 explicitly: exit 0" eq "$code" 0
check "says which baseline" grep -q "against run 1" "$work/cmp.txt"
set +e; "$bin/memleak-run" baseline pin 1 --db "$db" > /dev/null; pin=$?; set -e
check "baseline pin" eq "$pin" 0
compare
check "auto uses the pin" grep -q "run 1 (pinned)" "$work/cmp.txt"
compare --run 999
check "unknown run: exit 2" eq "$code" 2

# History: 10 runs of two configs. threads=1: HWM of the whole iteration +8% from run 6 on; threads=2: +30% at run 4 alone.
db="$work/hist.db"
for i in $(seq 10); do run "h$i"; done
k1=$(q "SELECT config_key FROM cells WHERE json_extract(axes, '$.threads') = '1' LIMIT 1")
k2=$(q "SELECT config_key FROM cells WHERE json_extract(axes, '$.threads') = '2' LIMIT 1")
q "UPDATE step_stats SET peak_kib = 100000 + (cell_id % 7) * 10 WHERE step = 'iteration'"
in_runs() { echo "SELECT c.id FROM cells c JOIN runs r ON r.id = c.run_id WHERE c.config_key = '$1' AND r.commit_sha IN ($2)"; }
q "UPDATE step_stats SET peak_kib = peak_kib * 1.08 WHERE step = 'iteration' AND cell_id IN ($(in_runs "$k1" "'h6','h7','h8','h9','h10'"))"
q "UPDATE step_stats SET peak_kib = peak_kib * 1.30 WHERE step = 'iteration' AND cell_id IN ($(in_runs "$k2" "'h4'"))"
"$bin/memleak-run" history --db "$db" --config "$k1" --metric peak_kib > "$work/hist.txt"
check "step: one change point in the series" eq "$(grep -c '<- change point' "$work/hist.txt")" 1
check "step: one alert at run 6, naming commit h6 and the metric" grep -q "REGRESSION memory: threads=1 at commit h6 (run 6 of 10): iteration peak_kib" "$work/hist.txt"
"$bin/memleak-run" history --db "$db" --config "$k2" --metric peak_kib > "$work/hist2.txt"
check "outlier: no change point" eq "$(grep -c '<- change point' "$work/hist2.txt" || true)" 0
check "outlier: no alert" grep -q "^ALERTS: none" "$work/hist2.txt"
check "outlier: the night is in the series" grep -q "^4 .*130" "$work/hist2.txt"
"$bin/memleak-run" history --db "$db" --all --quiet > "$work/all.txt"
check "--all stores the step once, for threads=1 only" eq "$(q "SELECT count(*) || ':' || max(config_key = '$k1') FROM change_points WHERE metric = 'peak_kib' AND step = 'iteration'")" "1:1"
"$bin/memleak-run" history --db "$db" --all --quiet > "$work/all2.txt"
check "a second scan reports nothing new" grep -q ", 0 new$" "$work/all2.txt"
check "--quiet: known change points are no alerts" grep -q "^ALERTS: none" "$work/all2.txt"
check "still stored once" eq "$(q "SELECT count(*) FROM change_points WHERE metric = 'peak_kib' AND step = 'iteration'")" 1
finish

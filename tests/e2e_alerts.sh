#!/usr/bin/env bash
# Alerts a reviewer trusts (issue 22): clean reruns give no alert and exit 0; a 4 KiB/iter leak planted in half the
# cells gives one alert summary per leaking cell, leading compare's output, summary.md, index.html and junit.xml and
# nothing above them; a history with a +-2% wobble on every metric and one +50% step in one metric gives exactly one
# alert naming that commit and metric and the commit of its recovery; --format json validates against the schema.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }
mlk="$bin/memleak-run"
py=/usr/bin/python3
schema="$src/db/alerts.schema.json"
valid() { "$py" "$src/tests/json_schema_check.py" "$schema" "$1"; }

# ---- clean reruns, then a leak in half of the cells (the same config keys: the species comes from $MLK_SPECIES in the
# cells that do not pin it) ----
db="$work/leak.db"
cat > "$work/leak.yaml" <<'YAML'
name: e2e-alerts
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 40
warmup: 4
engine_options: {inner: ref, species_bytes: 4096}
matrix:
  threads: [1, 2]
  half:
    - {name: pinned, species: none}
    - {name: open}
YAML
run() { MLK_SPECIES=$1 "$mlk" --db "$db" --quiet --commit "$2" --branch main "$work/leak.yaml" > /dev/null 2>&1 || true; }
compare() { set +e; "$mlk" compare --db "$db" "$@" > "$work/cmp.txt" 2>&1; code=$?; set -e; }
for i in 1 2 3 4; do run none "c$i"; done
for r in 2 3 4; do
  compare --run "$r" --json "$work/clean-$r.json"
  check "clean rerun $r: exit 0" eq "$code" 0
  check "clean rerun $r: no memory alert" eq "$(grep -c 'REGRESSION memory' "$work/cmp.txt" || true)" 0
  check "clean rerun $r: its JSON validates" valid "$work/clean-$r.json"
done
MLK_SPECIES=tiny "$mlk" --db "$db" --quiet --commit c5 --branch main --json "$work/run5.json" "$work/leak.yaml" > /dev/null 2>&1 || true
check "run --json validates against db/run.schema.json" "$py" "$src/tests/json_schema_check.py" "$src/db/run.schema.json" "$work/run5.json"
check "run --json: the two open cells leak, exit 1" eq "$("$py" -c '
import json, sys; d = json.load(open(sys.argv[1]))
print(d["exit_code"], " ".join(sorted(c["cell"] for c in d["cells"] if c["status"] == "leak")))' "$work/run5.json")" \
  "1 threads=1 half=open threads=2 half=open"
compare --format json
check "the leak: exit 1 under the default gate" eq "$code" 1
check "the leak: JSON on stdout validates" valid "$work/cmp.txt"
check "the leak: JSON alerts are the two open cells, failing" eq "$("$py" -c '
import json, sys; d = json.load(open(sys.argv[1]))
print(" ".join(sorted(a["cell"] + ":" + str(a["fails_gate"]) for a in d["alerts"])))' "$work/cmp.txt")" \
  "threads=1 half=open:True threads=2 half=open:True"
compare
check "the leak: two alerts" grep -q "^ALERTS: 2 regression alert(s), 2 failing the memory gate" "$work/cmp.txt"
check "the leak: the first two headlines are the leaking cells" eq "$(grep -E '^ +[0-9]+\. ' "$work/cmp.txt" | head -2 |
  grep -c 'REGRESSION memory: threads=[12] half=open at run 5')" 2
check "the leak: nothing else is an alert" eq "$(grep -cE '^ +[0-9]+\. .*REGRESSION' "$work/cmp.txt")" 2
check "the leak: its growth is inside the alert" grep -qE "^ +regression +memory +[a-z_]+ (growth|series.heap) " "$work/cmp.txt"
check "the leak: one summary per cell, not a row per step and metric" test "$(grep -cE '^ +regression ' "$work/cmp.txt")" -gt 2
set +e; "$mlk" compare --db "$db" --gate none > /dev/null 2>&1; gcode=$?; set -e
check "--gate none: exit 0" eq "$gcode" 0
set +e; "$mlk" compare --db "$db" --floor growth_bytes=1MiB,memory_abs=1GiB > "$work/loose.txt" 2>&1; lcode=$?; set -e
check "--floor: a leak under the floors (growth and the slope of a series that starts leaking) is no alert" eq \
  "$lcode:$(grep -c 'REGRESSION memory' "$work/loose.txt" || true)" "0:0"
set +e; "$mlk" compare --db "$db" --floor nonsense=1 > /dev/null 2> "$work/bad.txt"; bcode=$?; set -e
check "--floor with an unknown key: exit 2, named" eq "$bcode:$(grep -c "unknown key 'nonsense'" "$work/bad.txt")" "2:1"
compare # the report shows the newest comparison: the default one
"$mlk" report --db "$db" --out "$work/report" --no-plots > /dev/null
sum="$work/report/summary.md"
check "summary.md leads with the two alerts" eq "$(grep -cE '^[12]\. \*\*REGRESSION memory\*\* \(fails the gate\): threads=[12] half=open' "$sum")" 2
check "summary.md: the alerts come before anything else" test "$(grep -n '^\*\*Alerts: 2\*\*' "$sum" | cut -d: -f1)" -le 3
html="$work/report/index.html"
check "index.html: the alerts section comes first" test "$(grep -n '<h2' "$html" | head -1 | grep -c 'id="alerts"')" -eq 1
check "junit.xml: the leaking cells are the first testcases" eq "$("$py" -c '
import sys, xml.dom.minidom
cs = xml.dom.minidom.parse(sys.argv[1]).getElementsByTagName("testcase")
print(" ".join(sorted(c.getAttribute("name") for c in cs[:2])), sum(1 for c in cs if c.getElementsByTagName("failure")) >= 2)' \
  "$work/report/junit.xml")" "threads=1 half=open threads=2 half=open True"

# ---- expect: the same leak, known: reported, never failing (run, compare, junit) ----
{ cat "$work/leak.yaml"; echo 'expect: [{cells: "half=open", verdict: leak, reason: "known: upstream bug 42"}]'; } > "$work/known.yaml"
set +e; MLK_SPECIES=tiny "$mlk" --db "$db" --quiet --commit c6 --branch main "$work/known.yaml" > "$work/known.txt" 2>&1; kcode=$?; set -e
check "expect: the known leaks do not fail the run (exit 0)" eq "$kcode" 0
check "expect: the table says so, with the reason" eq "$(grep -c "leak, expected" "$work/known.txt"):$(grep -c "known: upstream bug 42" "$work/known.txt")" "2:2"
compare
check "expect: compare still reports them, failing nothing (exit 0)" eq \
  "$code:$(grep -cE '^ +[0-9]+\. REGRESSION memory: threads=[12] half=open' "$work/cmp.txt")" "0:2"
check "expect: ... saying why" grep -q "expected leak: known: upstream bug 42" "$work/cmp.txt"
"$mlk" report --db "$db" --out "$work/known-report" --no-plots > /dev/null
check "expect: junit skips them with the reason, fails nothing" eq "$("$py" -c '
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1]); s = d.getElementsByTagName("testsuite")[0]
print(s.getAttribute("failures"), s.getAttribute("skipped"),
      sum("upstream bug 42" in k.getAttribute("message") for k in d.getElementsByTagName("skipped")))' "$work/known-report/junit.xml")" "0 2 2"
check "expect: summary.md lists them apart" grep -q "^Expected by the scenario (2, not failing)" "$work/known-report/summary.md"
printf 'expect: [{cells: "half", verdict: leak}]\n' | cat "$work/leak.yaml" - > "$work/bad-expect.yaml"
set +e; "$mlk" --dry-run "$work/bad-expect.yaml" > /dev/null 2> "$work/be.txt"; bcode=$?; set -e
check "expect: a bad cells spec is refused with file:line:col" eq "$bcode:$(grep -c "bad-expect.yaml:[0-9]*:[0-9]*: expect.cells" "$work/be.txt")" "2:1"

# ---- history: +-2% wobble on every metric of every run, one +50% step of one metric at commit h5, back at h9 ----
db="$work/hist.db"
cat > "$work/h.yaml" <<'YAML'
name: e2e-alerts-history
engine: ref
model: {generate: mlp, mlp_hidden: 16}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 4
warmup: 1
matrix:
  threads: [1, 2]
YAML
for i in $(seq 12); do "$mlk" --db "$db" --quiet --commit "h$i" --branch main "$work/h.yaml" > /dev/null 2>&1 || true; done
check "history: 12 runs stored" eq "$(q "SELECT count(*) FROM runs WHERE status = 'done'")" 12
w() { echo "(1 + ((s.cell_id * 7 + length(s.step) * 3 + $1) % 5 - 2) / 100.0)"; } # -2%..+2%, differs per cell, step and metric
q "UPDATE step_stats AS s SET peak_kib = 100000 * $(w 1), final_rss_kib = 80000 * $(w 2), final_anon_kib = 60000 * $(w 3),
   final_heap_bytes = 50000000 * $(w 4), heap_growth_per_iter = 10 * $(w 5), rss_growth_per_iter = 10 * $(w 6),
   wall_ms_median = 5 * $(w 7), cpu_ms_median = 4 * $(w 8), heap_peak_bytes = 60000000 * $(w 9),
   mapped_peak_bytes = 30000000 * $(w 10)"
k1=$(q "SELECT config_key FROM cells WHERE json_extract(axes, '$.threads') = '1' LIMIT 1")
q "UPDATE step_stats SET peak_kib = peak_kib * 1.5 WHERE step = 'iteration' AND cell_id IN (SELECT c.id FROM cells c
   JOIN runs r ON r.id = c.run_id WHERE c.config_key = '$k1' AND r.commit_sha IN ('h5', 'h6', 'h7', 'h8'))"
"$mlk" history --db "$db" > "$work/hist.txt"
check "history: exactly one alert" grep -q "^ALERTS: 1 regression alert(s)" "$work/hist.txt"
check "history: no improvement listed apart (the step back is the recovery)" eq "$(grep -c '^improvements' "$work/hist.txt" || true)" 0
check "history: it names the commit, the metric and the recovery" grep -qE \
  "^ +1\. .*REGRESSION memory: threads=1 at commit h5 \(run 5 of 12\): iteration peak_kib .*recovered at commit h9 \(run 9 of 12\)" \
  "$work/hist.txt"
check "history: one finding in it" eq "$(grep -cE '^ +regression ' "$work/hist.txt")" 1
"$mlk" history --db "$db" --config threads=1 --metric peak_kib > "$work/hist1.txt"
check "the README's history example: one config's series (threads=1 matches it alone)" grep -q "^12 .*h12 " "$work/hist1.txt"
"$mlk" history --db "$db" --config threads= --metric peak_kib --format json > "$work/hist.json"
check "history --config matching several configs prints both" eq "$(grep -c '"config":"threads="' "$work/hist.json")" 1
check "history JSON validates" valid "$work/hist.json"
check "history JSON: the one alert, recovered" eq "$("$py" -c '
import json, sys; d = json.load(open(sys.argv[1])); a = d["alerts"]
print(len(a), a[0]["findings"][0]["metric"], a[0]["where"].split()[1], a[0]["findings"][0]["note"].split()[3])' "$work/hist.json")" \
  "1 peak_kib h5 h9"

# ---- --filter, --iterations, --warmup ----
db="$work/filter.db"
"$mlk" --db "$db" --quiet --filter threads=2 --iterations 7 --warmup 2 "$work/h.yaml" > /dev/null
check "--filter: only the selected cell ran" eq "$(q "SELECT group_concat(json_extract(axes, '$.threads')) FROM cells")" 2
check "--iterations and --warmup: 7 measured, 2 warmup" eq "$(q "SELECT count(DISTINCT iteration) FROM samples WHERE phase = 'measure'"):$(q "SELECT count(DISTINCT iteration) FROM samples WHERE phase = 'warmup'")" "7:2"
"$mlk" --db "$db" --quiet --filter threads=1 --iterations 5 --warmup 1 --repetitions 3 --json "$work/reps.json" "$work/h.yaml" > "$work/reps.txt"
check "--repetitions 3: three more runs" eq "$(q "SELECT count(*) FROM runs")" 4
check "--repetitions: mean, median, stddev and cv per metric" grep -qE "^  peak_kib +[0-9.]+ [KM]iB +[0-9.]+ [KM]iB +[0-9.]+ (B|KiB|MiB) +[0-9.]+% +3$" "$work/reps.txt"
check "--repetitions: the JSON has them and validates" "$py" "$src/tests/json_schema_check.py" "$src/db/run.schema.json" "$work/reps.json"
check "--repetitions: the JSON's aggregates match the runs" eq "$("$py" -c '
import json, sys; d = json.load(open(sys.argv[1])); r = [x for x in d["repetitions"] if x["metric"] == "peak_kib"][0]
print(r["n"], r["cell"])' "$work/reps.json")" "3 threads=1"
check "--repetitions: the mean is the runs' mean" "$py" -c '
import json, sqlite3, sys; d = json.load(open(sys.argv[1])); r = [x for x in d["repetitions"] if x["metric"] == "peak_kib"][0]
v = [x[0] for x in sqlite3.connect(sys.argv[2]).execute("SELECT s.peak_kib FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.run_id > 1 AND s.step = ? AND json_extract(c.axes, ?) = ?", ("iteration", "$.threads", "1"))]
sys.exit(not (len(v) == 3 and abs(sum(v) / 3 - r["mean"]) < 1e-9))' "$work/reps.json" "$db"
set +e; "$mlk" --db "$db" --repetitions 2 --run-key k "$work/h.yaml" > /dev/null 2>&1; rcode=$?; set -e
check "--repetitions with --run-key: exit 2" eq "$rcode" 2
set +e; "$mlk" --db "$db" --dry-run --filter threads=12 "$work/h.yaml" > /dev/null 2> "$work/f.txt"; fcode=$?; set -e
check "--filter never matches part of a value: threads=12 selects nothing, exit 2" eq "$fcode:$(grep -c "selects none" "$work/f.txt")" "2:1"
set +e; "$mlk" compare --db "$db" --filter threads=2 > /dev/null 2>&1; fcode=$?; set -e
check "compare --filter of no cell of the run: exit 2" eq "$fcode" 2
# ---- budgets: absolute caps, a finding when crossed ----
db="$work/budget.db"
{ cat "$work/h.yaml"; printf 'budgets:\n  - {peak: 1MiB}\n  - {cells: "threads=2", final_rss: 1TiB, growth: 1GiB}\n'; } > "$work/b.yaml"
sed 's/TiB/GiB/' "$work/b.yaml" > "$work/b2.yaml"
set +e; "$mlk" --db "$db" --quiet "$work/b.yaml" > "$work/b.txt" 2>&1; bcode=$?; set -e
check "budgets: a size in an unknown unit is refused at its line (exit 2)" eq "$bcode:$(grep -c "b.yaml:[0-9]*:[0-9]*: budgets.final_rss: expected a size" "$work/b.txt")" "2:1"
set +e; "$mlk" --db "$db" --quiet "$work/b2.yaml" > "$work/b.txt" 2>&1; bcode=$?; set -e
check "budgets: a peak over its cap is a finding of the run (exit 1), in every cell" eq "$bcode:$(grep -c "^over budget: threads=[12]: iteration peak_kib .* over its budget of 1.0 MiB" "$work/b.txt")" "1:2"
compare
check "budgets: compare alerts on them without a baseline (exit 1)" eq "$code:$(grep -cE '^ +[0-9]+\. .*REGRESSION memory: threads=[12] .*over its budget of 1.0 MiB' "$work/cmp.txt")" "1:2"
finish

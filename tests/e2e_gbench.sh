#!/usr/bin/env bash
# Google Benchmark interop: memleak-bench's JSON is read by compare.py; import-gbench round-trips a hand-written 1.7.1
# report and memleak-bench's own (figures read back equal the JSON's, read independently by Python), is idempotent,
# and compare flags a benchmark 30% slower (and a heap counter 4x larger) between two imported commits.
source "$(dirname "$0")/lib.sh"
need_sqlite
py=/usr/bin/python3
compare_py=/usr/share/benchmark/compare.py
bench="$bin/memleak-bench"
skipped=()
[ -x "$py" ] || { echo "SKIP: /usr/bin/python3 missing"; exit 77; }

# Python reads the report (it accepts NaN) and the db, and checks every benchmark's stored figures against the JSON.
cat > "$work/roundtrip.py" <<'PY'
import json, sqlite3, sys
path, dbp, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
report = json.load(open(path))
per_ns = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
db = sqlite3.connect(dbp)
bad, checked = 0, 0
def eq(got, want, what):
    global bad
    if got is None or want is None or abs(got - want) > 1e-9 * max(1.0, abs(want)):
        print("  mismatch: %s: db %r, json %r" % (what, got, want)); bad += 1
families = {}
for b in report["benchmarks"]:
    families.setdefault(b.get("run_name", b["name"]), []).append(b)
for name, entries in families.items():
    reps = [e for e in entries if e.get("run_type") == "iteration" and not e.get("error_occurred")]
    med = [e for e in entries if e.get("aggregate_name") == "median"]
    if not reps and not med:
        continue  # a failed benchmark: an error cell, no figures (checked by the script)
    src = med[0] if med else reps[0]
    row = db.execute("SELECT s.wall_ms_median, s.cpu_ms_median, s.n, s.peak_kib, s.final_heap_bytes, c.id "
                     "FROM cells c JOIN step_stats s ON s.cell_id = c.id AND s.step = 'iteration' "
                     "WHERE c.run_id = ? AND json_extract(c.axes, '$.benchmark') = ?", (run, name)).fetchone()
    if row is None:
        print("  missing: %s" % name); bad += 1; continue
    ms = per_ns[src.get("time_unit", "ns")] / 1e6
    eq(row[0], src["real_time"] * ms, name + " wall_ms_median")
    eq(row[1], src["cpu_time"] * ms, name + " cpu_ms_median")
    eq(row[2], len(reps), name + " n")
    if "peak_rss_kib" in src: eq(row[3], src["peak_rss_kib"], name + " peak_kib")
    elif row[3] is not None: print("  %s: peak_kib %r without a counter" % (name, row[3])); bad += 1
    if "heap_live_bytes" in src: eq(row[4], src["heap_live_bytes"], name + " final_heap_bytes")
    walls = [r[0] for r in db.execute("SELECT wall_ns FROM samples WHERE cell_id = ? ORDER BY seq", (row[5],))]
    eq(len(walls), len(reps), name + " samples")
    for w, e in zip(walls, reps):
        eq(w, e["real_time"] * per_ns[e.get("time_unit", "ns")], name + " wall_ns")
    checked += 1
print("%d benchmarks checked, %d mismatches" % (checked, bad))
sys.exit(1 if bad or not checked else 0)
PY

# ---- a hand-written report in the 1.7.1 format, twice: BM_Slower 30% slower and BM_Steady's heap 4x at c2 ----
entry() { # name rep real cpu heap
  printf '    {"name": "%s", "family_index": 0, "per_family_instance_index": 0, "run_name": "%s", "run_type": "iteration",
      "repetitions": 5, "repetition_index": %d, "threads": 1, "iterations": 1000, "real_time": %s, "cpu_time": %s,
      "time_unit": "ns", "peak_rss_kib": 9000, "heap_live_bytes": %s, "allocs_per_iter": 0},\n' "$1" "$1" "$2" "$3" "$4" "$5"
}
aggregates() { # name median mean heap
  for agg in mean median; do
    v=$2; [ $agg = mean ] && v=$3
    printf '    {"name": "%s_%s", "family_index": 0, "per_family_instance_index": 0, "run_name": "%s",
      "run_type": "aggregate", "repetitions": 5, "threads": 1, "aggregate_name": "%s", "aggregate_unit": "time",
      "iterations": 5, "real_time": %s, "cpu_time": %s, "time_unit": "ns", "peak_rss_kib": 9000,
      "heap_live_bytes": %s, "allocs_per_iter": 0},\n' "$1" $agg "$1" $agg "$v" "$v" "$4"
  done
  printf '    {"name": "%s_cv", "family_index": 0, "per_family_instance_index": 0, "run_name": "%s",
      "run_type": "aggregate", "repetitions": 5, "threads": 1, "aggregate_name": "cv", "aggregate_unit": "percentage",
      "iterations": 5, "real_time": 0.01, "cpu_time": 0.01, "time_unit": "ns", "peak_rss_kib": 0,
      "heap_live_bytes": 0, "allocs_per_iter": NaN},\n' "$1" "$1"
}
fixture() { # file date slow-times... steady-times... heap
  local f=$1 date=$2 heap=$3; shift 3
  {
    printf '{\n  "context": {\n    "date": "%s",\n    "host_name": "ci-7",\n    "executable": "./bench/other_project_bench",\n' "$date"
    printf '    "num_cpus": 4,\n    "mhz_per_cpu": 2400,\n    "cpu_scaling_enabled": false,\n    "load_avg": [0.5,0.4,0.3],\n'
    printf '    "library_build_type": "release"\n  },\n  "benchmarks": [\n'
    local i=0
    for t in 1 2 3 4 5; do entry "BM_Slower/1024" $i "$1" "$1" 65536; i=$((i + 1)); shift; done
    aggregates "BM_Slower/1024" "$M1" "$M1" 65536
    i=0
    for t in 1 2 3 4 5; do entry "BM_Steady/64" $i "$1" "$1" "$heap"; i=$((i + 1)); shift; done
    aggregates "BM_Steady/64" "$M2" "$M2" "$heap"
    printf '    {"name": "BM_Broken", "family_index": 2, "per_family_instance_index": 0, "run_name": "BM_Broken",
      "run_type": "iteration", "repetitions": 5, "repetition_index": 0, "threads": 1,
      "error_occurred": true, "error_message": "device busy"}\n  ]\n}\n'
  } > "$f"
}
M1=1000 M2=100 fixture "$work/c1.json" "2024-05-01T02:00:00+02:00" 1048576 1000 1010 990 1005 995 100 101 99 100.5 99.5
M1=1300 M2=100 fixture "$work/c2.json" "2024-05-02T02:00:00+02:00" 4194304 1300 1310 1290 1305 1295 100.2 99.8 100.1 99.9 100
db="$work/g.db"
imp() { set +e; "$bin/memleak-run" import-gbench "$@" > "$work/imp.txt" 2>&1; code=$?; set -e; }
imp "$work/c1.json" --db "$db" --commit c1 --branch main
check "fixture c1 imports" eq "$code" 0
check "it says which run" grep -q "^run 1 stored in .*other_project_bench, 3 benchmark(s), 1 failed" "$work/imp.txt"
check "fixture c1 round-trips" "$py" "$work/roundtrip.py" "$work/c1.json" "$db" 1
imp "$work/c1.json" --db "$db" --commit c1 --branch main
check "importing again: exit 0" eq "$code" 0
check "importing again: says so" grep -q "imported before as run 1" "$work/imp.txt"
check "importing again: still one run" eq "$(q "SELECT count(*) FROM runs")" 1
check "the failed benchmark is an error cell" eq "$(q "SELECT status || ':' || error FROM cells WHERE config_key LIKE 'benchmark=BM_Broken;%'")" "error:device busy"
check "started_at from the report's date" eq "$(q "SELECT started_at FROM runs WHERE id = 1")" "2024-05-01T00:00:00.000Z"
imp "$work/c2.json" --db "$db" --commit c2 --branch main
check "fixture c2 imports as run 2" grep -q "^run 2 stored" "$work/imp.txt"
check "fixture c2 round-trips" "$py" "$work/roundtrip.py" "$work/c2.json" "$db" 2
set +e; "$bin/memleak-run" compare --db "$db" --run latest > "$work/cmp.txt" 2>&1; code=$?; set -e
check "compare: 30% slower is a regression, exit 1" eq "$code" 1
check "compare: BM_Slower wall_ms flagged by the U test over repetitions" grep -qE "^ +regression +latency +iteration wall_ms .*\(\+30\.0%\) \(U test p=" "$work/cmp.txt"
check "compare: ... in BM_Slower's alert" grep -q "REGRESSION latency: benchmark=BM_Slower/1024 .*iteration wall_ms" "$work/cmp.txt"
check "compare: BM_Steady's latency is not flagged" eq "$(grep -c "BM_Steady.*wall_ms" "$work/cmp.txt" || true)" 0
check "compare: BM_Steady's heap counter 4x is flagged" grep -q "REGRESSION memory: benchmark=BM_Steady/64 .*iteration final_heap_bytes " "$work/cmp.txt"
check "compare: memory leads" eq "$(grep -A1 "^ALERTS" "$work/cmp.txt" | sed -n 2p | grep -c "REGRESSION memory")" 1
check "compare: nothing else" eq "$(grep -cE "^ +(regression|improvement) " "$work/cmp.txt")" 2
"$bin/memleak-run" history --db "$db" --config BM_Slower --metric wall_ms > "$work/hist.txt"
check "history: both runs of BM_Slower" grep -q "^2 .*c2 .*0.0013" "$work/hist.txt"
set +e; "$bin/memleak-run" history --db "$db" --all > "$work/hall.txt" 2>&1; code=$?; set -e
check "history --all works on imported runs" eq "$code" 0
if command -v gnuplot > /dev/null; then
  set +e; "$bin/memleak-run" report --db "$db" --out "$work/report" --plots-dir "$src/plots" > "$work/rep.txt" 2>&1; code=$?; set -e
  check "report on an imported run" eq "$code" 0
  check "report has the trend of a benchmark" test -n "$(ls "$work/report/data" | grep -i trend | head -1)"
fi
printf '{"benchmarks": [{"name": "x", "time_unit": "fortnights"}]}' > "$work/bad.json"
imp "$work/bad.json" --db "$db"
check "a bad report: exit 2, named" eq "$code:$(grep -c "bad.json.*fortnights" "$work/imp.txt")" "2:1"
imp "$work/missing.json" --db "$db"
check "a missing file: exit 2" eq "$code" 2
check "refused reports store nothing" eq "$(q "SELECT count(*) FROM runs")" 2

# ---- memleak-bench: its JSON for compare.py, and for import-gbench ----
if [ ! -x "$bench" ]; then
  skipped+=("memleak-bench not built (Debian libbenchmark-dev missing)")
else
  run_bench() { # out.json, extra args
    local out=$1; shift
    "$bench" --engines ref --model mlp:mlp_hidden=64 --threads 1 --benchmark_filter='ref/mlp' \
      --benchmark_min_time=0.01 --benchmark_repetitions=3 --benchmark_format=json "$@" > "$out" 2> "$work/bench.err"
  }
  check "memleak-bench run A" run_bench "$work/A.json"
  check "memleak-bench run B (heap shim)" run_bench "$work/B.json" --heap
  names='"compile/ref/mlp/mlp_hidden=64/process_time/real_time","infer/ref/mlp/mlp_hidden=64/threads:1/process_time/real_time"'
  check "A holds both benchmarks, peak counters, no heap counters" "$py" -c "
import json; d = json.load(open('$work/A.json')); n = sorted({b['run_name'] for b in d['benchmarks']})
assert n == [$names], n
assert all('peak_rss_kib' in b and 'allocs_per_iter' not in b for b in d['benchmarks'] if b['run_type'] == 'iteration')"
  check "B has heap counters; infer allocates nothing per iteration" "$py" -c "
import json; d = json.load(open('$work/B.json'))
it = [b for b in d['benchmarks'] if b['run_type'] == 'iteration']
assert it and all('heap_bytes_per_iter' in b and 'allocs_per_iter' in b for b in it)
assert all(b['allocs_per_iter'] == 0 for b in it if b['name'].startswith('infer/')), it"
  if [ ! -f "$compare_py" ]; then
    skipped+=("$compare_py missing (Debian libbenchmark-tools)")
  elif ! "$py" -c "import scipy" 2> /dev/null; then
    skipped+=("python3-scipy missing: compare.py needs it")
  else
    set +e; "$py" "$compare_py" benchmarks "$work/A.json" "$work/B.json" > "$work/cmppy.raw" 2>&1; code=$?; set -e
    sed 's/\x1b\[[0-9;]*m//g' "$work/cmppy.raw" > "$work/cmppy.txt" # its colours
    check "compare.py on two memleak-bench outputs: exit 0" eq "$code" 0
    check "compare.py's table names the infer benchmark" grep -q "^infer/ref/mlp/mlp_hidden=64/threads:1/process_time/real_time " "$work/cmppy.txt"
    check "compare.py's table names the compile benchmark" grep -q "^compile/ref/mlp/mlp_hidden=64/process_time/real_time " "$work/cmppy.txt"
    check "compare.py ran its U test" grep -q "_pvalue" "$work/cmppy.txt"
  fi
  db="$work/b.db"
  imp "$work/A.json" --db "$db" --commit a --branch main
  check "memleak-bench's report imports" grep -q "^run 1 stored .* memleak-bench, 2 benchmark(s), 6 repetition sample(s)" "$work/imp.txt"
  check "memleak-bench's report round-trips" "$py" "$work/roundtrip.py" "$work/A.json" "$db" 1
  imp "$work/B.json" --db "$db" --commit b --branch main
  check "the heap run round-trips" "$py" "$work/roundtrip.py" "$work/B.json" "$db" 2
  check "heap counters map onto final_heap_bytes" test "$(q "SELECT count(*) FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.run_id = 2 AND s.final_heap_bytes > 0")" -eq 2
  set +e; "$bin/memleak-run" compare --db "$db" --run latest > "$work/cmp2.txt" 2>&1; code=$?; set -e
  check "compare on memleak-bench runs: 0 or 1, never an error" test "$code" -le 1
  check "compare judged both benchmarks" grep -q "over 2 cell steps" "$work/cmp2.txt"
  # Not ONNX at all: refused before any benchmark runs (the plan's model check, issue 25), naming the byte.
  printf 'not a model' > "$work/junk.onnx"
  set +e; "$bench" --engines ref --model "$work/junk.onnx" --threads 1 > /dev/null 2> "$work/junk.err"; code=$?; set -e
  check "memleak-bench: a file that is not ONNX is an input error" eq "$code" 2
  check "... naming the field and byte" grep -q "junk.onnx is not a well-formed ONNX model: model @ byte 0" "$work/junk.err"
  # Well-formed, with an operator the engine lacks: the engine's call fails in the benchmark.
  "$py" -c "
import onnx
from onnx import helper, TensorProto
v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [1])
g = helper.make_graph([helper.make_node('NoSuchOp', ['x'], ['y'])], 'g', [v('x')], [v('y')])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), '$work/bad.onnx')"
  set +e; "$bench" --engines ref --model "$work/bad.onnx" --threads 1 --benchmark_format=json > "$work/bad-run.json" 2> /dev/null
  code=$?; set -e
  check "memleak-bench: a failing engine call exits 1" eq "$code" 1
  check "... with error_occurred and the engine's message in the report" "$py" -c "
import json; d = json.load(open('$work/bad-run.json')); e = [b for b in d['benchmarks'] if b['name'].startswith('compile/ref/bad/')]
assert e and e[0]['error_occurred'] and 'NoSuchOp' in e[0]['error_message'], e"
  set +e; "$bench" --benchmark_min_time=0.5s > /dev/null 2> "$work/bad.err"; code=$?; set -e
  check "memleak-bench: a flag 1.7.1 refuses is a usage error" eq "$code" 2
  check "... and the message names it" grep -q "unrecognized arguments: --benchmark_min_time=0.5s" "$work/bad.err"
  check "memleak-bench --help lists its own options" "$bench" --help | grep -q -- "--model SPEC"
fi
if [ "${#skipped[@]}" -gt 0 ] && [ "$failed" -eq 0 ]; then
  echo "$passed passed; SKIP: ${skipped[*]}"
  exit 77
fi
finish

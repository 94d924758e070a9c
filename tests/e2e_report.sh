#!/usr/bin/env bash
# memleak-run report over a db of eight runs (a planted leak, a bloat that steps up at the sixth commit, a clean
# cell), after compare and history: real PNG and SVG plots, an offline index.html linking every plot, a junit.xml
# that parses and fails exactly the leaks (then also the regressions), a summary.md with regressions first; strings
# with quotes and markup stay escaped, and gnuplot missing or bad usage exit as documented.
# It must never leave files behind (lib.sh's temp folder) nor read anything but the dbs it builds.
source "$(dirname "$0")/lib.sh"
need_sqlite
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot missing (Debian package gnuplot-nox)"; exit 77; }
mlk="$bin/memleak-run"
py=/usr/bin/python3
db="$work/m.db"

scenario() { # cap of the bloat cell's retention -> scenario file
  cat > "$work/s-$1.yaml" <<YAML
name: e2e-report
engine: ref
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 40
warmup: 5
thresholds: {leak_bytes_per_iter: 1024, latency_abs_ms: 100000} # memory findings only: latency moves with load
matrix:
  fault:
    - {name: none}
    - {name: leak, inject_leak_bytes: 65536}
    - {name: bloat, inject_retention_bytes: 262144, inject_retention_cap: $1}
YAML
}
scenario 512K
scenario 4M
for i in 1 2 3 4 5 6 7 8; do
  cap=512K
  [ "$i" -ge 6 ] && cap=4M
  set +e
  "$mlk" --db "$db" --quiet --commit "c${i}${i}${i}${i}${i}${i}${i}" --branch main "$work/s-$cap.yaml" > /dev/null
  code=$?
  set -e
  check "run $i finds the planted leak (exit 1)" eq "$code" 1
done

# junit: one testcase per cell (name = the axes), a failure exactly where the verdict or a regression fails.
junit_check() { # file, expected testcases, expected failing names (sorted, space-separated)
  "$py" - "$@" <<'PY'
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
cases = doc.getElementsByTagName("testcase")
failing = sorted(c.getAttribute("name") for c in cases if c.getElementsByTagName("failure"))
ok = len(cases) == int(sys.argv[2]) and " ".join(failing) == sys.argv[3]
ok = ok and all(c.getAttribute("classname") == "e2e-report" for c in cases)
if not ok:
    print("  testcases %d, failing %s" % (len(cases), failing))
sys.exit(0 if ok else 1)
PY
}
failure_message() { # file, testcase name -> its failure message
  "$py" -c 'import sys, xml.dom.minidom
for c in xml.dom.minidom.parse(sys.argv[1]).getElementsByTagName("testcase"):
    for f in c.getElementsByTagName("failure"):
        if c.getAttribute("name") == sys.argv[2]: print(f.getAttribute("message"))' "$1" "$2"
}

# ---- run 5, never compared: the failures are exactly the leak cells ----
out5="$work/r5"
quiet() { "$@" > /dev/null; }
check "report of run 5 exits 0" quiet "$mlk" report --db "$db" --run 5 --out "$out5"
leaks=$(q "SELECT group_concat(l, ' ') FROM (SELECT (SELECT group_concat(key || '=' || value, ' ') FROM json_each(axes)) AS l FROM cells WHERE run_id = 5 AND status = 'leak' ORDER BY l)")
check "the db has the planted leak" eq "$leaks" "fault=leak"
check "junit of run 5: 3 testcases, failures exactly the leaks" junit_check "$out5/junit.xml" 3 "$leaks"
check "the leak's failure message carries its slope" grep -q "slope +64.0 KiB/iter (65544 B per iteration)" \
  <(failure_message "$out5/junit.xml" fault=leak)
check "summary of an uncompared run says so" grep -q "Not compared" "$out5/summary.md"

# ---- compare and history, then the newest run (the default) into a folder with spaces and quotes ----
set +e
"$mlk" compare --db "$db" > "$work/compare.txt"
code=$?
set -e
check "compare flags the bloat's step (exit 1)" eq "$code" 1
"$mlk" history --db "$db" --all --quiet > /dev/null
check "compare stored the bloat's peak regression" eq "$(q "SELECT count(*) FROM findings f JOIN cells c ON c.id = f.cell_id WHERE c.axes LIKE '%bloat%' AND f.step = 'iteration' AND f.metric = 'peak_kib' AND f.kind = 'regression'")" 1
check "history stored the bloat's change point at c6666666" eq "$(q "SELECT commit_sha FROM change_points WHERE config_key LIKE '%fault=bloat' AND step = 'iteration' AND metric = 'peak_kib'")" c6666666
out="$work/out dir 'q' \"x\""
"$mlk" report --db "$db" --out "$out" > "$work/r8.txt"
check "--run defaults to the newest run" grep -q "report of run 8 (e2e-report)" "$work/r8.txt"

pngs=("$out"/plots/*.png)
check "one memory plot per cell, a matrix, trends" eq "$(ls "$out/plots" | grep -c '^memory-cell-.*\.png$') $(ls "$out/plots" | grep -c '^matrix-.*\.png$') $(( $(ls "$out/plots" | grep -c '^trend-.*\.png$') >= 12 ))" "3 1 1"
for f in "${pngs[@]}"; do
  check "$(basename "$f") is a PNG" eq "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a
  check "$(basename "$f") is not trivial" test "$(stat -c %s "$f")" -gt 10000
  check "$(basename "$f") has its SVG twin" test -s "${f%.png}.svg"
done
for f in "$out"/plots/*.svg; do
  check "$(basename "$f") is SVG XML" "$py" -c 'import sys, xml.dom.minidom
sys.exit(xml.dom.minidom.parse(sys.argv[1]).documentElement.tagName != "svg")' "$f"
done
html="$out/index.html"
check "index.html has no network reference" eq "$(grep -ci 'http' "$html" || true)" 0
for f in "$out"/plots/*; do
  check "index.html references plots/$(basename "$f")" grep -qF "plots/$(basename "$f")" "$html"
done
check "index.html inlines the PNGs" eq "$(grep -o '<img src="plots/[^"]*\.png"' "$html" | wc -l)" "${#pngs[@]}"
while IFS='|' read -r status detail; do
  esc=$("$py" -c 'import html, sys; print(html.escape(sys.argv[1]))' "$detail")
  check "index.html lists a $status cell with its detail" grep -qF "$esc" "$html"
done < <(q "SELECT status, detail FROM cells WHERE run_id = 8")
check "index.html lists the change point with its commit" grep -q "<code>c6666666</code>" "$html"
check "index.html lists the regression" grep -q '<td class="regression">regression</td><td><a href="#cell-2">fault=bloat</a></td><td>iteration</td><td>peak HWM</td>' "$html"
check "the memory data has one row per iteration" eq "$(grep -vc '^#' "$out/data/memory-cell-1.tsv")" 45
check "the trend data has one row per run, change point in block 1" eq "$(awk 'BEGIN{b=0} /^$/{b++} !/^#/ && NF {n[b>0]++} END{print n[0], n[1]}' "$out/data/trend-c2-iteration-peak_kib.tsv")" "8 1"

want=$( (echo "$leaks"; q "SELECT DISTINCT (SELECT group_concat(key || '=' || value, ' ') FROM json_each(c.axes)) FROM findings f JOIN cells c ON c.id = f.cell_id WHERE f.kind = 'regression' AND f.comparison_id = (SELECT max(id) FROM comparisons WHERE run_id = 8)") | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/ $//')
check "junit of run 8: failures are the leaks and the regressions" junit_check "$out/junit.xml" 3 "$want"
check "the regression's failure message is its alert" grep -qE "regression: REGRESSION memory: fault=bloat at run 8: [a-z_]+ [a-z_]+ [0-9.]+ [KM]iB -> [0-9.]+ [KM]iB \(\+[0-9.]+%\) \(\+[0-9]+ more moved with it\)" \
  <(failure_message "$out/junit.xml" fault=bloat)
sum="$out/summary.md"
reg=$(grep -n '^\*\*Alerts: 1\*\*' "$sum" | cut -d: -f1)
leak=$(grep -n '^\*\*Leaks and failures' "$sum" | cut -d: -f1)
check "index.html leads with the alerts" test "$(grep -n 'id="alerts"' "$html" | cut -d: -f1)" -lt "$(grep -n 'id="regressions"' "$html" | cut -d: -f1)"
check "summary.md: the bloat's alert, its peak first" grep -qE "^1\. \*\*REGRESSION memory\*\* \(fails the gate\): fault=bloat" "$sum"
check "summary.md lists alerts before leaks" test "${reg:-99}" -lt "${leak:-0}"
check "summary.md ends with the count of passing cells" grep -q "^2 of 3 cells pass" "$sum"
check "summary.md is short" test "$(wc -l < "$sum")" -lt 40
# every judged signal (issue 9): a panel plot per judged cell, and the verdicts in summary.md and junit.xml
check "every judged cell has its signals plot" eq "$(ls "$out"/plots/signals-cell-*.png | wc -l)" "$(q "SELECT count(DISTINCT cell_id) FROM series_results WHERE cell_id IN (SELECT id FROM cells WHERE run_id = 8)")"
check "index.html shows the signals plots" grep -q '<img src="plots/signals-cell-0.png"' "$html"
# the mapped panel draws what the judge read: VmSize beyond what the allocator holds, with the heap judged
want=$(q "SELECT printf('%.6f', (vm_size_kib * 1024.0 - alloc_held) / 1048576.0) FROM samples WHERE step = 'iteration'
  AND alloc_held IS NOT NULL AND heap_live_bytes IS NOT NULL AND cell_id = (SELECT id FROM cells WHERE run_id = 8 AND idx = 0)
  ORDER BY seq DESC LIMIT 1")
check "the mapped panel is VmSize beyond the allocator (${want:-no sample} MiB)" \
  awk -v w="${want:-x}" '!/^#/ && NF {v = $5} END {d = v - w; t = 1e-5 * (w < 0 ? -w : w) + 1e-4
    exit !(w != "x" && d < t && d > -t)}' \
  "$out/data/signals-cell-0.tsv"
check "summary.md names the leaking signal" grep -qE "^  - signals: .*heap leak \+[0-9.]+ [KM]?i?B/iter" "$sum"
check "junit.xml lists every signal's verdict" grep -qE "signals: heap (pass|leak|plateau), anon (pass|leak|plateau), mapped" "$out/junit.xml"
for link in $(grep -o '](plots/[^)]*)' "$sum" | sed 's/^](//; s/)$//'); do
  check "summary.md links an existing $link" test -s "$out/$link"
done

"$mlk" report --db "$db" --out "$work/lb" --no-plots --link-base 'https://ci.example/job 7/report/' > /dev/null
check "--link-base prefixes summary.md's links, escaped" grep -qF '](https://ci.example/job%207/report/index.html#' "$work/lb/summary.md"
check "--link-base leaves index.html offline" eq "$(grep -ci 'http' "$work/lb/index.html" || true)" 0

# ---- the same folder again for an older run: no stale plot is left unreferenced ----
"$mlk" report --db "$db" --run 1 --out "$out" > /dev/null
for f in "$out"/plots/*; do
  check "rerun: plots/$(basename "$f") belongs to run 1's report" grep -qF "plots/$(basename "$f")" "$out/index.html"
done

# ---- markup in the run's strings stays text ----
set +e
"$mlk" --db "$db" --quiet --commit 'x<&>"q'"'" --branch 'b&<' "$work/s-512K.yaml" > /dev/null
set -e
"$mlk" report --db "$db" --out "$work/esc" > /dev/null
check "junit with markup in the commit parses" junit_check "$work/esc/junit.xml" 3 "fault=leak"
check "index.html escapes the commit" grep -qF 'x&lt;&amp;&gt;&quot;q&#39;' "$work/esc/index.html"
check "summary.md escapes the commit" grep -qF 'x\<\&\>"q' "$work/esc/summary.md"

# ---- a full matrix: allocators group the bars, threads x mmap are the series ----
mdb="$work/matrix.db"
cat > "$work/matrix.yaml" <<'YAML'
name: e2e-report-matrix
engine: ref
model: {generate: mlp, mlp_hidden: 64}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 8
warmup: 2
matrix:
  threads: [1, 2]
  mmap: [on, off]
YAML
"$mlk" --db "$mdb" --quiet "$work/matrix.yaml" > /dev/null || true
"$mlk" report --db "$mdb" --out "$work/mx" --step compile_model > /dev/null
check "matrix of --step compile_model: a header and one group" eq "$(wc -l < "$work/mx/data/matrix-compile_model-peak.tsv")" 2
check "matrix series are threads x mmap" eq "$(head -1 "$work/mx/data/matrix-compile_model-latency.tsv" | tr '\t' '|')" \
  "group|threads=1 mmap=on|threads=1 mmap=off|threads=2 mmap=on|threads=2 mmap=off"
check "the matrix plot was rendered" test -s "$work/mx/plots/matrix-compile_model.png"

# ---- gnuplot missing: a clear error naming the package, the rest still written ----
set +e
MLK_GNUPLOT=/nonexistent/gnuplot "$mlk" report --db "$db" --out "$work/nog" > /dev/null 2> "$work/nog.err"
code=$?
set -e
check "gnuplot missing exits 3" eq "$code" 3
check "the error names gnuplot-nox" grep -q "gnuplot-nox" "$work/nog.err"
check "index.html, summary.md and junit.xml are still written" test -s "$work/nog/index.html" -a -s "$work/nog/summary.md" -a -s "$work/nog/junit.xml"
check "index.html says why the plots are missing" grep -q "gnuplot-nox" "$work/nog/index.html"
check "no plot was drawn" eq "$(ls "$work/nog/plots" | wc -l)" 0
check "--no-plots exits 0 and writes the data" quiet "$mlk" report --db "$db" --out "$work/np" --no-plots
check "--no-plots wrote the TSVs" test -s "$work/np/data/memory-cell-0.tsv"

# ---- usage and input errors ----
usage() { # expected exit, then the arguments
  local want=$1; shift
  set +e
  "$mlk" report "$@" > /dev/null 2> "$work/usage.err"
  local code=$?
  set -e
  eq "$code" "$want"
}
check "--help exits 0" usage 0 --help
check "no --out exits 2" usage 2 --db "$db"
check "an unknown option exits 2" usage 2 --db "$db" --out "$work/u" --bogus
check "an unknown run exits 2" usage 2 --db "$db" --out "$work/u" --run 999
check "... naming it" grep -q "no run with id '999'" "$work/usage.err"
check "a missing db exits 2" usage 2 --db "$work/none.db" --out "$work/u"
check "... and is not created" test ! -e "$work/none.db"
echo "not a db" > "$work/bad.db"
check "a file that is not a db exits 2" usage 2 --db "$work/bad.db" --out "$work/u"
finish

#!/usr/bin/env bash
# The guide report (issue 21): a tiny scenarios/openvino-guide.yaml (a small model, a dozen recompilations) run through
# memleak-run, then `report --guide`: one row per recommendation of OpenVINO's memory guide, each tested by the run's
# cells with a verdict from the set; its figures are the db's (compile VmHWM, VmRSS after the last compile); memleak's
# detector re-judged from the stored samples gives the run's own verdicts; `report --out` writes the same guide.md, and
# none for a run that varies no knob of the guide. OpenVINO when its plugin is built, else the reference engine.
# It must never leave files behind (lib.sh's temp folder) nor check a verdict that depends on the machine's timing.
source "$(dirname "$0")/lib.sh"
need_sqlite
mlk="$bin/memleak-run"
db="$work/g.db"
engine=ref
if [ -f "$bin/../lib/engine_openvino.so" ]; then engine=openvino; fi
echo "engine: $engine"

# The scenario as shipped, made tiny: another model, 12 iterations, 2 warmup.
sed -e "s/^engine: .*/engine: $engine/" -e 's/^iterations: .*/iterations: 12/' -e 's/^warmup: .*/warmup: 2/' \
    -e 's/^model: .*/model: {generate: mlp, mlp_hidden: 512, external_data: true}/' \
    "$src/scenarios/openvino-guide.yaml" > "$work/guide.yaml"
set +e
"$mlk" --db "$db" --quiet "$work/guide.yaml" > "$work/run.out" 2>&1
code=$?
set -e
check "the tiny guide scenario runs (exit 0 or 1 for a finding)" [ "$code" -le 1 ]
[ "$code" -le 1 ] || cat "$work/run.out"
check "eight cells, one per guide value" eq "$(q "SELECT COUNT(*) FROM cells")" 8
unfinished=$(q "SELECT COUNT(*) FROM cells WHERE status NOT IN ('pass', 'plateau', 'leak')")

"$mlk" report --guide --db "$db" > "$work/guide.md"
rows=$(grep -cE '^\| [1-9] \| ' "$work/guide.md" || true)
check "nine recommendation rows" eq "$rows" 9
untested=$(grep -E '^\| [1-9] \| ' "$work/guide.md" | grep -c 'not tested' || true)
check "every row tested by the run's cells" eq "$untested" 0
bad=$(grep -E '^\| [1-9] \| ' "$work/guide.md" | grep -vcE '\*\*(holds|holds partly|does not hold here)\*\*' || true)
unmeasured=$(grep -E '^\| [1-9] \| ' "$work/guide.md" | grep -cE '\*\*not measured\*\* \(a cell did not finish\)' || true)
check "every verdict is holds, holds partly or does not hold here, or not measured for an unfinished cell" \
  eq "$((bad - unmeasured))" 0
check "a row is not measured only when a cell did not finish ($unmeasured rows, $unfinished cells)" \
  eval '[ "$unmeasured" -eq 0 ] || [ "$unfinished" -gt 0 ]'
[ "$unmeasured" -eq 0 ] || grep -E 'not measured' "$work/guide.md" | cut -c1-300
check "the thresholds are stated" grep -q 'a memory figure is \*lower\* when it drops by at least 5%' "$work/guide.md"

# Figures come from the db: cell 0's compile VmHWM (step_stats) and VmRSS after its last compile (samples).
cell0=$(q "SELECT id FROM cells WHERE idx = 0")
hwm=$(q "SELECT printf('%.1f MiB', peak_kib / 1024.0) FROM step_stats WHERE cell_id = $cell0 AND step = 'compile_model'")
last=$(q "SELECT printf('%.1f MiB', vm_rss_kib / 1024.0) FROM samples WHERE cell_id = $cell0 AND step = 'compile_model'
          ORDER BY seq DESC LIMIT 1")
line=$(sed -n '/^### Cells/,/^### memleak/p' "$work/guide.md" | grep -E '^\| 0 guide=default \|')
check "cell 0's compile VmHWM is the db's ($hwm)" eq "$(echo "$line" | cut -d'|' -f4 | xargs)" "$hwm"
check "cell 0's VmRSS after the last compile is the db's ($last)" eq "$(echo "$line" | cut -d'|' -f9 | sed 's/.*-> //' | xargs)" "$last"

# The two detectors: one row per cell; memleak's column, re-judged from the stored samples, is the run's verdict.
det=$(sed -n '/^### memleak.s detector/,$p' "$work/guide.md" | grep -E '^\| [0-9]+ guide=')
finished=$(q "SELECT COUNT(*) FROM cells WHERE status IN ('pass', 'plateau', 'leak')")
check "one detector row per finished cell" eq "$(echo "$det" | wc -l)" "$finished"
for i in $(q "SELECT idx FROM cells WHERE status IN ('pass', 'plateau', 'leak')"); do
  stored=$(q "SELECT status FROM cells WHERE idx = $i")
  rejudged=$(echo "$det" | grep -E "^\| $i guide=" | cut -d'|' -f3 | xargs)
  check "cell $i: memleak re-judged from the db ($rejudged) is the run's verdict ($stored)" eq "$rejudged" "$stored"
  ov=$(echo "$det" | grep -E "^\| $i guide=" | cut -d'|' -f4 | xargs)
  check "cell $i: detector: openvino gives pass or leak ($ov)" eval '[ "$ov" = pass ] || [ "$ov" = leak ]'
done

# report --out writes the same section as guide.md; a run that varies no knob of the guide gets none.
"$mlk" report --db "$db" --out "$work/rep" --no-plots > /dev/null
check "report --out writes guide.md" cmp -s "$work/rep/guide.md" "$work/guide.md"
cat > "$work/plain.yaml" <<YAML
name: plain
engine: ref
model: {generate: mlp, mlp_hidden: 32}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 5
warmup: 1
YAML
"$mlk" --db "$work/p.db" --quiet "$work/plain.yaml" > /dev/null
mkdir -p "$work/rep2" && cp "$work/rep/guide.md" "$work/rep2/guide.md" # a previous report's
"$mlk" report --db "$work/p.db" --out "$work/rep2" --no-plots > /dev/null
check "no guide.md (a stale one removed) for a run that varies no knob of the guide" test ! -e "$work/rep2/guide.md"
check "report --guide still prints it, rows untested" grep -q 'not tested' <("$mlk" report --guide --db "$work/p.db")
set +e
"$mlk" report --guide --db "$work/none.db" > /dev/null 2>&1
code=$?
set -e
check "report --guide on a missing db exits 2" eq "$code" 2
finish

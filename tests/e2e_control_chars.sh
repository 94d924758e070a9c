#!/usr/bin/env bash
# Control characters and invalid UTF-8 in every name memleak-run prints (issue 25, item 7): a model whose node, op and
# graph names hold ESC, BEL, CR, a C1 CSI and bytes that are not UTF-8, an input named so, a variant name with an escape
# in the scenario, a Google Benchmark report with such names: the terminal (progress, final table, errors, --dry-run),
# summary.md, index.html, junit.xml, the plots' data and every subcommand's output carry no control character but
# line breaks and tabs, are valid UTF-8, and show what was there ("\e[31m"); junit.xml and index.html parse.
source "$(dirname "$0")/lib.sh"
need_sqlite
py=/usr/bin/python3
$py -c 'import onnx' 2> /dev/null || { echo "SKIP: python3-onnx missing for /usr/bin/python3"; exit 77; }
db="$work/c.db"
mkdir "$work/out"
# Names with ESC, BEL, CR, C1 CSI (U+009B), and two bytes that are not UTF-8 (patched in: onnx writes valid UTF-8).
$py - "$work/esc.onnx" <<'PY'
import sys
from onnx import helper, TensorProto
X = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4])
Y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 4])
n1 = helper.make_node('Relu', ['x'], ['t'], name='relu\x1b[31mRED\x07\rOVER')
n2 = helper.make_node('Bogus\x1b]0;title\x07', ['t'], ['y'], name='bog\x1b[2J\x9b31mQQQQQQ')
g = helper.make_graph([n1, n2], 'g\x1b[5m', [X], [Y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
open(sys.argv[1], 'wb').write(m.SerializeToString().replace(b'QQQQQQ', b'\xff\xfe\x1b[3m'))
PY
cat > "$work/s.yaml" <<YAML
name: ctl
engine: ref
model: $work/esc.onnx
pipeline: [compile_model, release_compiled]
iterations: 3
matrix:
  threads: [1]
YAML
out() { "$@" >> "$work/all.txt" 2>&1 || true; }
MLK_BRANCH=$'br\e[31m\x9b' out "$bin/memleak-run" --db "$db" "$work/s.yaml"
out "$bin/memleak-run" --db "$db" --dry-run "$work/s.yaml"
out "$bin/memleak-run" report --db "$db" --out "$work/out"
out "$bin/memleak-run" compare --db "$db"
out "$bin/memleak-run" merge "$work/m.db" "$db"
check "the run stored the cell's error" eq "$(q "SELECT count(*) FROM cells WHERE status = 'error'")" 1
check "the stored error shows the escapes" eq "$(q "SELECT instr(error, 'bog\\e[2J\\u009b31m') > 0 FROM cells")" 1
check "the branch is stored made safe" eq "$(q "SELECT branch FROM runs")" $'br\\e[31m\xef\xbf\xbd' # 0x9b alone: not UTF-8
check "the terminal shows the escapes" grep -qF 'Bogus\e]0;title\a' "$work/all.txt"
check "the table names the node" grep -qF "node 'bog\\e[2J\\u009b31m" "$work/all.txt"

# A db written before any of this (or by another tool) holds raw bytes: compare, history and report show them safely.
cp "$db" "$work/old.db"
sqlite3 "$work/old.db" "UPDATE runs SET branch = 'b' || char(27) || '[31m', commit_sha = 'c' || char(7);
  UPDATE cells SET axes = '{\"threads\":\"1' || char(27) || '[2J' || char(155) || '\"}', error = 'raw' || char(13) || 'x';"
out "$bin/memleak-run" compare --db "$work/old.db" --all
"$bin/memleak-run" compare --db "$work/old.db" --all --format json > "$work/cmp.json" 2>> "$work/all.txt" || true
cat "$work/cmp.json" >> "$work/all.txt"
check "compare --format json on it is valid JSON" $py -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$work/cmp.json"
out "$bin/memleak-run" history --all --db "$work/old.db"
out "$bin/memleak-run" baseline list --db "$work/old.db"
out "$bin/memleak-run" report --db "$work/old.db" --out "$work/oldout" --no-plots

# A variant name with an escape in the scenario: refused where it is written, the message shows it safely.
printf 'name: ctl\nengine: ref\nmodel: %s\npipeline: [compile_model, release_compiled]\niterations: 3\nmatrix:\n  fault:\n    - {name: "v\\e[32mG\\a\\rX"}\n' "$work/esc.onnx" > "$work/v.yaml"
set +e
"$bin/memleak-run" --db "$db" "$work/v.yaml" > "$work/v.txt" 2>&1
code=$?
set -e
cat "$work/v.txt" >> "$work/all.txt"
check "a control character in a variant name: exit 2" eq "$code" 2
check "a control character in a variant name: where" grep -q "v.yaml:8:14: a control character in a scalar" "$work/v.txt"

# A Google Benchmark report whose benchmark and run names hold ESC and C1.
cat > "$work/bench.json" <<'JSON'
{"context": {"date": "2024-05-01T02:00:00+02:00", "host_name": "h\u001b[31m", "num_cpus": 2},
 "benchmarks": [{"name": "BM_\u001b[31mred\u009b2J", "run_name": "BM_\u001b[31mred\u009b2J", "run_type": "iteration",
                 "repetitions": 1, "iterations": 10, "real_time": 100.0, "cpu_time": 100.0, "time_unit": "ns",
                 "label": "lab\u0007el"}]}
JSON
out "$bin/memleak-run" import-gbench --db "$work/g.db" "$work/bench.json"
out "$bin/memleak-run" report --db "$work/g.db" --out "$work/gout" --no-plots
out "$bin/memleak-run" compare --db "$work/g.db" --all
check "the benchmark's name is stored made safe" eq "$(sqlite3 "$work/g.db" "SELECT count(*) FROM cells WHERE instr(axes, char(27)) > 0 OR instr(axes, char(155)) > 0")" 0

# Nothing anywhere but printable text, line breaks and tabs, in valid UTF-8.
bad=$($py - "$work/all.txt" "$work/out" "$work/gout" "$work/oldout" <<'PY'
import os, sys, re
bad = []
paths = [sys.argv[1]] + [os.path.join(d, f) for top in sys.argv[2:] for d, _, fs in os.walk(top) for f in fs]
for p in paths:
    if p.endswith('.png'):
        continue
    b = open(p, 'rb').read()
    try:
        t = b.decode('utf-8')
    except UnicodeDecodeError as e:
        bad.append('%s: not UTF-8 at byte %d' % (p, e.start)); continue
    m = re.search('[\x00-\x08\x0b-\x1f\x7f-\x9f]', t)
    if m:
        bad.append('%s: control character %r at %d' % (p, m.group(), m.start()))
print('\n'.join(bad))
PY
)
check "no control character, valid UTF-8 everywhere${bad:+: $bad}" test -z "$bad"
check "summary.md shows the escape" grep -qF 'bog\\e\[2J' "$work/out/summary.md"
check "index.html shows the escape" grep -qF 'bog\e[2J\u009b31m' "$work/out/index.html"
for x in "$work/out/junit.xml" "$work/gout/junit.xml"; do
  check "$(basename "$(dirname "$x")")/junit.xml parses" $py -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$x"
done
check "the gbench report shows the benchmark's name" grep -qF 'BM_\e[31mred\u009b2J' "$work/gout/index.html"
finish

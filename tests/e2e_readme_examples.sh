#!/usr/bin/env bash
# The README's examples cannot rot (issue 22): every ```yaml block marked `<!-- example: dry-run -->` passes
# memleak-run --dry-run, and every ```sh block marked `<!-- example: run -->` runs, line by line, on a db of three
# runs of a small scenario, each command ending 0 or 1 (a finding), never 2 (usage) or 3 (internal error).
source "$(dirname "$0")/lib.sh"
need_sqlite
py=/usr/bin/python3
"$py" - "$src/README.md" "$work" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
n = {"dry-run": 0, "run": 0}
for m in re.finditer(r"<!-- example: (dry-run|run)[^>]*-->\n```(yaml|sh)\n(.*?)```", text, re.S):
    kind, lang, body = m.groups()
    n[kind] += 1
    open(f"{sys.argv[2]}/example-{kind}-{n[kind]}.{lang}", "w").write(body)
print(n["dry-run"], n["run"])
PY
ls "$work"/example-* > /dev/null
check "the README marks examples of both kinds" test "$(ls "$work"/example-dry-run-* | wc -l)" -ge 1 -a "$(ls "$work"/example-run-* | wc -l)" -ge 1
for y in "$work"/example-dry-run-*.yaml; do
  set +e; "$bin/memleak-run" --dry-run --model-cache "$work/models" "$y" > "$work/dry.txt" 2>&1; code=$?; set -e
  check "README example $(basename "$y") passes --dry-run (exit $code: $(head -c 300 "$work/dry.txt"))" eq "$code" 0
done
# nightly.db: three runs whose configs have threads=2 (the history example names it)
cat > "$work/n.yaml" <<'YAML'
name: readme-examples
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
cd "$work"
for i in 1 2 3; do "$bin/memleak-run" --db nightly.db --quiet --commit "r$i" --branch main n.yaml > /dev/null; done
for sh in "$work"/example-run-*.sh; do
  while IFS= read -r line; do
    line="${line%%#*}"
    [ -n "${line// }" ] || continue
    case "$line" in build/bin/memleak-run*) ;; *) continue ;; esac # other tools' lines (ci/, ...) run elsewhere
    cmd="$bin/memleak-run${line#build/bin/memleak-run}"
    set +e; eval "$cmd" > "$work/out.txt" 2>&1; code=$?; set -e
    check "README: '$line' exits 0 or 1 (got $code: $(head -c 200 "$work/out.txt"))" test "$code" -le 1
  done < "$sh"
done
# the short form the README names: model: path.onnx with inputs: [in0.pb] beside it
d=/usr/share/libonnx-testdata/data/node/test_abs
if [ -f "$d/model.onnx" ]; then
  printf 'name: short\nengine: ref\nmodel: %s\ninputs: [%s]\nsetup: [load_engine, read_model, compile_model]\npipeline: [create_request, infer, release_request]\nteardown: [release_compiled, release_model, unload_engine]\niterations: 3\nwarmup: 1\n' \
    "$d/model.onnx" "$d/test_data_set_0/input_0.pb" > short.yaml
  set +e; "$bin/memleak-run" --db short.db --quiet short.yaml > short.txt 2>&1; code=$?; set -e
  check "model: path.onnx with a top-level inputs: runs (exit $code)" eq "$code" 0
  sed "s#^model: .*#model: {path: $d/model.onnx, inputs: [x.pb]}#" short.yaml > twice.yaml
  set +e; "$bin/memleak-run" --dry-run twice.yaml > twice.txt 2>&1; code=$?; set -e
  check "inputs given twice: exit 2, at its line" eq "$code:$(grep -c "twice.yaml:[0-9]*:[0-9]*: inputs: the inputs are given twice" twice.txt)" "2:1"
fi
finish

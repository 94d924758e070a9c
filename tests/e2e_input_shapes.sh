#!/usr/bin/env bash
# Inputs for models with symbolic dims (issue 22): --dry-run prints every cell's input shapes; a dim that nothing sets
# is a warning naming it and the options that set it (an error under --strict); shapes: and dim.NAME set it.
source "$(dirname "$0")/lib.sh"
mlk="$bin/memleak-run"
head='name: e2e-input-shapes
engine: ref
model: {generate: transformer, layers: 1, hidden: 32, heads: 2, seq: 8, dynamic: true}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 3
warmup: 1'
printf '%s\nmatrix:\n  threads: [1, 2]\n' "$head" > "$work/unset.yaml"
set +e; "$mlk" --dry-run --model-cache "$work/models" "$work/unset.yaml" > "$work/out.txt" 2> "$work/err.txt"; code=$?; set -e
check "unset dims: --dry-run still passes (exit 0)" eq "$code" 0
check "unset dims: every cell's shape printed, the unset dims marked" eq "$(grep -cE '^ +[01]  input: 1\?x1\?x32$' "$work/out.txt")" 2
check "unset dims: a warning names the dim and the options that set it" \
  grep -q "warning: .*dim 0 'batch' of input 'input' is set by nothing: it runs as 1 (set it with shapes: {batch: ...} or the engine option dim.batch)" "$work/err.txt"
check "unset dims: said once per dim, not per cell" eq "$(grep -c "warning" "$work/err.txt")" 1
set +e; "$mlk" --dry-run --strict --model-cache "$work/models" "$work/unset.yaml" > /dev/null 2> "$work/err.txt"; code=$?; set -e
check "--strict: an unset dim is an error (exit 2)" eq "$code:$(grep -c "(--strict)" "$work/err.txt")" "2:1"
set +e; "$mlk" --db "$work/x.db" --strict --model-cache "$work/models" "$work/unset.yaml" > /dev/null 2>&1; code=$?; set -e
check "--strict: nothing runs (exit 2, no run stored)" eq "$code:$(test -e "$work/x.db" && echo db || echo none)" "2:none"
printf '%s\nshapes:\n  batch: {cycle: [1, 2]}\nengine_options: {dim.seq: 16}\n' "$head" > "$work/set.yaml"
set +e; "$mlk" --dry-run --strict --model-cache "$work/models" "$work/set.yaml" > "$work/out.txt" 2> "$work/err.txt"; code=$?; set -e
check "shapes: and dim.NAME set them: --strict passes, no warning" eq "$code:$(grep -c warning "$work/err.txt" || true)" "0:0"
check "... and the shape says how" grep -qE '^ +0  input: \{batch=cycle:1,2\}x16x32$' "$work/out.txt"
# The run keeps each cell's shapes with the cell (cell_inputs), as --dry-run printed them.
printf '%s\nmatrix:\n  threads: [1, 2]\n' "$head" > "$work/kept.yaml"
set +e; "$mlk" --db "$work/k.db" --quiet --model-cache "$work/models" "$work/kept.yaml" > /dev/null 2>&1; code=$?; set -e
check "a run with unset dims still runs (exit 0)" eq "$code" 0
check "every cell's input shapes are stored with it" \
  eq "$(sqlite3 "$work/k.db" "SELECT group_concat(c.idx || '=' || i.shapes, ' | ') FROM cells c JOIN cell_inputs i ON i.cell_id = c.id ORDER BY c.idx")" \
  "0=input: 1?x1?x32 | 1=input: 1?x1?x32"
finish

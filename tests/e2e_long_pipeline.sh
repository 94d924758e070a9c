#!/usr/bin/env bash
# The longest pipeline a scenario may give (64 steps) runs in the worker as written, and one step more is refused when
# the scenario is read (exit 2 with line:col), never after the cells started.
source "$(dirname "$0")/lib.sh"
need_sqlite
steps=""
for i in $(seq 1 32); do steps="$steps${steps:+, }compile_model, release_compiled"; done
cat > "$work/long.yaml" <<YAML
name: long-pipeline
engine: ref
model: {generate: mlp, mlp_hidden: 16}
iterations: 2
warmup: 0
pipeline: [$steps]
YAML
db="$work/long.db"
set +e
"$bin/memleak-run" --quiet --db "$db" "$work/long.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a 64-step pipeline runs (exit 0 or 1 for a finding, never 3)" test "$code" -le 1
check "its cell is judged, not an error" eq "$(q "SELECT status IN ('pass','plateau','leak') FROM cells")" 1
check "every step of every iteration was sampled" eq "$(q "SELECT COUNT(*) FROM samples WHERE phase = 'measure' AND step IN ('compile_model','release_compiled')")" 128
sed -i "s/^pipeline: \[/pipeline: [compile_model, release_compiled, /" "$work/long.yaml"
set +e
"$bin/memleak-run" --db "$work/never.db" "$work/long.yaml" > "$work/out2.txt" 2> "$work/err2.txt"
code=$?
set -e
check "66 steps: exit 2" eq "$code" 2
check "66 steps: line:col and the limit" grep -q "long.yaml:6:11: pipeline: 66 steps, more than the 64" "$work/err2.txt"
check "66 steps: nothing ran" test ! -e "$work/never.db"
finish

#!/usr/bin/env bash
# Shape schedules (issue 12): requests whose input dims change every iteration (a seeded choice of sequence lengths, a
# cycle of batch sizes) on a model with symbolic dims. Growth bounded by the set of shapes is a plateau (a block kept
# per distinct shape; the reference engine's plan cache), growth on shapes met before is a leak (a block lost whenever
# the shape changes, a block lost per infer, a mapping per infer), under glibc and jemalloc; a schedule the model
# cannot take fails the cell naming the model's dims. ORT's memory patterns and arena under the same schedule when
# ORT was fetched (engines/ort/fetch.sh), never a leak.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }

scenario() { # name, engine, shapes, engine options, matrix lines
  cat <<YAML
name: $1
engine: $2
model: {generate: transformer, layers: 1, hidden: 32, heads: 2, seq: 8, dynamic: true}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 200
warmup: 5
shapes: $3
engine_options: {$4}
$5
YAML
}
status() { q "SELECT status FROM cells WHERE axes = '{\"species\":\"$1\",\"allocator\":\"$2\"}'"; }
detail() { q "SELECT detail FROM cells WHERE axes = '{\"species\":\"$1\",\"allocator\":\"$2\"}'"; }

# 39 lengths x 3 batch sizes: new shapes keep coming through the 200 iterations.
db="$work/species.db"
scenario shapes-species species "{seq: [2, 40], batch: {cycle: [1, 2, 3]}}" "inner: ref" \
  "matrix: {species: [none, shape_cache, shape_change, tiny, mmap_anon], allocator: [glibc, jemalloc]}" \
  > "$work/species.yaml"
"$bin/memleak-run" --db "$db" --quiet "$work/species.yaml" > "$work/species.txt" 2>&1 || true
for a in glibc jemalloc; do
  check "$a: the engine alone under the schedule is no leak" test "$(status none $a)" = pass -o "$(status none $a)" = plateau
  check "$a: a block kept per distinct shape is a plateau" eq "$(status shape_cache $a)" plateau
  check "$a: ... said to come with new shapes" grep -q "new input shapes, flat on shapes met before" <<< "$(detail shape_cache $a)"
  check "$a: a block lost on every change of shape is a leak" eq "$(status shape_change $a)" leak
  check "$a: ... on shapes met before" grep -q "on input shapes met before" <<< "$(detail shape_change $a)"
  check "$a: 40 B lost per infer is still a leak" eq "$(status tiny $a)" leak
  check "$a: a mapping per infer is still a leak" eq "$(status mmap_anon $a)" leak
done

# The schedule's numbers are what the verdict rests on: the cache really grew with the shapes, by megabytes.
heap_of() { q "SELECT max(s.final_heap_bytes) FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.axes LIKE '%\"$1\"%' AND s.step = 'iteration'"; }
grew=$(( $(heap_of shape_cache) - $(heap_of none) ))
check "the per-shape cache grew the final heap by $grew B over the engine alone's" test "$grew" -gt 1000000

# The reference engine's plan cache, a cycle of 6 lengths: plans per shape, bounded; with a lost block per shape change
# planted around it, a leak.
db="$work/ref.db"
scenario shapes-ref species "{seq: {cycle: [4, 8, 12, 16, 24, 32]}}" "inner: ref, plan_cache: 4" \
  "matrix: {species: [none, shape_change], allocator: [glibc]}" > "$work/ref.yaml"
"$bin/memleak-run" --db "$db" --quiet "$work/ref.yaml" > "$work/ref.txt" 2>&1 || true
check "plan cache of 4 under a cycle of 6 lengths: no leak" test "$(status none glibc)" = pass -o "$(status none glibc)" = plateau
check "a block lost per shape change under the cycle: a leak" eq "$(status shape_change glibc)" leak

# A schedule the model cannot take: the cell fails, naming the dim and the model's own.
db="$work/bad.db"
scenario shapes-bad ref "{len: [2, 8]}" "" "" > "$work/bad.yaml"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/bad.yaml" > "$work/bad.txt" 2>&1
code=$?
set -e
check "an unknown dim fails the run (exit $code)" test "$code" -ne 0
check "... naming it and the model's symbolic dims" \
  grep -q "no input of the model has a symbolic dim named 'len' (its symbolic dims: batch, seq)" "$work/bad.txt"
sed 's/^shapes: .*/shapes: {seq: [8, 2]}/' "$work/bad.yaml" > "$work/bad2.yaml"
out=$("$bin/memleak-run" --db "$work/b2.db" "$work/bad2.yaml" 2>&1 || true)
check "a range upside down is refused at its line and column" grep -q "bad2.yaml:9:15: shapes.seq: the range's high end 2 is below its low end 8" <<< "$out"

# ONNX Runtime: memory patterns and arena on and off under the schedule (scenarios/dynamic-shapes.yaml, shortened).
if [ -f "$MLK_BUILD_DIR/lib/engine_ort.so" ]; then
  db="$work/ort.db"
  sed -e 's/^iterations: .*/iterations: 60/' "$MLK_SOURCE_DIR/scenarios/dynamic-shapes.yaml" > "$work/ort.yaml"
  "$bin/memleak-run" --db "$db" --quiet "$work/ort.yaml" > "$work/ort.txt" 2>&1 || true
  check "ORT: four cells judged" eq "$(q "SELECT count(*) FROM cells WHERE status IN ('pass', 'plateau')")" 4
  check "ORT: memory patterns grow with new shapes only" \
    grep -q "with [0-9]* new input shapes, flat on shapes met before\|then flat\|pass" <<< "$(q "SELECT detail FROM cells WHERE axes LIKE '%\"mem_pattern\":\"on\"%'")"
else
  echo "SKIP (part): ORT not fetched: dynamic-shapes.yaml not run"
fi
finish

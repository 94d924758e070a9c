#!/usr/bin/env bash
# --resume measures the model the run measured, or refuses (issue 25): paths are stored absolute, so a resume from
# another folder (holding another model of the same name) measures the run's own; a model whose weights (external
# data), file or folder changed is refused with exit 2 naming both hashes, and changed weights change the config key.
source "$(dirname "$0")/lib.sh"
need_sqlite
mkdir -p "$work/a" "$work/b"
"$bin/refengine" gen mlp --mlp-hidden 32 --external-data --out "$work/a/m.onnx" > /dev/null
"$bin/refengine" gen mlp --mlp-hidden 32 --external-data --seed 7 --out "$work/b/m.onnx" > /dev/null
cat > "$work/a/s.yaml" <<'YAML'
name: e2e-identity
engine: ref
model: m.onnx
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
duration: 1s
matrix: {threads: [1, 2, 3]}
YAML
cp "$work/a/s.yaml" "$work/b/s.yaml"
db="$work/r.db"
# Started from folder a by a relative path; killed after its first cell.
(cd "$work/a" && exec "$bin/memleak-run" --db "$db" --quiet s.yaml) > /dev/null 2>&1 &
pid=$!
for _ in $(seq 400); do
  [ "$(q "SELECT count(*) FROM cells WHERE status NOT IN ('pending','running')" 2>/dev/null || echo 0)" -ge 1 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "the scenario path is stored absolute" eq "$(q "SELECT scenario_path FROM runs")" "$work/a/s.yaml"
check "the model path is stored absolute" eq "$(q "SELECT DISTINCT model FROM cells")" "$work/a/m.onnx"
hash_a=$(q "SELECT DISTINCT model_hash FROM cells")
cp "$db" "$work/before.db"

# From folder b, whose m.onnx is another model: the run's own model is measured.
set +e
(cd "$work/b" && "$bin/memleak-run" --db "$db" --quiet --resume 1) > "$work/out.txt" 2>&1
code=$?
set -e
check "a resume from another folder completes (exit 0)" eq "$code" 0
check "it measured the run's model, by path" eq "$(q "SELECT DISTINCT model FROM cells")" "$work/a/m.onnx"
check "it measured the run's model, by hash" eq "$(q "SELECT count(DISTINCT model_hash) || ':' || max(model_hash) FROM cells")" "1:$hash_a"
check "every cell once" eq "$(q "SELECT count(*) || '/' || count(DISTINCT idx) FROM cells WHERE status = 'pass'")" "3/3"

refused() { # what, the cause it must give: --resume from folder b exits 2 within 2 s, naming the hashes
  local what=$1 cause=$2
  cp "$work/before.db" "$work/t.db"
  local t0 t1 code
  t0=$(date +%s%N)
  set +e
  (cd "$work/b" && "$bin/memleak-run" --db "$work/t.db" --quiet --resume 1) > "$work/out.txt" 2>&1
  code=$?
  set -e
  t1=$(date +%s%N)
  check "$what: exit 2" eq "$code" 2
  check "$what: promptly ($(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -lt "$prompt_ms"
  check "$what: says the model is not the one measured, with both hashes" grep -q "the model is not the one the run measured: .* hashes [0-9a-f]\{16\}, the run's cells were measured on .* (hash $hash_a)" "$work/out.txt"
  check "$what: says why ($cause)" grep -q "$cause" "$work/out.txt"
  db="$work/t.db"
  check "$what: nothing was run" eq "$(q "SELECT count(*) FROM cells WHERE status NOT IN ('pending','running')")" 1
  check "$what: no claim of its own left" eq "$(q "SELECT count(*) FROM run_owners WHERE pid != $pid")" 0
  db="$work/r.db"
}
# A db of an older memleak-run kept the path as given: resolved from folder b, it finds b's model.
sqlite3 "$work/before.db" "UPDATE runs SET scenario_path = 's.yaml'"
refused "a relative scenario path resumed from another folder" "another file"
sqlite3 "$work/before.db" "UPDATE runs SET scenario_path = '$work/a/s.yaml'"
# New weights, same size and same .onnx: the external data is part of the model's identity.
cp "$work/a/m.onnx.data" "$work/a/orig.data"
cp "$work/b/m.onnx.data" "$work/a/m.onnx.data"
refused "weights (external data) replaced" "changed since"
check "the .onnx itself did not change" cmp -s "$work/a/m.onnx" "$work/a/m.onnx"
# One weight changed in place.
cp "$work/a/orig.data" "$work/a/m.onnx.data"
printf '\x11' | dd of="$work/a/m.onnx.data" bs=1 seek=100 conv=notrunc status=none
refused "one weight byte changed" "changed since"
cp "$work/a/orig.data" "$work/a/m.onnx.data"
cp "$work/a/m.onnx" "$work/a/orig.onnx"
cp "$work/b/m.onnx" "$work/a/m.onnx"
refused "the model file replaced" "changed since"
cp "$work/a/orig.onnx" "$work/a/m.onnx"

# The config key follows the weights: two runs on different weights never share one.
db="$work/k.db"
sed 's/threads: \[1, 2, 3\]/threads: [1]/' "$work/a/s.yaml" > "$work/a/one.yaml"
"$bin/memleak-run" --db "$db" --quiet --duration 0.2s "$work/a/one.yaml" > /dev/null
cp "$work/b/m.onnx.data" "$work/a/m.onnx.data"
"$bin/memleak-run" --db "$db" --quiet --duration 0.2s "$work/a/one.yaml" > /dev/null
check "changed weights give another config key" eq "$(q "SELECT count(DISTINCT config_key) FROM cells")" 2
finish

#!/usr/bin/env bash
# memleak-run on inputs that could hang or escape (issue 14): a model, input or scenario that is /dev/zero, a FIFO, a
# folder or a link to a device is an input error (exit 2) within a second; a scenario over 4 MiB too; SIGINT and
# SIGTERM stop hashing a huge model and a model generator within a second (exit 130, nothing half-made in the cache);
# a run interrupted mid-cell resumes to a consistent db.
source "$(dirname "$0")/lib.sh"
need_sqlite
ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }
scn() { # model-line [extra]
  printf 'name: hostile\nengine: ref\n%s\npipeline: [compile_model, create_request, infer, release_request, release_compiled]\niterations: 3\n%s' "$1" "${2:-}"
}
mkfifo "$work/fifo"
mkdir "$work/folder"
ln -s /dev/zero "$work/zlink"
for m in /dev/zero "$work/fifo" "$work/folder" "$work/zlink"; do
  scn "model: $m" > "$work/m.yaml"
  t0=$(ms)
  set +e
  timeout 10 "$bin/memleak-run" --db "$work/x.db" --quiet "$work/m.yaml" > "$work/out.txt" 2>&1
  code=$?
  set -e
  el=$(( $(ms) - t0 ))
  check "model $m: exit 2" eq "$code" 2
  check "model $m: promptly ($el ms)" test "$el" -lt "$prompt_ms"
  check "model $m: says what it is" grep -qE "m.yaml:3:8: model .* is a (character device|FIFO|folder), not a regular file" "$work/out.txt"
done
scn "model: {generate: mlp, mlp_hidden: 16, inputs: [$work/fifo]}" > "$work/i.yaml"
set +e
timeout 10 "$bin/memleak-run" --db "$work/x.db" --quiet "$work/i.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "an input that is a FIFO: exit 2" eq "$code" 2
check "an input that is a FIFO: named with its place" grep -q "i.yaml:3:.*input file .*fifo is a FIFO, not a regular file" "$work/out.txt"
for sc in /dev/zero "$work/fifo" "$work/folder"; do
  set +e
  timeout 10 "$bin/memleak-run" --db "$work/x.db" --quiet "$sc" > "$work/out.txt" 2>&1
  code=$?
  set -e
  check "scenario $sc: exit 2" eq "$code" 2
  check "scenario $sc: not a regular file" grep -q "not a regular file" "$work/out.txt"
done
{ scn "model: m.onnx"; head -c $((5 << 20)) /dev/zero | tr '\0' '#'; echo; } > "$work/big.yaml"
set +e
"$bin/memleak-run" --db "$work/x.db" --quiet "$work/big.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a 5 MiB scenario: exit 2" eq "$code" 2
check "a 5 MiB scenario: says why" grep -q "larger than 4 MiB; not a scenario file" "$work/out.txt"

# Signals in planning: hashing a model whose external data is 1000 MiB (sparse; hashed whole below 1 GiB, about 2 s
# here), then a model generator. A 20 GiB sparse file given as the model is no ONNX model: refused at once.
truncate -s 20G "$work/huge.onnx"
scn "model: $work/huge.onnx" > "$work/h.yaml"
set +e
timeout 10 "$bin/memleak-run" --db "$work/x.db" --quiet "$work/h.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a 20 GiB file of zeros as the model: exit 2" eq "$code" 2
check "a 20 GiB file of zeros as the model: not ONNX" grep -q "is not a well-formed ONNX model: model @ byte 0" "$work/out.txt"
mkdir -p "$work/big"
"$bin/refengine" gen mlp --mlp-hidden 16 --external-data --out "$work/big/m.onnx" > /dev/null
truncate -s 1000M "$work/big/m.onnx.data"
scn "model: $work/big/m.onnx" > "$work/h.yaml"
for sig in INT TERM; do
  t0=$(ms)
  set +e
  timeout --preserve-status -s "$sig" 0.3 "$bin/memleak-run" --db "$work/x.db" --quiet "$work/h.yaml" > "$work/out.txt" 2>&1
  code=$?
  set -e
  el=$(( $(ms) - t0 ))
  check "SIG$sig while hashing: exit 130" eq "$code" 130
  check "SIG$sig while hashing: stopped promptly ($el ms)" test "$el" -lt "$prompt_ms"
  check "SIG$sig while hashing: says so" grep -q "interrupted while hashing the model" "$work/out.txt"
done
# A model that takes seconds to write (577 MiB), so the signal lands while the generator runs on any machine we have:
# resnet50 (98 MiB) was written in half a second here, before a signal at one second.
scn "model: {generate: transformer, layers: 12, hidden: 1024}" > "$work/g.yaml"
set +e
XDG_CACHE_HOME="$work/gcache" timeout --preserve-status -s INT 1 "$bin/memleak-run" --db "$work/x.db" --quiet "$work/g.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "SIGINT while generating a model: exit 130" eq "$code" 130
check "SIGINT while generating a model: says the generator was stopped" grep -q "interrupted while .*refengine ran" "$work/out.txt"
check "SIGINT while generating a model: no half model in the cache" eq "$(find "$work/gcache" -name '*.onnx' | wc -l)" 0
check "no generator left running" eq "$(pgrep -f "$work/gcache" | wc -l)" 0

# A run stopped mid-cell by SIGTERM resumes to every cell once and a sound db. Cells of 3 s each, by the clock, so the
# signal at 1 s lands in the first on any machine (4000 iterations ended here 0.8 s after a signal at 2 s would have).
db="$work/r.db"
scn "model: {generate: mlp, mlp_hidden: 16}" "matrix: {threads: [1, 2]}
" | sed 's/^iterations: 3$/duration: 3s/' > "$work/r.yaml"
set +e
timeout --preserve-status -s TERM 1 "$bin/memleak-run" --db "$db" --quiet "$work/r.yaml" > "$work/out.txt" 2>&1
code=$?
"$bin/memleak-run" --db "$db" --quiet --resume 1 > "$work/res.txt" 2>&1
code2=$?
set -e
check "SIGTERM mid-run: exit 130" eq "$code" 130
check "--resume finishes it" eq "$code2" 0
check "every cell once, passed" eq "$(q "SELECT group_concat(status) FROM cells")" "pass,pass"
check "the db is sound" eq "$(q "PRAGMA integrity_check")" ok
finish

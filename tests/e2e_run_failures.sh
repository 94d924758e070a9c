#!/usr/bin/env bash
# memleak-run end to end when workers fail: a planted crash keeps the samples taken before it, a hang is killed at
# timeout_s, a worker out of memory under memory_limit_mb is "oom", and the run goes on with the next cell.
source "$(dirname "$0")/lib.sh"
need_sqlite
db="$work/f.db"
cat > "$work/fail.yaml" <<'YAML'
name: e2e-failures
engine: ref
model: {generate: mlp, mlp_hidden: 32}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 30
warmup: 2
timeout_s: 20
memory_limit_mb: 512
matrix:
  fault:
    - {name: crash, inject_crash_at: 10}
    - {name: oom, inject_leak_bytes: 64M}
    - {name: none}
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/fail.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "findings exit 1" eq "$code" 1
check "crash cell is crashed" eq "$(q "SELECT status FROM cells WHERE idx=0")" crashed
check "crash signal is SIGABRT" eq "$(q "SELECT signal FROM cells WHERE idx=0")" 6
check "the 9 infers before the crash are stored" eq "$(q "SELECT count(*) FROM samples s JOIN cells c ON c.id=s.cell_id WHERE c.idx=0 AND step='infer'")" 9
check "the crash shows in the table" grep -q "crashed(SIGABRT)" "$work/out.txt"
check "leaking past memory_limit_mb is oom" eq "$(q "SELECT status FROM cells WHERE idx=1")" oom
check "the run went on: the clean cell passed" eq "$(q "SELECT status FROM cells WHERE idx=2")" pass
check "the run is done" eq "$(q "SELECT status FROM runs")" done

# A worker that never finishes is killed at timeout_s; what it sent before is kept.
db="$work/t.db"
cat > "$work/hang.yaml" <<'YAML'
name: e2e-timeout
engine: ref
model: {generate: mlp, mlp_hidden: 32}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 100000000
warmup: 0
timeout_s: 2
YAML
start=$(date +%s)
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/hang.yaml" > /dev/null 2>&1
code=$?
set -e
check "timeout exits 1" eq "$code" 1
check "timeout is recorded" eq "$(q "SELECT status FROM cells")" timeout
check "samples before the timeout are kept" test "$(q "SELECT count(*) FROM samples")" -gt 10
check "killed within a few seconds" test $(( $(date +%s) - start )) -lt 15

# Input errors: exit 2 and nothing runs.
db="$work/bad.db"
sed 's/name: none}/name: none, no_such_option: 1}/' "$work/fail.yaml" > "$work/badopt.yaml"
set +e
"$bin/memleak-run" --db "$db" "$work/badopt.yaml" > "$work/err.txt" 2>&1
code=$?
set -e
check "unknown engine option exits 2" eq "$code" 2
check "the message lists accepted options" grep -q "accepted: mmap" "$work/err.txt"
check "the message names the line" grep -q "badopt.yaml:13:" "$work/err.txt"
check "nothing ran" test ! -e "$db"
sed 's/engine: ref/engine: nosuch/' "$work/fail.yaml" > "$work/noengine.yaml"
set +e
"$bin/memleak-run" --db "$db" "$work/noengine.yaml" > "$work/err.txt" 2>&1
code=$?
set -e
check "unknown engine exits 2" eq "$code" 2
check "the message names the plugin" grep -q "engine_nosuch.so" "$work/err.txt"
finish

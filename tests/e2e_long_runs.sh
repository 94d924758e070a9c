#!/usr/bin/env bash
# memleak-run end to end on long and silent runs (issue 14): duration: and --duration measure by time; a worker that
# stops sending samples is 'hung' after stall_s and the run goes on; a long cell's store keeps a bounded resolution
# (head and tail whole) while its verdict, computed as samples arrive, stays right for a leak and for a clean cell.
source "$(dirname "$0")/lib.sh"
need_sqlite

base() { # name, then extra lines
  printf 'name: %s\nengine: ref\nmodel: {generate: mlp, mlp_hidden: 16}\n' "$1"
  printf 'setup: [load_engine, read_model, compile_model, create_request]\n'
  printf 'pipeline: [infer]\nteardown: [release_request, release_compiled, release_model, unload_engine]\n'
  printf 'warmup: 5\ntimeout_s: 60\n'
}

# duration: measures by time, and --duration overrides a scenario's count.
db="$work/d.db"
{ base e2e-duration; echo "duration: 2s"; } > "$work/d.yaml"
start=$(date +%s.%N)
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/d.yaml" > "$work/d.txt" 2>&1
code=$?
set -e
el=$(python3 -c "import time; print(int(time.time() - $start))")
check "duration: 2s passes" eq "$code" 0
check "duration: 2s took 2 to 30 s ($el)" test "$el" -ge 2 -a "$el" -le 30
check "duration: many iterations measured" test "$(q "SELECT count(*) FROM samples WHERE phase='measure' AND step='iteration'")" -gt 20
db="$work/d2.db"
{ base e2e-duration-flag; echo "iterations: 1000000000"; } > "$work/d2.yaml"
set +e
timeout 60 "$bin/memleak-run" --db "$db" --quiet --duration 1s "$work/d2.yaml" > "$work/d2.txt" 2>&1
code=$?
set -e
check "--duration 1s overrides iterations: 1e9" eq "$code" 0
check "--duration: the cell passed" eq "$(q "SELECT status FROM cells")" pass

# iterations and duration exclude each other; a bad length is an input error with its place.
{ base e2e-both; echo "iterations: 10"; echo "duration: 1h"; } > "$work/both.yaml"
set +e
"$bin/memleak-run" --db "$work/x.db" --quiet "$work/both.yaml" > "$work/both.txt" 2>&1
code=$?
set -e
check "iterations and duration: exit 2" eq "$code" 2
check "iterations and duration: file:line:col" grep -q "both.yaml:10:11: duration: a scenario gives iterations or duration" "$work/both.txt"
{ base e2e-bad; echo "duration: 8x"; } > "$work/bad.yaml"
set +e
"$bin/memleak-run" --db "$work/x.db" --quiet "$work/bad.yaml" > "$work/bad.txt" 2>&1
code=$?
"$bin/memleak-run" --db "$work/x.db" --quiet --duration 0 "$work/d.yaml" > /dev/null 2>&1
code2=$?
set -e
check "duration: 8x: exit 2" eq "$code" 2
check "duration: 8x: the message says what a length is" grep -q "bad.yaml:9:11: duration: expected a length of time" "$work/bad.txt"
check "--duration 0: exit 2" eq "$code2" 2

# A worker that stops (SIGSTOP) is 'hung' after stall_s, killed, and the next cell runs.
db="$work/h.db"
{ base e2e-hung; echo "duration: 3s"; echo "stall_s: 2"; echo "matrix: {threads: [1, 2]}"; } > "$work/h.yaml"
start=$(date +%s)
"$bin/memleak-run" --db "$db" --quiet "$work/h.yaml" > "$work/h.txt" 2>&1 &
pid=$!
# The worker, not a model generator or any other child that comes and goes: it is the one started with --worker.
stopped=""
for _ in $(seq 1 300); do
  worker=$(pgrep -P "$pid" -f -- "--worker" | head -1 || true)
  if [ -n "$worker" ]; then
    sleep 0.5
    kill -STOP "$worker" 2>/dev/null && stopped=$worker && break
  fi
  sleep 0.1
done
check "a worker was found and stopped" test -n "$stopped"
set +e
wait "$pid"
code=$?
set -e
el=$(( $(date +%s) - start ))
check "a stopped worker is a finding: exit 1" eq "$code" 1
check "the stopped cell is hung" eq "$(q "SELECT status FROM cells WHERE idx=0")" hung
check "hung says how long it was silent" grep -q "hung: no sample for [0-9]* s (stall_s)" <(q "SELECT detail FROM cells WHERE idx=0")
check "the run went on: the next cell passed" eq "$(q "SELECT status FROM cells WHERE idx=1")" pass
check "hung found well before timeout_s ($el s)" test "$el" -le 40

# A long cell: the store keeps its first and last 1000 iterations whole and a thinned middle; the verdicts, computed
# as the samples arrive, still find a 16 B/iter leak and pass the clean cell.
db="$work/l.db"
{ base e2e-long; echo "iterations: 12000"; echo "matrix: {leak: [{name: none}, {name: leak16, inject_leak_bytes: 16}]}"; } > "$work/l.yaml"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/l.yaml" > "$work/l.txt" 2>&1
code=$?
set -e
check "long: a leak is a finding" eq "$code" 1
check "long: the clean cell passes" eq "$(q "SELECT status FROM cells WHERE idx=0")" pass
check "long: 16 B/iter is a leak" eq "$(q "SELECT status FROM cells WHERE idx=1")" leak
check "long: its slope is 16 B/iter as malloc rounds it (24)" eq "$(q "SELECT slope_per_iter BETWEEN 15 AND 33 FROM cells WHERE idx=1")" 1
check "long: both cells say how they were kept" eq "$(q "SELECT count(*) FROM sample_resolution WHERE head_iters=1000 AND iterations=12005 AND tail_from=11005")" 2
check "long: the head is whole" eq "$(q "SELECT count(DISTINCT iteration) FROM samples s JOIN cells c ON c.id=s.cell_id WHERE c.idx=1 AND iteration < 1000")" 1000
check "long: the tail is whole" eq "$(q "SELECT count(DISTINCT iteration) FROM samples s JOIN cells c ON c.id=s.cell_id WHERE c.idx=1 AND iteration >= 11005")" 1000
kept=$(q "SELECT count(DISTINCT iteration) FROM samples s JOIN cells c ON c.id=s.cell_id WHERE c.idx=1 AND iteration >= 1000 AND iteration < 11005")
check "long: the middle is thinned ($kept of 10005 kept)" test "$kept" -ge 1000 -a "$kept" -le 2000
check "long: teardown samples kept" eq "$(q "SELECT count(*) FROM samples s JOIN cells c ON c.id=s.cell_id WHERE c.idx=1 AND phase='teardown'")" 4
check "long: step_stats count every measured iteration" eq "$(q "SELECT n FROM step_stats t JOIN cells c ON c.id=t.cell_id WHERE c.idx=1 AND step='infer'")" 12000
check "long: integrity" eq "$(q "PRAGMA integrity_check")" ok
"$bin/memleak-run" merge --quiet "$work/merged.db" "$db" > /dev/null
db="$work/merged.db"
check "long: merge carries how cells were kept" eq "$(q "SELECT count(*) FROM sample_resolution")" 2
finish

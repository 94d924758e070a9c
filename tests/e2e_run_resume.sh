#!/usr/bin/env bash
# memleak-run killed with SIGKILL mid-run: the db stays intact with every finished cell, and --resume runs only
# the cells that did not finish, so each cell is there exactly once. Also two runs sharing one db both complete.
source "$(dirname "$0")/lib.sh"
need_sqlite
db="$work/r.db"
cat > "$work/resume.yaml" <<'YAML'
name: e2e-resume
engine: ref
model: {generate: mlp, mlp_hidden: 512}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 60
warmup: 2
matrix:
  threads: [1, 2]
  mmap: [on, off]
  arena: [on, off]
YAML
"$bin/memleak-run" --db "$work/warm.db" --dry-run "$work/resume.yaml" > /dev/null # generate the model first
"$bin/memleak-run" --db "$db" --quiet "$work/resume.yaml" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
  done_cells=$(q "SELECT count(*) FROM cells WHERE status NOT IN ('pending','running')" 2>/dev/null || echo 0)
  [ "${done_cells:-0}" -ge 2 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "the db is intact after SIGKILL" eq "$(q "PRAGMA integrity_check")" ok
finished=$(q "SELECT count(*) FROM cells WHERE status NOT IN ('pending','running')")
check "some cells finished before the kill" test "$finished" -ge 2
check "not all cells finished before the kill" test "$finished" -lt 8
check "finished cells have all their samples" eq "$(q "SELECT count(*) FROM cells c WHERE status NOT IN ('pending','running') AND (SELECT count(*) FROM samples WHERE cell_id=c.id AND step='iteration') != 62")" 0
before=$(q "SELECT group_concat(id || status, ',') FROM (SELECT id, status FROM cells WHERE status NOT IN ('pending','running') ORDER BY id)")
run=$(q "SELECT id FROM runs")
set +e
"$bin/memleak-run" --db "$db" --quiet --resume "$run" > "$work/resume.txt" 2>&1
code=$?
set -e
check "resume exits 0 (all pass)" eq "$code" 0
check "every cell is there exactly once" eq "$(q "SELECT count(*) || '/' || count(DISTINCT idx) FROM cells")" "8/8"
check "every cell finished" eq "$(q "SELECT count(*) FROM cells WHERE status='pass'")" 8
check "cells finished before were not run again" eq "$(q "SELECT group_concat(id || status, ',') FROM (SELECT id, status FROM cells WHERE id IN (SELECT id FROM cells ORDER BY id LIMIT $finished) ORDER BY id)")" "$before"
check "no cell has duplicate samples" eq "$(q "SELECT count(*) FROM (SELECT cell_id FROM samples WHERE step='iteration' GROUP BY cell_id HAVING count(*) != 62)")" 0
check "the run is done" eq "$(q "SELECT status FROM runs")" done
check "still one run" eq "$(q "SELECT count(*) FROM runs")" 1

# Two runs writing one db at once.
db="$work/shared.db"
sed 's/mlp_hidden: 512/mlp_hidden: 64/' "$work/resume.yaml" > "$work/small.yaml"
# Both create the db at the same moment: the switch to WAL is the contended part.
"$bin/memleak-run" --db "$db" --quiet "$work/small.yaml" > "$work/c1.txt" 2>&1 & p1=$!
"$bin/memleak-run" --db "$db" --quiet "$work/small.yaml" > "$work/c2.txt" 2>&1 & p2=$!
set +e
wait "$p1"; c1=$?
wait "$p2"; c2=$?
set -e
[ "$c1" = 0 ] || sed 's/^/  run 1: /' "$work/c1.txt" | grep -v "^  run 1:  " >&2
[ "$c2" = 0 ] || sed 's/^/  run 2: /' "$work/c2.txt" | grep -v "^  run 2:  " >&2
check "first concurrent run completes" eq "$c1" 0
check "second concurrent run completes" eq "$c2" 0
check "both runs are done" eq "$(q "SELECT count(*) FROM runs WHERE status='done'")" 2
check "no rows lost" eq "$(q "SELECT count(*) FROM samples WHERE step='iteration'")" $((2 * 8 * 62))
finish

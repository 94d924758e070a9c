#!/usr/bin/env bash
# memleak-run merge end to end: two shards of one run (same --run-key) into two dbs merged into one run with every
# cell once; merging again adds nothing; the other order gives the same rows; another run joins as a second run;
# inputs stay byte for byte; a file that is not a memleak db exits 2 naming it and leaves the output as it was.
source "$(dirname "$0")/lib.sh"
need_sqlite
cat > "$work/merge.yaml" <<'YAML'
name: e2e-merge
engine: ref
model: {generate: mlp, mlp_hidden: 64}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 8
warmup: 2
matrix:
  threads: [1, 2]
  allocator: [glibc, jemalloc]
  mmap: [on, off]
YAML
run() { "$bin/memleak-run" --quiet --db "$@" > /dev/null 2>&1; }
merge() { "$bin/memleak-run" merge --quiet "$@"; }
sq() { sqlite3 -batch -noheader "$1" "$2"; }
# Every table's rows by natural key, ids left out: equal output means equal content.
canon() {
  sq "$1" "
    SELECT uuid, scenario_name, scenario_text, commit_sha, branch, host, argv, started_at, finished_at, status
      FROM runs ORDER BY uuid;
    SELECT r.uuid, c.idx, c.engine, c.model_hash, c.axes, c.config_key, c.allocator, c.allocator_active, c.heap_shim,
           c.status, c.metric, c.slope_per_iter, c.detail, c.started_at, c.finished_at
      FROM cells c JOIN runs r ON r.id = c.run_id ORDER BY 1, 2;
    SELECT r.uuid, c.idx, s.seq, s.phase, s.iteration, s.step, s.wall_ns, s.vm_rss_kib, s.vm_hwm_kib, s.heap_live_bytes
      FROM samples s JOIN cells c ON c.id = s.cell_id JOIN runs r ON r.id = c.run_id ORDER BY 1, 2, 3;
    SELECT r.uuid, c.idx, m.seq, m.name, m.value
      FROM metrics m JOIN cells c ON c.id = m.cell_id JOIN runs r ON r.id = c.run_id ORDER BY 1, 2, 3, 4;
    SELECT r.uuid, c.idx, t.step, t.n, t.peak_kib, t.rss_growth_per_iter, t.wall_ms_median, t.final_rss_kib
      FROM step_stats t JOIN cells c ON c.id = t.cell_id JOIN runs r ON r.id = c.run_id ORDER BY 1, 2, 3;
    SELECT run_uuid, branch, pinned_at FROM baselines ORDER BY 1, 2, 3;
    SELECT r.uuid, k.created_at, k.baseline FROM comparisons k JOIN runs r ON r.id = k.run_id ORDER BY 1, 2, 3;
    SELECT config_key, step, metric, run_uuid, before, after FROM change_points ORDER BY 1, 2, 3, 4;"
}
counts() {
  sq "$1" "SELECT (SELECT count(*) FROM runs) || ' ' || (SELECT count(*) FROM cells) || ' ' ||
           (SELECT count(*) FROM samples) || ' ' || (SELECT count(*) FROM metrics) || ' ' ||
           (SELECT count(*) FROM step_stats) || ' ' || (SELECT count(*) FROM comparisons)"
}

run "$work/s0.db" --run-key "e2e-merge-$$" --shard 0/2 "$work/merge.yaml"
run "$work/s1.db" --run-key "e2e-merge-$$" --shard 1/2 "$work/merge.yaml"
check "shard 0 ran half the cells" eq "$(sq "$work/s0.db" "SELECT group_concat(idx) FROM cells")" "0,2,4,6"
check "shard 1 ran the other half" eq "$(sq "$work/s1.db" "SELECT group_concat(idx) FROM cells")" "1,3,5,7"
# Tool findings hang off cells like samples: plant a leak record with its stack in shard 1 to see them travel.
sq "$work/s1.db" "INSERT INTO leaks(cell_id, seq, tool, kind, bytes, total_bytes, blocks, in_engine)
                  SELECT min(id), 0, 'memcheck', 'definitely', 4096, 4096, 1, 1 FROM cells;
                  INSERT INTO tool_frames(cell_id, source, seq, depth, fn, file, line, obj)
                  SELECT min(id), 'leak', 0, 0, 'leak', 'inject.c', 38, 'engine_ref.so' FROM cells"
sums_before=$(md5sum "$work/s0.db" "$work/s1.db" | cut -d' ' -f1)

out="$work/out.db"
check "merge exits 0" merge "$out" "$work/s0.db" "$work/s1.db"
db=$out
check "one run" eq "$(q "SELECT count(*) || ' ' || uuid FROM runs")" "1 e2e-merge-$$"
check "every cell exactly once" eq "$(q "SELECT count(*) || '/' || count(DISTINCT idx) || ' ' || min(idx) || '-' || max(idx) FROM cells")" "8/8 0-7"
check "every cell passed" eq "$(q "SELECT count(*) FROM cells WHERE status = 'pass'")" 8
check "the run is done" eq "$(q "SELECT status FROM runs")" done
check "tool findings came along with their cell" eq "$(q "SELECT c.idx || ':' || l.bytes || ':' || f.fn FROM leaks l
    JOIN cells c ON c.id = l.cell_id JOIN tool_frames f ON f.cell_id = l.cell_id AND f.seq = l.seq")" "1:4096:leak"
n0=$(sq "$work/s0.db" "SELECT count(*) FROM samples")
n1=$(sq "$work/s1.db" "SELECT count(*) FROM samples")
check "shards stored samples" test "$n0" -gt 0 -a "$n1" -gt 0
check "samples are the sum of the shards'" eq "$(q "SELECT count(*) FROM samples")" $((n0 + n1))
check "step stats are the sum of the shards'" eq "$(q "SELECT count(*) FROM step_stats")" \
  $(( $(sq "$work/s0.db" "SELECT count(*) FROM step_stats") + $(sq "$work/s1.db" "SELECT count(*) FROM step_stats") ))
check "samples point at their own cell" eq "$(q "SELECT count(*) FROM samples s JOIN cells c ON c.id = s.cell_id")" $((n0 + n1))
check "each cell kept its samples" eq "$(q "SELECT count(*) FROM (SELECT cell_id FROM samples WHERE step = 'iteration' GROUP BY cell_id HAVING count(*) = 10)")" 8
check "started at the earliest shard's start" eq "$(q "SELECT started_at FROM runs")" \
  "$(printf '%s\n' "$(sq "$work/s0.db" "SELECT started_at FROM runs")" "$(sq "$work/s1.db" "SELECT started_at FROM runs")" | sort | head -1)"
check "inputs are untouched" eq "$(md5sum "$work/s0.db" "$work/s1.db" | cut -d' ' -f1)" "$sums_before"
check "no files left beside the inputs" eq "$(ls "$work" | grep -c -- '-wal\|-shm' || true)" 0
check "the merged db is intact" eq "$(q "PRAGMA integrity_check")" ok
check "the merged db's references hold" eq "$(q "PRAGMA foreign_key_check")" ""

before_counts=$(counts "$out")
before_canon=$(canon "$out")
check "merging again exits 0" merge "$out" "$work/s1.db" "$work/s0.db"
check "merging again changes no row count" eq "$(counts "$out")" "$before_counts"
check "merging again changes no row" eq "$(canon "$out")" "$before_canon"

check "merge in the other order" merge "$work/rev.db" "$work/s1.db" "$work/s0.db"
check "the other order gives identical content" eq "$(canon "$work/rev.db")" "$before_canon"

check "one shard alone merges" merge "$work/half.db" "$work/s0.db"
check "one shard alone: the run is not done" eq "$(sq "$work/half.db" "SELECT status || ' ' || (SELECT count(*) FROM cells) FROM runs")" "running 4"
check "the second shard completes it" merge "$work/half.db" "$work/s1.db"
check "merged in two steps: identical content" eq "$(canon "$work/half.db")" "$before_canon"

# A different run (its own random uuid) joins as a second run.
run "$work/other.db" "$work/merge.yaml"
check "a third db merges" merge "$out" "$work/other.db"
check "a different run is a second run" eq "$(q "SELECT count(*) FROM runs")" 2
check "its cells are its own" eq "$(q "SELECT count(*) FROM cells GROUP BY run_id")" "8
8"
check "still no duplicated cell" eq "$(q "SELECT count(*) FROM (SELECT run_id, idx FROM cells GROUP BY 1, 2 HAVING count(*) > 1)")" 0
check "the other run's samples came along" eq "$(q "SELECT count(*) FROM samples")" \
  $((n0 + n1 + $(sq "$work/other.db" "SELECT count(*) FROM samples")))

# Inputs that are not memleak dbs: exit 2, named, and the output left as it was.
after=$(canon "$out")
echo "just text, no database here" > "$work/notes.db"
set +e
merge "$out" "$work/s0.db" "$work/notes.db" 2> "$work/err.txt"
code=$?
set -e
check "a text file: exit 2" eq "$code" 2
check "a text file: named" grep -q "notes.db.*not a memleak db" "$work/err.txt"
sq "$work/plain.db" "CREATE TABLE t(x)"
set +e
merge "$out" "$work/plain.db" 2> "$work/err2.txt"
code=$?
set -e
check "a db without schema_version: exit 2" eq "$code" 2
check "a db without schema_version: named" grep -q "plain.db.*no schema_version" "$work/err2.txt"
set +e
merge "$work/never.db" "$work/missing.db" 2> "$work/err3.txt"
code=$?
set -e
check "a missing input: exit 2" eq "$code" 2
check "a missing input: named" grep -q "missing.db" "$work/err3.txt"
check "a bad input creates no output" test ! -e "$work/never.db"
check "the output is as it was" eq "$(canon "$out")" "$after"
set +e
merge "$out" > /dev/null 2>&1
code=$?
set -e
check "no input: usage error" eq "$code" 2
finish

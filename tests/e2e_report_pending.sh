#!/usr/bin/env bash
# report on a run whose cells mostly never ran (a 100,000-cell run interrupted early, issue 25): cells without samples
# get no data file, no plot and no per-cell query; the finished cell's files are there, every cell is listed.
source "$(dirname "$0")/lib.sh"
need_sqlite
db="$work/p.db"
cat > "$work/p.yaml" <<'YAML'
name: e2e-pending
engine: ref
model: {generate: mlp, mlp_hidden: 16}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 20
YAML
"$bin/memleak-run" --db "$db" --quiet "$work/p.yaml" > /dev/null
# 5,000 more cells of the run that never started, and one whose attempt was killed (running, a few samples).
q "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
   INSERT INTO cells(run_id, idx, engine, model, model_hash, axes, config_key, allocator, status)
   SELECT 1, i, engine, model, model_hash, json_object('threads', i), config_key || ';t=' || i, allocator,
          CASE WHEN i = 5000 THEN 'running' ELSE 'pending' END FROM n, (SELECT * FROM cells WHERE idx = 0);
   INSERT INTO samples(cell_id, seq, phase, iteration, step, vm_rss_kib)
   SELECT (SELECT id FROM cells WHERE idx = 5000), seq, phase, iteration, step, vm_rss_kib FROM samples
   WHERE cell_id = (SELECT id FROM cells WHERE idx = 0) AND seq < 30;
   UPDATE runs SET status = 'interrupted'"
"$bin/memleak-run" report --db "$db" --out "$work/rep" --no-plots > "$work/out.txt"
check "the finished cell has its memory data" test -s "$work/rep/data/memory-cell-0.tsv"
check "no data file for a cell that did not finish" eq "$(find "$work/rep/data" -name '*-cell-*' ! -name '*-cell-0.tsv' | wc -l)" 0
check "at most a handful of data files in all" test "$(find "$work/rep/data" -type f | wc -l)" -lt 20
check "every cell is listed in index.html" test "$(grep -c 'pending' "$work/rep/index.html")" -ge 4999
check "junit lists every cell" test "$(grep -c '<testcase' "$work/rep/junit.xml")" -eq 5001
finish

#!/usr/bin/env bash
# memleak-run end to end: a planted 4 KiB/iteration leak is flagged, a clean pipeline passes and planted retention
# plateaus, under each of the four allocators, with exact heap accounting and on RSS alone.
source "$(dirname "$0")/lib.sh"
need_sqlite
db="$work/m.db"
cat > "$work/verdicts.yaml" <<'YAML'
name: e2e-verdicts
engine: ref
model: {generate: mlp, mlp_hidden: 64}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 60
warmup: 5
thresholds: {leak_bytes_per_iter: 1024}
matrix:
  allocator: [glibc, jemalloc, tcmalloc, mimalloc]
  fault:
    - {name: none}
    - {name: leak, inject_leak_bytes: 4096}
    - {name: retention, inject_retention_bytes: 65536, inject_retention_cap: 1M}
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/verdicts.yaml" > "$work/out.txt"
code=$?
set -e
check "a run with leaks exits 1" eq "$code" 1
for a in glibc jemalloc tcmalloc mimalloc; do
  for f in none:pass leak:leak retention:plateau; do
    fault=${f%%:*} want=${f##*:}
    got=$(q "SELECT status FROM cells WHERE axes = '{\"allocator\":\"$a\",\"fault\":\"$fault\"}'")
    check "heap: $a/$fault is $want" eq "$got" "$want"
  done
  check "$a is the active allocator" eq "$(q "SELECT count(*) FROM cells WHERE allocator='$a' AND allocator_active='$a'")" 3
done
check "heap accounting was active in every cell" eq "$(q "SELECT count(*) FROM cells WHERE heap_shim=1 AND metric='heap_live_bytes'")" 12
check "the infer step carries the leak" eq "$(q "SELECT count(*) FROM step_stats JOIN cells ON cells.id=cell_id WHERE axes LIKE '%\"leak\"%' AND step='infer' AND heap_delta_median >= 4096")" 4
check "every measured iteration was stored" eq "$(q "SELECT count(*) FROM samples WHERE step='iteration' AND phase='measure'")" $((12 * 60))
check "the table names the verdicts" grep -q "leak (+" "$work/out.txt"
check "the engine's own figures are stored per step" test "$(q "SELECT count(*) FROM metrics WHERE name = 'ref_live_bytes'")" -gt 1000

# RSS alone: a bigger leak, since RSS moves in pages; clean cells may plateau (allocator retention), never leak.
sed -e 's/inject_leak_bytes: 4096/inject_leak_bytes: 65536/' -e 's/name: e2e-verdicts/name: e2e-verdicts-rss/' \
  "$work/verdicts.yaml" > "$work/rss.yaml"
db="$work/rss.db"
set +e
"$bin/memleak-run" --db "$db" --quiet --no-heap "$work/rss.yaml" > /dev/null
set -e
check "rss: every leak cell is a leak" eq "$(q "SELECT count(*) FROM cells WHERE axes LIKE '%\"leak\"%' AND status='leak'")" 4
check "rss: no clean or retention cell is a leak" eq "$(q "SELECT count(*) FROM cells WHERE axes NOT LIKE '%\"leak\"%' AND status='leak'")" 0
# Without the shim the heap is the allocator's own count where it keeps one (glibc, jemalloc less its thread caches,
# tcmalloc); mimalloc 2.0.9 keeps none, so its cells rest on RssAnon and say that the heap is not judged.
check "rss: judged on the allocator's own heap count" eq "$(q "SELECT count(*) FROM cells WHERE metric='allocator_heap_bytes' AND allocator IN ('glibc', 'jemalloc', 'tcmalloc')")" 9
check "rss: mimalloc judged on RssAnon" eq "$(q "SELECT count(*) FROM cells WHERE metric='rss_anon_bytes' AND allocator = 'mimalloc'")" 3
check "rss: mimalloc cells say their heap is not judged" eq "$(q "SELECT count(*) FROM cells WHERE allocator = 'mimalloc' AND detail LIKE '%live heap not judged%'")" 3
finish

#!/usr/bin/env bash
# e2e_auto.sh: iterations: auto (issue 23). The species plugin's leaks and clean behaviours under glibc and mimalloc
# get the same verdicts as with a fixed 100 iterations, clean cells stop at half of that or earlier, every cell says
# how many iterations it used and why it stopped, and the sites of its leaks are still named. A leak that cannot be
# held over enough decision points before max is inconclusive, naming its series, never a guess.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }
leaks="tiny cxx_new thread mmap_anon fd"
clean="none bounded_cache churn fd_pool churn_pool"
scenario() { # name, iterations, species list, allocators
  cat <<YAML
name: $1
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine]
pipeline: [read_model, compile_model, create_request, infer, release_request, release_compiled, release_model]
teardown: [unload_engine]
iterations: $2
warmup: 10
engine_options: {inner: ref}
matrix:
  species: [$(echo $3 | sed 's/ /, /g')]
  allocator: [${4:-glibc, mimalloc}]
YAML
}
db="$work/fixed.db"
scenario auto-fixed 100 "$leaks $clean" > "$work/fixed.yaml"
"$bin/memleak-run" --db "$db" --quiet "$work/fixed.yaml" > /dev/null 2>&1 || true
db="$work/auto.db"
scenario auto-auto auto "$leaks $clean" > "$work/auto.yaml"
"$bin/memleak-run" --db "$db" "$work/auto.yaml" > "$work/auto.txt" 2>&1 || true
check "every cell has a stop" eq "$(q "SELECT count(*) FROM cells c JOIN cell_stops s ON s.cell_id = c.id")" 20
# Pass and plateau are the same finding (none): churn_pool's pool, filled by iteration 50, is a plateau at 100 and may
# pass at the longer run auto gives it (its early median is then the filled pool too).
check "the same findings as with 100 iterations" eq "$(q "ATTACH '$work/fixed.db' AS f; SELECT count(*) FROM cells a JOIN
  f.cells b ON a.axes = b.axes WHERE (a.status = 'leak') = (b.status = 'leak') AND a.status != 'inconclusive'")" 20
for s in $leaks; do
  check "auto: $s is a leak" eq "$(q "SELECT count(*) FROM cells WHERE status = 'leak' AND axes LIKE '%\"$s\"%'")" 2
done
median=$(q "SELECT s.iterations FROM cells c JOIN cell_stops s ON s.cell_id = c.id WHERE c.status IN ('pass', 'plateau')
            ORDER BY s.iterations" | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}')
check "clean cells stop at 50 iterations or fewer (median $median)" awk -v m="$median" 'BEGIN { exit !(m <= 50) }'
check "the measured samples are the iterations it used" eq "$(q "SELECT count(*) FROM cells c JOIN cell_stops s ON
  s.cell_id = c.id WHERE s.iterations = (SELECT count(*) FROM samples x WHERE x.cell_id = c.id AND x.phase = 'measure'
  AND x.step = 'iteration')")" 20
check "stopped by decision, or at its bound with the series named" eq "$(q "SELECT count(*) FROM cell_stops WHERE
  reason = 'decided' OR (reason = 'max' AND undecided IS NOT NULL)")" 20
check "a leak's site is still named" test "$(q "SELECT count(*) FROM growth_site_frames f JOIN cells c ON c.id = f.cell_id
  WHERE c.axes LIKE '%cxx_new%' AND f.seq = 0 AND f.fn = 'species_cxx_lose'")" -eq 2

# Too short a bound to hold a leak over three decision points: inconclusive, its series named, in the db and the table.
db="$work/short.db"
scenario auto-short "{min: 10, max: 15}" "tiny none" glibc > "$work/short.yaml"
"$bin/memleak-run" --db "$db" "$work/short.yaml" > "$work/short.txt" 2>&1 || true
check "short: the leak is inconclusive" eq "$(q "SELECT status FROM cells WHERE axes LIKE '%tiny%'")" inconclusive
check "short: ... naming the heap" eq "$(q "SELECT s.reason || ' ' || s.iterations || ' ' || s.undecided FROM cells c JOIN
  cell_stops s ON s.cell_id = c.id WHERE c.axes LIKE '%tiny%'")" "max 15 heap"
check "short: the clean cell still passes" eq "$(q "SELECT status FROM cells WHERE axes LIKE '%none%'")" pass
check "short: the table says why" grep -q "inconclusive: heap undecided at 15 iterations (max)" "$work/short.txt"
sed 's/{min: 10, max: 15}/{min: 20, max: 15}/' "$work/short.yaml" > "$work/bad.yaml"
code=0
"$bin/memleak-run" --db "$work/bad.db" "$work/bad.yaml" > "$work/bad.txt" 2>&1 || code=$?
check "bad bounds: exit 2" eq "$code" 2
check "bad bounds: named with file:line:col" grep -q "bad.yaml:[0-9]*:[0-9]*: iterations: min (20) is more than max (15)" \
  "$work/bad.txt"
finish

#!/usr/bin/env bash
# memleak-run --shard I/N: the shards of a matrix cover the unsharded run's cells exactly, with no overlap, a cell
# always lands in the same shard, shards given one --run-key join one run (in one db or after merge), and a bad
# I/N is a usage error before anything runs.
source "$(dirname "$0")/lib.sh"
need_sqlite
cat > "$work/shards.yaml" <<'YAML'
name: e2e-shards
engine: ref
model: {generate: mlp, mlp_hidden: 32}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 4
warmup: 1
matrix:
  threads: [1, 2, 3]
  allocator: [glibc, jemalloc]
YAML
run() { "$bin/memleak-run" --quiet --db "$@" > /dev/null 2>&1; }
sq() { sqlite3 -batch -noheader "$1" "$2"; }
cells() { sq "$1" "SELECT idx || ' ' || config_key FROM cells ORDER BY idx"; }

run "$work/all.db" "$work/shards.yaml"
all=$(cells "$work/all.db")
check "the unsharded run has 6 cells" eq "$(echo "$all" | wc -l)" 6

# 4 shards of 6 cells: uneven (2, 2, 1, 1), so an off-by-one in the split shows.
: > "$work/union.txt"
for i in 0 1 2 3; do
  run "$work/shard$i.db" --shard "$i/4" "$work/shards.yaml"
  cells "$work/shard$i.db" >> "$work/union.txt"
  check "shard $i/4 holds only its own cells" eq "$(sq "$work/shard$i.db" "SELECT count(*) FROM cells WHERE idx % 4 != $i")" 0
  check "shard $i/4 finished its cells" eq "$(sq "$work/shard$i.db" "SELECT count(*) FROM cells WHERE status NOT IN ('pass', 'plateau')")" 0
done
check "shard sizes are 2, 2, 1, 1" eq "$(for i in 0 1 2 3; do sq "$work/shard$i.db" "SELECT count(*) FROM cells"; done | tr '\n' ' ')" "2 2 1 1 "
check "the union of the shards is the unsharded run" eq "$(sort -n "$work/union.txt")" "$all"
check "no cell is in two shards" eq "$(cut -d' ' -f1 "$work/union.txt" | sort | uniq -d)" ""

# The same split every time: shard 2/4 again, and shard 1/2 over 3 tries.
run "$work/again.db" --shard 2/4 "$work/shards.yaml"
check "shard 2/4 again: the same cells" eq "$(cells "$work/again.db")" "$(cells "$work/shard2.db")"
for t in 1 2 3; do
  run "$work/half$t.db" --shard 1/2 "$work/shards.yaml"
done
check "shard 1/2 three times: the same cells" eq "$(cells "$work/half1.db")$(cells "$work/half3.db")" "$(cells "$work/half2.db")$(cells "$work/half2.db")"
check "shard 1/2 is the odd cells" eq "$(sq "$work/half1.db" "SELECT group_concat(idx) FROM cells")" "1,3,5"
run "$work/one.db" --shard 0/1 "$work/shards.yaml"
check "shard 0/1 is the whole matrix" eq "$(cells "$work/one.db")" "$all"

# Shards with one --run-key: one run, in a shared db or merged from their own dbs.
db="$work/shared.db"
run "$db" --run-key shared-key --shard 0/2 "$work/shards.yaml" &
p0=$!
run "$db" --run-key shared-key --shard 1/2 "$work/shards.yaml" &
p1=$!
check "shard 0/2 into a shared db exits 0" wait "$p0"
check "shard 1/2 into a shared db exits 0" wait "$p1"
check "shards sharing a key share one run" eq "$(q "SELECT count(*) || ' ' || uuid FROM runs")" "1 shared-key"
check "the shared run holds the whole matrix once" eq "$(cells "$db")" "$all"
shard_dbs=()
for i in 0 1 2; do
  run "$work/k$i.db" --run-key merged-key --shard "$i/3" "$work/shards.yaml"
  shard_dbs+=("$work/k$i.db")
done
check "three shard dbs merge" "$bin/memleak-run" merge --quiet "$work/merged.db" "${shard_dbs[@]}"
check "merged shards: the whole matrix once" eq "$(cells "$work/merged.db")" "$all"
check "merged shards: one done run" eq "$(sq "$work/merged.db" "SELECT count(*) || ' ' || status FROM runs")" "1 done"

# Bad shard specs are usage errors, before any run is stored.
for bad in 4/4 -1/2 1/0 x 2; do
  set +e
  "$bin/memleak-run" --db "$work/bad.db" --shard "$bad" "$work/shards.yaml" > /dev/null 2> "$work/err.txt"
  code=$?
  set -e
  check "--shard $bad: exit 2" eq "$code" 2
  check "--shard $bad: says why" grep -q -- "--shard" "$work/err.txt"
done
check "a bad --shard stores nothing" test ! -e "$work/bad.db"
finish

#!/usr/bin/env bash
# Every planted species (tests/species: leaks inside and outside malloc, tiny, still reachable, periodic, late, in a
# helper thread, C++ new, stuck threads; bounded caches, churn, retention, pools) is judged right under the four
# allocators, with the heap shim on and off, around the reference engine and (when fetched) ONNX Runtime.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }
leaks="mmap_anon map_file tiny reachable fd periodic late thread cxx_new thread_stuck"
clean="none bounded_cache churn retention fd_pool mmap_pool"
list() { echo "$*" | sed 's/ /, /g'; }
scenario() { # name, inner, species list, extra engine options
  cat <<YAML
name: $1
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine]
pipeline: [read_model, compile_model, create_request, infer, release_request, release_compiled, release_model]
teardown: [unload_engine]
iterations: 100
warmup: 10
engine_options: {inner: $2$4}
matrix:
  species: [$(list $3)]
  allocator: [glibc, jemalloc, tcmalloc, mimalloc]
YAML
}
status() { q "SELECT status FROM cells WHERE axes = '{\"species\":\"$1\",\"allocator\":\"$2\"}'"; }
allocs="glibc jemalloc tcmalloc mimalloc"

# Heap shim on: every species under every allocator.
db="$work/on.db"
scenario species-on ref "$leaks $clean" "" > "$work/on.yaml"
"$bin/memleak-run" --db "$db" --quiet "$work/on.yaml" > "$work/on.txt" 2>&1 || true
for a in $allocs; do
  for s in $leaks; do check "heap on, $a: $s is a leak" eq "$(status $s $a)" leak; done
  for s in $clean; do check "heap on, $a: $s is no leak" test "$(status $s $a)" != leak -a -n "$(status $s $a)"; done
  check "heap on, $a: the bounded cache plateaus" eq "$(status bounded_cache $a)" plateau
done
check "outside malloc: the mapped model file is named by VmSize" \
  test "$(q "SELECT count(*) FROM series_results r JOIN cells c ON c.id = r.cell_id WHERE c.axes LIKE '%map_file%' AND r.series = 'mapped' AND r.verdict = 'leak'")" -eq 4
check "outside malloc: descriptors leak on their own series, heap flat" \
  test "$(q "SELECT count(*) FROM cells WHERE axes LIKE '%\"fd\"%' AND metric = 'fds' AND detail LIKE '%live heap flat%'")" -eq 4
check "the final table says which signal leaks" grep -q "open file descriptors +1.00/iter (fds)" "$work/on.txt"
check "every judged series is stored" test "$(q "SELECT count(DISTINCT series) FROM series_results")" -ge 5

# 16 B per infer, default floors: flagged.
db="$work/tiny.db"
scenario species-16 ref "tiny" ", species_bytes: 16" > "$work/tiny.yaml"
"$bin/memleak-run" --db "$db" --quiet "$work/tiny.yaml" > /dev/null 2>&1 || true
for a in $allocs; do check "16 B/iter under $a is a leak" eq "$(status tiny $a)" leak; done

# Heap shim off: what lives outside malloc is seen by every allocator; malloc's own leaks through the allocator's
# count where it keeps one (glibc, jemalloc, tcmalloc), and elsewhere through resident memory, which shows a malloc leak only
# once the allocator's retained pages are used up (8 KiB/iter over 300 iterations); never a false leak.
db="$work/off.db"
scenario species-off ref "$leaks $clean" "" > "$work/off.yaml"
"$bin/memleak-run" --db "$db" --quiet --no-heap "$work/off.yaml" > /dev/null 2>&1 || true
for a in $allocs; do
  for s in mmap_anon map_file fd thread_stuck; do check "heap off, $a: $s is a leak" eq "$(status $s $a)" leak; done
  for s in $clean; do check "heap off, $a: $s is no leak" test "$(status $s $a)" != leak -a -n "$(status $s $a)"; done
done
for a in glibc jemalloc tcmalloc; do
  for s in $leaks; do check "heap off, $a (its own count): $s is a leak" eq "$(status $s $a)" leak; done
done
db="$work/off8k.db"
scenario species-off-8k ref "tiny thread cxx_new" ", species_bytes: 8192" | sed 's/^iterations: 100/iterations: 300/' \
  > "$work/off8k.yaml"
"$bin/memleak-run" --db "$db" --quiet --no-heap "$work/off8k.yaml" > /dev/null 2>&1 || true
for a in mimalloc; do
  for s in tiny thread cxx_new; do check "heap off, $a, 8 KiB/iter: $s is a leak" eq "$(status $s $a)" leak; done
done

# Around ONNX Runtime, when its plugin is built.
if [ -f "$MLK_BUILD_DIR/lib/engine_ort.so" ]; then
  db="$work/ort.db"
  scenario species-ort ort "tiny fd mmap_anon cxx_new none bounded_cache" "" > "$work/ort.yaml"
  "$bin/memleak-run" --db "$db" --quiet "$work/ort.yaml" > "$work/ort.txt" 2>&1 || true
  for a in $allocs; do
    for s in tiny fd mmap_anon cxx_new; do check "ORT, $a: $s is a leak" eq "$(status $s $a)" leak; done
    for s in none bounded_cache; do check "ORT, $a: $s is no leak" test "$(status $s $a)" != leak -a -n "$(status $s $a)"; done
  done
else
  echo "note: engine_ort.so not built (engines/ort/fetch.sh): the ORT part did not run"
fi
finish

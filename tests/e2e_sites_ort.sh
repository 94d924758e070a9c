#!/usr/bin/env bash
# e2e_sites_ort.sh: allocation sites inside ONNX Runtime from npm, built without frame pointers: with every allocation's
# stack taken (heap_sites: exact) and with the default sampling, under glibc and jemalloc, no cell may crash, every cell
# reports its sites, and stacks are taken through ORT's own frames. A leak planted around ORT (the species plugin) is
# still named. Skips (77) when ORT was not fetched.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_ort.so" ] || { echo "SKIP: engine_ort.so not built (engines/ort/fetch.sh)"; exit 77; }
scenario() { # name, heap_sites, engine, engine options
  cat <<YAML
name: $1
engine: $3
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine]
pipeline: [read_model, compile_model, create_request, infer, release_request, release_compiled, release_model]
teardown: [unload_engine]
iterations: 30
warmup: 5
heap_sites: $2
engine_options: {$4}
matrix:
  allocator: [glibc, jemalloc]
YAML
}
for mode in exact sample; do
  db="$work/ort-$mode.db"
  scenario "sites-ort-$mode" $mode ort "threads: 2" > "$work/ort-$mode.yaml"
  "$bin/memleak-run" --db "$db" "$work/ort-$mode.yaml" > "$work/ort-$mode.txt" 2>&1 || true
  check "$mode: no ORT cell crashed or failed" \
    eq "$(q "SELECT count(*) FROM cells WHERE status IN ('pass', 'plateau', 'leak')")" 2
  check "$mode: every ORT cell reported its sites" \
    eq "$(q "SELECT count(*) FROM site_reports WHERE mode = '$mode' AND n_sites > 0 AND sampled_allocs > 0")" 2
done
db="$work/ort-exact.db"
check "exact: thousands of stacks taken through ORT" test "$(q "SELECT min(sampled_allocs) FROM site_reports")" -gt 1000
check "exact: no table overflowed" eq "$(q "SELECT sum(dropped_sites + dropped_blocks + dropped_mappings) FROM site_reports")" 0

# A C++ leak planted around ORT: named by its function.
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "engine_species.so not built: the planted leak is not checked"; finish; exit; }
db="$work/species-ort.db"
scenario sites-species-ort exact species "inner: ort, species: cxx_new" > "$work/species-ort.yaml"
"$bin/memleak-run" --db "$db" "$work/species-ort.yaml" > "$work/species-ort.txt" 2>&1 || true
check "around ORT: both cells leak" eq "$(q "SELECT count(*) FROM cells WHERE status = 'leak'")" 2
check "around ORT: the C++ leak named under both allocators" \
  eq "$(q "SELECT count(DISTINCT cell_id) FROM growth_site_frames WHERE seq = 0 AND fn = 'species_cxx_lose'")" 2
check "around ORT: the final table names it" grep -q "species_cxx_lose (species_cxx.cc:" "$work/species-ort.txt"
finish

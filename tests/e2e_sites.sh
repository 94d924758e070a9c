#!/usr/bin/env bash
# e2e_sites.sh: where memory grows, at normal speed (issue 9). Leaks planted in known functions of the species plugin
# (tests/species, around the reference engine) must be named by the growing site's stack in the db, the final table
# and the HTML report: malloc and C++ new, in a helper thread, a still-reachable buffer, under the four allocators
# with heap_sites: exact; a large leak with the default sampling; a mapped file by its path and the function that
# mapped it, and by its path alone without the shim (heap: off) or without stacks (heap_sites: off). Clean species
# name no site of the plugin.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }
allocs="glibc jemalloc tcmalloc mimalloc"
list() { echo "$*" | sed 's/ /, /g'; }
scenario() { # name, heap_sites, species list, extra engine options, allocators
  cat <<YAML
name: $1
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine]
pipeline: [read_model, compile_model, create_request, infer, release_request, release_compiled, release_model]
teardown: [unload_engine]
iterations: 40
warmup: 5
heap_sites: $2
engine_options: {inner: ref${4:-}}
matrix:
  species: [$(list $3)]
  allocator: [$(list ${5:-$allocs})]
YAML
}
cell() { echo "c.axes = '{\"species\":\"$1\",\"allocator\":\"$2\"}'"; }
# The function naming a cell's fastest growing site: its first frame in the plugin.
top_fn() { q "SELECT f.fn FROM growth_site_frames f JOIN cells c ON c.id = f.cell_id WHERE $(cell "$1" "$2") AND
              f.seq = 0 AND f.obj LIKE '%/engine_species.so' ORDER BY f.depth LIMIT 1"; }
top() { q "SELECT $3 FROM growth_sites s JOIN cells c ON c.id = s.cell_id WHERE $(cell "$1" "$2") AND s.seq = 0"; }
one_of() { local got=$1; shift; for w in "$@"; do [ "$got" = "$w" ] && return 0; done; echo "  got '$got', expected one of: $*"; return 1; }
plugin_sites() { q "SELECT count(DISTINCT f.seq) FROM growth_site_frames f JOIN cells c ON c.id = f.cell_id WHERE
                    $(cell "$1" "$2") AND f.obj LIKE '%/engine_species.so'"; }

# Every allocation's stack: small leaks of every kind, named under every allocator. The act() of the plugin's infer
# may be inlined into it: either name is the planted function.
db="$work/exact.db"
scenario sites-exact exact "tiny cxx_new thread reachable map_file mmap_anon none churn bounded_cache" > "$work/exact.yaml"
"$bin/memleak-run" --db "$db" "$work/exact.yaml" > "$work/exact.txt" 2>&1 || true
for a in $allocs; do
  check "exact, $a: malloc leak named" one_of "$(top_fn tiny $a)" infer act
  check "exact, $a: C++ new leak named" eq "$(top_fn cxx_new $a)" species_cxx_lose
  check "exact, $a: leak in a helper thread named" eq "$(top_fn thread $a)" helper_main
  check "exact, $a: still-reachable growth named" one_of "$(top_fn reachable $a)" infer act
  check "exact, $a: 24 B/iter of it measured" test "$(top reachable $a "CAST(bytes_per_iter AS INT)")" -ge 16
  check "exact, $a: a mapped file named by the function that maps it" eq "$(top_fn map_file $a)" species_map_file
  check "exact, $a: ... and by its path" test "$(top map_file $a "kind || ' ' || path" | grep -c '^mmap .*/mlp-.*\.onnx$')" -eq 1
  check "exact, $a: an anonymous mapping named" eq "$(top mmap_anon $a "kind || ' ' || path")" "mmap [anon]"
  check "exact, $a: ... by its function" one_of "$(top_fn mmap_anon $a)" infer act
  for s in none churn bounded_cache; do
    check "exact, $a: $s names no growing site of the plugin" eq "$(plugin_sites $s $a)" 0
  done
done
check "exact: every cell reported how it recorded sites" \
  eq "$(q "SELECT count(*) FROM site_reports WHERE mode = 'exact' AND n_sites > 0 AND sampled_allocs > 0")" 36
check "exact: no table overflowed" eq "$(q "SELECT count(*) FROM site_reports WHERE dropped_sites + dropped_blocks + dropped_mappings > 0")" 0
check "the final table names the C++ leak with file:line under its verdict" \
  grep -qE "grows: \+[0-9]+ B/iter  species_cxx_lose \(species_cxx.cc:[0-9]+\) in engine_species.so" "$work/exact.txt"
check "the final table names the mapped file" grep -qE "grows: .*/iter  mmap of .*/mlp-.*\.onnx from species_map_file" \
  "$work/exact.txt"
"$bin/memleak-run" report --db "$db" --out "$work/report" > /dev/null 2>&1
check "the report lists growing sites next to the verdict" grep -q "growing sites and stacks" "$work/report/index.html"
check "the report shows the helper thread's stack" grep -q "<strong>helper_main</strong>" "$work/report/index.html"

# The default: sampled stacks (every 512 KiB on average) name a leak of a few times that over the run.
db="$work/sample.db"
scenario sites-sample sample "tiny cxx_new" ", species_bytes: 1048576" > "$work/sample.yaml"
"$bin/memleak-run" --db "$db" "$work/sample.yaml" > "$work/sample.txt" 2>&1 || true
for a in $allocs; do
  check "sample, $a: 1 MiB/iter malloc leak named" one_of "$(top_fn tiny $a)" infer act
  check "sample, $a: 1 MiB/iter C++ leak named" eq "$(top_fn cxx_new $a)" species_cxx_lose
  r=$(top tiny $a "CAST(bytes_per_iter AS INT)")
  check "sample, $a: its rate estimated within 30% ($r B/iter)" test "${r:-0}" -ge 734003 -a "${r:-0}" -le 1363148
done
check "sample: the interval is stored" eq "$(q "SELECT DISTINCT sample_bytes FROM site_reports")" 524288

# Without the shim, or without stacks: a growing mapping is named by its path (/proc/self/maps).
db="$work/maps.db"
scenario sites-maps sample "map_file" > "$work/maps.yaml"
"$bin/memleak-run" --db "$db" --no-heap "$work/maps.yaml" > /dev/null 2>&1 || true
for a in $allocs; do
  check "heap off, $a: the mapped file named by its path" \
    test "$(top map_file $a "kind || ' ' || path" | grep -c '^maps .*/mlp-.*\.onnx$')" -eq 1
done
db="$work/nostacks.db"
scenario sites-off off "map_file" "" glibc > "$work/off.yaml"
"$bin/memleak-run" --db "$db" "$work/off.yaml" > /dev/null 2>&1 || true
check "heap_sites: off: the mapped file named by its path" \
  test "$(top map_file glibc "kind || ' ' || path" | grep -c '^maps .*/mlp-.*\.onnx$')" -eq 1
check "heap_sites: off: mode maps, nothing sampled" eq "$(q "SELECT mode || ' ' || ifnull(sampled_allocs, 'NULL') FROM site_reports")" "maps NULL"
finish

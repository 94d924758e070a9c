#!/usr/bin/env bash
# The harness never counts its own memory as the engine's: with heap_sites on, the heap shim's site table fills a page
# per 13 new stacks, and an engine that takes new stacks every iteration without keeping anything (the species plugin's
# `paths`: 64 blocks per infer, each freed at the end of a call chain never taken before) must pass, sampled and exact,
# under glibc and jemalloc; the same with a page of anonymous memory lost per infer (`paths_page`) must still leak, at
# that page per iteration. Before samples.shim_bytes (schema 6) the clean cell read +7.5 KiB/iter of anon: a leak.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }
scenario() { # heap_sites mode, allocators
  cat <<YAML
name: shim-own-$1
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 100
warmup: 10
heap_sites: $1
engine_options: {inner: ref}
matrix:
  species: [paths, paths_page]
  allocator: [$2]
YAML
}
cell() { echo "c.axes = '{\"species\":\"$1\",\"allocator\":\"$2\"}'"; }
series() { q "SELECT r.verdict FROM series_results r JOIN cells c ON c.id = r.cell_id WHERE $(cell "$1" "$2") AND r.series = '$3'"; }
# What the shim's own tables grew by over the measured iterations, in bytes.
shim_growth() {
  q "SELECT max(s.shim_bytes) - min(s.shim_bytes) FROM samples s JOIN cells c ON c.id = s.cell_id
     WHERE $(cell "$1" "$2") AND s.phase = 'measure' AND s.step = 'iteration'"
}
for mode in sample exact; do
  db="$work/$mode.db"
  allocs="glibc jemalloc"
  [ "$mode" = exact ] && allocs="glibc"
  scenario "$mode" "$(echo $allocs | sed 's/ /, /g')" > "$work/$mode.yaml"
  set +e
  "$bin/memleak-run" --db "$db" --quiet "$work/$mode.yaml" > "$work/$mode.txt" 2>&1
  code=$?
  set -e
  check "$mode: a verdict for every cell (exit 1: the planted page leaks)" eq "$code" 1
  for a in $allocs; do
    check "$mode, $a: new stacks every iteration, nothing kept: pass" \
      eq "$(q "SELECT status FROM cells c WHERE $(cell paths "$a")")" pass
    check "$mode, $a: ...anon passes" eq "$(series paths "$a" anon)" pass
    # The class the test is about: the shim's tables grew by more than the anon floor (3 KiB/iter) would let through.
    grown=$(shim_growth paths "$a")
    check "$mode, $a: ...while the shim's own tables grew by more than 3 KiB/iter (grew $grown B)" \
      test "${grown:-0}" -gt $((100 * 3072))
    check "$mode, $a: ...over thousands of recorded stacks" \
      test "$(q "SELECT n_sites FROM site_reports r JOIN cells c ON c.id = r.cell_id WHERE $(cell paths "$a")")" -gt 1000
    check "$mode, $a: a page lost per infer still leaks" \
      eq "$(q "SELECT status FROM cells c WHERE $(cell paths_page "$a")")" leak
    check "$mode, $a: ...on anon" eq "$(series paths_page "$a" anon)" leak
    slope=$(q "SELECT CAST(r.late_slope_per_iter AS INTEGER) FROM series_results r JOIN cells c ON c.id = r.cell_id
               WHERE $(cell paths_page "$a") AND r.series = 'anon'")
    check "$mode, $a: ...at a page per iteration, not the page plus the shim's growth (${slope} B/iter)" \
      test "${slope:-0}" -ge 3072 -a "${slope:-0}" -le 5120
  done
  [ "$failed" -eq 0 ] || { cat "$work/$mode.txt"; q "SELECT c.axes, r.series, r.verdict, r.detail FROM series_results r
    JOIN cells c ON c.id = r.cell_id WHERE r.verdict != 'pass'"; }
done
# The report's signal plots read the judge's own anon (report_export.c): the clean cell's panel is flat there too.
db="$work/sample.db"
"$bin/memleak-run" report --db "$db" --out "$work/report" > /dev/null
idx=$(q "SELECT idx FROM cells c WHERE $(cell paths glibc)")
tsv="$work/report/data/signals-cell-$idx.tsv"
check "the report wrote the clean cell's signals" test -s "$tsv"
if [ -s "$tsv" ]; then
  col=$(head -n 1 "$tsv" | tr '\t' '\n' | grep -n '^anon' | cut -d: -f1 | head -n 1)
  span=$(awk -F '\t' -v c="${col:-0}" 'NR > 1 && $2 == 1 && c > 0 && $c != "" && $c != "nan" { v = $c + 0; if (n++ == 0 || v < lo) lo = v;
    if (n == 1 || v > hi) hi = v } END { printf "%d", (hi - lo) * 1048576 }' "$tsv")
  check "...its anon panel moves less than the shim grew (${span} B)" \
    test "${span:-0}" -lt "$(( $(shim_growth paths glibc) / 2 ))"
fi
finish

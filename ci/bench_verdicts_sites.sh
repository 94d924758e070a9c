#!/usr/bin/env bash
# bench_verdicts_sites.sh (issue 23, beside bench_verdicts.sh): on the planted species (the species plugin's leaks and
# clean behaviours around the reference engine, and ref's own inject_leak_bytes 64 B, 4 KiB, 64 KiB) x 4 allocators,
# heap shim on and off, each run twice, with a fixed 100 iterations and with `iterations: auto`: the fraction of leak
# cells whose fastest growing site is the planted function (and at its rate within 10%), misses, false alarms,
# inconclusive cells, verdicts that differ between auto and fixed, and the iterations auto used. Prints one Markdown
# table. It must never report a number it did not measure on this run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
bin="$build/bin"
out="${MLK_BENCH_DIR:-$build/bench}/verdicts-sites"
mkdir -p "$out"
[ -f "$build/lib/engine_species.so" ] || { echo "bench_verdicts_sites: $build/lib/engine_species.so not built" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench_verdicts_sites: needs the sqlite3 CLI (Debian sqlite3)" >&2; exit 1; }
allocs="glibc jemalloc tcmalloc mimalloc"
# species:expected function:bytes per iteration (empty: not a heap rate, or not a memory site)
leaks="tiny:act:40 reachable:act:24 periodic:act:409.6 late:act:256 thread:helper_main:128 cxx_new:species_cxx_lose:64
       mmap_anon:act: map_file:species_map_file: fd::"
clean="none bounded_cache churn retention fd_pool mmap_pool churn_pool"
names() { for x in $1; do printf '%s, ' "${x%%:*}"; done | sed 's/, $//'; }
species_yaml() { # name iterations
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
  species: [$(names "$leaks $clean")]
  allocator: [$(echo $allocs | sed 's/ /, /g')]
YAML
}
ref_yaml() { # name iterations
  cat <<YAML
name: $1
engine: ref
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: $2
warmup: 10
matrix:
  species:
    - {name: ref64, inject_leak_bytes: 64}
    - {name: ref4k, inject_leak_bytes: 4096}
    - {name: ref64k, inject_leak_bytes: 65536}
  allocator: [$(echo $allocs | sed 's/ /, /g')]
YAML
}
for shim in on off; do
  flag=""; [ $shim = off ] && flag="--no-heap"
  for it in fixed auto; do
    n=100; [ $it = auto ] && n=auto
    db="$out/$shim-$it.db"; rm -f "$db"
    species_yaml "species-$shim-$it" $n > "$out/species.yaml"
    ref_yaml "ref-$shim-$it" $n > "$out/ref.yaml"
    "$bin/memleak-run" --db "$db" --quiet $flag "$out/species.yaml" > /dev/null 2>&1 || true
    "$bin/memleak-run" --db "$db" --quiet $flag "$out/ref.yaml" > /dev/null 2>&1 || true
  done
done

q() { sqlite3 -batch -noheader "$1" "$2"; }
cellq() { echo "json_extract(c.axes, '\$.species') = '$1' AND c.allocator = '$2'"; }
median() { sort -n | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "-"}'; }
all_leaks="$leaks ref64:ref_inject_step:64 ref4k:ref_inject_step:4096 ref64k:ref_inject_step:65536"

echo "| allocator | heap shim | leak cells | site named (fn) | ... and rate within 10% | misses | false alarms | inconclusive | auto vs fixed: verdicts differing | median iterations, clean cells (auto / fixed) | median iterations, leak cells (auto / fixed) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for shim in on off; do
  for a in $allocs; do
    for it in fixed auto; do
      db="$out/$shim-$it.db"
      n_leak=0 named=0 rated=0 n_site=0 n_rate=0 misses=0
      for x in $all_leaks; do
        sp=${x%%:*} rest=${x#*:} fn=${rest%%:*} bytes=${rest#*:}
        n_leak=$((n_leak + 1))
        [ "$(q "$db" "SELECT status FROM cells c WHERE $(cellq $sp $a)")" = leak ] || misses=$((misses + 1))
        [ -n "$fn" ] || continue
        n_site=$((n_site + 1))
        got=$(q "$db" "SELECT f.fn FROM growth_site_frames f JOIN cells c ON c.id = f.cell_id WHERE $(cellq $sp $a) AND
                       f.seq = 0 AND (f.obj LIKE '%/engine_species.so' OR f.obj LIKE '%/engine_ref.so') ORDER BY f.depth LIMIT 1")
        [ "$got" = infer ] && [ "$fn" = act ] && got=act # act() may be inlined into infer
        [ "$got" = "$fn" ] && named=$((named + 1))
        if [ -n "$bytes" ]; then
          n_rate=$((n_rate + 1))
          r=$(q "$db" "SELECT bytes_per_iter FROM growth_sites s JOIN cells c ON c.id = s.cell_id WHERE $(cellq $sp $a) AND s.seq = 0")
          [ "$got" = "$fn" ] && awk -v g="${r:-0}" -v w="$bytes" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w / 10) }' &&
            rated=$((rated + 1))
        fi
      done
      alarms=$(q "$db" "SELECT count(*) FROM cells c WHERE c.allocator = '$a' AND json_extract(c.axes, '\$.species') IN
                        ($(for s in $clean; do printf "'%s'," $s; done | sed 's/,$//')) AND c.status IN ('leak', 'inconclusive')")
        inc=$(q "$db" "SELECT count(*) FROM cells c WHERE c.allocator = '$a' AND c.status = 'inconclusive'")
      eval "r_${it}=\"$named/$n_site | $rated/$n_rate | $misses/$n_leak | $alarms/$(echo $clean | wc -w) | $inc\""
    done
    differ=$(q "$out/$shim-auto.db" "ATTACH '$out/$shim-fixed.db' AS f; SELECT count(*) FROM cells a JOIN f.cells b ON
                 a.axes = b.axes AND a.engine = b.engine WHERE a.allocator = '$a' AND a.status != b.status")
    med() { # db, status class
      local cond="c.status IN ('pass', 'plateau')"; [ "$2" = leak ] && cond="c.status = 'leak'"
      q "$1" "SELECT ifnull((SELECT s.iterations FROM cell_stops s WHERE s.cell_id = c.id), (SELECT count(*) FROM samples x
               WHERE x.cell_id = c.id AND x.phase = 'measure' AND x.step = 'iteration')) FROM cells c WHERE c.allocator = '$a'
               AND $cond" | median
    }
    echo "| $a | $shim | $(echo $all_leaks | wc -w) | auto: ${r_auto%% |*} | ${r_auto#* | } | $differ | $(med "$out/$shim-auto.db" clean) / $(med "$out/$shim-fixed.db" clean) | $(med "$out/$shim-auto.db" leak) / $(med "$out/$shim-fixed.db" leak) |"
    echo "| $a | $shim | | fixed: ${r_fixed%% |*} | ${r_fixed#* | } | | | |"
  done
done

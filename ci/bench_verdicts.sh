#!/usr/bin/env bash
# bench_verdicts.sh: what the judge catches and what it never calls a leak, measured on this machine: false alarms
# over the clean species matrix (4 allocators, heap shim on and off, repeated), the smallest heap leak flagged within
# 100 iterations per allocator, and the probe's cost per sample. It must never report a number it did not measure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
bin="$build/bin"
out="${MLK_BENCH_DIR:-$build/bench}/verdicts"
reps="${MLK_BENCH_VERDICT_REPS:-3}"
mkdir -p "$out"
[ -f "$build/lib/engine_species.so" ] || { echo "bench_verdicts: $build/lib/engine_species.so not built" >&2; exit 1; }
allocs="[glibc, jemalloc, tcmalloc, mimalloc]"
scenario() { # name species-list extra-options iterations
  cat <<YAML
name: $1
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine]
pipeline: [read_model, compile_model, create_request, infer, release_request, release_compiled, release_model]
teardown: [unload_engine]
iterations: ${4:-100}
warmup: 10
engine_options: {inner: ref$3}
matrix:
  species: [$2]
  allocator: $allocs
YAML
}
q() { sqlite3 -batch -noheader "$1" "$2"; }

echo "== false alarms over the clean matrix (none, bounded_cache, churn, retention, fd_pool, mmap_pool x 4 allocators)"
cells=0 alarms=0
for r in $(seq "$reps"); do
  for mode in on off; do
    db="$out/clean-$mode-$r.db"; rm -f "$db"
    scenario "clean-$mode" "none, bounded_cache, churn, retention, fd_pool, mmap_pool" "" > "$out/clean.yaml"
    flag=""; [ "$mode" = off ] && flag="--no-heap"
    "$bin/memleak-run" --db "$db" --quiet $flag "$out/clean.yaml" > /dev/null 2>&1 || true
    cells=$((cells + $(q "$db" "SELECT count(*) FROM cells")))
    alarms=$((alarms + $(q "$db" "SELECT count(*) FROM cells WHERE status = 'leak'")))
  done
done
echo "false alarms: $alarms of $cells clean cells (heap on and off, $reps repetitions)"

echo "== smallest heap leak flagged within 100 iterations (default floors, heap shim on)"
db="$out/tiny.db"; rm -f "$db"
for b in 1 2 4 8 16 32; do
  scenario "tiny-$b" "tiny" ", species_bytes: $b" > "$out/tiny.yaml"
  "$bin/memleak-run" --db "$db" --quiet "$out/tiny.yaml" > /dev/null 2>&1 || true
done
q "$db" "SELECT allocator, min(CAST(substr(r.scenario_name, 6) AS INTEGER)) FROM cells c JOIN runs r ON r.id = c.run_id
         WHERE c.status = 'leak' GROUP BY allocator ORDER BY allocator" | sed 's/|/: smallest flagged B\/iter = /'

echo "== smallest anonymous-mapping leak flagged within 100 iterations (heap shim on: the anon and mapped series)"
db="$out/anon.db"; rm -f "$db"
for b in 1024 2048 4096 8192; do
  scenario "anon-$b" "mmap_anon" ", species_bytes: $b" > "$out/anon.yaml"
  "$bin/memleak-run" --db "$db" --quiet "$out/anon.yaml" > /dev/null 2>&1 || true
done
q "$db" "SELECT allocator, min(CAST(substr(r.scenario_name, 6) AS INTEGER)) FROM cells c JOIN runs r ON r.id = c.run_id
         WHERE c.status = 'leak' GROUP BY allocator ORDER BY allocator" | sed 's/|/: smallest flagged B\/iter (a mapping of that size) = /'

echo "== probe cost per sample (median of 60000 samples; descriptors and allocator figures included)"
"$bin/memleak-probe-bench"
LD_PRELOAD="$build/lib/libmemleak_heap.so" "$bin/memleak-probe-bench"

echo "== where leaks grow and how long cells run (issue 23): ci/bench_verdicts_sites.sh"
"$root/ci/bench_verdicts_sites.sh"

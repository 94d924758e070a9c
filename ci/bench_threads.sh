#!/usr/bin/env bash
# bench_threads.sh: the reference engine at 1 and 2 threads with its thread arbiter on and off, on a quiet machine,
# beside a busy loop (nice 0) and beside a background job (nice 19), each pinned to the last CPU; memleak-run cells.
# Not a test: it measures. It must never report a number it did not measure on this run, nor leave a loop running.
#
# usage: ci/bench_threads.sh   (MLK_BUILD_DIR: build tree, default build; MLK_BENCH_DIR: output folder, default
#        build/bench-threads; MLK_BENCH_ROUNDS: rounds, default 3; MLK_BENCH_THREADS_MODELS: "name|model-mapping" lines)
# Prints, per model and condition, each cell's median infer ms per round and 2t/1t with the arbiter on and off.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
out="${MLK_BENCH_DIR:-$build/bench-threads}"
rounds="${MLK_BENCH_ROUNDS:-3}"
case $rounds in '' | *[!0-9]* | 0) echo "bench_threads.sh: MLK_BENCH_ROUNDS must be a positive integer" >&2; exit 1 ;; esac
default_models='resnet18|{generate: resnet18}
transformer|{generate: transformer, layers: 4, hidden: 256}
mobilenetv2-u8|{generate: mobilenetv2, quantize: uint8}'
models="${MLK_BENCH_THREADS_MODELS:-$default_models}"
command -v taskset >/dev/null || { echo "bench_threads.sh: needs taskset (Debian package util-linux)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench_threads.sh: needs sqlite3 (Debian package sqlite3)" >&2; exit 1; }
[ -x "$build/bin/memleak-run" ] || { echo "bench_threads.sh: no $build/bin/memleak-run (build first)" >&2; exit 1; }
mkdir -p "$out"
db="$out/threads.db"
rm -f "$db" "$db-wal" "$db-shm"
cpu=$(($(nproc) - 1))
loop_pid=""
loop_stop() { [ -z "$loop_pid" ] || { kill "$loop_pid" 2>/dev/null; wait "$loop_pid" 2>/dev/null || true; loop_pid=""; }; }
trap loop_stop EXIT
for ((round = 1; round <= rounds; round++)); do
  for mode in quiet busy background; do
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      name=${line%%|*} model=${line#*|}
      yaml="$out/$mode-$name.yaml"
      printf '%s\n' "name: $mode-$name" "engine: ref" "model: $model" \
        "setup: [load_engine, read_model, compile_model, create_request]" "pipeline: [infer]" \
        "teardown: [release_request, release_compiled, release_model, unload_engine]" \
        "iterations: 20" "warmup: 3" "heap: off" "matrix:" "  threads: [1, 2]" "  thread_arbiter: [on, off]" > "$yaml"
      case $mode in
        busy) taskset -c "$cpu" sh -c 'while :; do :; done' & loop_pid=$! ;;
        background) taskset -c "$cpu" nice -n 19 sh -c 'while :; do :; done' & loop_pid=$! ;;
      esac
      code=0
      "$build/bin/memleak-run" --db "$db" --quiet "$yaml" > "$out/$mode-$name.log" 2>&1 || code=$?
      loop_stop
      [ "$code" -le 1 ] || { echo "bench_threads.sh: $mode-$name failed (exit $code), see $out/$mode-$name.log" >&2; exit 1; }
    done <<< "$models"
  done
done
echo "# ref threads: 1 vs 2, thread_arbiter on and off ($(date -u +%F), $rounds round(s), 20 measured infers a cell)"
echo
echo "busy: \`while :; do :; done\` pinned to CPU $cpu; background: the same loop under nice 19. Cells' median infer ms"
echo "per round; 2t/1t: the median over rounds of the 2-thread cells over that of the 1-thread cells (arbiter on)."
echo
echo "| condition-model | 1t ms | 2t on ms | 2t off ms | 2t/1t on | 2t/1t off |"
echo "|---|---|---|---|---|---|"
sqlite3 -batch -noheader -separator ' | ' "$db" "
  WITH f AS (SELECT r.scenario_name AS name, json_extract(c.axes, '\$.threads') AS t,
               json_extract(c.axes, '\$.thread_arbiter') AS a, st.wall_ms_median AS ms
             FROM cells c JOIN runs r ON r.id = c.run_id JOIN step_stats st ON st.cell_id = c.id AND st.step = 'infer'),
       k AS (SELECT *, row_number() OVER (PARTITION BY name, t, a ORDER BY ms) AS rn,
               count(*) OVER (PARTITION BY name, t, a) AS cnt FROM f),
       m AS (SELECT name, t, a, ms, (SELECT group_concat(printf('%.2f', x.ms), ' ') FROM f x
               WHERE x.name = k.name AND x.t = k.t AND x.a = k.a) AS all_ms FROM k WHERE rn = (cnt + 1) / 2)
  SELECT '| ' || one.name, one.all_ms, won.all_ms, woff.all_ms, printf('%.2f', won.ms / one.ms),
         printf('%.2f', woff.ms / one.ms) || ' |'
  FROM m one JOIN m won ON won.name = one.name AND won.t = '2' AND won.a = 'on'
    JOIN m woff ON woff.name = one.name AND woff.t = '2' AND woff.a = 'off'
  WHERE one.t = '1' AND one.a = 'on' ORDER BY one.name"

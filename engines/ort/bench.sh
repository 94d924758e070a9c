#!/usr/bin/env bash
# bench.sh: ONNX Runtime beside the reference engine, through memleak-run: process VmHWM and median infer latency per
# generated model at 1 and 2 threads (ORT/ref ratios), on a quiet machine and beside a busy loop pinned to one core
# (contention: what a shared CI runner does to 2 threads), ORT's compile peak with prepacking on/off on an external-data
# resnet50, and what ORT's arena and mem pattern do to VmHWM. Not a test: it measures, on this machine, now.
# It must never report a figure it did not measure in this run; it downloads nothing: models are generated, and the
# published ones (isnet-u8, isnet-f16: ISNet 1x3x1024x1024 quantized to uint8 and in float16) are read from
# engines/ref/models/fetch.sh's cache, left out with a note when it has not been fetched.
#
# usage: engines/ort/bench.sh   (MLK_BUILD_DIR, default build; MLK_BENCH_DIR, default $MLK_BUILD_DIR/bench-ort;
#                                MLK_BENCH_ITERS, default 20 measured iterations per cell;
#                                MLK_BENCH_HEAVY_ITERS, default 3 for the published 1024x1024 models (seconds
#                                an infer), which run in the first round only, after 1 warm-up;
#                                MLK_BENCH_ROUNDS, default 3 rounds of the infer part, ref and ORT alternating;
#                                MLK_BENCH_PARTS, default "infer busy compile arena": which to run; busy runs
#                                the infer cells again with `while :; do :; done` pinned to the last CPU;
#                                MLK_BENCH_MODELS, default every model below: which infer models, by name)
# Output: $MLK_BENCH_DIR/ort.db (every sample) and $MLK_BENCH_DIR/ort-vs-ref.md (the tables, also printed).
# Exit: 0 measured, 77 engine_ort.so not built (run engines/ort/fetch.sh, then cmake), 1 a run failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
out="${MLK_BENCH_DIR:-$build/bench-ort}"
iters="${MLK_BENCH_ITERS:-20}"
rounds="${MLK_BENCH_ROUNDS:-3}"
case $rounds in '' | *[!0-9]* | 0) echo "bench.sh: MLK_BENCH_ROUNDS must be a positive integer, not '$rounds'" >&2; exit 1 ;; esac
parts=" ${MLK_BENCH_PARTS:-infer busy compile arena} "
run="$build/bin/memleak-run"
if [ ! -f "$build/lib/engine_ort.so" ]; then
  echo "SKIP: $build/lib/engine_ort.so is not built (run engines/ort/fetch.sh, then cmake and build)"
  exit 77
fi
command -v sqlite3 >/dev/null || { echo "bench.sh: the sqlite3 CLI is needed (Debian package sqlite3)" >&2; exit 1; }
if [[ $parts == *" busy "* ]] && ! command -v taskset >/dev/null; then
  echo "bench.sh: the busy part needs taskset (Debian package util-linux)" >&2
  exit 1
fi
mkdir -p "$out/scenarios"
db="$out/ort.db"
rm -f "$db" "$db-wal" "$db-shm"

# One scenario per engine and purpose; heap accounting off, so the shim's bookkeeping is not in the latencies.
scenario() { # name engine model-mapping setup pipeline teardown matrix-lines...
  local name=$1 engine=$2 model=$3 setup=$4 pipeline=$5 teardown=$6; shift 6
  {
    echo "name: $name"
    echo "engine: $engine"
    echo "model: $model"
    echo "setup: [$setup]"
    echo "pipeline: [$pipeline]"
    echo "teardown: [$teardown]"
    echo "iterations: ${cell_iters:-$iters}"
    echo "warmup: ${cell_warmup:-3}"
    echo "heap: off"
    echo "timeout_s: 3600"
    echo "memory_limit_mb: 16384"
    echo "matrix:"
    printf '  %s\n' "$@"
  } > "$out/scenarios/$name$file_tag.yaml"
  echo "bench: $name$file_tag" >&2
  local code=0
  "$run" --db "$db" --quiet "$out/scenarios/$name$file_tag.yaml" > "$out/scenarios/$name$file_tag.log" 2>&1 || code=$?
  # 1 is a finding (e.g. a cell judged a leak): measured all the same.
  [ "$code" -le 1 ] || { echo "bench.sh: $name failed (exit $code), see $out/scenarios/$name$file_tag.log" >&2; return 1; }
}

infer_setup="load_engine, read_model, compile_model, create_request"
infer_teardown="release_request, release_compiled, release_model, unload_engine"
declare -A models=(
  [mlp]="{generate: mlp}"
  [mobilenetv2]="{generate: mobilenetv2}"
  [resnet18]="{generate: resnet18}"
  [resnet50]="{generate: resnet50}"
  [transformer]="{generate: transformer, layers: 4, hidden: 256}"
  [mlp-u8]="{generate: mlp, quantize: uint8}"
  [mobilenetv2-u8]="{generate: mobilenetv2, quantize: uint8}"
  [resnet18-u8]="{generate: resnet18, quantize: uint8}"
  [transformer-u8]="{generate: transformer, layers: 4, hidden: 256, quantize: uint8}"
  [mlp-f16]="{generate: mlp, dtype: float16}"
  [mobilenetv2-f16]="{generate: mobilenetv2, dtype: float16}"
  [resnet18-f16]="{generate: resnet18, dtype: float16}"
  [transformer-f16]="{generate: transformer, layers: 4, hidden: 256, dtype: float16}"
)
# Published models (engines/ref/models/fetch.sh): 1024x1024 inputs, seconds an infer, so few iterations and one round.
real_dir=$("$root/engines/ref/models/fetch.sh" --print-dir)
heavy_iters="${MLK_BENCH_HEAVY_ITERS:-3}"
case $heavy_iters in
  '' | *[!0-9]* | 0) echo "bench.sh: MLK_BENCH_HEAVY_ITERS must be a positive integer, not '$heavy_iters'" >&2; exit 1 ;;
esac
declare -A published=([isnet-u8]=isnet_u8 [isnet-f16]=isnet_f16)
for m in "${!published[@]}"; do models[$m]="$real_dir/${published[$m]}.onnx"; done
default_models="mlp mobilenetv2 resnet18 resnet50 transformer mlp-u8 mobilenetv2-u8 resnet18-u8 transformer-u8 mlp-f16 \
mobilenetv2-f16 resnet18-f16 transformer-f16"
for m in isnet-u8 isnet-f16; do
  if [ -f "${models[$m]}" ]; then
    default_models+=" $m"
  else
    echo "bench.sh: $m left out: ${models[$m]} not fetched (run engines/ref/models/fetch.sh)" >&2
  fi
done
bench_models=${MLK_BENCH_MODELS:-$default_models}
for m in $bench_models; do
  [ -n "${models[$m]:-}" ] || { echo "bench.sh: MLK_BENCH_MODELS: unknown model '$m' (${!models[*]})" >&2; exit 1; }
  [ -z "${published[$m]:-}" ] || [ -f "${models[$m]}" ] ||
    { echo "bench.sh: $m: ${models[$m]} not fetched (run engines/ref/models/fetch.sh)" >&2; exit 1; }
done
status=0
file_tag=""
# Contention: one busy loop pinned to the last CPU while a cell runs (the cell's own threads are not pinned).
busy_pid=""
busy_cpu=$(($(nproc) - 1))
busy_start() { taskset -c "$busy_cpu" sh -c 'while :; do :; done' & busy_pid=$!; }
busy_stop() { [ -z "$busy_pid" ] || { kill "$busy_pid" 2>/dev/null; wait "$busy_pid" 2>/dev/null || true; busy_pid=""; }; }
trap busy_stop EXIT
# This VM's speed drifts by 20-30% over minutes: each round runs every model's ref and ORT cells back to back (which
# goes first alternates), and the table takes each cell's median over the rounds, so a slow stretch hits both engines.
# A busy round runs each cell beside the busy loop right after its quiet one.
for ((round = 1; round <= rounds; round++)); do
  [[ $parts == *" infer "* || $parts == *" busy "* ]] || break
  file_tag="-r$round"
  order="ref ort"
  ((round % 2)) || order="ort ref"
  for m in $bench_models; do
    cell_iters="" cell_warmup=""
    if [ -n "${published[$m]:-}" ]; then
      ((round == 1)) || continue
      cell_iters=$heavy_iters cell_warmup=1
    fi
    for e in $order; do
      if [[ $parts == *" infer "* ]]; then
        scenario "infer-$e-$m" "$e" "${models[$m]}" "$infer_setup" infer "$infer_teardown" "threads: [1, 2]" ||
          status=1
      fi
      if [[ $parts == *" busy "* ]]; then
        busy_start
        scenario "busy-$e-$m" "$e" "${models[$m]}" "$infer_setup" infer "$infer_teardown" "threads: [1, 2]" ||
          status=1
        busy_stop
      fi
    done
  done
done
file_tag="" cell_iters="" cell_warmup=""
# Compile peak: a fresh session every iteration, on resnet50 with its weights in an external file.
r50x="{generate: resnet50, external_data: true}"
if [[ $parts == *" compile "* ]]; then
  scenario compile-ort-r50x ort "$r50x" "load_engine, read_model" "compile_model, release_compiled" \
    "release_model, unload_engine" "prepacking: [on, off]" "mmap: [on, off]" "graph_optimization: [all, disable]" ||
    status=1
  scenario compile-ref-r50x ref "$r50x" "load_engine, read_model" "compile_model, release_compiled" \
    "release_model, unload_engine" "mmap: [on, off]" || status=1
fi
# Arena and mem pattern: one session, a request and an infer per iteration.
for m in mobilenetv2 resnet50; do
  [[ $parts == *" arena "* ]] || break
  scenario "arena-ort-$m" ort "${models[$m]}" "load_engine, read_model, compile_model" \
    "create_request, infer, release_request" "release_compiled, release_model, unload_engine" \
    "arena: [on, off]" "mem_pattern: [on, off]" || status=1
done

q() { sqlite3 -batch -noheader -separator ' | ' "$db" "$1"; }
ort_lib=$(grep -a -o '/[^[:space:][:cntrl:]]*/libonnxruntime\.so\.1' "$build/lib/engine_ort.so" | grep -v '%' | head -n 1)
ort_version=$(sed -n 's/.*ort=\([0-9.]*\).*/\1/p' "$(dirname "$ort_lib")/../STAMP" 2>/dev/null || true)
report="$out/ort-vs-ref.md"
# SQL pieces: a cell's process VmHWM (the max of every step's own peak) and a step's figures from step_stats.
hwm="(SELECT max(vm_hwm_kib) FROM samples s WHERE s.cell_id = cells.id)"
stat() { echo "(SELECT $2 FROM step_stats st WHERE st.cell_id = cells.id AND st.step = '$1')"; }
last() { echo "(SELECT $2 FROM samples s WHERE s.cell_id = cells.id AND s.step = '$1' AND s.phase = 'measure'
                ORDER BY seq DESC LIMIT 1)"; }
mib() { echo "printf('%.1f', $1 / 1024.0)"; }
rows() { q "$1" | sed -e 's/^/| /' -e 's/$/ |/'; }
opt() { echo "CASE WHEN $1 IS NULL THEN '-' ELSE printf('%.2f', $1) END"; } # printf makes NULL 0.00
{
  echo "# ONNX Runtime vs the reference engine ($(date -u +%F), $iters measured iterations per cell)"
  echo
  echo "ONNX Runtime ${ort_version:-?} ($ort_lib); memleak-run with heap: off. VmHWM is the"
  echo "process peak (the max of every step's own peak, compile included); latency is the median infer."
  echo "Published models (isnet-*): $heavy_iters measured iterations after 1 warm-up, in the first round only."
  echo "Infer cells: $rounds round(s), ref and ORT back to back in each; the table gives the median over the rounds of"
  echo "each cell's median (and the largest VmHWM); the last columns are the lowest and highest ref/ORT ratio of a round."
  if [[ $parts == *" infer "* ]]; then
    echo
    echo "| model | threads | ref VmHWM MiB | ORT VmHWM MiB | ORT/ref | ref infer ms | ORT infer ms | ORT/ref |" \
      "ref/ORT per round (min-max) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    # f: one row per cell (a round's run); k: its round, by run order per scenario; m: the median cell per engine
    rows "WITH f AS (SELECT replace(replace(r.scenario_name, 'infer-ref-', ''), 'infer-ort-', '') AS name,
             cells.engine AS engine, json_extract(cells.axes, '\$.threads') AS t, $hwm AS hwm,
             $(stat infer wall_ms_median) AS ms, r.id AS run
           FROM cells JOIN runs r ON r.id = cells.run_id WHERE r.scenario_name LIKE 'infer-%'),
         k AS (SELECT *, row_number() OVER (PARTITION BY name, engine, t ORDER BY run) AS round,
                 row_number() OVER (PARTITION BY name, engine, t ORDER BY ms) AS rn,
                 count(*) OVER (PARTITION BY name, engine, t) AS cnt FROM f),
         m AS (SELECT name, engine, t, ms, (SELECT max(hwm) FROM f x WHERE x.name = k.name AND x.engine = k.engine
                 AND x.t = k.t) AS hwm FROM k WHERE rn = (cnt + 1) / 2),
         p AS (SELECT a.name, a.t, min(a.ms / b.ms) AS lo, max(a.ms / b.ms) AS hi FROM k a JOIN k b
                 ON b.name = a.name AND b.t = a.t AND b.round = a.round AND a.engine = 'ref' AND b.engine = 'ort'
               GROUP BY a.name, a.t)
         SELECT a.name, a.t, $(mib a.hwm), $(mib b.hwm), printf('%.2f', 1.0 * b.hwm / a.hwm),
           printf('%.2f', a.ms), printf('%.2f', b.ms), printf('%.2f', b.ms / a.ms),
           printf('%.2f-%.2f', p.lo, p.hi)
         FROM m a JOIN m b ON b.name = a.name AND b.t = a.t AND a.engine = 'ref' AND b.engine = 'ort'
           JOIN p ON p.name = a.name AND p.t = a.t
         ORDER BY a.name, a.t"
  fi
  if [[ $parts == *" busy "* ]]; then
    echo
    echo "## Contention: one busy loop pinned to CPU $busy_cpu while a cell runs (its threads unpinned)"
    echo
    echo "Median infer ms over the rounds; quiet is the same round's cell without the loop (- when infer was not run)."
    echo "A second thread must never cost time: busy 2t/1t is each engine's 2-thread over its own 1-thread median;"
    echo "The last column is ref's 2t/1t in each round, its lowest and highest: how much the busy machine moves it."
    echo
    echo "| model | threads | ref quiet | ref busy | ORT quiet | ORT busy | busy ref/ORT | busy ref 2t/1t |" \
      "busy ORT 2t/1t | busy ref 2t/1t per round (min-max) |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    # f: one row per cell with its mode; m: the median cell per model, engine, threads and mode
    rows "WITH f AS (SELECT substr(r.scenario_name, 1, instr(r.scenario_name, '-') - 1) AS mode,
             substr(r.scenario_name, instr(r.scenario_name, '-') + 5) AS name, cells.engine AS engine,
             CAST(json_extract(cells.axes, '\$.threads') AS INTEGER) AS t, $(stat infer wall_ms_median) AS ms,
             r.id AS run
           FROM cells JOIN runs r ON r.id = cells.run_id
           WHERE r.scenario_name LIKE 'infer-%' OR r.scenario_name LIKE 'busy-%'),
         k AS (SELECT *, row_number() OVER (PARTITION BY mode, name, engine, t ORDER BY ms) AS rn,
                 row_number() OVER (PARTITION BY mode, name, engine, t ORDER BY run) AS round,
                 count(*) OVER (PARTITION BY mode, name, engine, t) AS cnt FROM f),
         m AS (SELECT mode, name, engine, t, ms FROM k WHERE rn = (cnt + 1) / 2),
         p AS (SELECT a.name, min(a.ms / b.ms) AS lo, max(a.ms / b.ms) AS hi FROM k a JOIN k b
                 ON a.mode = 'busy' AND b.mode = 'busy' AND a.engine = 'ref' AND b.engine = 'ref'
                   AND b.name = a.name AND b.round = a.round AND a.t = 2 AND b.t = 1
               GROUP BY a.name)
         SELECT rb.name, rb.t, $(opt rq.ms), printf('%.2f', rb.ms), $(opt oq.ms), printf('%.2f', ob.ms),
           printf('%.2f', rb.ms / ob.ms), $(opt "rb.ms / r1.ms"), $(opt "ob.ms / o1.ms"),
           CASE WHEN rb.t > 1 AND p.lo IS NOT NULL THEN printf('%.2f-%.2f', p.lo, p.hi) ELSE '-' END
         FROM m rb JOIN m ob ON ob.mode = 'busy' AND ob.engine = 'ort' AND ob.name = rb.name AND ob.t = rb.t
           LEFT JOIN m rq ON rq.mode = 'infer' AND rq.engine = 'ref' AND rq.name = rb.name AND rq.t = rb.t
           LEFT JOIN m oq ON oq.mode = 'infer' AND oq.engine = 'ort' AND oq.name = rb.name AND oq.t = rb.t
           LEFT JOIN m r1 ON r1.mode = 'busy' AND r1.engine = 'ref' AND r1.name = rb.name AND r1.t = 1 AND rb.t > 1
           LEFT JOIN m o1 ON o1.mode = 'busy' AND o1.engine = 'ort' AND o1.name = rb.name AND o1.t = 1 AND rb.t > 1
           LEFT JOIN p ON p.name = rb.name
         WHERE rb.mode = 'busy' AND rb.engine = 'ref'
         ORDER BY rb.name, rb.t"
  fi
  if [[ $parts == *" compile "* ]]; then
    echo
    echo "## Compile peak, resnet50 with external data (a fresh session per iteration; the compile step's own VmHWM)"
    echo
    echo "| engine | options | compile VmHWM MiB (max) | RssAnon after MiB | RssFile after MiB | compile ms (median) |"
    echo "|---|---|---|---|---|---|"
    rows "SELECT cells.engine, cells.axes, $(mib "$(stat compile_model peak_kib)"),
           $(mib "$(last compile_model rss_anon_kib)"), $(mib "$(last compile_model rss_file_kib)"),
           printf('%.1f', $(stat compile_model wall_ms_median))
         FROM cells JOIN runs r ON r.id = cells.run_id WHERE r.scenario_name LIKE 'compile-%'
         ORDER BY cells.engine DESC, cells.id"
  fi
  if [[ $parts == *" arena "* ]]; then
    echo
    echo "## ORT arena and mem pattern (one session; per iteration create_request, infer, release_request)"
    echo
    echo "first infer: its peak over the RSS before it (activations, the arena's first growth); later infers: the"
    echo "largest such rise among the measured ones."
    echo
    echo "| model | options | process VmHWM MiB | first infer +MiB | later infers +MiB | RSS after MiB | infer ms |"
    echo "|---|---|---|---|---|---|---|"
    rise="(SELECT s.vm_hwm_kib - p.vm_rss_kib FROM samples s JOIN samples p ON p.cell_id = s.cell_id
           AND p.seq = s.seq - 1 WHERE s.cell_id = cells.id AND s.step = 'infer'"
    rows "SELECT replace(r.scenario_name, 'arena-ort-', ''), cells.axes, $(mib "$hwm"),
           $(mib "$rise ORDER BY s.seq LIMIT 1)"),
           $(mib "$rise AND s.phase = 'measure' ORDER BY s.vm_hwm_kib - p.vm_rss_kib DESC LIMIT 1)"),
           $(mib "$(stat infer final_rss_kib)"), printf('%.2f', $(stat infer wall_ms_median))
         FROM cells JOIN runs r ON r.id = cells.run_id WHERE r.scenario_name LIKE 'arena-ort-%' ORDER BY cells.id"
  fi
} > "$report"
cat "$report"
exit "$status"

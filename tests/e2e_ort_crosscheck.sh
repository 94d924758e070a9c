#!/usr/bin/env bash
# ONNX Runtime beside the reference engine: every generated model loads in ORT and both engines' outputs agree within
# 1e-4 (relative to each output's scale); ORT's options reach ORT; bad options exit 2; memleak-run runs engine: ort.
# It must never download anything: without engines/ort/fetch.sh's cache it prints SKIP and exits 77.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"

# Without the plugin (a memleak-run that has no engine_ort.so beside it), engine: ort exits 2 naming fetch.sh.
mkdir -p "$work/lonely/bin"
cp "$bin/memleak-run" "$work/lonely/bin/"
printf 'name: no-ort\nengine: ort\nmodel: {generate: mlp, mlp_hidden: 16}\npipeline: [compile_model, release_compiled]\n' > "$work/no-ort.yaml"
set +e
env -u MLK_ENGINE_DIR "$work/lonely/bin/memleak-run" --dry-run --db "$work/no-ort.db" "$work/no-ort.yaml" > "$work/no-ort.txt" 2>&1
code=$?
set -e
check "no engine_ort.so: exit 2" eq "$code" 2
check "no engine_ort.so: says to run engines/ort/fetch.sh" grep -q "engine 'ort' not found.*engines/ort/fetch.sh" \
  "$work/no-ort.txt"
plugin="$build/lib/engine_ort.so"
xc="$build/tests/ort_crosscheck"
if [ ! -f "$plugin" ] || [ ! -x "$xc" ]; then
  [ "$failed" -eq 0 ] || { finish; exit 1; }
  echo "SKIP: engine_ort.so is not built: ONNX Runtime was not fetched (run engines/ort/fetch.sh, then cmake again)"
  exit 77
fi
ort_lib=$(grep -a -o -E '(/[^[:space:][:cntrl:]%/]+)+/lib/libonnxruntime\.so\.1' "$plugin" | head -n 1)
if [ -z "${MLK_ORT_LIBRARY:-}" ] && [ ! -f "$ort_lib" ]; then
  echo "SKIP: engine_ort.so was built against $ort_lib, which is gone (run engines/ort/fetch.sh again)"
  exit 77
fi
need_sqlite

m="$work/models"
mkdir -p "$m"
gen() { "$bin/refengine" gen "$@" > /dev/null; }
gen mlp --out "$m/mlp.onnx"
gen mobilenetv2 --width-mult 0.35 --image-size 96 --out "$m/mbv2-small.onnx"
gen mobilenetv2 --out "$m/mbv2.onnx"
gen resnet18 --image-size 64 --out "$m/r18.onnx"
gen resnet18 --image-size 64 --external-data --out "$m/r18x.onnx"
gen resnet50 --image-size 64 --out "$m/r50.onnx"
gen transformer --layers 2 --hidden 64 --heads 2 --seq 16 --out "$m/tr.onnx"
gen transformer --layers 2 --hidden 64 --heads 2 --seq 16 --dynamic --out "$m/trd.onnx"

agree() { # model, then crosscheck arguments: the outputs must agree
  local model=$1; shift
  "$xc" "$@" "$model" > "$work/xc.txt" 2>&1 && grep -q "outputs agree" "$work/xc.txt" || { cat "$work/xc.txt"; return 1; }
}
for model in mlp mbv2-small mbv2 r18 r18x r50 tr; do
  check "$model: ORT loads it and agrees with ref" agree "$m/$model.onnx"
done
check "dynamic transformer, dim.batch=3 dim.seq=8: agree" agree "$m/trd.onnx" --opt dim.batch=3 --opt dim.seq=8
check "output shapes follow dim.* (3x8x64)" grep -q "1536 values" "$work/xc.txt"

# float16 (gen --dtype float16): ref runs float16 graphs in float32, ORT partly in float16. Measured here, ref vs ORT:
# relative 0 (mlp), 2.1e-3 (mobilenetv2), 7.7e-4 (resnet18), 1.0e-3 (transformer); a float16 output's own step is
# 2^-11 (4.9e-4) of its magnitude, so 1e-2 admits a few steps of rounding and nothing like a wrong layer.
gen mlp --dtype float16 --out "$m/mlp16.onnx"
gen mobilenetv2 --width-mult 0.35 --image-size 96 --dtype float16 --out "$m/mbv2-16.onnx"
gen resnet18 --image-size 64 --dtype float16 --external-data --out "$m/r18x16.onnx"
gen transformer --layers 2 --hidden 64 --heads 2 --seq 16 --dtype float16 --out "$m/tr16.onnx"
for model in mlp16 mbv2-16 r18x16 tr16; do
  check "$model (float16): ORT loads it and agrees with ref within 1e-2" agree "$m/$model.onnx" --rtol 1e-2
  check "$model (float16): the outputs are float16 values, not NaN" grep -q "^ok: .*relative [0-9]" "$work/xc.txt"
done
check "float16, ref at 2 threads and mmap off: agree" agree "$m/r18x16.onnx" --rtol 1e-2 --ref-opt threads=2 \
  --ref-opt mmap=off

# uint8 (gen --quantize uint8, DynamicQuantizeLinear + ConvInteger/MatMulInteger as quantize_dynamic writes them):
# the MatMul models agree to float rounding (mlp 3e-8, transformer 4e-7 relative here), so they keep 1e-4. The CNNs
# re-quantize every layer's activations with a scale from their min and max, so a float difference of one rounding
# upstream can move a value one quantization step: resnet18 is 3.6e-3 off, and mobilenetv2 (52 such layers) is off
# everywhere by a little (mean 3e-3, max 1.2e-2 of an output scale of 1.2; the same with ORT's graph optimizations
# off). Its case is the statistical one: 99% of the values within 1e-2 of the output's scale.
gen mlp --quantize uint8 --out "$m/mlp-u8.onnx"
gen transformer --layers 2 --hidden 64 --heads 2 --seq 16 --quantize uint8 --out "$m/tr-u8.onnx"
gen resnet18 --image-size 64 --quantize uint8 --out "$m/r18-u8.onnx"
gen mobilenetv2 --width-mult 0.35 --image-size 96 --quantize uint8 --out "$m/mbv2-u8.onnx"
check "mlp-u8: ORT agrees with ref within 1e-4" agree "$m/mlp-u8.onnx"
check "tr-u8: ORT agrees with ref within 1e-4" agree "$m/tr-u8.onnx"
check "tr-u8, ref at 2 threads: agree" agree "$m/tr-u8.onnx" --ref-opt threads=2
check "r18-u8: ORT agrees with ref within 1e-2" agree "$m/r18-u8.onnx" --rtol 1e-2
check "mbv2-u8: 99% of the values within 1e-2 (statistical)" agree "$m/mbv2-u8.onnx" --rtol 1e-2 --within 0.99
check "mbv2-u8: the statistical line is printed" grep -q "of [0-9]* values within" "$work/xc.txt"
# The same model against ORT's own sensitivity instead of a hand-set share (crosscheck_basis.sh: ORT on nudged inputs).
basis() { "$src/tests/crosscheck_basis.sh" "$@" > "$work/basis.txt" 2>&1 && grep -q "outputs agree" "$work/basis.txt" ||
  { cat "$work/basis.txt"; return 1; }; }
check "mbv2-u8: within 2x ORT's own nudged difference" basis "$m/mbv2-u8.onnx"

# Every ORT option, one at a time: ORT accepts it and the outputs still agree.
for o in threads=2 threads=0 inter_threads=2 arena=off mem_pattern=off arena_extend_strategy=pow2 \
         arena_extend_strategy=exact graph_optimization=disable graph_optimization=basic graph_optimization=extended \
         prepacking=off initializers_in_device_allocator=on arena_shrinkage=on mmap=off; do
  check "ort $o: agree" agree "$m/mbv2-small.onnx" --ort-opt "$o" --infers 2
done
check "mmap=off with external data: agree" agree "$m/r18x.onnx" --ort-opt mmap=off
check "arena=off with arena_shrinkage=on runs (no arena to shrink)" agree "$m/r18.onnx" --ort-opt arena=off \
  --ort-opt arena_shrinkage=on

# mmap: off hands ORT the bytes (nothing of the .data file is ever mapped); on, with neither graph rewrites nor
# prepacking to copy the weights, ORT keeps the whole file mapped.
data="$m/r18x.onnx.data"
kib=$(( $(stat -c %s "$data") / 4096 * 4 ))
"$xc" --maps "$data" --ort-opt mmap=off "$m/r18x.onnx" > "$work/maps.txt"
check "mmap=off: no mapping of the external data" grep -q "ort KiB mapped from $data: after read_model 0, compile_model 0, infer 0" "$work/maps.txt"
"$xc" --maps "$data" --ort-opt mmap=on --ort-opt prepacking=off --ort-opt graph_optimization=disable \
  "$m/r18x.onnx" > "$work/maps.txt"
mapped=$(sed -n "s/^ort KiB mapped from .*compile_model \([0-9]*\), infer.*/\1/p" "$work/maps.txt")
check "mmap=on, no prepacking, no rewrites: the external data stays mapped ($mapped KiB of ~$kib)" \
  test "${mapped:-0}" -ge "$kib"

# Arena stats: reported with the arena, none without it; arena_shrinkage shrinks an exact-extend arena.
metric() { sed -n "s/^ort metrics after infer:.* $1=\([0-9]*\).*/\1/p" "$work/met.txt"; }
"$xc" --metrics --infers 3 "$m/r18.onnx" > "$work/met.txt"
check "arena on: ort_in_use_bytes reported" test -n "$(metric ort_in_use_bytes)"
check "arena on: ort_num_allocs > 0" test "$(metric ort_num_allocs)" -gt 0
"$xc" --metrics --ort-opt arena=off "$m/r18.onnx" > "$work/met.txt"
check "arena off: no arena metrics" bash -c "! grep -q 'ort_in_use_bytes' '$work/met.txt'"
check "arena off: the release is still reported (ort_release, ort_api_version)" \
  grep -q "^ort metrics after infer: ort_release=[0-9]* ort_api_version=[0-9]*$" "$work/met.txt"
"$xc" --metrics --infers 3 --ort-opt arena_extend_strategy=exact "$m/r18.onnx" > "$work/met.txt"
check "exact arena without shrinkage: no shrink" eq "$(metric ort_num_arena_shrinkages)" 0
"$xc" --metrics --infers 3 --ort-opt arena_extend_strategy=exact --ort-opt arena_shrinkage=on "$m/r18.onnx" > "$work/met.txt"
check "exact arena with shrinkage: shrunk after each run" test "$(metric ort_num_arena_shrinkages)" -ge 3

# memleak-run with engine: ort. The pipeline keeps one session (ORT retains a few KiB per session created until the
# library is unloaded, so a compile/release loop is a finding of its own, not this test's subject).
db="$work/ort.db"
cat > "$work/ort.yaml" <<'YAML'
name: e2e-ort
engine: ort
model: {generate: mlp, mlp_hidden: 256}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 30
warmup: 5
matrix:
  threads: [1, 2]
  arena: [on, off]
  mmap: [on, off]
engine_options: {graph_optimization: all}
timeout_s: 120
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/ort.yaml" > "$work/run.txt" 2>&1
code=$?
set -e
check "memleak-run with engine: ort exits 0" eq "$code" 0
check "all 8 cells pass" eq "$(q "SELECT count(*) FROM cells WHERE engine='ort' AND status='pass'")" 8
check "every measured infer was sampled" eq "$(q "SELECT count(*) FROM samples WHERE step='infer' AND phase='measure'")" 240

# Option errors exit 2 before anything runs, and check_options never loads ORT (a missing library is fine).
bad() { # description, sed expression on the scenario, text the error must hold
  sed -e "$2" "$work/ort.yaml" > "$work/bad.yaml"
  set +e
  MLK_ORT_LIBRARY=/nonexistent/libonnxruntime.so.1 "$bin/memleak-run" --dry-run --db "$work/bad.db" "$work/bad.yaml" \
    > "$work/bad.txt" 2>&1
  local c=$?
  set -e
  check "$1: exit 2" eq "$c" 2
  check "$1: says so" grep -q "$3" "$work/bad.txt"
}
bad "unknown key" 's/  mmap: \[on, off\]/  mmap: [on, off]\n  arenas: [on]/' \
  "unknown option 'arenas'; accepted: threads, inter_threads, arena, mem_pattern, arena_extend_strategy"
bad "bad on|off" 's/  mmap: \[on, off\]/  mmap: [on, maybe]/' "option mmap: 'maybe' is not on|off"
bad "bad strategy" 's/graph_optimization: all/arena_extend_strategy: double/' \
  "option arena_extend_strategy: 'double' is not pow2|exact"
bad "bad level" 's/graph_optimization: all/graph_optimization: max/' \
  "option graph_optimization: 'max' is not disable|basic|extended|all"
bad "bad threads" 's/  threads: \[1, 2\]/  threads: [1, 999]/' "option threads: '999' is not an integer in \[0, 256\]"
bad "bad dim" 's/graph_optimization: all/dim.batch: x/' "option dim.batch: 'x' is not an integer"
set +e
MLK_ORT_LIBRARY=/nonexistent/libonnxruntime.so.1 "$bin/memleak-run" --dry-run --db "$work/bad.db" "$work/ort.yaml" \
  > /dev/null 2>&1
code=$?
MLK_ORT_LIBRARY=/nonexistent/libonnxruntime.so.1 "$xc" "$m/mlp.onnx" > "$work/load.txt" 2>&1
set -e
check "check_options does not load ORT: a valid scenario passes --dry-run without the library" eq "$code" 0
check "a missing library fails load_engine, naming fetch.sh" grep -q "cannot load ONNX Runtime.*engines/ort/fetch.sh" \
  "$work/load.txt"
finish

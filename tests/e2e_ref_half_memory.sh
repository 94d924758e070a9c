#!/usr/bin/env bash
# Float16 weights stay float16 through the reference engine's compile (issue 24): each Conv's or Gemm's weight is
# widened to float32 only as its layer is pre-packed, so a float16 model's compile peak stays near its float32
# twin's (no whole float32 copy beside the mapped float16 bytes), the float16 pages leave RSS once packed, and the
# ref plugin reports the pre-packed bytes per step (ref_packed_bytes); float16 weights embedded at odd offsets are
# mapped, not copied. It must never depend on a fetched model.
source "$(dirname "$0")/lib.sh"
need_sqlite

gen() { "$bin/refengine" gen resnet50 --image-size 64 --external-data "$@" > /dev/null; }
gen --dtype float16 --out "$work/h.onnx"
gen --out "$work/f.onnx"
# One run each, compile_threads 1: VmHWM counts bytes touched, not time, so the figures barely move between runs.
run() { "$bin/refengine" run "$1" --iterations 1 --warmup 0 --mmap "$2" --json > "$work/$3.json"; }
get() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$work/$1.json"; }
run "$work/h.onnx" on h
run "$work/f.onnx" on f
half_kib=$(( $(get h weight_bytes) / 1024 ))
echo "float16: weights $half_kib KiB, compile VmHWM $(get h hwm_compile_kib) KiB, RssFile after compile" \
  "$(get h rss_file_after_compile_kib) KiB; float32: compile VmHWM $(get f hwm_compile_kib) KiB; packed" \
  "$(get h packed_bytes) bytes"
check "the float16 weights were mapped" test "$(get h mapped_bytes)" -ge $(( $(get h weight_bytes) * 99 / 100 ))
check "float16 and float32 pack the same panels" eq "$(get h packed_bytes)" "$(get f packed_bytes)"
# A whole float32 copy (twice the float16 bytes) beside the mapped float16 bytes put the float16 peak 57 MiB above
# the float32 one (179.1 vs 121.4 MiB with main's eead770 binaries); widened layer by layer it is 4 MiB above
# (125.5 MiB). Half the float16 bytes (24 MiB) of room separates the two with 20 MiB to spare either way.
check "float16 compile peak within float32's + half the float16 bytes" \
  test "$(get h hwm_compile_kib)" -le $(( $(get f hwm_compile_kib) + half_kib / 2 ))
check "the mapped float16 pages leave RSS once widened" test "$(get h rss_file_after_compile_kib)" -lt $(( half_kib / 4 ))

# The same float16 weights embedded in the .onnx file: protobuf puts about 40% of them at odd offsets, which the
# reader of f1764ce copied to the heap (mapped 29.0 of 48.8 MiB; compile VmHWM 157.0 MiB, RssAnon after compile
# 126.8; now 123.2 and 106.8, the external-data model 122.4 and 106.9). Mapped wherever they sit, the embedded model
# compiles like the external one: a quarter of the float16 bytes (12.2 MiB) of room, 7.8 MiB to spare or more.
"$bin/refengine" gen resnet50 --image-size 64 --dtype float16 --out "$work/e.onnx" > /dev/null
run "$work/e.onnx" on e
echo "float16 embedded: mapped $(get e mapped_bytes) of $(get e weight_bytes) bytes, compile VmHWM" \
  "$(get e hwm_compile_kib) KiB, RssAnon after compile $(get e rss_anon_after_compile_kib) KiB (external:" \
  "$(get h rss_anon_after_compile_kib) KiB)"
check "embedded float16 weights are mapped at any offset" eq "$(get e mapped_bytes)" "$(get e weight_bytes)"
check "embedded float16 compile peak within the external-data model's + a quarter of the float16 bytes" \
  test "$(get e hwm_compile_kib)" -le $(( $(get h hwm_compile_kib) + half_kib / 4 ))
check "embedded float16 RssAnon after compile within the external-data model's + a quarter of the float16 bytes" \
  test "$(get e rss_anon_after_compile_kib)" -le $(( $(get h rss_anon_after_compile_kib) + half_kib / 4 ))

# memleak-run samples the plugin's figures after every step: the packed bytes appear with the compiled model and
# go with it.
db="$work/m.db"
cat > "$work/s.yaml" <<'YAML'
name: e2e-ref-half-memory
engine: ref
model: {generate: resnet18, dtype: float16, image_size: 32}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 3
warmup: 0
YAML
"$bin/memleak-run" --db "$db" --quiet "$work/s.yaml" > "$work/out.txt" || { cat "$work/out.txt"; exit 1; }
"$bin/refengine" gen resnet18 --dtype float16 --image-size 32 --out "$work/r18.onnx" > /dev/null
run "$work/r18.onnx" on r18
check "ref_packed_bytes peaks at the model's packed bytes" \
  eq "$(q "SELECT max(value) FROM metrics WHERE name = 'ref_packed_bytes'")" "$(get r18 packed_bytes)"
check "ref_packed_bytes is 0 once the compiled model is released" \
  eq "$(q "SELECT min(value) FROM metrics WHERE name = 'ref_packed_bytes'")" 0
finish

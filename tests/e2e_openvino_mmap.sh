#!/usr/bin/env bash
# OpenVINO's mmap (ENABLE_MMAP, the memory guide's first recommendation) on models with ~100 MB of weights, in both
# formats the guide names: ONNX with external data (ResNet-50, 97.7 MiB of weights) and IR (.xml + a 100 MB .bin). With
# mmap on, RssAnon after compile_model must be lower than with mmap off by at least 90% of the weight file's bytes: the
# weights stay file-backed instead of being copied to anonymous memory. SKIP (77) when OpenVINO was not fetched.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_openvino.so" ] || { echo "SKIP: engine_openvino.so not built (engines/openvino/fetch.sh)"; exit 77; }

"$bin/refengine" gen resnet50 --out "$work/r50.onnx" --image-size 32 --external-data > /dev/null
n=5000 # y = x W, W n x n f32
cat > "$work/fc.xml" <<XML
<?xml version="1.0"?>
<net name="fc" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="1,$n" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x"><dim>1</dim><dim>$n</dim></port></output>
    </layer>
    <layer id="1" name="w" type="Const" version="opset1">
      <data element_type="f32" shape="$n,$n" offset="0" size="$((n * n * 4))"/>
      <output><port id="0" precision="FP32"><dim>$n</dim><dim>$n</dim></port></output>
    </layer>
    <layer id="2" name="y" type="MatMul" version="opset1">
      <data transpose_a="false" transpose_b="false"/>
      <input><port id="0"><dim>1</dim><dim>$n</dim></port><port id="1"><dim>$n</dim><dim>$n</dim></port></input>
      <output><port id="2" precision="FP32" names="y"><dim>1</dim><dim>$n</dim></port></output>
    </layer>
    <layer id="3" name="y/sink" type="Result" version="opset1">
      <input><port id="0"><dim>1</dim><dim>$n</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
  </edges>
</net>
XML
head -c $((n * n * 4)) < <(yes '0.25') > "$work/fc.bin" # bytes of "0.25\n": finite floats

measure() { # name, model, weight file
  db="$work/$1.db"
  cat > "$work/$1.yaml" <<YAML
name: openvino-mmap-$1
engine: openvino
model: $2
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 3
warmup: 1
matrix:
  mmap: [on, off]
YAML
  set +e
  "$bin/memleak-run" --db "$db" --quiet "$work/$1.yaml" > "$work/$1.txt" 2>&1
  local code=$?
  set -e
  check "$1: both cells ran (exit 0)" eq "$code" 0
  [ "$code" -eq 0 ] || cat "$work/$1.txt"
  anon() { q "SELECT s.rss_anon_kib FROM samples s JOIN cells c ON c.id = s.cell_id
              WHERE c.axes = '{\"mmap\":\"$1\"}' AND s.phase = 'setup' AND s.step = 'compile_model'"; }
  local on off weights
  on=$(anon on) off=$(anon off) weights=$(($(stat -c %s "$3") / 1024))
  echo "$1: RssAnon after compile_model: mmap on $on KiB, off $off KiB; weights $weights KiB"
  check "$1: RssAnon after compile lower with mmap on by >= 90% of the weights ($((off - on)) of $weights KiB)" \
    test $((10 * (off - on))) -ge $((9 * weights))
}
measure onnx "$work/r50.onnx" "$work/r50.onnx.data"
measure ir "$work/fc.xml" "$work/fc.bin"
finish

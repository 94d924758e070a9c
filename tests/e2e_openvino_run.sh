#!/usr/bin/env bash
# OpenVINO end to end (engine_openvino.so, engines/openvino): a clean compile/infer/release loop passes, its outputs agree
# with the reference engine's at f32, a leak planted around OpenVINO (the species plugin) is caught while the same
# wrapper with no species passes, an OpenVINO IR model (.xml + .bin) runs, and bad options are refused at file:line:col
# before any cell runs. SKIP (77) when OpenVINO was not fetched (engines/openvino/fetch.sh; ci/setup.sh does it).
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_openvino.so" ] || { echo "SKIP: engine_openvino.so not built (engines/openvino/fetch.sh)"; exit 77; }

# A clean cell: requests created, run and released on a compiled model, weights mapped and copied. (A compile per
# iteration needs heap_sites: off to be judged clean: the shim's site sampling grows with it, engines/openvino/README.md.)
db="$work/clean.db"
cat > "$work/clean.yaml" <<'YAML'
name: openvino-clean
engine: openvino
model: {generate: mlp, mlp_hidden: 128}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 200
warmup: 10
matrix:
  mmap: [on, off]
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/clean.yaml" > "$work/clean.txt" 2>&1
code=$?
set -e
check "clean OpenVINO cells: exit 0" eq "$code" 0
check "both cells pass" eq "$(q "SELECT group_concat(status) FROM cells")" "pass,pass"
check "the release each cell loaded is recorded" \
  eq "$(q "SELECT count(DISTINCT cell_id) FROM metrics WHERE name = 'openvino_release' AND value >= 2024003000")" 2
[ "$code" -eq 0 ] || cat "$work/clean.txt"

# Its outputs are the reference engine's (f32: on a CPU with bf16, OpenVINO's default precision is bf16).
"$bin/refengine" gen transformer --out "$work/tr.onnx" --layers 1 --hidden 32 --heads 2 --seq 8 --dynamic > /dev/null
if [ -x "$MLK_BUILD_DIR/tests/opencv_crosscheck" ]; then
  check "outputs agree with ref at f32 (symbolic dims batch and seq left dynamic)" \
    "$MLK_BUILD_DIR/tests/opencv_crosscheck" --lib-dir "$MLK_BUILD_DIR/lib" --engines ref,openvino --rtol 1e-4 \
    --eopt openvino:precision=f32 "$work/tr.onnx"
  check "...and with dim.seq=5 fixing one of them" \
    "$MLK_BUILD_DIR/tests/opencv_crosscheck" --lib-dir "$MLK_BUILD_DIR/lib" --engines ref,openvino --rtol 1e-4 \
    --opt dim.seq=5 --eopt openvino:precision=f32 "$work/tr.onnx"
fi

# A leak planted around OpenVINO is caught; the same wrapper with nothing planted is not called one.
if [ -f "$MLK_BUILD_DIR/lib/engine_species.so" ]; then
  db="$work/species.db"
  cat > "$work/species.yaml" <<'YAML'
name: openvino-species
engine: species
model: {generate: mlp, mlp_hidden: 64}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 100
warmup: 10
engine_options: {inner: openvino}
matrix:
  species: [tiny, cxx_new, none]
YAML
  "$bin/memleak-run" --db "$db" --quiet "$work/species.yaml" > "$work/species.txt" 2>&1 || true
  st() { q "SELECT status FROM cells WHERE axes = '{\"species\":\"$1\"}'"; }
  check "around OpenVINO: the tiny malloc leak is caught" eq "$(st tiny)" leak
  check "around OpenVINO: the C++ new leak is caught" eq "$(st cxx_new)" leak
  check "around OpenVINO: nothing planted, no leak" test "$(st none)" = pass -o "$(st none)" = plateau
else
  echo "note: engine_species.so not built: the planted leak is not checked"
fi

# An IR model: y = x W, W 64x32 f32 in the .bin beside the .xml.
ir="$work/mm.xml"
cat > "$ir" <<'XML'
<?xml version="1.0"?>
<net name="mm" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="1,64" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x"><dim>1</dim><dim>64</dim></port></output>
    </layer>
    <layer id="1" name="w" type="Const" version="opset1">
      <data element_type="f32" shape="64,32" offset="0" size="8192"/>
      <output><port id="0" precision="FP32"><dim>64</dim><dim>32</dim></port></output>
    </layer>
    <layer id="2" name="y" type="MatMul" version="opset1">
      <data transpose_a="false" transpose_b="false"/>
      <input><port id="0"><dim>1</dim><dim>64</dim></port><port id="1"><dim>64</dim><dim>32</dim></port></input>
      <output><port id="2" precision="FP32" names="y"><dim>1</dim><dim>32</dim></port></output>
    </layer>
    <layer id="3" name="y/sink" type="Result" version="opset1">
      <input><port id="0"><dim>1</dim><dim>32</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
  </edges>
</net>
XML
head -c 8192 < <(yes '0.25') > "$work/mm.bin" # bytes of "0.25\n": finite floats
db="$work/ir.db"
sed "s|^model: .*|model: $ir|; s/^name: .*/name: openvino-ir/; s/^iterations: .*/iterations: 50/" "$work/clean.yaml" > "$work/ir.yaml"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/ir.yaml" > "$work/ir.txt" 2>&1
code=$?
set -e
check "an IR model (.xml + .bin) runs: exit 0" eq "$code" 0
check "...both cells pass" eq "$(q "SELECT group_concat(status) FROM cells")" "pass,pass"
[ "$code" -eq 0 ] || cat "$work/ir.txt"

# Bad options: refused before any cell runs, at the scenario's line and column, listing what is accepted.
refuse() { # description, the matrix line, the message expected
  printf 'name: bad\nengine: openvino\nmodel: {generate: mlp, mlp_hidden: 16}\npipeline: [compile_model, release_compiled]\niterations: 3\nmatrix:\n%s\n' \
    "$2" > "$work/bad.yaml"
  set +e
  "$bin/memleak-run" --db "$work/bad.db" "$work/bad.yaml" > "$work/bad.txt" 2>&1
  local rc=$?
  set -e
  check "$1: exit 2" eq "$rc" 2
  check "$1: at file:line:col" grep -qF "bad.yaml:7:$3" "$work/bad.txt"
  check "$1: says why" grep -qF "$4" "$work/bad.txt"
}
refuse "an unknown key" "  arena: [on]" 11: "unknown option 'arena'; accepted: mmap, threads, compile_threads, streams, hint"
refuse "a bad hint" "  hint: [latency, fastest]" 19: "option hint: 'fastest' is not latency|throughput"
refuse "a release not pinned" "  openvino.version: [2023.0.0]" 22: "OpenVINO 2023.0.0 is not fetched"
check "no cell ran for any of them" test ! -s "$work/bad.db" -o "$(sqlite3 "$work/bad.db" 'SELECT count(*) FROM cells' 2>/dev/null || echo 0)" = 0
finish

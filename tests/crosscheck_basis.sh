#!/usr/bin/env bash
# crosscheck_basis.sh: compares the reference engine with ONNX Runtime on any float16 or quantized model, with the
# tolerance set by ORT's own difference (ort_crosscheck --basis-model / --basis-nudge), chosen from what the model
# holds. It must never pick a tolerance by hand for such a model, nor write anywhere but a temporary folder.
#
# usage: tests/crosscheck_basis.sh MODEL [ort_crosscheck arguments, e.g. --opt dim.batch=1]
#   (MLK_BUILD_DIR: the build tree, default build)
# What the model holds decides (read with Debian's python3-onnx):
#   quantized (DynamicQuantizeLinear, QuantizeLinear, ConvInteger, MatMulInteger, QLinear*): ill-conditioned, as an
#     activation that lands across a rounding boundary moves a whole quantization step through every later layer;
#     D is ORT against ORT on the inputs moved the fewest float steps of 1, 2, 4, ... that move its output at all
#     (--basis-nudge auto: one step on ISNet's 3M input values, 2 on a generated 224x224 mobilenetv2, 32 on a 784-value
#     MLP), and the statistic (rtol 1e-3 of each output's max) holds ref within a factor 2 of ORT's own: at least half
#     its share of values within, at most twice its share outside and twice its mean |diff| (unless every value is
#     within): one nudge is one draw of where the boundaries fall (ORT's own figures moved by at most 18% between
#     nudges of 1, 2 and 5 steps on ISNet uint8). A second basis, ORT with graph_optimization=disable against ORT,
#     is ORT's own two readings of one quantized model (its fused integer kernels, QLinearMatMul and the like, against
#     the float QuantizeLinear/DequantizeLinear it runs unfused, as the reference engine does); an output agrees when
#     either basis accepts it. On pipecat's smart-turn-v3.2 (QDQ int8 Whisper-tiny encoder, 8 clips) the nudge moved
#     ORT by a mean 0.00023 and ref sat at 0.00115, while ORT unfused sat at 0.00091 from itself.
#   float16 (any float16 weight, Constant, Cast target or declared tensor): D is ORT on the model's float32 twin (onnx_float16_to_float32.py:
#     weights exactly widened, float32 arithmetic, every tensor the model declares float16 rounded to float16, as the
#     model and the reference engine store it) against ORT on the model; max|ref - ORT| <= 2 max D per output: ref
#     and the twin do the same arithmetic, so ref's distance from the twin is of D's order, and the triangle gives
#     2 D. --rtol 1e-6 only guards a D of 0.
#   otherwise: element-wise, rtol 1e-4 of each output's max.
# Arguments given after MODEL come later on ort_crosscheck's command line, so they override these choices.
# Exit: ort_crosscheck's (0 agree, 1 disagree, 2 error), 2 for a missing tool, 77 without ORT or python3-onnx.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
xc="$build/tests/ort_crosscheck"
py=/usr/bin/python3
model=${1:-}
if [ -z "$model" ] || [ "${model#-}" != "$model" ]; then
  sed -n '6,7p' "$0" | sed 's/^# //' >&2
  exit 2
fi
shift
[ -f "$model" ] || { echo "crosscheck_basis: $model: no such file" >&2; exit 2; }
if [ ! -x "$xc" ] || [ ! -f "$build/lib/engine_ort.so" ]; then
  echo "SKIP: $build/lib/engine_ort.so or $xc is not built (run engines/ort/fetch.sh, then cmake and build)"
  exit 77
fi
"$py" -c 'import onnx' 2>/dev/null || { echo "SKIP: python3-onnx missing for $py (Debian package python3-onnx)"; exit 77; }

kind=$("$py" - "$model" <<'PY'
import sys
import onnx
try:
    m = onnx.load(sys.argv[1], load_external_data=False)
except Exception as e:  # the message, not a traceback
    sys.exit(f"{type(e).__name__}: {e}")
quant = {"DynamicQuantizeLinear", "QuantizeLinear", "ConvInteger", "MatMulInteger", "QLinearConv", "QLinearMatMul"}
half = onnx.TensorProto.FLOAT16
def graphs(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                yield from graphs(sub)
kind = "float"
for g in graphs(m.graph):
    if any(n.op_type in quant or n.op_type.startswith("QLinear") for n in g.node):
        kind = "quantized"
        break
    typed = list(g.input) + list(g.output) + list(g.value_info)
    # float16 Constant nodes and Casts to float16 count too: exporters put a float32 model's float16 islands there
    consts = [a.t for n in g.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"]
    casts = [a.i for n in g.node if n.op_type == "Cast" for a in n.attribute if a.name == "to"]
    if any(t.data_type == half for t in list(g.initializer) + consts) or half in casts or any(
            v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.elem_type == half for v in typed):
        kind = "float16"
print(kind)
PY
) || { echo "crosscheck_basis: $model: python3-onnx cannot read it" >&2; exit 2; }

case $kind in
  quantized)
    echo "crosscheck_basis: $model is quantized: statistical, against ORT on nudged inputs or ORT unoptimized"
    exec "$xc" --basis-nudge auto --basis-ort-opt graph_optimization=disable --basis-k 2 --rtol 1e-3 --within 0 \
      "$@" "$model" ;;
  float16)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/crosscheck-basis.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    "$py" "$root/tests/onnx_float16_to_float32.py" "$model" "$tmp/twin.onnx" >&2 ||
      { echo "crosscheck_basis: $model: no float32 twin, so no float16 basis" >&2; exit 2; }
    echo "crosscheck_basis: $model is float16: within 2x ORT's own float32-twin-vs-float16 difference"
    rc=0
    "$xc" --basis-model "$tmp/twin.onnx" --basis-k 2 --rtol 1e-6 "$@" "$model" || rc=$?
    exit "$rc" ;;
  *)
    echo "crosscheck_basis: $model is float: no float16 or quantized data, so element-wise, rtol 1e-4"
    exec "$xc" --rtol 1e-4 "$@" "$model" ;;
esac

#!/usr/bin/env bash
# e2e_gen_check_model.sh: every architecture of `refengine gen`, at full default size, with and without external data,
# checked by the official ONNX checker (full_check: shape inference too), strict shape inference of the output, the
# parameter count, the external-data layout and a numpy forward pass on a uniform[-1,1] input (no inf/NaN).
# It must never leave files behind (everything lives in a mktemp dir removed on exit) nor pass when onnx is missing.
set -u

PY=/usr/bin/python3
if ! "$PY" -c "import onnx" 2>/dev/null; then
    echo "SKIP: $PY cannot import onnx (install python3-onnx)"
    exit 77
fi
BIN="${MLK_BIN_DIR:?MLK_BIN_DIR must point at the bin folder of a build}/refengine"
if [ ! -x "$BIN" ]; then
    echo "FAIL: $BIN is not built"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/e2e_gen.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# --------------------------------------------------------------------------------------------------
# The checker: one model per call. Args: model expected_output_shape expected_params external(0/1) forward(0/1)
# --------------------------------------------------------------------------------------------------
cat >"$tmp/check.py" <<'EOF'
import json, math, os, sys
import numpy as np
import onnx
from onnx import numpy_helper, shape_inference, TensorProto

path, want_shape, want_params, external, forward = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == '1', sys.argv[5] == '1'
problems = []

m = onnx.load(path)
onnx.checker.check_model(m, full_check=True)

# Strict inference with the declared output shape removed, so the shape must really be derived from the graph.
# data_prop lets Shape -> Gather -> Unsqueeze -> Concat carry values into the transformer's Reshapes.
bare = onnx.ModelProto()
bare.CopyFrom(m)
for o in bare.graph.output:
    o.type.tensor_type.ClearField('shape')
inferred = shape_inference.infer_shapes(bare, strict_mode=True, data_prop=True)
out = inferred.graph.output[0].type.tensor_type
got = [d.dim_param or d.dim_value for d in out.shape.dim] if out.HasField('shape') else None
if got != want_shape:
    problems.append('inferred output shape %s, expected %s' % (got, want_shape))
if out.elem_type != TensorProto.FLOAT:
    problems.append('output elem_type %d' % out.elem_type)

params = sum(int(np.prod(t.dims)) for t in m.graph.initializer if t.name.endswith(('.weight', '.bias')))
if params != want_params:
    problems.append('%d parameters, expected %d' % (params, want_params))

if external:
    raw = onnx.load(path, load_external_data=False)
    n_ext = 0
    for t in raw.graph.initializer:
        if t.data_location != TensorProto.EXTERNAL:
            if len(t.raw_data) >= 1024:
                problems.append('%s (%d bytes) is inline' % (t.name, len(t.raw_data)))
            continue
        kv = {e.key: e.value for e in t.external_data}
        n_ext += 1
        if kv.get('location') != os.path.basename(path) + '.data':
            problems.append('%s: location %r' % (t.name, kv.get('location')))
        if int(kv.get('offset', '0')) % 4096:
            problems.append('%s: offset %s not a multiple of 4096' % (t.name, kv.get('offset')))
    if n_ext == 0:
        problems.append('no external initializers')

def attrs(n):
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}

def windows(x, k, s, p, fill):
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])), constant_values=fill)
    return np.lib.stride_tricks.sliding_window_view(x, k, axis=(2, 3))[:, :, ::s[0], ::s[1]]

def conv(x, w, a):
    win = windows(x, a['kernel_shape'], a.get('strides', [1, 1]), a.get('pads', [0] * 4), 0)
    g = a.get('group', 1)
    if g == 1:
        return np.einsum('nchwij,mcij->nmhw', win, w, optimize=True)
    if g == x.shape[1] == w.shape[0] and w.shape[1] == 1:
        return np.einsum('nchwij,cij->nchw', win, w[:, 0], optimize=True)
    raise NotImplementedError('grouped conv')

try:
    from scipy.special import erf
except ImportError:
    erf = np.vectorize(math.erf, otypes=[np.float32])

def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b

def batch_norm(x, g, b, mean, var, eps):
    c = (1, -1, 1, 1)
    return (x - mean.reshape(c)) / np.sqrt(var.reshape(c) + eps) * g.reshape(c) + b.reshape(c)

OPS = {
    'Gemm': lambda i, a: i[0] @ (i[1].T if a.get('transB') else i[1]) + i[2],
    'Relu': lambda i, a: np.maximum(i[0], 0),
    'Softmax': lambda i, a: softmax(i[0], a.get('axis', -1)),
    'Conv': lambda i, a: conv(i[0], i[1], a),
    'BatchNormalization': lambda i, a: batch_norm(*i, a.get('epsilon', 1e-5)),
    'Clip': lambda i, a: np.clip(i[0], i[1], i[2]),
    'Add': lambda i, a: i[0] + i[1],
    'Mul': lambda i, a: i[0] * i[1],
    'Div': lambda i, a: i[0] / i[1],
    'Erf': lambda i, a: erf(i[0]),
    'GlobalAveragePool': lambda i, a: i[0].mean(axis=(2, 3), keepdims=True),
    'Flatten': lambda i, a: i[0].reshape(int(np.prod(i[0].shape[:a.get('axis', 1)])), -1),
    'MaxPool': lambda i, a: windows(i[0], a['kernel_shape'], a['strides'], a.get('pads', [0] * 4), -np.inf).max(axis=(4, 5)),
    'MatMul': lambda i, a: i[0] @ i[1],
    'Reshape': lambda i, a: i[0].reshape(i[1]),
    'Transpose': lambda i, a: i[0].transpose(a['perm']),
    'Shape': lambda i, a: np.array(i[0].shape, dtype=np.int64),
    'Gather': lambda i, a: np.take(i[0], i[1], axis=a.get('axis', 0)),
    'Unsqueeze': lambda i, a: np.expand_dims(i[0], tuple(int(v) for v in i[1])),
    'Concat': lambda i, a: np.concatenate(i, axis=a['axis']),
    'LayerNormalization': lambda i, a: layer_norm(*i, a.get('epsilon', 1e-5)),
}

if forward:
    env = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    inp = m.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    env[inp.name] = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
    peak = 0.0
    for n in m.graph.node:
        y = OPS[n.op_type]([env[x] for x in n.input], attrs(n))
        if y.dtype == np.float64:
            y = y.astype(np.float32)
        if y.dtype == np.float32:
            if not np.isfinite(y).all():
                problems.append('non-finite values from node %s (%s)' % (n.name, n.op_type))
                break
            peak = max(peak, float(np.abs(y).max()))
        env[n.output[0]] = y
    y = env[m.graph.output[0].name]
    if list(y.shape) != want_shape:
        problems.append('forward output shape %s, expected %s' % (list(y.shape), want_shape))
    print('  forward: output std %.3g, max |activation| %.3g' % (float(y.std()), peak))

for p in problems:
    print('  problem:', p)
sys.exit(1 if problems else 0)
EOF

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# --------------------------------------------------------------------------------------------------
# Every architecture at its default size, inline and with external data.
# --------------------------------------------------------------------------------------------------
#        arch         output shape      parameters (torchvision's counts for the CNNs)
models="mlp          [1,10]            2913290
mobilenetv2          [1,1000]          3504872
resnet18             [1,1000]          11689512
resnet50             [1,1000]          25557032
transformer          [1,128,256]       3159040"

while read -r arch shape params; do
    for ext in 0 1; do
        f="$tmp/$arch$([ $ext = 1 ] && echo _ext).onnx"
        flags=""
        [ $ext = 1 ] && flags="--external-data"
        if ! summary=$("$BIN" gen "$arch" --out "$f" $flags 2>&1); then
            fail "refengine gen $arch $flags: $summary"
            continue
        fi
        echo "$summary"
        if [ $ext = 1 ]; then
            echo "  files: $(size_of "$f") + $(size_of "$f.data") bytes"
        else
            echo "  file: $(size_of "$f") bytes"
        fi
        # The numpy forward pass runs on the inline copy only: the weights are the same bytes.
        "$PY" "$tmp/check.py" "$f" "$shape" "$params" $ext $((1 - ext)) || fail "$arch $flags: check failed"
        rm -f "$f" "$f.data"
    done
done <<<"$models"

# --------------------------------------------------------------------------------------------------
# Symbolic dims, determinism.
# --------------------------------------------------------------------------------------------------
"$BIN" gen transformer --out "$tmp/dyn.onnx" --dynamic --layers 1 >/dev/null &&
    "$PY" "$tmp/check.py" "$tmp/dyn.onnx" '["batch","seq",256]' 789760 0 0 || fail "transformer --dynamic"
"$BIN" gen resnet18 --out "$tmp/dyn.onnx" --dynamic --image-size 64 >/dev/null &&
    "$PY" "$tmp/check.py" "$tmp/dyn.onnx" '["batch",1000]' 11689512 0 0 || fail "resnet18 --dynamic"

# Same file name in three folders, so even the data file's name recorded in the graph is the same.
for run in a:7 b:7 c:8; do
    mkdir -p "$tmp/${run%:*}"
    "$BIN" gen mobilenetv2 --out "$tmp/${run%:*}/m.onnx" --seed "${run#*:}" --width-mult 0.5 --external-data \
        >/dev/null || fail "mobilenetv2 --seed ${run#*:}"
done
cmp -s "$tmp/a/m.onnx" "$tmp/b/m.onnx" || fail "same seed gave a different graph file"
cmp -s "$tmp/a/m.onnx.data" "$tmp/b/m.onnx.data" || fail "same seed gave different weights"
cmp -s "$tmp/a/m.onnx.data" "$tmp/c/m.onnx.data" && fail "different seeds gave the same weights"

# --------------------------------------------------------------------------------------------------
# Usage errors exit 2 and name the culprit; failures exit 1; --help exits 0.
# --------------------------------------------------------------------------------------------------
expect() {
    local code=$1 needle=$2
    shift 2
    local out rc
    out=$("$BIN" gen "$@" 2>&1)
    rc=$?
    [ $rc = "$code" ] || fail "refengine gen $*: exit $rc, expected $code ($out)"
    case "$out" in *"$needle"*) ;; *) fail "refengine gen $*: output does not mention '$needle': $out" ;; esac
}
expect 2 vgg16 vgg16 --out "$tmp/x.onnx"
expect 2 "--out" mlp
expect 2 abc mlp --out "$tmp/x.onnx" --batch abc
expect 2 batch mlp --out "$tmp/x.onnx" --batch 0
expect 2 "--bogus" mlp --out "$tmp/x.onnx" --bogus
expect 2 heads transformer --out "$tmp/x.onnx" --heads 3
expect 2 "--seed" mlp --out "$tmp/x.onnx" --seed
expect 1 "/nonexistent-dir/x.onnx" mlp --out /nonexistent-dir/x.onnx
expect 0 "--external-data" --help
[ -e "$tmp/x.onnx" ] && fail "a usage error wrote a file"

if [ $failures -gt 0 ]; then
    echo "e2e_gen_check_model: $failures failure(s)"
    exit 1
fi
echo "e2e_gen_check_model: all checks passed"

#!/usr/bin/python3
"""qoperator_models.py: writes small int8/uint8 models in ONNX Runtime's QOperator format (the com.microsoft
contrib operators quantize_static and quantize_dynamic emit: QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearWhere, QGemm,
MatMulIntegerToFloat, DynamicQuantizeMatMul, com.microsoft QuantizeLinear/DequantizeLinear/QLinearConv) with
seeded random weights, for comparing the reference engine with ONNX Runtime. Test-only (python3-onnx, Debian's
python3); it must never write outside OUT_DIR.

usage: /usr/bin/python3 tests/qoperator_models.py OUT_DIR
Writes cnn-u8.onnx, cnn-s8.onnx (a residual conv net ending in quantized outputs), gemm-u8.onnx (QGemm both ways),
dyn-mm.onnx (the dynamic-quantization products, float output), softmax.onnx (QLinearSoftmax three ways,
QLinearWhere), pool-u8.onnx (QLinearAveragePool geometries), binary.onnx (QLinearAdd/Mul broadcasting at five
scale sets), resize-q8.onnx and resize3-q8.onnx (bi- and trilinear Resize on uint8 and int8). Exit: 0 written,
2 usage.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


class Builder:
    def __init__(self, rng):
        self.rng, self.inits, self.nodes, self.n = rng, [], [], 0

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def qparams(self, name, scale, zp, dt):
        return self.const(name + "_s", np.float32(scale)), self.const(name + "_z", np.asarray(zp, dtype=dt))

    def node(self, op, ins, domain=MS, **attrs):
        self.n += 1
        out = "t%d" % self.n
        self.nodes.append(helper.make_node(op, ins, [out], name="%s_%d" % (op, self.n), domain=domain, **attrs))
        return out


def cnn(signed):
    """QuantizeLinear -> QLinearConv -> MaxPool -> QLinearConv -> QLinearAdd (residual) -> QLinearLeakyRelu ->
    QLinearAveragePool -> QLinearGlobalAveragePool, QLinearSigmoid -> QLinearConcat -> QLinearMul (broadcast) ->
    DequantizeLinear; beside them a channels_last global pool and a Flatten -> QGemm head."""
    dt = np.int8 if signed else np.uint8
    zp_act = 0 if signed else 128
    b = Builder(np.random.default_rng(7 + signed))
    r = b.rng
    xs, xz = b.qparams("x", 2.0 / 255, zp_act, dt)
    q = b.node("QuantizeLinear", ["x", xs, xz])  # com.microsoft's
    w1 = b.const("w1", r.integers(-60, 61, size=(8, 3, 3, 3)).astype(np.int8))
    w1s = b.const("w1_s", (r.uniform(0.5, 1.5, size=8) * 0.01).astype(np.float32))  # per output channel
    w1z = b.const("w1_z", np.zeros(8, dtype=np.int8))
    bias1 = b.const("b1", r.integers(-300, 300, size=8).astype(np.int32))
    y1s, y1z = b.qparams("y1", 0.04, zp_act, dt)
    # the first conv in com.microsoft's registration of QLinearConv (ORT has both), the second in the default domain
    c1 = b.node("QLinearConv", [q, xs, xz, w1, w1s, w1z, y1s, y1z, bias1], pads=[1, 1, 1, 1])
    mp = b.node("MaxPool", [c1], domain="", kernel_shape=[3, 3], pads=[1, 1, 1, 1])  # on 8-bit, as ORT leaves it
    w2 = b.const("w2", r.integers(-60, 61, size=(8, 8, 3, 3)).astype(np.int8))
    w2s, w2z = b.qparams("w2", 0.006, 0, np.int8)
    y2s, y2z = b.qparams("y2", 0.05, zp_act + 3, dt)
    c2 = b.node("QLinearConv", [mp, y1s, y1z, w2, w2s, w2z, y2s, y2z], domain="", pads=[1, 1, 1, 1])
    as_, az = b.qparams("add", 0.07, zp_act - 5, dt)
    add = b.node("QLinearAdd", [c2, y2s, y2z, c1, y1s, y1z, as_, az])
    ls, lz = b.qparams("lrelu", 0.06, zp_act - 40, dt)
    lr = b.node("QLinearLeakyRelu", [add, as_, az, ls, lz], alpha=0.1)
    ps, pz = b.qparams("pool", 0.05, zp_act - 30, dt)
    ap = b.node("QLinearAveragePool", [lr, ls, lz, ps, pz], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                count_include_pad=0)
    gs, gz = b.qparams("gap", 0.02, zp_act, dt)
    gap = b.node("QLinearGlobalAveragePool", [ap, ps, pz, gs, gz], channels_last=0)
    ss, sz = b.qparams("sig", 1.0 / 256, -128 if signed else 0, dt)
    sig = b.node("QLinearSigmoid", [gap, gs, gz, ss, sz])
    cs, cz = b.qparams("cat", 0.015, zp_act - 60, dt)
    cat = b.node("QLinearConcat", [cs, cz, gap, gs, gz, sig, ss, sz, gap, cs, cz], axis=1)
    ms, mz = b.qparams("mul", 0.003, zp_act - 100, dt)
    k = b.const("k", r.integers(-128 if signed else 0, 128 if signed else 256, size=(24, 1, 1)).astype(dt))
    ks, kz = b.qparams("k", 0.02, zp_act - 7, dt)
    mul = b.node("QLinearMul", [cat, cs, cz, k, ks, kz, ms, mz])  # [1,24,1,1] x [24,1,1]: broadcast
    deq = b.node("DequantizeLinear", [mul, ms, mz])  # com.microsoft's
    nhwc = b.node("Transpose", [lr], domain="", perm=[0, 2, 3, 1])
    gls, glz = b.qparams("gap_last", 0.03, zp_act - 20, dt)
    gap_last = b.node("QLinearGlobalAveragePool", [nhwc, ls, lz, gls, glz], channels_last=1)
    flat = b.node("Flatten", [gap], domain="")
    fw = b.const("fw", r.integers(-127, 128, size=(4, 8)).astype(np.int8))
    fws, fwz = b.qparams("fw", 0.01, 0, np.int8)
    fys, fyz = b.qparams("fy", 0.02, zp_act, dt)
    fc = b.node("QGemm", [flat, gs, gz, fw, fws, fwz, "", fys, fyz], transB=1)
    elem = TensorProto.INT8 if signed else TensorProto.UINT8
    # every quantized op's output is a graph output too, so each is compared element by element
    return b, [("x", TensorProto.FLOAT, [2, 3, 16, 16])], [(mul, elem, None), (deq, TensorProto.FLOAT, None)] + [
        (t, elem, None) for t in (q, add, lr, ap, gap, sig, cat, gap_last, fc)]


def gemm():
    b = Builder(np.random.default_rng(11))
    r = b.rng
    xs, xz = b.qparams("x", 4.0 / 255, 128, np.uint8)
    q = b.node("QuantizeLinear", ["x", xs, xz], domain="")
    w = b.const("w", r.integers(-100, 101, size=(24, 32)).astype(np.int8))  # [N, K], transB
    ws = b.const("w_s", (r.uniform(0.5, 1.5, size=24) * 0.004).astype(np.float32))
    wz = b.const("w_z", np.zeros(24, dtype=np.int8))
    bias = b.const("c", r.integers(-2000, 2000, size=24).astype(np.int32))
    ys, yz = b.qparams("y", 0.05, 120, np.uint8)
    g1 = b.node("QGemm", [q, xs, xz, w, ws, wz, bias, ys, yz], transB=1, alpha=1.0)
    w2 = b.const("w2", r.integers(0, 256, size=(24, 10)).astype(np.uint8))
    w2s, w2z = b.qparams("w2", 0.003, 131, np.uint8)
    g2 = b.node("QGemm", [g1, ys, yz, w2, w2s, w2z], alpha=0.5)  # float output, no C
    return b, [("x", TensorProto.FLOAT, [5, 32])], [(g1, TensorProto.UINT8, None), (g2, TensorProto.FLOAT, None)]


def dyn():
    b = Builder(np.random.default_rng(13))
    r = b.rng
    w = b.const("w", r.integers(-127, 128, size=(32, 16)).astype(np.int8))
    ws = b.const("w_s", (r.uniform(0.5, 1.5, size=16) * 0.01).astype(np.float32))
    bias = b.const("bias", r.normal(size=16).astype(np.float32))
    d = b.node("DynamicQuantizeMatMul", ["x", w, ws, "", bias])
    qa = helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xq_s", "xq_z"], name="dql")
    b.nodes.append(qa)
    w2 = b.const("w2", r.integers(0, 256, size=(32, 16)).astype(np.uint8))
    w2s, w2z = b.qparams("w2", 0.01, 140, np.uint8)
    m = b.node("MatMulIntegerToFloat", ["xq", w2, "xq_s", w2s, "xq_z", w2z, bias])
    return b, [("x", TensorProto.FLOAT, [2, 3, 32])], [(d, TensorProto.FLOAT, None), (m, TensorProto.FLOAT, None)]


def softmax():
    """QLinearSoftmax as quantize_static writes it (opset 13, y_scale 1/256): uint8 over the last axis, int8 over a
    middle axis (ORT transposes), and opset 12's flattening; QLinearWhere picks between the input and a softmax."""
    b = Builder(np.random.default_rng(17))
    xs, xz = b.qparams("x", 0.05, 128, np.uint8)
    q = b.node("QuantizeLinear", ["x", xs, xz], domain="")
    ys, yz = b.qparams("y", 1.0 / 256, 0, np.uint8)
    s1 = b.node("QLinearSoftmax", [q, xs, xz, ys, yz], opset=13, axis=-1)
    s2 = b.node("QLinearSoftmax", [q, xs, xz, ys, yz], opset=12, axis=1)
    x8s, x8z = b.qparams("x8", 0.04, 0, np.int8)
    q8 = b.node("QuantizeLinear", ["x", x8s, x8z], domain="")
    y8s, y8z = b.qparams("y8", 1.0 / 256, -128, np.int8)
    s3 = b.node("QLinearSoftmax", [q8, x8s, x8z, y8s, y8z], opset=13, axis=1)
    cond = b.node("Less", ["x", b.const("zero", np.zeros((1, 6), np.float32))], domain="")
    zs, zz = b.qparams("z", 0.03, 100, np.uint8)
    w = b.node("QLinearWhere", [cond, q, xs, xz, s1, ys, yz, zs, zz])
    return b, [("x", TensorProto.FLOAT, [2, 5, 6])], [(s1, TensorProto.UINT8, None), (s2, TensorProto.UINT8, None),
                                                      (s3, TensorProto.INT8, None), (w, TensorProto.UINT8, None)]


def pools():
    """QLinearAveragePool's geometry: ceil_mode with pads counted, SAME_UPPER, channels_last, a kernel covering the
    image (ORT runs it as the global pool), and 1-D with uneven pads."""
    b = Builder(np.random.default_rng(19))
    xs, xz = b.qparams("x", 0.05, 128, np.uint8)
    ys, yz = b.qparams("y", 0.03, 120, np.uint8)
    q = b.node("QuantizeLinear", ["x", xs, xz], domain="")
    prm = [xs, xz, ys, yz]
    p1 = b.node("QLinearAveragePool", [q] + prm, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, count_include_pad=1)
    p2 = b.node("QLinearAveragePool", [q] + prm, kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    t = b.node("Transpose", [q], domain="", perm=[0, 2, 3, 1])
    p3 = b.node("QLinearAveragePool", [t] + prm, kernel_shape=[3, 3], pads=[1, 1, 1, 1], channels_last=1)
    p4 = b.node("QLinearAveragePool", [q] + prm, kernel_shape=[7, 8])
    q1 = b.node("Reshape", [q, b.const("shape", np.array([2, 3, 56], np.int64))], domain="")
    p5 = b.node("QLinearAveragePool", [q1] + prm, kernel_shape=[4], strides=[3], pads=[2, 1])
    return b, [("x", TensorProto.FLOAT, [2, 3, 7, 8])], [(o, TensorProto.UINT8, None) for o in (p1, p2, p3, p4, p5)]


def binary():
    """QLinearAdd and QLinearMul of an input and a per-row constant (ORT's kernel takes each row's one value as a
    scalar, whose float32 sum order differs), and QLinearAdd of the input with itself, at five scale sets, uint8 and
    int8. The int8 ones at (0.007, 0.03, 0.05) and (0.013, 0.009, 0.0004) found a step's difference on 2 of 4000
    values in kernels that rounded plain products and sums."""
    b = Builder(np.random.default_rng(23))
    k = b.const("k", np.array([[0.3], [-0.7], [1.1], [0.05]], np.float32))
    sets = [(0.01, 0.02, 0.015, 100, np.uint8), (0.007, 0.03, 0.05, -3, np.int8), (0.013, 0.009, 0.0004, 7, np.int8),
            (0.02, 0.02, 0.02, 128, np.uint8), (0.004, 0.011, 0.00007, 130, np.uint8)]
    outs = []
    for i, (xs, ks, cs, cz, dt) in enumerate(sets):
        u8 = dt == np.uint8
        x = b.qparams("x%d" % i, xs, 128 if u8 else 0, dt)
        kq = b.qparams("k%d" % i, ks, 5 if u8 else -5, dt)
        c = b.qparams("c%d" % i, cs, cz, dt)
        q = b.node("QuantizeLinear", ["x", *x], domain="")
        qk = b.node("QuantizeLinear", [k, *kq], domain="")
        elem = TensorProto.UINT8 if u8 else TensorProto.INT8
        outs += [(b.node("QLinearAdd", [q, *x, qk, *kq, *c]), elem, None),
                 (b.node("QLinearMul", [q, *x, qk, *kq, *c]), elem, None),
                 (b.node("QLinearAdd", [q, *x, q, *x, *c]), elem, None)]
    return b, [("x", TensorProto.FLOAT, [4, 1000])], outs


def resize(trilinear):
    """Resize in linear mode on uint8 and int8 (QOperator models resize 8-bit tensors; ORT computes float32 weights
    and truncates). Bilinear: up, down and fractional scales, a sizes input, four coordinate modes, NCHW and rank 2;
    trilinear: ranks 5 and 3."""
    b = Builder(np.random.default_rng(29))
    empty = b.const("roi", np.zeros(0, np.float32))
    cases = [([1, 1, 2, 2], "half_pixel"), ([1, 1, 1.7, 2.3], "align_corners"), ([1, 1, 0.6, 1.5], "asymmetric"),
             ([1, 1, 3, 0.75], "pytorch_half_pixel"), ([1, 1, 1.25, 1], "half_pixel")]
    outs = []
    for dt, zp, elem in ((np.uint8, 128, TensorProto.UINT8), (np.int8, 0, TensorProto.INT8)):
        xs, xz = b.qparams("x%d" % zp, 0.02, zp, dt)
        q = b.node("QuantizeLinear", ["x", xs, xz], domain="")
        if trilinear:
            vol = b.node("Reshape", [q, b.const("vshape%d" % zp, np.array([1, 3, 2, 4, 7], np.int64))], domain="")
            s5 = b.const("s5_%d" % zp, np.array([1, 1, 2.5, 0.75, 1.3], np.float32))
            outs.append((b.node("Resize", [vol, empty, s5], domain="", mode="linear"), elem, None))
            v3 = b.node("Reshape", [q, b.const("v3shape%d" % zp, np.array([3, 8, 7], np.int64))], domain="")
            s3 = b.const("s3_%d" % zp, np.array([1.7, 0.5, 2], np.float32))
            outs.append((b.node("Resize", [v3, empty, s3], domain="", mode="linear",
                                coordinate_transformation_mode="pytorch_half_pixel"), elem, None))
            continue
        for i, (sc, ctm) in enumerate(cases):
            s = b.const("s%d_%d" % (zp, i), np.array(sc, np.float32))
            outs.append((b.node("Resize", [q, empty, s], domain="", mode="linear",
                                coordinate_transformation_mode=ctm), elem, None))
        sz = b.const("sz%d" % zp, np.array([1, 3, 9, 5], np.int64))
        outs.append((b.node("Resize", [q, empty, "", sz], domain="", mode="linear"), elem, None))
        flat = b.node("Reshape", [q, b.const("shape%d" % zp, np.array([21, 8], np.int64))], domain="")
        s2 = b.const("s2_%d" % zp, np.array([1.5, 2.5], np.float32))
        outs.append((b.node("Resize", [flat, empty, s2], domain="", mode="linear",
                            coordinate_transformation_mode="align_corners"), elem, None))
    return b, [("x", TensorProto.FLOAT, [1, 3, 7, 8])], outs


def save(b, inputs, outputs, path):
    g = helper.make_graph(b.nodes, os.path.basename(path),
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)],
                          producer_name="memleak tests/qoperator_models.py")
    m.ir_version = 7
    onnx.save(m, path)


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__.split("usage: ")[1].split("\n")[0], file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(*cnn(False), os.path.join(out, "cnn-u8.onnx"))
    save(*cnn(True), os.path.join(out, "cnn-s8.onnx"))
    save(*gemm(), os.path.join(out, "gemm-u8.onnx"))
    save(*dyn(), os.path.join(out, "dyn-mm.onnx"))
    save(*softmax(), os.path.join(out, "softmax.onnx"))
    save(*pools(), os.path.join(out, "pool-u8.onnx"))
    save(*binary(), os.path.join(out, "binary.onnx"))
    save(*resize(False), os.path.join(out, "resize-q8.onnx"))
    save(*resize(True), os.path.join(out, "resize3-q8.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

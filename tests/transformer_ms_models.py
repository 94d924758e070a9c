#!/usr/bin/python3
"""transformer_ms_models.py: writes small models with the fused operators ONNX Runtime's transformer optimizer puts
into published BERT-like models (com.microsoft EmbedLayerNormalization, Attention, MultiHeadAttention, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
FastGelu, BiasGelu, Gelu, QuickGelu; SimplifiedLayerNormalization and ONNX Gelu in the default domain), each in
float32 and in float16 (weights, inputs and outputs), with seeded random weights, for comparing the reference engine
with ONNX Runtime. Test-only (Debian's python3-onnx); it must never write outside OUT_DIR.

usage: /usr/bin/python3 tests/transformer_ms_models.py OUT_DIR
Writes encoder.onnx and encoder-f16.onnx (int32 input_ids, segment_ids and mask [batch, seq]: EmbedLayerNormalization,
then two encoder layers of Attention (the first with the mask index, the second with the raw mask),
SkipLayerNormalization, FastGelu with bias, BiasGelu, then the other norms and activations), causal.onnx
and causal-f16.onnx (unidirectional Attention with qkv_hidden_sizes and an attention bias), fused.onnx (float32 only,
as ORT runs these on CPU: FusedConv with each activation and a Z input, FusedGemm, FusedMatMul with alpha and transA
or transB; input x [batch, 3, 12, 12], run it with batch 3), mha.onnx and mha-f16.onnx (MultiHeadAttention across
x [batch, seq, 32] and mem [batch, mlen, 32] with a bias and an int32 key padding mask, then causal self-attention
with an attention bias ab [1, 2, seq, seq]), nbits.onnx (MatMulNBits on x [batch, seq, 40]: 4-bit blocks of 16 with
packed, default and float zero points, 4-bit blocks of 32, 8-bit blocks, a partial last block, biases), qattention.onnx
(DynamicQuantizeLinear then QAttention, as quantize_dynamic writes it: int8 weights per tensor and per column, uint8
weights, an int32 mask). Exit: 0 written, 2 usage.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
D, HEADS, FF = 32, 4, 64


def encoder(rng):
    inits, nodes = [], []

    def const(name, *shape, scale=0.3):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    nodes.append(helper.make_node("EmbedLayerNormalization",
                                  ["input_ids", "segment_ids", const("word", 6, D), const("pos", 20, D),
                                   const("seg", 4, D), const("eg", D, scale=1.0), const("eb", D, scale=0.1), "mask"],
                                  ["x", "mask_index"], domain=MS, epsilon=1e-5))
    h = "x"
    for layer in range(2):
        p = "l%d_" % layer
        nodes.append(helper.make_node("Attention", [h, const(p + "qkv_w", D, 3 * D), const(p + "qkv_b", 3 * D, scale=0.1),
                                                    "mask_index" if layer == 0 else "mask"], [p + "att"], domain=MS,
                                      num_heads=HEADS))
        nodes.append(helper.make_node("MatMul", [p + "att", const(p + "o_w", D, D)], [p + "o"]))
        nodes.append(helper.make_node("SkipLayerNormalization", [p + "o", h, const(p + "g1", D, scale=1.0),
                                                                 const(p + "b1", D, scale=0.1),
                                                                 const(p + "ob", D, scale=0.1)],
                                      [p + "ln1"], domain=MS, epsilon=1e-5))
        nodes.append(helper.make_node("MatMul", [p + "ln1", const(p + "f1_w", D, FF)], [p + "f1"]))
        gelu = "FastGelu" if layer == 0 else "BiasGelu"
        nodes.append(helper.make_node(gelu, [p + "f1", const(p + "f1_b", FF, scale=0.1)], [p + "act"], domain=MS))
        nodes.append(helper.make_node("MatMul", [p + "act", const(p + "f2_w", FF, D, scale=0.2)], [p + "f2"]))
        nodes.append(helper.make_node("SkipLayerNormalization", [p + "f2", p + "ln1", const(p + "g2", D, scale=1.0),
                                                                 const(p + "b2", D, scale=0.1)],
                                      [p + "out"], domain=MS, epsilon=1e-5))
        h = p + "out"
    nodes.append(helper.make_node("Gelu", [h], ["g"], domain=MS))
    nodes.append(helper.make_node("QuickGelu", ["g"], ["q"], domain=MS, alpha=1.5))
    nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", ["q", h, const("g3", D, scale=1.0)], ["s"],
                                  domain=MS, epsilon=1e-6))
    nodes.append(helper.make_node("SimplifiedLayerNormalization", ["s", const("g4", D, scale=1.0)], ["r"],
                                  epsilon=1e-6))
    nodes.append(helper.make_node("Gelu", ["r"], ["y"], approximate="tanh"))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32, ["batch", "seq"])
              for n in ("input_ids", "segment_ids", "mask")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("mask_index", TensorProto.INT32, None)]
    return helper.make_graph(nodes, "encoder", inputs, outputs, inits)


def causal(rng):
    w = numpy_helper.from_array((rng.standard_normal([D, 80]) * 0.3).astype(np.float32), "w")
    b = numpy_helper.from_array((rng.standard_normal([80]) * 0.1).astype(np.float32), "b")
    node = helper.make_node("Attention", ["x", "w", "b", "", "", "ab"], ["y"], domain=MS, num_heads=HEADS,
                            unidirectional=1, qkv_hidden_sizes=[32, 32, 16])
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", D]),
              helper.make_tensor_value_info("ab", TensorProto.FLOAT, [1, HEADS, "seq", "seq"])]
    return helper.make_graph([node], "causal", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                             [w, b])


def fused(rng):
    def c(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [c("w1", 8, 3, 3, 3), c("b1", 8, scale=0.1), c("w2", 8, 8, 3, 3), c("b2", 8, scale=0.1),
             c("w3", 8, 8, 1, 1), c("gw", 10, 8 * 36), c("gb", 10, scale=0.1), c("mb", 2, 3, 12),
             numpy_helper.from_array(np.array([0], dtype=np.int64), "ax")]
    nodes = [
        helper.make_node("FusedConv", ["x", "w1", "b1"], ["c1"], domain=MS, activation="Relu", pads=[1, 1, 1, 1],
                         strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("FusedConv", ["c1", "w2", "b2"], ["c2"], domain=MS, activation="LeakyRelu",
                         activation_params=[0.2], pads=[1, 1, 1, 1]),
        helper.make_node("FusedConv", ["c2", "w3", "", "c1"], ["c3"], domain=MS, activation="Sigmoid"),
        helper.make_node("FusedConv", ["c3", "w3"], ["c4"], domain=MS, activation="Clip", activation_params=[0.1, 0.6]),
        helper.make_node("FusedConv", ["c4", "w3"], ["c5"], domain=MS, activation="HardSigmoid",
                         activation_params=[0.3, 0.4]),
        helper.make_node("Flatten", ["c5"], ["f"]),
        helper.make_node("FusedGemm", ["f", "gw", "gb"], ["g"], domain=MS, transB=1, activation="LeakyRelu",
                         activation_alpha=0.1),
        helper.make_node("Unsqueeze", ["g", "ax"], ["g3"]),
        helper.make_node("FusedMatMul", ["g3", "mb"], ["m1"], domain=MS, alpha=0.5, transA=1),
        helper.make_node("FusedMatMul", ["m1", "m1"], ["y"], domain=MS, transB=1, alpha=2.0),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 12, 12])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("c3", TensorProto.FLOAT, None)]
    return helper.make_graph(nodes, "fused", inputs, outputs, inits)


def mha(rng):
    def c(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"]), helper.make_node("MatMul", ["mem", "wk"], ["k"]),
             helper.make_node("MatMul", ["mem", "wv"], ["v"]),
             helper.make_node("MultiHeadAttention", ["q", "k", "v", "b", "kpm"], ["y1"], domain=MS, num_heads=HEADS),
             helper.make_node("MultiHeadAttention", ["y1", "y1", "y1", "", "", "ab"], ["y"], domain=MS, num_heads=2,
                              unidirectional=1)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", D]),
              helper.make_tensor_value_info("mem", TensorProto.FLOAT, ["batch", "mlen", D]),
              helper.make_tensor_value_info("kpm", TensorProto.INT32, ["batch", "mlen"]),
              helper.make_tensor_value_info("ab", TensorProto.FLOAT, [1, 2, "seq", "seq"])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("y1", TensorProto.FLOAT, None)]
    return helper.make_graph(nodes, "mha", inputs, outputs,
                             [c("wq", D, D), c("wk", D, D), c("wv", D, 16), c("b", 2 * D + 16, scale=0.1)])


def nbits(rng):
    nodes, inits, outs = [], [], []

    def one(name, K, N, bs, bits, zp_kind, bias):
        nb = (K + bs - 1) // bs
        w = (rng.standard_normal([N, nb * bs]) * 0.2).astype(np.float32)
        w[:, K:] = 0
        wb = w.reshape(N, nb, bs)
        qmax = (1 << bits) - 1
        lo, hi = np.minimum(wb.min(2), 0), np.maximum(wb.max(2), 0)
        scale = ((hi - lo) / qmax).astype(np.float32)
        scale[scale == 0] = 1
        zp = np.full([N, nb], 1 << (bits - 1)) if zp_kind == "none" else \
            np.clip(np.round(-lo / scale), 0, qmax).astype(np.int64)
        q = np.clip(np.round(wb / scale[:, :, None]) + zp[:, :, None], 0, qmax).astype(np.uint8)
        blob = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8) if bits == 4 else q
        inits.extend([numpy_helper.from_array(blob, name + "_B"), numpy_helper.from_array(scale.reshape(-1), name + "_s")])
        ins = ["x", name + "_B", name + "_s", ""]
        if zp_kind == "packed":
            pad = np.zeros([N, (nb + 1) // 2 * 2], np.uint8)
            pad[:, :nb] = zp
            zpk = (pad[:, 0::2] | (pad[:, 1::2] << 4)).astype(np.uint8) if bits == 4 else zp.astype(np.uint8)
            inits.append(numpy_helper.from_array(zpk.reshape(-1), name + "_z"))
            ins[3] = name + "_z"
        elif zp_kind == "float":
            inits.append(numpy_helper.from_array(zp.astype(np.float32).reshape(-1), name + "_z"))
            ins[3] = name + "_z"
        if bias:
            ins += ["", name + "_bias"]
            inits.append(numpy_helper.from_array((rng.standard_normal(N) * 0.1).astype(np.float32), name + "_bias"))
        nodes.append(helper.make_node("MatMulNBits", ins, [name + "_y"], domain=MS, K=K, N=N, bits=bits, block_size=bs))
        outs.append(helper.make_tensor_value_info(name + "_y", TensorProto.FLOAT, None))

    one("a", 40, 24, 16, 4, "packed", True)
    one("b", 40, 12, 32, 4, "none", False)
    one("c", 40, 20, 16, 8, "packed", True)
    one("d", 40, 8, 16, 4, "float", False)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 40])]
    return helper.make_graph(nodes, "nbits", inputs, outs, inits)


def qattention(rng):
    w = (rng.standard_normal([D, 3 * D]) * 0.3).astype(np.float32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])]
    inits, outs = [], []
    for name, per_col, unsigned in (("a", False, False), ("b", True, False), ("c", False, True)):
        ws = (np.abs(w).max(0) if per_col else np.abs(w).max()) / 127
        ws = np.asarray(ws, np.float32)
        q = np.round(w / ws)
        wq = (np.clip(q + 128, 0, 255).astype(np.uint8) if unsigned else np.clip(q, -127, 127).astype(np.int8))
        wz = np.full(ws.shape, 128 if unsigned else 0, np.uint8 if unsigned else np.int8)
        inits += [numpy_helper.from_array(wq, name + "_w"), numpy_helper.from_array(ws, name + "_ws"),
                  numpy_helper.from_array(wz, name + "_wz"),
                  numpy_helper.from_array((rng.standard_normal(3 * D) * 0.1).astype(np.float32), name + "_b")]
        nodes.append(helper.make_node("QAttention", ["xq", name + "_w", name + "_b", "xs", name + "_ws", "mask", "xz",
                                                     name + "_wz"], [name + "_y"], domain=MS, num_heads=HEADS))
        outs.append(helper.make_tensor_value_info(name + "_y", TensorProto.FLOAT, None))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", D]),
              helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "seq"])]
    return helper.make_graph(nodes, "qattention", inputs, outs, inits)


def save(graph, path, half):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid(MS, 1)])
    m.ir_version = 9
    if half:
        for t in m.graph.initializer:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
        for v in list(m.graph.input) + list(m.graph.output):
            if v.type.tensor_type.elem_type == TensorProto.FLOAT:
                v.type.tensor_type.elem_type = TensorProto.FLOAT16
    onnx.save(m, path)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, build, seed in (("encoder", encoder, 7), ("causal", causal, 8), ("fused", fused, 9), ("mha", mha, 10), ("nbits", nbits, 11),
                              ("qattention", qattention, 12)):
        for half in (False, True) if name not in ("fused", "nbits", "qattention") else (False,):
            save(build(np.random.default_rng(seed)), os.path.join(out, name + ("-f16" if half else "") + ".onnx"),
                 half)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""qdq_models.py: writes small models in the QDQ format ONNX Runtime's quantize_static emits (QuantizeLinear /
DequantizeLinear pairs around float Conv and MatMul, uint8 activations, int8 per-channel weights, int32 biases at
the input's times the weights' scale), with seeded random weights, for comparing the reference engine with ONNX
Runtime. Test-only (Debian's python3-onnx); it must never write outside OUT_DIR.

usage: /usr/bin/python3 tests/qdq_models.py OUT_DIR
Writes conv.onnx (input x [batch, 3, h, w]: three convolutions, the first two through a Relu before their
QuantizeLinear, then GlobalAveragePool; outputs the pooled values and the last dequantized activation) and
matmul.onnx (input x [batch, seq, 32]: two MatMuls sharing one dequantized input, per-column and per-tensor
weights, a bias Add, Softmax between Q/DQ pairs). Exit: 0 written, 2 usage.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Q:
    def __init__(self, rng):
        self.rng, self.inits, self.nodes = rng, [], []

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def qdq(self, x, name, scale, zp):
        s, z = self.const(name + "_s", np.float32(scale)), self.const(name + "_z", np.uint8(zp))
        self.nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name + "_q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"]))
        return name + "_dq", np.float32(scale)

    def weights(self, name, w, axis):
        """w quantized symmetric int8 per slice along axis, dequantized by a DequantizeLinear."""
        red = tuple(i for i in range(w.ndim) if i != axis)
        sw = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / sw.reshape(shape)), -127, 127).astype(np.int8)
        self.nodes.append(helper.make_node("DequantizeLinear", [self.const(name + "_wq", wq), self.const(name + "_ws", sw),
                                                                self.const(name + "_wz", np.zeros(len(sw), np.int8))],
                                           [name + "_w"], axis=axis))
        return name + "_w", sw

    def conv(self, x, sx, name, cin, cout, k, relu, **attrs):
        w, sw = self.weights(name, (self.rng.standard_normal([cout, cin, k, k]) * 0.3).astype(np.float32), 0)
        bs = (sx * sw).astype(np.float32)
        bq = np.round((self.rng.standard_normal(cout) * 0.1).astype(np.float32) / bs).astype(np.int32)
        self.nodes.append(helper.make_node("DequantizeLinear", [self.const(name + "_bq", bq), self.const(name + "_bs", bs)],
                                           [name + "_b"], axis=0))
        self.nodes.append(helper.make_node("Conv", [x, w, name + "_b"], [name + "_y"], **attrs))
        if not relu:
            return name + "_y"
        self.nodes.append(helper.make_node("Relu", [name + "_y"], [name + "_r"]))
        return name + "_r"


def conv_model(rng):
    b = Q(rng)
    x, s = b.qdq("x", "in", 0.02, 128)
    y = b.conv(x, s, "c1", 3, 32, 3, True, pads=[1, 1, 1, 1], strides=[2, 2])
    y, s = b.qdq(y, "a1", 0.03, 0)
    y = b.conv(y, s, "c2", 32, 32, 3, True, pads=[1, 1, 1, 1])
    y, s = b.qdq(y, "a2", 0.04, 0)
    y = b.conv(y, s, "c3", 32, 16, 1, False)
    y, s = b.qdq(y, "a3", 0.05, 128)
    b.nodes.append(helper.make_node("GlobalAveragePool", [y], ["out"]))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])]
    outputs = [helper.make_tensor_value_info("out", TensorProto.FLOAT, None),
               helper.make_tensor_value_info(y, TensorProto.FLOAT, None)]
    return helper.make_graph(b.nodes, "qdq_conv", inputs, outputs, b.inits)


def matmul_model(rng):
    b = Q(rng)
    x, s = b.qdq("x", "in", 0.03, 128)
    w1, _ = b.weights("m1", (rng.standard_normal([32, 48]) * 0.2).astype(np.float32), 1)
    wt = (rng.standard_normal([32, 48]) * 0.2).astype(np.float32)
    w2, _ = b.weights("m2", wt, 1)
    b.nodes.append(helper.make_node("MatMul", [x, w1], ["p1"]))
    b.nodes.append(helper.make_node("Add", ["p1", b.const("bias", (rng.standard_normal(48) * 0.1).astype(np.float32))],
                                    ["p1b"]))
    b.nodes.append(helper.make_node("MatMul", [x, w2], ["p2"]))
    y, _ = b.qdq("p1b", "a1", 0.05, 128)
    b.nodes.append(helper.make_node("Softmax", [y], ["sm"], axis=-1))
    y2, _ = b.qdq("sm", "a2", 1.0 / 256, 0)
    b.nodes.append(helper.make_node("Mul", [y2, "p2"], ["out"]))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 32])]
    return helper.make_graph(b.nodes, "qdq_matmul", inputs, [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                             b.inits)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, build, seed in (("conv", conv_model, 21), ("matmul", matmul_model, 22)):
        m = helper.make_model(build(np.random.default_rng(seed)), opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        onnx.save(m, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()

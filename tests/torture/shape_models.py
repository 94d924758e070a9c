#!/usr/bin/env python3
"""shape_models.py: ONNX models whose shapes overflow or exceed any memory, one or more per operator family, for the
bad-input corpus (make_corpus.py writes them to corpus/onnx/shape-*.onnx). In each, the node (or graph input) whose
shape is out of bounds is named after the file, so a replay can check that the refusal names it. It must never
write a file itself, and never build a model a correct engine could run.
"""
import struct

BIG = 1 << 62  # times 4 wraps 2^64: (2^62 + 4) * 4 == 16 (mod 2^64)
F32, U8, I64 = 1, 2, 7


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _key(num, wire):
    return _varint(num << 3 | wire)


def _ld(num, data):
    return _key(num, 2) + _varint(len(data)) + data


def _int(num, v):
    return _key(num, 0) + _varint(v)


def _s(x):
    return x.encode() if isinstance(x, str) else x


def tensor(name, dtype, dims, values=None, raw=None):
    """TensorProto: int64 values in int64_data, float values in float_data, or raw bytes."""
    b = b"".join(_int(1, d) for d in dims) + _int(2, dtype) + _ld(8, _s(name))
    if values is not None and dtype == I64:
        b += _ld(7, b"".join(_varint(v) for v in values))
    elif values is not None:
        b += _ld(4, b"".join(struct.pack("<f", v) for v in values))
    if raw is not None:
        b += _ld(9, raw)
    return b


def attr(name, value):
    """AttributeProto: int, float, ints (a list) or tensor (bytes from tensor())."""
    b = _ld(1, _s(name))
    if isinstance(value, bool) or isinstance(value, int):
        return b + _int(3, value) + _int(20, 2)
    if isinstance(value, float):
        return b + _key(2, 5) + struct.pack("<f", value) + _int(20, 1)
    if isinstance(value, list):
        return b + b"".join(_int(8, v) for v in value) + _int(20, 7)
    return b + _ld(5, value) + _int(20, 4)


def node(op, inputs, outputs, name, attrs=()):
    return (b"".join(_ld(1, _s(i)) for i in inputs) + b"".join(_ld(2, _s(o)) for o in outputs) +
            _ld(3, _s(name)) + _ld(4, _s(op)) + b"".join(_ld(5, a) for a in attrs))


def value_info(name, dtype, dims):
    shape = b"".join(_ld(1, _int(1, d)) for d in dims)
    return _ld(1, _s(name)) + _ld(2, _ld(1, _int(1, dtype) + _ld(2, shape)))


def model(nodes, inits=(), inputs=(), outputs=("y",), opset=17):
    g = b"".join(_ld(1, n) for n in nodes) + _ld(2, b"g") + b"".join(_ld(5, t) for t in inits)
    g += b"".join(_ld(11, value_info(*i)) for i in inputs)
    g += b"".join(_ld(12, _ld(1, _s(o))) for o in outputs)
    return _int(1, 8) + _ld(7, g) + _ld(8, _ld(1, b"") + _int(2, opset))


def _shape_of(op, name, x_dims, shape, extra_inputs=(), attrs=()):
    """op(x, shape-initializer) with x a float graph input."""
    return model([node(op, ["x", "s"] + list(extra_inputs), ["y"], name, attrs)],
                 inits=[tensor("s", I64, [len(shape)], shape)], inputs=[("x", F32, x_dims)])


def models():
    """{file stem: bytes}; each stem is the name of the node (or graph input) the refusal must name."""
    m = {}
    # Generators whose element count wraps 2^64 to 16: a 64-byte buffer the kernels would walk as 2^64 elements.
    m["shape-constantofshape-wrap"] = model(
        [node("ConstantOfShape", ["s"], ["y"], "shape-constantofshape-wrap")],
        inits=[tensor("s", I64, [2], [BIG + 4, 4])])
    m["shape-constantofshape-huge"] = model(
        [node("ConstantOfShape", ["s"], ["y"], "shape-constantofshape-huge")],
        inits=[tensor("s", I64, [3], [1 << 20, 1 << 20, 1 << 12])])  # 2^52 floats: no wrap, never allocatable
    m["shape-constantofshape-negative"] = model(
        [node("ConstantOfShape", ["s"], ["y"], "shape-constantofshape-negative")],
        inits=[tensor("s", I64, [2], [-4, -4])])
    m["shape-expand-wrap"] = _shape_of("Expand", "shape-expand-wrap", [1, 1], [BIG + 4, 4])
    m["shape-reshape-wrap"] = _shape_of("Reshape", "shape-reshape-wrap", [4, 4], [BIG + 4, 4])
    m["shape-tile-wrap"] = model([node("Tile", ["x", "r"], ["y"], "shape-tile-wrap")],
                                 inits=[tensor("r", I64, [2], [BIG + 4, 4])], inputs=[("x", F32, [1, 1])])
    m["shape-tile-dim"] = model([node("Tile", ["x", "r"], ["y"], "shape-tile-dim")],
                                inits=[tensor("r", I64, [2], [BIG, 1])], inputs=[("x", F32, [3, 1])])
    # Concat along an axis past every memory, full and empty (the empty one used to spin ~2^62 iterations).
    for stem, dims in (("shape-concat-big", [1, 1 << 28]), ("shape-concat-empty", [0, 1 << 28])):
        m[stem] = model([node("Concat", ["x"] * (1 << 16), ["y"], stem, [attr("axis", 1)])],
                        inputs=[("x", U8, dims)])
    m["shape-pad-dim"] = model([node("Pad", ["x", "p"], ["y"], "shape-pad-dim")],
                               inits=[tensor("p", I64, [4], [BIG, 0, BIG, 0])], inputs=[("x", F32, [2, 2])])
    m["shape-range-count"] = model(
        [node("Range", ["a", "b", "d"], ["y"], "shape-range-count")],
        inits=[tensor("a", F32, [], [0.0]), tensor("b", F32, [], [1e30]), tensor("d", F32, [], [1.0])])
    m["shape-resize-scale"] = model(
        [node("Resize", ["x", "", "sc"], ["y"], "shape-resize-scale")],
        inits=[tensor("sc", F32, [4], [1.0, 1.0, 1e18, 1e18])], inputs=[("x", F32, [1, 1, 4, 4])])
    m["shape-gather-out"] = model([node("Gather", ["x", "i"], ["y"], "shape-gather-out")],
                                  inputs=[("x", U8, [2, 1 << 26]), ("i", I64, [1 << 26])])
    m["shape-matmul-out"] = model([node("MatMul", ["a", "b"], ["y"], "shape-matmul-out")],
                                  inputs=[("a", F32, [1 << 26, 1]), ("b", F32, [1, 1 << 26])])
    m["shape-add-broadcast"] = model([node("Add", ["a", "b"], ["y"], "shape-add-broadcast")],
                                     inputs=[("a", U8, [1 << 26, 1]), ("b", U8, [1, 1 << 26])])
    m["shape-convtranspose-stride"] = model(
        [node("ConvTranspose", ["x", "w"], ["y"], "shape-convtranspose-stride", [attr("strides", [BIG, BIG])])],
        inits=[tensor("w", F32, [1, 1, 1, 1], [1.0])], inputs=[("x", F32, [1, 1, 4, 4])])
    m["shape-maxpool-dilation"] = model(
        [node("MaxPool", ["x"], ["y"], "shape-maxpool-dilation",
              [attr("kernel_shape", [2, 2]), attr("dilations", [BIG, BIG]), attr("pads", [BIG, BIG, BIG, BIG])])],
        inputs=[("x", F32, [1, 1, 4, 4])])
    m["shape-depthtospace-block"] = model(
        [node("DepthToSpace", ["x"], ["y"], "shape-depthtospace-block", [attr("blocksize", 1 << 32)])],
        inputs=[("x", F32, [1, 1, 2, 2])])
    m["shape-onehot-depth"] = model(
        [node("OneHot", ["i", "d", "v"], ["y"], "shape-onehot-depth")],
        inits=[tensor("d", I64, [], [BIG]), tensor("v", F32, [2], [0.0, 1.0])], inputs=[("i", I64, [4])])
    # A graph input whose declared dims multiply past 2^64: refused naming the input, before any node.
    m["shape-input-dims"] = model([node("Relu", ["shape-input-dims"], ["y"], "relu")],
                                  inputs=[("shape-input-dims", F32, [BIG + 4, 4])])
    # An empty initializer with dims that multiply past 2^64 (the reader counts 0 elements).
    m["shape-initializer-empty"] = model(
        [node("Identity", ["shape-initializer-empty"], ["y"], "id")],
        inits=[tensor("shape-initializer-empty", F32, [0, BIG, BIG], raw=b"")])
    return m

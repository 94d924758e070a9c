#!/usr/bin/python3
"""onnx_float16_to_float32.py: writes the float32 twin of a float16 ONNX model (every float16 weight exactly widened,
every float16 type and Cast target made float32; a float16 graph input stays float16, widened by a Cast, so both
models read the same values), the basis of the float16 tolerances: ONNX Runtime on the twin against ONNX Runtime on
the model is what float16 costs ORT itself. Test-only (python3-onnx, Debian's python3); it must never change
anything but element types and the float16 roundings below, and refuses a model it cannot widen exactly.

By default the twin computes in float32 but rounds to float16 (a Cast pair) every node output the model declares
float16 (types from ONNX shape inference): float32 arithmetic with the model's float16 storage, which is what the
model says and what the reference engine does. ONNX Runtime's CPU provider has no float16 Conv on x86: it runs
them in float32 between Casts it inserts (its InsertCastTransformer), and on ISNet float16 it is measured to skip
most of those roundings: --plain writes the twin without them, whose difference from ORT counts only the roundings
ORT itself keeps.

usage: /usr/bin/python3 tests/onnx_float16_to_float32.py [--plain] IN.onnx OUT.onnx
Exit: 0 written, 1 a model it cannot widen (the node and why), 2 usage.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

F16, F32 = TensorProto.FLOAT16, TensorProto.FLOAT

# Ops whose attributes name an output element type that is not 'to' (Cast's): a float16 there would stay float16.
DTYPE_ATTRS = {"dtype", "output_dtype"}


class Refused(Exception):
    pass


def widen_tensor(t):
    """A float16 TensorProto as float32 holding the same values (float16 to float32 is exact)."""
    if t.data_type != F16:
        return False
    if t.data_location == TensorProto.EXTERNAL:
        raise Refused(f"tensor '{t.name}': external data is not supported here")
    wide = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name)
    t.CopyFrom(wide)
    return True


def widen_type(tp):
    n = 0
    which = tp.WhichOneof("value")
    if which == "tensor_type" and tp.tensor_type.elem_type == F16:
        tp.tensor_type.elem_type = F32
        n += 1
    elif which == "sequence_type":
        n += widen_type(tp.sequence_type.elem_type)
    elif which == "optional_type":
        n += widen_type(tp.optional_type.elem_type)
    return n


def rename_uses(g, old, new):
    for node in g.node:
        for k, name in enumerate(node.input):
            if name == old:
                node.input[k] = new
        for a in node.attribute:  # subgraphs may read it from the outer scope
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                rename_uses(sub, old, new)
    for o in g.output:
        if o.name == old:
            raise Refused(f"graph input '{old}' is also a graph output")


def widen_graph(g, counts, top=True):
    for t in g.initializer:
        counts["initializers"] += widen_tensor(t)
    for vi in list(g.output) + list(g.value_info) + ([] if top else list(g.input)):
        counts["types"] += widen_type(vi.type)
    for vi in g.input if top else []:
        if vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.elem_type == F16:
            wide = vi.name + "__float32"
            rename_uses(g, vi.name, wide)
            g.node.insert(0, onnx.helper.make_node("Cast", [vi.name], [wide], to=F32, name=wide))
            counts["inputs"] += 1
    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                counts["constants"] += widen_tensor(a.t)
            elif a.type == onnx.AttributeProto.GRAPH:
                widen_graph(a.g, counts, False)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    widen_graph(sub, counts, False)
            elif a.type == onnx.AttributeProto.INT and a.i == F16:
                if node.op_type == "Cast" and a.name == "to":
                    a.i = F32
                    counts["casts"] += 1
                elif a.name in DTYPE_ATTRS:
                    raise Refused(f"node '{node.name}' ({node.op_type}): attribute {a.name} is float16")


def float16_names(model):
    """The tensors the model declares float16 (inputs, outputs, inferred intermediate values)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    return {vi.name for vi in list(g.input) + list(g.output) + list(g.value_info)
            if vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.elem_type == F16}


def round_as_declared(g, names):
    """After each node of g with an output in names: that output through float16 and back (a Cast pair)."""
    nodes, n = [], 0
    for node in g.node:
        nodes.append(node)
        for k, out in enumerate(node.output):
            if out not in names:
                continue
            raw, half = out + "__float32", out + "__float16"
            node.output[k] = raw
            nodes.append(onnx.helper.make_node("Cast", [raw], [half], to=F16, name=half))
            nodes.append(onnx.helper.make_node("Cast", [half], [out], to=F32, name=out + "__rounded"))
            n += 1
    del g.node[:]
    g.node.extend(nodes)
    return n


def main(argv):
    plain = len(argv) > 1 and argv[1] == "--plain"
    args = argv[2:] if plain else argv[1:]
    if len(args) != 2 or args[0].startswith("-"):
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    model = onnx.load(args[0])
    counts = {"initializers": 0, "constants": 0, "types": 0, "casts": 0, "inputs": 0}
    try:
        names = set() if plain else float16_names(model)
        widen_graph(model.graph, counts)
    except (Refused, onnx.shape_inference.InferenceError) as e:
        print(f"onnx_float16_to_float32: {args[0]}: {e}", file=sys.stderr)
        return 1
    rounded = round_as_declared(model.graph, names - {i.name for i in model.graph.input})
    del model.graph.value_info[:]  # the renamed tensors' entries would be stale; types follow from the nodes
    onnx.save(model, args[1])
    print(f"onnx_float16_to_float32: {args[1]}: widened {counts['initializers']} initializers, "
          f"{counts['constants']} constants, {counts['types']} declared types, {counts['casts']} Casts to float16; "
          f"{counts['inputs']} float16 inputs kept, each widened by a Cast; "
          f"{rounded} float16 node outputs rounded to float16" + (" (--plain)" if plain else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

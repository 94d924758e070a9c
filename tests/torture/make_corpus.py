#!/usr/bin/env python3
"""make_corpus.py: writes the bad-input corpora of the torture suite into tests/torture/corpus/ (kept in the tree and
replayed by corpus.py under ctest): scenarios malformed in many ways, ONNX files garbled at the wire level, and db
files that are not memleak's. Deterministic: running it again rewrites the same bytes. It must never write elsewhere.
"""
import os
import sqlite3
import struct

import shape_models

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
BASE = "name: bad\nengine: ref\nmodel: {generate: mlp, mlp_hidden: 16}\n"
PIPE = "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"

YAML = {
    "empty.yaml": "",
    "only-comment.yaml": "# nothing here\n",
    "tab-indent.yaml": BASE + PIPE + "matrix:\n\tthreads: [1, 2]\n",
    "unterminated-flow.yaml": BASE + "pipeline: [compile_model, infer\n",
    "unterminated-quote.yaml": BASE + PIPE + 'description: "never closed\n',
    "alias-bomb.yaml": BASE + PIPE + "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c]\n",
    "deep-nesting.yaml": BASE + PIPE + "matrix: " + "[" * 5000 + "]" * 5000 + "\n",
    "nul-byte.yaml": BASE + PIPE + "description: a\x00b\n",
    "huge-integer.yaml": BASE + PIPE + "iterations: 99999999999999999999999999999999\n",
    "negative-iterations.yaml": BASE + PIPE + "iterations: -5\n",
    "zero-iterations.yaml": BASE + PIPE + "iterations: 0\n",
    "duplicate-key.yaml": BASE + PIPE + "iterations: 10\niterations: 20\n",
    "unknown-key.yaml": BASE + PIPE + "iteratoins: 10\n",
    "wrong-type.yaml": BASE + PIPE + "iterations: [10]\n",
    "bad-utf8.yaml": BASE + PIPE + "description: \xff\xfe\n",
    "step-order.yaml": BASE + "pipeline: [infer, create_request]\n",
    "empty-pipeline.yaml": BASE + "pipeline: []\n",
    "no-model.yaml": "name: bad\nengine: ref\n" + PIPE,
    "empty-axis.yaml": BASE + PIPE + "matrix:\n  threads: []\n",
    "bad-duration.yaml": BASE + PIPE + "duration: forever\n",
    "iterations-and-duration.yaml": BASE + PIPE + "iterations: 10\nduration: 1h\n",
    "negative-timeout.yaml": BASE + PIPE + "timeout_s: -1\n",
    "bad-allocator.yaml": BASE + PIPE + "matrix:\n  allocator: [glibc, nosuchalloc]\n",
    "bad-engine-name.yaml": "name: bad\nengine: ../x\nmodel: m.onnx\n" + PIPE,
    "model-is-dev-zero.yaml": "name: bad\nengine: ref\nmodel: /dev/zero\n" + PIPE,
    "model-is-folder.yaml": "name: bad\nengine: ref\nmodel: /\n" + PIPE,
    "too-many-steps.yaml": BASE + "pipeline: [" + ", ".join(["compile_model", "release_compiled"] * 40) + "]\n",
    "not-a-mapping.yaml": "- just\n- a\n- list\n",
    "scalar-doc.yaml": "hello\n",
}


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def ld(num, data):
    return field(num, 2, varint(len(data)) + data)


ONNX = {
    "empty.onnx": b"",
    "garbage.onnx": bytes((i * 131 + 7) % 256 for i in range(4096)),
    "truncated-varint.onnx": field(1, 0, b"\xff\xff\xff"),
    "length-past-end.onnx": field(7, 2, varint(1 << 40)) + b"abc",
    "wrong-wire-type.onnx": field(7, 5, b"\x00\x00\x00\x00"),
    "deep-graph.onnx": ld(7, ld(1, b"x" * 8)) * 1 + (ld(7, b"") * 2000),
    "node-without-op.onnx": field(1, 0, varint(8)) + ld(7, ld(1, ld(1, b"in")) + ld(11, ld(1, b"in"))),
    "huge-dims.onnx": field(1, 0, varint(8)) + ld(7, ld(5, field(1, 0, varint((1 << 62) + 1)) * 8 +
                                                       field(2, 0, varint(1)) + ld(8, b"w"))),
    "negative-dims.onnx": field(1, 0, varint(8)) + ld(7, ld(5, field(1, 0, varint((1 << 64) - 3)) +
                                                         field(2, 0, varint(1)) + ld(8, b"w") +
                                                         ld(9, struct.pack("<f", 1.0)))),
}


def db_files(d):
    with open(os.path.join(d, "empty.db"), "wb"):
        pass
    with open(os.path.join(d, "garbage.db"), "wb") as f:
        f.write(bytes((i * 37 + 11) % 256 for i in range(8192)))
    with open(os.path.join(d, "header-only.db"), "wb") as f:
        f.write(b"SQLite format 3\x00" + b"\x00" * 84)
    for name, sql in (("foreign.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1);"),
                      ("future-schema.db", "CREATE TABLE schema_version(version INTEGER NOT NULL); "
                                           "INSERT INTO schema_version VALUES (999);")):
        path = os.path.join(d, name)
        if os.path.exists(path):
            os.unlink(path)
        c = sqlite3.connect(path)
        c.executescript(sql)
        c.commit()
        c.close()


def main():
    for sub in ("yaml", "onnx", "db"):
        os.makedirs(os.path.join(HERE, sub), exist_ok=True)
    for name, text in YAML.items():
        with open(os.path.join(HERE, "yaml", name), "wb") as f:
            f.write(text.encode("latin-1"))
    for name, data in ONNX.items():
        with open(os.path.join(HERE, "onnx", name), "wb") as f:
            f.write(data)
    shapes = shape_models.models()
    for stem, data in shapes.items():
        with open(os.path.join(HERE, "onnx", stem + ".onnx"), "wb") as f:
            f.write(data)
    db_files(os.path.join(HERE, "db"))
    print("corpus: %d scenarios, %d ONNX files, 5 dbs in %s" % (len(YAML), len(ONNX) + len(shapes), HERE))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""corpus.py: replays the bad-input corpora (tests/torture/corpus, written by make_corpus.py): every malformed
scenario is refused with exit 2 and a message naming the file; every garbled ONNX file ends its cell as an error
(never a crash) and `refengine plan` refuses it (a shape-*.onnx, an overflowing shape, with exit 2 and, in the cell's
error too, the name of the node or input its file is named after); every foreign or corrupt db makes report, merge and compare exit 2
or 3 with a message. Nothing may end by a signal. It must never pass a file it did not run.
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def main():
    bindir = os.environ.get("MLK_BIN_DIR", "build/bin")
    run, refengine = os.path.join(bindir, "memleak-run"), os.path.join(bindir, "refengine")
    if not os.access(run, os.X_OK):
        print("SKIP: %s not built" % run)
        return 77
    work = tempfile.mkdtemp(prefix="mlk-corpus.")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    failures, counts = [], {"yaml": 0, "onnx": 0, "db": 0}

    def fail(msg):
        failures.append(msg)
        print("FAIL: " + msg, flush=True)

    def go(args, timeout=60):
        try:
            return subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                                  text=True, errors="replace")
        except subprocess.TimeoutExpired:
            return None

    try:
        for name in sorted(os.listdir(os.path.join(HERE, "yaml"))):
            path = os.path.join(HERE, "yaml", name)
            r = go([run, "--dry-run", "--db", os.path.join(work, "y.db"), path], timeout=20)
            counts["yaml"] += 1
            if r is None:
                fail("yaml/%s: still running after 20 s" % name)
            elif r.returncode != 2:
                fail("yaml/%s: exit %d, expected 2: %s" % (name, r.returncode, r.stderr.strip()[-200:]))
            elif name not in r.stderr and not re.search(r"\d+:\d+", r.stderr):
                fail("yaml/%s: the message names neither the file nor a place: %s" % (name, r.stderr.strip()))
        for name in sorted(os.listdir(os.path.join(HERE, "onnx"))):
            path = os.path.join(HERE, "onnx", name)
            counts["onnx"] += 1
            if os.access(refengine, os.X_OK):
                r = go([refengine, "plan", path], timeout=20)
                if r is not None and name.startswith("shape-") and (r.returncode != 2 or
                                                                    "'%s'" % name[:-5] not in r.stderr):
                    fail("onnx/%s: refengine plan: exit %d, expected 2 naming '%s': %s" % (
                        name, r.returncode, name[:-5], r.stderr.strip()[-200:]))
                if r is None or r.returncode <= 0 or r.returncode >= 128 or not r.stderr.strip():
                    fail("onnx/%s: refengine plan: %s" % (name, "hung" if r is None else "exit %d %s" % (
                        r.returncode, r.stderr.strip()[-200:])))
            scn = os.path.join(work, "o.yaml")
            with open(scn, "w") as f:
                f.write("name: corpus\nengine: ref\nmodel: %s\npipeline: [compile_model, create_request, infer, "
                        "release_request, release_compiled]\nsetup: [load_engine, read_model]\niterations: 2\n"
                        "warmup: 0\ntimeout_s: 30\n" % path)
            db = os.path.join(work, "o-%s.db" % name)
            r = go([run, "--quiet", "--db", db, scn], timeout=60)
            if r is None or r.returncode != 1:
                fail("onnx/%s: memleak-run: %s" % (name, "hung" if r is None else "exit %d, expected 1 (a cell "
                                                   "error): %s" % (r.returncode, r.stderr.strip()[-200:])))
                continue
            c = sqlite3.connect(db)
            status, error = c.execute("SELECT status, error FROM cells").fetchone()
            c.close()
            if status != "error":
                fail("onnx/%s: the cell is %s, expected error (the engine refuses it; never a crash)" % (name,
                                                                                                       status))
            elif name.startswith("shape-") and "'%s'" % name[:-5] not in (error or ""):
                # shape_models.py names the node (or input) out of bounds after its file
                fail("onnx/%s: the cell's error does not name '%s': %s" % (name, name[:-5], error))
        for name in sorted(os.listdir(os.path.join(HERE, "db"))):
            src = os.path.join(HERE, "db", name)
            counts["db"] += 1
            for what, args in (("report", ["report", "--out", os.path.join(work, "rep")]),
                               ("compare", ["compare"]), ("merge", None)):
                db = os.path.join(work, "copy.db")
                shutil.copyfile(src, db)  # the tree's copy stays as it is
                argv = [run, "merge", "--quiet", os.path.join(work, "out.db"), db] if args is None else \
                    [run] + args[:1] + ["--db", db] + args[1:]
                r = go(argv, timeout=30)
                if r is None or r.returncode not in (2, 3) or not r.stderr.strip():
                    fail("db/%s: %s: %s" % (name, what, "hung" if r is None else "exit %d, expected 2 or 3 with a "
                                            "message: %s" % (r.returncode, r.stderr.strip()[-200:])))
                for f in ("copy.db", "copy.db-wal", "copy.db-shm", "out.db", "out.db-wal", "out.db-shm"):
                    if os.path.exists(os.path.join(work, f)):
                        os.unlink(os.path.join(work, f))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("corpus: %d scenarios, %d ONNX files, %d dbs replayed; %s" % (
        counts["yaml"], counts["onnx"], counts["db"], "%d failures" % len(failures) if failures else "all refused cleanly"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

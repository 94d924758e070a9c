#!/usr/bin/env python3
# check_layers.py: the architecture rules of harness/, checked from the sources: each folder is a stage, and a file
# may include only headers of its own folder or of folders before it in the flow; SQLite only in harness/store;
# the reference engine's headers and libraries never in the harness. It must never change a file: it reads and reports.
import os
import re
import sys

# The stages, in the order of the data flow: a folder may include itself and the folders before it.
ORDER = ["heap", "core", "scenario", "tools", "plan", "worker", "store", "judge", "run", "report", "gbench", "cmd"]
# Headers from outside harness/ that any stage may use: the plugin ABI, the shared ONNX reader, the test kit.
SHARED = {"engines": "engine.h", "common/onnx": None, "common/testkit": None}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)


def sources(root, sub):
    for dirpath, _, files in os.walk(os.path.join(root, sub)):
        for f in files:
            if f.endswith((".c", ".h", ".cc")):
                yield os.path.join(dirpath, f)


def stage_of(root, path):
    rel = os.path.relpath(path, os.path.join(root, "harness")).split(os.sep)
    return rel[0] if len(rel) > 1 and rel[0] in ORDER else None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    headers = {}  # header base name -> stage that defines it
    for path in sources(root, "harness"):
        st = stage_of(root, path)
        if path.endswith(".h") and st:
            name = os.path.basename(path)
            if name in headers and headers[name] != st:
                print(f"FAIL: header {name} is defined in both harness/{headers[name]} and harness/{st}")
                return 1
            headers[name] = st
    problems, arrows, edges = [], 0, set()
    for path in sorted(sources(root, "harness")):
        st = stage_of(root, path)
        rel = os.path.relpath(path, root)
        if st is None:
            problems.append(f"{rel}: outside every stage folder ({', '.join(ORDER)})")
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for inc in INCLUDE.findall(text):
            base = os.path.basename(inc)
            if inc == "sqlite3.h" and st != "store":
                problems.append(f"{rel}: includes sqlite3.h; only harness/store may (the store owns every SQL string)")
            if base == "refengine.h" or inc.startswith("ref_"):
                problems.append(f"{rel}: includes the reference engine's {inc}; the harness reads ONNX via common/onnx")
            target = headers.get(base)
            if target is None:
                continue
            arrows += 1
            edges.add((st, target))
            if ORDER.index(target) > ORDER.index(st):
                problems.append(f"{rel}: includes {inc} of harness/{target}, a later stage than {st} "
                                f"(order: {' < '.join(ORDER)})")
    for cm in sorted(p for p in (os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, "harness"))
                                  for f in fs) if p.endswith("CMakeLists.txt")):
        text = open(cm, encoding="utf-8").read()
        for m in re.finditer(r"target_link_libraries\(([^)]*)\)", text):
            if re.search(r"\brefengine(_static|_internal)?\b", m.group(1)) and "engine_ref_lsan" not in m.group(1):
                problems.append(f"{os.path.relpath(cm, root)}: a harness target links the reference engine: "
                                f"{' '.join(m.group(1).split())}")
        if re.search(r"file\(\s*GLOB", text):
            problems.append(f"{os.path.relpath(cm, root)}: globs its sources; list them")
    for p in problems:
        print("FAIL:", p)
    cross = sorted(f"{a}->{b}" for a, b in edges if a != b)
    print(f"{len(headers)} headers in {len(ORDER)} stages, {arrows} include arrows, "
          f"{len(cross)} stage-to-stage edges: {' '.join(cross)}")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

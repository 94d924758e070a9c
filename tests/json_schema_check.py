#!/usr/bin/env python3
# json_schema_check.py: validates a JSON document against the subset of JSON Schema that db/*.schema.json use
# (type, const, enum, required, properties, additionalProperties, items, minItems, minimum, $ref to #/$defs/...).
# It must never pass a document it could not check: an unknown schema keyword is an error, not ignored.
import json
import sys

KNOWN = {"$schema", "$id", "$ref", "$defs", "title", "description", "type", "const", "enum", "required",
         "properties", "additionalProperties", "items", "minItems", "minimum"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, TYPES[t])


def check(v, s, root, path, errs):
    unknown = set(s) - KNOWN
    if unknown:
        raise SystemExit(f"schema keyword(s) this checker does not know: {sorted(unknown)} at {path}")
    if "$ref" in s:
        ref = s["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return check(v, root["$defs"][ref[len("#/$defs/"):]], root, path, errs)
    if "type" in s:
        ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(is_type(v, t) for t in ts):
            errs.append(f"{path}: {v!r} is not of type {ts}")
            return
    if "const" in s and v != s["const"]:
        errs.append(f"{path}: {v!r} is not {s['const']!r}")
    if "enum" in s and v not in s["enum"]:
        errs.append(f"{path}: {v!r} is not one of {s['enum']}")
    if "minimum" in s and isinstance(v, (int, float)) and v < s["minimum"]:
        errs.append(f"{path}: {v} < {s['minimum']}")
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                errs.append(f"{path}: missing '{k}'")
        props = s.get("properties", {})
        extra = s.get("additionalProperties", True)
        for k, x in v.items():
            if k in props:
                check(x, props[k], root, f"{path}.{k}", errs)
            elif extra is False:
                errs.append(f"{path}: unexpected '{k}'")
            elif isinstance(extra, dict):
                check(x, extra, root, f"{path}.{k}", errs)
    if isinstance(v, list):
        if len(v) < s.get("minItems", 0):
            errs.append(f"{path}: fewer than {s['minItems']} items")
        for i, x in enumerate(v):
            if "items" in s:
                check(x, s["items"], root, f"{path}[{i}]", errs)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: json_schema_check.py SCHEMA DOCUMENT")
    schema = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} in JSON")))
    errs = []
    check(doc, schema, schema, "$", errs)
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())

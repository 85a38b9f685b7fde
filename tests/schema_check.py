#!/usr/bin/env python3
"""Checks graph files against schemas/graph.schema.json with the Python standard library only.

Implements the subset of JSON Schema (draft 2020-12) that the schema uses -- type, enum, const,
properties, required, additionalProperties, patternProperties, items, minItems, minLength,
pattern, minimum, anyOf, oneOf, allOf, if/then/else, and $ref to "#/$defs/..." -- and refuses
any other keyword, so the schema cannot silently use something this checker ignores.

Usage: schema_check.py SCHEMA FILE_OR_DIR...   (directories: every graph.json below them, and
every *.json directly inside them). Also runs a few self-tests: documents that must be refused.
Exit status 0 when everything conforms, 1 otherwise.
"""

import json
import os
import re
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "$defs"}
KEYWORDS = {
    "type", "enum", "const", "properties", "required", "additionalProperties",
    "patternProperties", "items", "minItems", "minLength", "pattern", "minimum",
    "anyOf", "oneOf", "allOf", "if", "then", "else", "$ref",
} | ANNOTATIONS


def json_type_ok(value, name):
    """True when `value` (as json.load returns it) is of JSON Schema type `name`."""
    is_bool = isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return is_bool
    if name == "null":
        return value is None
    if name == "number":
        return isinstance(value, (int, float)) and not is_bool
    if name == "integer":
        if is_bool:
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise ValueError(f"unknown type {name!r} in the schema")


def json_equal(a, b):
    """JSON equality: numbers compare by value, but booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def pointer_escape(key):
    return str(key).replace("~", "~0").replace("/", "~1")


class Validator:
    def __init__(self, schema):
        self.root = schema
        self.check_schema(schema, "#")

    def check_schema(self, schema, where):
        """Refuses keywords this checker does not implement (recursively)."""
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise ValueError(f"{where}: a schema must be an object")
        for key, sub in schema.items():
            if key not in KEYWORDS:
                raise ValueError(f"{where}: keyword {key!r} is not implemented by schema_check.py")
            if key in ("properties", "patternProperties", "$defs"):
                for name, s in sub.items():
                    self.check_schema(s, f"{where}/{key}/{name}")
            elif key in ("items", "additionalProperties", "if", "then", "else"):
                self.check_schema(sub, f"{where}/{key}")
            elif key in ("anyOf", "oneOf", "allOf"):
                for i, s in enumerate(sub):
                    self.check_schema(s, f"{where}/{key}/{i}")

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref are supported, not {ref!r}")
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def errors(self, value, schema, path=""):
        """A list of "path: message" strings; empty when `value` conforms."""
        if schema is True:
            return []
        if schema is False:
            return [f"{path or '/'}: no value is allowed here"]
        out = []
        here = path or "/"
        if "$ref" in schema:
            out += self.errors(value, self.resolve(schema["$ref"]), path)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(json_type_ok(value, t) for t in types):
                return out + [f"{here}: expected {' or '.join(types)}, got {json.dumps(value)[:60]}"]
        if "enum" in schema and not any(json_equal(value, e) for e in schema["enum"]):
            out.append(f"{here}: {json.dumps(value)[:60]} is not one of the allowed values")
        if "const" in schema and not json_equal(value, schema["const"]):
            out.append(f"{here}: must be {json.dumps(schema['const'])}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                out.append(f"{here}: {value} is less than {schema['minimum']}")
        if isinstance(value, str):
            if "minLength" in schema and len(value) < schema["minLength"]:
                out.append(f"{here}: shorter than {schema['minLength']} characters")
            if "pattern" in schema and not re.search(schema["pattern"], value):
                out.append(f"{here}: does not match {schema['pattern']!r}")
        if isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                out.append(f"{here}: fewer than {schema['minItems']} items")
            if "items" in schema:
                for i, item in enumerate(value):
                    out += self.errors(item, schema["items"], f"{path}/{i}")
        if isinstance(value, dict):
            out += self.object_errors(value, schema, path)
        out += self.combinator_errors(value, schema, path)
        return out

    def object_errors(self, value, schema, path):
        out = []
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{path or '/'}: missing required key {key!r}")
        for key, item in value.items():
            sub_path = f"{path}/{pointer_escape(key)}"
            matched = False
            if key in props:
                matched = True
                out += self.errors(item, props[key], sub_path)
            for pattern, sub in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    out += self.errors(item, sub, sub_path)
            if not matched and "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                if extra is False:
                    out.append(f"{sub_path}: unknown key {key!r}")
                else:
                    out += self.errors(item, extra, sub_path)
        return out

    def combinator_errors(self, value, schema, path):
        out = []
        here = path or "/"
        for sub in schema.get("allOf", []):
            out += self.errors(value, sub, path)
        if "anyOf" in schema:
            branches = [self.errors(value, sub, path) for sub in schema["anyOf"]]
            if all(branches):
                best = min(branches, key=len)
                out.append(f"{here}: matches none of the allowed forms (closest: {best[0]})")
        if "oneOf" in schema:
            branches = [self.errors(value, sub, path) for sub in schema["oneOf"]]
            matching = sum(1 for b in branches if not b)
            if matching == 0:
                best = min(branches, key=len)
                out.append(f"{here}: matches none of the allowed forms (closest: {best[0]})")
            elif matching > 1:
                out.append(f"{here}: matches {matching} of the exclusive forms (oneOf)")
        if "if" in schema:
            if not self.errors(value, schema["if"], path):
                if "then" in schema:
                    out += self.errors(value, schema["then"], path)
            elif "else" in schema:
                out += self.errors(value, schema["else"], path)
        return out


def graph_files(targets):
    files = []
    for target in targets:
        if os.path.isfile(target):
            files.append(target)
            continue
        for entry in sorted(os.listdir(target)):
            full = os.path.join(target, entry)
            if os.path.isfile(full) and entry.endswith(".json"):
                files.append(full)
        for dirpath, dirnames, filenames in os.walk(target):
            dirnames.sort()
            if dirpath != target and "graph.json" in filenames:
                files.append(os.path.join(dirpath, "graph.json"))
    return files


MINIMAL = {"format": "kiln-graph", "version": 1, "variables": [], "nodes": [], "inputs": [], "outputs": []}


def variant(**changes):
    doc = json.loads(json.dumps(MINIMAL))
    doc.update(changes)
    return doc


def var(id_, dtype="float64", shape=(None,), **extra):
    return dict({"id": id_, "type": {"dtype": dtype, "shape": list(shape)}}, **extra)


def self_tests(validator):
    """Documents the schema must accept, and ones it must refuse; returns failure messages."""
    composite = {"name": "Composite",
                 "variables": [{"id": "i0", "dtype": "float64"},
                               {"id": "c0", "dtype": "float64", "value": 1.0},
                               {"id": "t0", "dtype": "float64"}],
                 "inputs": ["i0"],
                 "nodes": [{"op": "add", "inputs": ["c0", "i0"], "outputs": ["t0"]}],
                 "outputs": ["t0"]}
    good = {
        "x- keys": variant(**{"x-tool": {"anything": [1, 2]}}),
        "values": variant(variables=[
            var("a", shape=(2, 2), value=[[1, "nan"], ["inf", "-inf"]]),
            var("b", dtype="bool", shape=(2,), value=[True, 0]),
            var("c", shape=(), value=2.5),
            var("d", shape=(1,), value={"npy": "w.npy"}),
            var("e", shape=(1,), value={"base64": "AAAAAAAA8D8=", "order": "F"})]),
        "composite": variant(nodes=[{"op": "Elemwise", "props": {"scalar_op": composite},
                                     "inputs": ["x"], "outputs": ["y"]}]),
        "cast": variant(nodes=[{"op": "Elemwise", "props": {"scalar_op": {"name": "cast", "dtype": "int8"}},
                                "inputs": ["x"], "outputs": ["y"]},
                               {"op": "cast", "props": {"dtype": "int8"}, "inputs": ["x"], "outputs": ["z"]}]),
        "v2 types and values": variant(version=2, variables=[
            {"id": "r", "type": {"kind": "rng", "bit_generator": "PCG64"},
             "value": {"pcg64": {"state": "274674114334540486603088602300644985544",
                                 "inc": "332724090758049132448979897138935081983", "has_uint32": 0, "uinteger": 0}}},
            {"id": "n", "type": {"kind": "none"}, "value": None},
            {"id": "s", "type": {"kind": "rng"}},
            var("h", dtype="float16")]),
        "v2 ops": variant(version=2, nodes=[
            {"op": "Join", "props": {"axis": 1}, "inputs": ["a", "b"], "outputs": ["c"]},
            {"op": "Split", "props": {"len_splits": 2, "axis": 0}, "inputs": ["c", "s"], "outputs": ["d", "e"]},
            {"op": "MatrixTranspose", "inputs": ["a"], "outputs": ["t"]},
            {"op": "ViewOp", "inputs": ["a"], "outputs": ["v"]},
            {"op": "Maximum", "inputs": ["a", "b"], "outputs": ["m"]},
            {"op": "NormalRV", "props": {"name": "normal"}, "inputs": [], "outputs": []},
            {"op": "OpFromGraph", "props": {"name": "f", "inner": {
                "variables": [var("i"), var("o")], "inputs": ["i"], "outputs": ["o"],
                "nodes": [{"op": "exp", "inputs": ["i"], "outputs": ["o"]}]}},
             "inputs": ["a"], "outputs": ["f"]}]),
    }
    bad = {
        "unknown top-level key": variant(extra=1),
        "wrong format": variant(format="kiln"),
        "wrong version": variant(version=3),
        "v2 type in v1": variant(variables=[{"id": "r", "type": {"kind": "rng"}}]),
        "v2 op in v1": variant(nodes=[{"op": "OpFromGraph", "props": {"inner": {}}, "inputs": [], "outputs": []}]),
        "unknown kind": variant(version=2, variables=[{"id": "r", "type": {"kind": "tensor"}}]),
        "rng state not a string": variant(version=2, variables=[{"id": "r", "type": {"kind": "rng"}, "value": {
            "pcg64": {"state": 1, "inc": "1", "has_uint32": 0, "uinteger": 0}}}]),
        "inner graph without outputs": variant(version=2, nodes=[{"op": "OpFromGraph", "props": {"inner": {
            "variables": [], "inputs": [], "nodes": []}}, "inputs": [], "outputs": []}]),
        "negative Join axis": variant(version=2, nodes=[{"op": "Join", "props": {"axis": -1}, "inputs": [],
                                                          "outputs": []}]),
        "missing nodes": {k: v for k, v in MINIMAL.items() if k != "nodes"},
        "unknown dtype": variant(variables=[var("a", dtype="float16")]),
        "negative length": variant(variables=[var("a", shape=(-1,))]),
        "fractional length": variant(variables=[var("a", shape=(1.5,))]),
        "unknown variable key": variant(variables=[var("a", shape=(), shape2=1)]),
        "empty id": variant(variables=[var("")]),
        "bad nan string": variant(variables=[var("a", shape=(), value="NaN")]),
        "object value": variant(variables=[var("a", shape=(), value={"npy": "a.npy", "extra": 1})]),
        "base64 order": variant(variables=[var("a", shape=(), value={"base64": "AA==", "order": "X"})]),
        "unknown op": variant(nodes=[{"op": "Frobnicate", "inputs": [], "outputs": []}]),
        "props not an object": variant(nodes=[{"op": "Shape", "props": [], "inputs": [], "outputs": []}]),
        "input not a string": variant(nodes=[{"op": "Shape", "inputs": [1], "outputs": []}]),
        "unknown scalar op": variant(nodes=[{"op": "Elemwise", "props": {"scalar_op": "frob"},
                                             "inputs": [], "outputs": []}]),
        "cast without dtype": variant(nodes=[{"op": "Elemwise", "props": {"scalar_op": "cast"},
                                              "inputs": [], "outputs": []}]),
        "props on add": variant(nodes=[{"op": "add", "props": {"inplace": True}, "inputs": [], "outputs": []}]),
        "composite unknown key": variant(nodes=[{"op": "Elemwise",
                                                 "props": {"scalar_op": dict(composite, extra=1)},
                                                 "inputs": [], "outputs": []}]),
        "composite array value": variant(nodes=[{"op": "Elemwise", "props": {"scalar_op": dict(
            composite, variables=[{"id": "c0", "dtype": "float64", "value": [1.0]}])},
            "inputs": [], "outputs": []}]),
    }
    failures = []
    for name, doc in good.items():
        errs = validator.errors(doc, validator.root)
        if errs:
            failures.append(f"self-test {name!r} should conform: {errs[0]}")
    for name, doc in bad.items():
        if not validator.errors(doc, validator.root):
            failures.append(f"self-test {name!r} should be refused")
    return failures


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator = Validator(schema)
    failures = self_tests(validator)
    files = graph_files(argv[2:])
    if not files:
        failures.append("no graph files found under " + " ".join(argv[2:]))
    for path in files:
        with open(path, encoding="utf-8") as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                failures.append(f"{path}: not JSON: {e}")
                continue
        for err in validator.errors(doc, schema):
            failures.append(f"{path}: {err}")
    for msg in failures:
        print(msg)
    print(f"schema_check: {len(files)} graph file(s), {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

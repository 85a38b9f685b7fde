#!/usr/bin/env python3
"""Writes a valid kiln graph file of about N nodes (default 3,000) for the browser test of
`kiln view`: chains of elementwise ops on vectors (which the fusion pass folds into
Composites), matrix-vector Dots (which become Gemv), sums broadcast back, values reused from
far back (long edges), and named variables (h<k>_) to search for."""
import argparse
import json
import random


def make(n_nodes, seed=5):
    rng = random.Random(seed)
    variables = [
        {"id": "x", "name": "x", "type": {"dtype": "float64", "shape": [None]}},
        {"id": "W", "name": "W", "type": {"dtype": "float64", "shape": [None, None]}},
    ]
    nodes = []
    vectors = ["x"]

    def new_var(kind, name=None):
        vid = "v%d" % len(variables)
        var = {"id": vid, "type": {"dtype": "float64", "shape": [None] if kind == "vec" else ([] if kind == "scalar" else [1])}}
        if name:
            var["name"] = name
        variables.append(var)
        return vid

    unused = []  # values no node reads yet: read them soon, so that every node feeds an output

    def pick():
        if unused and rng.random() < 0.6:
            v = unused.pop(rng.randrange(len(unused)))
        elif rng.random() < 0.1:
            v = rng.choice(vectors)
        else:
            v = rng.choice(vectors[-6:])
        if v in unused:
            unused.remove(v)
        return v

    while len(nodes) < n_nodes:
        r = rng.random()
        name = "h%d_" % len(nodes) if len(nodes) % 50 < 3 else None
        if r < 0.05:
            out = new_var("vec", name)
            nodes.append({"op": "Dot", "inputs": ["W", pick()], "outputs": [out]})
        elif r < 0.08:
            total = new_var("scalar")
            nodes.append({"op": "Sum", "props": {"axis": None}, "inputs": [pick()], "outputs": [total]})
            row = new_var("row")
            nodes.append({"op": "DimShuffle", "props": {"input_ndim": 0, "new_order": ["x"]}, "inputs": [total], "outputs": [row]})
            out = new_var("vec", name)
            nodes.append({"op": "Elemwise", "props": {"scalar_op": "true_div"}, "inputs": [pick(), row], "outputs": [out]})
        elif r < 0.55:
            out = new_var("vec", name)
            nodes.append({"op": rng.choice(["exp", "tanh", "sin", "sigmoid", "neg"]), "inputs": [pick()], "outputs": [out]})
        else:
            out = new_var("vec", name)
            nodes.append({"op": "Elemwise", "props": {"scalar_op": rng.choice(["add", "mul", "sub", "maximum"])},
                          "inputs": [pick(), pick()], "outputs": [out]})
        vectors.append(out)
        unused.append(out)
    outputs = unused[-3:]
    for v in unused[:-3]:  # the few values still unread are outputs too
        outputs.insert(0, v)
    for k, o in enumerate(outputs):
        if o != "x":
            variables[int(o[1:])]["name"] = "out%d" % k
    return {"format": "kiln-graph", "version": 1, "name": "generated_%d" % n_nodes,
            "variables": variables, "nodes": nodes, "inputs": ["x", "W"], "outputs": outputs}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("output")
    ap.add_argument("--nodes", type=int, default=3000)
    args = ap.parse_args()
    with open(args.output, "w") as f:
        json.dump(make(args.nodes), f)


if __name__ == "__main__":
    main()

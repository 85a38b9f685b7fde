#!/usr/bin/env python3
"""Writes the benchmark graphs W1-W6 and W8-W10 (float64 and float32) and the float32 copy of the
logistic-regression loss that W4 differentiates. Run from anywhere; writes next to itself.
The JSON files are committed; re-run this after editing it."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Graph:
    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype
        self.variables, self.nodes, self.inputs, self.outputs = [], [], [], []

    def var(self, vid, shape, dtype=None, value=None, name=None):
        v = {"id": vid, "type": {"dtype": dtype or self.dtype, "shape": shape}}
        if name:
            v["name"] = name
        if value is not None:
            v["value"] = value
        self.variables.append(v)
        return vid

    def node(self, op, props, inputs, out, shape, dtype=None, name=None):
        self.var(out, shape, dtype, name=name)
        self.nodes.append({"op": op, "props": props, "inputs": inputs, "outputs": [out]})
        return out

    def ew(self, scalar_op, inputs, out, shape, name=None):
        return self.node("Elemwise", {"scalar_op": scalar_op}, inputs, out, shape, name=name)

    def write(self):
        doc = {"format": "kiln-graph", "version": 1, "name": self.name, "variables": self.variables,
               "nodes": self.nodes, "inputs": self.inputs, "outputs": self.outputs}
        with open(os.path.join(HERE, self.name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


def w1(dt):  # y = exp(sin(x)) + 0.5 * log1p(x * x)
    g = Graph(f"w1_elemwise_{dt}", dt)
    v = [None]
    g.inputs = [g.var("x", v, name="x")]
    g.var("half", [], value=0.5)
    g.node("DimShuffle", {"input_ndim": 0, "new_order": ["x"]}, ["half"], "half1", [1])
    g.ew("sin", ["x"], "s", v)
    g.ew("exp", ["s"], "e", v)
    g.ew("mul", ["x", "x"], "xx", v)
    g.ew("log1p", ["xx"], "l", v)
    g.ew("mul", ["half1", "l"], "hl", v)
    g.ew("add", ["e", "hl"], "y", v, name="y")
    g.outputs = ["y"]
    g.write()


def w2(dt):  # sum(x * x)
    g = Graph(f"w2_sumsq_{dt}", dt)
    g.inputs = [g.var("x", [None], name="x")]
    g.ew("mul", ["x", "x"], "xx", [None])
    g.node("Sum", {"axis": None}, ["xx"], "s", [], name="s")
    g.outputs = ["s"]
    g.write()


def w3(dt):  # row-wise log_softmax
    g = Graph(f"w3_logsoftmax_{dt}", dt)
    g.inputs = [g.var("x", [None, None], name="x")]
    g.node("LogSoftmax", {"axis": 1}, ["x"], "y", [None, None], name="y")
    g.outputs = ["y"]
    g.write()


def w5(dt):  # relu(X @ W1 + b1) @ W2 + b2
    g = Graph(f"w5_mlp_{dt}", dt)
    m = [None, None]
    g.inputs = [g.var("X", m, name="X"), g.var("W1", m, name="W1"), g.var("b1", [None], name="b1"),
                g.var("W2", m, name="W2"), g.var("b2", [None], name="b2")]
    g.var("zero", [], value=0)
    row = {"input_ndim": 1, "new_order": ["x", 0]}
    g.node("Dot", {}, ["X", "W1"], "h", m)
    g.node("DimShuffle", row, ["b1"], "b1r", [1, None])
    g.ew("add", ["h", "b1r"], "hb", m)
    g.node("DimShuffle", {"input_ndim": 0, "new_order": ["x", "x"]}, ["zero"], "zero2", [1, 1])
    g.ew("maximum", ["hb", "zero2"], "a", m)
    g.node("Dot", {}, ["a", "W2"], "o", m)
    g.node("DimShuffle", row, ["b2"], "b2r", [1, None])
    g.ew("add", ["o", "b2r"], "out", m, name="out")
    g.outputs = ["out"]
    g.write()


def w6(dt):  # log(1 + x): samples/log1p.json in both dtypes
    with open(os.path.join(ROOT, "samples", "log1p.json")) as f:
        doc = json.load(f)
    doc["name"] = f"w6_log1p_{dt}"
    for v in doc["variables"]:
        if v["type"]["dtype"] == "float64":
            v["type"]["dtype"] = dt
    with open(os.path.join(HERE, doc["name"] + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def w4_loss(dt):  # samples/logistic_regression/loss.json, retyped; `kiln grad` runs at bench time
    with open(os.path.join(ROOT, "samples", "logistic_regression", "loss.json")) as f:
        doc = json.load(f)
    doc["name"] = f"w4_logreg_{dt}"
    for v in doc["variables"]:
        if v["type"]["dtype"] == "float64":
            v["type"]["dtype"] = dt
    for n in doc["nodes"]:
        so = n["props"].get("scalar_op")
        if isinstance(so, dict) and so.get("name") == "cast":
            so["dtype"] = dt
    with open(os.path.join(HERE, f"w4_loss_{dt}.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def w8(dt):  # GP log-likelihood core: L = chol(K), alpha = L^-T L^-1 y, -y.alpha/2 - sum(log diag L)
    g = Graph(f"w8_gp_{dt}", dt)
    m, v = [None, None], [None]
    g.inputs = [g.var("K", m, name="K"), g.var("y", v, name="y")]
    g.var("minus_half", [], value=-0.5)
    g.node("Cholesky", {"lower": True}, ["K"], "L", m)
    g.node("SolveTriangular", {"lower": True, "unit_diagonal": False, "b_ndim": 1}, ["L", "y"], "z", v)
    g.node("DimShuffle", {"input_ndim": 2, "new_order": [1, 0]}, ["L"], "Lt", m)
    g.node("SolveTriangular", {"lower": False, "unit_diagonal": False, "b_ndim": 1}, ["Lt", "z"], "alpha", v,
           name="alpha")
    g.node("Dot", {}, ["y", "alpha"], "quad", [])
    g.ew("mul", ["minus_half", "quad"], "half_quad", [])
    g.node("ExtractDiag", {"offset": 0, "axis1": 0, "axis2": 1}, ["L"], "d", v)
    g.ew("log", ["d"], "logd", v)
    g.node("Sum", {"axis": None}, ["logd"], "logdet_half", [])
    g.ew("sub", ["half_quad", "logdet_half"], "loglik", [], name="loglik")
    g.outputs = ["loglik", "alpha"]
    g.write()


def w9(dt):  # a batch of 4x4 Cholesky factorisations (a Blockwise, as PyTensor's cholesky writes it)
    g = Graph(f"w9_chol4_{dt}", dt)
    g.inputs = [g.var("A", [None, 4, 4], name="A")]
    g.node("Blockwise", {"core_op": {"op": "Cholesky", "props": {"lower": True}}, "signature": "(m,m)->(m,m)"},
           ["A"], "L", [None, 4, 4], name="L")
    g.outputs = ["L"]
    g.write()


def w10(dt):  # mu[idx] + x: a gather on axis 0 (PyTensor 3.x's idx_list=(0,)) read by an add
    g = Graph(f"w10_gather_add_{dt}", dt)
    v = [None]
    g.inputs = [g.var("mu", v, name="mu"), g.var("idx", v, dtype="int64", name="idx"), g.var("x", v, name="x")]
    g.node("AdvancedSubtensor", {"idx_list": [{"index": "input"}]}, ["mu", "idx"], "g", v)
    g.ew("add", ["g", "x"], "y", v, name="y")
    g.outputs = ["y"]
    g.write()


for dt in ("float64", "float32"):
    w1(dt), w2(dt), w3(dt), w5(dt), w6(dt), w4_loss(dt), w8(dt), w9(dt), w10(dt)

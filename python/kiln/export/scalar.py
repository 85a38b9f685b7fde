"""PyTensor scalar ops (what Elemwise broadcasts and CAReduce folds) in the graph format, and
Composite inner graphs.

SCALAR_OPS is the table: PyTensor's scalar op class name -> the format's name, whether kiln
implements it today, and the format version that has it. When kiln gains a scalar op, flip its
`kiln` flag.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .values import V1_DTYPES, V2_IMPLEMENTED_DTYPES, nested_json
from .writer import Unsupported


class ScalarEntry(NamedTuple):
    name: str  #: the graph format's name
    kiln: bool = True  #: implemented in today's kiln
    version: int = 1  #: the format version that has it


SCALAR_OPS: dict[str, ScalarEntry] = {
    # unary
    "Neg": ScalarEntry("neg"), "Abs": ScalarEntry("abs"), "Sign": ScalarEntry("sgn"),
    "Exp": ScalarEntry("exp"), "Exp2": ScalarEntry("exp2"), "Expm1": ScalarEntry("expm1"),
    "Log": ScalarEntry("log"), "Log2": ScalarEntry("log2"), "Log10": ScalarEntry("log10"),
    "Log1p": ScalarEntry("log1p"), "Sqrt": ScalarEntry("sqrt"), "Sqr": ScalarEntry("sqr"),
    "Reciprocal": ScalarEntry("reciprocal"),
    "Sin": ScalarEntry("sin"), "Cos": ScalarEntry("cos"), "Tan": ScalarEntry("tan"),
    "ArcSin": ScalarEntry("arcsin"), "ArcCos": ScalarEntry("arccos"), "ArcTan": ScalarEntry("arctan"),
    "Sinh": ScalarEntry("sinh"), "Cosh": ScalarEntry("cosh"), "Tanh": ScalarEntry("tanh"),
    "ArcSinh": ScalarEntry("arcsinh"), "ArcCosh": ScalarEntry("arccosh"), "ArcTanh": ScalarEntry("arctanh"),
    "Sigmoid": ScalarEntry("sigmoid"), "Softplus": ScalarEntry("softplus"), "Log1mexp": ScalarEntry("log1mexp"),
    "Erf": ScalarEntry("erf"), "Erfc": ScalarEntry("erfc"), "Erfcx": ScalarEntry("erfcx"),
    "Erfinv": ScalarEntry("erfinv"), "Gamma": ScalarEntry("gamma"), "GammaLn": ScalarEntry("gammaln"),
    "Psi": ScalarEntry("psi"), "TriGamma": ScalarEntry("tri_gamma"),
    "Floor": ScalarEntry("floor"), "Ceil": ScalarEntry("ceil"), "Trunc": ScalarEntry("trunc"),
    "RoundHalfToEven": ScalarEntry("round_half_to_even"),
    "RoundHalfAwayFromZero": ScalarEntry("round_half_away_from_zero"),
    "IsNan": ScalarEntry("isnan"), "IsInf": ScalarEntry("isinf"), "Invert": ScalarEntry("invert"),
    "Identity": ScalarEntry("identity"),
    # binary and n-ary
    "Add": ScalarEntry("add"), "Sub": ScalarEntry("sub"), "Mul": ScalarEntry("mul"),
    "TrueDiv": ScalarEntry("true_div"), "IntDiv": ScalarEntry("int_div"), "Mod": ScalarEntry("mod"),
    "Pow": ScalarEntry("pow"),
    "ScalarMaximum": ScalarEntry("maximum"), "ScalarMinimum": ScalarEntry("minimum"),
    "Maximum": ScalarEntry("maximum"), "Minimum": ScalarEntry("minimum"),
    "ArcTan2": ScalarEntry("arctan2"),
    "EQ": ScalarEntry("eq"), "NEQ": ScalarEntry("neq"), "LT": ScalarEntry("lt"), "LE": ScalarEntry("le"),
    "GT": ScalarEntry("gt"), "GE": ScalarEntry("ge"),
    "AND": ScalarEntry("and"), "OR": ScalarEntry("or"), "XOR": ScalarEntry("xor"),
    "Second": ScalarEntry("second"),
    # ternary
    "Switch": ScalarEntry("switch"), "Clip": ScalarEntry("clip"),
    # the special functions (PyTensor 2.26 has them too: version 1)
    "Erfcinv": ScalarEntry("erfcinv"), "I0": ScalarEntry("i0"), "I1": ScalarEntry("i1"),
    "GammaInc": ScalarEntry("gammainc"), "GammaIncC": ScalarEntry("gammaincc"),
    "GammaIncInv": ScalarEntry("gammaincinv"), "GammaIncCInv": ScalarEntry("gammainccinv"),
    "Ive": ScalarEntry("ive"), "Kve": ScalarEntry("kve"), "Jv": ScalarEntry("jv"),
    "Owens_t": ScalarEntry("owens_t"), "PolyGamma": ScalarEntry("polygamma"),
    "BetaInc": ScalarEntry("betainc"), "BetaIncInv": ScalarEntry("betaincinv"),
    "Hyp2F1": ScalarEntry("hyp2f1"),
    # graph format v2: complex numbers
    "Real": ScalarEntry("real", version=2), "Imag": ScalarEntry("imag", version=2),
    "Conj": ScalarEntry("conj", version=2), "Angle": ScalarEntry("angle", version=2),
    "Complex": ScalarEntry("complex", version=2),
}


def _gamma_times(inc):
    def build(k, x):
        import pytensor.scalar.math as psm

        return getattr(psm, inc)(k, x) * psm.gamma(k)
    return build


def _bessel_j(order: int):
    def build(x, out_dtype):
        import pytensor.scalar as ps
        import pytensor.scalar.math as psm

        return psm.jv(ps.constant(order, dtype=out_dtype), x)
    return build


def _degrees(numerator: float, denominator: float):
    def build(x, out_dtype):
        import pytensor.scalar as ps

        # np.deg2rad / np.rad2deg: x times pi/180 or 180/pi, that quotient itself computed in
        # the output's dtype (npy_deg2radf is x*(NPY_PIf/180.0f)); float32 for 8- and 16-bit
        # integers, as PyTensor's upgrade_to_float and its impl for int8 say.
        factor = np.asarray(numerator, dtype=out_dtype) / np.asarray(denominator, dtype=out_dtype)
        return ps.cast(x, out_dtype) * ps.constant(np.asarray(factor, dtype=out_dtype))
    return build


#: Scalar ops the format does not have, as Composites of ops it has (built over the op's input
#: types, so they also give kiln's differentiation something to differentiate): GammaU and
#: GammaL are what their impl() computes (SciPy's regularised function times gamma(k)); J0 and
#: J1 are jv of order 0 and 1 (with jv's order constant in the output's dtype); Deg2Rad and
#: Rad2Deg are NumPy's product by pi/180 or 180/pi in the output dtype.
LOWERED_SCALAR_OPS = {
    "GammaU": (_gamma_times("gammaincc"), False),
    "GammaL": (_gamma_times("gammainc"), False),
    "J0": (_bessel_j(0), True),
    "J1": (_bessel_j(1), True),
    "Deg2Rad": (_degrees(np.pi, 180), True),
    "Rad2Deg": (_degrees(180, np.pi), True),
}


def _is_scalar_loop(op) -> bool:
    try:
        from pytensor.scalar.loop import ScalarLoop
    except ImportError:  # a PyTensor without ScalarLoop
        return False
    return isinstance(op, ScalarLoop)


class ScalarSpeller:
    """Spells scalar ops for one export: records the version they need and collects every
    scalar op kiln lacks, so a Composite reports all of its problems at once."""

    def __init__(self, writer):
        self.writer = writer
        self.missing: list[str] = []

    def spell(self, op, in_dtypes=None):
        """The format's form of a scalar op: a name, {"name": "cast", ...}, a Composite or a ScalarLoop
        object. in_dtypes (the op's input dtypes) are needed by LOWERED_SCALAR_OPS only."""
        cls = type(op).__name__
        if cls in LOWERED_SCALAR_OPS:
            return self.lowered(op, in_dtypes)
        if cls == "Cast":
            dtype = str(op.o_type.dtype)
            if dtype in V2_IMPLEMENTED_DTYPES:
                self.writer.require_v2(f"a cast to {dtype}")
            elif dtype not in V1_DTYPES:
                self.missing.append(f"cast to {dtype}")
            return {"name": "cast", "dtype": dtype}
        if cls == "Composite":
            return self.composite(op)
        if _is_scalar_loop(op):  # ScalarLoop and its subclasses (Grad2F1Loop, ...)
            self.writer.require_v2("scalar op ScalarLoop")
            loop = self.composite(op)  # the same inner graph over (carried..., constants...)
            loop["name"] = "ScalarLoop"
            loop["is_while"] = bool(op.is_while)
            return loop
        entry = SCALAR_OPS.get(cls)
        if entry is None:
            self.missing.append(f"{cls} (not in the graph format)")
            return cls
        if entry.version > 1:
            self.writer.require_v2(f"scalar op {entry.name}")
        if not entry.kiln and not self.writer.options.allow_unimplemented:
            self.missing.append(f"{entry.name} (not implemented in kiln yet)")
        return entry.name

    def lowered(self, op, in_dtypes) -> dict:
        """A LOWERED_SCALAR_OPS op as the Composite of its decomposition, cast to the op's own output
        dtype."""
        import pytensor.scalar as ps

        cls = type(op).__name__
        if in_dtypes is None:
            self.missing.append(f"{cls} (not in the graph format; written as a Composite only where its "
                                "input types are known)")
            return cls
        build, wants_out_dtype = LOWERED_SCALAR_OPS[cls]
        ins = [ps.get_scalar_type(str(d))() for d in in_dtypes]
        out_dtype = op.make_node(*ins).outputs[0].type.dtype
        out = build(*ins, out_dtype) if wants_out_dtype else build(*ins)
        if out.type.dtype != out_dtype:
            out = ps.cast(out, out_dtype)
        return self.composite(ps.Composite(ins, [out]))

    def composite(self, comp) -> dict:
        """A Composite's inner scalar graph, in its own id scope."""
        from pytensor.graph.basic import Constant

        from .compat import io_toposort

        ids: dict = {}
        variables: list[dict] = []
        nodes: list[dict] = []

        def declare(var, prefix):
            vid = f"{prefix}{len(variables)}"
            variables.append({"id": vid, "dtype": str(var.type.dtype)})
            ids[var] = vid
            return vid

        def ref(var):
            if var in ids:
                return ids[var]
            if isinstance(var, Constant):
                vid = declare(var, "c")
                variables[-1]["value"] = nested_json(np.asarray(var.data, dtype=var.type.dtype))
                return vid
            raise Unsupported(f"Composite inner variable {var} has no producer")

        inputs = [declare(v, "i") for v in comp.inputs]
        for apply in io_toposort(comp.inputs, comp.outputs):
            in_ids = [ref(v) for v in apply.inputs]
            op = self.spell(apply.op, [v.type.dtype for v in apply.inputs])
            out_ids = [declare(v, "t") for v in apply.outputs]
            nodes.append({"op": op, "inputs": in_ids, "outputs": out_ids})
        outputs = [ref(v) for v in comp.outputs]
        return {"name": "Composite", "variables": variables, "inputs": inputs, "nodes": nodes, "outputs": outputs}

    def check(self) -> None:
        """Raises Unsupported naming every scalar op spelled so far that kiln lacks."""
        if self.missing:
            raise Unsupported("scalar op(s) " + ", ".join(dict.fromkeys(self.missing)))


def spell_scalar_op(writer, op, in_dtypes=None):
    """The format's spelling of one scalar op, raising Unsupported for what kiln lacks."""
    speller = ScalarSpeller(writer)
    spelled = speller.spell(op, in_dtypes)
    speller.check()
    return spelled

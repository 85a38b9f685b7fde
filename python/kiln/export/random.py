"""Random variables (graph format version 2): every PyTensor RandomVariable is written by class
name with its props and PyTensor's inputs `(rng, size, *params)` and outputs `(next_rng, draws)`.

kiln draws the classes in KILN_RANDOM_VARIABLES with NumPy's exact streams (docs/random.md);
the others (and MvNormalRV with a method other than "cholesky") are refused, naming each,
unless asked to write them anyway.
"""
from __future__ import annotations

from .entries import Func
from .writer import Unsupported, Writer

#: The RandomVariable classes kiln implements (generator/ops/random.cpp, random_core.cpp,
#: random_permutation.cpp).
KILN_RANDOM_VARIABLES = frozenset({
    "UniformRV", "TriangularRV", "BetaRV", "NormalRV", "LogNormalRV", "GammaRV", "ExponentialRV", "WeibullRV",
    "LogisticRV", "VonMisesRV", "InvGammaRV", "WaldRV", "LaplaceRV", "PoissonRV", "GeometricRV",
    "HyperGeometricRV", "BinomialRV", "IntegersRV", "HalfNormalRV", "StudentTRV", "GumbelRV", "HalfCauchyRV",
    "ParetoRV", "TruncExponentialRV", "BernoulliRV", "NegBinomialRV", "CauchyRV", "GenGammaRV", "BetaBinomialRV",
    "DirichletRV", "MultinomialRV", "CategoricalRV", "MvNormalRV", "PermutationRV",
})


def _random_variable(w: Writer, node) -> None:
    op = node.op
    cls = type(op).__name__
    if not w.options.allow_unimplemented:
        if cls not in KILN_RANDOM_VARIABLES:
            raise Unsupported(f"the random variable {cls} is not implemented in kiln yet")
        if getattr(op, "method", "cholesky") != "cholesky":
            raise Unsupported(f"MvNormalRV with method {op.method!r} is not implemented in kiln yet (only 'cholesky')")
    props = {}
    for key in getattr(op, "__props__", ()):
        if key == "inplace":
            continue
        value = getattr(op, key)
        if key == "dtype":  # "floatX" (the class default) is the draws' actual dtype in the file
            value = node.outputs[1].type.dtype if str(value) == "floatX" else str(value)
        props[key] = value
    w.require_v2(f"random variable {cls}")
    w.emit(node, cls, props)


RANDOM_VARIABLE = Func(_random_variable)


def is_random_variable(op) -> bool:
    return any(base.__name__ == "RandomVariable" for base in type(op).__mro__)

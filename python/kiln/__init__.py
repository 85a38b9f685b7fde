"""kiln for Python: export PyTensor/PyMC graphs to kiln, call the libraries kiln compiles.

    graph = kiln.from_pytensor([y], [x], name="f")   # a kiln graph file from PyTensor
    f = kiln.function([x], y)                          # export + kiln compile + load
    f = pytensor.function([x], y, mode=kiln.mode())    # kiln as PyTensor's backend
    lib = kiln.load("build/libf.so")                   # call any kiln library from NumPy
    logp = kiln.pymc.compile_logp(model, "out/")       # a PyMC model's logp and gradient

Only NumPy is needed to load and call libraries; PyTensor (and PyMC) for the rest.
"""
from .build import compile, library_for
from .errors import (
    KilnAssertionError,
    KilnCallError,
    KilnCompileError,
    KilnError,
    KilnGraphError,
    KilnIndexError,
    KilnInputError,
    KilnLinAlgError,
    KilnLoadError,
    KilnNotFoundError,
    KilnOutputError,
    KilnShapeError,
    KilnValueError,
    UnsupportedGraphError,
)
from .loader import Function, KilnCopyWarning, TensorSpec, load

__version__ = "0.1.0"


def rng_words(generator):
    """A NumPy Generator(PCG64)'s state as kiln's C ABI carries it (uint64[6])."""
    from .export.rng import rng_words as _rng_words

    return _rng_words(generator)


def generator_from_words(words):
    """A NumPy Generator(PCG64) in the state of kiln's uint64[6] rng words."""
    from .export.rng import generator_from_words as _generator_from_words

    return _generator_from_words(words)


def from_pytensor(outputs, inputs=None, **kwargs):
    """Exports PyTensor variables or a FunctionGraph as a kiln graph: see kiln.export.from_pytensor."""
    from .export import from_pytensor as _from_pytensor

    return _from_pytensor(outputs, inputs, **kwargs)


def function(inputs, outputs, **kwargs):
    """pytensor.function through kiln: see kiln.pytensor_function.function."""
    from .pytensor_function import function as _function

    return _function(inputs, outputs, **kwargs)


def mode(**kwargs):
    """A PyTensor Mode compiling through kiln: see kiln.pytensor_mode.mode."""
    from .pytensor_mode import mode as _mode

    return _mode(**kwargs)


def __getattr__(name):
    if name == "pymc":  # kiln.pymc without importing PyMC up front
        import importlib

        return importlib.import_module(".pymc", __name__)
    raise AttributeError(f"module 'kiln' has no attribute {name!r}")

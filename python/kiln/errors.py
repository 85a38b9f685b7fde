"""kiln's errors as Python exceptions.

Three sources, three families:
- a compiled library's status codes (kiln.h's kiln_status): one class per family, each also
  deriving the built-in exception a NumPy user would expect (IndexError for an index out of
  range, AssertionError for a failed Assert, ...), carrying `status` and kiln's message;
- the `kiln` executable's exit codes (invalid graph, not implemented, compiler failure, ...);
- the exporter: `UnsupportedGraphError` lists every node kiln cannot express at once.
"""
from __future__ import annotations

from dataclasses import dataclass

from numpy.linalg import LinAlgError


class KilnError(Exception):
    """Base class of every error kiln's Python package raises on purpose."""


# --- a compiled library's status codes --------------------------------------------------------

#: kiln.h's kiln_status names, by code.
STATUS_NAMES = {
    0: "ok",
    1: "invalid argument",
    2: "wrong number of inputs",
    3: "wrong input dtype",
    4: "wrong input rank",
    5: "wrong input shape",
    6: "shape mismatch",
    7: "index out of range",
    8: "assertion failed",
    9: "invalid value",
    10: "bad output tensor",
    11: "out of memory",
    12: "tensor not in CPU memory",
    13: "linear algebra failure",
    14: "internal error",
}


class KilnCallError(KilnError):
    """A call into a compiled kiln library failed; `status` is its kiln_status code and
    `message` the context's last_error (it names the input or node involved)."""

    def __init__(self, status: int, message: str, graph: str = ""):
        self.status = status
        self.status_name = STATUS_NAMES.get(status, f"unknown status {status}")
        self.message = message
        self.graph = graph
        where = f"{graph}: " if graph else ""
        super().__init__(f"{where}{message} [kiln status {status}: {self.status_name}]")


class KilnInputError(KilnCallError, TypeError):
    """An input has the wrong dtype, rank or static length, or an argument is invalid
    (KILN_ERR_ARGUMENT, _INPUT_COUNT, _INPUT_DTYPE, _INPUT_RANK, _INPUT_SHAPE)."""


class KilnShapeError(KilnCallError, ValueError):
    """Shapes do not broadcast or lengths disagree at run time (KILN_ERR_BROADCAST)."""


class KilnIndexError(KilnCallError, IndexError):
    """An index is out of range (KILN_ERR_INDEX)."""


class KilnAssertionError(KilnCallError, AssertionError):
    """A CheckAndRaise / Assert / SpecifyShape check failed (KILN_ERR_ASSERT)."""


class KilnValueError(KilnCallError, ValueError):
    """An invalid value: a bad reshape, a zero step, the max of nothing (KILN_ERR_VALUE)."""


class KilnOutputError(KilnCallError, ValueError):
    """A caller-provided output (`out=`) has the wrong dtype, shape or layout (KILN_ERR_OUTPUT)."""


class KilnMemoryError(KilnCallError, MemoryError):
    """The library ran out of memory (KILN_ERR_ALLOC)."""


class KilnDeviceError(KilnCallError, ValueError):
    """A tensor is not in CPU memory (KILN_ERR_DEVICE)."""


class KilnLinAlgError(KilnCallError, LinAlgError):
    """A linear-algebra failure, e.g. a Cholesky of a matrix that is not positive definite
    (KILN_ERR_LINALG): NumPy's `LinAlgError` (a ValueError), which is also SciPy's
    `scipy.linalg.LinAlgError` and what PyTensor's `on_error="raise"` raises."""


class KilnInternalError(KilnCallError, RuntimeError):
    """A bug in kiln (KILN_ERR_INTERNAL); please report it with the graph."""


_STATUS_CLASSES = {
    1: KilnInputError,
    2: KilnInputError,
    3: KilnInputError,
    4: KilnInputError,
    5: KilnInputError,
    6: KilnShapeError,
    7: KilnIndexError,
    8: KilnAssertionError,
    9: KilnValueError,
    10: KilnOutputError,
    11: KilnMemoryError,
    12: KilnDeviceError,
    13: KilnLinAlgError,
    14: KilnInternalError,
}


def call_error(status: int, message: str, graph: str = "") -> KilnCallError:
    """The exception for a failed call's status code and last_error message."""
    return _STATUS_CLASSES.get(status, KilnCallError)(status, message, graph)


# --- the kiln executable ------------------------------------------------------------------------


class KilnLoadError(KilnError, OSError):
    """A library cannot be opened, has no such graph, or speaks another ABI version."""


class KilnNotFoundError(KilnError, FileNotFoundError):
    """The `kiln` executable cannot be found (set KILN, put it on PATH, or build kiln)."""


class KilnCompileError(KilnError):
    """`kiln compile` failed; `exit_code` is kiln's exit code and `output` what it printed."""

    def __init__(self, message: str, exit_code: int, output: str):
        self.exit_code = exit_code
        self.output = output
        super().__init__(message)


class KilnGraphError(KilnCompileError, ValueError):
    """kiln refused the graph file (exit code 2): it names the JSON pointer or node."""


class KilnCompileNotImplementedError(KilnCompileError, NotImplementedError):
    """The graph needs something kiln does not implement yet (exit code 5)."""


class KilnToolchainError(KilnCompileError):
    """The C++ compiler failed on kiln's generated code (exit code 6)."""


_EXIT_CLASSES = {2: KilnGraphError, 5: KilnCompileNotImplementedError, 6: KilnToolchainError}


def compile_error(exit_code: int, output: str, command: str) -> KilnCompileError:
    """The exception for a failed `kiln` command."""
    cls = _EXIT_CLASSES.get(exit_code, KilnCompileError)
    text = output.strip() or "(no output)"
    return cls(f"{command} failed with exit code {exit_code}:\n{text}", exit_code, output)


# --- the exporter ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One node (or variable) of a PyTensor graph that kiln cannot express."""

    op_class: str  #: the op's class name, e.g. "Cholesky"
    op: str  #: the op as PyTensor prints it, e.g. "Cholesky{lower=True}"
    reason: str  #: why, e.g. "not implemented in kiln yet"
    where: str = ""  #: the node's position and outputs, e.g. "node 7 -> L"

    def __str__(self) -> str:
        where = f" ({self.where})" if self.where else ""
        return f"{self.op}{where}: {self.reason}"


class UnsupportedGraphError(KilnError, NotImplementedError):
    """The graph has nodes kiln cannot express (yet); `problems` lists every one of them."""

    def __init__(self, problems: list[Problem], graph: str = ""):
        self.problems = list(problems)
        ops = sorted({p.op_class for p in self.problems})
        head = f"kiln cannot express {len(self.problems)} node(s) of graph {graph!r} (ops: {', '.join(ops)}):"
        super().__init__("\n  ".join([head, *map(str, self.problems)]))

    @property
    def op_names(self) -> set[str]:
        """The class names of the offending ops ("Cholesky", "AdvancedSubtensor", ...)."""
        return {p.op_class for p in self.problems}

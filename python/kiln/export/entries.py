"""Op table entries: how one PyTensor op class is written in the graph format."""
from __future__ import annotations

from typing import Callable

from .writer import Unsupported, Writer


class Entry:
    """How one PyTensor op class is written."""

    version = 1  #: the lowest format version that has this op

    def write(self, w: Writer, node) -> None:
        raise NotImplementedError

    def spell(self, w: Writer, op) -> tuple[str, dict]:
        """(format name, props) of the op alone, for a Blockwise core op."""
        raise Unsupported(f"{type(op).__name__} cannot be a Blockwise core op in the graph format")


class Same(Entry):
    """Same name (or `name`), the listed props copied where the op has them; `convert` maps a prop
    to a function of its value."""

    def __init__(self, *props: str, name: str | None = None, version: int = 1,
                 convert: dict[str, Callable] | None = None):
        self.props = props
        self.name = name
        self.version = version
        self.convert = convert or {}

    def spell(self, w: Writer, op) -> tuple[str, dict]:
        props = {}
        for key in self.props:
            if hasattr(op, key):
                value = getattr(op, key)
                props[key] = self.convert[key](value) if key in self.convert else _json_prop(value)
        if self.version > 1:
            w.require_v2(f"op {type(op).__name__}")
        return self.name or type(op).__name__, props

    def write(self, w: Writer, node) -> None:
        name, props = self.spell(w, node.op)
        w.emit(node, name, props)


class Func(Entry):
    """An entry written by a function f(writer, node)."""

    def __init__(self, fn: Callable[[Writer, object], None], spell: Callable | None = None):
        self.fn = fn
        self._spell = spell

    def write(self, w: Writer, node) -> None:
        self.fn(w, node)

    def spell(self, w: Writer, op):
        if self._spell is None:
            return super().spell(w, op)
        return self._spell(w, op)


def _json_prop(value):
    if isinstance(value, (tuple, list)):
        return [_json_prop(v) for v in value]
    if isinstance(value, type):
        return value.__name__
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value

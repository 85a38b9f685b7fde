"""PyTensor names that moved between the 2.x and 3.x releases the exporter supports."""
from __future__ import annotations

try:  # PyTensor >= 2.32
    from pytensor.graph.traversal import graph_inputs, io_toposort
except ImportError:  # older releases
    from pytensor.graph.basic import graph_inputs, io_toposort

__all__ = ["graph_inputs", "io_toposort"]

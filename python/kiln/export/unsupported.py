"""The exception an op handler raises for a node kiln cannot express."""


class Unsupported(Exception):
    """Raised by an op handler: kiln cannot express this node (the message says why)."""

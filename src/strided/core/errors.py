"""The one exception family of strided.

Every error names the operation, what it expected and what it was given, in the
spirit of PyTorch's TORCH_CHECK messages.  Subclasses keep Python's built-in
meaning so that ``except ValueError`` / ``except IndexError`` still work.
"""


class StridedError(ValueError):
    """Base of every error raised by strided (also a ValueError)."""


class ShapeError(StridedError):
    """Shapes, dims or strides that an operation cannot accept."""


class StridedIndexError(StridedError, IndexError):
    """An index or dim outside its range."""


class LayoutBoundsError(StridedError):
    """A layout that reaches outside its buffer."""


class DTypeError(StridedError):
    """A dtype an operation does not support or cannot combine."""


class TooHardError(StridedError):
    """An exact analysis that would exceed its work bound."""

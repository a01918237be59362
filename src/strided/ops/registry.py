"""The op registry: every op strided records or dispatches, declared once.

An ``OpDef`` says what an op is: its family (which kernel family and which
op-layer function run it), how its result dtype follows from its inputs, its
name in the family's kernel table, its gradient rule, and the Tensor methods
and operators that call it.  ``strided.ops`` declares the table and derives
the Tensor methods from it; ``strided.autograd`` finds gradient rules here
and nowhere else.

Gradient rules take ``(node, op, g)``: the result tensor, its recorded
``Op`` and the gradient flowing into it, and return one gradient (or None)
per recorded input.  ``NOT_DIFFERENTIABLE`` marks ops whose result carries no
gradient (comparisons, logical ops, argmax); an op declared without a rule
makes backward raise a StridedError naming it, never a guessed gradient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.errors import StridedError

FAMILIES = ("unary", "binary", "where", "reduce", "arg_reduce", "matmul", "cat", "index_select", "view", "copy",
            "sort", "scan", "fused")

# How a result's dtype follows from the inputs' (``ops.elementwise`` and ``ops.reduce`` apply them).
DTYPE_RULES = {
    "same": "the input's dtype",
    "float": "the input's dtype when it is a float, else f64 (NumPy's rule for exp, log, ...)",
    "bool": "bool, from bool inputs only",
    "promote": "NumPy's promotion of the operands (a Python scalar only widens the kind)",
    "true_div": "promotion, then f64 unless the result is a float (true division)",
    "compare": "bool, after comparing in the promoted dtype",
    "sum": "the input's dtype when it is a float, else i64",
    "mean": "the input's dtype when it is a float, else f64",
    "index": "i64",
    "matmul": "the operands' promoted dtype (Tensor.matmul and promote=False: they must agree)",
    "cast": "the requested dtype",
}


def NOT_DIFFERENTIABLE(node, op, g):
    """The rule of ops whose result carries no gradient to any input."""
    return [None] * len(op.inputs)


@dataclass(frozen=True)
class OpDef:
    name: str
    family: str
    dtype_rule: str = "same"
    kernel: str | None = None  # the op's name in its family's kernel table (None: no kernel runs)
    grad: Callable | None = None
    methods: tuple = ()
    operators: tuple = ()  # e.g. ("__add__",): self op other
    reflected: tuple = ()  # e.g. ("__radd__",): other op self


REGISTRY: dict[str, OpDef] = {}


def declare(name: str, family: str, dtype_rule: str = "same", *, kernel: str | None = None, grad=None,
            methods=(), operators=(), reflected=()) -> OpDef:
    """Add one op to the registry (once: a second declaration of a name is a bug)."""
    if name in REGISTRY:
        raise StridedError(f"registry: op {name!r} is declared twice")
    if family not in FAMILIES:
        raise StridedError(f"registry: op {name!r} has unknown family {family!r} (expected one of {FAMILIES})")
    if dtype_rule not in DTYPE_RULES:
        raise StridedError(f"registry: op {name!r} has unknown dtype rule {dtype_rule!r}")
    spec = REGISTRY[name] = OpDef(name, family, dtype_rule, kernel, grad, tuple(methods), tuple(operators),
                                  tuple(reflected))
    return spec


def lookup(name: str) -> OpDef:
    spec = REGISTRY.get(name)
    if spec is None:
        raise StridedError(f"registry: no op named {name!r}")
    return spec


def gradient_rule(name: str):
    """The gradient rule of a recorded op; a StridedError when the op has none."""
    spec = REGISTRY.get(name)
    if spec is None or spec.grad is None:
        raise StridedError(f"backward: op {name!r} has no gradient rule, so no gradient flows through it")
    return spec.grad

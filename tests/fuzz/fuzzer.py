"""Differential fuzzing: random views and op sequences, strided against NumPy.

A *program* is a list of literal steps (tuples of ints, floats, strings and
tuples) that builds tensors and operates on them: leaves of any dtype and rank
0..10 (sizes 0 and 1 included), views (every view op, chained), math (unary,
binary with broadcasting and scalars, reductions, matmul, cat, index_select,
where, to_dtype, copies) and writes through views (``copy_``, ``fill_``,
``t[idx] = v``, ``t += x``), overlapping source and destination included.

``check(program)`` runs the program twice: on strided, and on NumPy doing the
same thing (the oracle).  After every step it compares dtype, shape and
values, and for views the layout too (strides of dims longer than 1, the
offset, and that the buffer is shared); after every write it compares whole
buffers.  Copies, integers and bools must match exactly; float math within
rtol 1e-5 (f32) / 1e-12 (f64), half types within about an ulp of NumPy
computing in f32 and rounding once.  Sums and products compare against a bound
scaled by the sum of magnitudes, the standard floating-point error bound.
Where NumPy raises, strided must raise a ``StridedError``.

Programs are generated from a stream of integer choices (``Choices``): drawn
from a seeded generator by ``run``, from hypothesis by the tests, or replayed
from a list.  Replaying lets ``minimise`` shrink a failing case the way
hypothesis does (delete runs of choices, lower each one), so every failure is
printed as a short literal program, ready to paste into
``tests/fuzz/test_regressions.py``.

``run(minutes=, cases=, seed=)`` fuzzes the ``full`` profile: every dtype and
op.  The ``ci`` profile keeps to f32 and the half types so that a test run
compiles few kernels.  A test tool, not part of the package: the tests import
it from this folder, and long runs start it as a script from the repository
root::

    python tests/fuzz/fuzzer.py --minutes 30 --seed 1     # or --cases N, --profile ci

Where strided deliberately differs from NumPy the oracle follows strided's
documented rule; each such rule is marked "contract:" below.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from dataclasses import dataclass
from math import prod

import ml_dtypes
import numpy as np

DTYPES = ("f16", "bf16", "f32", "f64", "u8", "u32", "i64", "bool")
NP = {
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16), "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64), "u8": np.dtype(np.uint8), "u32": np.dtype(np.uint32),
    "i64": np.dtype(np.int64), "bool": np.dtype(np.bool_),
}
NAME = {v: k for k, v in NP.items()}
FLOATS = ("f16", "bf16", "f32", "f64")
HALF = ("f16", "bf16")
INTS = ("u8", "u32", "i64")

RTOL = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5, "f64": 1e-12}
ACC_RTOL = {"f16": 1e-5, "bf16": 1e-5, "f32": 1e-5, "f64": 1e-12}  # accumulation (halves sum in f32)

UNARY = ("exp", "log", "sqrt", "sqr", "abs", "neg", "relu", "tanh", "sigmoid", "sin", "cos", "sign", "recip", "not")
FLOAT_UNARY = ("exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos", "recip")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt", "ge",
          "logical_and", "logical_or")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
REDUCE = ("sum", "mean", "max", "min")
ARGREDUCE = ("argmax", "argmin")

MAX_NUMEL = 2048  # every tensor a program builds stays this small: programs must run in milliseconds


@dataclass(frozen=True)
class Profile:
    """What programs may use.  ``full`` is everything; ``ci`` keeps the number of distinct
    numba kernels small (each op and compute dtype compiles once, 1 to 4 s cold), while
    still running every view, every kernel family and every path through them."""

    dtypes: tuple = DTYPES
    unary: tuple = UNARY
    binary: tuple = BINARY
    reduce: tuple = REDUCE
    argreduce: tuple = ARGREDUCE
    closed: bool = False  # only ever operate on tensors of ``dtypes`` (results of other dtypes are left alone)
    int_scalars: bool = True


PROFILES = {
    "full": Profile(),
    # f32 and the two half types, which compute in f32: one compute dtype for every op.
    "ci": Profile(dtypes=("f32", "f16", "bf16"), unary=("exp", "neg", "abs", "sqrt"),
                  binary=("add", "sub", "mul", "maximum", "gt"), reduce=("sum", "max"), argreduce=("argmax",),
                  closed=True, int_scalars=False),
}


# ---------------------------------------------------------------------------
# the oracle's dtype rules (NumPy's, on the dtypes strided has)


def promote(a: str, b: str) -> str:
    """NumPy's result dtype for two arrays.  NumPy has no bf16 rules of its own
    for most pairs (ml_dtypes refuses them), so bf16 follows f16's row."""
    if a == b:
        return a
    if {a, b} == {"f16", "bf16"}:
        return "f32"  # contract: f16 with bf16 gives f32 (NumPy refuses the pair)
    r = NAME[np.result_type(NP["f16" if a == "bf16" else a], NP["f16" if b == "bf16" else b])]
    return "bf16" if r == "f16" and "bf16" in (a, b) else r


def promote_scalar(d: str, s) -> str:
    """NEP 50: a Python scalar only widens the kind."""
    r = np.result_type(NP["f16" if d == "bf16" else d], s)
    name = NAME.get(r)
    if name is None:  # pragma: no cover - every pair of ours lands on one of our dtypes
        raise Expected(f"no strided dtype for {r}")
    return "bf16" if name == "f16" and d == "bf16" else name


def _scalar_value(x):
    return x[1]


class Expected(Exception):
    """The oracle's verdict that strided must raise a StridedError here."""


class Undefined(Exception):
    """The result is not defined (a float outside an integer's range converted to it): stop comparing."""


# ---------------------------------------------------------------------------
# choices


class Choices:
    """Where a program's random decisions come from.

    Every decision is an integer in [lo, hi], recorded as ``value - lo`` so that
    0 is always the simplest choice; ``replay`` feeds a recorded list back
    (clamped, zeros once it runs out), ``draw(lo, hi)`` lets hypothesis decide.
    """

    def __init__(self, seed=None, replay=None, draw=None):
        self._rng = np.random.default_rng(seed) if replay is None and draw is None else None
        self._replay = replay
        self._draw = draw
        self.record: list[int] = []

    def int(self, lo: int, hi: int) -> int:
        if hi <= lo:
            return lo
        span = hi - lo
        if self._draw is not None:
            v = self._draw(lo, hi) - lo
        elif self._replay is not None:
            i = len(self.record)
            v = min(max(self._replay[i], 0), span) if i < len(self._replay) else 0
        else:
            v = int(self._rng.integers(0, span + 1))
        self.record.append(v)
        return lo + v

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def weighted(self, weights) -> int:
        r = self.int(0, sum(weights) - 1)
        for i, w in enumerate(weights):
            if r < w:
                return i
            r -= w
        return len(weights) - 1  # pragma: no cover

    def chance(self, percent: int) -> bool:
        """True with the given probability; shrinks towards False."""
        return self.int(0, 99) >= 100 - percent


# ---------------------------------------------------------------------------
# values and shapes

_FLOAT_SIMPLE = (0.0, 1.0, -1.0, 0.5)
_FLOAT_SPECIAL = (math.nan, math.inf, -math.inf, -0.0)
_I64_SIMPLE = (0, 1, -1, 2, -2, 3, 7, -8)
_I64_EXTREME = (2**62, -(2**63), 2**63 - 1, 2**31)


def gen_value(ch: Choices, dtype: str):
    if dtype == "bool":
        return bool(ch.int(0, 1))
    v = ch.int(0, 4095)
    if dtype in FLOATS:
        if v < 4:
            return _FLOAT_SIMPLE[v]
        if v < 8:
            return _FLOAT_SPECIAL[v - 4]
        return ((v - 8) % 512 - 256) / 64.0  # exact in every float dtype but bf16 (which rounds)
    if dtype == "i64":
        if v < 8:
            return _I64_SIMPLE[v]
        if v < 11:
            return _I64_EXTREME[v - 8]
        return v % 33 - 16
    if dtype == "u8":
        return (0, 1, 2, 255)[v] if v < 4 else v % 256
    return (0, 1, 2**32 - 1, 2**31)[v] if v < 4 else v % 1000  # u32


def gen_scalar(ch: Choices, like: str, ints: bool = True):
    """A Python scalar to combine with a tensor of dtype ``like`` (mostly in its range)."""
    kind = ch.weighted([5, 3, 1, 1]) if ints else 1
    if kind == 1 or (kind == 0 and like in FLOATS):
        return (0.5, -1.5, 2.0, 0.0, 3.25, -0.0, 1e10)[ch.int(0, 6)]
    if kind == 2:
        return bool(ch.int(0, 1))
    if kind == 3:  # out of range for some dtypes: NumPy raises, so must strided
        return (-1, 256, 2**32, 2**70)[ch.int(0, 3)]
    return (1, 0, 2, 3, 7, 100)[ch.int(0, 5)]


def gen_shape(ch: Choices, max_rank: int = 10, max_numel: int = 256) -> tuple:
    rank = ch.weighted([6, 14, 22, 20, 14, 8, 5, 3, 3, 2, 3][: max_rank + 1])
    sizes = (1, 2, 3, 4, 0, 5, 6, 7)
    dims = [sizes[ch.weighted([35, 25, 18, 10, 4, 3, 3, 2])] for _ in range(rank)]
    while prod(dims) > max_numel:
        dims[dims.index(max(dims))] = 1
    return tuple(dims)


# ---------------------------------------------------------------------------
# the NumPy side (the oracle)


def _items(index):
    """A program's literal index (ints, ("slice", a, b, c), None, "...") as a Python index."""
    out = []
    for it in index:
        if isinstance(it, tuple):
            out.append(slice(it[1], it[2], it[3]))
        elif it == "...":
            out.append(Ellipsis)
        else:
            out.append(it)
    return tuple(out)


def np_view(arr: np.ndarray, op: str, args: tuple) -> np.ndarray:
    """The NumPy view that strided's view op must equal (reshape may copy)."""
    nd = arr.ndim

    def along(d, item):
        if not -nd <= d < nd:
            raise Expected(f"dim {d} out of range for rank {nd}")
        d %= nd
        return arr[(slice(None),) * d + (item, Ellipsis)]

    if op == "narrow":
        d, start, length = args
        n = arr.shape[d % nd] if nd else 0
        if start < 0:
            start += n
        if not (0 <= start <= n and 0 <= length and start + length <= n):
            raise Expected("narrow out of range")
        return along(d, slice(start, start + length))
    if op == "slice":
        d, start, stop, step = args
        return along(d, slice(start, stop, step))
    if op == "select":
        d, i = args
        return along(d, i)
    if op == "transpose":
        return np.swapaxes(arr, *args)
    if op == "t":
        if nd < 2:
            raise Expected("t needs 2 dims")
        return np.swapaxes(arr, -2, -1)
    if op == "permute":
        return np.transpose(arr, args[0])
    if op == "flip":
        return np.flip(arr, tuple(args[0]))
    if op in ("broadcast_as", "expand"):
        shape = args[0]
        lead = len(shape) - nd
        if op == "expand" and lead >= 0:  # -1 keeps a dim (PyTorch's expand)
            shape = tuple(arr.shape[k - lead] if n == -1 and k >= lead else n for k, n in enumerate(shape))
        if any(n < 0 for n in shape):
            raise Expected("broadcast to a negative size")
        return np.broadcast_to(arr, shape)
    if op == "unsqueeze":
        return np.expand_dims(arr, args[0])
    if op == "squeeze":
        (d,) = args
        if d is None:
            return np.squeeze(arr)
        if not -nd <= d < nd:
            raise Expected("squeeze dim out of range")
        # contract: PyTorch's squeeze leaves a named dim that is not 1 alone (NumPy raises)
        return np.squeeze(arr, d) if arr.shape[d] == 1 else arr[...]
    if op == "reshape":
        shape = args[0]
        try:
            return arr.reshape(shape, copy=False)
        except ValueError:
            return arr.reshape(shape)  # a copy (or the same error again)
    if op == "getitem":
        idx = _items(args[0])
        if Ellipsis not in idx:
            idx = idx + (Ellipsis,)  # a 0-d view, not a scalar, when every dim is indexed
        return arr[idx]
    raise ValueError(f"unknown view {op}")  # pragma: no cover


def _cname(dtype: str) -> str:
    return "f32" if dtype in HALF else dtype


def _c(x: np.ndarray, dtype: str) -> np.ndarray:
    """``x`` in the dtype the math runs in: f32 for half results (compute in f32, round once)."""
    return x.astype(NP["f32" if dtype in HALF else dtype], copy=False)


def _unary_dtype(op: str, d: str) -> str:
    if op == "not":
        if d != "bool":
            raise Expected("not needs bool")
        return "bool"
    if op in FLOAT_UNARY:
        return d if d in FLOATS else "f64"  # contract: f64 for integer input (NumPy: f16 for u8/bool, ints for recip)
    if d == "bool" and op in ("neg", "sign"):
        raise Expected(f"{op} on bool")
    return d  # contract: sqr keeps bool (NumPy: int8)


_NP_UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "recip": lambda x: 1 / x, "abs": np.abs, "neg": np.negative,
    "sign": np.sign, "not": np.logical_not,
}


def np_unary(op: str, x: np.ndarray) -> np.ndarray:
    want = _unary_dtype(op, NAME[x.dtype])
    xc = _c(x, want)
    if op == "sqr":
        y = xc & xc if want == "bool" else xc * xc
    elif op == "relu":
        y = np.maximum(xc, np.zeros((), xc.dtype))
    else:
        y = _NP_UNARY[op](xc)
    return np.asarray(y).astype(NP[want])


def _binary_dtypes(op: str, a, b) -> tuple[str, str]:
    """(dtype the operands are computed in, result dtype), by NumPy's rules."""
    ta = a if isinstance(a, np.ndarray) else None
    tb = b if isinstance(b, np.ndarray) else None
    if ta is not None and tb is not None:
        common = promote(NAME[ta.dtype], NAME[tb.dtype])
    elif ta is not None:
        common = promote_scalar(NAME[ta.dtype], _scalar_value(b))
    else:
        common = promote_scalar(NAME[tb.dtype], _scalar_value(a))
    if op in ("logical_and", "logical_or"):
        return "bool", "bool"
    if op == "div" and common not in FLOATS:
        common = "f64"
    if op in COMPARE:
        return common, "bool"
    if common == "bool":
        if op == "sub":
            raise Expected("sub on bools")
        if op == "pow":
            return "i64", "i64"  # contract: i64 (NumPy: int8)
    return common, common


def _as_operand(x, dtype: str) -> np.ndarray:
    """A tensor operand or a ("scalar", v) converted to ``dtype`` (NumPy raises on out-of-range ints)."""
    if isinstance(x, np.ndarray):
        return x.astype(NP[dtype], copy=False)
    v = _scalar_value(x)
    if isinstance(v, int) and not isinstance(v, bool) and dtype in INTS:
        info = np.iinfo(NP[dtype])
        if not info.min <= v <= info.max:
            raise Expected(f"Python integer {v} out of bounds for {dtype}")
    if dtype in HALF and not isinstance(v, bool):
        # ml_dtypes cannot take a Python int beyond int64; the value itself rounds like any float
        return np.array(float(v), dtype=np.float64).astype(NP[dtype])
    return np.array(v, dtype=NP[dtype])


_NP_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "maximum": np.maximum,
    "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
}


def np_binary(op: str, a, b) -> np.ndarray:
    comp, want = _binary_dtypes(op, a, b)
    np.broadcast_shapes(np.shape(a) if isinstance(a, np.ndarray) else (),
                        np.shape(b) if isinstance(b, np.ndarray) else ())
    if op in COMPARE and _cname(comp) in INTS:
        # NumPy 2 compares an integer array with any Python int exactly, even one outside the
        # dtype (NEP 50): the scalar stays a Python int here
        x, y = (v.astype(NP[_cname(comp)]) if isinstance(v, np.ndarray) else int(_scalar_value(v)) for v in (a, b))
    else:
        x, y = _as_operand(a, _cname(comp)), _as_operand(b, _cname(comp))
    if op == "pow":
        if comp in FLOATS:
            r = np.power(x, y)
        elif comp == "bool":  # pragma: no cover - bool pow computes in i64
            r = np.power(x, y)
        else:
            # contract: an integer base to a negative power is C's truncated result
            # (1 for base 1, +-1 for base -1, else 0) where NumPy raises
            neg = y < 0
            r = np.power(x, np.where(neg, 0, y).astype(y.dtype))
            if neg.any():
                xb, nb = np.broadcast_arrays(x, neg)
                r = np.array(np.broadcast_to(r, nb.shape))
                odd = np.broadcast_to(np.abs(y) % 2 == 1, nb.shape)
                alt = np.where(xb == 1, 1, np.where(xb == -1, np.where(odd, -1, 1), 0)).astype(r.dtype)
                r[nb] = alt[nb]
    elif op in ("add", "mul") and comp == "bool":
        r = (x | y) if op == "add" else (x & y)
    else:
        r = _NP_BINARY[op](x, y)
    return np.asarray(r).astype(NP[want])


def _norm_dims(dims, nd: int):
    if dims is None:
        return None
    ds = dims if isinstance(dims, tuple) else (dims,)
    for d in ds:
        if not -nd <= d < nd:
            raise Expected(f"dim {d} out of range")
    return tuple(sorted({d % nd for d in ds}))


def np_reduce(op: str, x: np.ndarray, dims, keepdim: bool):
    """(result, magnitude bound for the error) of a reduction."""
    d = NAME[x.dtype]
    axes = _norm_dims(dims, x.ndim)
    if op in ("max", "min"):
        if x.size == 0 and (axes is None or any(x.shape[a] == 0 for a in axes) or not axes):
            raise Expected(f"{op} over an empty dim")
        r = (np.max if op == "max" else np.min)(_c(x, d), axis=axes, keepdims=keepdim)
        return np.asarray(r).astype(NP[d]), None
    want = d if d in FLOATS else ("i64" if op == "sum" else "f64")
    if d in FLOATS or op == "mean":
        xf = x.astype(np.float64)
        r = np.sum(xf, axis=axes, keepdims=keepdim)
        mag = np.sum(np.abs(xf), axis=axes, keepdims=keepdim)
        if op == "mean":
            count = x.size if axes is None else prod(x.shape[a] for a in axes)
            r = r / count if count else r * np.nan
            mag = mag / count if count else mag
        return np.asarray(r).astype(NP[want]), np.asarray(mag)
    return np.asarray(np.sum(x.astype(np.int64), axis=axes, keepdims=keepdim)).astype(np.int64), None


def np_argreduce(op: str, x: np.ndarray, dim, keepdim: bool) -> np.ndarray:
    if dim is not None:
        _norm_dims(dim, x.ndim)
    if (x.size == 0) if dim is None else (x.shape[dim] == 0):
        raise Expected(f"{op} over an empty dim")
    f = np.argmax if op == "argmax" else np.argmin
    return np.asarray(f(_c(x, NAME[x.dtype]), axis=dim, keepdims=keepdim)).astype(np.int64)


def np_matmul(a: np.ndarray, b: np.ndarray):
    da, db = NAME[a.dtype], NAME[b.dtype]
    if da != db:  # ``@`` promotes as the standard's matmul does (Tensor.matmul keeps one dtype)
        da = promote(da, db)
        a, b = _as_operand(a, da), _as_operand(b, da)
    if a.ndim == 0 or b.ndim == 0:
        raise Expected("matmul of a rank-0 operand")
    if da in FLOATS:
        comp = np.float32 if da in HALF else np.float64
        r = np.matmul(a.astype(comp), b.astype(comp))
        mag = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
        return np.asarray(r).astype(NP[da]), mag
    if da == "bool":
        return np.matmul(a, b), None
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(NP[da]), None


def _unsafe_to_int(x: np.ndarray, dtype: str) -> np.ndarray:
    """Where converting float ``x`` to integer ``dtype`` is undefined (C's cast of NaN, inf, out of range)."""
    if NAME.get(x.dtype) not in FLOATS or dtype not in INTS:
        return np.zeros(x.shape, bool)
    info = np.iinfo(NP[dtype])
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64))
        return ~np.isfinite(t) | (t < info.min) | (t > info.max)


def np_convert(x: np.ndarray, dtype: str) -> np.ndarray:
    return x.astype(NP[dtype])


@dataclass
class NpTensor:
    arr: np.ndarray
    root: int  # index into NpSide.roots


class NpSide:
    """Runs a program on NumPy.  Tensors are views of root buffers, as strided's are."""

    def __init__(self):
        self.t: list[NpTensor | None] = []
        self.roots: list[np.ndarray] = []

    def new_root(self, values: np.ndarray, like=None) -> NpTensor:
        """A fresh result.  ``like`` (strided's result) gives the layout to mirror, so that
        views of the result have the same strides on both sides; else row-major."""
        if like is None:
            flat = np.ascontiguousarray(values).reshape(-1).copy()
            self.roots.append(flat)
            return NpTensor(flat.reshape(values.shape), len(self.roots) - 1)
        storage, shape, stride, offset = like
        if tuple(shape) != values.shape:  # a wrong shape must show, not be mirrored away
            return self.new_root(values)
        flat = np.zeros(len(storage), values.dtype)
        arr = _strided(flat, shape, stride, offset)
        arr[...] = values
        self.roots.append(flat)
        return NpTensor(arr, len(self.roots) - 1)

    def writable(self, nt: NpTensor) -> tuple[np.ndarray, np.ndarray]:
        """A writable alias of a view (NumPy's broadcast views are read-only) and its element offsets."""
        root = self.roots[nt.root]
        a = nt.arr
        if a.size == 0:
            return np.empty(a.shape, a.dtype), np.empty(a.shape, np.int64)
        off = offsets_in(a, root)
        return _strided(root, a.shape, tuple(s // a.itemsize for s in a.strides),
                        int(off.flat[0]) if a.ndim else int(off)), off


def _strided(flat: np.ndarray, shape, stride, offset) -> np.ndarray:
    if prod(shape) == 0:
        return np.empty(shape, flat.dtype)
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=tuple(shape), strides=tuple(s * item if n > 1 else 0 for n, s in zip(shape, stride)),
        writeable=True,
    )


def offsets_in(view: np.ndarray, root: np.ndarray) -> np.ndarray:
    """Element offsets of a (non-empty) NumPy view inside the flat ``root`` it views, row-major."""
    item = view.itemsize
    base = (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    off = np.full(view.shape, base, dtype=np.int64)
    for k, (n, s) in enumerate(zip(view.shape, view.strides)):
        if n > 1:
            shape = [1] * view.ndim
            shape[k] = n
            off = off + (np.arange(n, dtype=np.int64) * (s // item)).reshape(shape)
    return off


def layout_offsets(shape, stride, offset) -> np.ndarray:
    """Row-major element offsets of a layout, computed here (not by strided)."""
    off = np.full(tuple(shape), offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, stride)):
        if n > 1:
            sh = [1] * len(shape)
            sh[k] = n
            off = off + (np.arange(n, dtype=np.int64) * s).reshape(sh)
    return off


def span_ok(shape, stride, offset, buffer_len) -> bool:
    if prod(shape) == 0:
        return True
    lo = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s < 0)
    hi = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s > 0)
    return lo >= 0 and hi < buffer_len


# ---------------------------------------------------------------------------
# running one step on each side


def step_name(step) -> str:
    kind = step[0]
    if kind in ("view",):
        return f"view.{step[2]}"
    if kind in ("unary", "binary", "reduce", "argreduce", "iop"):
        return f"{kind}.{step[1]}"
    if kind == "copy":
        return f"copy.{step[1]}"
    return kind


def _np_step(side: NpSide, step, like=None):
    """Run ``step`` on NumPy; returns (NpTensor, magnitude bound or None).  Raises Expected/Undefined."""
    kind = step[0]
    T = side.t

    def arr(i):
        return T[i].arr

    def opnd(x):
        return x if isinstance(x, tuple) else arr(x)

    if kind == "leaf":
        _, dtype, shape, values = step
        return side.new_root(np.array(values, dtype=NP[dtype]).reshape(shape)), None
    if kind == "as_strided":
        _, src, shape, stride, offset = step
        root = side.roots[T[src].root]
        if len(shape) != len(stride) or any(n < 0 for n in shape) or not span_ok(shape, stride, offset, len(root)):
            raise Expected("as_strided out of bounds")
        return NpTensor(_strided(root, shape, stride, offset), T[src].root), None
    if kind == "view":
        _, src, op, args = step
        a = arr(src)
        v = np_view(a, op, args)
        if op == "reshape" and not np.shares_memory(v, a) and v.size:
            return side.new_root(v, like), None
        return NpTensor(v, T[src].root), None
    if kind == "unary":
        return side.new_root(np_unary(step[1], arr(step[2])), like), None
    if kind == "binary":
        return side.new_root(np_binary(step[1], opnd(step[2]), opnd(step[3])), like), None
    if kind == "reduce":
        r, mag = np_reduce(step[1], arr(step[2]), step[3], step[4])
        return side.new_root(r, like), mag
    if kind == "argreduce":
        return side.new_root(np_argreduce(step[1], arr(step[2]), step[3], step[4]), like), None
    if kind == "matmul":
        r, mag = np_matmul(arr(step[1]), arr(step[2]))
        return side.new_root(r, like), mag
    if kind == "cat":
        xs = [arr(i) for i in step[1]]
        d = step[2]
        if not xs[0].ndim:
            raise Expected("cat of rank-0 tensors")
        want = NAME[xs[0].dtype]
        for x in xs[1:]:
            want = promote(want, NAME[x.dtype])
        return side.new_root(np.concatenate([x.astype(NP[want]) for x in xs], axis=d), like), None
    if kind == "index_select":
        _, src, index, d = step
        x = arr(src)
        if not x.ndim:
            raise Expected("index_select on rank 0")
        n = x.shape[d]
        if any(not -n <= i < n for i in index):
            raise Expected("index out of range")
        return side.new_root(np.take(x, np.array(index, dtype=np.int64), axis=d), like), None
    if kind == "where":
        _, c, a, b = step
        cond = arr(c).astype(bool)
        av, bv = opnd(a), opnd(b)
        if isinstance(av, tuple) and isinstance(bv, tuple):
            want = promote(promote_scalar("bool", av[1]), promote_scalar("bool", bv[1]))
            want = "f32" if want == "f64" else want  # contract: two Python floats give f32 (PyTorch's default)
        else:
            _, want = _binary_dtypes("add", av, bv)
        r = np.where(cond, _as_operand(av, _cname(want)), _as_operand(bv, _cname(want)))
        return side.new_root(np.asarray(r).astype(NP[want]), like), None
    if kind == "to_dtype":
        _, src, dtype = step
        x = arr(src)
        if _unsafe_to_int(x, dtype).any():
            raise Undefined(f"to_dtype {dtype} of a value outside its range")
        if NAME[x.dtype] == dtype:
            return T[src], None
        return side.new_root(np_convert(x, dtype), like), None
    if kind == "copy":
        _, method, src = step
        x = arr(src)
        if method == "contiguous" and (x.flags.c_contiguous or x.size == 0):
            return T[src], None  # contract: contiguous() returns the tensor itself
        return side.new_root(np.array(x, order="C", copy=True), like), None  # ascontiguousarray makes 0-d 1-d
    if kind in ("copy_", "fill_", "setitem", "iop"):
        return _np_write(side, step), None
    raise ValueError(f"unknown step {kind}")  # pragma: no cover


def _np_write(side: NpSide, step) -> NpTensor:
    kind = step[0]
    T = side.t
    dst_i = step[2] if kind == "iop" else step[1]
    dst = T[dst_i]
    if kind == "setitem":
        dst = NpTensor(np_view(dst.arr, "getitem", (step[2],)), dst.root)
    d = NAME[dst.arr.dtype]
    if kind == "fill_":
        src = ("scalar", step[2])
    elif kind == "setitem":
        src = step[3]
    else:
        src = step[3] if kind == "iop" else step[2]
    sv = src if isinstance(src, tuple) else T[src].arr
    if kind == "iop":
        sv = np_binary(step[1], dst.arr, sv)
    if isinstance(sv, tuple):
        v = sv[1]
        if isinstance(v, float) and d in INTS and _unsafe_to_int(np.array(v), d).any():
            raise Undefined("a float scalar outside the integer range")
        sv = _as_operand(sv, d)
    if sv.ndim > dst.arr.ndim:
        # t[idx] = v drops leading size-1 dims of v (NumPy and PyTorch); copy_ and t += x do not
        extra = sv.shape[: sv.ndim - dst.arr.ndim]
        if kind != "setitem" or any(n != 1 for n in extra):
            raise Expected("the source has more dims than the destination")
        sv = sv.reshape(sv.shape[len(extra):])
    if np.broadcast_shapes(sv.shape, dst.arr.shape) != dst.arr.shape:  # one way: the source stretches
        raise Expected(f"source {sv.shape} does not broadcast to destination {dst.arr.shape}")
    if dst.arr.size == 0:
        return T[dst_i]
    alias, off = side.writable(dst)
    if len(np.unique(off)) < off.size:
        raise Expected("the destination has elements sharing memory")  # contract: ambiguous writes raise
    if _unsafe_to_int(np.broadcast_to(sv, dst.arr.shape), d).any():
        raise Undefined("a float outside the integer range written to an integer buffer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alias[...] = sv  # NumPy copies through a temporary when source and destination overlap
    return T[dst_i]


def _ours_view(sd, t, op, args):
    if op == "t":
        return t.t()
    if op == "permute":
        return t.permute(args[0])
    if op == "flip":
        return t.flip(list(args[0]))
    if op == "broadcast_as":
        return t.broadcast_as(args[0])
    if op == "expand":
        return t.expand(*args[0])
    if op == "reshape":
        return t.reshape(args[0])
    if op == "squeeze":
        return t.squeeze(args[0])
    if op == "getitem":
        return t[_items(args[0])]
    return getattr(t, op)(*args)


_OPERATOR = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


def _ours_step(sd, T: list, step):
    """Run ``step`` on strided (public API only); returns the new tensor."""
    kind = step[0]

    def opnd(x):
        return x[1] if isinstance(x, tuple) else T[x]

    if kind == "leaf":
        _, dtype, shape, values = step
        return sd.from_numpy(np.array(values, dtype=NP[dtype]).reshape(shape))
    if kind == "as_strided":
        _, src, shape, stride, offset = step
        return sd.as_strided(T[src], shape, stride, offset)
    if kind == "view":
        return _ours_view(sd, T[step[1]], step[2], step[3])
    if kind == "unary":
        t = T[step[2]]
        return sd.logical_not(t) if step[1] == "not" else getattr(t, step[1])()
    if kind == "binary":
        op, a, b = step[1], opnd(step[2]), opnd(step[3])
        if op in _OPERATOR:
            return _OPERATOR[op](a, b)
        if op in ("logical_and", "logical_or"):  # & and | are bitwise, as NumPy's
            return getattr(sd, op)(a, b)
        if not isinstance(a, sd.Tensor):  # maximum/minimum are methods: the tensor goes first
            a, b = b, a
        return getattr(a, op)(b)
    if kind == "reduce":
        _, op, src, dims, keepdim = step
        return getattr(T[src], op)(dims, keepdim=keepdim)
    if kind == "argreduce":
        _, op, src, dim, keepdim = step
        return getattr(T[src], op)(dim, keepdim=keepdim)
    if kind == "matmul":
        return T[step[1]] @ T[step[2]]
    if kind == "cat":
        return sd.cat([T[i] for i in step[1]], step[2])
    if kind == "index_select":
        _, src, index, d = step
        return T[src].index_select(sd.tensor(list(index), dtype="i64") if len(index) % 2 else list(index), d)
    if kind == "where":
        return sd.where(T[step[1]], opnd(step[2]), opnd(step[3]))
    if kind == "to_dtype":
        return T[step[1]].to_dtype(step[2])
    if kind == "copy":
        return getattr(T[step[2]], step[1])()
    if kind == "copy_":
        return T[step[1]].copy_(opnd(step[2]))
    if kind == "fill_":
        return T[step[1]].fill_(step[2])
    if kind == "setitem":
        t = T[step[1]]
        t[_items(step[2])] = opnd(step[3])
        return t
    if kind == "iop":
        _, op, dst, src = step
        t = T[dst]
        before = t
        if op == "add":
            t += opnd(src)
        elif op == "sub":
            t -= opnd(src)
        else:
            t *= opnd(src)
        if t is not before:
            raise AssertionError("in-place op returned a different tensor")
        return t
    raise ValueError(f"unknown step {kind}")  # pragma: no cover


# ---------------------------------------------------------------------------
# comparing


@dataclass
class Failure:
    step: int
    name: str  # step_name
    category: str  # raised, wrong_error, no_error, dtype, shape, values, layout, buffer, oracle
    message: str
    context: dict = None  # facts about the failing step: dst_numel for writes
    @property
    def signature(self) -> tuple[str, str]:
        return (self.category, self.name)

    def __str__(self):
        return f"[{self.category}] {self.name} at step {self.step}: {self.message}"


def read_ours(t) -> np.ndarray:
    """A tensor's values gathered from its buffer by offsets computed here (not by ``t.numpy()``)."""
    data = t.storage.data
    lay = t.layout
    if lay.numel == 0:
        return np.empty(lay.shape, data.dtype)
    return data[layout_offsets(lay.shape, lay.stride, lay.offset)]


def _same_values(got: np.ndarray, want: np.ndarray, exact: bool, dtype: str, mag=None) -> str | None:
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if got.size == 0:
        return None
    if dtype not in FLOATS:
        if np.array_equal(got, want):
            return None
        bad = np.argwhere(got != want)[0]
        return f"at {tuple(int(i) for i in bad)}: got {got[tuple(bad)]!r}, want {want[tuple(bad)]!r}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    bad = gn != wn
    if exact:
        bad |= ~wn & (g != w)
        if exact == "bits":
            bad |= ~wn & (np.signbit(g) != np.signbit(w))
    else:
        both = ~gn & ~wn
        inf = both & (np.isinf(g) | np.isinf(w))
        bad |= inf & (g != w)
        fin = both & ~inf
        rtol = RTOL[dtype]
        tol = rtol * np.abs(w) + rtol
        if mag is not None:
            tol = tol + ACC_RTOL[dtype] * np.broadcast_to(np.asarray(mag, np.float64), w.shape) * 4
        with np.errstate(invalid="ignore"):
            bad |= fin & ~(np.abs(g - w) <= tol)
    if not bad.any():
        return None
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"at {at}: got {got[at]!r}, want {want[at]!r} ({int(bad.sum())} of {bad.size} differ)"


def _exact(step) -> str | None:
    """"bits" for moves (sign of zero included), "exact" for math that cannot round, else None (tolerance)."""
    kind = step[0]
    if kind in ("leaf", "as_strided", "view", "cat", "index_select", "where", "copy", "copy_", "fill_", "setitem"):
        return "bits"
    if kind == "to_dtype" or kind == "argreduce" or (kind == "reduce" and step[1] in ("max", "min")):
        return "exact"
    if kind == "unary" and step[1] in ("abs", "neg", "relu", "sign", "not"):
        return "exact"
    if kind == "binary" and step[1] in COMPARE + ("maximum", "minimum", "logical_and", "logical_or"):
        return "exact"
    return None


def _layout_of(t):
    return (t.storage.data, t.shape, t.stride, t.offset)


def _dense(t) -> bool:
    lay = t.layout
    if lay.numel == 0:
        return True
    offs = layout_offsets(lay.shape, lay.stride, lay.offset).ravel()
    return len(np.unique(offs)) == offs.size and offs.min() >= 0 and offs.max() < len(t.storage.data)


def _compare_layout(step, ours, npt: NpTensor, side: NpSide, T, NT) -> str | None:
    kind = step[0]
    a = npt.arr
    if kind in ("view", "as_strided"):
        src = step[1]
        is_view = npt.root == NT[src].root
        if a.size and is_view != (ours.storage is T[src].storage):
            return "a view in NumPy but a copy in strided" if is_view else "a copy in NumPy but a view in strided"
        if is_view and a.size:
            want_stride = tuple(s // a.itemsize for s in a.strides)
            for d, (n, s, w) in enumerate(zip(a.shape, ours.stride, want_stride)):
                if n > 1 and s != w:
                    return f"stride {ours.stride} != NumPy's {want_stride} (dim {d})"
            root_address = side.roots[npt.root].__array_interface__["data"][0]
            want_off = int((a.__array_interface__["data"][0] - root_address) // a.itemsize)
            if ours.offset != want_off:
                return f"offset {ours.offset} != NumPy's {want_off}"
        return None
    if kind == "copy" and step[1] == "contiguous" and NT[step[2]] is npt:
        return None if ours is T[step[2]] else "contiguous() of a contiguous tensor is not the tensor itself"
    if kind == "to_dtype" and NT[step[1]] is npt:
        return None if ours is T[step[1]] else "to_dtype() to the same dtype is not the tensor itself"
    if kind in ("copy_", "fill_", "setitem", "iop"):
        return None
    if not _dense(ours):
        return f"the result layout {ours.layout} is not dense over its buffer of {len(ours.storage.data)}"
    if kind == "copy" and ours.numel and not ours.layout.is_contiguous():
        return f"{step[1]}() gave a non-row-major layout {ours.layout}"
    if kind in ("unary", "binary", "where") and ours.numel:
        ins = [NT[x] for x in step[2:] if isinstance(x, int)]
        if kind == "where":
            ins = [NT[x] for x in step[1:] if isinstance(x, int)]
        if (ins and all(x.arr.flags.c_contiguous and x.arr.shape == a.shape for x in ins)
                and not ours.layout.is_contiguous()):
            return f"contiguous inputs gave a non-contiguous output {ours.layout}"
    return None


def check(program, sd=None) -> Failure | None:
    """Run ``program`` on strided and on NumPy; the first difference, or None."""
    if sd is None:
        import strided as sd
    from strided.errors import StridedError

    side = NpSide()
    T: list = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for i, step in enumerate(program):
            name = step_name(step)
            ctx = _context(side, step)
            ours_err = None
            try:
                ours = _ours_step(sd, T, step)
            except Exception as e:  # every exception is data here
                ours, ours_err = None, e
            n_roots = len(side.roots)
            try:
                like = _layout_of(ours) if ours is not None and _dense(ours) else None
                npt, mag = _np_step(side, step, like)
            except Undefined:
                return None  # nothing defined to compare from here on
            except (Expected, ValueError, TypeError, IndexError, OverflowError) as e:
                if ours_err is None:
                    return Failure(i, name, "no_error",
                                   f"NumPy raises {type(e).__name__}: {e}; strided returned {ours.shape}", ctx)
                if not isinstance(ours_err, StridedError):
                    return Failure(i, name, "wrong_error", f"NumPy raises {type(e).__name__}: {e}; strided raised "
                                   f"{type(ours_err).__name__} (not a StridedError): {ours_err}", ctx)
                side.t.append(None)
                T.append(None)
                continue
            except Exception as e:  # a bug of the oracle itself: report it like any other failure
                return Failure(i, name, "oracle", f"the NumPy side raised {type(e).__name__}: {e}", ctx)
            if ours_err is not None:
                return Failure(i, name, "raised", f"{type(ours_err).__name__}: {ours_err}", ctx)
            if not isinstance(ours, sd.Tensor):
                return Failure(i, name, "raised", f"returned a {type(ours).__name__}, not a Tensor", ctx)
            side.t.append(npt)
            T.append(ours)
            want = npt.arr
            if ours.dtype.name != NAME[want.dtype]:
                return Failure(i, name, "dtype", f"dtype {ours.dtype.name}, NumPy's rule gives {NAME[want.dtype]}")
            if tuple(ours.shape) != want.shape:
                return Failure(i, name, "shape", f"shape {tuple(ours.shape)} != NumPy's {want.shape}")
            msg = _same_values(read_ours(ours), want, _exact(step), NAME[want.dtype], mag)
            if msg:
                return Failure(i, name, "values", msg)
            msg = _compare_layout(step, ours, npt, side, T, side.t)
            if msg:
                return Failure(i, name, "layout", msg)
            if step[0] in ("copy_", "fill_", "setitem", "iop"):
                msg = _compare_buffers(side, T)
                if msg:
                    return Failure(i, name, "buffer", msg)
            elif like is not None and npt.root >= n_roots:
                # a fresh result: carry on from strided's values (within tolerance) so errors do not compound
                side.roots[npt.root][...] = ours.storage.data
    return None


def _context(side: NpSide, step) -> dict:
    kind = step[0]
    if kind not in ("copy_", "fill_", "setitem", "iop"):
        return {}
    dst = side.t[step[2] if kind == "iop" else step[1]]
    if dst is None:
        return {}
    try:
        arr = np_view(dst.arr, "getitem", (step[2],)) if kind == "setitem" else dst.arr
    except Exception:
        return {}
    return {"dst_numel": int(arr.size)}


def _compare_buffers(side: NpSide, T) -> str | None:
    seen = set()
    for ours, npt in zip(T, side.t):
        if ours is None or npt is None or npt.root in seen:
            continue
        seen.add(npt.root)
        mine = ours.storage.data
        theirs = side.roots[npt.root]
        if len(mine) != len(theirs):
            continue  # a view over another buffer (a leaf's copy): compared through its own root
        msg = _same_values(mine, theirs, "bits", NAME[theirs.dtype])
        if msg:
            return f"buffer of tensor {T.index(ours)}: {msg}"
    return None


class _Failed(AssertionError):
    pass


def assert_ok(program, sd=None) -> None:
    """Raise AssertionError (with the program as code) when strided and NumPy differ."""
    f = check(program, sd)
    if f is not None:
        raise _Failed(f"{f}\n{to_python(program)}")


# ---------------------------------------------------------------------------
# generating programs


KINDS = ("view", "unary", "binary", "reduce", "argreduce", "matmul", "cat", "index_select", "where",
         "to_dtype", "copy", "copy_", "fill_", "setitem", "iop", "as_strided", "leaf")
KIND_WEIGHTS = (24, 10, 14, 9, 3, 6, 5, 5, 5, 5, 5, 6, 2, 4, 3, 3, 2)


class _Gen:
    """Builds a program step by step, running the NumPy side as it goes to know shapes and dtypes."""

    def __init__(self, ch: Choices, profile: Profile, max_rank=10):
        self.ch = ch
        self.p = profile
        self.dtypes = tuple(profile.dtypes)
        self.max_rank = max_rank
        self.steps: list = []
        self.side = NpSide()
        self.dead = False

    # -- bookkeeping
    def emit(self, step):
        """Append a step; its tensor index, or None when NumPy raises (strided must raise too)."""
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            self.steps.append(step)
            try:
                npt, _ = _np_step(self.side, step)
            except Undefined:
                self.dead = True
                npt = None
            except (Expected, ValueError, TypeError, IndexError, OverflowError):
                npt = None
        self.side.t.append(npt)
        return None if npt is None else len(self.side.t) - 1

    def arr(self, i) -> np.ndarray:
        return self.side.t[i].arr

    def live(self):
        return [i for i, t in enumerate(self.side.t)
                if t is not None and (not self.p.closed or NAME[t.arr.dtype] in self.dtypes)]

    def pick(self, pred=None):
        cands = [i for i in self.live() if pred is None or pred(self.arr(i))]
        if not cands:
            return None
        return cands[-1 - self.ch.int(0, len(cands) - 1)]

    def dtype(self):
        return self.ch.pick(self.dtypes)

    def scalar(self, like):
        return gen_scalar(self.ch, like, self.p.int_scalars)

    # -- tensors
    def leaf(self, shape=None, dtype=None):
        ch = self.ch
        dtype = dtype or self.dtype()
        shape = gen_shape(ch, self.max_rank) if shape is None else tuple(shape)
        return self.emit(("leaf", dtype, shape, [gen_value(ch, dtype) for _ in range(prod(shape))]))

    def operand(self, shape, dtype=None):
        """A tensor of exactly ``shape``: an existing one, or a new leaf seen through views."""
        ch = self.ch
        shape = tuple(shape)
        dtype = dtype or self.dtype()
        same = [i for i in self.live() if self.arr(i).shape == shape]
        if same and ch.chance(30):
            return same[-1 - ch.int(0, len(same) - 1)]
        if not shape or not ch.chance(70):
            return self.leaf(shape, dtype)
        # build backwards: each dim is plain, stepped (slice with a step) or broadcast from 1
        dims, plans = [], []
        for n in shape:
            mode = ch.weighted([6, 3, 2])
            if mode == 1 and n > 0:
                step = (2, -1, -2, 3)[ch.int(0, 3)]
                length = (n - 1) * abs(step) + 1 + ch.int(0, abs(step) - 1)
                dims.append(length)
                plans.append(("slice", step))
            elif mode == 2:
                dims.append(1)
                plans.append(("bcast",))
            else:
                dims.append(n)
                plans.append(("plain",))
        extra = [ch.int(1, 3) for _ in range(ch.int(0, 2))]
        if prod(dims) * prod(extra) > MAX_NUMEL // 2:
            return self.leaf(shape, dtype)
        full = dims + extra
        perm = list(range(len(full)))
        for k in range(len(perm) - 1, 0, -1):  # Fisher-Yates from the choices
            j = ch.int(0, k)
            perm[k], perm[j] = perm[j], perm[k]
        i = self.leaf(tuple(full[p] for p in perm), dtype)
        if i is None:
            return None
        if perm != sorted(perm):
            inv = [0] * len(perm)
            for k, p in enumerate(perm):
                inv[p] = k
            i = self.emit(("view", i, "permute", (tuple(inv),)))
        for k in range(len(full) - 1, len(dims) - 1, -1):
            if i is None:
                return None
            i = self.emit(("view", i, "select", (k, ch.int(0, full[k] - 1))))
        for d, p in enumerate(plans):
            if i is not None and p[0] == "slice":
                i = self.emit(("view", i, "slice", (d, None, None, p[1])))
        if i is not None and any(p[0] == "bcast" for p in plans):
            i = self.emit(("view", i, "broadcast_as", (shape,)))
        return i

    def scalar_or_operand(self, shape, dtype=None, scalar_pct=25):
        if self.ch.chance(scalar_pct):
            like = dtype or self.dtype()
            return ("scalar", self.scalar(like))
        return self.operand(shape, dtype)

    def broadcastable(self, shape):
        """A shape that broadcasts with ``shape``: equal, a suffix with some 1s, or with new leading dims."""
        ch = self.ch
        mode = ch.weighted([5, 3, 1, 1])
        if mode == 1:
            k = ch.int(0, len(shape))
            return tuple(1 if ch.chance(40) else n for n in shape[k:])
        if mode == 2:
            lead = (ch.int(1, 3),) if prod(shape) * 3 <= MAX_NUMEL else (1,)
            return lead + tuple(shape)
        if mode == 3:  # both sides stretch: 1 where the other has a size
            return tuple(ch.int(2, 3) if n == 1 and prod(shape) * 3 <= MAX_NUMEL else (1 if ch.chance(30) else n)
                         for n in shape)
        return tuple(shape)

    # -- views
    def view_args(self, a: np.ndarray):
        ch = self.ch
        nd = a.ndim
        ops = ["unsqueeze", "broadcast_as", "reshape", "getitem"]
        if nd:
            ops += ["narrow", "slice", "select", "transpose", "permute", "flip", "squeeze", "expand"]
        if nd >= 2:
            ops.append("t")
        op = ch.pick(ops)
        dim = lambda: ch.int(-nd, nd - 1)
        if op == "unsqueeze":
            return op, (ch.int(-nd - 1, nd),)
        if op in ("broadcast_as", "expand"):
            lead = tuple(ch.int(0, 3) for _ in range(ch.int(0, 2)))
            tail = []
            for n in a.shape:
                if n == 1 and ch.chance(50):
                    tail.append(ch.int(0, 3))
                elif op == "expand" and ch.chance(30):
                    tail.append(-1)
                else:
                    tail.append(n)
            target = lead + tuple(tail)
            if (prod(abs(n) for n in target) * max(1, a.size) > MAX_NUMEL * 4
                    or prod(abs(n) for n in target) > MAX_NUMEL):
                target = a.shape
            return op, (target,)
        if op == "reshape":
            return op, (self.reshape_target(a),)
        if op == "getitem":
            return op, (self.index(a.shape),)
        if op == "t":
            return op, ()
        d = dim()
        n = a.shape[d]
        if op == "narrow":
            start = ch.int(0, n)
            return op, (d, start, ch.int(0, n - start))
        if op == "slice":
            bound = lambda: None if ch.chance(30) else ch.int(-n - 2, n + 2)
            step = (None, 1, 2, 3, -1, -2, -3)[ch.int(0, 6)]
            return op, (d, bound(), bound(), step)
        if op == "select":
            if n == 0:
                return "unsqueeze", (0,)
            return op, (d, ch.int(-n, n - 1))
        if op == "transpose":
            return op, (d, dim())
        if op == "permute":
            perm = list(range(nd))
            for k in range(nd - 1, 0, -1):
                j = ch.int(0, k)
                perm[k], perm[j] = perm[j], perm[k]
            return op, (tuple(perm),)
        if op == "flip":
            dims = sorted({ch.int(0, nd - 1) for _ in range(ch.int(1, nd))})
            return op, (tuple(dims),)
        if op == "squeeze":
            return op, (None if ch.chance(30) else d,)
        raise AssertionError(op)  # pragma: no cover

    def reshape_target(self, a: np.ndarray):
        ch = self.ch
        numel = a.size
        mode = ch.int(0, 3)
        if numel == 0:
            return tuple(a.shape[::-1]) if mode else (0,)
        if mode == 0:
            return (-1,) if ch.chance(50) else (numel,)
        if mode == 1:
            return tuple(a.shape[::-1])
        # split numel's prime factors over a few dims, with size-1 dims between
        factors, m, p = [], numel, 2
        while m > 1:
            while m % p == 0:
                factors.append(p)
                m //= p
            p += 1
        k = ch.int(1, 4)
        dims = [1] * k
        for f in factors:
            dims[ch.int(0, k - 1)] *= f
        if mode == 3 and ch.chance(50):
            dims[ch.int(0, k - 1)] = -1
        return tuple(dims)

    def index(self, shape):
        """A basic index: ints, slices (any step), None, at most one "..." (the dims after it index the last dims)."""
        ch = self.ch
        nd = len(shape)
        c = ch.int(0, nd)
        ell = ch.chance(25)
        c1 = ch.int(0, c) if ell else c
        dims = list(range(c1)) + list(range(nd - (c - c1), nd))
        items = [None] if ch.chance(10) else []
        for j, d in enumerate(dims):
            if ell and j == c1:
                items.append("...")
            n = shape[d]
            if n and ch.chance(40):
                items.append(ch.int(-n, n - 1))
            else:
                bound = lambda: None if ch.chance(40) else ch.int(-n - 1, n + 1)
                items.append(("slice", bound(), bound(), (None, 1, 2, -1, -2)[ch.int(0, 4)]))
            if ch.chance(10):
                items.append(None)
        if ell and c1 == len(dims):
            items.append("...")
        return tuple(items)

    # -- one random step
    def step(self):
        ch = self.ch
        kind = KINDS[ch.weighted(KIND_WEIGHTS)]
        if not self.live() or kind == "leaf":
            self.leaf()
            return
        getattr(self, "gen_" + kind)()

    def gen_view(self):
        src = self.pick()
        for _ in range(self.ch.int(1, 3)):
            if src is None:
                return
            op, args = self.view_args(self.arr(src))
            src = self.emit(("view", src, op, args))

    def gen_as_strided(self):
        ch = self.ch
        src = self.pick()
        length = len(self.side.roots[self.side.t[src].root])
        rank = ch.int(0, 4)
        shape = tuple((1, 2, 3, 0, 4)[ch.weighted([3, 4, 3, 1, 1])] for _ in range(rank))
        stride = tuple(ch.int(-4, 4) for _ in range(rank))
        lo = sum((n - 1) * s for n, s in zip(shape, stride) if s < 0 and n)
        hi = sum((n - 1) * s for n, s in zip(shape, stride) if s > 0 and n)
        if ch.chance(10):
            offset = (length, -1, length - hi)[ch.int(0, 2)]
        elif -lo <= length - 1 - hi:
            offset = ch.int(-lo, length - 1 - hi)
        else:
            offset = 0
        self.emit(("as_strided", src, shape, stride, offset))

    def gen_unary(self):
        src = self.pick()
        self.emit(("unary", self.ch.pick(self.p.unary), src))

    def gen_binary(self):
        ch = self.ch
        op = ch.pick(self.p.binary)
        a = self.pick()
        sa = self.arr(a).shape
        da = NAME[self.arr(a).dtype]
        dtype = da if ch.chance(60) else self.dtype()
        b = self.scalar_or_operand(self.broadcastable(sa), dtype)
        if b is None:
            return
        if not isinstance(b, tuple) and prod(np.broadcast_shapes(sa, self.arr(b).shape)) > MAX_NUMEL:
            return
        if ch.chance(30):
            a, b = b, a
        self.emit(("binary", op, a, b))

    def gen_reduce(self):
        ch = self.ch
        src = self.pick()
        nd = self.arr(src).ndim
        mode = ch.weighted([3, 5, 2]) if nd else 0
        if mode == 0:
            dims = None
        elif mode == 1:
            dims = ch.int(-nd, nd - 1)
        else:
            dims = tuple(sorted({ch.int(0, nd - 1) for _ in range(ch.int(1, nd))}))
        self.emit(("reduce", ch.pick(self.p.reduce), src, dims, ch.chance(40)))

    def gen_argreduce(self):
        ch = self.ch
        src = self.pick()
        nd = self.arr(src).ndim
        dim = None if not nd or ch.chance(30) else ch.int(-nd, nd - 1)
        self.emit(("argreduce", ch.pick(self.p.argreduce), src, dim, ch.chance(40)))

    def gen_matmul(self):
        ch = self.ch
        a = self.pick(lambda x: x.ndim >= 1 and x.ndim <= 6)
        if a is None:
            a = self.leaf((ch.int(0, 4), ch.int(0, 4)))
            if a is None:
                return
        sa = self.arr(a).shape
        k = sa[-1]
        n = ch.int(0, 4)
        dtype = NAME[self.arr(a).dtype] if ch.chance(85) else self.dtype()
        form = ch.int(0, 3)
        if form == 0:
            shape_b = (k,)
        elif form == 3:  # batched: b's batch dims broadcast against a's
            shape_b = (self.broadcastable(sa[:-2]) if len(sa) > 2 else (ch.int(1, 3),)) + (k, n)
        else:
            shape_b = (k, n)
        if prod(shape_b) > MAX_NUMEL:
            return
        b = self.operand(shape_b, dtype)
        if b is not None:
            self.emit(("matmul", a, b))

    def gen_cat(self):
        ch = self.ch
        a = self.pick(lambda x: x.ndim >= 1)
        if a is None:
            return
        sa = self.arr(a).shape
        d = ch.int(-len(sa), len(sa) - 1)
        srcs = [a]
        for _ in range(ch.int(1, 2)):
            shape = list(sa)
            shape[d] = ch.int(0, 3)
            dt = NAME[self.arr(a).dtype] if ch.chance(70) else self.dtype()
            b = self.operand(shape, dt)
            if b is None:
                return
            srcs.append(b)
        order = list(range(len(srcs)))
        if ch.chance(30):
            order.reverse()
        self.emit(("cat", tuple(srcs[k] for k in order), d))

    def gen_index_select(self):
        ch = self.ch
        src = self.pick(lambda x: x.ndim >= 1)
        if src is None:
            return
        sh = self.arr(src).shape
        d = ch.int(-len(sh), len(sh) - 1)
        n = sh[d]
        idx = []
        for _ in range(ch.int(0, 5)):
            if ch.chance(8) or n == 0:
                idx.append((n, -n - 1, n + 3)[ch.int(0, 2)])
            else:
                idx.append(ch.int(-n, n - 1) if ch.chance(20) else ch.int(0, n - 1))
        self.emit(("index_select", src, tuple(idx), d))

    def gen_where(self):
        ch = self.ch
        c = self.pick()
        shape = self.arr(c).shape
        if NAME[self.arr(c).dtype] != "bool" and ch.chance(60):
            c = self.emit(("binary", "gt", c, ("scalar", 0)))
            if c is None:
                return
        dtype = self.dtype()
        a = self.scalar_or_operand(self.broadcastable(shape), dtype)
        b = self.scalar_or_operand(self.broadcastable(shape), dtype if ch.chance(60) else self.dtype())
        if a is None or b is None:
            return
        shapes = [self.arr(x).shape for x in (c, a, b) if not isinstance(x, tuple)]
        try:
            if prod(np.broadcast_shapes(*shapes)) > MAX_NUMEL:
                return
        except ValueError:
            pass
        self.emit(("where", c, a, b))

    def gen_to_dtype(self):
        self.emit(("to_dtype", self.pick(), self.dtype()))

    def gen_copy(self):
        self.emit(("copy", self.ch.pick(("contiguous", "force_contiguous", "copy")), self.pick()))

    def write_source(self, dst: int, shape):
        """A source for a write into ``dst``: often overlapping it (a flipped or permuted view of it)."""
        ch = self.ch
        mode = ch.weighted([3, 3, 3, 1])
        if mode == 0 and shape:
            dims = tuple(sorted({ch.int(0, len(shape) - 1) for _ in range(ch.int(1, len(shape)))}))
            return self.emit(("view", dst, "flip", (dims,)))
        if mode == 1 and len(shape) >= 2:
            same = [k for k in range(len(shape)) for j in range(k) if shape[k] == shape[j]]
            if same:
                k = ch.pick(same)
                j = [j for j in range(k) if shape[j] == shape[k]][0]
                return self.emit(("view", dst, "transpose", (j, k)))
        if mode == 3:
            return ("scalar", self.scalar(NAME[self.arr(dst).dtype]))
        dtype = NAME[self.arr(dst).dtype] if ch.chance(60) else self.dtype()
        shp = tuple(shape)
        if ch.chance(30) and shp:
            k = ch.int(0, len(shp))
            shp = tuple(1 if ch.chance(40) else n for n in shp[k:])
        return self.operand(shp, dtype)

    def gen_copy_(self):
        dst = self.pick()
        src = self.write_source(dst, self.arr(dst).shape)
        if src is not None:
            self.emit(("copy_", dst, src))

    def gen_fill_(self):
        dst = self.pick()
        self.emit(("fill_", dst, self.scalar(NAME[self.arr(dst).dtype])))

    def gen_setitem(self):
        dst = self.pick()
        idx = self.index(self.arr(dst).shape)
        try:
            target = np_view(self.arr(dst), "getitem", (idx,)).shape
        except (Expected, IndexError, ValueError, TypeError):
            target = ()
        src = (self.write_source(dst, target) if self.ch.chance(70)
               else ("scalar", self.scalar(NAME[self.arr(dst).dtype])))
        if src is not None:
            self.emit(("setitem", dst, idx, src))

    def gen_iop(self):
        ch = self.ch
        dst = self.pick()
        d = NAME[self.arr(dst).dtype]
        if d == "bool":
            return
        shape = self.arr(dst).shape
        src = ("scalar", self.scalar(d)) if ch.chance(30) else self.write_source(dst, shape)
        if src is not None:
            self.emit(("iop", ch.pick(("add", "sub", "mul")), dst, src))


def generate(ch: Choices, max_steps: int = 6, prefix=(), profile="full", max_rank: int = 10) -> list:
    """A random program from ``ch`` (``prefix`` steps first)."""
    g = _Gen(ch, PROFILES[profile] if isinstance(profile, str) else profile, max_rank)
    for step in prefix:
        g.emit(step)
    if not prefix:
        g.leaf()
    for _ in range(ch.int(1, max_steps)):
        if g.dead:
            break
        g.step()
    return g.steps


# ---------------------------------------------------------------------------
# minimising


def minimise(record: list[int], signature, *, max_seconds: float = 30.0, max_attempts: int | None = None, sd=None,
             generate_kw=None):
    """Shrink a failing choice list while the same (category, op) failure persists.

    Stops after ``max_seconds`` or ``max_attempts`` replays.  Returns (choices, program, failure)."""
    kw = generate_kw or {}
    deadline = time.monotonic() + max_seconds
    budget = [max_attempts if max_attempts is not None else 1 << 62]

    def attempt(cand):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        ch = Choices(replay=cand)
        prog = generate(ch, **kw)
        f = check(prog, sd)
        if f is not None and f.signature == signature:
            return ch.record, prog, f
        return None

    best = attempt(record)
    if best is None:
        return record, generate(Choices(replay=record), **kw), None
    improved = True
    while improved and time.monotonic() < deadline and budget[0] > 0:
        improved = False
        # Lower each choice first: the early ones decide dtypes, ranks and sizes, so
        # this shrinks the shapes (and zeroes the values) before anything else.
        i = 0
        while i < len(best[0]) and time.monotonic() < deadline and budget[0] > 0:
            v = best[0][i]
            i += 1
            for w in sorted({0, v // 2, v - 1}):
                if w >= v:
                    continue
                got = attempt(best[0][: i - 1] + [w] + best[0][i:])
                if got is not None:
                    best, improved = got, True
                    break
        for k in (32, 8, 2, 1):
            i = 0
            while i < len(best[0]) and time.monotonic() < deadline and budget[0] > 0:
                got = attempt(best[0][:i] + best[0][i + k:])
                if got is not None and len(got[0]) < len(best[0]):
                    best, improved = got, True
                else:
                    i += k
    return best


_REF_FIELDS = {
    "as_strided": (1,), "view": (1,), "unary": (2,), "binary": (2, 3), "reduce": (2,), "argreduce": (2,),
    "matmul": (1, 2), "cat": (1,), "index_select": (1,), "where": (1, 2, 3), "to_dtype": (1,), "copy": (2,),
    "copy_": (1, 2), "fill_": (1,), "setitem": (1, 3), "iop": (2, 3),
}


def _map_refs(step, f):
    """``step`` with every tensor reference ``i`` replaced by ``f(i)``."""
    out = list(step)
    for k in _REF_FIELDS.get(step[0], ()):
        v = out[k]
        if isinstance(v, int) and not isinstance(v, bool):
            out[k] = f(v)
        elif step[0] == "cat" and k == 1:
            out[k] = tuple(f(i) for i in v)
    return tuple(out)


def _refs(step) -> set:
    found = set()
    _map_refs(step, lambda i: found.add(i) or i)
    return found


def simplify(program, signature, *, sd=None, max_seconds: float = 20.0):
    """Drop steps (renumbering the references) while the same failure persists."""
    deadline = time.monotonic() + max_seconds
    f = check(program, sd)
    if f is None or f.signature != signature:
        return program
    prog = list(program[: f.step + 1])
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for j in range(len(prog) - 2, -1, -1):
            if j >= len(prog) - 1 or any(j in _refs(s) for s in prog[j + 1:]):
                continue
            cand = prog[:j] + [_map_refs(s, lambda i: i - 1 if i > j else i) for s in prog[j + 1:]]
            g = check(cand, sd)
            if g is not None and g.signature == signature:
                prog = cand[: g.step + 1]
                changed = True
            if time.monotonic() >= deadline:
                break
    return prog


# ---------------------------------------------------------------------------
# printing


def _lit(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, tuple):
        inner = ", ".join(_lit(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(_lit(x) for x in v) + "]"
    return repr(v)


def render(program) -> str:
    """The program as a literal (``from math import inf, nan`` makes it evaluate)."""
    return "[\n" + "".join(f"    {_lit(s)},\n" for s in program) + "]"


def _code_index(index) -> str:
    parts = []
    for it in index:
        if isinstance(it, tuple):
            a, b, c = ("" if x is None else str(x) for x in it[1:])
            parts.append(f"{a}:{b}" + (f":{c}" if c else ""))
        elif it == "...":
            parts.append("...")
        else:
            parts.append(repr(it))
    return ", ".join(parts) + ("," if len(parts) == 1 else "") if parts else "()"


def to_python(program) -> str:
    """The program as strided code a person can read and run."""
    lines = ["import numpy as np, strided as sd", "from math import inf, nan"]
    opnd = lambda x: _lit(x[1]) if isinstance(x, tuple) else f"t{x}"
    sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "eq": "==", "ne": "!=", "lt": "<",
           "le": "<=", "gt": ">", "ge": ">="}
    for i, s in enumerate(program):
        k = s[0]
        if k == "leaf":
            np_name = {"bf16": "sd.bf16.np", "bool": "np.bool_"}.get(s[1], f"np.{NP[s[1]].name}")
            code = f"sd.from_numpy(np.array({_lit(s[3])}, dtype={np_name}).reshape({_lit(s[2])}))"
        elif k == "as_strided":
            code = f"sd.as_strided(t{s[1]}, {_lit(s[2])}, {_lit(s[3])}, {s[4]})"
        elif k == "view":
            op, args = s[2], s[3]
            if op == "getitem":
                code = f"t{s[1]}[{_code_index(args[0])}]"
            elif op == "expand":
                code = f"t{s[1]}.expand(*{_lit(args[0])})"
            elif op == "flip":
                code = f"t{s[1]}.flip({list(args[0])})"
            else:
                code = f"t{s[1]}.{op}({', '.join(_lit(a) for a in args)})"
        elif k == "unary":
            code = f"sd.logical_not(t{s[2]})" if s[1] == "not" else f"t{s[2]}.{s[1]}()"
        elif k == "binary":
            if s[1] in sym:
                code = f"{opnd(s[2])} {sym[s[1]]} {opnd(s[3])}"
            else:
                a, b = (s[2], s[3]) if not isinstance(s[2], tuple) else (s[3], s[2])
                code = f"{opnd(a)}.{s[1]}({opnd(b)})"
        elif k in ("reduce", "argreduce"):
            code = f"t{s[2]}.{s[1]}({_lit(s[3])}, keepdim={s[4]})"
        elif k == "matmul":
            code = f"t{s[1]} @ t{s[2]}"
        elif k == "cat":
            code = f"sd.cat([{', '.join(f't{j}' for j in s[1])}], {s[2]})"
        elif k == "index_select":
            code = f"t{s[1]}.index_select({list(s[2])}, {s[3]})"
        elif k == "where":
            code = f"sd.where(t{s[1]}, {opnd(s[2])}, {opnd(s[3])})"
        elif k == "to_dtype":
            code = f"t{s[1]}.to_dtype({s[2]!r})"
        elif k == "copy":
            code = f"t{s[2]}.{s[1]}()"
        elif k == "copy_":
            code = f"t{s[1]}.copy_({opnd(s[2])})"
        elif k == "fill_":
            code = f"t{s[1]}.fill_({_lit(s[2])})"
        elif k == "setitem":
            lines.append(f"t{s[1]}[{_code_index(s[2])}] = {opnd(s[3])}; t{i} = t{s[1]}")
            continue
        elif k == "iop":
            lines.append(f"t{s[2]} {sym[s[1]]}= {opnd(s[3])}; t{i} = t{s[2]}")
            continue
        else:  # pragma: no cover
            code = repr(s)
        lines.append(f"t{i} = {code}")
    return "\n".join(lines)


def report(f: Failure, program) -> str:
    return (
        f"FUZZ FAILURE {f}\n"
        f"--- reproducer (paste into tests/fuzz/test_regressions.py) ---\n"
        f"PROGRAM = {render(program)}\n"
        f"--- as strided code ---\n{to_python(program)}\n"
    )


# ---------------------------------------------------------------------------
# the driver


def run(minutes=None, cases=None, seed: int = 0, *, max_steps: int = 6, out=None, minimise_seconds: float = 15.0,
        profile="full") -> dict:
    """Fuzz for ``minutes`` or ``cases`` (100 cases when neither is given).

    Returns counts: cases run, failures found, steps per op, and the distinct
    failure signatures; prints a minimised reproducer for each new signature."""
    import strided as sd

    out = sys.stdout if out is None else out
    if minutes is None and cases is None:
        cases = 100
    deadline = None if minutes is None else time.monotonic() + 60.0 * minutes
    counts = {"cases": 0, "failures": 0, "steps": 0, "ops": {}, "signatures": {}, "seed": seed}
    t0 = time.monotonic()
    i = 0
    while (cases is None or i < cases) and (deadline is None or time.monotonic() < deadline):
        ch = Choices(seed=[seed, i])
        program = generate(ch, max_steps=max_steps, profile=profile)
        f = check(program, sd)
        counts["cases"] += 1
        executed = program if f is None else program[: f.step + 1]
        counts["steps"] += len(executed)
        for s in executed:
            n = step_name(s)
            counts["ops"][n] = counts["ops"].get(n, 0) + 1
        if f is not None:
            counts["failures"] += 1
            key = f"{f.category}:{f.name}"
            if key not in counts["signatures"]:
                _, small, g = minimise(ch.record, f.signature, max_seconds=minimise_seconds, sd=sd,
                                       generate_kw={"max_steps": max_steps, "profile": profile})
                small = simplify(small, f.signature, sd=sd, max_seconds=minimise_seconds / 2)
                print(report(check(small, sd) or g or f, small), file=out, flush=True)
                counts["signatures"][key] = 0
            counts["signatures"][key] += 1
        i += 1
    counts["seconds"] = round(time.monotonic() - t0, 1)
    counts["ops"] = dict(sorted(counts["ops"].items()))
    return counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python tests/fuzz/fuzzer.py", description="differential fuzzing against NumPy")
    p.add_argument("--minutes", type=float, default=None, help="run for this long")
    p.add_argument("--cases", type=int, default=None, help="run this many cases (default 100 without --minutes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--profile", choices=sorted(PROFILES), default="full", help="ci: f32 and half types only")
    args = p.parse_args(argv)
    counts = run(minutes=args.minutes, cases=args.cases, seed=args.seed, profile=args.profile)
    print(f"cases {counts['cases']}, failures {counts['failures']}, steps {counts['steps']} in {counts['seconds']} s")
    for k, v in counts["signatures"].items():
        print(f"  failure {k}: {v}")
    width = max((len(k) for k in counts["ops"]), default=0)
    for k, v in counts["ops"].items():
        print(f"  {k:<{width}}  {v}")
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Hypothesis strategies shared by the test suite.

The trick used throughout: a numpy base array holding ``arange(n)`` makes every
element of any numpy view equal to its own buffer offset, so NumPy is an oracle
for offsets, order and strides at once.
"""

from __future__ import annotations

from math import prod

import numpy as np
from hypothesis import strategies as st

from strided.layout import Layout


def shapes(min_rank=0, max_rank=6, max_size=4, max_numel=512):
    return st.lists(st.integers(0, max_size), min_size=min_rank, max_size=max_rank).map(tuple).filter(
        lambda s: prod(s) <= max_numel
    )


def _apply(draw, lay: Layout, arr: np.ndarray):
    """Draw one view op and apply it to a Layout and to the numpy view alike."""
    nd = lay.ndim
    choices = ["unsqueeze", "broadcast"]
    if nd:
        choices += ["narrow", "slice", "transpose", "permute", "flip", "select", "squeeze", "reshape"]
    op = draw(st.sampled_from(choices), label="op")
    if op == "unsqueeze":
        d = draw(st.integers(-nd - 1, nd), label="dim")
        return f"unsqueeze({d})", lay.unsqueeze(d), np.expand_dims(arr, d)
    if op == "broadcast":
        lead = draw(st.lists(st.integers(0, 3), max_size=2), label="lead")
        tail = [draw(st.integers(0, 3)) if n == 1 else n for n in lay.shape]
        target = tuple(lead) + tuple(tail)
        if prod(target) > 2048:
            return "noop", lay, arr
        return f"broadcast_as({target})", lay.broadcast_as(target), np.broadcast_to(arr, target)
    d = draw(st.integers(-nd, nd - 1), label="dim")
    n = lay.shape[d]
    idx = [slice(None)] * nd
    if op == "narrow":
        start = draw(st.integers(0, n), label="start")
        length = draw(st.integers(0, n - start), label="length")
        idx[d] = slice(start, start + length)
        return f"narrow({d},{start},{length})", lay.narrow(d, start, length), arr[tuple(idx)]
    if op == "slice":
        start = draw(st.none() | st.integers(-n - 2, n + 2), label="start")
        stop = draw(st.none() | st.integers(-n - 2, n + 2), label="stop")
        step = draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]), label="step")
        idx[d] = slice(start, stop, step)
        return f"slice({d},{start},{stop},{step})", lay.slice(d, start, stop, step), arr[tuple(idx)]
    if op == "transpose":
        e = draw(st.integers(-nd, nd - 1), label="dim2")
        return f"transpose({d},{e})", lay.transpose(d, e), np.swapaxes(arr, d, e)
    if op == "permute":
        perm = draw(st.permutations(range(nd)), label="perm")
        return f"permute({perm})", lay.permute(perm), np.transpose(arr, perm)
    if op == "flip":
        dims = draw(st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd), label="dims")
        return f"flip({dims})", lay.flip(dims), np.flip(arr, dims)
    if op == "select":
        if n == 0:
            return "noop", lay, arr
        i = draw(st.integers(-n, n - 1), label="index")
        idx[d] = i
        return f"select({d},{i})", lay.select(d, i), arr[tuple(idx) + (Ellipsis,)]
    if op == "squeeze":
        if n != 1:
            return "noop", lay, arr
        return f"squeeze({d})", lay.squeeze(d), np.squeeze(arr, d)
    # reshape: only to shapes NumPy can view without copying
    new = draw(shapes(max_rank=4, max_size=6, max_numel=4096).filter(lambda s: prod(s) == lay.numel)
               | st.just(lay.shape[::-1]))
    if prod(new) != lay.numel:
        return "noop", lay, arr
    got = lay.reshape_view(new)
    try:
        want = arr.reshape(new, copy=False)
    except ValueError:
        want = None
    return f"reshape({new})", got, want


def view_chains(max_ops=6, max_rank=5):
    """(ops, Layout, numpy view, base): ops applied to ``base`` (arange values, the starting shape)."""

    @st.composite
    def build(draw):
        shape = draw(shapes(max_rank=max_rank))
        base = np.arange(prod(shape), dtype=np.int64).reshape(shape)
        lay, arr = Layout.contiguous(shape), base
        ops = []
        for _ in range(draw(st.integers(0, max_ops))):
            name, new_lay, new_arr = _apply(draw, lay, arr)
            if new_lay is None or new_arr is None:
                # reshape_view refused (or numpy refused): both must agree, the chain stops here
                assert (new_lay is None) == (new_arr is None), (ops, name, lay)
                break
            if name != "noop":
                ops.append(name)
            lay, arr = new_lay, new_arr
        return ops, lay, arr, base

    return build()


def numpy_offset(view: np.ndarray, base: np.ndarray) -> int:
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize


def numpy_strides(view: np.ndarray) -> tuple[int, ...]:
    return tuple(s // view.itemsize for s in view.strides)


@st.composite
def layouts_of_shape(draw, shape, allow_broadcast=True):
    """A random layout of ``shape``: any dim order, gaps, flips, stride-0 dims; with its buffer length."""
    nd = len(shape)
    order = draw(st.permutations(range(nd))) if nd else []
    stride = [0] * nd
    acc = 1
    for d in reversed(order):  # the last dim of ``order`` is innermost
        if allow_broadcast and shape[d] != 1 and draw(st.integers(0, 9)) == 0:
            stride[d] = 0
            continue
        gap = draw(st.sampled_from([1, 1, 1, 2, 3]))
        stride[d] = acc * gap
        acc *= max(shape[d], 1) * gap
    flips = [d for d in range(nd) if draw(st.integers(0, 4)) == 0]
    offset = draw(st.integers(0, 3))
    for d in flips:
        stride[d] = -stride[d]
        offset += max(shape[d] - 1, 0) * -stride[d]
    lay = Layout(shape, stride, offset)
    lo, hi = lay.span()
    return lay, max(hi, 1) + draw(st.integers(0, 2))


# ---------------------------------------------------------------------------
# buffers and destinations for kernel tests


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def random_buffer(rng, dtype, n) -> np.ndarray:
    """Random bit patterns (NaNs with payloads included): a same-dtype copy must keep every bit."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)


def span(lay: Layout) -> tuple[int, int]:
    """Lowest and one-past-highest offset, computed here rather than trusted from Layout."""
    if prod(lay.shape) == 0:
        return lay.offset, lay.offset
    lo = hi = lay.offset
    for n, s in zip(lay.shape, lay.stride):
        lo += min(0, (n - 1) * s)
        hi += max(0, (n - 1) * s)
    return lo, hi + 1


def np_view(buf: np.ndarray, lay: Layout) -> np.ndarray:
    """The NumPy view of ``lay`` over ``buf`` (checked to lie inside it first)."""
    if prod(lay.shape) == 0:
        return np.empty(lay.shape, buf.dtype)
    lo, hi = span(lay)
    assert 0 <= lo and hi <= len(buf), (lay, len(buf))
    return np.lib.stride_tricks.as_strided(
        buf[lay.offset:], lay.shape, tuple(s * buf.itemsize for s in lay.stride), writeable=True
    )


@st.composite
def dst_layouts(draw, shape):
    """A non-overlapping layout of ``shape``: any dim order, gaps, flips, an offset; and its buffer length."""
    nd = len(shape)
    order = draw(st.permutations(range(nd))) if nd else []
    stride = [0] * nd
    acc = 1
    for d in reversed(order):
        gap = draw(st.sampled_from([1, 1, 2, 3]))
        stride[d] = acc * gap
        acc *= max(shape[d], 1) * gap
    offset = draw(st.integers(0, 3))
    for d in range(nd):
        if draw(st.integers(0, 3)) == 0:
            stride[d] = -stride[d]
            offset += max(shape[d] - 1, 0) * -stride[d]
    lay = Layout(shape, stride, offset)
    return lay, span(lay)[1] + draw(st.integers(0, 2))


@st.composite
def destinations(draw, shape):
    """Contiguous with an offset, or any dim order with gaps and flips; and the buffer length."""
    if draw(st.booleans()):
        off = draw(st.integers(0, 3))
        return Layout.contiguous(shape, off), off + prod(shape) + draw(st.integers(0, 2))
    return draw(dst_layouts(shape))


# -- chains of ops for strided.fuse's tests (test_fuse.py, cuda/on_device/test_cuda_fuse.py) ------

CHAIN_UNARY = ["exp", "neg", "abs", "sqr", "tanh", "relu", "sigmoid", "log1p"]
CHAIN_BINARY = ["add", "sub", "mul", "div", "maximum", "lt"]
CHAIN_STEPS = CHAIN_UNARY + CHAIN_BINARY + ["scalar", "view", "cast", "where"]


def chain_program(steps):
    """A function of tensors applying ``steps`` ((op, r) pairs, op from ``CHAIN_STEPS``; r picks
    the operands among the values so far and the variant) and returning the last value."""
    import strided as sd

    def fn(*xs):
        vals = list(xs)
        for op, r in steps:
            x = vals[r % len(vals)]
            y = vals[(r // 7) % len(vals)]
            if op in CHAIN_UNARY:
                v = getattr(x, op)()
            elif op == "scalar":
                v = [x * 0.5, 2.0 - x, x / 3][r % 3]
            elif op == "view":
                v = x.flip(0) if x.ndim else x
            elif op == "cast":
                v = x.to_dtype([sd.f64, sd.f32, sd.f16, sd.bf16][r % 4])
            elif op == "where":
                v = sd.where(x > 0, x, y)
            else:
                v = getattr(x, op)(y) if op != "lt" else (x < y)
            vals.append(v)
        return vals[-1]

    return fn

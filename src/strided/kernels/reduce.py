"""Reduction kernels: sum, prod, max, min over any set of dims, argmax/argmin over one.

The dispatcher, ``_plan``, walks the source with ``NdIter(src, out_b)`` where
``out_b`` is the output's layout stretched back to the source's shape (stride 0
on the reduced dims).  The source decides the order, so memory is read
forwards whatever the layout (transposed, flipped, broadcast); merged dims are
reduced ("R", output stride 0) or kept ("K"); dims the source walks backwards
are flipped first (not argmax/argmin's dim: its indices must stay logical).
Then one of these paths (``ReducePlan.case``):

=======  =====================================  ==================================
path     when                                   loop
=======  =====================================  ==================================
INNER    the innermost merged dim is reduced    each output element reduces its
         (row sums of a row-major matrix)       contiguous runs (blocked pairwise);
                                                threads split the outputs, or the
                                                reduced range when outputs are few
OUTER    the innermost merged dim is kept       whole rows are accumulated into a
         (column sums of a row-major matrix)    vector of outputs, so memory is
                                                read row after row, never down a
                                                column; threads split the columns,
                                                or the rows into parts that each
                                                fill a partial vector
fill     sum/prod of a source with no           ``_fill`` writes the identity (or
         elements; argmax/argmin over a dim     index 0) at every output
         of size 1
=======  =====================================  ==================================

From ``PARALLEL_MIN * REDUCE_FACTOR`` source elements the work runs under ``prange``,
``CHUNKS_PER_THREAD`` chunks per thread handed out dynamically (a column reduction's rows
split one part a thread); split reductions (partial results)
are combined in order at the end.

Accuracy.  The accumulator has the output's dtype (the caller chooses: f32
sums accumulate in f32, integer and bool sums arrive with an int64 output).
Sums are pairwise: runs are summed in leaves of ``BLOCK`` elements (vectorised,
32 independent partial sums), leaves and runs are combined by a pairwise
cascade (INNER); rows are added into a block accumulator that is folded into the
total every ``FOLD`` rows (OUTER; unit-stride rows four to a pass over the accumulator,
each column still adding them in row order).  argmax/argmin pick the first occurrence of the
extremum, and a NaN wins (the first one): along a row (INNER) one pass takes each block of
``ARG_BLOCK`` elements' extremum from max's or min's own leaf and keeps the first best block,
then the first element of that block equal to it (or the first NaN) is its index; OUTER
keeps, per column, the strictly better element as the rows go by.  Reducing a zero-size dim
gives 0 for sum, 1 for prod and is an error for max, min, argmax and argmin.

max and min are exact and propagate NaN like NumPy.  Their float leaves
(``_extreme``) compare integer keys of the bits, in which -0.0 ranks below +0.0:
a leaf's max of the two zeros is +0.0 and its min -0.0, while the cascade and
OUTER's row updates keep the first of two equal values, so over zeros of both
signs the sign of the result depends on where they lie.  NumPy pins it down no
better (``np.max`` of ``[-0.0, 0.0]`` is +0.0, of ``[0.0, -0.0]`` -0.0, f32 and
f64 alike, NumPy 2.4).  The NaN a leaf returns is the one of its run with the
largest payload, its sign cleared, not necessarily the first; NumPy returns the
first.

Half sources.  f16/bf16 buffers are read in place (as uint16/int16 bits) and
decoded to f32 as they are loaded; the accumulator is f32 and the caller rounds
the result.  Leaves decode into a small scratch and reduce it with the f32
loop, so results are those of an f32 copy bit for bit (up to which NaN a sum
meets first, which LLVM does not pin down for an f32 copy either).
"""

from __future__ import annotations

import llvmlite.ir as llir
import numpy as np

from .common import own_name
from .common import (
    ARG_BLOCK,
    BLOCK,
    COMPUTABLE,
    FOLD,
    NATIVE,
    PARALLEL_MIN,
    REDUCE_FACTOR,
    STACK,
    check_buffer,
    check_in_buffer,
    check_layout,
    reach as _reach,
)
from ..core import caches
from ..core.errors import DTypeError
from ..layout.layout import Layout
from ..core.threads import get_num_threads
from .half import HALF_VIEW, dec as _dec
from .reduce_plan import (
    ARG_REDUCE_OPS,
    INNER,
    OUTER,
    REDUCE_OPS,
    ReducePlan,
    check_arg_dim,
    check_dims,
    check_op,
    has_arg_work,
    has_work,
    plan_and_arrays,
)
from .walk import carry, direct, in_parallel, index_scratch, launch, seek, stack_scratch

from numba import njit, prange, types
from numba.extending import intrinsic, overload, register_jitable

__all__ = ["REDUCE_OPS", "ARG_REDUCE_OPS", "reduce", "arg_reduce", "plan", "check_dims", "row_parts"]


# A source may hold any of common.DTYPES, an output (the accumulator) any of common.NATIVE.
# f16/bf16 sources are read in place: the kernels see their bits through HALF_VIEW
# and ``_dec`` widens each element to f32 as it is loaded, so the loops compute exactly
# what they computed on an f32 copy, without the copy.  Their accumulator is f32.
_JIT = dict(cache=True, error_model="numpy")
# Plain functions registered for jitted callers (see elementwise.py: a closure
# over a dispatcher defeats numba's on-disk cache).
_jitable = register_jitable(error_model="numpy")
_leaf_jitable = register_jitable(error_model="numpy", fastmath={"reassoc"})


# ---------------------------------------------------------------------------
# combining functions


_PARTS = caches.table("reduce.row_parts", "combining function's name (its leaf, push and fold)")


def _sum_and_prod(jitable):
    """sum's and prod's combining functions, registered with ``jitable``'s options."""

    @jitable
    def _c_sum(a, b):
        return a + b

    @jitable
    def _c_prod(a, b):
        return a * b

    return _c_sum, _c_prod


_c_sum, _c_prod = _sum_and_prod(_jitable)
# The same for the leaves: ``reassoc`` lets LLVM vectorise a leaf's sum.
_r_sum, _r_prod = _sum_and_prod(_leaf_jitable)


@_jitable
def _c_max(a, b):
    return a if (a >= b or a != a) else b


@_jitable
def _c_min(a, b):
    return a if (a <= b or a != a) else b


@_jitable
def _better_max(v, best):
    """Does v replace best?  Strictly greater (first occurrence wins), or the first NaN."""
    return v > best or (v != v and best == best)


@_jitable
def _better_min(v, best):
    return v < best or (v != v and best == best)


def _values_like(src, n):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


@overload(_values_like, jit_options=dict(error_model="numpy"))
def _ov_values_like(src, n):
    """An array of n elements of the type ``_dec`` gives for src's elements (f32 for half bits)."""
    if src.dtype in (types.uint16, types.int16):
        return lambda src, n: np.empty(n, np.float32)
    return lambda src, n: np.empty(n, src.dtype)


def _scratch(src):  # pragma: no cover
    raise NotImplementedError


@overload(_scratch, jit_options=dict(error_model="numpy"))
def _ov_scratch(src):
    """A leaf's worth of f32 for decoded half bits (two: see ``_leaf_run``); nothing for the other dtypes."""
    if src.dtype in (types.uint16, types.int16):
        return lambda src: np.empty(2 * BLOCK, np.float32)
    return lambda src: np.empty(0, src.dtype)


def _leaf_run(src, p, s, m, buf):  # pragma: no cover
    raise NotImplementedError


@overload(_leaf_run, jit_options=dict(error_model="numpy"))
def _ov_leaf_run(src, p, s, m, buf):
    """The (array, start, stride) a leaf sums: the source itself, or its half bits decoded into buf.

    A half leaf is decoded first and then summed by the very loop that sums an
    f32 source, not by a loop that decodes as it adds: with ``reassoc`` LLVM
    picks the vector width and interleave of the sum from the loop's body, and
    a different choice would add in a different order (results differing in
    the last bits from an f32 copy's, or in which NaN a sum returns).  The
    strided loop is not the unit-stride one either (LLVM may version it for a
    stride of 1), so a strided run is decoded at stride 2 and summed by the
    strided loop."""
    if src.dtype in (types.uint16, types.int16):
        def impl(src, p, s, m, buf):
            if s == 1:
                for k in range(m):
                    buf[k] = _dec(src[p + k])
                return buf, 0, 1
            for k in range(m):
                buf[2 * k] = _dec(src[p + k * s])
            return buf, 0, 2
        return impl
    return lambda src, p, s, m, buf: (src, p, s)


def _extreme(x, p, s, m, acc, flip):  # pragma: no cover
    raise NotImplementedError


# A float's bits as a signed integer, with the bits below the sign flipped when it is
# negative, are ordered as the floats are (-0.0 just below +0.0), and the integers' max
# is a reduction LLVM vectorises; a float max is not (for LLVM 14 it is one only under a
# no-NaNs function attribute, which numba does not set).
# Per float type: the integer type of its bits, the magnitude mask, +inf's bits.
_KEYS = {types.float32: (np.int32, np.float32, 0x7FFFFFFF, 0x7F800000),
         types.float64: (np.int64, np.float64, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000)}


def _int_op(name, emit):
    """An intrinsic (named ``name``) of two integers of one type, of that type, whose IR
    ``emit(builder, a, b)`` builds: numba would widen int32 steps to int64, halving the
    lanes of a vectorised loop."""
    def typer(typingctx, a, b):
        if isinstance(a, types.Integer) and a == b:
            return a(a, b), lambda context, builder, sig, args: emit(builder, *args)
        return None

    typer.__name__ = typer.__qualname__ = name
    return intrinsic(typer)


_imax = _int_op("_imax", lambda b, x, y: b.select(b.icmp_signed(">", x, y), x, y))
_iand = _int_op("_iand", lambda b, x, y: b.and_(x, y))
_ixor = _int_op("_ixor", lambda b, x, y: b.xor(x, y))


@intrinsic
def _as_float(typingctx, i):
    """Integer bits read as the float of their width (numba's scalar ``view`` rejects a
    value with several definitions)."""
    if i in (types.int32, types.int64):
        f = types.float32 if i == types.int32 else types.float64
        return f(i), lambda context, builder, sig, args: builder.bitcast(args[0], context.get_value_type(f))
    return None


# the key of float bits x, xor f (f = -1 reverses the order: min as a max)
def _key_ir(b, x, f):
    sign = b.ashr(x, llir.Constant(x.type, x.type.width - 1))  # all ones for a negative x
    return b.xor(b.xor(x, b.lshr(sign, llir.Constant(x.type, 1))), f)


_key = _int_op("_key", _key_ir)


def _keyed(x):  # pragma: no cover
    raise NotImplementedError


@overload(_keyed, jit_options=dict(error_model="numpy"))
def _ov_keyed(x):
    """Does ``_extreme`` take x (a compile-time answer)?"""
    keyed = x.dtype in _KEYS
    return lambda x: keyed


@overload(_extreme, jit_options=dict(error_model="numpy"))
def _ov_extreme(x, p, s, m, acc, flip):
    """max (``flip`` 0) or min (``flip`` -1) of ``acc`` and the m elements of x from p at stride s.

    Floats only, reduced as integer keys (``_KEYS``); min is the max of the keys'
    complements.  The max of the magnitude bits beside it tells whether a NaN was
    seen: then the result is that NaN (the largest payload, sign cleared)."""
    if x.dtype not in _KEYS:  # typed but never run: ``_keyed`` is False
        return lambda x, p, s, m, acc, flip: acc
    ity, fty, mag, inf = _KEYS[x.dtype]

    def keyed(x, p, s, m, acc, flip):
        f = ity(flip)
        mg = ity(mag)
        a = fty(acc).view(ity)
        kx = _key(a, f)
        ax = _iand(a, mg)
        b = x.view(ity)
        if s == 1:
            v = b[p : p + m]
            for k in range(m):
                kx = _imax(kx, _key(v[k], f))
                ax = _imax(ax, _iand(v[k], mg))
        else:
            for k in range(m):
                kx = _imax(kx, _key(b[p + k * s], f))
                ax = _imax(ax, _iand(b[p + k * s], mg))
        return _as_float(ax if ax > inf else _key(_ixor(kx, f), ity(0)))  # a key is its own key's bits
    return keyed


# ---------------------------------------------------------------------------
# The kept dims K carry two positions (source, output; ``kst`` has those two rows), the
# reduced dims R one (``rsrc`` is the source's row).  Both walk with the shared odometer;
# ``pos`` is the caller's scratch for the positions, so that no call allocates.


@_jitable
def _point(flat, shape, st, nd, idx):
    """Positions (src, out) of the ``flat``-th point of dims ``[0, nd)``; fills ``idx``."""
    return seek(flat, shape, st, nd, idx, (0, 0))


@_jitable
def _next_point(shape, st, idx, ps, po):
    """Positions (src, out) of the point after the one at (ps, po)."""
    return carry(shape, st, shape.shape[0], idx, (ps, po))[1]


def _sum_leaf(leaf_comb):
    @_leaf_jitable
    def leaf(src, p, s, m, ident, buf):
        """Up to BLOCK elements.  Compiled with ``reassoc`` so that LLVM may sum them as
        several vector accumulators (a tree at least as accurate as a sequential
        sum); the cascade above the leaves keeps its order."""
        x, p, s = _leaf_run(src, p, s, m, buf)
        if s == 1:  # each path with its own accumulator and return: one shared after the
            v = x[p : p + m]  # branch vectorised about a third slower
            acc = ident
            for k in range(m):
                acc = leaf_comb(acc, v[k])
            return acc
        acc = ident
        for k in range(m):
            acc = leaf_comb(acc, x[p + k * s])
        return acc

    return leaf


def _extreme_leaf(leaf_comb, flip):
    @_jitable
    def leaf(src, p, s, m, ident, buf):
        """Up to BLOCK elements, max (``flip`` 0) or min (``flip`` -1): floats by ``_extreme``,
        other dtypes by ``leaf_comb`` (integer max loops vectorise as they are)."""
        x, p, s = _leaf_run(src, p, s, m, buf)
        if _keyed(x):
            return _extreme(x, p, s, m, ident, flip)
        acc = ident
        if s == 1:
            v = x[p : p + m]
            for k in range(m):
                acc = leaf_comb(acc, v[k])
        else:
            for k in range(m):
                acc = leaf_comb(acc, x[p + k * s])
        return acc

    return leaf


def _make_reduce(comb, make_leaf):
    tag = comb.__name__
    leaf = make_leaf()

    @_jitable
    def push(vals, lvls, sp, v):
        """Pairwise cascade: equal-level partials are combined as soon as they pair up."""
        lvl = 0
        while sp > 0 and lvls[sp - 1] == lvl:
            v = comb(vals[sp - 1], v)
            sp -= 1
            lvl += 1
        vals[sp] = v
        lvls[sp] = lvl
        return sp + 1

    @_jitable
    def fold(vals, sp, ident):
        r = ident
        if sp > 0:
            r = vals[0]
            for i in range(1, sp):
                r = comb(r, vals[i])
        return r

    @_jitable
    def reduce_range(src, base, rshape, rsrc, r0, r1, ident, vals, lvls, ridx, buf):
        """Reduce the R points [r0, r1) (flat, in memory order) starting at ``base``."""
        nd = rshape.shape[0]
        inner = rshape[nd - 1]
        s = rsrc[0, nd - 1]
        row = r0 // inner
        j = r0 - row * inner
        (rb,) = seek(row, rshape, rsrc, nd - 1, ridx, (0,))
        sp = 0
        cur = ident  # short runs are gathered into one leaf-sized partial before the cascade
        cn = 0
        i = r0
        while i < r1:
            m = min(inner - j, r1 - i)
            p = base + rb + j * s
            if m < BLOCK:
                cur = comb(cur, leaf(src, p, s, m, ident, buf))
                cn += m
                if cn >= BLOCK:
                    sp = push(vals, lvls, sp, cur)
                    cur = ident
                    cn = 0
            else:
                k = 0
                while k < m:
                    b = min(BLOCK, m - k)
                    sp = push(vals, lvls, sp, leaf(src, p + k * s, s, b, ident, buf))
                    k += b
            i += m
            j = 0
            if i < r1:
                (rb,) = carry(rshape, rsrc, nd - 1, ridx, (rb,))[1]
        if cn:
            sp = push(vals, lvls, sp, cur)
        return fold(vals, sp, ident)

    def inner_outputs(src, out, kshape, kst, rshape, rsrc, soff, ooff, nr, p0, p1, identa):
        """INNER: outputs [p0, p1), each reducing all of its R points.  The innermost K dim
        is walked inline, as ``reduce_range`` walks its runs: an odometer step per output
        costs a tenth of a short row's sum."""
        ident = identa[0]
        nk = kshape.shape[0]
        kidx = index_scratch(nk)
        ridx = index_scratch(rshape.shape[0])
        vals = stack_scratch(STACK, identa.dtype)
        lvls = stack_scratch(STACK, np.int64)
        buf = _scratch(src)
        n_in, ss, so = 1, 0, 0  # a whole reduction keeps no dim: one output
        if nk:
            n_in, ss, so = kshape[nk - 1], kst[0, nk - 1], kst[1, nk - 1]
        short = rshape.shape[0] == 1 and nr <= BLOCK  # one short run per output: a leaf is all it takes
        s = rsrc[0, 0] if short else 0
        row = p0 // n_in
        j = p0 - row * n_in
        ps, po = _point(row, kshape, kst, max(nk - 1, 0), kidx)
        ps += soff
        po += ooff
        i = p0
        while i < p1:
            m = min(n_in - j, p1 - i)
            if short and s == 1:  # a literal stride folds the leaf's strided loop away (the same loop: the same bits)
                for t in range(j, j + m):
                    out[po + t * so] = leaf(src, ps + t * ss, 1, nr, ident, buf)
            elif short:
                for t in range(j, j + m):
                    out[po + t * so] = leaf(src, ps + t * ss, s, nr, ident, buf)
            else:
                for t in range(j, j + m):
                    out[po + t * so] = reduce_range(src, ps + t * ss, rshape, rsrc, 0, nr, ident, vals, lvls, ridx, buf)
            i += m
            j = 0
            if i < p1:
                ps, po = carry(kshape, kst, nk - 1, kidx, (ps, po))[1]

    @_jitable
    def inner_partial(src, part, kshape, kst, rshape, rsrc, soff, nr, nsplit, w0, w1, identa):
        """INNER split: item w reduces part (w % nsplit) of output (w // nsplit)'s R points."""
        ident = identa[0]
        kidx = index_scratch(kshape.shape[0])
        ridx = index_scratch(rshape.shape[0])
        vals = stack_scratch(STACK, identa.dtype)
        lvls = stack_scratch(STACK, np.int64)
        buf = _scratch(src)
        for w in range(w0, w1):
            pi = w // nsplit
            c = w - pi * nsplit
            ps, po = _point(pi, kshape, kst, kshape.shape[0], kidx)
            part[w] = reduce_range(
                src, soff + ps, rshape, rsrc, c * nr // nsplit, (c + 1) * nr // nsplit, ident, vals, lvls, ridx, buf
            )

    @_jitable
    def inner_finish(part, out, kshape, kst, ooff, nk, nsplit):
        kidx = index_scratch(kshape.shape[0])
        ps, po = _point(0, kshape, kst, kshape.shape[0], kidx)
        for pi in range(nk):
            r = part[pi * nsplit]
            for c in range(1, nsplit):
                r = comb(r, part[pi * nsplit + c])
            out[ooff + po] = r
            ps, po = _next_point(kshape, kst, kidx, ps, po)

    def outer_items(src, out, part, kshape, kst, rshape, rsrc, soff, ooff, nr, ncol, width, nrs, w0, w1, identa):
        """OUTER: item w = (outer K point, column block, part of the rows); rows are folded into ``acc``.

        With one part (``nrs == 1``) the item writes its outputs; otherwise it
        writes its partial vector to ``part[w]`` for ``outer_finish``."""
        ident = identa[0]
        nk = kshape.shape[0]
        n_in = kshape[nk - 1]
        ss = kst[0, nk - 1]
        so = kst[1, nk - 1]
        kidx = index_scratch(nk)
        nrd = rshape.shape[0]
        ridx = index_scratch(nrd)
        acc = stack_scratch(width, identa.dtype)
        tmp = stack_scratch(width, identa.dtype)
        for w in range(w0, w1):
            wc = w // nrs
            rp = w - wc * nrs
            pi = wc // ncol
            c0 = (wc - pi * ncol) * width
            wl = min(width, n_in - c0)
            r0 = rp * nr // nrs
            ps, po = _point(pi, kshape, kst, nk - 1, kidx)
            (rb,) = seek(r0, rshape, rsrc, nrd, ridx, (0,))
            cnt = 0  # rows in tmp
            nfold = 0  # blocks folded into acc
            r = r0
            r1 = (rp + 1) * nr // nrs
            while r < r1:
                p = soff + ps + rb + c0 * ss
                # the first row of a block starts tmp (no separate initialising pass)
                if ss == 1 and cnt > 0 and cnt + 4 <= FOLD and r + 4 <= r1:
                    # Four rows in one pass over tmp, each column still adding them in row
                    # order (so the same bits): a quarter of tmp's loads and stores.
                    (rb,) = carry(rshape, rsrc, nrd, ridx, (rb,))[1]
                    p1 = soff + ps + rb + c0
                    (rb,) = carry(rshape, rsrc, nrd, ridx, (rb,))[1]
                    p2 = soff + ps + rb + c0
                    (rb,) = carry(rshape, rsrc, nrd, ridx, (rb,))[1]
                    p3 = soff + ps + rb + c0
                    v0, v1, v2, v3 = src[p : p + wl], src[p1 : p1 + wl], src[p2 : p2 + wl], src[p3 : p3 + wl]
                    for k in range(wl):
                        tmp[k] = comb(comb(comb(comb(tmp[k], _dec(v0[k])), _dec(v1[k])), _dec(v2[k])), _dec(v3[k]))
                    cnt += 3  # the fourth below, with the step past p3
                    r += 3
                elif ss == 1:
                    v = src[p : p + wl]
                    if cnt == 0:
                        for k in range(wl):
                            tmp[k] = comb(ident, _dec(v[k]))
                    else:
                        for k in range(wl):
                            tmp[k] = comb(tmp[k], _dec(v[k]))
                elif cnt == 0:
                    for k in range(wl):
                        tmp[k] = comb(ident, _dec(src[p + k * ss]))
                else:
                    for k in range(wl):
                        tmp[k] = comb(tmp[k], _dec(src[p + k * ss]))
                cnt += 1
                r += 1
                if cnt == FOLD:
                    if nfold == 0:
                        for k in range(wl):
                            acc[k] = tmp[k]
                    else:
                        for k in range(wl):
                            acc[k] = comb(acc[k], tmp[k])
                    nfold += 1
                    cnt = 0
                (rb,) = carry(rshape, rsrc, nrd, ridx, (rb,))[1]
            if nfold and cnt:
                for k in range(wl):
                    tmp[k] = comb(acc[k], tmp[k])
            res = acc if nfold and not cnt else tmp
            if nrs == 1:
                q = ooff + po + c0 * so
                for k in range(wl):
                    out[q + k * so] = res[k]
            else:
                for k in range(wl):
                    part[w, k] = res[k]

    @_jitable
    def outer_finish(part, out, kshape, kst, ooff, ncol, width, nrs, nwc):
        """Combine the row parts of each (outer K point, column block), in order."""
        nk = kshape.shape[0]
        n_in = kshape[nk - 1]
        so = kst[1, nk - 1]
        kidx = index_scratch(nk)
        for wc in range(nwc):
            pi = wc // ncol
            c0 = (wc - pi * ncol) * width
            wl = min(width, n_in - c0)
            ps, po = _point(pi, kshape, kst, nk - 1, kidx)
            q = ooff + po + c0 * so
            for k in range(wl):
                r = part[wc * nrs, k]
                for rp in range(1, nrs):
                    r = comb(r, part[wc * nrs + rp, k])
                out[q + k * so] = r

    own_name(tag, leaf, push, fold, reduce_range, inner_outputs, inner_partial, inner_finish, outer_items, outer_finish)
    s_inner = njit(**_JIT)(inner_outputs)
    s_outer = njit(**_JIT)(outer_items)
    inner_outputs = _jitable(inner_outputs)
    outer_items = _jitable(outer_items)

    def p_inner(src, out, part, kshape, kst, rshape, rsrc, soff, ooff, nk, nr, nch, nsplit, identa):
        if nsplit == 1:
            for c in prange(nch):
                inner_outputs(
                    src, out, kshape, kst, rshape, rsrc, soff, ooff, nr, c * nk // nch, (c + 1) * nk // nch, identa
                )
        else:
            total = nk * nsplit
            for c in prange(nch):
                inner_partial(
                    src, part, kshape, kst, rshape, rsrc, soff, nr, nsplit,
                    c * total // nch, (c + 1) * total // nch, identa,
                )
            inner_finish(part, out, kshape, kst, ooff, nk, nsplit)

    def p_outer(src, out, part, kshape, kst, rshape, rsrc, soff, ooff, nr, ncol, width, nrs, nitems, nch, identa):
        for c in prange(nch):
            outer_items(
                src, out, part, kshape, kst, rshape, rsrc, soff, ooff, nr, ncol, width, nrs,
                c * nitems // nch, (c + 1) * nitems // nch, identa,
            )
        if nrs > 1:
            outer_finish(part, out, kshape, kst, ooff, ncol, width, nrs, nitems // nrs)

    own_name(tag, p_inner, p_outer)
    _PARTS[tag] = (leaf, push, fold)
    return {(INNER, False): s_inner, (INNER, True): njit(parallel=True, **_JIT)(p_inner),
            (OUTER, False): s_outer, (OUTER, True): njit(parallel=True, **_JIT)(p_outer)}


@_jitable
def _first_at(src, p, s, m, best):
    """The first of m elements (at stride s from p) equal to best, or the first NaN when
    best is one: a minimum of selected indices, a loop without an exit, which vectorises
    (its positions unsigned: a signed index costs a wraparound test per load)."""
    nan = best != best
    first = m
    for k in range(m):
        v = _dec(src[np.uint64(p + k * s)])
        hit = (v != v) if nan else (v == best)
        first = min(first, k if hit else m)
    return first


def _make_arg(better, leaf):
    tag = better.__name__

    @_jitable
    def arg_run(src, p, s, r0, r1, buf):
        """The extreme of elements [r0, r1) (at stride s from p) and the first index holding
        it, in one pass of blocks of ``ARG_BLOCK``: each block's extreme comes from
        ``leaf``, the max or min reduction's own (vectorised; a NaN when the block holds
        one), and a block replaces the one kept only when strictly better, so the kept
        block holds the first occurrence; a block with a NaN ends the pass.  Its first
        element equal to the extreme, or its first NaN (``_first_at``), is the index a
        scan keeping the strictly better element finds."""
        best = _dec(src[p + r0 * s])
        at = r0
        for k in range(r0, r1, ARG_BLOCK):
            m = min(ARG_BLOCK, r1 - k)
            first = _dec(src[p + k * s])
            if s == 1:  # a literal stride folds the leaf's strided loop away
                e = leaf(src, p + k, 1, m, first, buf)
            else:
                e = leaf(src, p + k * s, s, m, first, buf)
            if e != e:
                best, at = e, k
                break
            if better(e, best):
                best, at = e, k
        m = min(ARG_BLOCK, r1 - at)
        if s == 1:
            return best, at + _first_at(src, p + at, 1, m, best)
        return best, at + _first_at(src, p + at * s, s, m, best)

    def inner_outputs(src, out, kshape, kst, n, rs, soff, ooff, p0, p1):
        kidx = index_scratch(kshape.shape[0])
        buf = _scratch(src)
        ps, po = _point(p0, kshape, kst, kshape.shape[0], kidx)
        for _ in range(p0, p1):
            best, bi = arg_run(src, soff + ps, rs, 0, n, buf)
            out[ooff + po] = bi
            ps, po = _next_point(kshape, kst, kidx, ps, po)

    @_jitable
    def inner_partial(src, pbest, pidx, kshape, kst, n, rs, soff, nsplit, w0, w1):
        kidx = index_scratch(kshape.shape[0])
        buf = _scratch(src)
        for w in range(w0, w1):
            pi = w // nsplit
            c = w - pi * nsplit
            ps, po = _point(pi, kshape, kst, kshape.shape[0], kidx)
            best, bi = arg_run(src, soff + ps, rs, c * n // nsplit, (c + 1) * n // nsplit, buf)
            pbest[w] = best
            pidx[w] = bi

    @_jitable
    def inner_finish(pbest, pidx, out, kshape, kst, ooff, nk, nsplit):
        kidx = index_scratch(kshape.shape[0])
        ps, po = _point(0, kshape, kst, kshape.shape[0], kidx)
        for pi in range(nk):
            best = pbest[pi * nsplit]
            bi = pidx[pi * nsplit]
            for c in range(1, nsplit):  # later parts win only when strictly better: ties keep the first
                if better(pbest[pi * nsplit + c], best):
                    best = pbest[pi * nsplit + c]
                    bi = pidx[pi * nsplit + c]
            out[ooff + po] = bi
            ps, po = _next_point(kshape, kst, kidx, ps, po)

    def outer_items(src, out, kshape, kst, n, rs, soff, ooff, ncol, width, w0, w1):
        nk = kshape.shape[0]
        n_in = kshape[nk - 1]
        ss = kst[0, nk - 1]
        so = kst[1, nk - 1]
        kidx = index_scratch(nk)
        bestv = _values_like(src, width)
        bidx = np.zeros(width, np.int64)
        for w in range(w0, w1):
            pi = w // ncol
            c0 = (w - pi * ncol) * width
            wl = min(width, n_in - c0)
            ps, po = _point(pi, kshape, kst, nk - 1, kidx)
            p = soff + ps + c0 * ss
            for k in range(wl):
                bestv[k] = _dec(src[p + k * ss])
                bidx[k] = 0
            for r in range(1, n):
                p = soff + ps + r * rs + c0 * ss
                for k in range(wl):
                    v = _dec(src[p + k * ss])
                    if better(v, bestv[k]):
                        bestv[k] = v
                        bidx[k] = r
            q = ooff + po + c0 * so
            for k in range(wl):
                out[q + k * so] = bidx[k]

    own_name(tag, arg_run, inner_outputs, inner_partial, inner_finish, outer_items)
    s_inner = njit(**_JIT)(inner_outputs)
    s_outer = njit(**_JIT)(outer_items)
    inner_outputs = _jitable(inner_outputs)
    outer_items = _jitable(outer_items)

    def p_inner(src, out, pbest, pidx, kshape, kst, n, rs, soff, ooff, nk, nch, nsplit):
        if nsplit == 1:
            for c in prange(nch):
                inner_outputs(src, out, kshape, kst, n, rs, soff, ooff, c * nk // nch, (c + 1) * nk // nch)
        else:
            total = nk * nsplit
            for c in prange(nch):
                inner_partial(src, pbest, pidx, kshape, kst, n, rs, soff, nsplit,
                              c * total // nch, (c + 1) * total // nch)
            inner_finish(pbest, pidx, out, kshape, kst, ooff, nk, nsplit)

    def p_outer(src, out, kshape, kst, n, rs, soff, ooff, ncol, width, nitems, nch):
        for c in prange(nch):
            outer_items(src, out, kshape, kst, n, rs, soff, ooff, ncol, width,
                        c * nitems // nch, (c + 1) * nitems // nch)

    own_name(tag, p_inner, p_outer)
    return {(INNER, False): s_inner, (INNER, True): njit(parallel=True, **_JIT)(p_inner),
            (OUTER, False): s_outer, (OUTER, True): njit(parallel=True, **_JIT)(p_outer)}


@njit(**_JIT)
def _fill(out, shape, st, off, value):
    """Write value[0] at every element of a layout (results of reducing a zero-size dim);
    ``st`` is the layout's strides as one row."""
    n = 1
    for d in range(shape.shape[0]):
        n *= shape[d]
    idx = index_scratch(shape.shape[0])
    p = off
    for _ in range(n):
        out[p] = value[0]
        (p,) = carry(shape, st, shape.shape[0], idx, (p,))[1]


# op -> (combining function, maker of its leaf)
_COMB = {"sum": (_c_sum, lambda: _sum_leaf(_r_sum)), "prod": (_c_prod, lambda: _sum_leaf(_r_prod)),
         "max": (_c_max, lambda: _extreme_leaf(_c_max, 0)), "min": (_c_min, lambda: _extreme_leaf(_c_min, -1))}
_BETTER = {"argmax": _better_max, "argmin": _better_min}
_kernels = caches.table("reduce.kernels", "op name (a kernel set each)")


def row_parts(op: str, dtype) -> tuple:
    """``(leaf, push, fold, ident)``: what a generated kernel reduces a row of its own with,
    exactly as this family's INNER path reduces one (``strided.fuse``'s row programs), for an
    accumulator of numpy ``dtype``.  ``leaf(src, p, s, m, ident, buf)`` reduces up to
    ``BLOCK`` elements; longer rows push each BLOCK-element leaf with ``sp = push(vals, lvls,
    sp, v)`` and finish with ``fold(vals, sp, ident)``.  ``vals`` and ``lvls`` are
    ``STACK``-long scratch (the accumulator's dtype, int64); ``buf`` is empty for every dtype
    but the halves' bits.  The caller writes that loop itself: behind one more function
    boundary LLVM no longer vectorises the leaf as well."""
    _kernel_set(op)
    return (*_PARTS[_COMB[op][0].__name__], _identity(op, np.dtype(dtype))[0])


def _kernel_set(op: str) -> dict:
    ks = _kernels.get(op)
    if ks is None:
        if op in _COMB:
            ks = _make_reduce(*_COMB[op])
        else:  # argmax finds the extreme as max does
            ks = _make_arg(_BETTER[op], _COMB[op[3:]][1]())
        _kernels[op] = ks
    return ks


# ---------------------------------------------------------------------------
# checks, plan, dispatch


def _check(op: str, src, src_layout: Layout, dims, out, out_layout: Layout) -> tuple[int, ...]:
    check_buffer(op, "src", src, dtypes=COMPUTABLE)
    check_buffer(op, "out", out, dtypes=NATIVE, writable=True)
    if op not in ("sum", "prod") and (src.dtype.kind == "c" or out.dtype.kind == "c"):
        raise DTypeError(f"{op}: complex numbers have no order, got a {src.dtype} source")
    check_layout(op, "src_layout", src_layout)
    check_layout(op, "out_layout", out_layout)
    dims = check_dims(op, src_layout, dims, out_layout)
    for what, buf, lay in (("src", src, src_layout), ("out", out, out_layout)):
        check_in_buffer(op, what, buf, lay)
    return dims


def _plan(src_layout: Layout, out_layout: Layout, dims: tuple, for_arg: bool = False) -> ReducePlan:
    return plan_and_arrays(src_layout, out_layout, dims, for_arg, get_num_threads(), PARALLEL_MIN * REDUCE_FACTOR)[0]


def plan(src_layout: Layout, dims, out_layout: Layout | None = None) -> ReducePlan:
    """The plan ``reduce`` would run (for tests and benchmarks); out defaults to a dense keepdim layout."""
    dims = tuple(dims)
    if out_layout is None:
        out_layout = Layout.contiguous(tuple(1 if d in dims else n for d, n in enumerate(src_layout.shape)))
    return _plan(src_layout, out_layout, dims)


@caches.lru("reduce.identities", "op, dtype", 64)
def _identity(op: str, dtype: np.dtype) -> np.ndarray:
    if op == "sum":
        v = 0
    elif op == "prod":
        v = 1
    elif dtype.kind == "f":
        v = -np.inf if op == "max" else np.inf
    elif dtype.kind == "b":
        v = op == "min"
    else:
        info = np.iinfo(dtype)
        v = info.min if op == "max" else info.max
    a = np.array([v], dtype=dtype)
    a.flags.writeable = False
    return a


def _fill_out(out, out_layout: Layout, value: np.ndarray) -> None:
    _fill(
        out,
        np.array(out_layout.shape, dtype=np.int64),
        np.array(out_layout.stride, dtype=np.int64).reshape(1, out_layout.ndim),
        out_layout.offset,
        value,
    )


def reduce(op: str, src, src_layout: Layout, dims, out, out_layout: Layout, keep: bool = False):
    """``out = op(src)`` over ``dims`` (sorted, distinct, possibly all or none).

    ``out_layout`` has src's shape with the reduced dims set to 1; the
    accumulator is out's dtype.  ``op`` is one of sum, prod, max, min.  With
    ``keep``, returns the call it ran prepared to run again (``_prepared``), or None
    where it ran none (an empty source or output).
    """
    check_op(op)
    dims = _check(op, src, src_layout, dims, out, out_layout)
    if not has_work(op, src.dtype, out.dtype, src_layout, dims, out_layout):
        return None
    if src_layout.numel == 0:  # sum or prod of nothing
        _fill_out(out, out_layout, _identity(op, out.dtype))
        return None
    view = HALF_VIEW.get(src.dtype)
    _runner(op, src_layout, out_layout, dims, out.dtype)(src if view is None else src.view(view), out)
    return _prepared(op, src_layout, dims, out_layout, src.dtype, out.dtype) if keep else None


def _prepared(op: str, src_layout: Layout, dims: tuple, out_layout: Layout, src_dtype, acc):
    """The reduction ``reduce`` has just checked and run, as ``(run, reach)``: ``run(src, out)``
    runs it again on buffers of these numpy dtypes once the caller has checked ``len(src) >=
    reach[0]`` and ``len(out) >= reach[1]``.  Made after the run, so that the kernel is
    compiled and a serial run calls its entry."""
    view = HALF_VIEW.get(src_dtype)
    run = _runner(op, src_layout, out_layout, dims, acc, src_dtype if view is None else view)
    if view is not None:
        inner = run

        def run(src, out):
            inner(src.view(view), out)
    return run, (_reach(src_layout)[1], _reach(out_layout)[1])


def _runner(op: str, src_layout: Layout, out_layout: Layout, dims: tuple, acc: np.dtype, src_dtype=None):
    """``run(src, out)``: the planned reduction kernel on buffers already checked for these
    layouts (src as the kernels see it: half types as their bit views).  With ``src_dtype``,
    the dtype of every src it will be given (``_prepared``'s), a serial run calls the kernel's
    compiled entry (``walk.direct``)."""
    p, (kshape, kst, rshape, rst) = plan_and_arrays(
        src_layout, out_layout, dims, False, get_num_threads(), PARALLEL_MIN * REDUCE_FACTOR
    )
    ident = _identity(op, acc)
    k = _kernel_set(op)[(p.case, p.parallel)]
    so, oo = p.src_offset, p.out_offset
    par = p.parallel

    def entered(*example):
        """How ``run`` calls ``k``: its compiled entry for arguments typed as ``example``
        (with ``src_dtype``; a parallel one as ``walk.in_parallel`` enters it), else ``k``."""
        if src_dtype is None:
            return in_parallel(k) if par else k
        example = (np.empty(0, src_dtype), *example)
        return in_parallel(k, example) if par else direct(k, example)

    if p.case == INNER and par:
        m = p.nk * p.nsplit if p.nsplit > 1 else 0
        tail = (kshape, kst, rshape, rst, so, oo, p.nk, p.nr, p.nchunks, p.nsplit, ident)
        e = entered(np.empty(0, acc), np.empty(m, acc), *tail)

        def run(src, out):
            e(src, out, np.empty(m, dtype=acc), *tail)
    elif p.case == INNER:
        nr, nk = p.nr, p.nk
        e = entered(np.empty(0, acc), kshape, kst, rshape, rst, so, oo, nr, 0, nk, ident)

        def run(src, out):
            e(src, out, kshape, kst, rshape, rst, so, oo, nr, 0, nk, ident)
    else:
        nitems = (p.nk // p.kshape[-1]) * p.ncol * p.nrsplit
        rows = nitems if p.nrsplit > 1 else 0
        width = p.width
        none = np.empty((0, width), dtype=acc)  # never written: shared by the calls that split no rows
        if par:
            tail = (kshape, kst, rshape, rst, so, oo, p.nr, p.ncol, p.width, p.nrsplit, nitems, p.nchunks, ident)
            e = entered(np.empty(0, acc), none, *tail)

            def run(src, out):
                e(src, out, np.empty((rows, width), dtype=acc) if rows else none, *tail)
        else:  # one thread, no split: the arguments spelled out, as a small sum is mostly its call
            nr, ncol = p.nr, p.ncol
            e = entered(np.empty(0, acc), none, kshape, kst, rshape, rst, so, oo, nr, ncol, width, 1, 0, nitems,
                        ident)

            def run(src, out):
                e(src, out, none, kshape, kst, rshape, rst, so, oo, nr, ncol, width, 1, 0, nitems, ident)
    return run


def arg_reduce(op: str, src, src_layout: Layout, dim: int, out, out_layout: Layout, keep: bool = False):
    """Index of the max (argmax) or min (argmin) along ``dim``; out is int64 with keepdim shape.

    Ties pick the first occurrence; a NaN wins over numbers (the first NaN).  With
    ``keep``, returns the call it ran prepared to run again, ``(run, reach)`` as
    ``reduce``'s, or None where it ran none (nothing to index, or a dim of size 1)."""
    check_op(op, arg=True)
    (d,) = _check(op, src, src_layout, (check_arg_dim(op, dim),), out, out_layout)
    if not has_arg_work(op, out.dtype, src_layout, d, out_layout):
        return None
    view = HALF_VIEW.get(src.dtype)
    if view is not None:
        src = src.view(view)
    p, (kshape, kst, _, _) = plan_and_arrays(
        src_layout, out_layout, (d,), True, get_num_threads(), PARALLEL_MIN * REDUCE_FACTOR
    )
    if not p.rshape:  # the dim has size 1: every index is 0
        _fill_out(out, out_layout, np.zeros(1, np.int64))
        return None
    n, rs = p.rshape[0], p.rstrides[0]
    k = _kernel_set(op)[(p.case, p.parallel)]
    so, oo = p.src_offset, p.out_offset
    if p.case == INNER and p.parallel:
        m = p.nk * p.nsplit if p.nsplit > 1 else 0
        best_dtype = np.float32 if view is not None else src.dtype
        tail = (kshape, kst, n, rs, so, oo, p.nk, p.nchunks, p.nsplit)

        def args(src, out):  # the split's partial results: fresh for every call
            return (src, out, np.empty(m, best_dtype), np.empty(m, np.int64), *tail)
    else:
        if p.case == INNER:
            tail = (kshape, kst, n, rs, so, oo, 0, p.nk)
        else:
            nitems = (p.nk // p.kshape[-1]) * p.ncol
            tail = (kshape, kst, n, rs, so, oo, p.ncol, p.width, *((nitems, p.nchunks) if p.parallel else (0, nitems)))

        def args(src, out):
            return (src, out, *tail)
    launch(k, args(src, out), p.parallel)
    if not keep:
        return None
    example = args(np.empty(0, src.dtype), np.empty(0, np.int64))
    e = in_parallel(k, example) if p.parallel else direct(k, example)

    def run(src, out):
        e(*args(src if view is None else src.view(view), out))
    return run, (_reach(src_layout)[1], _reach(out_layout)[1])

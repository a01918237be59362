"""strided.fuse against the eager chain it fuses: the same bits, dtypes, shapes and errors.

The oracle is the function itself run eagerly (whose ops are tested against NumPy
elsewhere).  Chains are drawn over random layouts (negative, broadcast, transposed, with
gaps, zero-size); each distinct chain compiles a kernel, so the draws are few and
derandomised, and the every-dtype test uses one chain per dtype class."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strided as sd
from strided.fusion import Unfusable

from strategies import CHAIN_STEPS, chain_program, layouts_of_shape
from two_processes import twice

RNG = np.random.default_rng(0)


def _values(dtype, n):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(n) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -50), min(info.max, 50), n, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (RNG.standard_normal(n) + 1j * RNG.standard_normal(n)).astype(dtype)
    v = RNG.standard_normal(n) * 3
    v[RNG.random(n) < 0.05] = np.nan
    return v.astype(np.float32).astype(dtype) if dtype.itemsize == 2 else v.astype(dtype)


def _tensor(lay, n, dtype):
    t = sd.from_numpy(_values(dtype, n))
    return sd.Tensor(t._storage, lay, t.dtype)


def _same(got, want):
    """Equal bits, dtype and shape; where eager's float is a NaN, a NaN of any sign and payload
    (docs/fusion.md: LLVM may fold a negation into the op that made the NaN, whose sign IEEE
    754 leaves open; eager's memory round trip between the two ops pins it)."""
    assert isinstance(got, sd.Tensor), type(got)
    assert got.shape == want.shape and got.dtype is want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    g, w = np.ascontiguousarray(got.numpy()), np.ascontiguousarray(want.numpy())
    if g.dtype.kind in "fc" or g.dtype.itemsize == 2 and g.dtype.kind == "V" or str(g.dtype) == "bfloat16":
        nan = np.isnan(w.astype(np.complex128 if g.dtype.kind == "c" else np.float64))
        assert (np.isnan(g.astype(np.complex128 if g.dtype.kind == "c" else np.float64)) == nan).all(), (g, w)
        g, w = np.where(nan, 0, g).astype(g.dtype), np.where(nan, 0, w).astype(w.dtype)
    assert g.tobytes() == w.tobytes(), (g, w)


def test_a_negated_nan_is_a_nan_and_every_other_value_is_eagers_bits():
    x = sd.from_numpy(np.array([np.nan, -np.nan, 1.5, -np.inf, 0.0, -0.0], np.float32))
    fn = lambda x: -(x * 2.0) + (-(x.exp()))
    got, want = sd.fuse(fn, strict=True)(x).numpy(), fn(x).numpy()
    assert np.isnan(got[:2]).all() and np.isnan(want[:2]).all()
    assert got[2:].tobytes() == want[2:].tobytes()


def _check(fn, *args):
    """fuse(fn)(*args) is fn(*args), or both raise the same StridedError."""
    try:
        want = fn(*args)
    except sd.StridedError as e:
        with pytest.raises(type(e)) as got:
            sd.fuse(fn, strict=True)(*args)
        assert str(got.value) == str(e)
        return None
    got = sd.fuse(fn, strict=True)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        _same(g, w)
    return got


# -- drawn chains ------------------------------------------------------------------------------


@st.composite
def chains(draw):
    shape = draw(st.sampled_from([(5, 7), (3, 4, 2), (0, 3), (6,), (1, 9)]))
    nin = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.float16]))
    ins = []
    for k in range(nin):
        s = shape[k % len(shape):] if draw(st.booleans()) else shape  # some inputs broadcast
        lay, n = draw(layouts_of_shape(s))
        ins.append((lay, n))
    steps = draw(st.lists(st.tuples(st.sampled_from(CHAIN_STEPS),
                                    st.integers(0, 10 ** 6)), min_size=1, max_size=5))
    return shape, dtype, ins, steps


def _program(steps, nin):
    # a name of its own: derandomize seeds the draws from the test's source, kept as it was
    return chain_program(steps)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(chains())
def test_drawn_chains_over_drawn_layouts_are_eagers_bits(chain):
    shape, dtype, ins, steps = chain
    args = [_tensor(lay, n, dtype) for lay, n in ins]
    _check(_program(steps, len(args)), *args)


# -- every dtype ---------------------------------------------------------------------------------

DTYPES = [sd.bool_, sd.i8, sd.u8, sd.i16, sd.u16, sd.i32, sd.u32, sd.i64, sd.u64, sd.f16, sd.bf16, sd.f32, sd.f64,
          sd.c64, sd.c128]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_every_dtype_chain_is_eagers_bits(dt):
    a = sd.from_numpy(_values(dt.np, 24).reshape(4, 6))
    b = sd.from_numpy(_values(dt.np, 6))
    if dt is sd.bool_:
        fn = lambda a, b: (a & b) | ~a
    elif dt.kind in "iu":
        fn = lambda a, b: (a * b + a - 3).maximum(b) // 2 + (a < b).to_dtype(dt)
    elif dt.kind == "c":
        fn = lambda a, b: (a * b - a.conj()) / (b + 2) + a.exp()
    else:
        fn = lambda a, b: sd.where(a > b, (a * b).tanh(), a.t().t() - 1.5) + b.to_dtype(sd.f32)
    _check(fn, a.t().t()[::-1], b)


# -- reductions, products, composites --------------------------------------------------------------


def test_softmax_layer_norm_logsumexp_and_var_are_eagers_bits():
    x = sd.from_numpy(_values(np.float32, 12 * 33).reshape(12, 33))
    x = sd.where(x == x, x, 0.0)  # no NaN: the reductions' order is then the only question
    w = sd.from_numpy(_values(np.float32, 33))
    b = sd.from_numpy(_values(np.float32, 33))

    def layer_norm(x, w, b):
        mu = x.mean(-1, keepdim=True)
        d = x - mu
        var = (d * d).mean(-1, keepdim=True)
        return d / (var + 1e-5).sqrt() * w + b

    for fn, args in [(lambda x: x.softmax(-1), (x,)), (lambda x: x.t().softmax(0), (x,)), (layer_norm, (x, w, b)),
                     (lambda x: x.logsumexp(1), (x,)), (lambda x: x.var(0), (x,)), (lambda x: x.std(), (x,)),
                     (lambda x: (x * 2).sum(), (x,)), (lambda x: (x.exp() - 1).max(0), (x,))]:
        _check(fn, *args)


def test_a_product_ends_a_group_and_its_epilogue_fuses_after_blas():
    x = sd.from_numpy(_values(np.float32, 8 * 16).reshape(8, 16))
    w = sd.from_numpy(_values(np.float32, 16 * 4).reshape(16, 4))
    b = sd.from_numpy(_values(np.float32, 4))
    fn = lambda x, w, b: ((x @ w) + b).relu() * 0.5
    _check(fn, x, w, b)
    text = sd.fuse(fn).explain(x, w, b)
    assert "matmul" in text and "BLAS" in text and text.count("kernel ") == 1, text


def test_views_inside_are_read_in_place_and_outputs_keep_eagers_memory_order():
    a = sd.from_numpy(_values(np.float64, 6 * 5).reshape(6, 5))
    f = sd.fuse(lambda a: (a.t() * 2 + a.t().exp())[::-2, 1:].unsqueeze(0))
    got = f(a)
    want = (a.t() * 2 + a.t().exp())[::-2, 1:].unsqueeze(0)
    _same(got, want)
    text = f.explain(a)
    # one kernel, reading the input through the views composed on its own layout (no copy)
    assert text.count("kernel ") == 1 and f"x0 = %0 through {a.t()[::-2, 1:].unsqueeze(0).layout}" in text, text


def test_several_outputs_and_zero_size_tensors():
    a = sd.zeros((0, 4))
    _check(lambda a: (a + 1, (a * 2).sum(0)), a)
    x = sd.from_numpy(_values(np.float32, 12).reshape(3, 4))
    _check(lambda x: ((x + 1).exp(), x.t() - 1), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bool"])
def test_heavy_chains_over_strided_runs_give_eagers_bits(dtype):
    """A heavy expression's strided runs gather integer and float inputs in stages (runs of
    several stages and a partial one, strides 2 and -3, a broadcast row); bool inputs take
    the direct loop.  Either way the answer is eager's, and NumPy's within float32's error."""
    from strided.kernels.common import STAGE

    n = 3 * STAGE + 7
    x = sd.from_numpy(_values(dtype, 6 * n).reshape(2, 3 * n))
    y = sd.from_numpy(np.abs(_values(np.float32, n)) + 0.5)
    fn = lambda x, y: ((x * 0.25).exp() * y).tanh() + (y * 2).log()
    for v in (x[:, ::3][:, :n], x[:, ::-3][:, :n], x[:, 1::2][:, :n]):
        got = _check(fn, v, y)
        w = y.numpy().astype(np.float64)
        ref = np.tanh(np.exp(v.numpy().astype(np.float64) * 0.25) * w) + np.log(2 * w)
        np.testing.assert_allclose(got.numpy().astype(np.float64), ref, rtol=1e-2 if dtype == "float16" else 2e-6,
                                   atol=1e-6)


# -- calls, caches, constants ------------------------------------------------------------------------


def test_a_kept_call_still_checks_every_buffer():
    f = sd.fuse(lambda a, b: (a + b).exp())
    x = sd.from_numpy(np.arange(12, dtype=np.float32))
    lay = sd.Layout((3, 4), (1, 3), 0)
    ok = sd.Tensor(x._storage, lay, sd.f32)
    f(ok, ok)
    short = sd.Tensor(sd.from_numpy(np.arange(11, dtype=np.float32))._storage, lay, sd.f32)
    for _ in range(2):  # the second time the program for these layouts is kept
        with pytest.raises(sd.LayoutBoundsError, match="buffer holds 11 elements"):
            f(short, ok)
    _same(f(ok, ok), (ok + ok).exp())


def test_new_scalars_and_layouts_give_right_answers():
    f = sd.fuse(lambda x, s: x * s + 1)
    x = sd.from_numpy(_values(np.float32, 20).reshape(4, 5))
    for s in (0.5, 3, -2.25):
        _same(f(x, s), x * s + 1)
        _same(f(x.t(), s), x.t() * s + 1)
    w = sd.from_numpy(_values(np.float32, 5))
    g = sd.fuse(lambda x: x * w)  # a tensor met while tracing is read at every call
    _same(g(x), x * w)
    w.copy_(w + 1)
    _same(g(x), x * w)


def test_errors_are_the_eager_ops_errors():
    _check(lambda a, b: a + b, sd.ones((3,)), sd.ones((4,)))
    _check(lambda a: a.logical_not(), sd.arange(3))
    _check(lambda a: a - a, sd.ones((2,), dtype=sd.bool_))


def test_what_cannot_be_fused_runs_eagerly_with_one_warning_or_raises_when_strict():
    def branchy(x):
        return x * 2 if x.sum() > 0 else x  # Python control flow on a tensor value

    x = sd.from_numpy(_values(np.float32, 6))
    f = sd.fuse(branchy)
    with pytest.warns(UserWarning, match=r"runs eagerly: fuse: Python control flow"):
        _same(f(x), branchy(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)  # once per function
    with pytest.raises(Unfusable, match="control flow"):
        sd.fuse(branchy, strict=True)(x)
    with pytest.raises(Unfusable, match="nonzero"):
        sd.fuse(lambda x: x.nonzero(), strict=True)(x)
    with pytest.raises(Unfusable, match="write"):
        sd.fuse(lambda x: x.fill_(1), strict=True)(x)


# -- autograd ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["tanh", "broadcast", "softmax", "reduce", "matmul", "slice", "max", "reuse"])
def test_gradients_are_eagers_bits(case):
    a = _values(np.float32, 8 * 5).reshape(8, 5)
    a[np.isnan(a)] = 0.25
    b, c = a[0].copy(), a.T.copy()
    fn, arrs = {
        "tanh": (lambda a, b: (a * b + a).tanh(), (a, b)),
        "broadcast": (lambda a, b: (a - b).relu().sum(0) * 2.0, (a, b)),
        "softmax": (lambda a: a.softmax(-1), (a,)),
        "reduce": (lambda a: (a.exp() * a).mean(1), (a,)),
        "matmul": (lambda a, c: (a @ c).sigmoid(), (a, c)),
        "slice": (lambda a: a[:, ::2].exp(), (a,)),
        "max": (lambda a: a.max(1) * 2, (a,)),
        "reuse": (lambda a, b: (a * a + a.t().t() * b) * a, (a, b)),
    }[case]
    ve = [sd.Var(x) for x in arrs]
    ge = fn(*ve).sum_all().backward()
    vf = [sd.Var(x) for x in arrs]
    yf = sd.fuse(fn)(*vf)
    assert yf.track_op() and yf._op.name == "fused"
    gf = yf.sum_all().backward()
    for x, y in zip(ve, vf):
        _same(gf[y], ge[x])


def test_a_second_process_loads_the_fused_kernel_from_the_cache(tmp_path):
    code = textwrap.dedent("""
        import numpy as np, strided as sd
        f = sd.fuse(lambda a, b: (a * b - a).exp() + b)
        a = sd.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4) / 7)
        f(a, a.t().t())
        k = [s for _, s in f._programs[next(iter(f._programs))].steps if type(s).__name__ == "Kernel"][0]
        d = [v for v in __import__("sys").modules[k.module].KERNELS.values() if v.signatures][0]
        print(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))
    """)
    first, second = twice(code, tmp_path)
    assert first == ["0", "1"]  # compiled
    assert second == ["1", "0"]  # loaded, no compile


def test_the_backward_reads_the_forwards_products_instead_of_computing_them_again(monkeypatch):
    from strided.ops import linalg

    x, w = _values(np.float32, 6 * 4).reshape(6, 4), _values(np.float32, 5 * 4).reshape(5, 4)
    x[np.isnan(x)], w[np.isnan(w)] = 0.5, -0.5
    b = np.linspace(-1, 1, 5, dtype=np.float32)

    def layer(x, w, b):
        return (x @ w.t() + b).relu()

    f = sd.fuse(layer)
    vf = [sd.Var(a) for a in (x, w, b)]
    f(*vf).sum_all().backward()  # traced and compiled: the counted call below is a replay
    calls = []
    real = linalg.matmul
    monkeypatch.setattr(linalg, "matmul", lambda a, c: calls.append(1) or real(a, c))
    vf = [sd.Var(a) for a in (x, w, b)]
    gf = f(*vf).sum_all().backward()
    assert len(calls) == 3  # the forward's product, then x's and w's gradients: no product again
    monkeypatch.undo()
    ve = [sd.Var(a) for a in (x, w, b)]
    ge = layer(*ve).sum_all().backward()
    for a, c in zip(ve, vf):
        _same(gf[c], ge[a])


def test_a_backward_computes_no_gradient_product_nobody_wants():
    # A layer's input that is no Var: the fused backward and eager's both compute the
    # weight's gradient product alone, and the gradients are eager's bits.
    from strided.kernels import matmul as km

    def gemms():
        return sum(km.stats.values()) // 2  # every gemm counts its two operands

    rng = np.random.default_rng(12)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)

    def layer(x, w, b):
        return (x @ w.t() + b).relu()

    f = sd.fuse(layer)
    f(sd.from_numpy(x), sd.Var(w), sd.Var(b)).sum_all().backward()  # traced and compiled
    got = {}
    for name, fn in (("fused", f), ("eager", layer)):
        vw, vb = sd.Var(w), sd.Var(b)
        before = gemms()
        g = fn(sd.from_numpy(x), vw, vb).sum_all().backward()
        assert gemms() - before == 2, name  # the forward's product and w's gradient
        got[name] = (g[vw], g[vb])
    for a, c in zip(got["fused"], got["eager"]):
        _same(a, c)


def test_a_value_used_whole_and_through_a_view_is_written_once():
    # a*b summed and read transposed by a product: one kernel writes it, and the transpose
    # reads the written tensor in place.
    rng = np.random.default_rng(14)
    a, b = (rng.standard_normal((6, 5)).astype(np.float32) for _ in range(2))

    def fn(a, b):
        y = a * b
        return y.sum(0), y.t() @ b

    f = sd.fuse(fn)
    ta, tb = sd.from_numpy(a), sd.from_numpy(b)
    assert "1 fused kernel(s)" in f.explain(ta, tb).splitlines()[0]
    for got, want in zip(f(ta, tb), fn(ta, tb)):
        _same(got, want)


def test_outputs_computed_alike_are_buffers_of_their_own():
    # As eager: a*b written twice gives two tensors that do not share memory, while a
    # value and its view returned together share it.
    rng = np.random.default_rng(16)
    ta, tb = (sd.from_numpy(rng.standard_normal((4, 3)).astype(np.float32)) for _ in range(2))

    def twice(a, b):
        return a * b, (a * b).t()

    def viewed(a, b):
        y = a * b
        return y, y.t()

    for fn, shared in ((twice, False), (viewed, True)):
        f = sd.fuse(fn)
        for _ in range(2):  # the traced call, then the kept program
            y, yt = f(ta, tb)
            assert (y._storage is yt._storage) is shared, fn.__name__
            e, et = fn(ta, tb)
            _same(y, e)
            _same(yt, et)


def test_a_fused_backward_writes_each_layer_gradient_once(monkeypatch):
    # Two fused layers with Var weights: the backward writes relu's gradient once per layer
    # (the bias's sum and both products read it) and reads the forward's activation instead
    # of computing it again; the gradients are eager's bits.
    from strided.fusion import lower

    rng = np.random.default_rng(15)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    params = [rng.standard_normal(s).astype(np.float32) for s in ((5, 6), (5,), (4, 5), (4,))]

    def net(x, w1, b1, w2, b2):
        h = (x @ w1.t() + b1).relu()
        return (h @ w2.t() + b2).relu()

    f = sd.fuse(net)
    f(sd.from_numpy(x), *map(sd.Var, params)).sum_all().backward()  # traced and compiled
    runs = []
    real = lower.Kernel.__call__
    monkeypatch.setattr(lower.Kernel, "__call__", lambda k, env: runs.append(k) or real(k, env))
    vf = [sd.Var(p) for p in params]
    y = f(sd.from_numpy(x), *vf)
    forward = len(runs)
    gf = y.sum_all().backward()
    assert len(runs) - forward == 2
    monkeypatch.undo()
    ve = [sd.Var(p) for p in params]
    ge = net(sd.from_numpy(x), *ve).sum_all().backward()
    for a, c in zip(ve, vf):
        _same(gf[c], ge[a])


def test_a_backward_graph_keeps_one_node_per_value():
    # dedupe (a backward's graph): the same op on the same operands is one node, and a
    # view that keeps the shape (detach, reshape to itself) is its value; a user's graph
    # keeps every call.
    from strided.fusion.trace import trace

    x = sd.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))

    def fn(x):
        return x.detach().reshape((2, 3)) * 2 + x * 2

    kinds = {d: [n.kind for n in trace(fn, (x,), dedupe=d).nodes] for d in (False, True)}
    assert kinds[True] == ["input", "const", "ew", "ew"]  # x * 2 once, then the add
    assert kinds[False].count("view") == 2 and kinds[False].count("ew") == 3

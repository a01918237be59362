"""Autograd: the recorded graph (seed 004), gradients against finite differences, memory."""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings

import strided as sd
from strided import Var, sorted_nodes
from strategies import view_chains


def test_seed_004_graph_counts():
    x = sd.tensor([1.0, 2.0, 3.0])
    y = x.sqr().sum_all()
    assert y.track_op() is False and len(sorted_nodes(y)) == 0
    w = Var([1.0, 2.0, 3.0])
    h = w.broadcast_mul(x)
    z = h.sqr().sum(-1)
    assert z.track_op() is True
    nodes = sorted_nodes(z)
    assert len(nodes) == 5
    # from z to w: the sum is recorded as a keepdim reduction plus a squeeze, as in candle
    assert [list(n.shape) for n in nodes] == [[], [1], [3], [3], [3]]
    assert nodes[0] is z and nodes[-1] is w
    assert w.is_variable() is True and h.is_variable() is False
    zd = z.detach()
    assert zd.track_op() is False and len(sorted_nodes(zd)) == 0
    assert sd.same_buffer(zd, z)
    assert (zd + 1).track_op() is False


def test_candle_matmul_grad_literals():
    x = Var(np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    y = Var(np.arange(12, dtype=np.float32).reshape(2, 3, 2))
    grads = x.matmul(y).backward()
    assert grads[x].shape == (2, 2, 3)
    assert grads[x].tolist() == [[[1, 5, 9], [1, 5, 9]], [[13, 17, 21], [13, 17, 21]]]
    assert grads[y].tolist() == [[[3, 3], [5, 5], [7, 7]], [[15, 15], [17, 17], [19, 19]]]


def test_expand_grad_sums_back():
    x = Var([[1.0, 2.0, 3.0]])
    y = x.expand(4, 3).sqr().sum_all()
    g = y.backward()[x]
    assert g.shape == (1, 3)
    assert g.tolist() == [[8.0, 16.0, 24.0]]  # d/dx sum over 4 rows of x^2 = 4 * 2x
    s = Var([2.0])
    g = (s.broadcast_as((2, 3)) * sd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum_all().backward()[s]
    assert g.tolist() == [21.0]


def test_gradients_summed_over_uses_and_intermediates_kept():
    w = Var([1.0, -2.0, 3.0])
    h = w * w
    z = (h + w).sum_all()
    grads = z.backward()
    assert grads[w].tolist() == [3.0, -3.0, 7.0]
    assert grads[h].tolist() == [1.0, 1.0, 1.0]
    assert grads.get(sd.tensor([1.0])) is None


# -- finite differences -------------------------------------------------------

def _numeric_grad(f, x: np.ndarray, eps=1e-6):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + eps
        hi = f(x)
        x[i] = old - eps
        lo = f(x)
        x[i] = old
        g[i] = (hi - lo) / (2 * eps)
    return g


def check(fn, *arrays, rtol=1e-5, atol=1e-6):
    """fn maps strided tensors to a tensor; compare d(sum(fn * weights))/dx with central differences."""
    rng = np.random.default_rng(len(arrays))
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    out0 = fn(*[sd.tensor(a) for a in arrays])
    weights = rng.uniform(0.5, 1.5, size=out0.shape)
    wt = sd.tensor(weights)

    def loss_np(*xs):
        return float((fn(*[sd.tensor(x) for x in xs]).numpy() * weights).sum())

    vars_ = [Var(a.copy()) for a in arrays]
    grads = (fn(*vars_) * wt).sum_all().backward()
    for k, (v, a) in enumerate(zip(vars_, arrays)):
        got = grads.get(v)
        want = _numeric_grad(lambda x: loss_np(*[x if j == k else arrays[j] for j in range(len(arrays))]), a.copy())
        if got is None:
            assert np.allclose(want, 0, atol=atol), (k, want)
            continue
        assert got.shape == a.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)


UNARY = ["exp", "log", "sqrt", "sqr", "abs", "neg", "relu", "tanh", "sigmoid", "sin", "cos"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_gradients(op):
    x = np.array([[0.3, 1.7, 2.2], [0.9, 1.1, 2.9]])  # positive: log/sqrt defined, away from relu/abs kinks
    check(lambda t: getattr(t.t(), op)(), x)
    check(lambda t: getattr(t, op)(),
          -x if op in ("abs", "relu", "neg", "sqr", "exp", "tanh", "sigmoid", "sin", "cos") else x)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
def test_binary_gradients_with_broadcasting(op):
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 2.0, size=(2, 3, 4))
    b = rng.uniform(0.5, 2.0, size=(3, 1))
    check(lambda x, y: getattr(x, op)(y), a, b)
    check(lambda x, y: getattr(x.transpose(0, 2), op)(y.t()), a, rng.uniform(0.5, 2.0, size=(1, 3)))
    check(lambda x: getattr(x, op)(1.5), a)


def test_scalar_on_the_left():
    x = np.array([0.5, 1.5, 2.5])
    check(lambda t: 2.0 - t, x)
    check(lambda t: 1.0 / t, x)
    check(lambda t: 2.0 ** t, x)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_reduction_gradients(op):
    rng = np.random.default_rng(4)
    x = rng.permutation(24).reshape(2, 3, 4).astype(np.float64) / 7.0  # distinct: no ties
    for dims, keep in [(None, False), (1, False), ((0, 2), True), (-1, True)]:
        check(lambda t: getattr(t.permute(2, 0, 1), op)(dims, keepdim=keep), x)


def test_max_ties_go_to_the_first_element_deterministically():
    x = Var([[3.0, 1.0, 3.0], [2.0, 2.0, 0.0]])
    g = x.max(1).sum_all().backward()[x]
    assert g.tolist() == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    g = x.min(None).backward()[x]
    assert g.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]


@given(view_chains(max_ops=5))
@settings(max_examples=30)
def test_gradients_flow_through_any_view_chain(case):
    ops, lay, offs, base = case
    n = max(base.size, 1)
    x = np.linspace(-1.0, 1.0, n)

    def fn(t):
        v = _replay(t, ops)
        return (v * v).sum_all()

    # d/dbase of sum(view^2): each base element gets 2*x times the number of times the view reads it
    counts = np.bincount(offs.ravel(), minlength=n) if offs.size else np.zeros(n)
    v = Var(x[: base.size].reshape(base.shape))
    out = fn(v)
    g = out.backward().get(v)
    want = (2 * x * counts)[: base.size].reshape(base.shape)
    if g is None:
        assert not want.any()
    else:
        np.testing.assert_allclose(g.numpy().reshape(-1), want.reshape(-1), rtol=1e-12)


def _replay(t, ops):
    """Re-apply the recorded op names of a view chain to a tensor."""
    import re

    for op in ops:
        name, args = re.match(r"(\w+)\((.*)\)$", op).groups()
        args = eval(f"({args},)") if args else ()
        if name == "broadcast_as":
            t = t.broadcast_as(args[0])
        elif name == "permute":
            t = t.permute(args[0])
        elif name == "reshape":
            t = t.reshape(args[0])
        elif name == "flip":
            t = t.flip(args[0])
        else:
            t = getattr(t, name)(*args)
    return t


def test_matmul_gradients_any_layout():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((6, 4))
    check(lambda x, y: x.matmul(y.t().flip(1)[:, ::2]), a, b)  # rhs transposed, flipped, stepped
    check(lambda x, y: x[0].t().matmul(y[:3]), a, b)
    check(lambda x, y: x.unsqueeze(0).expand(2, 2, 3, 4).matmul(y.t()), a, b)  # broadcast batch
    check(lambda x: x.matmul(sd.tensor(np.ones(4))), a)


def test_cat_index_select_where_to_dtype_gradients():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((2, 4))
    check(lambda x, y: sd.cat([x, y.flip(0), x[1:]], 0), a, b)
    check(lambda x: x.index_select(sd.tensor([2, 0, 2, -1]), 0), a)
    check(lambda x, y: sd.where(x > 0, x, y[0]), a, b)
    v = Var(a)
    g = (v.to_dtype(sd.f32) * 3).to_dtype(sd.f64).sum_all().backward()[v]
    assert g.dtype is sd.f64 and np.array_equal(g.numpy(), np.full(a.shape, 3.0))
    check(lambda x: x.copy().contiguous() + x.t().contiguous().t(), a)


def test_gradients_do_not_mutate_inputs():
    x = Var([[1.0, 2.0], [3.0, 4.0]])
    before = x.numpy().copy()
    (x.t().exp() * x).sum_all().backward()
    np.testing.assert_array_equal(x.numpy(), before)


def test_graph_releases_intermediates_after_detach_and_del():
    w = Var(np.ones(1 << 20, dtype=np.float32))
    big = w * 2.0  # a 4 MiB intermediate held by the graph
    ref = weakref.ref(big)
    out = big.sum_all()
    del big
    gc.collect()
    assert ref() is not None  # the graph keeps its inputs alive
    out = out.detach()
    gc.collect()
    assert ref() is None


def test_small_mlp_trains():
    sd.manual_seed(0)
    rng = np.random.default_rng(0)
    x = sd.tensor(rng.standard_normal((64, 256)).astype(np.float32))
    target = sd.tensor(rng.standard_normal((64, 256)).astype(np.float32) * 0.1)
    layers = [(Var(rng.standard_normal((256, 256)).astype(np.float32) * 0.05), Var(np.zeros(256, np.float32)))
              for _ in range(3)]
    losses = []
    for _ in range(5):
        h = x
        for i, (w, b) in enumerate(layers):
            h = h.matmul(w.t()).broadcast_add(b)
            if i < 2:
                h = h.relu()
        loss = ((h - target).sqr()).mean()
        grads = loss.backward()
        losses.append(loss.item())
        new = []
        for w, b in layers:
            new.append((Var(w - grads[w] * 0.5), Var(b - grads[b] * 0.5)))
        layers = new
    assert losses[-1] < losses[0] * 0.9, losses


def test_a_bijective_view_passes_its_gradient_back_as_the_inverse_view():
    # transpose, permute, flip, squeeze, unsqueeze, reshape: g itself, seen through the
    # inverse view (no zero gradient written through the view, no copy).
    from strided.ops.grad import view_back

    rng = np.random.default_rng(8)
    x = Var(rng.standard_normal((3, 1, 4)))
    views = {
        "transpose": (lambda t: t.transpose(0, 2), lambda a: a.transpose(2, 1, 0)),
        "permute": (lambda t: t.permute((2, 0, 1)), lambda a: a.transpose(1, 2, 0)),
        "flip": (lambda t: t.flip((0, 2)), lambda a: a[::-1, :, ::-1]),
        "squeeze": (lambda t: t.squeeze(1), lambda a: a.reshape(3, 1, 4)),
        "unsqueeze": (lambda t: t.unsqueeze(0), lambda a: a.reshape(3, 1, 4)),
        "reshape": (lambda t: t.reshape((4, 3)), lambda a: a.reshape(3, 1, 4)),
    }
    for name, (view, back) in views.items():
        y = view(x)
        assert y._op.name == name
        g = sd.tensor(rng.standard_normal(y.shape))
        (got,) = view_back(y, y._op, g)
        assert got._storage is g._storage, name
        np.testing.assert_array_equal(got.numpy(), back(g.numpy()), err_msg=name)


def test_a_transposed_weight_gets_its_gradient_uncopied():
    # y = x @ w.t(): w.t()'s gradient is computed as (g^T x)^T, so undoing the transpose
    # gives w a row-major gradient that is that product's own buffer (no transposed copy);
    # a sum's broadcast ones reach the product's rule as they are.
    rng = np.random.default_rng(9)
    xa, wa = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    x, w = Var(xa), Var(wa)
    wt = w.t()
    y = x @ wt
    s = y.sum_all()
    grads = s.backward()
    gy = np.ones((5, 4))
    np.testing.assert_allclose(grads[w].numpy(), gy.T @ xa, rtol=1e-12)
    np.testing.assert_allclose(grads[x].numpy(), gy @ wa, rtol=1e-12)
    assert grads[w].is_contiguous() and grads[x].is_contiguous()
    assert grads[w]._storage is grads[wt]._storage  # the inverse view of wt's gradient, no copy
    assert grads[wt].t().is_contiguous()
    assert 0 in grads[y].stride  # the sum's gradient stays a broadcast of one value


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_the_roots_seed_is_ones_of_its_shape_and_dtype(dtype):
    d = getattr(sd, dtype)
    x = Var(np.arange(6.0).reshape(2, 3), dtype=d)
    y = (x * 2).sum(0)  # a root that is not a scalar: seeded with ones of its own shape
    grads = y.backward()
    assert grads[y].dtype is d and grads[y].shape == (3,) and grads[y].layout.is_contiguous()
    assert grads[y].numpy().astype(np.float64).tolist() == [1.0, 1.0, 1.0]
    assert grads[x].numpy().astype(np.float64).tolist() == [[2.0] * 3] * 2
    assert not sd.same_buffer(grads[y], y)

"""strided.fuse on CUDA tensors: the CPU's graph, groups and expressions, each group one
generated numba-cuda kernel (``cuda.elementwise.expression_kernel``).

Every case runs the fused function on CUDA tensors and the same function eagerly on them;
the chains run it fused on CPU copies too, the gradients eagerly on the CPU, the
reduction and the product are held to NumPy (whose oracle compiles no CPU kernel).
Against eager on the device the answer is the same bits everywhere (the same device
functions, and on a GPU ``cuda.scalar.keep`` stops FMA contraction across ops; NaN
payloads aside, which a GPU's arithmetic does not keep).
Against the CPU it is the same bits where the chain is IEEE arithmetic, casts and half
rounding; where it calls a libm-sized function (exp, tanh, sigmoid, log1p) or sums (the
reductions and products are the device's eager ones), within a few ulps: the simulator runs
the op table's Python on NumPy scalars (NumPy's tanh, no FMA in the exp polynomial the CPU
contracts) and a GPU runs libdevice.  Each distinct chain is a kernel (a compile on a GPU,
launches the simulator runs as Python threads), so the chains are few and small.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numba import config

import strided as sd
from strided.fusion import Unfusable
from strided.kernels.optable import OPS

from strategies import CHAIN_STEPS, chain_program

SIMULATED = bool(config.ENABLE_CUDASIM)
BF16 = np.dtype(sd.bf16.np)


def _values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-20, 21, shape).astype(dtype)
    v = rng.standard_normal(shape) * 3
    return v.astype(np.float32).astype(dtype) if dtype.itemsize == 2 else v.astype(dtype)


def _on(h, device):
    t = sd.from_numpy(np.ascontiguousarray(h))
    return t if device == "cpu" else t.to_device(device)


def _host(t) -> np.ndarray:
    return np.ascontiguousarray(t.numpy())


def _same(got, want):
    """Equal dtype, shape and bits (a NaN's payload only in the simulator)."""
    assert got.shape == want.shape and got.dtype is want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    g, w = _host(got), _host(want)
    if not SIMULATED and (g.dtype.kind == "f" or g.dtype == BF16):
        nan = np.isnan(g.astype(np.float64))
        assert (nan == np.isnan(w.astype(np.float64))).all()
        g, w = np.where(nan, 0, g).astype(g.dtype), np.where(nan, 0, w).astype(w.dtype)
    assert g.tobytes() == w.tobytes(), (g, w)


def _close(got, want, rtol):
    assert got.shape == want.shape and got.dtype is want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    g, w = _host(got).astype(np.float64), _host(want).astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True)


def _outs(r):
    return r if isinstance(r, tuple) else (r,)


# -- every dtype kind, over sliced, transposed, flipped and broadcast operands -------------------

def _floats(a, b, c):
    x = ((a * b.t() - c.flip(0)) * 0.5).relu().maximum(a) / (c.abs() + 1.0)
    return x - sd.where(a > b.t(), a, 2.0 - c), (x * a).to_dtype(sd.bf16) + c


def _ints(a, b, c):
    return ((a * b.t() - c.flip(0)) // 3).maximum(a) ^ (a > c)


def _bools(a, b, c):
    x = sd.where(a & b.t(), c.flip(0), ~a) | (a ^ c)
    return x, x.to_dtype(sd.f32) * 2 - a.to_dtype(sd.f32)


CHAINS = {"float32": _floats, "float64": _floats, "float16": _floats, "bfloat16": _floats, "int32": _ints,
          "int16": _ints, "bool": _bools}


def _operands(dtype, device):
    """a (5, 7): every other column of a slice; b (7, 5), read as b.t(); c (7,), read flipped
    and broadcast against (5, 7)."""
    rng = np.random.default_rng(7)
    big, bt, c = _values(rng, dtype, (6, 15)), _values(rng, dtype, (7, 5)), _values(rng, dtype, (7,))
    return _on(big, device)[1:, ::2][:, :7], _on(bt, device), _on(c, device)


@pytest.mark.parametrize("name", list(CHAINS))
def test_a_chain_per_dtype_is_the_cpus_bits_and_eagers(name):
    dtype = BF16 if name == "bfloat16" else np.dtype(name)
    fn = CHAINS[name]
    f = sd.fuse(fn, strict=True)  # one fused function for both devices: its caches key the device
    args = _operands(dtype, "cuda")
    got = _outs(f(*args))
    want_cpu = _outs(f(*_operands(dtype, "cpu")))
    want_eager = _outs(fn(*args))
    assert all(g.device == "cuda:0" for g in got) and all(w.device == "cpu" for w in want_cpu)
    for g, c, e in zip(got, want_cpu, want_eager):
        _same(g, c)
        _same(g, e)
        assert g.stride == c.stride  # the output's order is eager's on both devices
    assert "cuda_fused" in f.explain(*args)
    again = _outs(f(*args))  # the kept program (one lookup, the buffer checks, the kernel)
    for g, a in zip(got, again):
        _same(a, g)


# -- drawn chains, libm functions included -----------------------------------------------------

LIBM = {"exp", "tanh", "sigmoid", "log1p"}
VIEWS = ["plain", "t", "flip", "slice", "bcast"]


def _draw(seed):
    """A chain of 1 to 5 steps on 1 to 3 operands, each read through a drawn view of its own buffer."""
    rng = np.random.default_rng(seed)
    shape = [(4, 6), (3, 2, 5), (7,)][seed % 3]
    dtype = [np.float32, np.float64, np.float16][seed % 3 if seed < 3 else int(rng.integers(0, 3))]
    ins = []
    for _ in range(int(rng.integers(1, 4))):
        view = VIEWS[int(rng.integers(0, len(VIEWS)))]
        base = {"t": shape[::-1], "slice": (2 * shape[0], *shape[1:]), "bcast": (1, *shape[1:])}.get(view, shape)
        ins.append((view, _values(rng, dtype, base)))
    steps = [CHAIN_STEPS[int(rng.integers(0, len(CHAIN_STEPS)))] for _ in range(rng.integers(1, 6))]
    picks = [int(r) for r in rng.integers(0, 10 ** 6, len(steps))]
    return shape, ins, list(zip(steps, picks))


def _view(t, view, shape):
    if view == "t":
        return t.permute(tuple(range(t.ndim))[::-1])
    if view == "flip":
        return t.flip(0)
    if view == "slice":
        return t[::2]
    if view == "bcast":
        return t.expand(shape)
    return t


@pytest.mark.parametrize("seed", range(6))
def test_drawn_chains_over_drawn_views(seed):
    shape, ins, steps = _draw(seed)
    fn = chain_program(steps)
    f = sd.fuse(fn, strict=True)
    on = {d: [_view(_on(h, d), v, shape) for v, h in ins] for d in ("cpu", "cuda")}
    with np.errstate(all="ignore"):
        got, want_cpu, want_eager = f(*on["cuda"]), f(*on["cpu"]), fn(*on["cuda"])
    _same(got, want_eager)
    if any(op in LIBM for op, _ in steps):
        _close(got, want_cpu, 4e-3 if got.dtype.np.itemsize == 2 else 1e-5 if got.dtype is sd.f32 else 1e-13)
    else:
        _same(got, want_cpu)


# -- groups: a reduction, a product ------------------------------------------------------------

def test_softmax_along_the_last_dim_runs_two_kernels_around_the_devices_reductions():
    h = _values(np.random.default_rng(1), np.float32, (9, 6))
    f = sd.fuse(lambda x: x.softmax(-1), strict=True)
    x = _on(h, "cuda").t()
    got = f(x)
    assert f.explain(x).count("cuda_fused") == 2 and "(eager reduction)" in f.explain(x)
    _same(got, x.softmax(-1))  # the device's own reductions, the same device functions
    e = np.exp(h.T - h.T.max(-1, keepdims=True))  # NumPy, not the CPU's kernels: nothing to compile
    np.testing.assert_allclose(_host(got), e / e.sum(-1, keepdims=True), rtol=1e-6, atol=1e-7)


def test_a_product_with_its_epilogue_fused_after_it():
    rng = np.random.default_rng(2)
    hx, hw, hb = (_values(rng, np.float32, s) for s in ((4, 3), (5, 3), (5,)))

    def layer(x, w, b):
        return (x @ w.t() + b).relu() * 0.5

    f = sd.fuse(layer, strict=True)
    args = [_on(h, "cuda") for h in (hx, hw, hb)]
    got = f(*args)
    assert "matmul" in f.explain(*args) and f.explain(*args).count("cuda_fused") == 1
    _same(got, layer(*args))
    want = np.maximum(hx.astype(np.float64) @ hw.T + hb, 0) * 0.5  # the device's gemm sums in its own order
    np.testing.assert_allclose(_host(got), want, rtol=1e-5, atol=1e-6)


# -- autograd --------------------------------------------------------------------------------

def test_gradients_through_a_fused_call_are_the_cpus():
    rng = np.random.default_rng(3)
    hx, hw = _values(rng, np.float64, (4, 5)), _values(rng, np.float64, (5,))

    def loss(x, w):
        return ((x * w + x.flip(0)).relu() * x - w).sum()

    grads = {}  # the CPU's are eager's (test_fuse holds fused gradients to them bit for bit)
    runs = (("fused", "cuda", sd.fuse(loss, strict=True)), ("cpu", "cpu", loss), ("eager", "cuda", loss))
    for key, device, fn in runs:
        x, w = sd.Var(_on(hx, device)), sd.Var(_on(hw, device))
        root = fn(x, w)
        g = root.backward()
        grads[key] = (root, g[x], g[w])
    (rc, gxc, gwc), (rp, gxp, gwp), (re, gxe, gwe) = grads["fused"], grads["cpu"], grads["eager"]
    assert gxc.device == "cuda:0" and gwc.device == "cuda:0"
    for got, eager in ((gxc, gxe), (gwc, gwe), (rc, re)):
        _same(got, eager)
    _same(gxc, gxp)  # products, relu's mask and the root's gradient broadcast: exact
    _close(gwc, gwp, 1e-13)  # w's is summed over the broadcast dim, and the root: in the device's order
    _close(rc, rp, 1e-13)


# -- what is not fused ------------------------------------------------------------------------

def test_an_op_cuda_refuses_runs_eagerly_or_is_unfusable_naming_it(monkeypatch):
    monkeypatch.setitem(OPS["tanh"].not_on, "cuda", {"": "refused by this test"})
    x = _on(np.linspace(-2, 2, 6, dtype=np.float32), "cuda")

    def fn(x):
        return (x * 2).tanh() + 1

    with pytest.raises(Unfusable, match="fuse: tanh on float32 is not computed on cuda:0 .refused by this test."):
        sd.fuse(fn, strict=True)(x)
    # without strict: one warning, then the eager chain, whose tanh refuses by name
    with pytest.warns(UserWarning, match="runs eagerly: fuse: tanh"), \
            pytest.raises(sd.StridedError, match="tanh: not on CUDA yet .refused by this test."):
        sd.fuse(fn)(x)
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(sd.fuse(fn)(x), fn(x))  # the op back: fused, no warning


def test_mixed_devices_and_host_data_get_the_eager_ops_errors():
    cpu = _on(np.ones((2, 3), np.float32), "cpu")
    gpu = _on(np.ones((2, 3), np.float32), "cuda")
    captured = cpu * 3
    cases = [(lambda a, b: a + b, (cpu, gpu)), (lambda a: a * captured, (gpu,)),
             (lambda a: a * np.float32(2), (gpu,)), (lambda a: a - np.ones(3, np.float32), (gpu,))]
    for fn, args in cases:
        with pytest.raises(sd.StridedError) as eager:
            fn(*args)
        for strict in (True, False):
            with pytest.raises(type(eager.value), match="^" + __import__("re").escape(str(eager.value)) + "$"):
                sd.fuse(fn, strict=strict)(*args)

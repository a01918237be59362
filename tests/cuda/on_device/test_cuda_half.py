"""f16 and bf16 on CUDA against NumPy and ml_dtypes (the CPU backend's oracles, whose bits its
own tests hold it to: NumPy's f32 math rounded once to the half type): stored
on the device (bf16 as its bits), moved and converted bit for bit, computed in f32 registers
and rounded once as on the CPU, reduced in f32, multiplied with f32 accumulation.

Correctly rounded ops give the CPU's bits exactly; a NaN result is only checked to be a NaN
(a GPU's arithmetic gives the canonical NaN where the CPU's keeps an operand's payload).  The
transcendental functions are each library's own f32 approximation, so they are checked to a
unit of the half type's last place.  Layouts are drawn small, with negative strides and
broadcasts, one dtype and op per example.  The oracle is NumPy rather than the CPU backend so
that these tests compile no CPU kernel (a fresh numba cache would pay for each op and dtype).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.cuda.device import Bf16Array
from strided.cuda.storage import CudaStorage
from strided.ops import binary, unary

from strategies import bits, layouts_of_shape, np_view, random_buffer, shapes

BF16 = np.dtype(ml_dtypes.bfloat16)
HALVES = [np.dtype(np.float16), BF16]
SMALL = settings(max_examples=20, deadline=None)
ULP = {np.dtype(np.float16): 2.0 ** -10, BF16: 2.0 ** -7}


def on_cuda(host: np.ndarray) -> sd.Tensor:
    return sd.from_numpy(host).to_device("cuda")


def pair(host: np.ndarray, lay):
    """The view ``lay`` of ``host`` as a NumPy view and on the device."""
    return np_view(host, lay), sd.as_strided(on_cuda(host), lay.shape, lay.stride, lay.offset)


def f32(fn, *xs):
    """``fn`` computed in f32 on the half operands' values (NumPy scalars and arrays alike)."""
    return fn(*[np.asarray(x).astype(np.float32) if np.asarray(x).dtype.itemsize == 2 else x for x in xs])


def same_bits(got: sd.Tensor, want: np.ndarray):
    """The oracle's bits, a NaN only where it has one."""
    want = np.asarray(want)
    assert got.device == "cuda:0" and got.dtype.np == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    g, w = got.numpy(), want
    if w.dtype.kind == "f" or w.dtype == BF16:
        nan = np.isnan(w.astype(np.float32))
        assert (np.isnan(g.astype(np.float32)) == nan).all()
        g, w = g[~nan], w[~nan]
    np.testing.assert_array_equal(bits(g), bits(w))


def within_ulp(got: sd.Tensor, want: np.ndarray):
    want = np.asarray(want)
    assert got.dtype.np == want.dtype and got.shape == want.shape
    g, w = got.numpy().astype(np.float32), want.astype(np.float32)
    np.testing.assert_allclose(g, w, rtol=2 * ULP[want.dtype], atol=1e-6, equal_nan=True)


def test_bf16_lives_on_the_device_as_its_bits():
    host = random_buffer(np.random.default_rng(3), BF16, 301)  # every kind of pattern, NaN payloads too
    g = on_cuda(host)
    assert isinstance(g.storage, CudaStorage) and isinstance(g.storage.data, Bf16Array)
    assert g.dtype is sd.bf16 and g.storage.data.dtype == BF16 and len(g.storage.data) == 301
    np.testing.assert_array_equal(bits(g.numpy()), bits(host))
    np.testing.assert_array_equal(bits(g[::-3].contiguous().cpu().numpy()), bits(host[::-3]))
    assert "device='cuda:0'" in repr(g[:3]) and "bf16" in repr(g[:3])
    z = sd.zeros((2, 3), dtype=sd.bf16, device="cuda")
    assert z.numpy().tolist() == [[0.0] * 3] * 2


@SMALL
@given(st.data(), st.sampled_from(HALVES), st.sampled_from(["f16", "bf16", "f32", "f64", "i64", "u8", "bool"]),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_conversions_from_and_to_halves_are_the_cpus_bits(data, half, other, outward, seed):
    shape = data.draw(shapes(max_rank=3, max_size=9, max_numel=200))
    lay, n = data.draw(layouts_of_shape(shape))
    rng = np.random.default_rng(seed)
    other = getattr(sd, other)
    src_dtype = half if outward else other.np
    if outward and other.kind in "iub":
        host = rng.integers(-3 if other.kind == "i" else 0, 100, n).astype(half)  # in range: a cast C defines
    elif outward or other.kind == "f":
        host = random_buffer(rng, src_dtype, n)  # every bit pattern: NaN payloads, infinities, subnormals
    else:
        host = rng.integers(0, 100, n).astype(src_dtype)
    view, dev = pair(host, lay)
    target = other if outward else sd.dtype.from_numpy_dtype(half)
    with np.errstate(all="ignore"):
        same_bits(dev.to_dtype(target), view.astype(target.np))


UNARY_NP = {"neg": np.negative, "abs": np.abs, "sqr": np.square, "sqrt": np.sqrt, "recip": np.reciprocal,
            "relu": lambda x: np.where(x < 0, np.float32(0), x), "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
            "trunc": np.trunc, "round": np.rint, "exp": np.exp, "log": np.log, "tanh": np.tanh,
            "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin, "expm1": np.expm1}
BINARY_NP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
             "minimum": np.minimum, "lt": np.less, "eq": np.equal, "copysign": np.copysign,
             "floor_divide": np.floor_divide, "remainder": np.remainder, "pow": np.power, "atan2": np.arctan2,
             "logaddexp": np.logaddexp}
_EXACT_UNARY = ["neg", "abs", "sqr", "sqrt", "recip", "relu", "sign", "floor", "ceil", "trunc", "round"]
_APPROX_UNARY = ["exp", "log", "tanh", "sigmoid", "sin", "expm1"]
_EXACT_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "lt", "eq", "copysign", "floor_divide",
                 "remainder"]


@SMALL
@given(st.data(), st.sampled_from(HALVES), st.sampled_from(_EXACT_UNARY + _APPROX_UNARY), st.integers(0, 2**32 - 1))
def test_unary_ops_on_halves_are_the_cpus(data, half, op, seed):
    shape = data.draw(shapes(max_rank=3, max_size=9, max_numel=200))
    lay, n = data.draw(layouts_of_shape(shape))
    rng = np.random.default_rng(seed)
    host = (rng.standard_normal(n) * 6).astype(half)
    host[: n // 8] = np.asarray(0.5, half) * rng.integers(-6, 7, n // 8)  # ties for round, zeros of both signs
    if op in ("sqrt", "log"):
        host = np.abs(host) + np.asarray(0.5, half)  # the simulator's Python math raises outside the domain
    view, dev = pair(host, lay)
    with np.errstate(all="ignore"):
        (same_bits if op in _EXACT_UNARY else within_ulp)(unary(op, dev), f32(UNARY_NP[op], view).astype(half))


@SMALL
@given(st.data(), st.sampled_from(HALVES), st.sampled_from(_EXACT_BINARY + ["pow", "atan2", "logaddexp"]),
       st.sampled_from(["tensor", "scalar", "f32", "other half"]), st.integers(0, 2**32 - 1))
def test_binary_ops_on_halves_and_mixed_operands_are_the_cpus(data, half, op, b_kind, seed):
    shape = data.draw(shapes(max_rank=3, max_size=9, max_numel=200))
    (la, na), (lb, nb) = data.draw(layouts_of_shape(shape)), data.draw(layouts_of_shape(shape))
    rng = np.random.default_rng(seed)
    b_dtype = {"f32": np.dtype(np.float32), "other half": HALVES[half == HALVES[0]]}.get(b_kind, half)
    ha = (rng.integers(-12, 13, na) * 0.75).astype(half)
    hb = (rng.integers(1, 13, nb) * rng.choice([-0.5, 0.5], nb)).astype(b_dtype)  # no zero divisor
    if op == "pow":
        ha = np.abs(ha) + np.asarray(0.25, half)
    va, da = pair(ha, la)
    vb, db = pair(hb, lb)
    if b_kind == "scalar":  # an f32 scalar (not representable in either half type), as the CPU takes it
        vb, db = np.float32(0.3), 0.3
    check = same_bits if op in _EXACT_BINARY else within_ulp
    with np.errstate(all="ignore"):
        got = binary(op, da, db)
        want = f32(BINARY_NP[op], va, vb)
    if b_kind in ("f32", "other half"):  # computed and stored in f32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if check is same_bits else 1e-2)
    else:
        check(got, want if want.dtype == np.bool_ else want.astype(half))


@SMALL
@given(st.data(), st.sampled_from(HALVES), st.sampled_from(["sum", "mean", "max", "min", "prod", "argmax", "argmin"]),
       st.integers(0, 2**32 - 1))
def test_reductions_of_halves_accumulate_in_f32_as_the_cpu(data, half, op, seed):
    shape = data.draw(shapes(min_rank=1, max_rank=3, max_size=9, max_numel=200))
    lay, n = data.draw(layouts_of_shape(shape))
    rng = np.random.default_rng(seed)
    # small integers: every partial sum is exact in f32, so any order of adding gives the CPU's bits
    host = rng.integers(-4, 5, n).astype(half) if op != "prod" else rng.choice([-1.0, 1.0, 2.0, 0.5], n).astype(half)
    view, dev = pair(host, lay)
    dim = data.draw(st.integers(0, len(shape) - 1))
    if op in ("max", "min", "argmax", "argmin") and shape[dim] == 0:
        return
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod, "argmax": np.argmax,
          "argmin": np.argmin}[op]
    with np.errstate(all="ignore"):
        want = fn(view.astype(np.float32), axis=dim)
        same_bits(getattr(sd, op)(dev, axis=dim), want if op.startswith("arg") else np.asarray(want).astype(half))
        if op in ("sum", "max") and view.size:
            same_bits(getattr(sd, op)(dev), np.asarray(fn(view.astype(np.float32))).astype(half))


@pytest.mark.parametrize("half", HALVES, ids=str)
@pytest.mark.parametrize("layout", ["row", "transposed", "batched-broadcast"])
def test_matmul_of_halves_accumulates_in_f32_and_rounds_once(half, layout):
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (2, 5, 7)).astype(half)
    b = rng.integers(-3, 4, (7, 6)).astype(half)
    da, db = on_cuda(a), on_cuda(b)
    if layout == "transposed":  # read in place as a transposed operand
        a, da = a[0], on_cuda(np.ascontiguousarray(a[0].T)).t()
    if layout == "batched-broadcast":
        b, db = np.broadcast_to(b, (3, 1, 7, 6)), db.expand(3, 1, 7, 6)
        a, da = a[None], da.unsqueeze(0)
    same_bits(da @ db, (a.astype(np.float32) @ b.astype(np.float32)).astype(half))  # exact sums: the bits
    # inexact products: one rounding of the f32 sum
    x = (rng.standard_normal((4, 7)) / 3).astype(half)
    y = (rng.standard_normal((7, 3)) / 3).astype(half)
    within_ulp(on_cuda(x) @ on_cuda(y), (x.astype(np.float32) @ y.astype(np.float32)).astype(half))

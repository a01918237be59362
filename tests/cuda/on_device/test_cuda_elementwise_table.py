"""The CUDA elementwise table against the CPU's: every CPU op is on CUDA or named with its
reason, and every (op, dtype) the CPU computes CUDA computes too, with the CPU's answer,
or refuses by name.  The op layer widens int16/uint16 to 32 bits on both devices."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config

import strided as sd
from strided.cuda import elementwise as ew
from strided.kernels.common import BF16, COMPUTE, DTYPES
from strided.kernels.elementwise import BINARY_OPS, UNARY_OPS
from strided.ops import binary, unary

from strategies import bits

# The dtypes each sweep takes: one of each kind, the half types, the narrowest and widest
# ints and both complex types (the other dtypes' ops are the same expressions, and the
# simulator costs a tenth of a second a launch); on a GPU, where each kernel compiles for a
# third of a second, fewer.
_SIM = ("float32", "float16", "bfloat16", "int8", "uint64", "bool", "complex128")
_GPU = ("float32", "float16", "int8", "uint64", "bool", "complex64")
SWEEP = [BF16 if n == "bfloat16" else np.dtype(n) for n in (_SIM if config.ENABLE_CUDASIM else _GPU)]
_APPROX = {"exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "acos", "acosh", "asin", "asinh", "atan", "atanh",
           "cosh", "sinh", "tan", "expm1", "log1p", "log2", "log10", "pow", "atan2", "hypot", "logaddexp", "recip", "div"}
_UNIT = {"acos", "asin", "atanh"}  # inside (-1, 1)


def test_the_cuda_table_covers_the_cpus_or_names_each_exclusion():
    for table, cpu in ((ew.UNARY, UNARY_OPS), (ew.BINARY, BINARY_OPS)):
        missing = set(cpu) - set(table) - set(ew.NOT_ON_CUDA)
        assert not missing, f"CPU ops with neither a CUDA kernel nor a reason: {sorted(missing)}"
        assert not set(table) - set(cpu), "a CUDA op the CPU lacks"
    assert all(isinstance(why, str) and why for why in {**ew.NOT_ON_CUDA, **ew.COMPLEX_NOT_ON_CUDA}.values())
    assert set(ew.COMPLEX_NOT_ON_CUDA) <= {op for op, spec in {**UNARY_OPS, **BINARY_OPS}.items()
                                          if "complex64" in spec.dtypes}


def _values(op: str, dtype: np.dtype, n: int, rng) -> np.ndarray:
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" or op in ("pow", "bitwise_left_shift", "bitwise_right_shift") else -5
        return rng.integers(lo, 4 if op == "pow" else 9, n).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(0.2, 0.9, n) + 1j * rng.uniform(0.2, 0.9, n)).astype(dtype)
    lo, hi = (-0.9, 0.9) if op in _UNIT else (1.1, 4.0) if op == "acosh" else (0.1, 3.0) if op in (
        "log", "log1p", "log2", "log10", "sqrt", "pow") else (-3.0, 3.0)
    return rng.uniform(lo, hi, n).astype(dtype)


def _sig(x):
    return 1 / (1 + np.exp(-x))


# NumPy's functions, the CPU's oracle (the CPU's tests hold it to them): the sweep compiles
# no CPU kernel, which a fresh numba cache would pay for op by op.
NP = {"neg": np.negative, "abs": np.absolute, "sqr": np.square, "sigmoid": _sig, "not": np.logical_not,
      "recip": np.reciprocal, "relu": lambda x: np.where(x < 0, x.dtype.type(0), x), "bitwise_invert": np.invert,
      "conj": np.conjugate, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
      "atan": np.arctan, "atanh": np.arctanh, "round": np.rint, "sub": np.subtract, "mul": np.multiply,
      "div": np.true_divide, "pow": np.power, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
      "gt": np.greater, "ge": np.greater_equal, "atan2": np.arctan2, "bitwise_left_shift": np.left_shift,
      "bitwise_right_shift": np.right_shift}


def _want(op: str, hosts: list, out_dtype: np.dtype) -> np.ndarray:
    fn = NP.get(op) or getattr(np, op)
    if hosts[0].dtype.itemsize == 2 and hosts[0].dtype.kind not in "iu":  # halves compute in f32, round once
        return fn(*[h.astype(np.float32) for h in hosts]).astype(out_dtype)
    return fn(*hosts).astype(out_dtype)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint64) if a.itemsize == 16 else bits(a)


def _check(got: sd.Tensor, want: np.ndarray, op: str):
    assert got.device == "cuda:0"
    g = got.numpy()
    # a complex product's rounding depends on how its parts are summed (an FMA, or not)
    if (op in _APPROX and g.dtype.kind in "fcV") or (g.dtype.kind == "c" and op in ("mul", "sqr")):
        tol = {2: 2e-2, 4: 2e-6, 8: 1e-13}[g.dtype.itemsize if g.dtype.kind != "c" else g.dtype.itemsize // 2]
        kind = np.complex128 if g.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(g.astype(kind), want.astype(kind), rtol=tol, atol=tol, err_msg=op)
    else:
        np.testing.assert_array_equal(_bits(g), _bits(want), err_msg=f"{op} on {got.dtype}")


def _sweep(table: dict, cpu: dict, arity: int):
    rng = np.random.default_rng(17)
    done = 0
    for op in sorted(table):
        for dtype in SWEEP:
            if COMPUTE[dtype] not in cpu[op].dtypes:
                continue
            hosts = [_values(op, dtype, 12, rng).reshape(3, 4) for _ in range(arity)]
            if op in ("floor_divide", "remainder") and dtype.kind in "iuf":
                hosts[1][hosts[1] == 0] = 3
            # walked backwards, the first along its rows and the second along its columns (the
            # result is row-major, so it comes back without a transposing copy)
            devs = [sd.from_numpy(np.ascontiguousarray(hosts[0][::-1])).to_device("cuda")[::-1]]
            if arity == 2:
                devs.append(sd.from_numpy(np.ascontiguousarray(hosts[1][:, ::-1])).to_device("cuda")[:, ::-1])
            f = (lambda *t: unary(op, *t)) if arity == 1 else (lambda *t: binary(op, *t))
            if dtype.kind == "c" and op in ew.COMPLEX_NOT_ON_CUDA:
                with pytest.raises(sd.DTypeError, match=f"{op}: a complex"):
                    f(*devs)
                continue
            with np.errstate(all="ignore"):
                got = f(*devs)
                _check(got, _want(op, hosts, got.dtype.np), op)
            done += 1
    print(f"{done} (op, dtype) pairs")
    return done


def test_every_unary_op_and_dtype_the_cpu_computes_gives_its_answer():
    assert _sweep(ew.UNARY, UNARY_OPS, 1) > (120 if config.ENABLE_CUDASIM else 80)


def test_every_binary_op_and_dtype_the_cpu_computes_gives_its_answer():
    assert _sweep(ew.BINARY, BINARY_OPS, 2) > (90 if config.ENABLE_CUDASIM else 60)


def test_the_widened_ints_compute_in_32_bits_and_narrow_back_as_on_the_cpu():
    # NumPy's answers, which the CPU gives (its own tests): the op layer widens to 32 bits on both
    for dtype in (np.int16, np.uint16):
        h = np.array([[30000, 7, 1], [2, 3, 32767]], dtype)
        g = sd.from_numpy(h).to_device("cuda")
        for f in (lambda t: t + t, lambda t: t * 3, lambda t: t @ t.T if isinstance(t, np.ndarray) else t @ t.t(),
                  lambda t: ~t, lambda t: t // 2, lambda t: t.max(0), lambda t: t.argmax(1)):
            want, got = f(h), f(g)
            assert got.dtype.np == want.dtype and np.array_equal(got.numpy(), want), (dtype, got.dtype, want.dtype)
        assert sd.sum(g, axis=1).numpy().tolist() == h.sum(1).tolist()  # signed in int64, unsigned in uint64


def test_nextafter_steps_the_bits_as_numpy():
    x = np.array([0.0, -0.0, 1.0, -1.0, 1e-45, np.inf, -np.inf, np.nan, 3.0, 2.0], np.float32)
    y = np.array([1.0, -1.0, 2.0, 0.0, 0.0, 0.0, np.inf, 1.0, 3.0, np.nan], np.float32)
    for dtype in (np.float32, np.float64):
        got = sd.nextafter(sd.from_numpy(x.astype(dtype)).to_device("cuda"), sd.from_numpy(y.astype(dtype)).to_device("cuda"))
        np.testing.assert_array_equal(bits(got.numpy()[[0, 1, 2, 3, 4, 5, 6, 8]]),
                                      bits(np.nextafter(x.astype(dtype), y.astype(dtype))[[0, 1, 2, 3, 4, 5, 6, 8]]))
        assert np.isnan(got.numpy()[[7, 9]]).all()


def test_what_cuda_does_not_compute_is_refused_by_name():
    z = sd.from_numpy(np.ones(4, np.complex64)).to_device("cuda")
    with pytest.raises(sd.DTypeError, match="div: a complex64 a is not computed on CUDA .*Smith"):
        z / z
    out = sd.from_numpy(np.zeros(4, np.int16)).to_device("cuda")
    with pytest.raises(sd.DTypeError, match="add: src|add: a has dtype int16"):
        ew.binary("add", out.storage.data, out.layout, out.storage.data, out.layout, out.storage.data, out.layout)
    assert DTYPES[np.dtype(np.int16)] == "int16"

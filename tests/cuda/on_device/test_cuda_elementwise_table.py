"""The CUDA elementwise ops against the CPU's: CUDA compiles the op table's definitions
(``cuda.scalar``), so every (op, dtype) the CPU computes CUDA computes too, with the CPU's
answer, or refuses by name with the reason ``cuda.scalar.refusal`` gives.  The op layer
widens int16/uint16 to 32 bits on both devices."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config

import strided as sd
from strided.cuda import elementwise as ew
from strided.cuda import scalar as cs
from strided.kernels import scalar as S
from strided.kernels.common import BF16, COMPUTE, DTYPES
from strided.kernels.elementwise import BINARY_OPS, UNARY_OPS
from strided.kernels.optable import OPS, Entry
from strided.ops import binary, unary

from strategies import bits

# The dtypes each sweep takes: one of each kind, the half types, the narrowest and widest
# ints and both complex types (the other dtypes' ops are the same definitions, and the
# simulator costs a tenth of a second a launch); on a GPU, where each kernel compiles for a
# third of a second, fewer.
_SIM = ("float32", "float16", "bfloat16", "int8", "uint64", "bool", "complex128")
_GPU = ("float32", "float16", "int8", "uint64", "bool", "complex64")
SWEEP = [BF16 if n == "bfloat16" else np.dtype(n) for n in (_SIM if config.ENABLE_CUDASIM else _GPU)]
_APPROX = {"exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "acos", "acosh", "asin", "asinh", "atan", "atanh",
           "cosh", "sinh", "tan", "expm1", "log1p", "log2", "log10", "pow", "atan2", "hypot", "logaddexp", "recip",
           "div"}
_UNIT = {"acos", "asin", "atanh"}  # inside (-1, 1)


def test_every_cpu_op_and_dtype_compiles_for_cuda_or_is_refused_with_its_reason():
    # every CPU primitive has a CUDA binding or a reason; every (op, dtype) of the table a
    # device function (none is refused now: a refusal here is a regression, and its reason
    # says which primitive or override made it)
    assert set(S.PRIMITIVES) == set(cs.PRIMITIVES) | set(cs.MISSING) and not set(cs.PRIMITIVES) & set(cs.MISSING)
    assert all(isinstance(why, str) and why for why in cs.MISSING.values())
    assert cs.refusals() == {}
    for name, e in OPS.items():
        for d in e.dtypes:
            assert callable(cs.device(e, d)), (name, d)


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
    # a complex product's rounding depends on how its parts are summed (an FMA, or not);
    # sign's z / |z| divides a complex by a real, which numba does as a complex quotient and
    # the simulator's numpy scalars part by part, an ulp apart
    if (op in _APPROX and g.dtype.kind in "fcV") or (g.dtype.kind == "c" and op in ("mul", "sqr", "sign")):
        tol = {2: 2e-2, 4: 2e-6, 8: 1e-13}[g.dtype.itemsize if g.dtype.kind != "c" else g.dtype.itemsize // 2]
        kind = np.complex128 if g.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(g.astype(kind), want.astype(kind), rtol=tol, atol=tol, err_msg=op)
    else:
        np.testing.assert_array_equal(_bits(g), _bits(want), err_msg=f"{op} on {got.dtype}")


def _sweep(cpu: dict, arity: int):
    rng = np.random.default_rng(17)
    done = 0
    for op in sorted(cpu):
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
            why = cs.refusal(OPS[op], COMPUTE[dtype])
            if why is not None:
                with pytest.raises(sd.DTypeError, match=f"{op}: a {DTYPES[dtype]} .* is not computed on CUDA"):
                    f(*devs)
                continue
            with np.errstate(all="ignore"):
                got = f(*devs)
                _check(got, _want(op, hosts, got.dtype.np), op)
            done += 1
    print(f"{done} (op, dtype) pairs")
    return done


def test_every_unary_op_and_dtype_the_cpu_computes_gives_its_answer():
    assert _sweep(UNARY_OPS, 1) > (120 if config.ENABLE_CUDASIM else 80)


def test_every_binary_op_and_dtype_the_cpu_computes_gives_its_answer():
    assert _sweep(BINARY_OPS, 2) > (90 if config.ENABLE_CUDASIM else 60)


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
        got = sd.nextafter(sd.from_numpy(x.astype(dtype)).to_device("cuda"),
                           sd.from_numpy(y.astype(dtype)).to_device("cuda"))
        np.testing.assert_array_equal(bits(got.numpy()[[0, 1, 2, 3, 4, 5, 6, 8]]),
                                      bits(np.nextafter(x.astype(dtype), y.astype(dtype))[[0, 1, 2, 3, 4, 5, 6, 8]]))
        assert np.isnan(got.numpy()[[7, 9]]).all()


def test_complex_quotients_are_smiths_as_the_cpus():
    # div_complex is NumPy's loop in plain arithmetic: the simulator runs it as the CPU
    # does (its bits, signed zeros and infinities included); on a GPU, NVVM may contract
    # a product and a sum into one FMA (cuda.scalar's docstring), so within an ulp
    a = np.array([1 + 2j, -3.5 + 0j, 0j, 1e300 + 1e300j, np.inf + 1j, 2 - 1j, -0.0 + 5j, 1j], np.complex128)
    b = np.array([3 - 4j, 0j, 2 + 0j, 1e-300 + 2e-300j, 1 + 1j, 0.0 - 0.0j, 3e200 - 1e-200j, -0.0 + 0j], np.complex128)
    for dtype in (np.complex64, np.complex128):
        x, y = sd.from_numpy(a.astype(dtype)).to_device("cuda"), sd.from_numpy(b.astype(dtype)).to_device("cuda")
        with np.errstate(all="ignore"):
            got = {"div": (x / y).numpy(), "recip": sd.reciprocal(y).numpy()}
            # the CPU's recip is 1 / z by that quotient, NumPy's 1 / z (np.reciprocal is a loop
            # of its own, which differs in the sign of zeros and at 0)
            want = {"div": a.astype(dtype) / b.astype(dtype), "recip": np.ones(len(b), dtype) / b.astype(dtype)}
        for op in got:
            if config.ENABLE_CUDASIM:
                np.testing.assert_array_equal(_bits(got[op]), _bits(want[op]), err_msg=f"{op} {dtype}")
            else:
                np.testing.assert_allclose(got[op], want[op], rtol=1e-5 if dtype == np.complex64 else 1e-13,
                                           err_msg=f"{op} {dtype}")


def _p_cexpm1_user(x):
    return p_cexpm1(x)  # bound below, as kernels.scalar binds its primitives


p_cexpm1 = S.PRIMITIVES["cexpm1"]


def test_what_cuda_does_not_compute_is_refused_by_name(monkeypatch):
    z = sd.from_numpy(np.full(4, 0.5 + 0.25j, np.complex64)).to_device("cuda")
    # an entry's own not_on["cuda"]: refused for the dtypes it names, by name and reason
    monkeypatch.setitem(OPS["expm1"].not_on, "cuda", {"c": "a reason of the entry's own"})
    with pytest.raises(sd.DTypeError, match=r"expm1: a complex64 src is not computed on CUDA \(a reason of the entry"):
        sd.expm1(z)
    x = sd.from_numpy(np.full(4, 0.5, np.float32)).to_device("cuda")
    assert np.allclose(sd.expm1(x).numpy(), np.expm1(np.float32(0.5)))  # its other dtypes run
    monkeypatch.setitem(OPS["expm1"].not_on, "cuda", {"": "nowhere"})
    with pytest.raises(sd.StridedError, match=r"expm1: not on CUDA yet \(nowhere\); t.cpu\(\) moves"):
        sd.expm1(x)
    # a primitive CUDA lacks refuses every definition that reads it, with the table's reason
    monkeypatch.delitem(cs.PRIMITIVES, "cexpm1")
    monkeypatch.setitem(cs.MISSING, "cexpm1", "no such function here")
    scratch = Entry("scratch_cexpm1", 1, {"": _p_cexpm1_user}, frozenset({"complex64"}), "same")
    assert cs.refusal(scratch, "complex64") == "no such function here"
    with pytest.raises(sd.DTypeError, match=r"scratch_cexpm1: complex64 is not computed on CUDA \(no such function"):
        cs.device(scratch, "complex64")
    unbound = Entry("scratch_unbound", 1, {"": "no_such_primitive"}, frozenset({"float32"}), "same")
    assert "no CUDA binding for the primitive 'no_such_primitive'" in cs.refusal(unbound, "float32")
    out = sd.from_numpy(np.zeros(4, np.int16)).to_device("cuda")
    with pytest.raises(sd.DTypeError, match="add: src|add: a has dtype int16"):
        ew.binary("add", out.storage.data, out.layout, out.storage.data, out.layout, out.storage.data, out.layout)
    assert DTYPES[np.dtype(np.int16)] == "int16"

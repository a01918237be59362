"""The op table (kernels/optable.py): one entry makes an op whole.

A scratch op registered at run time through ``strided.register_op`` is a Tensor method,
a function of the namespace, NumPy's ufunc on tensors (computed by strided's kernel), has
its gradient, and fuses, and computes on a CUDA tensor (in numba-cuda's simulator), with
nothing else edited; the entries the package ships are checked for what every layer
derives from them."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import strided as sd
from strided import numpy_api
from strided.api import array_api
from strided.kernels.optable import FLOAT, OPS, NOT_DIFFERENTIABLE
from strided.ops import REGISTRY

# deg2rad is NumPy's (x * (pi / 180) in the operand's precision), which strided does not
# ship: a scratch op whose oracle is NumPy itself.
_SCRATCH = textwrap.dedent("""
    import math, sys
    import numpy as np
    import strided as sd
    from strided import numpy_api

    K32, K64 = np.float32(math.pi / 180), math.pi / 180
    sd.register_op("deg2rad", 1, {"float32": lambda x: x * K32, "float64": lambda x: x * K64}, sd.kernels.optable.FLOAT,
                   "float", grad=lambda x, y, g: g * K64, api="deg2rad", ufunc="deg2rad")
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64, np.float16):
        a = (rng.standard_normal((7, 5)) * 200).astype(dt)
        t = sd.from_numpy(a)
        want = np.deg2rad(a.T[::-1])
        for got in (t.t()[::-1].deg2rad(), sd.deg2rad(t.t()[::-1]), np.deg2rad(t.t()[::-1])):
            assert isinstance(got, sd.Tensor) and got.numpy().dtype == want.dtype, (type(got), got.dtype)
            assert np.array_equal(got.numpy(), want), dt
    assert numpy_api.UFUNCS["deg2rad"] is sd.deg2rad  # native: strided's kernel, not NumPy on views
    w = sd.Var(np.arange(6.0).reshape(2, 3))
    g = (w.deg2rad() * w).sum_all().backward()[w]
    assert np.allclose(g.numpy(), np.deg2rad(w.numpy()) + w.numpy() * math.pi / 180)
    f = sd.fuse(lambda x: (x.deg2rad() + 1).sin(), strict=True)
    x = sd.from_numpy(rng.standard_normal((16, 8)).astype(np.float32))
    assert np.array_equal(f(x).numpy(), (x.deg2rad() + 1).sin().numpy())
    assert "deg2rad" in f.explain(x)
    print("ok")
""")


def test_an_op_registered_at_run_time_is_a_method_a_function_a_ufunc_with_gradient_and_fuses():
    done = subprocess.run([sys.executable, "-c", _SCRATCH], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


# The same on CUDA, in numba-cuda's simulator: strided.cuda compiles a run-time entry's
# definition for the device (cuda.scalar) on its first use, helpers and primitives it calls
# included, and honours its not_on["cuda"].
_SCRATCH_CUDA = textwrap.dedent("""
    import math
    import numpy as np
    from numba import config
    from numba.extending import register_jitable
    import strided as sd
    from strided.kernels.optable import FLOAT
    from strided.kernels.scalar import PRIMITIVES

    assert config.ENABLE_CUDASIM
    K32, K64 = np.float32(math.pi / 180), math.pi / 180
    sd.register_op("deg2rad", 1, {"float32": lambda x: x * K32, "float64": lambda x: x * K64}, FLOAT, "float",
                   api="deg2rad", ufunc="deg2rad")
    p_sin = PRIMITIVES["sin"]  # a primitive, by its global name as kernels.scalar writes them


    @register_jitable
    def half_sin(x):
        return p_sin(x * 0.5)


    sd.register_op("haversin", 1, lambda x: half_sin(x) * half_sin(x), FLOAT, "float")
    sd.register_op("cpu_only", 1, lambda x: x, FLOAT, "same", not_on={"cuda": {"": "a reason of its own"}})
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64, np.float16):
        a = (rng.standard_normal((7, 5)) * 200).astype(dt)
        t = sd.from_numpy(a).to_device("cuda")
        got = t.t()[::-1].deg2rad()
        assert got.device == "cuda:0" and got.numpy().dtype == dt
        assert np.array_equal(got.numpy(), np.deg2rad(a.T[::-1])), dt
        hav = sd.from_numpy(a).haversin()
        assert np.allclose(t.haversin().numpy(), hav.numpy(), rtol=1e-3 if dt == np.float16 else 1e-6), dt
    try:
        sd.from_numpy(np.ones(3)).to_device("cuda").cpu_only()
        raise SystemExit("cpu_only ran on CUDA")
    except sd.StridedError as e:
        assert "cpu_only: not on CUDA yet (a reason of its own)" in str(e), e
    print("ok")
""")


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda is not installed")
def test_an_op_registered_at_run_time_computes_on_cuda_with_no_other_edit():
    done = subprocess.run([sys.executable, "-c", _SCRATCH_CUDA], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout[-2000:] + done.stderr[-3000:]


def test_registering_an_op_twice_or_with_a_bad_arity_is_refused():
    with pytest.raises(sd.StridedError, match="register_op: op 'exp' is in the table already"):
        sd.register_op("exp", 1, lambda x: x, FLOAT, "float")
    with pytest.raises(sd.StridedError, match="expected arity 1 or 2, got 3"):
        sd.register_op("scratch_three", 3, lambda x: x, FLOAT, "float")
    assert "scratch_three" not in OPS


def test_every_entry_is_declared_with_its_methods_names_and_gradient():
    for name, e in OPS.items():
        spec = REGISTRY[name]
        assert spec.family == ("unary" if e.arity == 1 else "binary") and spec.dtype_rule == e.rule
        for m in e.methods + e.operators + e.reflected:
            assert callable(getattr(sd.Tensor, m)), (name, m)
        if e.inplace:
            assert callable(getattr(sd.Tensor, e.inplace))
        if e.api:
            assert getattr(array_api, e.api).__name__ == e.api
        if e.ufunc:
            assert numpy_api.UFUNCS[e.ufunc] is getattr(array_api, e.api)
            assert isinstance(getattr(np, e.ufunc), np.ufunc), e.ufunc
        if e.grad == NOT_DIFFERENTIABLE:
            assert spec.grad is sd.ops.registry.NOT_DIFFERENTIABLE
        else:
            assert callable(spec.grad) and (e.arity == 1 or len(e.grad) == 2), name


def test_every_entry_has_a_scalar_definition_for_every_dtype_it_takes():
    for name, e in OPS.items():
        for d in e.dtypes:
            assert e.fn(d) is not None, (name, d)

"""Every CUDA kernel (copies, elementwise, reductions, where, gather, the plain gemm) compiled to PTX for sm_90,
where numba-cuda finds the CUDA toolkit's NVVM (``pip install "numba-cuda[cu12]"``); no GPU needed.  It takes
about 2.5 minutes on a 2-core machine (491 kernels, 90 s of CPU), so the test extra does not install NVVM:
CI skips it, and a developer who changes a kernel runs it.  The simulator runs kernels as
Python and lets typing errors through that a real compile refuses (a shared-memory tile
whose shape is computed in the kernel, say): this catches them on a CPU-only machine.
Skipped where NVVM is missing."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

COMPILE = r'''
import sys
import ml_dtypes
import numpy as np
from numba import cuda, from_dtype, types as nt
try:
    cuda.compile_ptx(lambda a: None, (nt.float32[:],), cc=(9, 0))
except Exception as e:
    print("NO-NVVM", type(e).__name__, e)
    sys.exit(0)
# A kernel's device functions (the odometer of strided.cuda.launch) are compiled for the
# current device's compute capability, which asks the driver; without a GPU they are
# compiled for the kernels' own target instead.
import numba.cuda.dispatcher as dispatcher
class Sm90:
    compute_capability = (9, 0)
dispatcher.get_current_device = lambda: Sm90()
from strided.cuda import copy as cc
i64 = nt.int64
def tup(k):
    return nt.UniTuple(i64, k)
count = 0
def ptx(kernel, *args):
    global count
    code, _ = cuda.compile_ptx(kernel.py_func, args, cc=(9, 0))
    assert ".visible .entry" in code, code[:200]
    count += 1
ELEMENTWISE_DTYPES = %r
for size, e in {1: nt.uint8, 2: nt.uint16, 4: nt.uint32, 8: nt.uint64}.items():
    a = nt.Array(e, 1, "C")
    ptx(cc._run, a, i64, a, i64, i64)
    ptx(cc._rows, a, i64, i64, a, i64, i64, i64, i64)
    for k in (1, 3):
        ptx(cc._blocks, a, i64, a, i64, tup(k), tup(k), i64, i64)
        ptx(cc._general, a, i64, tup(k), a, i64, tup(k), tup(k), i64)
        ptx(cc._TILED[size], a, i64, tup(k), i64, i64, a, i64, tup(k), i64, i64, tup(k), i64, i64, i64)
for s, d in [(nt.float32, nt.int64), (nt.float64, nt.boolean), (nt.boolean, nt.float32), (nt.uint8, nt.float64),
             (nt.int64, nt.uint32), (nt.float64, nt.float32)]:
    ptx(cc._general, nt.Array(d, 1, "C"), i64, tup(2), nt.Array(s, 1, "C"), i64, tup(2), tup(2), i64)
# conversions from and to the half types (their buffers as uint16 bits)
F16, BF16, F32, F64 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)
def arr(d):
    return nt.Array(nt.uint16 if d in (F16, BF16) else from_dtype(d), 1, "C")
for d, s in [(F32, F16), (F16, F32), (F32, BF16), (BF16, F32), (F64, F16), (F16, F64), (BF16, F16), (F16, BF16),
             (np.dtype(bool), BF16), (F16, np.dtype(bool)), (BF16, np.dtype(np.int64)), (np.dtype(np.uint8), F16)]:
    ptx(cc.convert_kernel(d, s), arr(d), i64, tup(2), arr(s), i64, tup(2), tup(2), i64)
from strided.cuda import elementwise as ew
from strided.cuda import scalar as cs
from strided.kernels.common import COMPUTE
from strided.kernels.elementwise import BINARY_OPS, UNARY_OPS
from strided.kernels.optable import OPS
assert cs.refusals() == {}, cs.refusals()  # the count below has every (op, dtype)
for name in ELEMENTWISE_DTYPES:
    d = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    a = arr(d)
    for op in UNARY_OPS:
        if COMPUTE[d] not in UNARY_OPS[op].dtypes:
            continue
        ptx(ew.unary_kernel(op, d, d), a, i64, tup(2), a, i64, tup(2), tup(2), i64)
    for op in BINARY_OPS:
        if COMPUTE[d] not in BINARY_OPS[op].dtypes:
            continue
        out = np.dtype(bool) if BINARY_OPS[op].bool_out else d
        ptx(ew.binary_kernel(op, out, d, d), arr(out), i64, tup(2), a, i64, tup(2), a, i64, tup(2), tup(2), i64)
# a half with an f32 scalar, and f16 with bf16 into f32
ptx(ew.binary_kernel("mul", F16, F16, F32), arr(F16), i64, tup(2), arr(F16), i64, tup(2), arr(F32), i64, tup(2),
    tup(2), i64)
ptx(ew.binary_kernel("add", F32, F16, BF16), arr(F32), i64, tup(2), arr(F16), i64, tup(2), arr(BF16), i64, tup(2),
    tup(2), i64)
from strided.cuda import reduce as cr
for acc in (nt.float32, nt.float64, nt.int64, nt.uint8, nt.boolean):
    a = nt.Array(acc, 1, "C")
    for op in cr.REDUCE_OPS:
        for k in (1, 3):
            ptx(cr.reduce_kernel(op, np.dtype(str(acc) if acc is not nt.boolean else "bool")),
                a, i64, tup(k), tup(k), tup(k), tup(2), tup(2), a, i64, i64, i64, i64, i64, i64, acc)
        ptx(cr.column_kernel(op, np.dtype(str(acc) if acc is not nt.boolean else "bool")),
            a, i64, tup(2), tup(2), tup(2), tup(1), tup(1), a, i64, i64, i64, acc)
    for op in cr.ARG_REDUCE_OPS:
        ptx(cr.arg_kernel(op, np.dtype(str(acc) if acc is not nt.boolean else "bool")),
            a, i64, tup(2), tup(2), tup(2), i64, i64, nt.Array(i64, 1, "C"), i64, i64)
for h in (F16, BF16):  # half sources, f32 accumulators
    f = nt.Array(nt.float32, 1, "C")
    for op in cr.REDUCE_OPS:
        ptx(cr.reduce_kernel(op, F32, h), arr(h), i64, tup(1), tup(1), tup(1), tup(2), tup(2), f, i64, i64, i64, i64,
            i64, i64, nt.float32)
        ptx(cr.column_kernel(op, F32, h), arr(h), i64, tup(2), tup(2), tup(2), tup(1), tup(1), f, i64, i64, i64,
            nt.float32)
    for op in cr.ARG_REDUCE_OPS:
        ptx(cr.arg_kernel(op, h), arr(h), i64, tup(2), tup(2), tup(2), i64, i64, nt.Array(i64, 1, "C"), i64, i64)
from strided.cuda import index as ci
for e in (nt.uint8, nt.uint16, nt.uint32, nt.uint64):
    a = nt.Array(e, 1, "C")
    ptx(ew._where, a, i64, tup(2), nt.Array(nt.boolean, 1, "C"), i64, tup(2), a, i64, tup(2), a, i64, tup(2),
        tup(2), i64)
    ptx(ci._gather, a, i64, tup(3), a, i64, tup(3), tup(3), i64, nt.Array(i64, 1, "C"), i64)
from strided.cuda import matmul as cmm
for d in (F32, F64, F16, BF16, np.dtype(np.int64), np.dtype(np.uint8), np.dtype(bool)):
    a = arr(d)
    ptx(cmm.gemm_kernel(d), i64, i64, i64, i64, i64, a, i64, i64, i64, a, i64, i64, i64, a, i64, i64, i64, i64)
# strided.fuse's kernels (cuda.elementwise.fused_kernel), their sources from zero-size CPU calls
# (which compile nothing): a mul feeding an add is kept from an FMA (cuda.scalar.keep's add.rn
# between the ops), and the half, bool, integer and complex forms compile
import strided as sd
from strided.kernels import elementwise as kew
made = []
cpu_kernel = kew.expression_kernel
def spy(source, out_layout, layouts, dtypes):
    made.append((source, dtypes))
    return cpu_kernel(source, out_layout, layouts, dtypes)
kew.expression_kernel = spy
for fn, dts in [(lambda a, b, c: (a * b.t() + c).relu(), [np.float32] * 3),
                (lambda a, b, c: (a * b.t() + c).relu(), [np.float64] * 3),
                (lambda x: 0.5 * x * (1.0 + (0.7978845608028654 * (x + 0.044715 * x * x * x)).tanh()), [F16]),
                (lambda x, y: sd.where(x > y, x * y, (x - y).to_dtype(sd.f32)), [BF16] * 2),
                (lambda x, y: (x * y + x) ^ (x > y), [np.int32] * 2),
                (lambda x, y: (x & y) | ~x, [np.bool_] * 2),
                (lambda x, y: x * y + x, [np.complex64] * 2)]:
    sd.fuse(fn, strict=True)(*[sd.from_numpy(np.zeros((0, 0), d)) for d in dts])
kew.expression_kernel = cpu_kernel
for source, dtypes in made:
    k, _ = ew.fused_kernel(source, dtypes)
    m = len(dtypes)
    code, _ = cuda.compile_ptx(k.py_func, (*[arr(d) for d in dtypes], tup(2), nt.UniTuple(tup(2), m), tup(m), i64),
                               cc=(9, 0))
    assert ".visible .entry" in code, code[:200]
    count += 1
    if source.text == "relu(add(mul(x0, x1), x2))" and dtypes[0] == F32:
        assert "fma" not in code and code.count("add.rn.f32") == 3, code
print("PTX", count)
'''


# Every elementwise op on these dtypes (those the CPU's table gives it; CUDA refuses none):
# each kind of value once, and the half types, which CUDA computes through f32.
ELEMENTWISE_DTYPES = ("float32", "float64", "int64", "bool", "float16", "bfloat16", "int8", "uint64", "complex64")


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda is not installed")
def test_every_copy_kernel_compiles_to_ptx_for_sm90():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}  # the real compiler, whatever this run chose
    out = subprocess.run([sys.executable, "-c", COMPILE % (ELEMENTWISE_DTYPES,)], capture_output=True, text=True,
                         timeout=600, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-6000:]
    if out.stdout.startswith("NO-NVVM"):
        pytest.skip(f"numba-cuda finds no NVVM here ({out.stdout.strip()[:200]})")
    # copies: 4 widths x 8 kernels, 6 conversions and 12 with a half type; elementwise: every op on the 9
    # ELEMENTWISE_DTYPES the CPU's table gives it (complex64's div, recip, sign, pow, expm1, log1p and log2 too,
    # since the op table's definitions compile for the device), and 2 mixed ones; reductions: 5 accumulators x (4
    # ops x 3 kernels + 2 arg ops) and 2 half sources x (4 x 2 + 2); where and the gather: 4 widths each;
    # gemm_kernel on 7 dtypes; strided.fuse's kernel for 7 expressions.  A new kernel or op changes the count: say
    # what it adds above.
    assert out.stdout.strip() == "PTX 498", out.stdout

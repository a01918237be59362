"""Every CUDA kernel (copies, elementwise) compiled to PTX for sm_90, where numba-cuda finds the CUDA toolkit's
NVVM (``pip install "numba-cuda[cu12]"``); no GPU needed.  The simulator runs kernels as
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
import numpy as np
from numba import cuda, types as nt
try:
    cuda.compile_ptx(lambda a: None, (nt.float32[:],), cc=(9, 0))
except Exception as e:
    print("NO-NVVM", type(e).__name__, e)
    sys.exit(0)
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
from strided.cuda import elementwise as ew
for dt in (nt.float32, nt.float64, nt.int64, nt.boolean):
    a = nt.Array(dt, 1, "C")
    kind = "b" if dt is nt.boolean else ("i" if dt is nt.int64 else "f")

    def skip(op):
        return ((kind != "f" and op in ew._FLOAT_ONLY) or (kind != "b" and op in ew._BOOL_ONLY)
                or (kind == "f" and op in ew._NOT_FLOAT) or (kind == "b" and op in ew._NOT_BOOL)
                or (kind == "b" and op not in ew._BOOL_ONLY and op not in ew._NOT_FLOAT))

    for op, kernel in ew._UNARY_KERNELS.items():
        if skip(op):
            continue
        ptx(kernel, a, i64, tup(2), a, i64, tup(2), tup(2), i64)
    for op, kernel in ew._BINARY_KERNELS.items():
        if skip(op):
            continue
        out = nt.Array(nt.boolean, 1, "C") if op in ("eq", "ne", "lt", "le", "gt", "ge") else a
        ptx(kernel, out, i64, tup(2), a, i64, tup(2), a, i64, tup(2), tup(2), i64)
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
from strided.cuda import index as ci
for e in (nt.uint8, nt.uint16, nt.uint32, nt.uint64):
    a = nt.Array(e, 1, "C")
    ptx(ew._where, a, i64, tup(2), nt.Array(nt.boolean, 1, "C"), i64, tup(2), a, i64, tup(2), a, i64, tup(2), tup(2), i64)
    ptx(ci._gather, a, i64, tup(3), a, i64, tup(3), tup(3), i64, nt.Array(i64, 1, "C"), i64)
from strided.cuda import matmul as cmm
for e in (nt.float32, nt.float64):
    a = nt.Array(e, 1, "C")
    ptx(cmm.simulated_gemm_strided_batched, i64, i64, i64, i64, i64, a, i64, i64, i64, a, i64, i64, i64, a, i64, i64,
        i64, i64)
print("PTX", count)
'''


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda is not installed")
def test_every_copy_kernel_compiles_to_ptx_for_sm90():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}  # the real compiler, whatever this run chose
    out = subprocess.run([sys.executable, "-c", COMPILE], capture_output=True, text=True, timeout=600, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-6000:]
    if out.stdout.startswith("NO-NVVM"):
        pytest.skip(f"numba-cuda finds no NVVM here ({out.stdout.strip()[:200]})")
    # copies: 4 widths x 8 kernels and 6 conversions; elementwise: 42 ops on f32 and f64, 19 on i64, 6 on bool;
    # reductions: 5 accumulators x (4 ops x 3 kernels + 2 arg ops); where and the gather: 4 widths each;
    # the simulator's gemm stand-in on f32 and f64
    assert out.stdout.strip() == "PTX 227", out.stdout

"""matmul on CUDA against NumPy: the CPU's plan (operands in place, transposed, narrowed;
packed only when BLAS cannot read them) and the batch walked per operand (permuted,
narrowed, flipped, stride-0 batches), run by cuBLAS on a GPU and, in the simulator, by
``gemm_kernel``, the stand-in that reads the same arguments (and runs the integer products on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.cuda import matmul as cm
from strided.kernels.matmul import COL, PACK_ROW, ROW, plan


@st.composite
def operands(draw):
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    a_b = tuple(1 if draw(st.booleans()) else d for d in batch)  # broadcast against the other
    b_b = batch[len(batch) - draw(st.integers(0, len(batch))):]
    return m, k, n, a_b, b_b, draw(st.sampled_from(["row", "col", "narrow", "flip", "step", "expand"])), \
        draw(st.sampled_from(["row", "col", "narrow", "flip", "step", "expand"])), \
        draw(st.sampled_from([np.float32, np.float64]))


def _make(rng, batch, rows, cols, kind, dtype):
    """(host view, device view) of shape batch + (rows, cols) in the named layout."""
    if kind == "col":
        h = rng.random(batch + (cols, rows)).astype(dtype)
        g = sd.from_numpy(h).to_device("cuda")
        return np.swapaxes(h, -1, -2), g.transpose(-1, -2)
    if kind == "narrow":
        h = rng.random(batch + (rows + 2, cols + 3)).astype(dtype)
        g = sd.from_numpy(h).to_device("cuda")
        return h[..., 1:rows + 1, 2:cols + 2], g[..., 1:rows + 1, 2:cols + 2]
    if kind == "flip":
        h = rng.random(batch + (rows, cols)).astype(dtype)
        g = sd.from_numpy(h).to_device("cuda")
        dims = tuple(range(len(batch) + 2))
        return np.flip(h, dims), g.flip(dims)
    if kind == "step":
        h = rng.random(batch + (rows, 2 * cols)).astype(dtype)
        g = sd.from_numpy(h).to_device("cuda")
        return h[..., ::2], g[..., ::2]
    if kind == "expand":  # a stride-0 batch dim in front, and a broadcast row
        h = rng.random((1,) + batch + (1, cols)).astype(dtype)
        g = sd.from_numpy(h).to_device("cuda")
        return np.broadcast_to(h, (2,) + batch + (rows, cols)), g.expand((2,) + batch + (rows, cols))
    h = rng.random(batch + (rows, cols)).astype(dtype)
    return h, sd.from_numpy(h).to_device("cuda")


@settings(max_examples=40, deadline=None)
@given(operands(), st.integers(0, 2**32 - 1))
def test_matmul_of_drawn_views_matches_numpy(ops, seed):
    m, k, n, a_b, b_b, ka, kb, dtype = ops
    rng = np.random.default_rng(seed)
    ha, ga = _make(rng, a_b, m, k, ka, dtype)
    hb, gb = _make(rng, b_b, k, n, kb, dtype)
    try:
        np.broadcast_shapes(ha.shape[:-2], hb.shape[:-2])
    except ValueError:  # an expanded operand's extra batch dim can meet one it does not broadcast with
        with pytest.raises(sd.ShapeError, match="do not broadcast"):
            ga @ gb
        return
    want = np.matmul(ha, hb)
    got = ga @ gb
    assert got.device == "cuda:0" and got.shape == want.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert np.allclose(got.numpy(), want, rtol=tol, atol=tol)


def test_operand_modes_follow_the_cpu_plan_and_pack_only_what_blas_cannot_read():
    rng = np.random.default_rng(1)
    h = rng.random((2, 6, 8))
    g = sd.from_numpy(h).to_device("cuda")
    a, b = g[:, :4, 1:6], g.transpose(1, 2)[:, 2:7, :3]  # narrowed in place, transposed in place
    p = plan((a.shape, a.stride, a.offset), (b.shape, b.stride, b.offset))
    assert (p.a_mode, p.a_ld, p.b_mode, p.b_ld) == (ROW, 8, COL, 8)
    prog = cm.program(p)
    assert (prog.transa, prog.transb, prog.lda, prog.ldb, prog.ldc) == (cm.OP_T, cm.OP_N, 8, 8, 3)
    assert [(c.count, c.a_stride, c.b_stride, c.c_stride) for c in prog.calls] == [(2, 48, 48, 12)]
    before = dict(cm.stats)
    got = a @ b
    assert cm.stats["packed"] == before["packed"] and cm.stats["direct"] == before["direct"] + 2
    assert np.allclose(got.numpy(), h[:, :4, 1:6] @ np.swapaxes(h, 1, 2)[:, 2:7, :3], rtol=1e-12)
    c, d = g[:, ::-1, ::2].transpose(1, 2), g[:, :, :5]  # a negative stride and no unit stride: packed
    pc = plan((c.shape, c.stride, c.offset), (d.shape, d.stride, d.offset))
    assert pc.a_mode >= PACK_ROW and pc.b_mode == ROW
    before = dict(cm.stats)
    got = c @ d
    assert cm.stats["packed"] == before["packed"] + 1
    assert np.allclose(got.numpy(), np.swapaxes(h[:, ::-1, ::2], 1, 2) @ h[:, :, :5], rtol=1e-12)


def test_batches_walked_backwards_or_in_several_dims_are_one_call_per_point():
    rng = np.random.default_rng(2)
    h = rng.random((3, 2, 4, 4))
    g = sd.from_numpy(h).to_device("cuda")
    a = g.flip(1)  # the inner batch dim walked backwards: one call per matrix
    prog = cm.program(plan((a.shape, a.stride, a.offset), (g.shape, g.stride, g.offset)))
    assert len(prog.calls) == 6 and all(c.count == 1 for c in prog.calls)
    assert np.allclose((a @ g).numpy(), h[:, ::-1] @ h, rtol=1e-12)
    a = g.flip(0)  # an outer one: one strided-batched call per outer point, starting where the flip starts
    prog = cm.program(plan((a.shape, a.stride, a.offset), (g.shape, g.stride, g.offset)))
    assert [(c.b_off, c.count) for c in prog.calls] == [(64, 2), (32, 2), (0, 2)]  # cuBLAS's B is strided's a
    assert np.allclose((a @ g).numpy(), h[::-1] @ h, rtol=1e-12)
    b = g.permute((1, 0, 2, 3))  # two batch dims, permuted: one strided-batched call per outer point
    prog = cm.program(plan((b.shape, b.stride, b.offset), (b.shape, b.stride, b.offset)))
    assert len(prog.calls) == 2 and all(c.count == 3 and c.a_stride == 32 for c in prog.calls)
    assert np.allclose((b @ b).numpy(), h.transpose(1, 0, 2, 3) @ h.transpose(1, 0, 2, 3), rtol=1e-12)


def test_empty_and_zero_k_products_and_refusals():
    z = sd.zeros((3, 0), device="cuda") @ sd.zeros((0, 2), device="cuda")
    assert z.device == "cuda:0" and z.tolist() == [[0.0, 0.0]] * 3
    assert (sd.zeros((0, 4), device="cuda") @ sd.zeros((4, 2), device="cuda")).shape == (0, 2)
    for dtype in (sd.i64, sd.i8, sd.u16, sd.u8, sd.bool):  # integers and bool through the simple kernel
        h = (np.arange(12).reshape(3, 4) % 5).astype(dtype.np)
        g = sd.from_numpy(h).to_device("cuda")
        want = sd.from_numpy(h) @ sd.from_numpy(h).t()
        got = g @ g.t()
        assert got.dtype == want.dtype and np.array_equal(got.numpy(), want.numpy())
    z = sd.from_numpy(np.ones((2, 0), np.float16)).to_device("cuda")
    assert (z @ z.t()).numpy().tolist() == [[0.0, 0.0]] * 2  # a zero-k half product is +0.0
    out = sd.zeros((4,), dtype=sd.u16, device="cuda").storage.data
    with pytest.raises(sd.DTypeError, match="matmul: CUDA multiplies .*; got uint16"):
        cm.matmul(out, ((2, 2), (2, 1), 0), out, ((2, 2), (2, 1), 0), out)
    with pytest.raises(sd.StridedError, match=r"matmul: .*'cuda:0' and 'cpu'"):
        sd.ones((2, 2), device="cuda") @ sd.ones((2, 2))
    with pytest.raises(sd.StridedError, match="matmul: expected a as a 1-D CUDA device array, got a host numpy array"):
        cm.matmul(np.zeros(4), ((2, 2), (2, 1), 0), g.storage.data, ((2, 2), (2, 1), 0), g.storage.data)

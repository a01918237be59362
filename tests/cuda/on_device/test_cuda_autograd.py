"""Autograd on CUDA tensors: the graph is device-agnostic, so gradients of a small graph
through every family (elementwise, broadcasts, reductions, max's mask, views, index_select,
cat, where) come out on the operands' device and equal the CPU's gradients of the same
graph, which the CPU's finite-difference tests check."""

from __future__ import annotations

import numpy as np

import strided as sd


def graph(x, w):
    y = (x * w).exp() + x.t().sum(0).reshape(2, 1) - x.max(1, keepdim=True)
    y = sd.where(y > 1.2, y, y * 0.5)
    y = sd.cat([y, x.index_select([2, 0], 1)], 1)[:, ::-2]
    return y.tanh().mean() + (w * w).sum()


def test_gradients_of_a_graph_live_on_the_device_and_match_the_cpu():
    rng = np.random.default_rng(3)
    hx, hw = rng.random((2, 3)), rng.random(3)
    grads = {}
    for device in ("cpu", "cuda"):
        x = sd.Var(sd.from_numpy(hx).to_device(device))
        w = sd.Var(sd.from_numpy(hw).to_device(device))
        root = graph(x, w)
        assert root.device == x.device
        g = root.backward()
        assert g[x].device == x.device and g[w].device == w.device
        grads[device] = (root.item(), g[x].numpy(), g[w].numpy())
    (rc, gxc, gwc), (rg, gxg, gwg) = grads["cpu"], grads["cuda"]
    assert np.isclose(rc, rg, rtol=1e-12)
    assert np.allclose(gxc, gxg, rtol=1e-12, atol=1e-15) and np.allclose(gwc, gwg, rtol=1e-12, atol=1e-15)
    # and one finite difference on the device, independent of both backward passes
    eps = 1e-6
    bumped = hx.copy()
    bumped[1, 2] += eps
    up = graph(sd.from_numpy(bumped).to_device("cuda"), sd.from_numpy(hw).to_device("cuda")).item()
    assert np.isclose((up - rg) / eps, gxg[1, 2], rtol=1e-4, atol=1e-6)

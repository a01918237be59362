"""The benchmark cases: layouts the seeds measured, for strided, NumPy and PyTorch."""

from __future__ import annotations

import operator

import numpy as np

from .harness import Case, torch_or_none


def random_pair(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)


def kernel_cases(sizes=(1024, 2048, 4096)) -> list[Case]:
    import strided as sd

    torch = torch_or_none()
    cases: list[Case] = []

    def add(name, n, fs, fn, ft):
        def make(n=n):
            a_np, b_np = random_pair(n)
            bias_np = a_np[0].copy()
            a, b, bias = sd.from_numpy(a_np), sd.from_numpy(b_np), sd.from_numpy(bias_np)
            out = {"strided": lambda: fs(a, b, bias), "numpy": lambda: fn(a_np, b_np, bias_np)}
            if torch is not None:
                a_t, b_t, bias_t = torch.from_numpy(a_np), torch.from_numpy(b_np), torch.from_numpy(bias_np)
                out["torch"] = lambda: ft(a_t, b_t, bias_t)
            return out

        cases.append(Case("elementwise and copies, f32", name, f"{n}^2", make))

    for n in sizes:
        h = n // 2
        add("a.contiguous() (no-op)", n, lambda a, b, c: a.contiguous(),
            lambda a, b, c: np.ascontiguousarray(a), lambda a, b, c: a.contiguous())
        add("a.t().contiguous()", n, lambda a, b, c: a.t().contiguous(),
            lambda a, b, c: np.ascontiguousarray(a.T), lambda a, b, c: a.t().contiguous())
        add("a.narrow(1,0,n/2).contiguous()", n, lambda a, b, c, h=h: a.narrow(1, 0, h).contiguous(),
            lambda a, b, c, h=h: np.ascontiguousarray(a[:, :h]), lambda a, b, c, h=h: a.narrow(1, 0, h).contiguous())
        add("a + b", n, lambda a, b, c: a + b, lambda a, b, c: a + b, lambda a, b, c: a + b)
        add("a + b.t()", n, lambda a, b, c: a + b.t(), lambda a, b, c: a + b.T, lambda a, b, c: a + b.t())
        add("a.t() + b.t()", n, lambda a, b, c: a.t() + b.t(), lambda a, b, c: a.T + b.T, lambda a, b, c: a.t() + b.t())
        add("a + bias (row broadcast)", n, lambda a, b, c: a.broadcast_add(c), lambda a, b, c: a + c,
            lambda a, b, c: a + c)
        add("a.exp()", n, lambda a, b, c: a.exp(), lambda a, b, c: np.exp(a), lambda a, b, c: a.exp())
        add("a.t().exp()", n, lambda a, b, c: a.t().exp(), lambda a, b, c: np.exp(a.T), lambda a, b, c: a.t().exp())
        add("a.relu()", n, lambda a, b, c: a.relu(), lambda a, b, c: np.maximum(a, 0), lambda a, b, c: a.relu())
        add("a.sum(0)", n, lambda a, b, c: a.sum(0), lambda a, b, c: a.sum(0), lambda a, b, c: a.sum(0))
        add("a.sum(1)", n, lambda a, b, c: a.sum(1), lambda a, b, c: a.sum(1), lambda a, b, c: a.sum(1))
        add("a.max(1)", n, lambda a, b, c: a.max(1), lambda a, b, c: a.max(1), lambda a, b, c: a.amax(1))
    return cases


def half_cases(quick: bool = False) -> list[Case]:
    """f16 and bf16 elementwise at 2048^2: computed in f32 registers, stored as half.

    Peers: NumPy's float16 ufuncs (and ml_dtypes' bfloat16 ones), PyTorch's
    float16/bfloat16 kernels."""
    import ml_dtypes

    import strided as sd

    torch = torch_or_none()
    cases: list[Case] = []
    n = 2048
    kinds = (("f16", np.float16, "float16"), ("bf16", ml_dtypes.bfloat16, "bfloat16"))
    ops = (
        ("a + b", lambda a, b: a + b, lambda a, b: a + b, lambda a, b: a + b),
        ("a + b.t()", lambda a, b: a + b.t(), lambda a, b: a + b.T, lambda a, b: a + b.t()),
        ("a.exp()", lambda a, b: a.exp(), lambda a, b: np.exp(a), lambda a, b: a.exp()),
    )
    for label, np_dtype, torch_name in kinds:
        for name, fs, fn, ft in ops:
            def make(np_dtype=np_dtype, torch_name=torch_name, fs=fs, fn=fn, ft=ft):
                a32, b32 = random_pair(n)
                a_np, b_np = a32.astype(np_dtype), b32.astype(np_dtype)
                a, b = sd.from_numpy(a_np), sd.from_numpy(b_np)
                out = {"strided": lambda: fs(a, b), "numpy": lambda: fn(a_np, b_np)}
                if torch is not None:
                    tdt = getattr(torch, torch_name)
                    a_t, b_t = torch.from_numpy(a32).to(tdt), torch.from_numpy(b32).to(tdt)
                    out["torch"] = lambda: ft(a_t, b_t)
                return out

            cases.append(Case(f"elementwise, {label}", f"{name} {label}", f"{n}^2", make))
    return cases


def cat_cases() -> list[Case]:
    """candle's cat benchmark: eight [4,128,64] f32 tensors (the KV-cache growth pattern),
    one call per timed run after the harness's pause (what an occasional cat costs,
    thread-pool wake-up included); the contiguous ones also as ``_CAT_CALLS`` calls in a
    row (a model's step after step)."""
    import strided as sd

    torch = torch_or_none()
    cases = []
    for label, transposed in (("contiguous", False), ("from zeros(64,128,4).transpose(0,2)", True)):
        for dim in (0, 1):
            for calls in ((1,) if transposed else (1, _CAT_CALLS)):  # a stream: the KV-cache case
                def make(transposed=transposed, dim=dim, calls=calls):
                    rng = np.random.default_rng(1)
                    if transposed:
                        arrays = [rng.standard_normal((64, 128, 4), dtype=np.float32).transpose(2, 1, 0)
                                  for _ in range(8)]
                    else:
                        arrays = [rng.standard_normal((4, 128, 64), dtype=np.float32) for _ in range(8)]
                    ours = [sd.from_numpy(a) for a in arrays]
                    out = {
                        "strided": stream(sd.cat, calls, ours, dim),
                        "numpy": stream(np.concatenate, calls, arrays, dim),
                    }
                    if torch is not None:
                        out["torch"] = stream(torch.cat, calls, [torch.from_numpy(a) for a in arrays], dim)
                    return out

                name = f"cat dim {dim}, {label}" + (f", {calls} in a row" if calls > 1 else "")
                cases.append(Case("cat, eight [4,128,64] f32", name, "8x32K", make, calls=calls))
    return cases


def stream(fn, calls: int, *args):
    """A timed run: ``calls`` calls of ``fn(*args)`` back to back."""
    if calls == 1:
        return lambda: fn(*args)

    def run():
        for _ in range(calls):
            fn(*args)
    return run


_CAT_CALLS = 20
_OVERHEAD_CALLS = 200


def overhead_cases() -> list[Case]:
    """The cost of one small op in a steady stream of them (as a model's step makes them): each
    timed run is 200 back-to-back adds.  A lone call after the harness's pause between blocks
    would also time the CPU waking up and refilling its caches, for every library alike."""
    import strided as sd

    torch = torch_or_none()

    def make():
        a_np = np.arange(4, dtype=np.float32)
        b_np = np.ones(4, dtype=np.float32)
        a, b = sd.from_numpy(a_np), sd.from_numpy(b_np)
        n, add = _OVERHEAD_CALLS, operator.add
        out = {"strided": stream(add, n, a, b), "numpy": stream(add, n, a_np, b_np)}
        if torch is not None:
            out["torch"] = stream(add, n, torch.from_numpy(a_np), torch.from_numpy(b_np))
        return out

    return [Case("per-op overhead", "4-element add", "4", make, calls=_OVERHEAD_CALLS)]


def network_data():
    """Seed 004's network: a 64x256 input and three 256->256 layers, (weights, zero bias)."""
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((64, 256), dtype=np.float32)
    return x_np, [(rng.standard_normal((256, 256), dtype=np.float32) * 0.05, np.zeros(256, np.float32))
                  for _ in range(3)]


def numpy_network(x_np, layers, passes: int):
    """NumPy's forward passes of the network (relu(h @ w.T + b) per layer)."""
    def run_np():
        for _ in range(passes):
            h = x_np
            for w, b in layers:
                h = np.maximum(h @ w.T + b, 0)
        return h

    return run_np


def torch_network(torch, x_np, layers, passes: int, tracked: bool, backward: bool = False):
    """PyTorch's passes of the network; ``tracked`` records the graph, ``backward`` also runs it."""
    theirs = [(torch.from_numpy(w).requires_grad_(tracked), torch.from_numpy(b).requires_grad_(tracked))
              for w, b in layers]
    xt = torch.from_numpy(x_np)

    def run_torch():
        for _ in range(passes):
            h = xt
            for w, b in theirs:
                h = torch.relu(h.matmul(w.t()) + b)
            if backward:
                h.sum().backward()
        return h

    return run_torch


def graph_cases(quick: bool = False) -> list[Case]:
    """Seed 004's small network: three 256->256 layers with ReLU, batch 64, 200 forward passes,
    with plain weights and with tracked weights (the graph is recorded and kept)."""
    import strided as sd

    torch = torch_or_none()
    passes = 50 if quick else 200
    cases = []
    for tracked in (False, True):
        def make(tracked=tracked):
            x_np, ws = network_data()
            wrap = sd.Var if tracked else sd.from_numpy
            ours = [(wrap(w), wrap(b)) for w, b in ws]
            x = sd.from_numpy(x_np)

            def run_ours():
                out = None
                for _ in range(passes):
                    h = x
                    for w, b in ours:
                        h = h.matmul(w.t()).broadcast_add(b).relu()
                    out = h
                return out

            fns = {"strided": run_ours}
            if not tracked:
                fns["numpy"] = numpy_network(x_np, ws, passes)
            if torch is not None:
                fns["torch"] = torch_network(torch, x_np, ws, passes, tracked)
            return fns

        label = "Var weights, graph kept" if tracked else "plain tensors"
        cases.append(Case("small network (seed 004)", f"{passes} forward passes, {label}", "64x256", make))
    return cases


def matmul_cases(quick: bool = False) -> list[Case]:
    """Seed 000's matmul layouts: plain, transposed, transposed-then-copied, narrowed rhs,
    the permuted batch (one operand permuted, and both), and the naive triple loop the seed
    uses as a baseline."""
    import strided as sd

    torch = torch_or_none()
    cases: list[Case] = []
    sizes = (256, 1024) if quick else (256, 512, 1024)

    def add(name, size, flops, build):
        cases.append(Case("matmul, f32", name, size, build, flops=flops))

    for n in sizes:
        def build(n=n, which="a @ b"):
            rng = np.random.default_rng(3)
            a_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            b_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            w_np = rng.uniform(-1, 1, (n, 2 * n)).astype(np.float32)
            a, b, w = sd.from_numpy(a_np), sd.from_numpy(b_np), sd.from_numpy(w_np)
            table = {
                "a @ b": (lambda: a @ b, lambda: a_np @ b_np, lambda t: t[0] @ t[1]),
                "a @ b.t()": (lambda: a @ b.t(), lambda: a_np @ b_np.T, lambda t: t[0] @ t[1].t()),
                "a @ b.t().contiguous()": (lambda: a @ b.t().contiguous(), lambda: a_np @ np.ascontiguousarray(b_np.T),
                                           lambda t: t[0] @ t[1].t().contiguous()),
                "a @ w.narrow(1,0,n), w (n,2n)": (lambda: a @ w.narrow(1, 0, n), lambda: a_np @ w_np[:, :n],
                                                  lambda t: t[0] @ t[2].narrow(1, 0, n)),
            }
            ours, theirs, torch_fn = table[which]
            fns = {"strided": ours, "numpy": theirs}
            if torch is not None:
                tt = [torch.from_numpy(x) for x in (a_np, b_np, w_np)]
                fns["torch"] = lambda: torch_fn(tt)
            return fns

        for which in ("a @ b", "a @ b.t()", "a @ b.t().contiguous()", "a @ w.narrow(1,0,n), w (n,2n)"):
            add(which, f"{n}^2", 2.0 * n**3, lambda n=n, which=which: build(n, which))

    def naive(n=256):
        from numba import njit

        @njit(cache=True)
        def loop(a, b, c):
            for i in range(a.shape[0]):
                for j in range(b.shape[1]):
                    c[i, j] = 0.0
                for p in range(a.shape[1]):
                    x = a[i, p]
                    for j in range(b.shape[1]):
                        c[i, j] += x * b[p, j]

        rng = np.random.default_rng(4)
        a_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        c = np.empty((n, n), np.float32)
        return {"strided": lambda: loop(a_np, b_np, c), "numpy": lambda: a_np @ b_np}

    add("naive i-k-j loop in the strided column", "256^2", 2.0 * 256**3, naive)

    for b1, b2, m, k, n in ((2, 3, 4, 5, 6), (4, 8, 128, 128, 128)):
        def batch(b1=b1, b2=b2, m=m, k=k, n=n):
            rng = np.random.default_rng(5)
            x_np = rng.uniform(-1, 1, (b1, b2, m, k)).astype(np.float32)
            y_np = rng.uniform(-1, 1, (b2, b1, k, n)).astype(np.float32)
            x, y = sd.from_numpy(x_np), sd.from_numpy(y_np)
            fns = {"strided": lambda: x.permute(1, 0, 2, 3) @ y,
                   "numpy": lambda: np.matmul(x_np.transpose(1, 0, 2, 3), y_np)}
            if torch is not None:
                tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
                fns["torch"] = lambda: tx.permute(1, 0, 2, 3) @ ty
            return fns

        add("permuted batch x.permute(1,0,2,3) @ y", f"{b1}x{b2}x{m}x{k}", 2.0 * b1 * b2 * m * k * n, batch)

    # Both operands seen through the permute (attention's head/batch swap): each matrix is
    # still dense, but the two batch dims no longer merge into one batch stride, so a library
    # must loop over one of them or copy first.
    def both_permuted(b1=16, b2=8, m=128, k=64, n=96):
        rng = np.random.default_rng(6)
        x_np = rng.uniform(-1, 1, (b1, b2, m, k)).astype(np.float32)
        y_np = rng.uniform(-1, 1, (b1, b2, k, n)).astype(np.float32)
        x, y = sd.from_numpy(x_np), sd.from_numpy(y_np)
        fns = {"strided": lambda: x.permute(1, 0, 2, 3) @ y.permute(1, 0, 2, 3),
               "numpy": lambda: np.matmul(x_np.transpose(1, 0, 2, 3), y_np.transpose(1, 0, 2, 3))}
        if torch is not None:
            tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
            fns["torch"] = lambda: tx.permute(1, 0, 2, 3) @ ty.permute(1, 0, 2, 3)
        return fns

    add("x.permute(1,0,2,3) @ y.permute(1,0,2,3)", "16x8x128x64 @ 16x8x64x96", 2.0 * 16 * 8 * 128 * 64 * 96,
        both_permuted)
    return cases

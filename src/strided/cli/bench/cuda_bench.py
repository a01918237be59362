"""``python -m strided bench --cuda``: the CUDA backend's device check, in one process.

1. Correctness: every family on random layouts (permuted, flipped, stepped, narrowed and
   broadcast views of random shapes and dtypes) against NumPy on a host copy of the same
   buffer: copies, unary and binary elementwise ops, where, reductions over random dims,
   argmax, index_select, cat and matmul.  Any mismatch is printed and the check fails.
2. Speed (not with ``--sizes small``): bandwidth (TB/s, and the share of a plain
   device-to-device copy of the same bytes) of the transposed copy of 16384^2 f32 and
   bf16, two 3-D permutes, ``a + b.t()``, a reduction over each dim, and matmul TFLOP/s
   at 8192^3 in f32 and bf16 (f32 accumulation), side by side with PyTorch's CUDA build
   in the same process when it is installed (its columns are left out when not; bf16
   reaches it by DLPack, which has a bf16 code where the array interface has none).
   Then ``strided.fuse`` on the device: the chains of ``bench --fused`` (relu(a*b + c),
   a*b.t() + bias, tanh-GELU, softmax along the last dim) at 2048^2 to 16384^2 f32, in
   milliseconds: the eager chain, the fused function, PyTorch eager and ``torch.compile``
   (where it works on the machine).  Part 1 checks the same fused chains against NumPy.

``--sizes small`` runs part 1 on a few tiny layouts: numba-cuda's simulator can run it
(tests/cuda/on_device/test_cuda_bench.py does), the speed part needs a GPU.
"""

from __future__ import annotations

import time

import numpy as np

import strided as sd

from .fused_bench import bias_t, gelu, relu_fma, softmax

__all__ = ["main", "correctness", "speed", "FUSED"]

# The fused chains on the device (bench --fused's functions, which PyTorch's tensors run too):
# name -> (function, the shapes of its operands for a side n).
_CHAINS = {"relu(a*b + c)": (relu_fma, lambda n: ((n, n), (n, n), (n, n))),
           "a*b.t() + bias": (bias_t, lambda n: ((n, n), (n, n), (n,))),
           "tanh-GELU": (gelu, lambda n: ((n, n),)),
           "softmax(-1)": (softmax, lambda n: ((n, n),))}
FUSED = {name: sd.fuse(fn, strict=True) for name, (fn, _) in _CHAINS.items()}  # strict: a fallback fails a check

_BF16 = np.dtype(sd.bf16.np)
_HALVES = (np.dtype(np.float16), _BF16)
_DTYPES = (np.float32, np.float64, np.int64, np.uint8, np.float16, _BF16)


def _view(rng, t: sd.Tensor, h: np.ndarray):
    """The same random view of the device tensor ``t`` and the host array ``h``."""
    nd = t.ndim
    for _ in range(rng.integers(1, 4)):
        choice = rng.integers(0, 4) if nd else 4
        if choice == 0:
            perm = tuple(int(p) for p in rng.permutation(nd))
            t, h = t.permute(perm), h.transpose(perm)
        elif choice == 1:
            d = int(rng.integers(0, nd))
            t, h = t.flip(d), np.flip(h, d)
        elif choice == 2:
            d = int(rng.integers(0, nd))
            step = int(rng.integers(1, 3))
            start = int(rng.integers(0, max(1, h.shape[d] // 3)))
            idx = (slice(None),) * d + (slice(start, None, step),)
            t, h = t[idx], h[idx]
        elif choice == 3:
            d = int(rng.integers(0, nd))
            if h.shape[d] == 1:
                shape = h.shape[:d] + (3,) + h.shape[d + 1:]
                t, h = t.expand(shape), np.broadcast_to(h, shape)
    return t, h


def _random_tensor(rng, dtype, max_side: int):
    nd = int(rng.integers(1, 5))
    shape = tuple(int(rng.integers(1, max_side + 1)) if rng.random() > 0.15 else 1 for _ in range(nd))
    if np.dtype(dtype).kind == "f":
        h = (rng.random(shape) * 4 - 2).astype(dtype)
    else:
        h = rng.integers(0, 100, shape).astype(dtype)
    return sd.from_numpy(h).to_device("cuda"), h


def _close(got: sd.Tensor, want: np.ndarray, rtol: float) -> bool:
    if got.device == "cpu" or got.shape != want.shape:
        return False
    a = got.numpy()
    if a.dtype in _HALVES:
        a = a.astype(np.float32)
    if a.dtype.kind == "f" or want.dtype.kind == "f":
        return bool(np.allclose(a, want, rtol=rtol, atol=rtol, equal_nan=True))
    return bool(np.array_equal(a, want))


def correctness(count: int, max_side: int, seed: int = 0) -> tuple[int, list]:
    """(checks run, failures) over ``count`` random layouts."""
    rng = np.random.default_rng(seed)
    checks, failures = 0, []

    def check(name, got_fn, want_fn, rtol):
        nonlocal checks
        checks += 1
        try:
            with np.errstate(all="ignore"):  # exp of a large value is inf in both
                want = want_fn()
            ok = _close(got_fn(), np.asarray(want), rtol)
        except Exception as e:  # reported, the check goes on
            ok, want = False, f"{type(e).__name__}: {e}"
        if not ok:
            failures.append((name, layout))

    for _ in range(count):
        dtype = np.dtype(_DTYPES[int(rng.integers(0, len(_DTYPES)))])
        base, hbase = _random_tensor(rng, dtype, max_side)
        t, h = _view(rng, base, hbase)
        layout = f"{dtype.name} {t.layout}"
        rtol = 1e-5 if dtype == np.float32 else 1e-2 if dtype in _HALVES else 1e-12
        check("contiguous", lambda: t.contiguous(), lambda: h, 0)
        check("to_dtype", lambda: t.to_dtype(sd.f64), lambda: h.astype(np.float64), 0)
        if dtype in _HALVES:  # the half types compute in f32, rounded once: NumPy's f32 values are the oracle
            h = h.astype(np.float32)
        check("add", lambda: t + t.flip(-1), lambda: h + np.flip(h, -1), rtol)
        check("maximum", lambda: sd.maximum(t, t[..., :1]), lambda: np.maximum(h, h[..., :1]), 0)
        if h.dtype.kind == "f":
            check("exp", lambda: t.exp(), lambda: np.exp(h), rtol)
        check("where", lambda: sd.where(t > t.flip(0), t, 0),
              lambda: np.where(h > np.flip(h, 0), h, 0).astype(h.dtype), 0)
        dims = tuple(int(d) for d in np.flatnonzero(rng.random(t.ndim) < 0.5))
        if h.dtype.kind == "f":
            check(f"sum{dims}", lambda: t.sum(dims), lambda: h.sum(dims),
                  max(rtol, 1e-4 if dtype == np.float32 else 1e-10))
        check(f"max{dims}", lambda: t.max(dims) if h.size else t, lambda: h.max(dims) if h.size else h, 0)
        d = int(rng.integers(0, t.ndim))
        check(f"argmax{d}", lambda: t.argmax(d), lambda: h.argmax(d), 0)
        idx = rng.integers(-h.shape[d], h.shape[d], 4)
        check(f"index_select{d}", lambda: t.index_select(idx.tolist(), d), lambda: np.take(h, idx, axis=d), 0)
        check(f"cat{d}", lambda: sd.cat([t, t.flip(d)], d), lambda: np.concatenate([h, np.flip(h, d)], d), 0)
        if h.dtype.kind == "f":  # the fused chains: one kernel each (softmax two, around its reductions)
            tol = max(rtol, 1e-5)
            check("fused relu(a*b + c)", lambda: FUSED["relu(a*b + c)"](t, t.flip(-1), t),
                  lambda: np.maximum(h * np.flip(h, -1) + h, 0), rtol)
            check("fused tanh-GELU", lambda: FUSED["tanh-GELU"](t),
                  lambda: 0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h))), tol)
            check("fused softmax(-1)", lambda: FUSED["softmax(-1)"](t),
                  lambda: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(h - h.max(-1, keepdims=True))), tol)
            if t.ndim == 2:
                check("fused a*b.t() + bias", lambda: FUSED["a*b.t() + bias"](t, t.t(), t[0]),
                      lambda: h * h + h[0], rtol)
        if h.dtype.kind == "f" and t.ndim >= 2:
            check("matmul", lambda: t @ t.transpose(-1, -2), lambda: h @ np.swapaxes(h, -1, -2),
                  max(rtol, 1e-4 if dtype == np.float32 else 1e-10))
    return checks, failures


# ---------------------------------------------------------------------------
# speed


def _time(fn, sync, reps: int = 5) -> float:
    fn()
    sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def speed(print_row) -> None:
    from ... import devices

    backend = devices.cuda_backend("bench --cuda")  # numba.cuda only through the backend
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and not torch.cuda.is_available():
        torch = None
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
    sync = backend.storage.synchronize
    tsync = torch.cuda.synchronize if torch is not None else sync
    rng = np.random.default_rng(0)

    def device(shape, dtype):
        return sd.from_numpy(rng.random(shape, dtype=np.float32).astype(dtype)).to_device("cuda")

    def d2d(nbytes):
        src, dst = backend.alloc(nbytes, np.uint8).data, backend.alloc(nbytes, np.uint8).data
        return nbytes * 2 / _time(lambda: dst.copy_to_device(src), sync)

    print_row(("case", "strided TB/s", "share of d2d", "torch TB/s" if torch else "", "strided/torch" if torch else ""))

    def row(name, ours, moved, theirs=None):
        bw = moved / _time(ours, sync)
        base = d2d(moved // 2)
        cells = [name, f"{bw / 1e12:.3f}", f"{bw / base:.2f}"]
        if torch is not None and theirs is not None:
            tb = moved / _time(theirs, tsync)
            cells += [f"{tb / 1e12:.3f}", f"{bw / tb:.2f}"]
        print_row(tuple(cells))

    def tt(t):
        if t.dtype is sd.bf16:
            return torch.from_dlpack(t)  # zero-copy; bf16 has no __cuda_array_interface__ typestr
        return torch.as_tensor(t, device="cuda")  # zero-copy through __cuda_array_interface__

    n = 16384
    for dtype, label in ((np.float32, "f32"), (_BF16, "bf16")):
        a = device((n, n), dtype)
        ta = tt(a) if torch is not None else None
        row(f"transpose copy {n}^2 {label}", lambda a=a: a.t().contiguous(), 2 * a.numel * a.storage.data.itemsize,
            (lambda ta=ta: ta.t().contiguous()) if torch is not None else None)
        del a, ta  # 1 GiB each: gone before the next dtype's
    b = device((512, 512, 256), np.float32)
    tb = tt(b) if torch is not None else None
    for perm in ((2, 0, 1), (1, 2, 0)):
        row(f"permute{perm} 512x512x256 f32", lambda: b.permute(perm).contiguous(), 2 * b.numel * 4,
            (lambda: tb.permute(perm).contiguous()) if torch is not None else None)
    m = 8192
    x, y = device((m, m), np.float32), device((m, m), np.float32)
    tx, ty = (tt(x), tt(y)) if torch is not None else (None, None)
    row(f"a + b.t() {m}^2 f32", lambda: x + y.t(), 3 * x.numel * 4,
        (lambda: tx + ty.t()) if torch is not None else None)
    for dim in (0, 1):
        row(f"sum(dim={dim}) {m}^2 f32", lambda: x.sum(dim), x.numel * 4,
            (lambda: tx.sum(dim)) if torch is not None else None)
    flops = 2 * m ** 3
    for label, (p, q) in (("f32", (x, y)), ("bf16", (x.to_dtype(sd.bf16), y.to_dtype(sd.bf16)))):
        del tx, ty
        tx, ty = (tt(p), tt(q)) if torch is not None else (None, None)
        ours = flops / _time(lambda: p @ q, sync, reps=3)
        cells = [f"matmul {m}^3 {label} (TFLOP/s)", f"{ours / 1e12:.1f}", ""]
        if torch is not None:
            theirs = flops / _time(lambda: tx @ ty, tsync, reps=3)
            cells += [f"{theirs / 1e12:.1f}", f"{ours / theirs:.2f}"]
        print_row(tuple(cells))
    _fused_rows(print_row, torch, tt, sync, tsync, device)


def _fused_rows(print_row, torch, tt, sync, tsync, device, sizes=(2048, 8192, 16384)) -> None:
    """The fused chains in milliseconds: eager, fused, PyTorch eager and torch.compile."""
    compiled = {}
    if torch is not None:
        for name, (fn, _) in _CHAINS.items():
            try:
                compiled[name] = torch.compile(fn)
            except Exception:  # no compiler on the machine: no column
                pass
    print_row(("fused chain (ms)", "eager", "fused", "torch" if torch else "", "torch.compile" if compiled else "",
               "torch/fused" if torch else ""))  # the time ratio: above 1, fused is faster
    for n in sizes:
        for name, (fn, shapes) in _CHAINS.items():
            args = [device(s, np.float32) for s in shapes(n)]
            fused = FUSED[name]
            cells = [f"{name} {n}^2 f32", f"{_time(lambda: fn(*args), sync) * 1e3:.3f}"]
            ours = _time(lambda: fused(*args), sync)
            cells.append(f"{ours * 1e3:.3f}")
            if torch is not None:
                targs = [tt(a) for a in args]
                theirs = _time(lambda: fn(*targs), tsync)
                cells.append(f"{theirs * 1e3:.3f}")
                comp = compiled.get(name)
                try:
                    cells.append(f"{_time(lambda: comp(*targs), tsync) * 1e3:.3f}" if comp is not None else "")
                except Exception:  # torch.compile failing at its first call: no cell
                    compiled.pop(name, None)
                    cells.append("")
                cells.append(f"{theirs / ours:.2f}")
            print_row(tuple(cells))  # the next chain's operands replace these (the closures share the names)


def main(sizes: str = "full", json_path: str | None = None) -> int:
    """Run the check; 0 when every correctness check passed."""
    from ... import devices

    try:
        devices.cuda_backend("bench --cuda")
    except sd.StridedError as e:
        print(e)
        return 2
    small = sizes == "small"
    t0 = time.perf_counter()
    count, side = (12, 4) if small else (300, 9)
    checks, failures = correctness(count, side)
    print(f"correctness: {checks - len(failures)}/{checks} checks on {count} random layouts passed "
          f"({time.perf_counter() - t0:.1f} s)")
    for name, layout in failures[:20]:
        print(f"  FAILED {name} on {layout}")
    rows = []
    if not small:
        def print_row(cells):
            rows.append(cells)
            print(" | ".join(f"{c:<28}" if i == 0 else f"{c:>14}" for i, c in enumerate(cells) if c != ""))

        speed(print_row)
    if json_path:
        import json

        with open(json_path, "w") as f:
            json.dump({"checks": checks, "failures": [list(x) for x in failures], "rows": rows}, f, indent=1)
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 1 if failures else 0

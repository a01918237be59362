"""``python -m strided bench --fused``: chains of ops, fused and not, beside NumPy, numexpr
and PyTorch (eager, and ``torch.compile`` where it works on the machine).

Each library is timed in its own processes, alternating (``harness.in_processes``), so no
pool stalls another.  ``strided`` is the eager chain, ``fused`` the same function under
``strided.fuse``; numexpr appears where one expression can say the chain.  The first call
of the fused function and of ``torch.compile`` in a fresh process is reported apart
(``first call``): it traces and compiles, or loads the kernels numba cached on disk.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from .cases import network_data, numpy_network, torch_network
from .harness import ONLY, Case, in_processes, run_case

LIBS = ("strided", "fused", "numpy", "numexpr", "torch", "torch.compile")
SIZES = (64, 256, 1024, 2048)


def _optional(name):
    if ONLY not in (None, name.split(".")[0]):
        return None
    try:
        return __import__(name)
    except Exception:
        return None


def _torch():
    from .harness import torch_or_none

    return torch_or_none()


# -- the chains: one function each, written against the tensor interface ------------------------

def relu_fma(a, b, c):
    return (a * b + c).relu()


def bias_t(a, b, bias):
    return a * b.t() + bias


def gelu(x):
    return 0.5 * x * (1.0 + (0.7978845608028654 * (x + 0.044715 * x * x * x)).tanh())


def softmax(x):
    return x.softmax(-1)


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    return d / (var + 1e-5).sqrt() * w + b


def add(a, b):
    return a + b


def five_ops(a, b):
    return ((a * b + a) * 0.5 - b).relu()


def _np_chains(np_):
    return {
        "relu(a*b + c)": lambda a, b, c: np_.maximum(a * b + c, 0),
        "a*b.t() + bias": lambda a, b, bias: a * b.T + bias,
        "tanh-GELU": lambda x: 0.5 * x * (1.0 + np_.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))),
        "softmax(-1)": lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np_.exp(x - x.max(-1, keepdims=True))),
        "layer norm(-1)": lambda x, w, b: (lambda d: d / np_.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * w + b)(
            x - x.mean(-1, keepdims=True)),
        "a + b (one eager add)": lambda a, b: a + b,
        "5 ops": lambda a, b: np_.maximum((a * b + a) * 0.5 - b, 0),
    }


_NUMEXPR = {
    "relu(a*b + c)": "where(a * b + c > 0, a * b + c, 0)",
    "a*b.t() + bias": "a * bt + bias",
    "tanh-GELU": "0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))",
    "5 ops": "where((a * b + a) * 0.5 - b > 0, (a * b + a) * 0.5 - b, 0)",
}

_OURS = {"relu(a*b + c)": relu_fma, "a*b.t() + bias": bias_t, "tanh-GELU": gelu, "softmax(-1)": softmax,
         "layer norm(-1)": layer_norm, "a + b (one eager add)": add, "5 ops": five_ops}


def _inputs(name, n, rng):
    m = lambda *s: rng.standard_normal(s, dtype=np.float32)
    if name == "relu(a*b + c)":
        return m(n, n), m(n, n), m(n, n)
    if name == "a*b.t() + bias":
        return m(n, n), m(n, n), m(n)
    if name in ("tanh-GELU", "softmax(-1)"):
        return (m(n, n),)
    if name == "layer norm(-1)":
        return m(n, n), m(n), m(n)
    return m(n, n), m(n, n)


def chain_cases(sizes=SIZES) -> list:
    import strided as sd

    cases = []
    for name in _OURS:
        for n in sizes:
            def make(name=name, n=n):
                rng = np.random.default_rng(3)
                arrs = _inputs(name, n, rng)
                fns = {}
                if ONLY in (None, "strided", "fused"):
                    ts = [sd.from_numpy(a) for a in arrs]
                    fns["strided"] = lambda: _OURS[name](*ts)
                    fused = sd.fuse(_OURS[name])
                    t0 = time.perf_counter()
                    fused(*ts)
                    _FIRST[(name, n, "fused")] = time.perf_counter() - t0
                    fns["fused"] = lambda: fused(*ts)
                if ONLY in (None, "numpy"):
                    f = _np_chains(np)[name]
                    fns["numpy"] = lambda: f(*arrs)
                ne = _optional("numexpr")
                if ne is not None and name in _NUMEXPR:
                    names = {"relu(a*b + c)": "abc", "a*b.t() + bias": ("a", "bt", "bias"), "tanh-GELU": "x",
                             "5 ops": "ab"}[name]
                    local = dict(zip(names, arrs))
                    if "bt" in local:
                        local["bt"] = local["bt"].T
                    expr = _NUMEXPR[name]
                    fns["numexpr"] = lambda: ne.evaluate(expr, local_dict=local)
                torch = _torch()
                if torch is not None:
                    tt = [torch.from_numpy(a) for a in arrs]
                    chain = _torch_chain(torch, name)
                    if ONLY in (None, "torch"):
                        fns["torch"] = lambda: chain(*tt)
                    if ONLY in (None, "torch.compile"):
                        try:
                            comp = torch.compile(chain)
                            t0 = time.perf_counter()
                            comp(*tt)
                            _FIRST[(name, n, "torch.compile")] = time.perf_counter() - t0
                            fns["torch.compile"] = lambda: comp(*tt)
                        except Exception:  # no compiler toolchain, or a backend failure: no column
                            pass
                return fns

            cases.append(Case("fused chains", name, f"{n}^2", make))
    return cases


def _torch_chain(torch, name):
    return {
        "relu(a*b + c)": lambda a, b, c: torch.relu(a * b + c),
        "a*b.t() + bias": lambda a, b, bias: a * b.t() + bias,
        "tanh-GELU": lambda x: 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))),
        "softmax(-1)": lambda x: torch.softmax(x, -1),
        "layer norm(-1)": lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        "a + b (one eager add)": lambda a, b: a + b,
        "5 ops": lambda a, b: torch.relu((a * b + a) * 0.5 - b),
    }[name]


def network_cases(passes: int = 200) -> list:
    """Seed 004's network (three 256->256 layers, batch 64) with the bias add and ReLU fused
    after each product; plain weights, and Var weights forward and backward."""
    import strided as sd

    def net(x, w1, b1, w2, b2, w3, b3):
        h = (x @ w1.t() + b1).relu()
        h = (h @ w2.t() + b2).relu()
        return (h @ w3.t() + b3).relu()

    cases = []
    for tracked in (False, True):
        def make(tracked=tracked):
            x_np, layers = network_data()
            ws = [a for layer in layers for a in layer]  # w1, b1, w2, b2, w3, b3: net's arguments
            fns = {}
            if ONLY in (None, "strided", "fused"):
                wrap = sd.Var if tracked else sd.from_numpy
                ours = [wrap(w) for w in ws]
                x = sd.from_numpy(x_np)
                fused = sd.fuse(net)

                def run(f):
                    def go():
                        for _ in range(passes):
                            y = f(x, *ours)
                            if tracked:
                                y.sum_all().backward()
                        return y
                    return go

                fns["strided"] = run(net)
                t0 = time.perf_counter()
                fused(x, *ours)
                _FIRST[("network", tracked, "fused")] = time.perf_counter() - t0
                fns["fused"] = run(fused)
            if ONLY in (None, "numpy") and not tracked:
                fns["numpy"] = numpy_network(x_np, layers, passes)
            torch = _torch()
            if torch is not None and ONLY in (None, "torch"):
                fns["torch"] = torch_network(torch, x_np, layers, passes, tracked, backward=tracked)
            return fns

        label = "Var weights, forward and backward" if tracked else "plain tensors, forward"
        cases.append(Case("seed 004 network, epilogues fused", f"{passes} passes, {label}", "64x256", make))
    return cases


_FIRST: dict = {}


def collect(quick: bool):
    return chain_cases((64, 1024) if quick else SIZES) + network_cases(50 if quick else 200)


def _fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def table(cases, first) -> str:
    head = f"{'chain':<30} {'size':>9} " + " ".join(f"{lib:>13}" for lib in LIBS) + \
           f" {'fused/torch':>11} {'fused/nexpr':>11} {'1st fused':>10} {'1st compile':>11}"
    lines = [head, "-" * len(head)]
    for c in cases:
        r = c.results
        cells = " ".join(f"{_fmt(r.get(lib)):>13}" for lib in LIBS)
        ft = r["fused"] / r["torch"] if r.get("fused") and r.get("torch") else None
        fn = r["fused"] / r["numexpr"] if r.get("fused") and r.get("numexpr") else None
        key = (c.name, int(c.size.split("^")[0])) if "^" in c.size else ("network", "Var" in c.name)
        f1, f2 = first.get((*key, "fused")), first.get((*key, "torch.compile"))
        lines.append(f"{c.name:<30} {c.size:>9} {cells} {ft and f'{ft:11.2f}' or '          -'} "
                     f"{fn and f'{fn:11.2f}' or '          -'} {_fmt(f1):>10} {_fmt(f2):>11}")
    return "\n".join(lines)


def main(quick: bool = False, json_path: str | None = None, alternations: int = 2) -> int:
    import json

    cases = collect(quick)
    rounds, per_block, budget = (3, 3, 1.0) if quick else (5, 5, 4.0)
    if ONLY is not None:  # one library's process: time it and write what it saw
        for c in cases:
            run_case(c, rounds, per_block, budget)
        with open(json_path, "w") as f:
            rows = [{"group": c.group, "case": c.name, "size": c.size, "seconds": c.results} for c in cases]
            json.dump({"rows": rows, "first": [[list(k), v] for k, v in _FIRST.items()]}, f)
        return 0
    t0 = time.perf_counter()
    import importlib.util

    libs = [lib for lib in LIBS if lib in ("strided", "fused", "numpy")
            or importlib.util.find_spec(lib.split(".")[0]) is not None]
    first: dict = {}
    found = in_processes(["--fused"] + (["--quick"] if quick else []), alternations, libs, first)
    for c in cases:
        for lib, values in found.get((c.group, c.name, c.size), {}).items():
            c.results[lib] = statistics.median(values)
            c.spread[lib] = (min(values), max(values))
    print(table(cases, first))
    print(f"\n{len(cases)} cases in {time.perf_counter() - t0:.1f} s, each library in its own processes, medians of "
          f"{alternations} alternating runs; '1st' columns: the first call in a fresh process (trace and compile, or "
          "load the kernels cached on disk).")
    if json_path:
        with open(json_path, "w") as f:
            json.dump([{"case": c.name, "size": c.size, "seconds": c.results, "spread": c.spread} for c in cases], f,
                      indent=1)
    return 0

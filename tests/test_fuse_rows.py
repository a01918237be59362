"""strided.fuse's row programs (fusion/rows.py) against the eager chain: the same bits.

Softmax, layer norm and the like reduce along the last dim and use each row's results on
that row; fused, they run as one kernel per call that walks the rows once.  The oracle is
the function run eagerly; the layouts are the ones a row program reads in place (lead dims
permuted, flipped or strided, broadcast weights, rows longer than a reduction leaf) and
the ones it leaves to the group-by-group lowering (rows read backwards or across memory,
few long rows that eager splits between threads), which must give the same bits too."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strided as sd
from strided.kernels.common import BLOCK

from two_processes import twice

RNG = np.random.default_rng(7)


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    return d / (var + 1e-5).sqrt() * w + b


def rms_norm(x, w, b):
    return x / ((x * x).mean(-1, keepdim=True) + 1e-6).sqrt() * w


def shifted(x, w, b):
    return (x - x.min(-1, keepdim=True)) * b + x.max(-1, keepdim=True)


def masked_sum(x, w, b):
    return x * sd.where(x > 0, x, w).sum(-1, keepdim=True)


FNS = {
    "softmax": lambda x, w, b: x.softmax(-1),
    "log_softmax": lambda x, w, b: x.log_softmax(-1),
    "layer_norm": layer_norm,
    "rms_norm": rms_norm,
    "shifted": shifted,
    "masked_sum": masked_sum,
}
FUSED = {name: sd.fuse(fn) for name, fn in FNS.items()}


def _array(shape, dtype, nan=False):
    a = (RNG.standard_normal(shape) * 3).astype(dtype)
    if nan and a.size:
        a.flat[RNG.integers(0, a.size)] = np.nan
    return a


def _same(got, want):
    assert got.shape == want.shape and got.dtype is want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    g, w = np.ascontiguousarray(got.numpy()), np.ascontiguousarray(want.numpy())
    nan = np.isnan(w)
    assert (np.isnan(g) == nan).all()
    assert np.where(nan, 0, g).tobytes() == np.where(nan, 0, w).tobytes()


def _check(name, x, w, b, rows: bool):
    got = FUSED[name](x, w, b)
    _same(got, FNS[name](x, w, b))
    explained = FUSED[name].explain(x, w, b)
    assert ("(rows" in explained) is rows, explained
    return got


def _weights(n, dtype):
    return sd.from_numpy(_array(n, dtype)), sd.from_numpy(_array(n, dtype))


@pytest.mark.parametrize("name", sorted(FNS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_programs_are_eagers_bits(name, dtype):
    x = sd.from_numpy(_array((12, 33), dtype, nan=True))
    _check(name, x, *_weights(33, dtype), rows=True)


@pytest.mark.parametrize("case", ["permuted", "flipped lead", "strided rows", "long rows", "two wide", "one row",
                                  "broadcast rows"])
def test_layouts_a_row_program_reads_in_place(case):
    w, b = _weights(BLOCK + 7 if case == "long rows" else 2 if case == "two wide" else 40, np.float32)
    n = w.shape[0]
    if case == "permuted":
        x = sd.from_numpy(_array((3, 5, n), np.float32)).permute(1, 0, 2)
    elif case == "flipped lead":
        x = sd.from_numpy(_array((6, n), np.float32)).flip(0)
    elif case == "strided rows":
        x = sd.from_numpy(_array((9, n + 5), np.float32))[::2, 3:3 + n]
    elif case == "long rows":
        x = sd.from_numpy(_array((3, n), np.float32, nan=False))
    elif case == "two wide":
        x = sd.from_numpy(_array((5, n), np.float32))
    elif case == "one row":
        x = sd.from_numpy(_array((n,), np.float32))
    else:  # one row read for every row: stride 0 along the lead dim
        x = sd.from_numpy(_array((1, n), np.float32)).expand(4, n)
    for name in ("softmax", "layer_norm", "shifted"):
        _check(name, x, w, b, rows=True)


@pytest.mark.parametrize("case", ["transposed", "rows backwards", "split by eager", "one column"])
def test_layouts_left_to_the_group_lowering_are_eagers_bits_too(case):
    if case == "transposed":
        x = sd.from_numpy(_array((40, 12), np.float32)).t()
    elif case == "rows backwards":
        x = sd.from_numpy(_array((12, 40), np.float32)).flip(1)
    elif case == "split by eager":  # two rows long enough that eager's sum splits each over threads
        x = sd.from_numpy(_array((2, 300_000), np.float32))
    else:
        x = sd.from_numpy(_array((7, 1), np.float32))
    w, b = _weights(x.shape[-1], np.float32)
    split = case == "split by eager" and sd.get_num_threads() > 1
    rows = case == "split by eager" and not split
    _check("softmax", x, w, b, rows=rows)


def test_many_rows_run_in_parallel_and_match():
    x = sd.from_numpy(_array((700, 300), np.float32, nan=True))
    w, b = _weights(300, np.float32)
    for name in ("softmax", "layer_norm"):
        _check(name, x, w, b, rows=True)


def test_a_parallel_row_program_reads_read_only_and_unaligned_buffers():
    # The shared driver types its inputs read-only: writable and read-only buffers both run
    # through it; an unaligned one runs on the serial kernel; each gives eager's bits.
    if sd.get_num_threads() < 2:
        pytest.skip("one thread: no parallel row program")
    w, b = _weights(300, np.float32)
    a = _array((700, 300), np.float32)
    frozen = a.copy()
    frozen.flags.writeable = False
    raw = np.frombuffer(bytearray(a.nbytes + 1), np.uint8)[1:].view(np.float32).reshape(a.shape)
    raw[...] = a  # a buffer one byte off its alignment: SERIAL's dispatcher reads it
    assert not raw.flags.aligned
    for name in ("softmax", "layer_norm"):
        for x in (sd.from_numpy(a.copy()), sd.from_numpy(frozen), sd.from_numpy(raw)):
            assert "rows (parallel)" in FUSED[name].explain(x, w, b)
            got = FUSED[name](x, w, b)
            _same(got, FNS[name](x, w, b))
            if name == "softmax":  # and NumPy's answer, to f32 rounding
                e = np.exp(a - a.max(-1, keepdims=True))
                np.testing.assert_allclose(got.numpy(), e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_a_second_process_loads_a_parallel_row_program_and_its_driver_from_the_cache(tmp_path):
    if sd.get_num_threads() < 2:
        pytest.skip("one thread: no parallel row program")
    code = textwrap.dedent("""
        import sys
        import numpy as np, strided as sd
        f = sd.fuse(lambda x: x.softmax(-1))
        x = sd.from_numpy(np.arange(700 * 300, dtype=np.float32).reshape(700, 300) / 7000)
        f(x)
        k = [s for _, s in f._programs[next(iter(f._programs))].steps if type(s).__name__ == "Kernel"][0]
        serial = sys.modules[k.module].SERIAL
        drivers = [m.PARALLEL for n, m in sys.modules.items() if n.startswith("strided_kernel_chunks_")]
        print(k.path.replace(" ", "_"), len(drivers))
        for d in (serial, *drivers):
            print(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))
    """)
    first, second = twice(code, tmp_path)
    assert first == ["rows_(parallel)", "1", "0", "1", "0", "1"]  # both compiled
    assert second == ["rows_(parallel)", "1", "1", "0", "1", "0"]  # both loaded, no compile


def test_a_kept_row_program_reads_new_values_and_new_buffers():
    w, b = _weights(16, np.float32)
    x = sd.from_numpy(_array((4, 16), np.float32))
    first = FUSED["layer_norm"](x, w, b)
    y = sd.from_numpy(_array((4, 16), np.float32))
    _same(FUSED["layer_norm"](y, w, b), layer_norm(y, w, b))
    _same(first, layer_norm(x, w, b))  # the first result is its own buffer
    x._storage.data[:] = _array(64, np.float32)
    _same(FUSED["layer_norm"](x, w, b), layer_norm(x, w, b))


def test_a_row_program_of_vars_has_eagers_gradients():
    a = _array((6, 9), np.float32)
    w, b = _array(9, np.float32), _array(9, np.float32)
    ve = [sd.Var(v) for v in (a, w, b)]
    ge = layer_norm(*ve).sum_all().backward()
    vf = [sd.Var(v) for v in (a, w, b)]
    gf = FUSED["layer_norm"](*vf).sum_all().backward()
    for x, y in zip(ve, vf):
        _same(gf[y], ge[x])


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(lead=st.lists(st.integers(1, 4), min_size=0, max_size=2), n=st.integers(2, 70),
       name=st.sampled_from(["softmax", "layer_norm", "masked_sum"]), dtype=st.sampled_from([np.float32, np.float64]),
       perm=st.booleans(), flip=st.booleans(), step=st.integers(1, 2))
def test_drawn_row_layouts_are_eagers_bits(lead, n, name, dtype, perm, flip, step):
    shape = (*lead, n * step)
    x = sd.from_numpy(_array(shape, dtype, nan=True))
    if step > 1:
        x = x[..., ::step]
    if flip and lead:
        x = x.flip(0)
    if perm and len(lead) == 2:
        x = x.permute(1, 0, 2)
    w, b = _weights(n, dtype)
    got = FUSED[name](x, w, b)
    _same(got, FNS[name](x, w, b))


PER_ROW = {
    "logsumexp": lambda x: x.logsumexp(-1),
    "logsumexp keepdim": lambda x: x.logsumexp(-1, keepdim=True),
    "var": lambda x: x.var(-1),
    "std keepdim, corrected": lambda x: x.std(-1, keepdim=True, correction=1),
    "scaled mean": lambda x: x.mean(-1) * 2 - x.max(-1),
}
FUSED_PER_ROW = {name: sd.fuse(fn) for name, fn in PER_ROW.items()}


@pytest.mark.parametrize("name", sorted(PER_ROW))
@pytest.mark.parametrize("shape", [(6, 9), (2, 3, 5), (7,)])
def test_one_value_per_row_is_a_row_program_with_eagers_bits(name, shape):
    x = sd.from_numpy(_array(shape, np.float64 if len(shape) == 3 else np.float32, nan=len(shape) == 2))
    _same(FUSED_PER_ROW[name](x), PER_ROW[name](x))
    assert "(rows" in FUSED_PER_ROW[name].explain(x)


def test_a_per_row_value_broadcast_along_the_row_itself_is_left_to_the_group_lowering():
    def fn(x):
        return x - x.mean(-1)  # (n,) against (n, n): the means run along the last dim

    x = sd.from_numpy(_array((6, 6), np.float32))
    f = sd.fuse(fn)
    _same(f(x), fn(x))
    assert "(rows" not in f.explain(x)


def test_a_second_process_loads_the_row_kernel_from_the_cache(tmp_path):
    code = textwrap.dedent("""
        import sys
        import numpy as np, strided as sd
        f = sd.fuse(lambda x: x.softmax(-1))
        x = sd.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4) / 7)
        f(x)
        k = [s for _, s in f._programs[next(iter(f._programs))].steps if type(s).__name__ == "Kernel"][0]
        d = sys.modules[k.module].SERIAL
        print(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))
    """)
    first, second = twice(code, tmp_path)
    assert first == ["0", "1"]  # compiled
    assert second == ["1", "0"]  # loaded, no compile


def test_a_row_program_of_heavy_chains_computes_them_inside_its_loops():
    """Each expression of a row program goes into the row loops (a call per element, which
    LLVM left for a chain of two transcendental functions, keeps the loops scalar), and the
    answer is eager's."""
    import re
    import sys

    from numba import njit

    x = sd.from_numpy(_array((4, 3 * BLOCK // 4 + 5), np.float32))
    fn = lambda x: (x.exp().tanh() - x.max(-1, keepdim=True)).sum(-1)
    f = sd.fuse(fn, strict=True)
    _same(f(x), fn(x))
    module = sys.modules[re.search(r"kernel (strided_kernel_rows\S+)", f.explain(x)).group(1)]
    sig = module.SERIAL.signatures[0]
    rows = njit(error_model="numpy")(module.rows)  # compiled here, where its IR can be read
    rows.compile(sig)
    ir = rows.inspect_llvm(sig)
    for name in (k for k in vars(module) if re.fullmatch(r"e\d+", k)):  # numba mangles e0 as 2e0B...
        assert not re.search(rf"call [^\n]*{len(name)}{name}B", ir), f"{name} is called, not inlined"
    assert re.search(r"<\d+ x float>", ir), "no row loop is vectorised"

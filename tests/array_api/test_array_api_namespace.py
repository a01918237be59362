"""strided as an Array API namespace: its functions against NumPy and array_api_strict (the
standard's reference), on tensors of drawn layouts (gaps, flips, stride-0 broadcasts,
zero-size dims), so every composition is checked on views and not only on dense inputs."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import array_api_strict as xps  # the standard's reference implementation (in the test extras)
import strided as sd
from strategies import layouts_of_shape, np_view, shapes


@st.composite
def tensors(draw, dtype=np.float64, min_rank=0, max_rank=4, shape=None, allow_broadcast=True):
    """(tensor, the NumPy array it views): random values under a random layout of its buffer."""
    if shape is None:
        shape = draw(shapes(min_rank=min_rank, max_rank=max_rank, max_size=4, max_numel=128))
    lay, n = draw(layouts_of_shape(shape, allow_broadcast=allow_broadcast))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if np.dtype(dtype) == np.bool_:
        buf = rng.integers(0, 2, n).astype(np.bool_)
    elif np.dtype(dtype).kind in "iu":
        buf = rng.integers(0, 7, n).astype(dtype)
    else:
        buf = rng.standard_normal(n).astype(dtype)
    t = sd.as_strided(sd.from_numpy(buf), lay.shape, lay.stride, lay.offset)
    return t, np_view(buf, lay)


def strict(a: np.ndarray):
    return xps.asarray(np.ascontiguousarray(a))


def same(got, want, *, rtol=1e-12, atol=0.0, dtype=True):
    want = np.asarray(want)
    assert isinstance(got, sd.Tensor), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype:
        assert got.dtype.np == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=True)


# -- the namespace itself ------------------------------------------------------------------------


def test_namespace_version_constants_and_dtype_names():
    t = sd.zeros((2, 3))
    assert t.__array_namespace__() is sd
    assert t.__array_namespace__(api_version="2024.12") is sd
    with pytest.raises(sd.StridedError, match="api_version"):
        t.__array_namespace__(api_version="1999.01")
    assert sd.__array_api_version__ == "2024.12"
    assert sd.e == math.e and sd.pi == math.pi and sd.inf == math.inf and math.isnan(sd.nan)
    assert sd.newaxis is None
    for name, short in [("float32", "f32"), ("float64", "f64"), ("uint8", "u8"), ("uint32", "u32"),
                        ("int64", "i64"), ("bool", "bool"), ("float16", "f16"), ("bfloat16", "bf16")]:
        assert getattr(sd, name) is getattr(sd, short)
    assert np.dtype(sd.float32) == np.float32 and np.dtype(sd.bf16) == np.dtype("bfloat16")


def test_inspection_namespace():
    info = sd.__array_namespace_info__()
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    d = info.default_dtypes()
    assert d["real floating"] is sd.float32 and d["integral"] is sd.int64 and d["indexing"] is sd.int64
    assert sd.asarray(1.0).dtype is d["real floating"] and sd.asarray(1).dtype is d["integral"]
    assert set(info.dtypes()) == {"bool", "float32", "float64", "complex64", "complex128", "uint8", "uint16",
                                  "uint32", "uint64", "int8", "int16", "int32", "int64"}
    assert set(info.dtypes(kind="integral")) == {"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
                                                 "int64"}
    assert d["complex floating"] is sd.complex64  # the complex of the default float
    assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32", "float64"}
    with pytest.raises(sd.StridedError, match="device"):
        info.dtypes(device="gpu")


def test_array_attributes():
    x = sd.asarray(np.arange(24.0).reshape(2, 3, 4))
    assert x.size == 24 and sd.zeros((0, 3)).size == 0
    assert x.device == "cpu"
    np.testing.assert_array_equal(x.mT.numpy(), np.swapaxes(np.arange(24.0).reshape(2, 3, 4), -1, -2))
    assert sd.same_buffer(x.mT, x)
    assert x.to_device("cpu") is x
    with pytest.raises(sd.StridedError, match="to_device"):
        x.to_device("cuda:7")
    with pytest.raises(sd.StridedError, match="mT"):
        sd.zeros((3,)).mT
    i = sd.asarray(3)
    assert list(range(10))[i] == 3 and int(i) == 3 and float(i) == 3.0 and complex(i) == 3 + 0j
    with pytest.raises(TypeError):
        [0, 1][sd.asarray(1.0)]
    assert bool(sd.asarray(True)) is True
    np.testing.assert_array_equal((+x).numpy(), x.numpy())
    assert not sd.same_buffer(+x, x)


# -- creation --------------------------------------------------------------------------------------


def test_asarray_copy_and_sharing():
    a = np.arange(6.0).reshape(2, 3)[:, ::-1]
    t = sd.asarray(a)
    assert t.dtype is sd.f64 and np.shares_memory(t.numpy(), a)
    assert sd.asarray(t) is t
    c = sd.asarray(a, copy=True)
    a[0, 0] = 99
    assert c.numpy()[0, 0] == 2.0 and t.numpy()[0, 0] == 99
    assert sd.asarray(t, dtype=sd.f32).dtype is sd.f32
    with pytest.raises(ValueError, match="copy=False"):
        sd.asarray(t, dtype=sd.f32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        sd.asarray([1.0, 2.0], copy=False)
    assert sd.asarray(t, copy=False) is t
    assert sd.asarray([[1, 2], [3, 4]]).dtype is sd.i64
    assert sd.asarray([True, False]).dtype is sd.bool
    assert sd.asarray([0.1], dtype=sd.f64).tolist() == [0.1]
    assert sd.asarray(2**40, dtype=sd.i64).item() == 2**40
    m = memoryview(np.arange(4, dtype=np.uint8))
    np.testing.assert_array_equal(sd.asarray(m).numpy(), np.arange(4, dtype=np.uint8))
    with pytest.raises(sd.StridedError, match="device"):
        sd.asarray([1.0], device="tpu")
    stacked = sd.asarray([sd.asarray(1.0), sd.asarray(2.0)])
    assert stacked.shape == (2,) and stacked.tolist() == [1.0, 2.0]


def test_asarray_of_a_dlpack_producer_shares_its_memory():
    torch = pytest.importorskip("torch")
    src = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).T
    t = sd.asarray(src)
    assert t.shape == (3, 2) and t.stride == (1, 3) and t.dtype is sd.f64
    src[0, 1] = 99.0
    assert t.numpy()[0, 1] == 99.0  # shared
    c = sd.asarray(src, copy=True)
    src[0, 1] = -1.0
    assert c.numpy()[0, 1] == 99.0  # copied


def test_creation_functions_against_strict():
    f = xps.float32  # strided's default float (strict's is float64)
    for got, want in [
        (sd.eye(3), xps.eye(3, dtype=f)), (sd.eye(3, 5, k=2), xps.eye(3, 5, k=2, dtype=f)),
        (sd.eye(4, 2, k=-1), xps.eye(4, 2, k=-1, dtype=f)), (sd.eye(2, 3, k=7), xps.eye(2, 3, k=7, dtype=f)),
        (sd.eye(3, dtype=sd.i64), xps.eye(3, dtype=xps.int64)),
        (sd.linspace(0, 1, 7), xps.linspace(0, 1, 7, dtype=f)),
        (sd.linspace(2, -3, 4, endpoint=False), xps.linspace(2, -3, 4, endpoint=False, dtype=f)),
        (sd.linspace(0, 1, 0), xps.linspace(0, 1, 0, dtype=f)),
        (sd.full((2, 2), 3), xps.full((2, 2), 3)), (sd.full((2,), True), xps.full((2,), True)),
        (sd.full((2,), 1.5), xps.full((2,), 1.5, dtype=f)),
        (sd.arange(5, device="cpu"), xps.arange(5)),
        (sd.zeros((2, 3), dtype=sd.uint8), xps.zeros((2, 3), dtype=xps.uint8)),
    ]:
        same(got, np.asarray(want), rtol=1e-7)
    x = sd.asarray(np.arange(6.0).reshape(2, 3)[:, ::2])
    for fn in ("zeros_like", "ones_like", "empty_like"):
        out = getattr(sd, fn)(x)
        assert out.shape == x.shape and out.dtype is x.dtype and not sd.same_buffer(out, x)
    same(sd.full_like(x, 7), np.full((2, 2), 7.0))
    same(sd.zeros_like(x, dtype=sd.i64), np.zeros((2, 2), np.int64))


@given(tensors(min_rank=2), st.integers(-4, 4))
def test_tril_triu_on_views(tx, k):
    t, a = tx
    same(sd.tril(t, k=k), np.tril(a, k))
    same(sd.triu(t, k=k), np.triu(a, k))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    a, b, c = np.arange(3.0), np.arange(4.0)[::-1], np.arange(2.0)
    got = sd.meshgrid(sd.asarray(a), sd.asarray(b), sd.asarray(c), indexing=indexing)
    want = xps.meshgrid(strict(a), strict(b), strict(c), indexing=indexing)
    for g, w in zip(got, want):
        same(g, np.asarray(w))
        g[(0,) * g.ndim] = -1  # fresh buffers: writable, and nothing else changes
    assert got[0].numpy()[(0,) * 3] == -1 and a[0] == 0


# -- data type functions -------------------------------------------------------------------------

PAIRS = [(a, b) for a in ("bool", "uint8", "uint32", "int64", "float32", "float64")
         for b in ("bool", "uint8", "uint32", "int64", "float32", "float64")]


@pytest.mark.parametrize("a, b", PAIRS)
def test_result_type_and_can_cast_follow_the_standard(a, b):
    sa, sb, xa, xb = getattr(sd, a), getattr(sd, b), getattr(xps, a), getattr(xps, b)
    try:
        want = xps.result_type(xa, xb)
    except TypeError:
        want = None  # a pair the standard leaves open: strided follows NumPy 2
    got = sd.result_type(sa, sb)
    if want is not None:
        name = [n for n in ("bool", "uint8", "uint32", "int64", "float32", "float64") if getattr(xps, n) == want][0]
        assert got is getattr(sd, name)
    else:
        assert got.np == np.result_type(sa.np, sb.np)
    assert sd.result_type(sd.zeros((1,), sa), sb) is got
    assert sd.can_cast(sa, sb) == xps.can_cast(xa, xb)
    assert (sd.zeros((2,), sa) + sd.zeros((2,), sb)).dtype is got  # the operators agree


def test_result_type_with_python_scalars():
    assert sd.result_type(sd.uint8, 3) is sd.uint8
    assert sd.result_type(sd.uint8, 3.0) is sd.float64
    assert sd.result_type(sd.float32, 3.0, True) is sd.float32
    assert sd.result_type(sd.bool, 1) is sd.int64
    with pytest.raises(sd.StridedError, match="result_type"):
        sd.result_type(1, 2.0)


def test_finfo_iinfo_isdtype():
    for name in ("float32", "float64"):
        got, want = sd.finfo(getattr(sd, name)), xps.finfo(getattr(xps, name))
        assert (got.bits, got.eps, got.max, got.min, got.smallest_normal) == (
            want.bits, want.eps, want.max, want.min, want.smallest_normal)
    assert sd.finfo(sd.bf16).bits == 16 and sd.finfo(sd.zeros(1, sd.f16)).eps == float(np.finfo(np.float16).eps)
    for name in ("uint8", "uint32", "int64"):
        got, want = sd.iinfo(getattr(sd, name)), xps.iinfo(getattr(xps, name))
        assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)
    with pytest.raises(sd.DTypeError, match="finfo"):
        sd.finfo(sd.int64)
    with pytest.raises(sd.DTypeError, match="iinfo"):
        sd.iinfo(sd.float32)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]
    for name in ("bool", "uint8", "uint32", "int64", "float32", "float64"):
        for kind in kinds:
            assert sd.isdtype(getattr(sd, name), kind) == xps.isdtype(getattr(xps, name), kind), (name, kind)
    assert sd.isdtype(sd.float32, (sd.int64, "real floating"))
    with pytest.raises(sd.DTypeError, match="isdtype"):
        sd.isdtype(sd.float32, "floaty")


def test_astype():
    x = sd.asarray(np.arange(6.0).reshape(2, 3).T)
    y = sd.astype(x, sd.int64)
    same(y, np.arange(6.0).reshape(2, 3).T.astype(np.int64))
    assert sd.astype(x, sd.float64, copy=False) is x
    z = sd.astype(x, sd.float64)
    assert z is not x and not sd.same_buffer(z, x)


# -- manipulation ------------------------------------------------------------------------------


DTYPES = st.sampled_from([np.float64, np.float32, np.int64, np.uint8, np.uint32, np.bool_])


@given(st.data())
def test_views_and_joins_against_numpy(data):
    t, a = data.draw(DTYPES.flatmap(lambda d: tensors(dtype=d, min_rank=1)), label="tensor")
    nd = a.ndim
    d = data.draw(st.integers(-nd, nd - 1), label="axis")
    same(sd.flip(t, axis=d), np.flip(a, d))
    same(sd.flip(t), np.flip(a))
    perm = data.draw(st.permutations(range(nd)), label="perm")
    same(sd.permute_dims(t, perm), np.transpose(a, perm))
    e = data.draw(st.integers(-nd, nd - 1), label="dest")
    same(sd.moveaxis(t, d, e), np.moveaxis(a, d, e))
    same(sd.expand_dims(t, axis=d), np.expand_dims(a, d))
    same(sd.expand_dims(t, axis=(0, -1)), np.expand_dims(a, (0, -1)))
    same(sd.concat([t, t], axis=d), np.concatenate([a, a], d))
    same(sd.concat([t, t], axis=None), np.concatenate([a, a], None))
    same(sd.stack([t, t, t], axis=d), np.stack([a, a, a], d))
    for got, want in zip(sd.unstack(t, axis=d), xps.unstack(strict(a), axis=d)):
        same(got, np.asarray(want))
        assert sd.same_buffer(got, t)
    shift = data.draw(st.integers(-5, 5), label="shift")
    same(sd.roll(t, shift, axis=d), np.roll(a, shift, d))
    same(sd.roll(t, shift), np.roll(a, shift))
    same(sd.roll(t, (shift, 1), axis=(d, 0)), np.roll(a, (shift, 1), (d, 0)))
    reps = data.draw(st.integers(0, 3), label="repeats")
    same(sd.repeat(t, reps, axis=d), np.repeat(a, reps, d))
    same(sd.repeat(t, reps), np.repeat(a, reps))
    counts = data.draw(st.lists(st.integers(0, 2), min_size=a.shape[d], max_size=a.shape[d]), label="counts")
    same(sd.repeat(t, sd.asarray(counts, dtype=sd.int64), axis=d), np.repeat(a, counts, d))
    tiles = data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=nd + 1).map(tuple), label="tiles")
    same(sd.tile(t, tiles), np.tile(a, tiles))
    same(sd.reshape(t, (-1,)), a.reshape(-1))
    assert not sd.same_buffer(sd.reshape(t, a.shape, copy=True), t)
    ones = tuple(i for i, n in enumerate(a.shape) if n == 1)
    same(sd.squeeze(t, axis=ones), np.squeeze(a, ones))


@given(tensors(min_rank=1), st.data())
def test_take_against_strict(tx, data):
    t, a = tx
    d = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    n = a.shape[d]
    idx = data.draw(st.lists(st.integers(-n, n - 1), max_size=5) if n else st.just([]), label="indices")
    i = np.array(idx, dtype=np.int64)
    same(sd.take(t, sd.asarray(i), axis=d), np.asarray(xps.take(strict(a), xps.asarray(i), axis=d)))
    if a.ndim == 1:
        same(sd.take(t, sd.asarray(i)), np.take(a, i))
    else:
        with pytest.raises(sd.ShapeError, match="take"):
            sd.take(t, sd.asarray(i))


@given(tensors(min_rank=1, allow_broadcast=False), st.data())
def test_boolean_mask_assignment_of_one_value(tx, data):
    t, a = tx
    lead = data.draw(st.integers(1, a.ndim), label="mask dims")
    mask = data.draw(st.lists(st.booleans(), min_size=int(np.prod(a.shape[:lead])),
                              max_size=int(np.prod(a.shape[:lead]))), label="mask")
    m = np.array(mask, dtype=bool).reshape(a.shape[:lead])
    value = data.draw(st.sampled_from([-2.5, 0, sd.asarray(3.0)]), label="value")
    want = a.copy()
    want[m] = value.item() if isinstance(value, sd.Tensor) else value
    t[sd.asarray(m)] = value
    same(t, want, rtol=0)
    np.testing.assert_array_equal(a, want)  # written in place, through the view


@given(tensors(min_rank=1), st.data())
def test_integer_array_indexing_against_numpy(tx, data):
    t, a = tx
    k = data.draw(st.integers(1, a.ndim), label="indexed dims")
    idx = []
    for d in range(k):
        n = a.shape[d]
        if n == 0:
            idx.append(np.zeros((0,), np.int64))
        elif data.draw(st.booleans(), label="int or array"):
            idx.append(data.draw(st.integers(-n, n - 1), label="int"))
        else:
            shape = data.draw(st.sampled_from([(2,), (1, 3), (3, 1), ()]), label="index shape")
            idx.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(shape)),
                                                   max_size=int(np.prod(shape))), label="values"),
                                dtype=np.int64).reshape(shape))
    if not any(isinstance(i, np.ndarray) for i in idx):
        idx[0] = np.array([idx[0]], np.int64)
    try:
        want = a[tuple(idx)]
    except IndexError:  # index shapes that do not broadcast: NumPy refuses too
        with pytest.raises(sd.StridedError):
            t[tuple(sd.asarray(i) if isinstance(i, np.ndarray) else i for i in idx)]
        return
    got = t[tuple(sd.asarray(i) if isinstance(i, np.ndarray) else i for i in idx)]
    same(got, want, rtol=0)
    # one array among slices: it replaces its own dim
    d = data.draw(st.integers(0, a.ndim - 1), label="array dim")
    n = a.shape[d]
    arr = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=3), label="one") if n else [], np.int64)
    key = tuple(slice(None, None, -1) if j != d else arr for j in range(a.ndim))
    same(t[tuple(sd.asarray(arr) if j == d else key[j] for j in range(a.ndim))], a[key], rtol=0)
    same(t[(Ellipsis, list(arr))] if d == a.ndim - 1 else t[(slice(None),) * d + (sd.asarray(arr), Ellipsis)],
         a[(Ellipsis, arr)] if d == a.ndim - 1 else a[(slice(None),) * d + (arr, Ellipsis)], rtol=0)


@given(tensors(min_rank=1), st.data())
def test_take_along_axis_against_strict(tx, data):
    t, a = tx
    d = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    n = a.shape[d]
    m = data.draw(st.integers(0, 3), label="taken")
    shape = tuple(m if k == d % a.ndim else (data.draw(st.sampled_from([1, s]), label="dim") if s else s)
                  for k, s in enumerate(a.shape))
    count = int(np.prod(shape))
    vals = data.draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count), label="indices") if n else []
    if not n and count:
        return  # nothing to take from
    i = np.array(vals, dtype=np.int64).reshape(shape)
    same(sd.take_along_axis(t, sd.asarray(i), axis=d),
         np.asarray(xps.take_along_axis(strict(a), xps.asarray(i), axis=d)), rtol=0)
    same(np.take_along_axis(t, sd.asarray(i), axis=d), np.take_along_axis(a, i, axis=d), rtol=0)


def test_array_indexing_refuses_what_it_cannot_do():
    t = sd.zeros((2, 3))
    for bad, match in [(lambda: t[sd.asarray([2])], "out of range"), (lambda: t[t[0] > 0, 0], "only index"),
                       (lambda: t[0, sd.asarray([0]), 1], "too many"), (lambda: t[sd.asarray([0.5])], "integer"),
                       (lambda: t[None, sd.asarray([0])], "not supported")]:
        with pytest.raises(sd.StridedIndexError, match=match):
            bad()


def test_boolean_mask_assignment_refuses_what_it_cannot_do():
    x = sd.zeros((2, 3))
    with pytest.raises(sd.StridedIndexError, match="setitem"):
        x[sd.asarray([True, False, True])] = 1.0
    with pytest.raises(sd.StridedError, match="broadcast"):
        x[sd.asarray([True, False])] = sd.asarray([1.0, 2.0])
    with pytest.raises(sd.StridedError, match="setitem"):
        sd.broadcast_to(sd.zeros((3,)), (2, 3))[sd.asarray([True, False])] = 1.0  # elements share memory


def test_reshape_copy_false_refuses_a_copy():
    t = sd.asarray(np.arange(6.0).reshape(2, 3)).mT
    with pytest.raises(sd.StridedError, match="copy=False"):
        sd.reshape(t, (6,), copy=False)
    v = sd.reshape(sd.asarray(np.arange(6.0)), (2, 3), copy=False)
    assert v.shape == (2, 3)


@given(tensors(min_rank=1, max_rank=3), tensors(min_rank=0, max_rank=3))
def test_broadcast_arrays_and_to(tx, ty):
    (t, a), (u, b) = tx, ty
    try:
        want = np.broadcast_arrays(a, b)
    except ValueError:
        with pytest.raises(sd.ShapeError):
            sd.broadcast_arrays(t, u)
        return
    for g, w in zip(sd.broadcast_arrays(t, u), want):
        same(g, w)
    same(sd.broadcast_to(t, (2,) + a.shape), np.broadcast_to(a, (2,) + a.shape))


def test_manipulation_errors_name_the_function():
    t = sd.zeros((2, 3))
    with pytest.raises(sd.ShapeError, match="squeeze"):
        sd.squeeze(t, axis=0)
    with pytest.raises(sd.ShapeError, match="stack"):
        sd.stack([t, sd.zeros((3, 2))])
    with pytest.raises(sd.StridedError, match="concat"):
        sd.concat(t)
    with pytest.raises(sd.ShapeError, match="repeat"):
        sd.repeat(t, [1, 2, 3], axis=0)
    with pytest.raises(sd.ShapeError, match="moveaxis"):
        sd.moveaxis(t, (0, 1), 0)
    with pytest.raises(sd.ShapeError, match="flip"):
        sd.flip(t, axis=(0, 0))


# -- elementwise, statistics, searching --------------------------------------------------------

BINARY = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
          ("maximum", np.maximum), ("minimum", np.minimum), ("equal", np.equal), ("not_equal", np.not_equal),
          ("less", np.less), ("less_equal", np.less_equal), ("greater", np.greater),
          ("greater_equal", np.greater_equal)]


NUMERIC = st.sampled_from([np.float64, np.float32, np.int64, np.uint8, np.uint32])


@given(st.data())
def test_binary_functions_against_numpy(data):
    t, a = data.draw(NUMERIC.flatmap(lambda d: tensors(dtype=d, max_rank=3)), label="x1")
    u, b = data.draw(NUMERIC.flatmap(lambda d: tensors(dtype=d, max_rank=3)), label="x2")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return
    with np.errstate(all="ignore"):
        for name, fn in BINARY:
            want = fn(a, b)
            rtol = 1e-6 if np.result_type(a, b) == np.float32 else 1e-12
            same(getattr(sd, name)(t, u), want, rtol=rtol)
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            same(sd.pow(sd.abs(t), u), np.abs(a) ** b, rtol=1e-6)


@given(tensors(dtype=np.float32, max_rank=3))
def test_unary_and_classification_functions(tx):
    t, a = tx
    a = a.copy()
    for name, fn in [("abs", np.abs), ("negative", np.negative), ("square", np.square), ("exp", np.exp),
                     ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh), ("sign", np.sign), ("positive", np.positive)]:
        same(getattr(sd, name)(t), fn(a), rtol=2e-6, atol=1e-30)
    with np.errstate(all="ignore"):
        same(sd.sqrt(sd.abs(t)), np.sqrt(np.abs(a)), rtol=2e-6)
        same(sd.reciprocal(t), np.reciprocal(a), rtol=2e-6)
    same(sd.conj(t), a, rtol=0)
    same(sd.real(t), a, rtol=0)
    same(sd.imag(t), np.zeros_like(a), rtol=0)
    assert not sd.same_buffer(sd.conj(t), t)
    special = sd.asarray(np.array([np.nan, np.inf, -np.inf, 0.0, -1.5], np.float32))
    same(sd.isnan(special), [True, False, False, False, False])
    same(sd.isinf(special), [False, True, True, False, False])
    same(sd.isfinite(special), [False, False, False, True, True])
    same(sd.isnan(t), np.isnan(a))
    same(sd.isfinite(sd.asarray([1, 2])), [True, True])
    same(sd.clip(t, -0.5, 0.5), np.clip(a, -0.5, 0.5), rtol=0)
    same(sd.clip(t, max=0.25), np.clip(a, None, 0.25), rtol=0)


def test_in_place_power_and_matmul():
    x = sd.asarray(np.arange(6.0).reshape(2, 3))
    view = x.mT
    view **= 2
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3) ** 2)
    m = sd.asarray(np.arange(4.0).reshape(2, 2))
    r = m
    m @= sd.asarray(np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert m is r
    np.testing.assert_array_equal(m.numpy(), np.arange(4.0).reshape(2, 2) @ np.array([[0.0, 1.0], [1.0, 0.0]]))


def test_logical_functions():
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    sp, sq = sd.asarray(p), sd.asarray(q)
    same(sd.logical_and(sp, sq), p & q)
    same(sd.logical_or(sp, sq), p | q)
    same(sd.logical_xor(sp, sq), p ^ q)
    same(sd.logical_not(sp), ~p)
    with pytest.raises(sd.DTypeError, match="logical_xor"):
        sd.logical_xor(sd.asarray([1]), sd.asarray([0]))


def _axis_draw(data, nd):
    return data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1) if nd else st.none(),
                               st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple) if nd
                               else st.none()),
                     label="axis")


@given(tensors(max_rank=4), st.data())
def test_reductions_with_axis_tuples_and_keepdims(tx, data):
    t, a = tx
    axis = _axis_draw(data, a.ndim)
    keep = data.draw(st.booleans(), label="keepdims")
    same(sd.sum(t, axis=axis, keepdims=keep), np.sum(a, axis=axis, keepdims=keep), rtol=1e-10, atol=1e-12)
    same(sd.prod(t, axis=axis, keepdims=keep), np.prod(a, axis=axis, keepdims=keep), rtol=1e-10, atol=1e-300)
    correction = data.draw(st.sampled_from([0, 1, 0.5]), label="correction")
    with np.errstate(all="ignore"):
        same(sd.mean(t, axis=axis, keepdims=keep), np.mean(a, axis=axis, keepdims=keep), rtol=1e-10, atol=1e-12)
        same(sd.var(t, axis=axis, correction=correction, keepdims=keep),
             np.var(a, axis=axis, ddof=correction, keepdims=keep), rtol=1e-9, atol=1e-12)
        same(sd.std(t, axis=axis, correction=correction, keepdims=keep),
             np.std(a, axis=axis, ddof=correction, keepdims=keep), rtol=1e-9, atol=1e-12)
    same(sd.count_nonzero(t > 0, axis=axis, keepdims=keep), np.count_nonzero(a > 0, axis=axis, keepdims=keep))
    same(sd.all(t > -1, axis=axis, keepdims=keep), np.all(a > -1, axis=axis, keepdims=keep))
    same(sd.any(t > 1, axis=axis, keepdims=keep), np.any(a > 1, axis=axis, keepdims=keep))
    if a.size:
        same(sd.max(t, axis=axis, keepdims=keep), np.max(a, axis=axis, keepdims=keep), rtol=0)
        same(sd.min(t, axis=axis, keepdims=keep), np.min(a, axis=axis, keepdims=keep), rtol=0)
        one = None if a.ndim == 0 else data.draw(st.integers(-a.ndim, a.ndim - 1), label="one axis")
        if one is None or a.shape[one]:
            same(sd.argmax(t, axis=one, keepdims=keep), np.argmax(a, axis=one, keepdims=keep))
            same(sd.argmin(t, axis=one, keepdims=keep), np.argmin(a, axis=one, keepdims=keep))


@given(tensors(dtype=np.int64, max_rank=3), st.data())
def test_integer_reductions_against_strict(tx, data):
    t, a = tx
    axis = _axis_draw(data, a.ndim)
    for name in ("sum", "prod", "max", "min"):
        if name in ("max", "min") and a.size == 0:
            continue
        try:
            want = getattr(xps, name)(strict(a), axis=axis)
        except ValueError:  # strict refuses a zero-size max
            continue
        same(getattr(sd, name)(t, axis=axis), np.asarray(want))


@given(tensors(min_rank=1, max_rank=3), st.data())
def test_diff(tx, data):
    t, a = tx
    d = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 3))
    same(sd.diff(t, axis=d, n=n), np.diff(a, n=n, axis=d))
    same(sd.diff(t, axis=d, prepend=t, append=t), np.diff(a, axis=d, prepend=a, append=a))
    same(sd.diff(t > 0, axis=d), np.diff(a > 0, axis=d))


def test_sum_and_prod_in_a_dtype_asked_for():
    a = np.array([200, 100, 7], np.uint8)
    for name in ("sum", "prod"):
        got = getattr(sd, name)(sd.asarray(a), dtype=sd.uint8)
        want = getattr(xps, name)(strict(a), dtype=xps.uint8)
        same(got, np.asarray(want))
        same(getattr(sd, name)(sd.asarray(a), dtype=sd.float32),
             np.asarray(getattr(xps, name)(strict(a), dtype=xps.float32)))


def test_where_with_scalars():
    c = sd.asarray([True, False, True])
    same(sd.where(c, sd.asarray([1.0, 2.0, 3.0]), 0.0), np.where([True, False, True], [1.0, 2.0, 3.0], 0.0),
         dtype=False)


def test_mean_and_var_refuse_integers():
    with pytest.raises(sd.DTypeError, match="mean"):
        sd.mean(sd.asarray([1, 2]))
    with pytest.raises(sd.DTypeError, match="var"):
        sd.var(sd.asarray([1, 2]))


# -- linalg ----------------------------------------------------------------------------------


@given(tensors(shape=(3, 4)), tensors(shape=(4, 2)), tensors(shape=(2, 3, 4)))
def test_products_against_numpy(tx, ty, tz):
    (t, a), (u, b), (w, c) = tx, ty, tz
    same(sd.matmul(t, u), a @ b, rtol=1e-12)
    same(sd.tensordot(t, u, axes=1), np.tensordot(a, b, axes=1), rtol=1e-12, atol=1e-12)
    same(sd.tensordot(w, t, axes=([1, 2], [0, 1])), np.tensordot(c, a, axes=([1, 2], [0, 1])), rtol=1e-12, atol=1e-12)
    same(sd.tensordot(t, t, axes=0), np.tensordot(a, a, axes=0), rtol=1e-12)
    same(sd.vecdot(w, t), np.asarray(xps.vecdot(strict(c), strict(a))), rtol=1e-12, atol=1e-12)
    ints = (np.abs(c) * 3).astype(np.uint8)
    same(sd.vecdot(sd.asarray(ints), sd.asarray(ints)), np.asarray(xps.vecdot(strict(ints), strict(ints))))
    same(sd.linalg.vecdot(t, w, axis=1), np.sum(a * c, axis=1), rtol=1e-12, atol=1e-12)
    same(sd.matrix_transpose(w), np.swapaxes(c, -1, -2), rtol=0)
    same(sd.linalg.outer(t[0], u[:, 0]), np.outer(a[0], b[:, 0]), rtol=1e-12)
    for k in (-2, 0, 1, 5):
        d = sd.linalg.diagonal(w, offset=k)
        same(d, np.diagonal(c, k, -2, -1), rtol=0)
        assert sd.same_buffer(d, w)
    same(sd.linalg.trace(w), np.trace(c, axis1=-2, axis2=-1), rtol=1e-12)
    same(sd.linalg.cross(t[:, :3], w[0, :, 1:]), np.cross(a[:, :3], c[0, :, 1:]), rtol=1e-12, atol=1e-12)


def _spd(rng, n, batch=()):
    m = rng.standard_normal(batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_decompositions_through_lapack_match_strict(dtype):
    rng = np.random.default_rng(0)
    a = _spd(rng, 4, (2,)).astype(dtype)
    view = np.swapaxes(a, -1, -2)[:, ::-1, ::-1]  # a strided, flipped view (still symmetric positive)
    t = sd.asarray(view)
    s = strict(view)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    same(sd.linalg.cholesky(t), np.asarray(xps.linalg.cholesky(s)), rtol=tol, atol=tol)
    same(sd.linalg.cholesky(t, upper=True), np.asarray(xps.linalg.cholesky(s, upper=True)), rtol=tol, atol=tol)
    same(sd.linalg.det(t), np.asarray(xps.linalg.det(s)), rtol=tol)
    same(sd.linalg.inv(t), np.asarray(xps.linalg.inv(s)), rtol=tol, atol=tol)
    same(sd.linalg.eigvalsh(t), np.asarray(xps.linalg.eigvalsh(s)), rtol=tol, atol=tol)
    w, v = sd.linalg.eigh(t)
    same(w, np.asarray(xps.linalg.eigh(s).eigenvalues), rtol=tol, atol=tol)
    recon = v.numpy() @ (w.numpy()[..., None] * np.swapaxes(v.numpy(), -1, -2))
    np.testing.assert_allclose(recon, view, rtol=tol, atol=tol)
    sign, logabs = sd.linalg.slogdet(t)
    ws = xps.linalg.slogdet(s)
    same(sign, np.asarray(ws.sign), rtol=0)
    same(logabs, np.asarray(ws.logabsdet), rtol=tol)
    b = rng.standard_normal((2, 4, 3)).astype(dtype)
    same(sd.linalg.solve(t, sd.asarray(b)), np.asarray(xps.linalg.solve(s, strict(b))), rtol=tol, atol=tol)
    rect = rng.standard_normal((5, 3)).astype(dtype)[::-1]
    q, r = sd.linalg.qr(sd.asarray(rect))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), rect, rtol=tol, atol=tol)
    same(sd.linalg.svdvals(sd.asarray(rect)), np.asarray(xps.linalg.svdvals(strict(rect))), rtol=tol, atol=tol)
    u, sv, vh = sd.linalg.svd(sd.asarray(rect), full_matrices=False)
    np.testing.assert_allclose((u.numpy() * sv.numpy()) @ vh.numpy(), rect, rtol=tol, atol=tol)
    same(sd.linalg.pinv(sd.asarray(rect)), np.asarray(xps.linalg.pinv(strict(rect))), rtol=tol * 10, atol=tol * 10)
    stack = rng.standard_normal((2, 4, 3)).astype(dtype)
    rt = np.array([1e-3, 0.5], dtype)
    same(sd.linalg.pinv(sd.asarray(stack), rtol=sd.asarray(rt)),
         np.asarray(xps.linalg.pinv(strict(stack), rtol=strict(rt))), rtol=tol * 10, atol=tol * 10)
    same(sd.linalg.matrix_rank(sd.asarray(stack), rtol=sd.asarray(rt)),
         np.asarray(xps.linalg.matrix_rank(strict(stack), rtol=strict(rt))))
    same(sd.linalg.matrix_rank(sd.asarray(rect)), np.asarray(xps.linalg.matrix_rank(strict(rect))))
    for ord in ("fro", "nuc", 1, 2, -np.inf):
        same(sd.linalg.matrix_norm(t, ord=ord), np.asarray(xps.linalg.matrix_norm(s, ord=ord)), rtol=tol)
    for ord in (2, 1, np.inf, 0.5):
        same(sd.linalg.vector_norm(t, axis=(0, 2), ord=ord),
             np.asarray(xps.linalg.vector_norm(s, axis=(0, 2), ord=ord)), rtol=tol)
    same(sd.linalg.vector_norm(t), np.asarray(xps.linalg.vector_norm(s)), rtol=tol)
    for n in (-2, 0, 1, 3):
        same(sd.linalg.matrix_power(t, n), np.asarray(xps.linalg.matrix_power(s, n)), rtol=tol * 10, atol=tol)


def test_linalg_errors_name_the_function():
    with pytest.raises(sd.StridedError, match="cholesky"):
        sd.linalg.cholesky(sd.asarray([[1.0, 2.0], [2.0, 1.0]]))  # not positive definite
    with pytest.raises(sd.ShapeError, match="inv"):
        sd.linalg.inv(sd.zeros((2, 3)))
    with pytest.raises(sd.DTypeError, match="det"):
        sd.linalg.det(sd.asarray([[1, 2], [3, 4]]))
    with pytest.raises(sd.ShapeError, match="tensordot"):
        sd.tensordot(sd.zeros((2, 3)), sd.zeros((4, 2)), axes=1)
    with pytest.raises(sd.StridedError, match="inv"):
        sd.linalg.inv(sd.zeros((2, 2), dtype=sd.f64))  # singular


MATH_UNARY = [("acos", np.arccos), ("acosh", np.arccosh), ("asin", np.arcsin), ("asinh", np.arcsinh),
              ("atan", np.arctan), ("atanh", np.arctanh), ("cosh", np.cosh), ("sinh", np.sinh), ("tan", np.tan),
              ("expm1", np.expm1), ("log1p", np.log1p), ("log2", np.log2), ("log10", np.log10),
              ("ceil", np.ceil), ("floor", np.floor), ("trunc", np.trunc), ("round", np.round)]


@given(st.sampled_from([np.float32, np.float64]).flatmap(lambda d: tensors(dtype=d, max_rank=3)))
def test_the_standards_other_math_against_numpy(tx):
    """On drawn views (negative strides, broadcasts, zero-size dims); outside a function's
    domain NumPy's nan is the answer too."""
    t, a = tx
    a = a.copy()
    rtol = 2e-6 if a.dtype == np.float32 else 1e-13
    with np.errstate(all="ignore"):
        for name, fn in MATH_UNARY:
            got = getattr(sd, name)(t)
            assert got.dtype.name == sd.asarray(a).dtype.name, name
            same(got, fn(a), rtol=rtol, atol=1e-30)
        b = a[..., ::-1] if a.ndim else a
        u = t[..., ::-1] if a.ndim else t
        for name, fn in [("atan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign),
                         ("logaddexp", np.logaddexp), ("floor_divide", np.floor_divide), ("remainder", np.remainder)]:
            same(getattr(sd, name)(t, u), fn(a, b), rtol=rtol, atol=1e-30)
        same(t // 0.75, a // np.asarray(0.75, a.dtype), rtol=rtol)
        same(t % 0.75, a % np.asarray(0.75, a.dtype), rtol=rtol, atol=1e-30)


def test_integer_rounding_division_and_remainder():
    a = np.array([-7, -1, 0, 5, 2**62 + 1], np.int64)
    b = np.array([2, 3, 5, -3, 7], np.int64)
    t, u = sd.asarray(a), sd.asarray(b)
    for name in ("ceil", "floor", "trunc", "round"):
        r = getattr(sd, name)(t)
        assert r.dtype == sd.int64 and r.tolist() == a.tolist()  # exact, even past 2^53
    same(t // u, a // b, rtol=0)
    same(t % u, a % b, rtol=0)
    same(sd.floor_divide(t, 0), np.zeros(5, np.int64), rtol=0)  # NumPy's answer (with its warning)
    with pytest.raises(sd.StridedError, match="floor"):
        sd.floor(sd.asarray([True]))


@pytest.mark.parametrize("op", ["sum", "prod", "mean", "max", "min", "count_nonzero", "all", "any"])
def test_reductions_read_every_axis_spelling_as_numpy_twice(op):
    """An int axis or None reaches the op layer as given (its kept calls are keyed by it):
    every spelling of an axis, in range or not, reads as NumPy's, on the first call and on
    the kept ones after it."""
    x = np.random.default_rng(3).integers(-3, 4, (2, 3, 4)).astype(np.float64)
    x[0, 1, 2] = 0.0
    t = sd.asarray(x)
    want_fn = {"count_nonzero": np.count_nonzero}.get(op, getattr(np, op))
    for axis in (None, 0, 2, -1, -3, np.int64(1), (0, 2), (-1, 0)):
        for keepdims in (False, True):
            want = want_fn(x, axis=axis, keepdims=keepdims)
            for _ in range(3):
                same(getattr(sd, op)(t, axis=axis, keepdims=keepdims), want, dtype=False)
    for bad in (3, -4, True, (0, 0), 1.0):
        with pytest.raises(sd.StridedError):
            getattr(sd, op)(t, axis=bad)
    with pytest.raises(sd.StridedError):
        getattr(sd, op)(sd.asarray(np.float64(1.0)), axis=0)

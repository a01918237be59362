"""Every public name and method of DESIGN.md's "Public API" exists (lists written out from its
text), and a handful of them compute what NumPy computes."""

import inspect

import numpy as np
import pytest

import strided as sd

# -- the lists, from DESIGN.md ---------------------------------------------------------------

MODULE_NAMES = [
    "Layout", "Tensor", "tensor", "from_numpy", "zeros", "ones", "full", "arange", "empty", "rand", "randn",
    "same_buffer", "as_strided", "cat", "where", "index_select", "matmul", "Var", "sorted_nodes", "GradStore",
    "set_buffer_pool", "get_num_threads", "set_num_threads", "NdIter", "SingleBlock", "UniformBlocks",
    "MultipleBlocks", "StridedError", "cute",
]
DTYPE_NAMES = ["f16", "bf16", "f32", "f64", "u8", "u32", "i64", "bool"]

# strided.Layout
LAYOUT_CONSTRUCTORS = ["contiguous", "column_major"]
LAYOUT_PROPERTIES = ["shape", "stride", "offset", "ndim", "numel", "cosize"]
LAYOUT_METHODS = [
    "is_contiguous", "is_fortran_contiguous", "contiguous_offsets", "offset_of", "unravel",
    # views
    "narrow", "transpose", "permute", "broadcast_as", "unsqueeze", "squeeze", "flip", "slice", "select",
    "reshape_view",
    # iteration
    "strided_index", "strided_blocks",
    # analysis
    "span", "validate", "is_non_overlapping", "classify", "decompose",
]

# strided.Tensor
TENSOR_PROPERTIES = ["shape", "stride", "offset", "layout", "dtype", "ndim", "numel", "storage", "buffer_nbytes",
                     "device"]
TENSOR_METHODS = [
    "numpy", "is_contiguous",
    # views
    "narrow", "transpose", "t", "permute", "broadcast_as", "expand", "unsqueeze", "squeeze", "flip", "reshape",
    "flatten_all", "__getitem__",
    # copies
    "contiguous", "force_contiguous", "copy", "clone", "to_dtype",
    # math
    "exp", "log", "sqrt", "sqr", "abs", "neg", "relu", "tanh", "sigmoid", "sin", "cos",
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
    "sum", "sum_all", "mean", "max", "min", "argmax", "matmul", "index_select",
    # in place through views
    "__setitem__", "copy_", "fill_",
    # autograd
    "track_op", "is_variable", "detach", "backward",
    # exchange
    "__dlpack__", "__dlpack_device__",
]
TENSOR_OPERATORS = [
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__neg__", "__matmul__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
]
# "Array API, NumPy, devices": the standard's names strided defines today (issue 16); what needs
# kernels first (bitwise, rounding, sort, cumulative sums, more dtypes) is absent, not stubbed
ARRAY_API_NAMES = [
    "__array_api_version__", "__array_namespace_info__", "e", "inf", "nan", "newaxis", "pi",
    "float32", "float64", "uint8", "uint32", "int64", "bool",
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace", "meshgrid",
    "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    "abs", "add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "negative", "positive", "square",
    "sqrt", "exp", "log", "sin", "cos", "tanh", "sign", "clip", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf",
    "isfinite",
    "sum", "prod", "mean", "max", "min", "var", "std", "argmax", "argmin", "count_nonzero", "where", "all", "any",
    "diff", "take", "take_along_axis", "reciprocal", "conj", "real", "imag", "matmul", "tensordot", "vecdot",
    "matrix_transpose", "linalg",
]
LINALG_NAMES = [
    "matmul", "tensordot", "vecdot", "matrix_transpose", "outer", "diagonal", "trace", "cross", "cholesky", "det",
    "slogdet", "eigh", "eigvalsh", "inv", "pinv", "solve", "qr", "svd", "svdvals", "matrix_rank", "matrix_power",
    "matrix_norm", "vector_norm",
]
TENSOR_ARRAY_API = ["size", "device", "T", "mT", "to_device", "__array_namespace__", "__index__", "__bool__",
                    "__float__", "__int__", "__complex__", "__pos__", "__array_ufunc__", "__array_function__",
                    "__dask_tokenize__"]

CUTE_NAMES = [
    "Layout", "size", "cosize", "rank", "depth", "crd2idx", "idx2crd", "coalesce", "filter", "composition",
    "complement", "right_inverse", "left_inverse", "logical_divide", "zipped_divide", "tiled_divide",
    "flat_divide", "logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product",
    "make_layout", "print_layout",
]


# -- existence -------------------------------------------------------------------------------


def test_module_level_names_exist():
    missing = [n for n in MODULE_NAMES if not hasattr(sd, n)]
    assert not missing, f"strided lacks {missing}"
    for n in MODULE_NAMES:
        if n not in ("cute",):
            assert callable(getattr(sd, n)), f"strided.{n} is not callable"


def test_dtypes_exist():
    missing = [n for n in DTYPE_NAMES if not hasattr(sd, n)]
    assert not missing, f"strided lacks dtypes {missing}"
    dts = [getattr(sd, n) for n in DTYPE_NAMES]
    assert all(isinstance(d, sd.DType) for d in dts)
    assert len({id(d) for d in dts}) == len(dts)
    assert {d.np for d in dts if d not in (sd.bf16,)} == {
        np.dtype(x) for x in ("float16", "float32", "float64", "uint8", "uint32", "int64", "bool")
    }
    assert sd.bool is not bool  # strided.bool is the dtype; the builtin stays untouched


def test_strided_error_hierarchy():
    assert issubclass(sd.StridedError, ValueError)
    with pytest.raises(sd.StridedError) as info:
        sd.Layout((2, 3), (3, 1)).offset_of((2, 0))
    assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)
    assert "offset_of" in str(info.value)


def test_layout_api_exists():
    L = sd.Layout((2, 3, 4), (12, 4, 1))
    missing = [n for n in LAYOUT_CONSTRUCTORS + LAYOUT_PROPERTIES + LAYOUT_METHODS if not hasattr(L, n)]
    assert not missing, f"Layout lacks {missing}"
    for n in LAYOUT_METHODS + LAYOUT_CONSTRUCTORS:
        assert callable(getattr(L, n)), f"Layout.{n} is not callable"
    for n in LAYOUT_PROPERTIES:
        assert not callable(getattr(L, n)), f"Layout.{n} should be a value, not a method"


def test_tensor_api_exists():
    t = sd.zeros((2, 3))
    names = TENSOR_PROPERTIES + TENSOR_METHODS + TENSOR_OPERATORS
    missing = [n for n in names if not hasattr(t, n)]
    assert not missing, f"Tensor lacks {missing}"
    for n in TENSOR_METHODS + TENSOR_OPERATORS:
        assert callable(getattr(t, n)), f"Tensor.{n} is not callable"
    for n in TENSOR_PROPERTIES:
        assert not callable(getattr(t, n)), f"Tensor.{n} should be a value, not a method"


def test_array_api_names_exist():
    missing = [n for n in ARRAY_API_NAMES if not hasattr(sd, n)]
    assert not missing, f"strided lacks {missing}"
    missing = [n for n in LINALG_NAMES if not hasattr(sd.linalg, n)]
    assert not missing, f"strided.linalg lacks {missing}"
    t = sd.zeros((2, 3))
    missing = [n for n in TENSOR_ARRAY_API if not hasattr(t, n)]
    assert not missing, f"Tensor lacks {missing}"
    assert t.__array_namespace__() is sd


def test_cute_names_exist():
    missing = [n for n in CUTE_NAMES if not hasattr(sd.cute, n)]
    assert not missing, f"strided.cute lacks {missing}"


# -- Layout ------------------------------------------------------------------------------------


def test_layout_constructors_and_metadata():
    L = sd.Layout((2, 3), (3, 1))
    assert L.shape == (2, 3) and L.stride == (3, 1) and L.offset == 0 and L.ndim == 2 and L.numel == 6
    assert all(type(v) is int for v in L.shape + L.stride)
    assert sd.Layout.contiguous((2, 3, 4)) == sd.Layout((2, 3, 4), (12, 4, 1))
    assert sd.Layout.contiguous((2, 3), offset=5).offset == 5
    assert sd.Layout.column_major((2, 3, 4)).stride == (1, 2, 6)
    assert sd.Layout.column_major((2, 3), offset=1).offset == 1
    assert sd.Layout((2, 3), (3, 1), 4).offset == 4


def test_layout_is_immutable_and_hashable():
    a, b = sd.Layout((2, 3), (3, 1)), sd.Layout.contiguous((2, 3))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != sd.Layout((2, 3), (1, 2))
    with pytest.raises((AttributeError, TypeError)):
        a.shape = (6,)


def test_layout_addressing_against_numpy():
    x = np.arange(24).reshape(2, 3, 4)
    L = sd.Layout.contiguous((2, 3, 4))
    for idx in [(0, 0, 0), (1, 2, 3), (1, 0, 2)]:
        assert L.offset_of(idx) == x[idx]
    assert L.unravel(17) == np.unravel_index(17, (2, 3, 4))
    assert tuple(L.unravel(17)) == (1, 1, 1)
    assert L.is_contiguous() and not L.is_fortran_contiguous()
    assert sd.Layout.column_major((2, 3)).is_fortran_contiguous()
    assert L.contiguous_offsets() == (0, 24)
    assert L.transpose(0, 1).contiguous_offsets() is None


def _np_view(layout, buffer):
    """The NumPy view of ``buffer`` (1-D) that ``layout`` describes."""
    item = buffer.itemsize
    return np.lib.stride_tricks.as_strided(buffer[layout.offset:], layout.shape, [s * item for s in layout.stride])


def test_layout_views_against_numpy():
    buf = np.arange(100)
    L = sd.Layout((2, 3, 4), (12, 4, 1), 10)
    x = _np_view(L, buf)

    def same(layout, want):
        assert layout.shape == want.shape
        got = np.array([buf[o] for o in layout.strided_index()]).reshape(want.shape)
        np.testing.assert_array_equal(got, want)

    same(L, x)
    same(L.narrow(1, 1, 2), x[:, 1:3])
    same(L.transpose(0, 2), x.transpose(2, 1, 0))
    same(L.permute((1, 2, 0)), x.transpose(1, 2, 0))
    same(L.broadcast_as((5, 2, 3, 4)), np.broadcast_to(x, (5, 2, 3, 4)))
    same(L.unsqueeze(1), x[:, None])
    same(L.unsqueeze(0).squeeze(0), x)
    same(L.unsqueeze(2).squeeze(), x)
    same(L.flip((0, 2)), x[::-1, :, ::-1])
    same(L.slice(2, 3, None, -2), x[:, :, 3::-2])
    same(L.slice(1, 0, 3, 2), x[:, 0:3:2])
    same(L.select(1, 2), x[:, 2])
    same(L.reshape_view((6, 4)), x.reshape(6, 4))
    assert L.transpose(0, 1).reshape_view((6, 4)) is None  # no view exists
    # PyTorch's rule finds a view across a broadcast dim, where candle's contiguous-only rule refuses
    same(L.broadcast_as((5, 2, 3, 4)).reshape_view((5, 6, 4)), np.broadcast_to(x, (5, 2, 3, 4)).reshape(5, 6, 4))
    assert L.broadcast_as((5, 2, 3, 4)).reshape_view((5, 6, 4)).stride == (0, 4, 1)


def test_layout_blocks_and_nditer():
    L = sd.Layout.contiguous((2, 3, 4))
    assert L.strided_blocks() == sd.SingleBlock(0, 24)
    b = L.narrow(2, 0, 2).strided_blocks()
    assert isinstance(b, (sd.UniformBlocks, sd.MultipleBlocks))
    assert sd.Layout.contiguous((3, 4)).narrow(1, 0, 2).strided_blocks() == sd.UniformBlocks(0, 2, 3, 4)
    it = sd.NdIter(L, L)
    assert it.inner_size == 24 and len(it) == 1 and list(it) == [(0, 0)]
    T = sd.Layout.contiguous((4, 3)).transpose(0, 1)
    it = sd.NdIter(T, sd.Layout.contiguous((3, 4)))
    assert it.inner_size * len(it) == 12
    # many dims: no rank limit
    deep = sd.Layout.contiguous((2,) * 12).flip(tuple(range(0, 12, 2)))
    it = sd.NdIter(deep)
    assert it.inner_size * len(it) == 2 ** 12


def test_layout_analysis():
    L = sd.Layout((2, 3), (-3, 1), 3)
    assert L.span() == (0, 6) and L.cosize == 6
    L.validate(6)
    with pytest.raises(sd.StridedError):
        L.validate(5)
    assert L.is_non_overlapping()
    assert not sd.Layout((2, 3), (0, 1)).is_non_overlapping()
    assert sd.Layout.contiguous((2, 3)).classify() is not None
    assert sd.Layout.contiguous((2, 3)).decompose() is not None


# -- Tensor --------------------------------------------------------------------------------


def test_creation_against_numpy():
    x = np.arange(6.0).reshape(2, 3)
    t = sd.tensor(x)
    np.testing.assert_array_equal(t.numpy(), x)
    x[0, 0] = 99  # tensor copies
    assert t.numpy()[0, 0] == 0
    assert sd.tensor([[1, 2], [3, 4]], dtype=sd.f32).dtype == sd.f32
    a = np.arange(12.0).reshape(3, 4)[:, ::-2]
    f = sd.from_numpy(a)  # shares, any strides
    a[0, 0] = -1
    assert f.numpy()[0, 0] == -1
    np.testing.assert_array_equal(sd.zeros((2, 3)).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(sd.ones((2, 3)).numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(sd.full((2, 3), 2.5).numpy(), np.full((2, 3), 2.5))
    np.testing.assert_array_equal(sd.arange(5).numpy(), np.arange(5))
    np.testing.assert_array_equal(sd.arange(1, 7, 2).numpy(), np.arange(1, 7, 2))
    assert sd.empty((2, 3)).shape == (2, 3)
    for fn in (sd.rand, sd.randn):
        assert fn(2, 3).shape == (2, 3)
        np.testing.assert_array_equal(fn(2, 3, generator=np.random.default_rng(1)).numpy(),
                                      fn(2, 3, generator=np.random.default_rng(1)).numpy())
        sd.manual_seed(4)
        first = fn(3).numpy()
        sd.manual_seed(4)
        np.testing.assert_array_equal(fn(3).numpy(), first)


def test_tensor_metadata():
    t = sd.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert t.shape == (2, 3, 4) and t.stride == (12, 4, 1) and t.offset == 0 and t.ndim == 3 and t.numel == 24
    assert t.layout == sd.Layout.contiguous((2, 3, 4)) and t.dtype == sd.f64 and t.is_contiguous()
    assert t.buffer_nbytes == 24 * 8
    v = t[1, 1:]
    assert sd.same_buffer(t, v) and v.storage is t.storage and v.offset == 16
    assert not sd.same_buffer(t, t.copy())
    assert t.device == "cpu"
    assert t.__dlpack_device__() == (1, 0)


def test_tensor_views_against_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    t = sd.tensor(x)
    cases = {
        "narrow": (t.narrow(2, 1, 2), x[:, :, 1:3]),
        "transpose": (t.transpose(0, 2), x.transpose(2, 1, 0)),
        "t": (t.t(), x.swapaxes(-1, -2)),
        "permute": (t.permute((1, 2, 0)), x.transpose(1, 2, 0)),
        "broadcast_as": (t.broadcast_as((2, 2, 3, 4)), np.broadcast_to(x, (2, 2, 3, 4))),
        "expand": (t.unsqueeze(0).expand((3, 2, 3, 4)), np.broadcast_to(x, (3, 2, 3, 4))),
        "unsqueeze": (t.unsqueeze(-1), x[..., None]),
        "squeeze": (t.unsqueeze(1).squeeze(1), x),
        "flip": (t.flip((1,)), x[:, ::-1]),
        "reshape": (t.reshape((4, 6)), x.reshape(4, 6)),
        "flatten_all": (t.flatten_all(), x.ravel()),
        "getitem": (t[1, ::-2, None, ...], x[1, ::-2, None, ...]),
        "getitem_step": (t[:, 1:, 3:0:-2], x[:, 1:, 3:0:-2]),
    }
    for what, (got, want) in cases.items():
        assert got.shape == want.shape, what
        np.testing.assert_array_equal(got.numpy(), want, err_msg=what)
        if what not in ("reshape",):
            assert sd.same_buffer(got, t), f"{what} copied"
    assert sd.same_buffer(t.reshape((4, 6)), t)  # a view exists
    r = t.transpose(0, 1).reshape((6, 4))  # none does: a copy
    np.testing.assert_array_equal(r.numpy(), x.transpose(1, 0, 2).reshape(6, 4))


def test_tensor_copies():
    t = sd.tensor(np.arange(6.0).reshape(2, 3))
    assert t.contiguous() is t
    f = t.force_contiguous()
    assert f is not t and not sd.same_buffer(f, t) and f.is_contiguous()
    tt = t.t()
    c = tt.contiguous()
    assert c.is_contiguous() and not sd.same_buffer(c, t)
    np.testing.assert_array_equal(c.numpy(), np.arange(6.0).reshape(2, 3).T)
    small = t[1]
    cp = small.copy()
    assert cp.buffer_nbytes == 3 * 8 and not sd.same_buffer(cp, t)
    assert sd.same_buffer(t.clone(), t)
    assert t.to_dtype(sd.f64) is t
    assert t.to_dtype(sd.f32).dtype == sd.f32


def test_tensor_math_against_numpy():
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (4,))
    a, b = sd.tensor(x), sd.tensor(y)
    np.testing.assert_allclose((a + b).numpy(), x + y)
    np.testing.assert_allclose((a * 2 - 1).numpy(), x * 2 - 1)
    np.testing.assert_allclose((1 / a).numpy(), 1 / x)
    np.testing.assert_allclose(a.broadcast_div(b).numpy(), x / y)
    np.testing.assert_allclose(a.sigmoid().numpy(), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(a.sum(1).numpy(), x.sum(1))
    np.testing.assert_allclose(a.sum(0, keepdim=True).numpy(), x.sum(0, keepdims=True))
    np.testing.assert_allclose(a.sum_all().numpy(), x.sum())
    np.testing.assert_allclose(a.mean(-1).numpy(), x.mean(-1))
    np.testing.assert_array_equal(a.max(0).numpy(), x.max(0))
    np.testing.assert_array_equal(a.min(1).numpy(), x.min(1))
    np.testing.assert_array_equal(a.argmax(1).numpy(), x.argmax(1))
    np.testing.assert_array_equal((a > 1.0).numpy(), x > 1.0)
    np.testing.assert_array_equal((a == a).numpy(), np.ones((3, 4), bool))
    w = rng.standard_normal((4, 2))
    np.testing.assert_allclose((a @ sd.tensor(w)).numpy(), x @ w)
    np.testing.assert_allclose(sd.matmul(a, sd.tensor(w)).numpy(), x @ w)
    np.testing.assert_allclose(a.matmul(sd.tensor(w)).numpy(), x @ w)
    np.testing.assert_allclose(sd.cat([a, a * 2], 0).numpy(), np.concatenate([x, x * 2], 0))
    np.testing.assert_allclose(sd.cat([a, a], 1).numpy(), np.concatenate([x, x], 1))
    idx = sd.tensor(np.array([3, 0, 3]), dtype=sd.i64)
    np.testing.assert_array_equal(sd.index_select(a, idx, 1).numpy(), x[:, [3, 0, 3]])
    np.testing.assert_array_equal(a.index_select(idx, 1).numpy(), x[:, [3, 0, 3]])
    np.testing.assert_array_equal(sd.where(a > 1.0, a, 0.0).numpy(), np.where(x > 1.0, x, 0.0))
    # elementwise outputs follow the inputs' stride order: transposed in, transposed out
    out = a.t().exp()
    assert out.stride == (1, 4)


def test_as_strided_against_numpy():
    x = np.arange(12.0)
    t = sd.tensor(x)
    got = sd.as_strided(t, (3, 3), (2, 1))
    want = np.lib.stride_tricks.as_strided(x, (3, 3), (16, 8))
    np.testing.assert_array_equal(got.numpy(), want)
    assert sd.same_buffer(got, t)
    # no offset: starts at t's own offset (PyTorch); an explicit offset is a buffer position
    v = t[2:]
    np.testing.assert_array_equal(sd.as_strided(v, (2,), (1,)).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(sd.as_strided(v, (2,), (1,), 0).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(sd.as_strided(t, (3,), (-2,), 11).numpy(), [11.0, 9.0, 7.0])
    with pytest.raises(sd.StridedError):
        sd.as_strided(t, (4, 4), (4, 1))  # reaches element 15 of a 12-element buffer
    with pytest.raises(sd.StridedError):
        sd.as_strided(t, (3,), (-1,), 1)  # reaches element -1


def test_writes_through_views():
    x = np.zeros((3, 4))
    t = sd.tensor(x)
    t[1, ::2] = 5.0
    x[1, ::2] = 5.0
    t.t()[0].fill_(7.0)
    x.T[0] = 7.0
    t[2:].copy_(sd.tensor(np.arange(4.0)))
    x[2:] = np.arange(4.0)
    np.testing.assert_array_equal(t.numpy(), x)


def test_autograd_api():
    w = sd.Var([1.0, 2.0, 3.0])
    x = sd.tensor([4.0, 5.0, 6.0])
    assert w.is_variable() and w.track_op() and not x.track_op() and not x.is_variable()
    y = (w * x).sum_all()
    assert y.track_op() and not y.is_variable()
    nodes = sd.sorted_nodes(y)
    assert nodes[0] is y and nodes[-1] is w
    grads = y.backward()
    assert isinstance(grads, sd.GradStore)
    np.testing.assert_array_equal(grads[w].numpy(), [4.0, 5.0, 6.0])
    assert grads.get(x) is None
    d = y.detach()
    assert not d.track_op() and sd.same_buffer(d, y)


def test_threads_and_pool():
    n = sd.get_num_threads()
    assert isinstance(n, int) and n >= 1
    try:
        sd.set_num_threads(1)
        assert sd.get_num_threads() == 1
    finally:
        sd.set_num_threads(n)
    assert sd.get_num_threads() == n
    assert inspect.signature(sd.set_buffer_pool).parameters.keys() == {"max_bytes"}
    with pytest.raises(sd.StridedError):
        sd.set_buffer_pool(-1)


def test_cute_layout():
    c = sd.cute
    L = c.Layout((4, (2, 4)), (2, (1, 8)))
    assert str(L) == "(4,(2,4)):(2,(1,8))"
    assert c.size(L) == 32 and c.rank(L) == 2 and c.depth(L) == 2
    assert c.cosize(L) == 3 * 2 + 1 * 1 + 3 * 8 + 1
    assert L(3) == 6 and L((1, (1, 2))) == 2 + 1 + 16
    # colexicographic: index i is coordinate (i % 4, ((i // 4) % 2, i // 8))
    for i in range(32):
        assert L(i) == (i % 4) * 2 + ((i // 4) % 2) * 1 + (i // 8) * 8
    flat = L.flatten()
    assert isinstance(flat, sd.Layout) and flat.shape == (4, 2, 4) and flat.stride == (2, 1, 8)
    D = c.Layout((2, 3))  # default strides are column-major
    assert D((1, 0)) == 1 and D((0, 1)) == 2 and D(5) == 5

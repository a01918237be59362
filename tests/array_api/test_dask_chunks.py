"""strided tensors as Dask chunks (issue 16, item 3): Dask slices, maps, joins and reduces
them and the chunks stay strided tensors, with NumPy's values, on the threaded and the local
distributed scheduler."""

import numpy as np
import pytest

import strided as sd

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _data():
    a = np.arange(48.0).reshape(6, 8) / 7.0
    return a, sd.asarray(a)


def test_from_array_keeps_tensor_chunks():
    a, t = _data()
    x = da.from_array(t, chunks=(2, 3))
    assert sd.dask_chunks.registered()
    assert isinstance(x._meta, sd.Tensor) and x._meta.size == 0 and x._meta.ndim == 2
    assert np.dtype(x.dtype) == np.float64
    blocks = x.to_delayed().ravel()
    first = blocks[0].compute(scheduler="sync")
    assert isinstance(first, sd.Tensor)
    np.testing.assert_array_equal(first.numpy(), a[:2, :3])


EXPRESSIONS = [
    ("sum", lambda x: x.sum(axis=0), lambda a: a.sum(0)),
    ("sum all", lambda x: x.sum(), lambda a: a.sum()),
    ("mean", lambda x: x.mean(axis=1), lambda a: a.mean(1)),
    ("max", lambda x: x.max(axis=(0, 1)), lambda a: a.max()),
    ("min", lambda x: x.min(axis=0), lambda a: a.min(0)),
    ("prod", lambda x: (x / 4 + 1).prod(axis=1), lambda a: (a / 4 + 1).prod(1)),
    ("any", lambda x: (x > 3).any(axis=0), lambda a: (a > 3).any(0)),
    ("nanmean", lambda x: da.nanmean(x, axis=0), lambda a: np.nanmean(a, axis=0)),
    ("var", lambda x: x.var(axis=0, ddof=1), lambda a: a.var(axis=0, ddof=1)),
    ("std", lambda x: x.std(), lambda a: a.std()),
    ("elementwise", lambda x: np.exp(-x) * 2 + x, lambda a: np.exp(-a) * 2 + a),
    ("where", lambda x: da.where(x > 3, x, 0.0), lambda a: np.where(a > 3, a, 0.0)),
    ("matmul", lambda x: x @ x.T, lambda a: a @ a.T),
    ("tensordot", lambda x: da.tensordot(x, x, axes=([0], [0])), lambda a: np.tensordot(a, a, axes=([0], [0]))),
    ("transpose and rechunk", lambda x: x.T.rechunk((4, 3)), lambda a: a.T),
    ("slice", lambda x: x[1:, ::-2], lambda a: a[1:, ::-2]),
    ("concatenate", lambda x: da.concatenate([x, x[:, :2]], axis=1), lambda a: np.concatenate([a, a[:, :2]], 1)),
    ("map_blocks", lambda x: x.map_blocks(lambda b: sd.tanh(b) + 1), lambda a: np.tanh(a) + 1),
    ("blockwise", lambda x: da.blockwise(lambda p, q: p * q, "ij", x, "ij", x + 1, "ij", dtype=np.float64),
     lambda a: a * (a + 1)),
]


@pytest.mark.parametrize("name, expr, want", EXPRESSIONS, ids=[e[0] for e in EXPRESSIONS])
def test_threaded_scheduler(name, expr, want):
    a, t = _data()
    x = da.from_array(t, chunks=(2, 3))
    y = expr(x)
    assert isinstance(y._meta, sd.Tensor), type(y._meta)
    got = y.compute(scheduler="threads")
    assert isinstance(got, sd.Tensor)
    np.testing.assert_allclose(np.asarray(got), want(a), rtol=1e-12)


def test_dask_array_with_a_tensor_operand_stays_dask():
    a, t = _data()
    x = da.from_array(t, chunks=(3, 4))
    y = x + t  # Tensor is a registered chunk type: Dask wraps it, the result stays lazy
    assert isinstance(y, da.Array)
    np.testing.assert_allclose(np.asarray(y.compute(scheduler="threads")), a + a)


def test_tokens_follow_buffer_and_layout():
    from dask.base import tokenize

    a, t = _data()
    assert tokenize(t) == tokenize(t)
    assert tokenize(t) == tokenize(t[:, :])  # same buffer, same layout
    assert tokenize(t) != tokenize(t.mT)  # same buffer, another layout
    assert tokenize(t) != tokenize(sd.asarray(a.copy()))  # equal values, another buffer
    # from_array copies its input (Tensor.copy(), a fresh buffer) before it tokenizes: two live
    # arrays from one tensor are two inputs, each named after its own buffer
    x1, x2 = da.from_array(t, chunks=3), da.from_array(t, chunks=3)
    assert x1.name != x2.name and x1.name.startswith("array-")


def test_local_distributed_cluster():
    distributed = pytest.importorskip("distributed")
    a, t = _data()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        x = da.from_array(t, chunks=(2, 4))
        y = (np.exp(-x) + x.T.T).sum(axis=0) + (x @ x.T).mean()
        got = client.compute(y).result()
        assert isinstance(got, sd.Tensor)
        np.testing.assert_allclose(np.asarray(got), (np.exp(-a) + a).sum(0) + (a @ a.T).mean(), rtol=1e-12)
        # chunks crossed process boundaries as pickles: a broadcast chunk travels as its buffer
        b = da.from_array(sd.broadcast_to(sd.asarray(np.arange(4.0)), (1000, 4)), chunks=(500, 4))
        np.testing.assert_allclose(np.asarray(client.compute(b.sum(axis=0)).result()), np.arange(4.0) * 1000)

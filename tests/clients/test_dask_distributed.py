"""Dask's distributed scheduler with strided chunks: two worker processes on 127.0.0.1 run a
graph of slices, transposes, reductions, map_blocks and rechunk; results equal NumPy's and
chunks come back as Tensors (they cross processes as pickles that hold only what a view reaches)."""

import pickle

import numpy as np
import pytest

import strided as sd

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")


def _data():
    a = np.arange(96.0).reshape(8, 12) / 7.0
    return a, da.from_array(sd.asarray(a), chunks=(3, 5))


GRAPHS = [
    ("std", lambda x: x.std(axis=0), lambda a: a.std(0)),
    ("var", lambda x: x.var(axis=1, ddof=1), lambda a: a.var(1, ddof=1)),
    ("mean of a flipped stepped transpose", lambda x: x[::-1, 1::2].T.mean(axis=0), lambda a: a[::-1, 1::2].T.mean(0)),
    ("std of all", lambda x: x[1:, ::-3].std(), lambda a: a[1:, ::-3].std()),
    ("map_blocks", lambda x: x.T.map_blocks(lambda b: sd.tanh(b) * 2), lambda a: np.tanh(a.T) * 2),
    ("rechunk", lambda x: x[:, ::-1].T.rechunk((5, 4)) + 1, lambda a: a[:, ::-1].T + 1),
    ("mixed", lambda x: (x - x.mean(axis=0)) / x.std(axis=0), lambda a: (a - a.mean(0)) / a.std(0)),
]


@pytest.mark.parametrize("name, graph, want", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_graphs_on_two_worker_processes(dask_client, name, graph, want):
    a, x = _data()
    y = graph(x)
    assert isinstance(y._meta, sd.Tensor)
    got = dask_client.compute(y).result()
    assert isinstance(got, sd.Tensor), type(got)
    np.testing.assert_allclose(np.asarray(got), want(a), rtol=1e-12)


def test_chunks_come_back_as_tensors(dask_client):
    a, x = _data()
    y = x.T.rechunk((4, 4))
    blocks = dask_client.gather(dask_client.compute(y.to_delayed().ravel().tolist()))
    assert blocks and all(isinstance(b, sd.Tensor) for b in blocks)
    np.testing.assert_array_equal(np.asarray(blocks[0]), a.T[:4, :4])


def test_views_pickle_span_minimal():
    """What a chunk costs to send: the elements its view reaches, not its whole buffer."""
    big = sd.asarray(np.arange(100_000.0))
    small = big[10:20]
    assert len(pickle.dumps(small)) < 1_000 < len(pickle.dumps(big)) // 100
    back = pickle.loads(pickle.dumps(big.reshape(100, 1000)[::-7, 3:5].T))
    np.testing.assert_array_equal(np.asarray(back), np.arange(100_000.0).reshape(100, 1000)[::-7, 3:5].T)

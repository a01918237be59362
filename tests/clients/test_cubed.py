"""Cubed with strided as its chunk library (CUBED_BACKEND_ARRAY_API_MODULE=strided, read when
Cubed is first imported) on its local executor: transposes, negative-step views, elementwise
ops and reductions give NumPy's values, and the results are Tensors."""

import os

import numpy as np
import pytest

os.environ.setdefault("CUBED_BACKEND_ARRAY_API_MODULE", "strided")
cubed = pytest.importorskip("cubed")
xp = pytest.importorskip("cubed.array_api")

import strided as sd  # noqa: E402


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    from cubed import backend_array_api

    if backend_array_api.namespace is not sd:
        pytest.fail("Cubed was imported before CUBED_BACKEND_ARRAY_API_MODULE=strided was set")
    return cubed.Spec(work_dir=str(tmp_path_factory.mktemp("cubed")), allowed_mem="200MB")


GRAPHS = [
    ("transpose", lambda x: xp.permute_dims(x, (1, 0)), lambda a: a.T),
    # Cubed refuses x[::-1] itself; flip is its negative-step view (a flipped view of each chunk)
    ("flip and step", lambda x: xp.flip(x, axis=0)[:, 1::2], lambda a: a[::-1, 1::2]),
    ("elementwise", lambda x: xp.exp(-x) * 2 + xp.permute_dims(xp.permute_dims(x, (1, 0)), (1, 0)),
     lambda a: np.exp(-a) * 2 + a),
    ("sum", lambda x: xp.sum(x, axis=0), lambda a: a.sum(0)),
    ("mean", lambda x: xp.mean(xp.flip(x, axis=1), axis=1), lambda a: a[:, ::-1].mean(1)),
    ("max", lambda x: xp.max(x), lambda a: a.max()),
    ("min of a transpose", lambda x: xp.min(xp.permute_dims(x, (1, 0)), axis=1), lambda a: a.T.min(1)),
    ("prod", lambda x: xp.prod(x / 40 + 1, axis=0), lambda a: (a / 40 + 1).prod(0)),
]


@pytest.mark.parametrize("name, graph, want", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_graphs_on_the_local_executor(spec, name, graph, want):
    a = np.arange(48.0).reshape(6, 8) / 7
    x = xp.asarray(a, chunks=(2, 3), spec=spec)
    got = graph(x).compute()
    assert isinstance(got, sd.Tensor), type(got)
    np.testing.assert_allclose(np.asarray(got), want(a), rtol=1e-12)


def test_numpy_dtypes_reach_strided_from_cubed():
    assert sd.isdtype(np.dtype("float64"), "real floating") and not sd.isdtype(np.dtype("float64"),
                                                                                "complex floating")

"""The import paths of DESIGN.md, the README and docs/ from before the layers had folders
(issue 26 item 5) still reach the very modules, and what was pickled under them loads."""

import importlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import strided as sd

# old path -> where the module is now; written out here rather than read from
# strided.core.moved, so that a wrong entry there fails
OLD_PATHS = {
    "strided.errors": "strided.core.errors",
    "strided.threads": "strided.core.threads",
    "strided.caches": "strided.core.caches",
    "strided.storage": "strided.core.storage",
    "strided.dtype": "strided.core.dtype",
    "strided.array_api": "strided.api.array_api",
    "strided.numpy_api": "strided.api.numpy_api",
    "strided.numpy_fallback": "strided.api.numpy_fallback",
    "strided.dask_chunks": "strided.api.dask_chunks",
    "strided.fft": "strided.api.fft",
    "strided.linalg_api": "strided.api.linalg_api",
    "strided.linalg": "strided.api.linalg_api",
    "strided.tour": "strided.cli.tour",
    "strided.show": "strided.cli.show",
    "strided.check": "strided.cli.check",
    "strided.stubs": "strided.cli.stubs",
    "strided.bench": "strided.cli.bench",
    "strided.bench.harness": "strided.cli.bench.harness",
    "strided.bench.sweep": "strided.cli.bench.sweep",
}


@pytest.mark.parametrize("old, new", OLD_PATHS.items(), ids=list(OLD_PATHS))
def test_an_old_path_is_the_moved_module_itself(old, new):
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is module
    # the module keeps its own name and spec: the alias is only a second key
    assert module.__name__ == new and module.__spec__.name == new
    parent, _, leaf = old.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


def test_the_old_paths_as_attributes_and_in_from_imports():
    from strided import caches, errors, threads

    assert errors.ShapeError is sd.ShapeError
    assert threads.get_num_threads is sd.get_num_threads
    assert caches is importlib.import_module("strided.core.caches")
    assert sd.numpy_fallback is importlib.import_module("strided.api.numpy_fallback")
    # strided.linalg is still the standard's namespace, matmul beside the decompositions
    assert sd.linalg.matmul is sd.matmul and sd.linalg.tensordot is sd.tensordot
    assert "matmul" in sd.linalg.__all__


def test_a_name_that_never_existed_is_still_an_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("strided.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("strided.bench.no_such_bench")
    with pytest.raises(AttributeError, match="no_such_name"):
        sd.no_such_name


def test_a_tensor_and_an_error_round_trip_through_pickle():
    t = sd.from_numpy(np.arange(12.0).reshape(3, 4)).t()
    back = pickle.loads(pickle.dumps(t))
    assert back.shape == (4, 3) and np.array_equal(back.numpy(), np.arange(12.0).reshape(3, 4).T)
    err = sd.ShapeError("reshape: expected 12 elements, got 10")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is sd.ShapeError and again.args == err.args


def test_a_pickle_naming_the_old_module_loads_in_a_fresh_process():
    # protocol 0 names a class as text: "c<module>\n<name>\n"; this one says strided.errors,
    # as a pickle written before the move did, and loads where strided is not yet imported
    data = pickle.dumps(sd.ShapeError("cat: dims differ: (2, 3) and (2, 4)"), protocol=0)
    assert b"strided.core.errors\n" in data
    old = data.replace(b"strided.core.errors\n", b"strided.errors\n")
    code = ("import pickle, sys; e = pickle.loads(sys.stdin.buffer.read()); import strided;"
            "assert type(e) is strided.ShapeError, type(e); print(e)")
    out = subprocess.run([sys.executable, "-c", code], input=old, capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stdout.decode().strip() == "cat: dims differ: (2, 3) and (2, 4)"

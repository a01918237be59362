"""The import paths of the modules that moved into the layers' folders (issue 26 item 5).

DESIGN.md, the README and code written against earlier versions name ``strided.errors``,
``strided.fft``, ``strided.bench``, ...; each of those modules now lives in the folder of its
layer (``core/``, ``api/``, ``cli/``).  A shim file per old path would be a second module
whose classes are not the real ones (``except strided.errors.ShapeError`` would miss the
error raised); instead one finder on ``sys.meta_path`` answers an old name with the module
itself, so ``strided.errors is strided.core.errors`` and a pickle that names the old path
loads.  The module is imported only when its old name is asked for, so the layers that load
lazily (fft, linalg, the command line) stay lazy.  ``python -m`` takes the new path
(``python -m strided.cli.bench.pools``): runpy would run a module under its old package.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# old name under strided -> its module now, under strided (a package's submodules follow it)
MOVED = {
    "storage": "core.storage",
    "dtype": "core.dtype",
    "threads": "core.threads",
    "caches": "core.caches",
    "errors": "core.errors",
    "array_api": "api.array_api",
    "numpy_api": "api.numpy_api",
    "numpy_fallback": "api.numpy_fallback",
    "dask_chunks": "api.dask_chunks",
    "fft": "api.fft",
    "linalg_api": "api.linalg_api",
    # the standard's linalg namespace, as before (matmul's own rules are the op layer's ops.linalg)
    "linalg": "api.linalg_api",
    "tour": "cli.tour",
    "show": "cli.show",
    "check": "cli.check",
    "stubs": "cli.stubs",
    "bench": "cli.bench",
}


def new_name(fullname: str) -> str | None:
    """``strided.bench.pools`` -> ``strided.cli.bench.pools``; None for a name that did not move."""
    root, _, rest = fullname.partition(".")
    head, dot, tail = rest.partition(".")
    if root != "strided" or head not in MOVED:
        return None
    return f"strided.{MOVED[head]}{dot}{tail}"


class _Same(importlib.abc.Loader):
    """Loads an old name as the module already imported under its new one."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system has just set the old name's spec on the module: its own goes back,
        # so reloads and relative imports inside it keep seeing where it really is
        module.__spec__ = self.spec


class OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Same(importlib.import_module(new)))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), ahead of the path finder, which would
    otherwise load ``strided.bench.x`` a second time from the moved package's folder."""
    if not any(isinstance(f, OldPaths) for f in sys.meta_path):
        sys.meta_path.insert(0, OldPaths())

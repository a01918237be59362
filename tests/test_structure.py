"""The package's layering rules (DESIGN.md "Layers", issue 15), read from the source with ``ast``.

Every import counts, wherever it is written (module level, inside a function,
under ``if TYPE_CHECKING``), and so do ``importlib.import_module`` calls with a
literal name: a deferred import is the same dependency, paid later.  The
circle check is the one ``../shared/tools/import_cycles.py`` runs, reimplemented
here so that the test needs nothing outside the repository.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PKG = "strided"


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. strided.ops.elementwise
    path: str  # its file, relative to the repository root
    line: int
    target: str  # the module reached (the longest known module prefix), or the external name
    names: tuple  # the names taken (``from x import a, b``), () for ``import x``
    text: str  # the statement, as written

    def __str__(self):
        return f"{self.path}:{self.line}: {self.text}"


def _module_files() -> dict[str, Path]:
    files = {}
    for d, _, names in os.walk(SRC / PKG):
        for n in names:
            if n.endswith(".py"):
                p = Path(d) / n
                mod = str(p.relative_to(SRC))[:-3].replace(os.sep, ".")
                if mod.endswith(".__init__"):
                    mod = mod[: -len(".__init__")]
                files[mod] = p
    return files


FILES = _module_files()


def _resolve(name: str) -> str | None:
    """The package module an import of ``name`` reaches: the longest known prefix."""
    while name and name not in FILES:
        name = name.rpartition(".")[0]
    return name or None


def _relative(base: str, level: int, module: str | None) -> str:
    parts = base.split(".")
    up = parts[: len(parts) - (level - 1)]
    return ".".join(up + ([module] if module else []))


def _imports_of(mod: str, path: Path) -> list[Import]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    is_pkg = path.name == "__init__.py"
    base = mod if is_pkg else mod.rpartition(".")[0]
    rel = str(path.relative_to(SRC.parent)) if path.is_relative_to(SRC.parent) else str(path)
    out = []

    def add(node, target, names=()):
        text = ast.get_source_segment(source, node) or ast.dump(node)
        out.append(Import(mod, rel, node.lineno, target, tuple(names), " ".join(text.split())))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(node, _resolve(a.name) or a.name)
        elif isinstance(node, ast.ImportFrom):
            prefix = _relative(base, node.level, node.module) if node.level else (node.module or "")
            for a in node.names:
                full = f"{prefix}.{a.name}"
                if full in FILES:  # ``from pkg import submodule``
                    add(node, full)
                else:
                    add(node, _resolve(prefix) or prefix, [a.name])
        elif isinstance(node, ast.Call):
            # importlib.import_module("x") / import_module(".x", __name__ or __package__)
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if fname != "import_module" or not node.args:
                continue
            arg = node.args[0]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                continue
            name = arg.value
            if name.startswith("."):
                level = len(name) - len(name.lstrip("."))
                anchor = base
                if len(node.args) > 1 and isinstance(node.args[1], ast.Name) and node.args[1].id == "__name__":
                    anchor = mod
                name = _relative(anchor, level, name.lstrip(".") or None)
            add(node, _resolve(name) or name)
    return out


IMPORTS: list[Import] = [imp for mod, path in sorted(FILES.items()) for imp in _imports_of(mod, path)]


def _internal(imp: Import) -> bool:
    return imp.target == PKG or imp.target.startswith(PKG + ".")


def _under(mod: str, prefix: str) -> bool:
    return mod == prefix or mod.startswith(prefix + ".")


def _report(bad) -> str:
    return "\n  " + "\n  ".join(dict.fromkeys(str(b) for b in bad))


def test_the_scan_sees_the_package():
    # a guard against a scan that silently finds nothing
    for mod in ("strided", "strided.tensor", "strided.ops", "strided.ops.registry", "strided.kernels.elementwise",
                "strided.layout.layout", "strided.cute.layout", "strided.autograd"):
        assert mod in FILES, mod
    assert any(i.module == "strided.autograd" and i.target == "strided.ops.registry" for i in IMPORTS)
    # imports inside functions are seen (ops/__init__ imports linalg inside _matmul)
    assert any(i.module == "strided.ops" and i.target == "strided.ops.linalg" for i in IMPORTS)


# -- no import circle --------------------------------------------------------------------------


def _edges() -> dict[str, set[str]]:
    # As import_cycles.py: an edge to the package root itself is not counted (every
    # submodule import runs the root first; the root's own order is its business).
    edges = {m: set() for m in FILES}
    for imp in IMPORTS:
        t = imp.target
        if t in FILES and t != imp.module and t != PKG:
            edges[imp.module].add(t)
    return edges


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components with more than one file."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def test_scc_finder_finds_a_circle():
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    comps = _strongly_connected(_edges())
    lines = []
    for comp in comps:
        members = set(comp)
        lines.append("circle: " + ", ".join(comp))
        lines += [f"    {i}" for i in IMPORTS if i.module in members and i.target in members and i.target != i.module]
    assert not comps, "import circles between files of src/strided:\n" + "\n".join(lines)


# -- no private names across modules -----------------------------------------------------------


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_violations(imports):
    bad = [i for i in imports if _internal(i) and any(_private(n) for n in i.names)]
    # private modules too: ``import strided._x`` / ``from strided import _x``
    bad += [i for i in imports if _internal(i) and not i.names and any(_private(p) for p in i.target.split("."))]
    return bad


def test_no_module_imports_another_modules_underscore_names():
    bad = private_violations(IMPORTS)
    assert not bad, "imports of another module's underscore names:" + _report(bad)


def _module_names(mod: str, path: Path, tree) -> dict[str, str]:
    """Local names that an import in this file binds to a module of the package."""
    is_pkg = path.name == "__init__.py"
    base = mod if is_pkg else mod.rpartition(".")[0]
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            prefix = _relative(base, node.level, node.module) if node.level else (node.module or "")
            for a in node.names:
                if f"{prefix}.{a.name}" in FILES:
                    bound[a.asname or a.name] = f"{prefix}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in FILES:
                    bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    return bound


def attribute_violations(mod: str, path: Path) -> list[str]:
    """``other_module._name`` where other_module is a package module bound by an import here."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    bound = _module_names(mod, path, tree)
    rel = str(path.relative_to(SRC.parent)) if path.is_relative_to(SRC.parent) else str(path)
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, v = [node.attr], node.value
        while isinstance(v, ast.Attribute):
            chain.append(v.attr)
            v = v.value
        if not (isinstance(v, ast.Name) and v.id in bound):
            continue
        chain.reverse()  # e.g. ["kernels", "copy", "_x"] under the module bound to v.id
        target = bound[v.id]
        for k, part in enumerate(chain):
            if f"{target}.{part}" in FILES and k < len(chain) - 1:
                target = f"{target}.{part}"
                continue
            if _private(part) and target != mod:
                bad.append(f"{rel}:{node.lineno}: {ast.get_source_segment(source, node)} ({target}.{part})")
            break
    return bad


def test_no_module_reaches_into_another_modules_underscore_names():
    # the same rule for ``import m`` then ``m._name``: the private name is imported all the same
    bad = [b for mod, path in sorted(FILES.items()) for b in attribute_violations(mod, path)]
    assert not bad, "uses of another module's underscore names through a module attribute:" + _report(bad)


def test_attribute_rule_catches_a_planted_use(tmp_path):
    p = tmp_path / "fake.py"
    p.write_text("from strided.core import threads\nimport strided.kernels.copy as kc\nimport strided\n\n\n"
                 "def f():\n    threads._apply()\n    kc._x\n    strided.kernels.copy._y\n    threads.public\n")
    bad = attribute_violations("strided.ops.fake", p)
    named = sorted(b.rpartition("(")[2].rstrip(")") for b in bad)
    assert named == ["strided.core.threads._apply", "strided.kernels.copy._x", "strided.kernels.copy._y"], bad


# -- layer rules -------------------------------------------------------------------------------

KERNELS_MAY_NOT = ("strided.ops", "strided.tensor", "strided.creation", "strided.autograd", "strided.api",
                   "strided.interop")
LAYOUT_MAY = ("strided.core.errors", "strided.layout", "strided.cute")
TENSOR_MAY_NOT = ("strided.ops", "strided.creation", "strided.interop", "strided.autograd", "strided.api",
                  "strided.printing", "strided.kernels")


# The backends: the CPU's kernels and the CUDA backend (docs/architecture.md).
BACKEND_PACKAGES = ("strided.kernels", "strided.cuda")


def kernel_violations(imports):
    # the package root imports every layer: reaching for a name in it is importing them all
    return [i for i in imports if any(_under(i.module, b) for b in BACKEND_PACKAGES)
            and (i.target == PKG or any(_under(i.target, up) for up in KERNELS_MAY_NOT))]


def layout_violations(imports):
    bad = []
    for i in imports:
        if not (_under(i.module, "strided.layout") or _under(i.module, "strided.cute")):
            continue
        if i.target.split(".")[0] in ("numpy", "numba"):
            bad.append(i)
        elif _internal(i) and not any(_under(i.target, a) for a in LAYOUT_MAY):
            bad.append(i)
    return bad


def tensor_violations(imports):
    return [i for i in imports if i.module == "strided.tensor"
            and (i.target == PKG or any(_under(i.target, f) for f in TENSOR_MAY_NOT))]


# The folders are layers (docs/architecture.md): core/ is the base, which imports nothing else of
# the package; api/ (the namespaces over the op layer) is imported only by the layers above it.
API_IMPORTED_BY = ("strided.api", "strided.fusion", "strided.cli")


def core_violations(imports):
    return [i for i in imports if _under(i.module, "strided.core") and _internal(i)
            and not _under(i.target, "strided.core")]


def api_violations(imports):
    return [i for i in imports if _under(i.target, "strided.api") and i.module != PKG
            and not any(_under(i.module, a) for a in API_IMPORTED_BY)]


def test_core_imports_nothing_above_it():
    bad = core_violations(IMPORTS)
    assert not bad, "strided.core imports a layer above it:" + _report(bad)


def test_only_the_layers_above_the_namespaces_import_them():
    bad = api_violations(IMPORTS)
    assert not bad, "strided.api imported from a layer below it:" + _report(bad)


def test_kernels_import_nothing_above_them():
    bad = kernel_violations(IMPORTS)
    assert not bad, "strided.kernels imports a layer above it:" + _report(bad)


def test_layout_and_cute_are_pure_integer_algebra():
    bad = layout_violations(IMPORTS)
    assert not bad, "strided.layout / strided.cute import numpy, numba or a strided module above them:" + _report(bad)


def test_tensor_imports_nothing_above_it():
    bad = tensor_violations(IMPORTS)
    assert not bad, "strided.tensor imports a layer above it:" + _report(bad)


PLANTED = [
    # (module the fake file pretends to be, file name, statement, rule that must name it)
    ("strided.kernels.fake", "fake.py", "from ..tensor import Tensor", kernel_violations),
    ("strided.kernels.fake", "fake.py", "import strided.ops.elementwise", kernel_violations),
    ("strided.kernels.fake", "fake.py", "from strided import Tensor", kernel_violations),
    ("strided.kernels", "__init__.py", "from .. import autograd", kernel_violations),
    ("strided.kernels.fake", "fake.py", "importlib.import_module('strided.ops.linalg')", kernel_violations),
    ("strided.kernels.fake", "fake.py", "from ..api import array_api", kernel_violations),
    ("strided.cuda.fake", "fake.py", "from ..tensor import Tensor", kernel_violations),
    ("strided.layout.fake", "fake.py", "import numpy as np", layout_violations),
    ("strided.cute.fake", "fake.py", "from numba import njit", layout_violations),
    ("strided.cute.fake", "fake.py", "from ..core.storage import Storage", layout_violations),
    ("strided.layout.fake", "fake.py", "from strided import dtype", layout_violations),
    ("strided.tensor", "tensor.py", "from .ops import unary", tensor_violations),
    ("strided.tensor", "tensor.py", "from . import printing", tensor_violations),
    ("strided.tensor", "tensor.py", "from .kernels.copy import copy_into", tensor_violations),
    ("strided.core.fake", "fake.py", "from ..layout import Layout", core_violations),
    ("strided.core.fake", "fake.py", "from strided import ops", core_violations),
    ("strided.ops.fake", "fake.py", "from ..api import numpy_api", api_violations),
    ("strided.fake", "fake.py", "import strided.api.fft", api_violations),
    ("strided.ops.fake", "fake.py", "from ..layout.layout import _contiguous", private_violations),
    ("strided.fake", "fake.py", "from .ops import _helper", private_violations),
]


@pytest.mark.parametrize("mod, fname, stmt, rule", PLANTED, ids=[p[2] for p in PLANTED])
def test_rules_catch_a_planted_violation_inside_a_function(mod, fname, stmt, rule, tmp_path):
    p = tmp_path / fname
    p.write_text("import importlib\n\n\ndef f():\n    " + stmt + "\n")
    found = rule(_imports_of(mod, p))
    assert found and all(i.line == 5 for i in found), f"{rule.__name__} missed {stmt!r} in {mod}"


@pytest.mark.parametrize("mod, stmt, rule", [
    ("strided.kernels.fake", "from ..layout.layout import Layout", kernel_violations),
    ("strided.kernels.fake", "from strided.core import threads", kernel_violations),
    ("strided.layout.fake", "from ..core.errors import ShapeError", layout_violations),
    ("strided.cute.fake", "from strided.layout.layout import Layout", layout_violations),
    ("strided.tensor", "from .core.storage import Storage", tensor_violations),
    ("strided.fake", "from .ops import __all__", private_violations),
    ("strided.core.fake", "from .errors import StridedError", core_violations),
    ("strided.fusion.fake", "from ..api import array_api", api_violations),
])
def test_rules_allow_what_is_allowed(mod, stmt, rule, tmp_path):
    p = tmp_path / "fake.py"
    p.write_text(stmt + "\n")
    assert rule(_imports_of(mod, p)) == []


CLI_LAYER = ("strided.cli", "strided.__main__")  # cli/: the command line, tour, show, check, stubs, bench


def test_only_the_command_line_layer_imports_it_or_the_package_root():
    # DESIGN.md: the cli (tour, bench, show, check) knows the library, never the reverse
    bad = [i for i in IMPORTS
           if not any(_under(i.module, c) for c in CLI_LAYER)
           and (any(_under(i.target, c) for c in CLI_LAYER) or (i.target == PKG and i.module != PKG))]
    assert not bad, "library modules importing the command-line layer or the package root:" + _report(bad)


def test_only_strided_devices_loads_the_cuda_backend():
    # A CPU-only program never imports numba.cuda: the CUDA backend is loaded by
    # strided.devices when a CUDA device is asked for, and numba.cuda only by that backend.
    bad = [i for i in IMPORTS if _under(i.target, "strided.cuda") and not _under(i.module, "strided.cuda")
           and i.module != "strided.devices"]
    bad += [i for i in IMPORTS if (_under(i.target, "numba.cuda") or (i.target == "numba" and "cuda" in i.names))
            and not _under(i.module, "strided.cuda")]
    assert not bad, "imports of the CUDA backend or numba.cuda outside strided.devices and strided.cuda:" + _report(bad)
    assert any(i.module == "strided.devices" and i.target == "strided.cuda" for i in IMPORTS)  # the scan sees it


# -- caches ---------------------------------------------------------------------------------------

# Module-level dicts that are tables, not caches: each is filled once per op, entry or name
# as the program defines them, and read; never a memo of results.
TABLES = {
    "strided.ops.registry": {"REGISTRY"},  # the op registry
    "strided.kernels.optable": {"OPS"},  # the op table
    "strided.kernels.scalar": {"PORTABLE"},  # the portable functions a backend compiles along
    "strided.kernels.elementwise": {"UNARY_OPS", "BINARY_OPS"},  # the dispatch table, from the op table
    "strided.api.numpy_api": {"UFUNCS"},  # NumPy's ufunc map, from the op table
    "strided.cuda.scalar": {"MISSING"},  # the primitives CUDA lacks, with their reasons
    "strided.core.threads": {"ENV_SET"},  # what strided set in the environment, for the report
    "strided.core.storage": {"MALLOC_SET"},  # the malloc settings strided made, for the report
    "strided.kernels.codegen": {"_STATE"},  # the kernel directory and fingerprint, found once
    "strided.cli.bench.fused_bench": {"_FIRST"},  # a benchmark's first-call times
}


def _module_dicts_and_lrus():
    found = []
    for mod, path in FILES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target, value = node.target.id, node.value
            if target and (isinstance(value, ast.Dict) and not value.keys or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
                    and not value.args and not value.keywords)):
                found.append((mod, target, node.lineno, "an empty dict"))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    text = ast.unparse(d)
                    if "lru_cache" in text or text in ("functools.cache", "cache"):
                        found.append((mod, node.name, node.lineno, f"@{text}"))
    return found


def test_every_cache_is_made_by_caches():
    # issue 26 item 4: a memo at module level is a caches.cache/lru/table (listed, bounded or
    # marked unbounded, cleared with the thread count where it depends on it), or one of the
    # TABLES above; the pure layout layer keeps its lru_cache (it imports nothing of ours)
    bad = [f"{mod}:{line}: {name} ({what})" for mod, name, line, what in _module_dicts_and_lrus()
           if name not in TABLES.get(mod, ()) and not _under(mod, "strided.layout")
           and not (mod == "strided.cli.bench.harness" and name == "torch_or_none")]
    assert not bad, "module-level caches not made through strided.caches:\n  " + "\n  ".join(bad)


def test_the_cache_rule_catches_a_planted_memo(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text("_MEMO: dict = {}\n")
    monkeypatch.setitem(FILES, "strided.kernels.planted", planted)
    assert ("strided.kernels.planted", "_MEMO", 1, "an empty dict") in _module_dicts_and_lrus()

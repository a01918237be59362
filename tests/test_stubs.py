"""tensor.pyi: Tensor's whole surface for editors and type checkers, kept true by this test."""

import ast
import subprocess
import sys
from pathlib import Path

STUB = Path(__file__).resolve().parent.parent / "src" / "strided" / "tensor.pyi"


def test_the_committed_stub_is_what_the_live_module_gives():
    # in a fresh process: what ``import strided`` installs, nothing a test added
    done = subprocess.run([sys.executable, "-m", "strided", "stubs", "--check"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_the_stub_names_every_public_method_of_the_live_class():
    import strided as sd

    tree = ast.parse(STUB.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    stubbed = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    stubbed |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)}
    live = {n for n in dir(sd.Tensor) if not n.startswith("_")}
    assert live <= stubbed, f"methods missing from tensor.pyi: {sorted(live - stubbed)}"
    assert {"exp", "add", "softmax", "sum", "matmul", "t", "backward", "__add__"} <= stubbed

"""The op registry, the kernel tables and the gradient rules agree.

Each op is declared once in ``strided.ops`` (``declare(name, family, ...)``) and
Tensor's math methods are installed from that table.  These tests hold the
table against the kernels' own tables (every declared kernel exists, every
kernel op is reachable), against the gradient rules (each entry has one and
it matches finite differences) and against Tensor (every method and operator
an entry lists exists and runs that op, checked against NumPy).
"""

import re

import numpy as np
import pytest

import strided as sd
from strided.kernels import elementwise as kew
from strided.kernels import reduce as kred
from strided.ops import registry
from strided.ops.registry import NOT_DIFFERENTIABLE, REGISTRY, OpDef, declare
from strided.tensor import Op, Tensor

# Kernel ops that no registry entry names, on purpose (reachable only from inside
# the op layer or not at all).  A literal, so that a new unregistered kernel op fails.
UNREGISTERED_UNARY_KERNELS = set()
UNREGISTERED_BINARY_KERNELS = set()
UNREGISTERED_REDUCE_KERNELS = {"prod"}
UNREGISTERED_ARG_REDUCE_KERNELS = set()

KERNEL_TABLES = {
    "unary": kew.UNARY_OPS,
    "binary": kew.BINARY_OPS,
    "reduce": kred.REDUCE_OPS,
    "arg_reduce": kred.ARG_REDUCE_OPS,
}


def entries(family):
    return [spec for spec in REGISTRY.values() if spec.family == family]


# -- the registry against the kernel tables ------------------------------------------------


def test_registry_is_populated_and_keyed_by_name():
    assert len(REGISTRY) > 0
    for name, spec in REGISTRY.items():
        assert isinstance(spec, OpDef), name
        assert spec.name == name, f"REGISTRY[{name!r}] is an OpDef named {spec.name!r}"
        assert spec.family in registry.FAMILIES, f"{name}: family {spec.family!r}"
        assert spec.dtype_rule in registry.DTYPE_RULES, f"{name}: dtype rule {spec.dtype_rule!r}"


@pytest.mark.parametrize("family", sorted(KERNEL_TABLES))
def test_every_entry_kernel_is_in_its_family_table(family):
    table = KERNEL_TABLES[family]
    specs = entries(family)
    assert specs, f"no registry entry of family {family!r}"
    for spec in specs:
        assert spec.kernel is not None, f"{family} op {spec.name!r} declares no kernel"
        assert spec.kernel in table, (
            f"{family} op {spec.name!r} declares kernel {spec.kernel!r}, which is not in the kernel table "
            f"{sorted(table)}"
        )


@pytest.mark.parametrize(
    "family, expected_unregistered",
    [
        ("unary", UNREGISTERED_UNARY_KERNELS),
        ("binary", UNREGISTERED_BINARY_KERNELS),
        ("reduce", UNREGISTERED_REDUCE_KERNELS),
        ("arg_reduce", UNREGISTERED_ARG_REDUCE_KERNELS),
    ],
)
def test_every_kernel_op_is_reachable_from_the_registry(family, expected_unregistered):
    table = set(KERNEL_TABLES[family])
    reached = {spec.kernel for spec in entries(family)}
    unregistered = table - reached
    assert unregistered == expected_unregistered, (
        f"{family} kernel ops without a registry entry: {sorted(unregistered)} "
        f"(expected exactly {sorted(expected_unregistered)})"
    )


def test_elementwise_entries_use_their_own_kernel_name():
    # An elementwise op runs the kernel of the same name (``elementwise.install(family, name)``).
    for family in ("unary", "binary"):
        for spec in entries(family):
            assert spec.kernel == spec.name, f"{family} op {spec.name!r} declares kernel {spec.kernel!r}"


# -- gradient rules --------------------------------------------------------------------------


def test_every_entry_has_a_gradient_rule():
    missing = [name for name, spec in REGISTRY.items() if spec.grad is None]
    assert not missing, f"registry entries without a gradient rule: {missing}"
    for name, spec in REGISTRY.items():
        assert callable(spec.grad), f"{name}: grad {spec.grad!r} is not callable"
        assert registry.gradient_rule(name) is spec.grad


def test_not_differentiable_ops_are_exactly_these():
    nd = {name for name, spec in REGISTRY.items() if spec.grad is NOT_DIFFERENTIABLE}
    assert nd == {"not", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "argmax", "argmin",
                  "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "floor_divide", "nextafter",
                  "bitwise_left_shift", "bitwise_right_shift", "argsort", "searchsorted", "nonzero"}


def _hand_recorded(name):
    v = sd.Var(np.array([1.0, 2.0, 3.0]))
    t = Tensor(v._storage, v.layout, v.dtype, Op(name, (v,), {}))
    assert t.track_op()
    return t


def test_backward_through_an_op_declared_without_a_rule_names_it(monkeypatch):
    name = "test_registry_op_without_rule"
    assert name not in REGISTRY
    # monkeypatch removes the entry again after the test: nothing is left behind.
    monkeypatch.setitem(REGISTRY, name, OpDef(name, "unary", "same", kernel=None, grad=None))
    with pytest.raises(sd.StridedError, match=re.escape(name)):
        _hand_recorded(name).backward()


def test_backward_through_every_rule_less_entry_names_it():
    for name, spec in REGISTRY.items():
        if spec.grad is None:
            with pytest.raises(sd.StridedError, match=re.escape(name)):
                _hand_recorded(name).backward()


def test_backward_through_an_unknown_op_raises():
    with pytest.raises(sd.StridedError, match="no_such_op"):
        _hand_recorded("no_such_op").backward()


def test_backward_through_a_not_differentiable_op_gives_no_gradient():
    v = sd.Var(np.array([1.0, 2.0, 3.0]))
    t = Tensor(v._storage, v.layout, v.dtype, Op("eq", (v,), {}))
    grads = t.backward()
    assert grads.get(v) is None


def test_every_recorded_op_name_is_declared():
    x = np.arange(1.0, 25.0).reshape(2, 3, 4) / 10
    v = sd.Var(x)
    other = sd.tensor(np.ones((4, 2)))
    outs = [
        v.exp(), v.log(), v + 1.0, 2.0 * v, v - v, v / 3.0, v ** 2.0, v.maximum(v), v.minimum(v),
        v.sum(0), v.mean(1), v.max(2), v.min(0), v.sum_all(), v.sum_keepdim(1),
        v.narrow(1, 0, 2), v.transpose(0, 2), v.permute((2, 0, 1)), v.unsqueeze(0), v.unsqueeze(0).squeeze(0),
        v.flip((0,)), v.reshape((6, 4)), v.flatten_all(), v[0, 1:, ::2], v[..., None], v.t(),
        v.broadcast_as((5, 2, 3, 4)), v.expand((5, 2, 3, 4)), sd.as_strided(v, (2, 2), (1, 1)),
        v @ other, sd.cat([v, v], 1), v.index_select(sd.tensor([0, 0], dtype=sd.i64), 1),
        sd.where(v > 1.0, v, 0.0), v.to_dtype(sd.f32), v.copy(), v.clone(), v.contiguous(),
        v.transpose(0, 1).contiguous(),
        v.force_contiguous(), v.sqr().abs().neg().relu().tanh().sigmoid().sin().cos().sign().recip().sqrt(),
    ]
    names = set()
    for out in outs:
        for node in sd.sorted_nodes(out):
            if node._op is not None:
                names.add(node._op.name)
    undeclared = names - set(REGISTRY)
    assert not undeclared, f"ops recorded under names the registry does not know: {sorted(undeclared)}"
    # and backward runs through all of them
    for out in outs:
        if out.dtype in (sd.f32, sd.f64):
            out.sum_all().backward()


# -- methods and operators -------------------------------------------------------------------


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


UNARY_ORACLE = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "sqr": lambda x: x * x,
    "abs": np.abs,
    "neg": np.negative,
    "relu": lambda x: np.maximum(x, 0),
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "sin": np.sin,
    "cos": np.cos,
    "sign": np.sign,
    "recip": lambda x: 1.0 / x,
    "not": np.logical_not,
    "bitwise_invert": np.invert,
    "conj": np.conj,
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
    "atanh": np.arctanh, "cosh": np.cosh, "sinh": np.sinh, "tan": np.tan, "expm1": np.expm1, "log1p": np.log1p,
    "log2": np.log2, "log10": np.log10, "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "round": np.rint,
}
POSITIVE_ONLY = {"log", "sqrt", "log1p", "log2", "log10"}
# (low, high) of |x| for the ops defined on part of the line only (both signs drawn unless positive)
DOMAIN = {"acos": (0.05, 0.95), "asin": (0.05, 0.95), "atanh": (0.05, 0.95), "tan": (0.1, 1.2),
          "acosh": (1.2, 3.0)}
POSITIVE_ONLY |= {"acosh"}

BINARY_ORACLE = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "pow": np.power,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "logaddexp": np.logaddexp,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "nextafter": np.nextafter,
    "bitwise_left_shift": np.left_shift,  # counts outside [0, 64) included: NumPy's 0 and -1
    "bitwise_right_shift": np.right_shift,
}
BOOL_ONLY = {"not", "logical_and", "logical_or"}
INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"}


def _scalar(name, value):
    """A Python scalar of the kind the op takes."""
    return True if name in BOOL_ONLY else 6 if name in INT_ONLY else value


def _unary_data(name, rng):
    if name in BOOL_ONLY:
        return rng.random((3, 4)) > 0.5
    if name in INT_ONLY:
        return rng.integers(-50, 50, (3, 4))
    return _float_data(name, rng, (3, 4))


def _float_data(name, rng, shape):
    lo, hi = DOMAIN.get(name, (0.5, 2.0))
    x = rng.uniform(lo, hi, shape)
    return x if name in POSITIVE_ONLY else x * rng.choice([-1.0, 1.0], shape)


def _binary_data(name, rng, shape_a=(3, 4), shape_b=(3, 4)):
    if name in BOOL_ONLY:
        return rng.random(shape_a) > 0.5, rng.random(shape_b) > 0.5
    if name in INT_ONLY:
        return rng.integers(-50, 50, shape_a), rng.integers(-50, 50, shape_b)
    a = rng.uniform(0.5, 2.0, shape_a)
    b = rng.uniform(0.5, 2.0, shape_b)
    if name in ("eq", "ne", "le", "ge") and shape_a == shape_b:
        b[0] = a[0]  # some ties, so equality is exercised both ways
    return a, b


def _check(got, want, what):
    assert isinstance(got, Tensor), f"{what} returned {type(got).__name__}, not a Tensor"
    got = got.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, NumPy {want.shape}"
    if want.dtype == np.bool_:
        assert got.dtype == np.bool_, f"{what}: dtype {got.dtype}, NumPy bool"
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=what)


def test_every_listed_name_exists_on_tensor():
    missing = []
    for spec in REGISTRY.values():
        for name in spec.methods + spec.operators + spec.reflected:
            if not hasattr(Tensor, name):
                missing.append(f"{spec.name}: {name}")
    assert not missing, f"registry names missing from Tensor: {missing}"


def test_every_elementwise_op_has_an_oracle_here():
    assert {s.name for s in entries("unary")} <= set(UNARY_ORACLE), "a unary op without a NumPy oracle in this test"
    assert {s.name for s in entries("binary")} <= set(BINARY_ORACLE), "a binary op without a NumPy oracle in this test"


@pytest.mark.parametrize("name", [s.name for s in entries("unary")])
def test_unary_methods_and_operators_match_numpy(name):
    spec = REGISTRY[name]
    assert spec.methods or spec.operators, f"unary op {name!r} is reachable from no Tensor method"
    rng = np.random.default_rng(sum(map(ord, name)))
    x = _unary_data(name, rng)
    want = UNARY_ORACLE[name](x)
    t = sd.tensor(x)
    for m in spec.methods + spec.operators:
        _check(getattr(t, m)(), want, f"Tensor.{m}")
    # on a strided view (a transposed, flipped input) as well
    xv = x.T[::-1]
    tv = sd.tensor(x).transpose(0, 1).flip((0,))
    for m in spec.methods + spec.operators:
        _check(getattr(tv, m)(), UNARY_ORACLE[name](xv), f"Tensor.{m} on a view")


@pytest.mark.parametrize("name", [s.name for s in entries("unary")])
def test_unary_method_records_its_op(name):
    spec = REGISTRY[name]
    if spec.grad is NOT_DIFFERENTIABLE:
        return
    v = sd.Var(np.array([0.5, 1.5]))
    for m in spec.methods + spec.operators:
        out = getattr(v, m)()
        assert out._op is not None and out._op.name == name, f"Tensor.{m} recorded {out._op!r}, not {name!r}"


@pytest.mark.parametrize("name", [s.name for s in entries("binary")])
def test_binary_methods_and_operators_match_numpy(name):
    spec = REGISTRY[name]
    assert spec.methods or spec.operators, f"binary op {name!r} is reachable from no Tensor method"
    rng = np.random.default_rng(sum(map(ord, name)))
    fn = BINARY_ORACLE[name]
    x, y = _binary_data(name, rng)
    a, b = sd.tensor(x), sd.tensor(y)
    for m in spec.methods + spec.operators:
        _check(getattr(a, m)(b), fn(x, y), f"Tensor.{m}(tensor)")
    # broadcasting: (3, 4) op (4,) and (3, 1) op (1, 4)
    x2, y2 = _binary_data(name, rng, (3, 4), (4,))
    x3, y3 = _binary_data(name, rng, (3, 1), (1, 4))
    for m in spec.methods + spec.operators:
        _check(getattr(sd.tensor(x2), m)(sd.tensor(y2)), fn(x2, y2), f"Tensor.{m} broadcasting (3,4),(4,)")
        _check(getattr(sd.tensor(x3), m)(sd.tensor(y3)), fn(x3, y3), f"Tensor.{m} broadcasting (3,1),(1,4)")
    # with a Python scalar on the right
    s = _scalar(name, 1.25)
    for m in spec.methods + spec.operators:
        _check(getattr(a, m)(s), fn(x, s), f"Tensor.{m}(scalar)")


@pytest.mark.parametrize("name", [s.name for s in entries("binary") if s.reflected])
def test_reflected_operators_compute_other_op_self(name):
    spec = REGISTRY[name]
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    fn = BINARY_ORACLE[name]
    x, _ = _binary_data(name, rng)
    t = sd.tensor(x)
    s = _scalar(name, 2.0)
    for r in spec.reflected:
        _check(getattr(t, r)(s), fn(s, x), f"Tensor.{r}({s!r}) (= {s!r} {name} t)")


def test_reflected_operators_through_python_syntax():
    x = np.random.default_rng(7).uniform(0.5, 2.0, (2, 3))
    t = sd.tensor(x)
    _check(2.0 - t, 2.0 - x, "2.0 - t")
    _check(2.0 + t, 2.0 + x, "2.0 + t")
    _check(2.0 * t, 2.0 * x, "2.0 * t")
    _check(2.0 / t, 2.0 / x, "2.0 / t")
    _check(2.0 ** t, 2.0 ** x, "2.0 ** t")
    _check(-t, -x, "-t")
    _check(abs(-t), x, "abs(-t)")
    m = x > 1.0
    tm = sd.tensor(m)
    _check(True & tm, True & m, "True & t")
    _check(False | tm, False | m, "False | t")
    _check(~tm, ~m, "~t")


def test_matmul_operators():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    a, b = sd.tensor(x), sd.tensor(y)
    for m in REGISTRY["matmul"].methods + REGISTRY["matmul"].operators:
        np.testing.assert_allclose(getattr(a, m)(b).numpy(), x @ y, rtol=1e-12)
    for r in REGISTRY["matmul"].reflected:  # other @ self
        np.testing.assert_allclose(getattr(b, r)(a).numpy(), x @ y, rtol=1e-12)
    np.testing.assert_allclose((a @ b).numpy(), x @ y, rtol=1e-12)


@pytest.mark.parametrize("name", [s.name for s in entries("reduce")])
def test_reduce_methods_match_numpy(name):
    spec = REGISTRY[name]
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[name]
    x = np.random.default_rng(5).standard_normal((3, 4, 5))
    t = sd.tensor(x)
    for m in spec.methods:
        for dim in (0, 1, -1):
            for keepdim in (False, True):
                got = getattr(t, m)(dim, keepdim=keepdim)
                _check(got, fn(x, axis=dim, keepdims=keepdim), f"Tensor.{m}({dim}, keepdim={keepdim})")
        v = sd.Var(x)
        out = getattr(v, m)(0)
        names = [n._op.name for n in sd.sorted_nodes(out) if n._op is not None]
        assert name in names, f"Tensor.{m} recorded {names}, not {name!r}"


@pytest.mark.parametrize("name", [s.name for s in entries("arg_reduce")])
def test_arg_reduce_methods_match_numpy(name):
    spec = REGISTRY[name]
    fn = {"argmax": np.argmax, "argmin": np.argmin}[name]
    x = np.random.default_rng(6).standard_normal((3, 4, 5))
    t = sd.tensor(x)
    for m in spec.methods:
        for dim in (0, 1, -1):
            got = getattr(t, m)(dim)
            assert got.dtype == sd.i64
            np.testing.assert_array_equal(got.numpy(), fn(x, axis=dim), err_msg=f"Tensor.{m}({dim})")


def test_copy_family_methods():
    x = np.arange(12.0).reshape(3, 4)
    t = sd.tensor(x).transpose(0, 1)
    for m in REGISTRY["copy"].methods:
        c = getattr(t, m)()
        np.testing.assert_array_equal(c.numpy(), x.T)
        assert not sd.same_buffer(c, t)
    for m in REGISTRY["clone"].methods:
        c = getattr(t, m)()
        np.testing.assert_array_equal(c.numpy(), x.T)
    for m in REGISTRY["to_dtype"].methods:
        c = getattr(t, m)(sd.f32)
        assert c.dtype == sd.f32
        np.testing.assert_array_equal(c.numpy(), x.T.astype(np.float32))
    for m in REGISTRY["index_select"].methods:
        idx = sd.tensor(np.array([2, 0, 2]), dtype=sd.i64)
        np.testing.assert_array_equal(getattr(sd.tensor(x), m)(idx, 0).numpy(), x[[2, 0, 2]])


# -- declare -------------------------------------------------------------------------------


def _snapshot():
    return dict(REGISTRY)


def test_declare_refuses_a_second_declaration():
    before = _snapshot()
    for name, spec in before.items():
        with pytest.raises(sd.StridedError, match=re.escape(repr(name))):
            declare(name, spec.family, spec.dtype_rule, kernel=spec.kernel, grad=spec.grad)
    assert REGISTRY == before
    assert all(REGISTRY[n] is before[n] for n in before)


def test_declare_refuses_an_unknown_family():
    name = "test_registry_new_op"
    assert name not in REGISTRY
    before = _snapshot()
    with pytest.raises(sd.StridedError, match="no_such_family"):
        declare(name, "no_such_family", "same")
    assert name not in REGISTRY
    assert REGISTRY == before


def test_declare_refuses_an_unknown_dtype_rule():
    name = "test_registry_new_op"
    assert name not in REGISTRY
    before = _snapshot()
    with pytest.raises(sd.StridedError, match="no_such_rule"):
        declare(name, "unary", "no_such_rule")
    assert name not in REGISTRY
    assert REGISTRY == before


def test_lookup_unknown_name():
    with pytest.raises(sd.StridedError, match="no_such_op"):
        registry.lookup("no_such_op")
    assert registry.lookup("exp") is REGISTRY["exp"]


# -- gradients against central finite differences (f64) ----------------------------------

H = 1e-6
RTOL = 1e-4
ATOL = 1e-7


def numgrad(f, arrays, i):
    """d f(*arrays) / d arrays[i] by central differences, element by element."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    a = arrays[i]
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + H
        hi = f(*arrays)
        a[idx] = old - H
        lo = f(*arrays)
        a[idx] = old
        g[idx] = (hi - lo) / (2 * H)
    return g


DIFFERENTIABLE_UNARY = [s.name for s in entries("unary") if s.grad is not NOT_DIFFERENTIABLE]


def test_differentiable_unary_ops_are_the_expected_ones():
    assert set(DIFFERENTIABLE_UNARY) == {
        "exp", "log", "sqrt", "sqr", "abs", "neg", "relu", "tanh", "sigmoid", "sin", "cos", "sign", "recip",
        "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "expm1", "log1p", "log2", "log10",
        "ceil", "floor", "trunc", "round", "conj",
    }


@pytest.mark.parametrize("name", DIFFERENTIABLE_UNARY)
def test_unary_gradient_matches_finite_differences(name):
    spec = REGISTRY[name]
    assert spec.methods, f"differentiable unary op {name!r} has no method"
    rng = np.random.default_rng(100 + sum(map(ord, name)))
    x = _float_data(name, rng, (3, 4))  # both signs where the function is defined there (kinks stay away from 0)
    oracle = UNARY_ORACLE[name]
    want = numgrad(lambda a: np.sum(oracle(a)), [x], 0)
    for m in spec.methods + spec.operators:
        v = sd.Var(x)
        out = getattr(v, m)()
        assert out.dtype == sd.f64
        grads = out.sum_all().backward()
        g = grads[v]
        assert g.shape == v.shape and g.dtype == sd.f64
        np.testing.assert_allclose(g.numpy(), want, rtol=RTOL, atol=ATOL, err_msg=f"d/dx sum({m}(x))")
    # weighted, through a strided view: the rule gets a non-uniform incoming gradient
    w = rng.uniform(-1.0, 1.0, (4, 3))
    v = sd.Var(x)
    out = (getattr(v.transpose(0, 1), spec.methods[0])() * sd.tensor(w)).sum_all()
    want_w = numgrad(lambda a: np.sum(oracle(a.T) * w), [x], 0)
    np.testing.assert_allclose(out.backward()[v].numpy(), want_w, rtol=RTOL, atol=ATOL,
                               err_msg=f"d/dx sum({spec.methods[0]}(x.T) * w)")


BINARY_GRAD = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "hypot", "copysign", "logaddexp",
               "remainder"]


def _binary_inputs(name, rng, shape):
    a = rng.uniform(0.5, 2.0, shape)
    b = rng.uniform(0.5, 2.0, shape)
    if name in ("maximum", "minimum"):
        # no ties, and each side wins somewhere: b = a +- at least 0.1
        b = a + np.where(np.arange(a.size).reshape(shape) % 2 == 0, 1.0, -1.0) * rng.uniform(0.1, 0.4, shape)
    return a, b


@pytest.mark.parametrize("name", BINARY_GRAD)
def test_binary_gradient_matches_finite_differences(name):
    spec = REGISTRY[name]
    assert spec.grad is not NOT_DIFFERENTIABLE
    fn = BINARY_ORACLE[name]
    rng = np.random.default_rng(200 + sum(map(ord, name)))
    x, y = _binary_inputs(name, rng, (3, 4))
    for m in spec.methods + spec.operators:
        a, b = sd.Var(x), sd.Var(y)
        grads = getattr(a, m)(b).sum_all().backward()
        for i, var in enumerate((a, b)):
            want = numgrad(lambda p, q: np.sum(fn(p, q)), [x, y], i)
            np.testing.assert_allclose(grads[var].numpy(), want, rtol=RTOL, atol=ATOL,
                                       err_msg=f"d/d{'ab'[i]} sum(a.{m}(b))")


@pytest.mark.parametrize("name", BINARY_GRAD)
def test_binary_gradient_with_broadcasting_matches_finite_differences(name):
    spec = REGISTRY[name]
    fn = BINARY_ORACLE[name]
    rng = np.random.default_rng(300 + sum(map(ord, name)))
    x = rng.uniform(0.5, 2.0, (3, 4))
    y = rng.uniform(0.5, 2.0, (4,))
    if name in ("maximum", "minimum"):
        assert not np.any(np.abs(x - y) < 1e-3)
    w = rng.uniform(-1.0, 1.0, (3, 4))
    m = spec.methods[0]
    a, b = sd.Var(x), sd.Var(y)
    grads = (getattr(a, m)(b) * sd.tensor(w)).sum_all().backward()
    for i, var in enumerate((a, b)):
        want = numgrad(lambda p, q: np.sum(fn(p, q) * w), [x, y], i)
        assert grads[var].shape == var.shape
        np.testing.assert_allclose(grads[var].numpy(), want, rtol=RTOL, atol=ATOL,
                                   err_msg=f"d/d{'ab'[i]} sum(a.{m}(b) * w), b broadcast")


@pytest.mark.parametrize("name", [s.name for s in entries("reduce")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce_gradient_matches_finite_differences(name, keepdim):
    spec = REGISTRY[name]
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[name]
    rng = np.random.default_rng(400 + sum(map(ord, name)))
    x = rng.permutation(np.linspace(0.5, 2.0, 12)).reshape(3, 4)  # distinct values: no ties for max/min
    w = rng.uniform(-1.0, 1.0, (1, 4) if keepdim else (4,))
    want = numgrad(lambda a: np.sum(fn(a, axis=0, keepdims=keepdim) * w), [x], 0)
    for m in spec.methods:
        v = sd.Var(x)
        out = getattr(v, m)(0, keepdim=keepdim)
        g = (out * sd.tensor(w)).sum_all().backward()[v]
        np.testing.assert_allclose(g.numpy(), want, rtol=RTOL, atol=ATOL,
                                   err_msg=f"d/dx sum({m}(x, 0, keepdim={keepdim}) * w)")

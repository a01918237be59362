"""Complex cosh, sinh, tanh, expm1, acos, acosh, asinh and atanh at infinite and NaN parts: the
standard's special-case tables (C99 Annex G), transcribed below from the 2024.12 text one row
per case, then NumPy (npymath, which follows the same tables) on a grid of non-finite inputs,
and the symmetries the standard asks for.  c128 carries the tables; tanh runs in c64 too."""

import math

import numpy as np
import pytest

import strided as sd

INF, NAN, PI = math.inf, math.nan, math.pi
ANY = "any sign"  # the standard leaves this zero's or infinity's sign open

# (a, b) -> (real, imag) of the result; (value, ANY) leaves a part's sign open
TABLES = {
    "cosh": [
        ((0.0, 0.0), (1.0, 0.0)), ((0.0, INF), (NAN, (0.0, ANY))), ((0.0, NAN), (NAN, (0.0, ANY))),
        ((1.5, INF), (NAN, NAN)), ((1.5, NAN), (NAN, NAN)), ((INF, 0.0), (INF, 0.0)),
        ((INF, 2.0), (-INF, INF)),  # +infinity * cis(2): cos 2 < 0 < sin 2
        ((INF, INF), ((INF, ANY), NAN)), ((INF, NAN), (INF, NAN)), ((NAN, 0.0), (NAN, (0.0, ANY))),
        ((NAN, -0.0), (NAN, (0.0, ANY))), ((NAN, 1.5), (NAN, NAN)), ((NAN, NAN), (NAN, NAN)),
    ],
    "sinh": [
        ((0.0, 0.0), (0.0, 0.0)), ((0.0, INF), ((0.0, ANY), NAN)), ((0.0, NAN), ((0.0, ANY), NAN)),
        ((2.0, INF), (NAN, NAN)), ((2.0, NAN), (NAN, NAN)), ((INF, 0.0), (INF, 0.0)), ((INF, 2.0), (-INF, INF)),
        ((INF, INF), ((INF, ANY), NAN)), ((INF, NAN), ((INF, ANY), NAN)), ((NAN, 0.0), (NAN, 0.0)),
        ((NAN, 1.5), (NAN, NAN)), ((NAN, NAN), (NAN, NAN)),
    ],
    "tanh": [
        ((0.0, 0.0), (0.0, 0.0)), ((1.5, INF), (NAN, NAN)), ((0.0, INF), (0.0, NAN)), ((1.5, NAN), (NAN, NAN)),
        ((0.0, NAN), (0.0, NAN)), ((INF, 2.0), (1.0, 0.0)), ((INF, 0.5), (1.0, 0.0)),
        ((INF, INF), (1.0, (0.0, ANY))), ((INF, NAN), (1.0, (0.0, ANY))), ((NAN, 0.0), (NAN, 0.0)),
        ((NAN, 1.5), (NAN, NAN)), ((NAN, INF), (NAN, NAN)), ((NAN, NAN), (NAN, NAN)),
    ],
    "expm1": [
        ((1.5, INF), (NAN, NAN)), ((1.5, NAN), (NAN, NAN)), ((INF, 0.0), (INF, 0.0)),
        ((-INF, 2.0), (-1.0, 0.0)),  # +0 * cis(2) - 1: sin 2 > 0
        ((INF, 2.0), (-INF, INF)), ((-INF, INF), (-1.0, (0.0, ANY))), ((INF, INF), ((INF, ANY), NAN)),
        ((-INF, NAN), (-1.0, (0.0, ANY))), ((INF, NAN), ((INF, ANY), NAN)), ((NAN, 0.0), (NAN, 0.0)),
        ((NAN, 1.5), (NAN, NAN)), ((NAN, NAN), (NAN, NAN)),
    ],
    "acos": [
        ((0.0, 0.0), (PI / 2, -0.0)), ((-0.0, 0.0), (PI / 2, -0.0)), ((0.0, NAN), (PI / 2, NAN)),
        ((-0.0, NAN), (PI / 2, NAN)), ((1.5, INF), (PI / 2, -INF)), ((1.5, NAN), (NAN, NAN)),
        ((-INF, 2.0), (PI, -INF)), ((INF, 2.0), (0.0, -INF)), ((-INF, INF), (3 * PI / 4, -INF)),
        ((INF, INF), (PI / 4, -INF)), ((INF, NAN), (NAN, (INF, ANY))), ((-INF, NAN), (NAN, (INF, ANY))),
        ((NAN, 1.5), (NAN, NAN)), ((NAN, INF), (NAN, -INF)), ((NAN, NAN), (NAN, NAN)),
    ],
    "acosh": [
        ((0.0, 0.0), (0.0, PI / 2)), ((-0.0, 0.0), (0.0, PI / 2)), ((1.5, INF), (INF, PI / 2)),
        ((1.5, NAN), (NAN, NAN)), ((0.0, NAN), (NAN, (PI / 2, ANY))), ((-INF, 2.0), (INF, PI)),
        ((INF, 2.0), (INF, 0.0)), ((-INF, INF), (INF, 3 * PI / 4)), ((INF, INF), (INF, PI / 4)),
        ((INF, NAN), (INF, NAN)), ((-INF, NAN), (INF, NAN)), ((NAN, 1.5), (NAN, NAN)), ((NAN, INF), (INF, NAN)),
        ((NAN, NAN), (NAN, NAN)),
    ],
    "asinh": [
        ((0.0, 0.0), (0.0, 0.0)), ((2.0, INF), (INF, PI / 2)), ((1.5, NAN), (NAN, NAN)), ((0.0, NAN), (NAN, NAN)),
        ((INF, 2.0), (INF, 0.0)), ((INF, INF), (INF, PI / 4)), ((NAN, 0.0), (NAN, 0.0)), ((NAN, 1.5), (NAN, NAN)),
        ((NAN, INF), ((INF, ANY), NAN)), ((NAN, NAN), (NAN, NAN)),
    ],
    "atanh": [
        ((0.0, 0.0), (0.0, 0.0)), ((0.0, NAN), (0.0, NAN)), ((1.0, 0.0), (INF, 0.0)), ((2.0, INF), (0.0, PI / 2)),
        ((1.5, NAN), (NAN, NAN)), ((INF, 2.0), (0.0, PI / 2)), ((INF, INF), (0.0, PI / 2)), ((INF, NAN), (0.0, NAN)),
        ((NAN, 1.5), (NAN, NAN)), ((NAN, INF), ((0.0, ANY), PI / 2)), ((NAN, NAN), (NAN, NAN)),
    ],
}
NUMPY = {"cosh": np.cosh, "sinh": np.sinh, "tanh": np.tanh, "acos": np.arccos, "acosh": np.arccosh,
         "asinh": np.arcsinh, "atanh": np.arctanh}
ODD = ("sinh", "tanh", "asinh", "atanh")


def _matches(got: float, want, tol: float) -> bool:
    value, sign = (want[0], False) if isinstance(want, tuple) else (want, True)
    if math.isnan(value):
        return math.isnan(got)
    if math.isnan(got) or (sign and math.copysign(1.0, got) != math.copysign(1.0, value)):
        return False
    return abs(abs(got) - abs(value)) <= tol * max(1.0, abs(value)) if math.isfinite(value) else abs(got) == abs(value)


def _apply(name: str, z: np.ndarray) -> np.ndarray:
    return getattr(sd, name)(sd.asarray(z)).numpy()


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_standards_table(name):
    rows = TABLES[name]
    dtypes = (np.complex128, np.complex64) if name == "tanh" else (np.complex128,)
    for dtype in dtypes:
        z = np.array([complex(*ab) for ab, _ in rows], dtype)
        got = _apply(name, z)
        tol = 1e-15 if dtype == np.complex128 else 1e-7
        wrong = [(ab, got[i], want) for i, (ab, want) in enumerate(rows)
                 if not (_matches(got[i].real, want[0], tol) and _matches(got[i].imag, want[1], tol))]
        assert not wrong, f"{name} ({np.dtype(dtype)}): (input, got, the standard's) {wrong}"


_PARTS = [0.0, -0.0, 0.5, -1.5, 2.0, INF, -INF, NAN]
_GRID = np.array([complex(a, b) for a in _PARTS for b in _PARTS if not (math.isfinite(a) and math.isfinite(b))])


def _same_or_open(g: complex, w: complex) -> bool:
    """Equal as the standard compares: NaN against NaN, and a part's sign open where the other
    part is NaN (every table leaves those signs unspecified)."""
    for p, q, other in ((g.real, w.real, w.imag), (g.imag, w.imag, w.real)):
        if math.isnan(q) or math.isnan(p):
            if not (math.isnan(p) and math.isnan(q)):
                return False
        elif math.isnan(other):
            if abs(p) != abs(q) and not math.isclose(abs(p), abs(q), rel_tol=1e-15):
                return False
        elif not (p == q or math.isclose(p, q, rel_tol=1e-15)) or math.copysign(1, p) != math.copysign(1, q):
            return False
    return True


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_non_finite_inputs_match_numpy(name):
    got = _apply(name, _GRID)
    with np.errstate(all="ignore"):
        want = NUMPY[name](_GRID)
    skip = set()
    if name == "tanh":
        # npymath takes the zero's sign from sin(b)cos(b) at a = +-inf; the standard asks +0 at b > 0
        skip = {i for i, z in enumerate(_GRID) if math.isinf(z.real) and math.isfinite(z.imag) and z.imag != 0}
    wrong = [(_GRID[i], got[i], want[i]) for i in range(len(_GRID))
             if i not in skip and not _same_or_open(got[i], want[i])]
    assert not wrong, f"{name}: (input, got, numpy) {wrong}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_conjugate_and_odd_symmetries(name):
    got = _apply(name, _GRID)
    conj = _apply(name, np.conj(_GRID))
    wrong = [(_GRID[i], got[i], conj[i]) for i in range(len(_GRID))
             if not _same_or_open(complex(conj[i]), complex(got[i]).conjugate())]
    assert not wrong, f"{name}(conj z) != conj({name}(z)): {wrong}"
    if name in ODD:
        neg = _apply(name, -_GRID)
        wrong = [(_GRID[i], got[i], neg[i]) for i in range(len(_GRID))
                 if not _same_or_open(complex(neg[i]), -complex(got[i]))]
        assert not wrong, f"{name}(-z) != -{name}(z): {wrong}"


def test_acosh_stays_on_the_principal_branch_along_the_real_axis():
    # numba's formula gave acosh(-1.5 - 0j) = -0.96 + pi j and a real part of -1e-16 inside (-1, 1)
    x = np.array([-3.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 3.0])
    for imag in (0.0, -0.0):
        z = x.astype(np.complex128)
        z.imag = imag
        got, want = _apply("acosh", z), np.arccosh(z)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
        assert (np.signbit(got.real) == np.signbit(want.real)).all(), (z, got, want)
        assert (np.signbit(got.imag) == np.signbit(want.imag)).all(), (z, got, want)

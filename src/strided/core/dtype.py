"""The dtypes strided stores, how they are held in numpy buffers, and how they combine.

f16 and bf16 are stored as themselves (numpy float16, ml_dtypes bfloat16) but
every kernel computes them in f32: numba has no half-precision arithmetic on
the CPU.  Copies never compute, so they move raw bits of any dtype.

Complex dtypes (c64, c128) have kind "c"; ``is_float`` stays "real floating", the
Array API's kind, so code that asks for a real float keeps refusing complex.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .errors import DTypeError, StridedError


@dataclass(frozen=True, eq=False)
class DType:
    name: str
    np: np.dtype  # the storage dtype of the numpy buffer
    kind: str  # "f" real float, "c" complex, "i" signed int, "u" unsigned int, "b" bool

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def real(self) -> "DType":
        """The real dtype of the same precision: f32 for c64, f64 for c128, itself otherwise."""
        return {"c64": f32, "c128": f64}.get(self.name, self)

    @property
    def compute(self) -> "DType":
        """The dtype kernels compute in: f32 for the half types, itself otherwise."""
        return f32 if self.name in ("f16", "bf16") else self

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: ``np.dtype(strided.f32)`` reads this attribute (bf16 is ml_dtypes')."""
        return self.np

    def __getattr__(self, attr):
        # Called only for names a DType lacks: NumPy's dtype attributes (``type``, ``char``,
        # ``str``, ``byteorder``, ...) answer from the NumPy dtype, so code written for
        # ndarray chunks (Dask's) can read a tensor's dtype as it reads an array's.
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.np, attr)

    def __eq__(self, other):
        # NumPy's dtypes and types name the same dtype (``t.dtype == np.float32``, as code
        # written for ndarrays asks); a strided dtype is equal only to itself.
        if isinstance(other, DType):
            return self is other
        found = numpy_dtype(other)
        return found is not None and found == self.np

    def __post_init__(self):
        # Computed once: every kept op's cache key holds its operands' dtypes, and NumPy
        # computes a dtype's hash afresh on each call.
        object.__setattr__(self, "_hash", hash(self.np))

    def __hash__(self):
        return self._hash  # np.dtype's: equal dtypes hash alike

    def __repr__(self):
        return f"strided.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (as_dtype, (self.name,))


f16 = DType("f16", np.dtype(np.float16), "f")
bf16 = DType("bf16", np.dtype(ml_dtypes.bfloat16), "f")
f32 = DType("f32", np.dtype(np.float32), "f")
f64 = DType("f64", np.dtype(np.float64), "f")
c64 = DType("c64", np.dtype(np.complex64), "c")
c128 = DType("c128", np.dtype(np.complex128), "c")
u8 = DType("u8", np.dtype(np.uint8), "u")
u16 = DType("u16", np.dtype(np.uint16), "u")
u32 = DType("u32", np.dtype(np.uint32), "u")
u64 = DType("u64", np.dtype(np.uint64), "u")
i8 = DType("i8", np.dtype(np.int8), "i")
i16 = DType("i16", np.dtype(np.int16), "i")
i32 = DType("i32", np.dtype(np.int32), "i")
i64 = DType("i64", np.dtype(np.int64), "i")
bool_ = DType("bool", np.dtype(np.bool_), "b")

ALL = (f16, bf16, f32, f64, c64, c128, u8, u16, u32, u64, i8, i16, i32, i64, bool_)

# The Array API's names for the same objects (``strided.float32 is strided.f32``); its
# ``bool`` is bound in the package itself, where it cannot shadow the builtin for this module.
float16, bfloat16, float32, float64, complex64, complex128 = f16, bf16, f32, f64, c64, c128
uint8, uint16, uint32, uint64, int8, int16, int32, int64 = u8, u16, u32, u64, i8, i16, i32, i64
STANDARD_NAMES = {"bool": bool_, "float16": f16, "bfloat16": bf16, "float32": f32, "float64": f64,
                  "complex64": c64, "complex128": c128, "uint8": u8, "uint16": u16, "uint32": u32,
                  "uint64": u64, "int8": i8, "int16": i16, "int32": i32, "int64": i64}

# The 16-bit integers compute in these: the kernels read the half types' bits as int16 and
# uint16, so an int16 buffer would be taken for bf16 (kernels/common.py).  Every integer op
# strided has gives the same bits mod 2^16 either way, so the result is rounded back.
WIDENED = {i16: i32, u16: u32}


def accumulated(d: DType) -> DType:
    """What a sum or a product of ``d`` elements gives when no dtype is asked for (the
    standard's and NumPy's rule): floats and complex their own dtype, unsigned integers
    u64, signed integers and bools i64."""
    return d if d.kind in "fc" else (u64 if d.kind == "u" else i64)


def kernel_dtype(d: DType) -> DType:
    """The dtype a kernel computes ``d`` in: f32 for the half types, i32/u32 for i16/u16."""
    return WIDENED.get(d) or d.compute


# What creation gives when no dtype is asked for (an explicit None is the same as none).
DEFAULT_FLOAT = f32
DEFAULT_INT = i64
# The complex of the default float's precision, so that ``tensor([0.5])`` and
# ``tensor([0.5j])`` round alike (NumPy, whose default float is f64, gives c128).
DEFAULT_COMPLEX = c64
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
_ALIASES = {
    "float16": f16, "half": f16, "bfloat16": bf16, "float32": f32, "float": f32,
    "float64": f64, "double": f64, "complex64": c64, "cfloat": c64, "complex128": c128, "cdouble": c128,
    "complex": c128, "uint8": u8, "uint16": u16, "uint32": u32, "uint64": u64, "int8": i8, "int16": i16,
    "int32": i32, "int64": i64, "long": i64, "bool_": bool_,
}


def as_dtype(d) -> DType:
    """Accept a DType, its name, a numpy dtype, or a Python type."""
    if isinstance(d, DType):
        return d
    if d is None:
        # np.dtype(None) is float64, which is no one's intent here: each caller that takes
        # None decides what it means (the default float for creation) before calling.
        raise DTypeError("dtype: expected a dtype, got None")
    if isinstance(d, str):
        found = _BY_NAME.get(d) or _ALIASES.get(d)
        if found is None:
            try:  # NumPy's spellings too: "f8", "<i8", "uint8", "?"
                found = _BY_NP.get(np.dtype(d))
            except (TypeError, ValueError):
                found = None
        if found is None:
            raise DTypeError(f"dtype: unknown dtype name {d!r} (expected one of {', '.join(_BY_NAME)})")
        return found
    if d is float:
        return f64
    if d is int:
        return i64
    if d is bool:
        return bool_
    if d is complex:
        return c128
    try:
        npd = np.dtype(d)
    except (TypeError, ValueError):
        raise DTypeError(f"dtype: cannot interpret {d!r} as a dtype") from None
    found = _BY_NP.get(npd)
    if found is None:
        raise DTypeError(
            f"dtype: numpy dtype {npd} is not supported (expected one of {', '.join(_BY_NAME)})"
        )
    return found


def numpy_dtype(d) -> np.dtype | None:
    """The NumPy dtype ``d`` names when it is one (a ``np.dtype`` or a NumPy scalar type such as
    ``np.float32``, ml_dtypes' bfloat16 included), else None."""
    if isinstance(d, np.dtype):
        return d
    if isinstance(d, type) and issubclass(d, np.generic):
        return np.dtype(d)
    return None


def from_numpy_dtype(npd: np.dtype) -> DType:
    return as_dtype(npd)


# Ranks inside each kind decide promotion the way NumPy does for the pairs we hold.
_FLOAT_RANK = {"f16": 1, "bf16": 1, "f32": 2, "f64": 3}


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary op on two tensors.

    Within a kind (ints, unsigned, real floats, complex) and for signed with unsigned
    below 64 bits this is the Array API 2024.12 table.  Where the standard leaves the
    answer open it is NumPy 2's: int64 (or any signed int) with uint64 gives f64, an
    integer with a float widens the float to hold the integer (i32 + f32 -> f64), a
    real float with a complex gives the complex of the wider precision.  f16 with bf16
    gives f32; bf16 mixes with the other dtypes as f16 does."""
    if a is b:
        return a
    if a.is_complex or b.is_complex:
        # a half promotes as f32 would: NumPy's f16 + c64 is c64, and bf16 is f16's peer here
        an = f32.np if a.name in ("f16", "bf16") else a.np
        bn = f32.np if b.name in ("f16", "bf16") else b.np
        return _BY_NP[np.promote_types(an, bn)]
    if a.is_float and b.is_float:
        if {a.name, b.name} == {"f16", "bf16"}:
            return f32
        return a if _FLOAT_RANK[a.name] > _FLOAT_RANK[b.name] else b
    if a.is_float or b.is_float:
        fl, other = (a, b) if a.is_float else (b, a)
        if fl.name in ("f16", "bf16") and other.itemsize == 1:
            return fl
        if fl.name in ("f16", "bf16", "f32") and other.kind != "b":
            # NumPy widens the float to hold every value of the integer.
            return f64 if other.itemsize >= 4 else (f32 if other.itemsize == 2 else fl)
        return fl
    return _BY_NP[np.promote_types(a.np, b.np)]


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar would get as a tensor of its own."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return i64
    if isinstance(value, (float, np.floating)):
        return f64
    if isinstance(value, (complex, np.complexfloating)):
        return c128
    raise DTypeError(f"dtype: unsupported scalar {value!r} of type {type(value).__name__}")


def promote_scalar(t: DType, value) -> DType:
    """A tensor combined with a Python scalar: the scalar only widens the kind (NumPy 2 / NEP 50).
    A complex scalar makes a real float tensor the complex of its precision (f16, bf16 and
    f32 give c64, f64 gives c128) and an integer or bool tensor c128, as NumPy 2 does."""
    if isinstance(value, (bool, np.bool_)):
        return t
    if isinstance(value, (int, np.integer)):
        return i64 if t.kind == "b" else t
    if isinstance(value, (float, np.floating)):
        return t if t.kind in "fc" else f64
    if isinstance(value, (complex, np.complexfloating)):
        if t.is_complex:
            return t
        return c128 if t is f64 or not t.is_float else c64
    raise DTypeError(f"dtype: unsupported scalar {value!r} of type {type(value).__name__}")


def scalar_array(op: str, value, d: DType) -> np.ndarray:
    """A one-element buffer of dtype ``d`` holding ``value``; a Python int that ``d`` cannot hold
    is refused (NumPy 2 raises too) instead of wrapping.  Ints reach float dtypes through
    Python's float, which ml_dtypes' bf16 needs for ints beyond int64.  A complex value is
    taken only by a complex dtype: dropping its imaginary part would be a silent wrong number."""
    if not isinstance(value, (numbers.Number, np.generic)):
        raise StridedError(f"{op}: expected a real number, got {value!r} of type {type(value).__name__}")
    if isinstance(value, (complex, np.complexfloating)) and not d.is_complex:
        raise StridedError(f"{op}: expected a real number for {d}, got the complex {value!r}")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        if d.kind in "fc":
            try:
                value = float(value)
            except OverflowError:
                raise StridedError(f"{op}: the integer {value} is too large for {d}") from None
        elif d.kind != "b":
            info = np.iinfo(d.np)
            if not info.min <= value <= info.max:
                raise StridedError(f"{op}: the integer {value} is out of range for {d} [{info.min}, {info.max}]")
    if type(value) is int or type(value) is bool or (type(value) is float and -65504.0 <= value <= 65504.0):
        # within f16's range (the narrowest float's), nothing overflows: the error state, whose
        # context costs more than the array, is set only where it can matter
        return np.array([value], dtype=d.np)
    with np.errstate(over="ignore"):  # a float beyond the dtype's range rounds to inf, as NumPy's cast
        return np.array([value], dtype=d.np)

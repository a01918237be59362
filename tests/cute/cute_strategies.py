"""Hypothesis strategies and brute-force oracles for the strided.cute tests.

Everything is kept small (sizes of at most a few hundred) so that checking a
property at every point of a layout stays cheap.
"""

from hypothesis import strategies as st

from strided.cute import Layout, crd2idx, flatten, static, unflatten

EXTENTS = [1, 2, 2, 3, 4, 4, 6, 8]


def leaves(t):
    f = flatten(t)
    return list(f) if isinstance(f, tuple) else [f]


@st.composite
def shapes(draw, max_depth=2, max_size=256, extents=EXTENTS):
    """Nested shapes of positive extents, total size <= max_size."""

    def build(depth):
        if depth == 0 or draw(st.booleans()):
            return draw(st.sampled_from(extents))
        n = draw(st.integers(1, 3))
        return tuple(build(depth - 1) for _ in range(n))

    s = build(max_depth)
    total = 1
    for x in leaves(s):
        total *= x
    if total > max_size:
        # Shrink leaves from the right until small enough (keeps structure).
        flat = leaves(s)
        for i in reversed(range(len(flat))):
            while total > max_size and flat[i] > 1:
                total //= flat[i]
                flat[i] = 1
        s = unflatten(flat, s) if isinstance(s, tuple) else flat[0]
    return s


@st.composite
def layouts(draw, max_depth=2, max_size=256, stride_range=(-8, 16)):
    """Arbitrary layouts: any strides in a small range (zeros and negatives too)."""
    s = draw(shapes(max_depth=max_depth, max_size=max_size))
    lo, hi = stride_range
    d = [draw(st.integers(lo, hi)) for _ in leaves(s)]
    return Layout(s, unflatten(d, s) if isinstance(s, tuple) else d[0])


@st.composite
def injective_layouts(draw, max_depth=2, max_size=128, gaps=True, negative=False):
    """Layouts whose modes, sorted by stride, tile their codomain with gaps.

    Each mode's stride is a multiple of the span of the smaller ones, which
    makes the layout injective and complementable (the C++ CuTe preconditions
    of complement and left_inverse).
    """
    s = draw(shapes(max_depth=max_depth, max_size=max_size))
    ext = leaves(s)
    order = draw(st.permutations(range(len(ext))))
    strides = [0] * len(ext)
    span = 1
    for i in order:
        span *= draw(st.sampled_from([1, 1, 2, 3])) if gaps else 1
        strides[i] = span
        span *= ext[i]
    if negative:
        strides = [-d if draw(st.booleans()) else d for d in strides]
    return Layout(s, unflatten(strides, s) if isinstance(s, tuple) else strides[0])


@st.composite
def pow2_layouts(draw, max_depth=2, max_size=64, max_stride=64, zero=True):
    """Power-of-two extents and non-negative power-of-two (or zero) strides.

    Every single mode of such a tiler composes with a power-of-two layout, so
    these exercise the cross-mode (carry) check of composition.
    """
    s = draw(shapes(max_depth=max_depth, max_size=max_size, extents=[1, 2, 2, 4, 8]))
    choices = [1 << k for k in range(max_stride.bit_length())]
    if zero:
        choices = choices + [0]
    d = [draw(st.sampled_from(choices)) for _ in leaves(s)]
    return Layout(s, unflatten(d, s) if isinstance(s, tuple) else d[0])


def maybe_static(draw, layout):
    return static(layout) if draw(st.booleans()) else layout


def ext(layout, x):
    """The layout's function on any non-negative index (its last mode extends)."""
    return crd2idx(x, layout.shape, layout.stride)


def image(layout):
    return [layout(i) for i in range(layout.size)]


def natural_coords(shape):
    """Every natural (full-depth) coordinate of ``shape``, colexicographic."""
    from strided.cute import idx2crd, size

    return [idx2crd(i, shape) for i in range(size(shape))]

"""The elementwise loops, written once for any number of operands.

``kernel_set(n, expr_source, env, tag)`` generates the four kernels of an elementwise
expression of ``n`` inputs (serial and parallel, runs and tiles; ``kernels.elementwise``'s
docstring has the path table) and loads them through ``codegen``.  The expression is the
source of a function ``expr(a0, ..., a<n-1>)`` of the inputs' values, as the kernels
compute with them; an eager op's is one call of its scalar function, a fused chain's a
few lines (``strided.fuse``).  How an element is read and written is the ``mode``:
``"compute"`` widens f16/bf16 bits to f32 as it loads (``half.dec``) and rounds each
result once as it stores (``half.enc``), ``"bits"`` moves elements as they are (``where``).

Layout integers arrive packed in one array (``walk.pack``), unpacked into ``shape`` (merged
dims, outermost first), ``st`` (one row of strides per operand, the output first), ``offs``
and the path (runs) or tile side (tiles); ``lo, hi`` is a range of flat
positions in iteration order (runs) or of tiles (tiles), the first and last rows of a
chunk possibly partial.  numba takes no variable number of arrays, so the operands are
spelled out per arity here, by the generator, and nowhere else.

BCAST (every inner stride 0 or 1) hoists each stride-0 input out of the run, one loop
per set of such inputs; that is written out for up to ``BCAST_MAX`` inputs, beyond which
(2^n loops) BCAST runs take the general strided loop.  Each path, and each set, has a
loop over the runs of its own, chosen once per call.  A long unit-stride run is taken in
two, cut where its output reaches a 64-byte line (``walk.aligned_run``).
"""

from __future__ import annotations

from itertools import combinations

from .codegen import load
from .walk import seek

from numba import njit, types  # numba comes after strided.threads
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable

__all__ = ["kernel_set", "BCAST_MAX", "jitable", "chunk_driver", "compiled_at"]

BCAST_MAX = 2

jitable = register_jitable(error_model="numpy")
# The expression goes into each loop of its kernel as numba IR.  Left to LLVM's inliner, a
# chain of two transcendental functions stayed a call per element (which keeps a loop
# scalar) whenever those functions had been compiled before for other kernels.
inlined = njit(error_model="numpy", inline="always")


@jitable
def tile_load(buf, tw, x, p, s0, s1, ni, nj):
    """buf[i * tw + j] = x[p + i * s0 + j * s1]."""
    if abs(s0) < abs(s1):
        for j in range(nj):
            q = p + j * s1
            if s0 == 1:
                xv = x[q : q + ni]
                for i in range(ni):
                    buf[i * tw + j] = xv[i]
            else:
                for i in range(ni):
                    buf[i * tw + j] = x[q + i * s0]
    else:
        for i in range(ni):
            q = p + i * s0
            for j in range(nj):
                buf[i * tw + j] = x[q + j * s1]


@jitable
def tile_store(out, p, s0, s1, buf, tw, ni, nj):
    """out[p + i * s0 + j * s1] = buf[i * tw + j]."""
    if abs(s0) < abs(s1):
        for j in range(nj):
            q = p + j * s1
            if s0 == 1:
                ov = out[q : q + ni]
                for i in range(ni):
                    ov[i] = buf[i * tw + j]
            else:
                for i in range(ni):
                    out[q + i * s0] = buf[i * tw + j]
    else:
        for i in range(ni):
            q = p + i * s0
            for j in range(nj):
                out[q + j * s1] = buf[i * tw + j]


@jitable
def tile_coords(w, shape, st, start, idx, tile):
    """Tile ``w``: its extent and the operands' positions at its first element (``start``:
    their positions at the first element of all)."""
    nd = shape.shape[0]
    n0 = shape[nd - 2]
    n1 = shape[nd - 1]
    t1 = (n1 + tile - 1) // tile
    per = ((n0 + tile - 1) // tile) * t1
    outer = w // per
    t = w - outer * per
    ti = t // t1
    i0 = ti * tile
    j0 = (t - ti * t1) * tile
    pos = seek((outer * n0 + i0) * n1 + j0, shape, st, nd, idx, start)
    return min(tile, n0 - i0), min(tile, n1 - j0), pos


def _indent(lines, n):
    return "\n".join(" " * n + line for line in lines)


def _runs(n: int, load_, store_, zeros=None, paths=(0, 1), staged=False) -> str:
    xs = [f"x{i}" for i in range(n)]
    b = [f"b{i}" for i in range(n)]
    p = [f"p{i}" for i in range(n)]
    call = lambda args: f"expr({', '.join(args)})"
    dense = [f"v{i} = x{i}[p{i} : p{i} + m]" for i in range(n)]
    dense += ["for k in range(m):",
              f"    ov[k] = {store_('ov', call([load_(f'v{i}[k]') for i in range(n)]))}"]
    bcast = []  # (condition on the inner strides, run body): one per set of stride-0 inputs
    if zeros is not None or n <= BCAST_MAX:
        # the set of all inputs first; or the one set a caller knows (``zeros``), for any
        # number of inputs.  Without ``zeros`` the last set is what is left: a BCAST run
        # reads some input at stride 0
        sets = [tuple(i for i in range(n) if zeros[i])] if zeros is not None else \
            [c for r in range(n, 0, -1) for c in combinations(range(n), r)]
        for j, zero in enumerate(sets):
            last = zeros is None and j == len(sets) - 1
            cond = " and ".join(f"s{i} == 0" for i in zero) if zero and not last else None
            body = ["ov = out[po : po + m]"]
            for i in range(n):
                body.append(f"c{i} = {load_(f'x{i}[p{i}]')}" if i in zero else f"v{i} = x{i}[p{i} : p{i} + m]")
            args = [f"c{i}" if i in zero else load_(f"v{i}[k]") for i in range(n)]
            if len(zero) == n:
                body += [f"v = {store_('ov', call(args))}", "for k in range(m):", "    ov[k] = v"]
            else:
                body += ["for k in range(m):", f"    ov[k] = {store_('ov', call(args))}"]
            bcast.append((cond, body))
    # Unsigned positions (``u``): a signed index costs a wraparound test per access.
    loads = [load_(f"x{i}[u(p{i} + k * s{i})]") for i in range(n)]
    general = ["for k in range(m):", f"    out[u(po + k * so)] = {store_('out', call(loads))}"]
    if staged:
        # LLVM keeps a loop with a strided load scalar: a heavy op's strided inputs are
        # gathered into stack buffers, STAGE elements at a time, and the op runs as a vector
        # loop over them (a light op's gather would cost more than its loop)
        gather = [x for i in range(n)
                  for x in ("for k in range(c):", f"    g{i}[k] = x{i}[u(p{i} + (k0 + k) * s{i})]")]
        general = ["if so == 1:", "    k0 = 0", "    while k0 < m:", "        c = min(STAGE, m - k0)",
                   *["        " + x for x in gather],
                   "        w = out[po + k0 : po + k0 + c]",
                   "        for k in range(c):",
                   f"            w[k] = {store_('w', call([load_(f'g{i}[k]') for i in range(n)]))}",
                   "        k0 += c",
                   "else:", *["    " + x for x in general]]
    # One loop over the runs per path and set of stride-0 inputs, chosen once (both are the
    # same for every run of a call): a loop whose body switches between several runs' code
    # costs each run about 17 ns more (docs/benchmarks.md), a tenth of a 128-element row's
    # work.  The general loop is right for any run (a BCAST run whose stride-0 set is not
    # ``zeros``, a path not asked for), so it closes.
    loops = []
    if 0 in paths:
        loops.append(("path == 0", ["ov = out[po : po + m]", *dense]))
    if 1 in paths:
        loops += [("path == 1" + (f" and {cond}" if cond else ""), body) for cond, body in bcast]
    heads = [f"{'if' if k == 0 else 'elif'} {cond}:" for k, (cond, _) in enumerate(loops)]
    loops = [(h, body) for h, (_, body) in zip(heads, loops)] + [("else:" if loops else None, general)]
    offs = ", ".join(f"offs[{i}]" for i in range(n + 1))
    walk = [
        "while i < hi:",
        "    m = min(inner - j, hi - i)",
        "    po = bo + j * so",
        "    {cut}",
        *[f"    {p[i]} = {b[i]} + j * s{i}" for i in range(n)],
        "    {run}",
        "    i += m",
        "    j += m",
        "    if j == inner and i < hi:",
        "        j = 0",
        "        if d >= 0 and idx[d] + 1 < shape[d]:",
        "            idx[d] += 1",
        "            bo += st[0, d]",
        *[f"            {b[i]} += st[{i + 1}, d]" for i in range(n)],
        "        else:",
        f"            bo, {', '.join(b)} = carry(shape, st, nd - 1, idx, (bo, {', '.join(b)}))[1]",
    ]
    switch = []
    for k, (head, run) in enumerate(loops):
        # a general run's output is strided: only the unit-stride paths cut their runs
        cut = ["    m = aligned_run(out, po, m)"] if k < len(loops) - 1 else []
        fill = {"    {run}": ["    " + r for r in run], "    {cut}": cut}
        lines = [x for line in walk for x in fill.get(line, [line])]
        switch += [head, *["    " + x for x in lines]] if head else lines
    body = [
        "shape, st, offs, path = unpack(plan)",
        "nd = shape.shape[0]",
        "inner = shape[nd - 1]",
        "so = st[0, nd - 1]",
        *[f"s{i} = st[{i + 1}, nd - 1]" for i in range(n)],
        "idx = index_scratch(nd)",
        *([f"g{i} = stack_scratch(STAGE, x{i}.dtype)" for i in range(n)] if staged else []),
        "row = lo // inner",
        "j = lo - row * inner",
        f"bo, {', '.join(b)} = seek(row, shape, st, nd - 1, idx, ({offs},))",
        "d = nd - 2",
        "i = lo",
        *switch,
    ]
    return f"def runs(out, {', '.join(xs)}, plan, lo, hi):\n" + _indent(body, 4) + "\n"


def _tiles(n: int, load_, store_) -> str:
    xs = [f"x{i}" for i in range(n)]
    offs = ", ".join(f"offs[{i}]" for i in range(n + 1))
    pos = ", ".join(f"q{i}" for i in range(n))
    body = [
        "shape, st, offs, tile = unpack(plan)",
        "nd = shape.shape[0]",
        "tw = tile + TILE_PAD",
        "so0, so1 = st[0, nd - 2], st[0, nd - 1]",
        *[f"sa{i}, sb{i} = st[{i + 1}, nd - 2], st[{i + 1}, nd - 1]" for i in range(n)],
        *[f"d{i} = sb{i} == 1" for i in range(n)],
        "do = so1 == 1",
        *[f"t{i} = np.empty(0 if d{i} else tile * tw, x{i}.dtype)" for i in range(n)],
        "to = np.empty(0 if do else tile * tw, out.dtype)",
        "idx = index_scratch(nd)",
        "for w in range(w0, w1):",
        f"    ni, nj, (po, {pos}) = tile_coords(w, shape, st, ({offs},), idx, tile)",
        *[line for i in range(n) for line in (f"    if not d{i}:",
                                              f"        tile_load(t{i}, tw, x{i}, q{i}, sa{i}, sb{i}, ni, nj)")],
        "    for i in range(ni):",
        *[f"        v{i} = x{i}[q{i} + i * sa{i} : q{i} + i * sa{i} + nj] if d{i} else t{i}[i * tw : i * tw + nj]"
          for i in range(n)],
        "        ov = out[po + i * so0 : po + i * so0 + nj] if do else to[i * tw : i * tw + nj]",
        "        for j in range(nj):",
        f"            ov[j] = {store_('ov', 'expr(' + ', '.join(load_(f'v{i}[j]') for i in range(n)) + ')')}",
        "    if not do:",
        "        tile_store(out, po, so0, so1, to, tw, ni, nj)",
    ]
    return f"def tiles(out, {', '.join(xs)}, plan, w0, w1):\n" + _indent(body, 4) + "\n"


_MODES = {
    "compute": (lambda v: f"dec({v})", lambda buf, v: f"enc({buf}, {v})"),
    "bits": (lambda v: v, lambda buf, v: v),
}

# The parallel drivers call the serial kernels' dispatchers, not their bodies: the body is
# typed and compiled once (and a parallel first call compiles little more than a serial one).
_DRIVERS = """
s_runs = njit(cache=CACHE, error_model="numpy")(runs)
s_tiles = njit(cache=CACHE, error_model="numpy")(tiles)


def p_runs(out, {xs}, plan, total, nch):
    for c in prange(nch):
        s_runs(out, {xs}, plan, c * total // nch, (c + 1) * total // nch)


def p_tiles(out, {xs}, plan, total, nch):
    for c in prange(nch):
        s_tiles(out, {xs}, plan, c * total // nch, (c + 1) * total // nch)


KERNELS = {{
    (False, False): s_runs,
    (False, True): njit(parallel=True, cache=CACHE, error_model="numpy")(p_runs),
    (True, False): s_tiles,
    (True, True): njit(parallel=True, cache=CACHE, error_model="numpy")(p_tiles),
}}
"""



_IMPORTS = """import numpy as np
from numpy import uint64 as u
from numba import njit, prange

from strided.kernels.common import STAGE, TILE_PAD
from strided.kernels.half import dec, enc
from strided.kernels.loops import inlined, jitable, tile_coords, tile_load, tile_store
from strided.kernels.walk import aligned_run, carry, index_scratch, seek, stack_scratch, unpack
"""


def kernel_set(n: int, expr_source: str, tag: str, mode: str = "compute", zeros: tuple | None = None,
               paths: tuple = (0, 1), staged: bool = False) -> dict:
    """The four kernels ``{(tiled, parallel): dispatcher}`` of an expression of ``n`` inputs.

    ``expr_source`` defines ``expr(a0, ..., a<n-1>)`` (compiled as a jitable helper) and
    imports what it calls: the source is the kernel's whole identity (``codegen.load``);
    ``tag`` names the generated module.  ``zeros``: which inputs a caller's BCAST runs read
    at stride 0 (the plan says), so that a kernel of any arity hoists them out of its runs;
    without it, every set is written out up to ``BCAST_MAX`` inputs.  ``paths``: the fast
    paths (DENSE 0, BCAST 1) the runs are written with, the general loop serving the rest: a
    kernel generated for one plan compiles the one path it takes (compile time grows with
    each copy of the expression).  ``staged``: a strided run with a unit-stride output
    gathers its inputs into stack buffers (``STAGE`` at a time) and runs the expression as a
    vector loop over them, for heavy expressions of integer or float inputs."""
    load_, store_ = _MODES[mode]
    xs = ", ".join(f"x{i}" for i in range(n))
    source = (_IMPORTS + expr_source.strip() + "\n\n\nexpr = inlined(expr)\n\n\n"
              + _runs(n, load_, store_, zeros, paths, staged)
              + "\n\n" + _tiles(n, load_, store_) + _DRIVERS.format(xs=xs))
    return load(source, tag).KERNELS


# ---------------------------------------------------------------------------
# a parallel driver shared by every serial kernel of one signature


@intrinsic
def compiled_at(typingctx, fty, address):
    """The numba function whose native entry is at ``address``, as a first-class function
    of type ``fty``: a driver that calls it through this pointer neither links the callee's
    code into its own nor optimises it a second time."""
    ftype = fty.instance_type

    def codegen(context, builder, sig, args):
        fn = cgutils.create_struct_proxy(ftype)(context, builder)
        void_p = context.get_value_type(types.voidptr)
        fn.c_addr = void_p(None)
        fn.py_addr = void_p(None)
        fn.jit_addr = builder.inttoptr(args[1], void_p)
        return fn._getvalue()

    return ftype(fty, address), codegen


_CHUNKS = """from numba import njit, prange, types

from strided.kernels.loops import compiled_at

FT = types.FunctionType(types.void({params}, types.int64, types.int64))


def drive(address, {args}, total, nch):
    for c in prange(nch):
        fn = compiled_at(FT, address)
        fn({args}, c * total // nch, (c + 1) * total // nch)


PARALLEL = njit(parallel=True, cache=CACHE, error_model="numpy")(drive)
"""


def _spell(t) -> str | None:
    if isinstance(t, types.Array) and isinstance(t.dtype, (types.Integer, types.Float, types.Boolean)):
        name = "boolean" if isinstance(t.dtype, types.Boolean) else str(t.dtype)
        return f"types.Array(types.{name}, {t.ndim}, {t.layout!r}, readonly={not t.mutable}, aligned={t.aligned})"
    if isinstance(t, types.Integer):
        return f"types.{t}"
    return None


def chunk_driver(serial, params: tuple):
    """``(driver, address)``: ``driver(address, *args, total, nch)`` runs
    ``serial(*args, lo, hi)`` over ``nch`` chunks of ``range(total)`` under ``prange``,
    ``address`` being ``serial``'s compiled entry for ``params`` (numba types of ``args``)
    and two int64.  One driver serves every serial kernel of that signature and is cached
    on disk, so a new kernel's parallel form compiles nothing more than its serial form
    (a driver that calls ``serial`` by name links its code and optimises it a second time;
    docs/benchmarks.md has the figures).  None where a parameter's type cannot be spelled."""
    spelled = [_spell(t) for t in params]
    if None in spelled:
        return None
    cres = serial.get_compile_result(types.void(*params, types.int64, types.int64))
    address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    args = ", ".join(f"a{k}" for k in range(len(params)))
    mod = load(_CHUNKS.format(params=", ".join(spelled), args=args), "chunks")
    return mod.PARALLEL, address

"""Dense products that BLAS can run: the index roles of a GEMM, and the
Khatri-Rao plan of a three-factor dense product.

A step out[C] ⊕= Σ_bound A[..]·B[..] over dense operands is a (batched) GEMM
up to a permutation of its indices when every index plays one of four roles:

    batch  in A, B and C          (a loop around the products)
    M      in A and C, not in B   (the rows of A and C)
    N      in B and C, not in A   (the columns of B and C)
    K      in A and B, bound      (the contracted extent)

`gemm_roles` finds the roles; whether the operands' layouts let each role
flatten into one BLAS extent is `gemm_layouts`' question, and `blas_roles`
finds roles that do: an M (N) index may instead be a batch over which B (A) is
broadcast, a loop around the products with step 0 in that operand (`ijk,jr->irk`:
for each i, the (r, k) product Aᵀ·X[i]); the lowering reads them
(lower.schedule.blas).
Only the real semiring (float64 or float32, + and ×) has a BLAS: every other
semiring keeps its loops.

`khatri_rao` plans a dense MTTKRP-like step out[i,r] = Σ_{j,k} X[i,j,k]·U[j,r]·V[k,r]
as two steps: a Khatri-Rao temporary KR[j,k,r] = U[j,r]·V[k,r] (no sum), then
the GEMM out[i,r] = Σ_{j,k} X[i,j,k]·KR[j,k,r]. It multiplies once per
(i,j,k,r) and once per (j,k,r), against twice per (i,j,k,r) fused, and runs
the bulk in BLAS. It is taken when it does fewer multiplications and the
temporary holds no more cells than the factor it multiplies, so its memory is
bounded by an input's. Both are judged on the sizes known when planning
(given, or guessed); the kernel checks the second again on the real sizes
and runs the fused step instead when it fails (lower.schedule.khatri_rao).

`operand_temps` plans a dense step out = Σ_K A[..]·f(..), whose factors
besides one dense input A are element-wise work f over dense operands (a
sum, a map, a scale: `Xᵀ·(X·w − y)`'s `Σ_i X[i,j]·(tmp[i] − y[i])`), as two
steps: a temporary F = f (no sum, each cell once) and the GEMM out = Σ_K A·F,
which BLAS runs. It is taken where the cost model prices it lower: the fused
nest against F's nest, its temporary (plan.cost.temp_work), a BLAS call's
fixed cost (`tuning.blas_call`) and the GEMM's nest divided by
`tuning.blas_gain`, as plan.product_cost prices a BLAS product.
"""
from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations, permutations

import numpy as np

from ..expr.nodes import Access, Expr, Index, Mul, TensorVar
from ..expr.compare import values_as_stored
from ..expr.walk import accesses
from ..expr.windows import WindowVar
from ..semiring import Semiring
from . import fusion
from .cost import nest_cost, temp_work
from .reserved import plan_names, reserved_tensor


KR_PREFIX = "tmp_kr"     # the name of a Khatri-Rao temporary starts so
OP_PREFIX = "tmp_op"     # ... and of an element-wise operand made for a GEMM (operand_temps)


def has_blas(sr: Semiring) -> bool:
    """Is sr the real semiring over float64 or float32 (so BLAS computes it)?"""
    return (sr.dtype in (np.dtype(np.float64), np.dtype(np.float32))
            and sr.add.render("a", "b") == "a + b" and sr.mul.render("a", "b") == "a * b"
            and float(sr.zero) == 0.0 and float(sr.one) == 1.0)


def storage_axes(acc: Access) -> tuple[str, ...] | None:
    """The index names of a dense access in its storage (row-major) order, or
    None when it is not dense, repeats an index (a diagonal) or is read through
    a window (its array is not laid out over the window's sizes)."""
    fmt = acc.tensor.format
    names = tuple(ix.name for ix in acc.indices)
    if not fmt.is_dense or len(set(names)) < len(names) or isinstance(acc.tensor, WindowVar):
        return None
    return tuple(names[m] for m in fmt.mode_order)


def gemm_roles(a_axes, b_axes, c_axes, bound):
    """(M, N, K, batch) index groups of C[c_axes] ⊕= Σ_bound A[a_axes]·B[b_axes],
    M, N and batch in C's order and K in A's, or None when some index plays
    none of the four roles (it is summed in one operand only, or broadcast)."""
    sa, sb, sc, sk = set(a_axes), set(b_axes), set(c_axes), set(bound)
    if (len(sa) < len(a_axes) or len(sb) < len(b_axes) or len(sc) < len(c_axes)
            or sc & sk or sa | sb != sc | sk or sk != (sa & sb) - sc):
        return None
    m = tuple(x for x in c_axes if x in sa and x not in sb)
    n = tuple(x for x in c_axes if x in sb and x not in sa)
    batch = tuple(x for x in c_axes if x in sa and x in sb)
    k = tuple(x for x in a_axes if x in sk)
    return m, n, k, batch


def blas_roles(a_axes, b_axes, c_axes, bound, broadcast=True):
    """Roles (M, N, K, batch) of C[c_axes] ⊕= Σ_bound A[a_axes]·B[b_axes] that let
    it run as BLAS calls (`gemm_layouts`), each product of two groups at least:
    `gemm_roles`', or failing those and with `broadcast` (Tuning.blas_broadcast),
    the fewest M and N indices moved into the batch (B or A broadcast along them;
    batch in C's order) that leave each product a matrix product (M, N and K each
    one index at least: a matrix-vector product a point costs more calls than it
    saves), or None.

        >>> blas_roles(("i", "j", "k"), ("j", "r"), ("i", "r", "k"), ("j",))
        (('k',), ('r',), ('j',), ('i',))
    """
    roles = gemm_roles(a_axes, b_axes, c_axes, bound)
    if roles is None:
        return None
    m, n, k, batch = roles
    free = m + n
    for size in range(len(free) + 1 if broadcast else 1):
        for moved in combinations(free, size):
            left = [tuple(x for x in g if x not in moved) for g in (m, n)]
            if batch + moved and sum(1 for g in (*left, k) if g) < 2 or (
                    moved and not (left[0] and left[1] and k)):
                continue
            found = (*left, k, tuple(x for x in c_axes if x in batch or x in moved))
            if gemm_layouts(a_axes, b_axes, c_axes, found):
                return found
    return None


def as_matrix(axes, rows, cols) -> bool | None:
    """How the row-major array over `axes` reads as the matrix rows × cols (each a
    group of index names): False when cols is innermost (as stored), True when
    rows is (transposed), None when a group is split or reordered in `axes`, or
    neither group is innermost (BLAS cannot read it; lower.schedule.blas)."""
    if not (_run(axes, rows) and _run(axes, cols)):
        return None
    if not cols or cols[-1] == axes[-1]:
        return False
    if not rows or rows[-1] == axes[-1]:
        return True
    return None


def _run(axes, group) -> bool:
    """Does `group` sit in axes as consecutive entries, in its order?"""
    if not group:
        return True
    at = axes.index(group[0])
    return tuple(axes[at:at + len(group)]) == tuple(group)


def gemm_layouts(a_axes, b_axes, c_axes, roles) -> bool:
    """Do the three layouts let C ⊕= A·B run as one BLAS call per batch point
    (each group one extent, as lower.schedule.blas reads them)?"""
    m, n, k, _ = roles
    if as_matrix(c_axes, m, n) is not False:
        if as_matrix(c_axes, n, m) is not False:
            return False
        m, n, a_axes, b_axes = n, m, b_axes, a_axes
    return as_matrix(a_axes, m, k) is not None and as_matrix(b_axes, k, n) is not None


def factors(body: Expr) -> list | None:
    """The accesses of a product of accesses that each read an array, or None
    for anything else."""
    match body:
        case Access() if values_as_stored(body.tensor):    # i < j has no array
            return [body]
        case Mul(a, b):
            fa, fb = factors(a), factors(b)
            return None if fa is None or fb is None else fa + fb
    return None


def pair_axes(body: Expr):
    """(the two accesses of a product of two dense array reads, each one's
    storage axes) or None: what a GEMM step multiplies.

        >>> from etchpy.expr.nodes import indices, tensor
        >>> i, j, k = indices("i j k")
        >>> pair_axes(tensor("A", 2)[i, j] * tensor("B", 2)[j, k])[1]
        [('i', 'j'), ('j', 'k')]
    """
    fs = factors(body)
    if fs is None or len(fs) != 2:
        return None
    axes = [storage_axes(f) for f in fs]
    return None if None in axes else (fs, axes)


def khatri_rao(plan, sr: Semiring, tuning, dim) -> object:
    """`plan` with each dense three-factor step that pays planned as a Khatri-Rao
    temporary and a GEMM (see the module's docstring). `dim(name)` estimates an
    index's size. Unchanged when BLAS is off (tuning.blas) or sr has none; a
    step that reads a temporary fused into it (plan.fusion, under
    tuning.fused_temporaries) is left alone: it runs at the points of a sparse
    walk, not over the temporary's whole dense space."""
    if not (tuning.blas and has_blas(sr)):
        return plan
    chained = fusion.chained_steps(plan, tuning)
    steps, temps, names = [], dict(plan.temps), plan_names(plan)
    for n, step in enumerate(plan.steps):
        split = None if n in chained else _split(step, dim)
        if split is None:
            steps.append(step)
            continue
        kr_axes, pair, rest = split
        tvar = _temp(names.fresh(KR_PREFIX), len(kr_axes))
        temps[tvar.name] = tvar
        steps.append(replace(step, target=tvar.name, out=kr_axes, bound=(),
                             body=Mul(*pair), order=kr_axes))
        kr = Access(tvar, tuple(Index(v) for v in kr_axes))
        steps.append(replace(step, body=Mul(rest, kr)))
    return replace(plan, steps=tuple(steps), temps=temps)


def _split(step, dim):
    """(temporary's axes, the two factors it holds, the third factor) for a step
    that pays as Khatri-Rao + GEMM, else None."""
    fs = factors(step.body)
    if fs is None or len(fs) != 3 or any(storage_axes(f) is None for f in fs):
        return None
    best = None
    for third, p, q in permutations(fs):
        if id(p) > id(q):
            continue
        held = {ix.name for f in (p, q) for ix in f.indices}
        third_axes = storage_axes(third)
        k = tuple(v for v in third_axes if v in step.bound and v in held)
        if set(step.bound) - set(third_axes) or set(k) != held & set(step.bound):
            continue      # a sum inside the pair, or one outside the GEMM
        kr_axes = k + tuple(v for v in step.out if v in held)
        if gemm_roles(third_axes, kr_axes, step.out, step.bound) is None:
            continue
        size = math.prod(dim(v) for v in kr_axes)
        whole = math.prod(dim(v) for v in set(step.out) | set(step.bound))
        if size + whole < 2 * whole and size <= math.prod(dim(v) for v in third_axes):
            if best is None or size < best[0]:
                best = (size, kr_axes, (p, q), third)
    return None if best is None else best[1:]


def _temp(name: str, order: int) -> TensorVar:
    """A dense temporary (its name has the prefix reserved for them, `tmp`)."""
    return reserved_tensor(name, order)


def operand_temps(plan, sr: Semiring, stats, dense_out: bool = True) -> object:
    """`plan` with each dense step Σ_K A[..]·f(..) that pays planned as a
    temporary F = f and the GEMM Σ_K A·F (see the module's docstring); `stats`
    (a plan.cost.Stats) prices both. Unchanged when BLAS is off (tuning.blas,
    tuning.blas_operands) or sr has none; a step in a chain of fused
    temporaries (plan.fusion) or writing a sparse output (`dense_out` False) is
    left alone: BLAS writes neither."""
    tuning = stats.tuning
    if not (tuning.blas and tuning.blas_operands and has_blas(sr)):
        return plan
    chained = fusion.chained_steps(plan, tuning)
    stats = stats.with_origin(plan.origin)
    steps, temps, names = [], dict(plan.temps), None
    for n, step in enumerate(plan.steps):
        split = None
        if n not in chained and (dense_out or step.target != "out"):
            split = _operand_split(step, stats)
        if split is None:
            steps.append(step)
            continue
        if names is None:
            names = plan_names(plan)
        axes, a, rest = split
        tvar = _temp(names.fresh(OP_PREFIX), len(axes))
        temps[tvar.name] = tvar
        steps.append(replace(step, target=tvar.name, out=axes, bound=(), body=rest,
                             order=axes))
        steps.append(replace(step, body=Mul(a, Access(tvar, tuple(Index(v) for v in axes)))))
    if names is None:
        return plan
    return replace(plan, steps=tuple(steps), temps=temps)


def _operand_split(step, stats):
    """(F's axes, the input A, f) for the cheapest split of step into F = f and
    the GEMM Σ A·F when it is priced below the fused step, else None."""
    fs = _product(step.body)
    tuning, best = stats.tuning, None
    for k, a in enumerate(fs):
        rest = fs[:k] + fs[k + 1:]
        a_axes = (storage_axes(a) if isinstance(a, Access) and values_as_stored(a.tensor)
                  else None)
        if a_axes is None or not rest or all(isinstance(f, Access) for f in rest):
            continue        # no input, or no element-wise work: a GEMM or Khatri-Rao's
        body = rest[0]
        for f in rest[1:]:
            body = Mul(body, f)
        axes = _operand_axes(a_axes, body, step)
        if axes is None:
            continue
        gemm = Mul(a, Access(_temp(OP_PREFIX, len(axes)), tuple(Index(v) for v in axes)))
        price = (nest_cost(body, axes, stats, out=axes)
                 + temp_work(stats.full(axes), tuning) + tuning.blas_call
                 + nest_cost(gemm, step.order, stats, out=step.out) / tuning.blas_gain)
        if best is None or price < best[0]:
            best = (price, axes, a, body)
    if best is None or best[0] >= nest_cost(step.body, step.order, stats, out=step.out):
        return None
    return best[1:]


def _product(e: Expr) -> list:
    return _product(e.a) + _product(e.b) if isinstance(e, Mul) else [e]


def _operand_axes(a_axes, body: Expr, step):
    """The axes of a temporary holding `body` that make Σ A[a_axes]·F one GEMM
    into step's target (plan.dense.gemm_layouts), or None: body must read only
    dense arrays as stored and hold at least one index, and F no more cells
    than one of them or the target (on any sizes: no memory an input lacks)."""
    held: list = []
    for acc in accesses(body):
        if (storage_axes(acc) is None or not acc.tensor.format.is_dense
                or not values_as_stored(acc.tensor)):
            return None
        held += [ix.name for ix in acc.indices if ix.name not in held]
    covers = [set(step.out)] + [{ix.name for ix in acc.indices} for acc in accesses(body)]
    if not held or len(held) > 4 or not any(set(held) <= c for c in covers):
        return None
    roles = gemm_roles(a_axes, held, step.out, step.bound)
    if roles is None or (roles[3] and sum(1 for g in roles[:3] if g) < 2):
        return None
    for axes in permutations(held):
        if gemm_layouts(a_axes, axes, step.out, gemm_roles(a_axes, axes, step.out,
                                                              step.bound)):
            return tuple(axes)
    return None

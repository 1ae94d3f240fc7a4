"""A dense step that is a (batched) GEMM up to a permutation of its indices
runs as one `imp.Gemm`, which C sends to BLAS (c.statements), its loop nest
kept as the fallback.

The step must be C[..] ⊕= Σ_K A[..]·B[..] over dense operands (plan.dense.
gemm_roles gives the index groups M, N, K and batch) into a dense target, in
the real semiring (plan.dense.has_blas), with `tuning.blas` on, and the
target keeps no presence flags (a temporary of a sparse output whose cells
may get no product, lower.produced: BLAS writes values, not flags, so such a
step keeps its loops). Arrays are
row-major over their storage order, so each group flattens into one BLAS
extent when its indices sit next to each other, in the same order, in every
operand that holds it. Each operand needs one of its two groups innermost
(unit stride): that fixes whether it is transposed, and the other group's
stride is its leading dimension. A C whose M group is innermost is computed
as Cᵀ = Bᵀ·Aᵀ. Batch indices may sit anywhere: each is a loop of offsets,
taken only when each product has two extents at least (a matrix-vector
product), since a BLAS call per scaled vector costs more than its loop. An M
or N index that no layout lets flatten with its group may be a batch too, the
operand without it read again at each point (plan.dense.blas_roles: step 0).
Any other layout keeps its loops.
"""
from __future__ import annotations

from ... import imp
from ...imp import Const, Gemm
from ...plan import dense
from ...streams import dim_var


def run(lw, step, target, loops, filled):
    """The call pass (schedule.PASSES): (the Gemm running `step`, a note), or None
    when the step is no GEMM."""
    gemm = gemm_step(step, lw.plan, lw.sr, lw.bindings, target, lw.tuning, loops, filled)
    return None if gemm is None else (gemm, " (a BLAS gemm; these loops when none is bound)")


def gemm_step(step, plan, sr, bindings, target, tuning, loops, filled) -> Gemm | None:
    """The Gemm running `step` (whose loop nest is `loops`; `filled`: they store
    each cell of the target once), or None when the step is no GEMM."""
    if not (tuning.blas and dense.has_blas(sr) and target.dense_axes is not None
            and not target.keeps_flags):
        return None
    pair = dense.pair_axes(step.body)
    if pair is None or any(f.tensor.name not in bindings for f in pair[0]):
        return None
    fs, axes = pair
    (a_axes, b_axes), c_axes = axes, target.dense_axes
    roles = dense.blas_roles(a_axes, b_axes, c_axes, step.bound, tuning.blas_broadcast)
    if roles is None:
        return None          # no GEMM, or each product of a batch a scaled vector or less
    m, n, k, batch = roles
    arrays = [bindings[f.tensor.name].vals for f in fs]
    c_lay = _layout(c_axes, m, n)
    if c_lay is None or c_lay[0]:                  # C's M group innermost: Cᵀ = Bᵀ·Aᵀ
        c_lay = _layout(c_axes, n, m)
        if c_lay is None or c_lay[0]:
            return None
        m, n = n, m
        arrays, (a_axes, b_axes) = arrays[::-1], (b_axes, a_axes)
    a_lay, b_lay = _layout(a_axes, m, k), _layout(b_axes, k, n)
    if a_lay is None or b_lay is None:
        return None
    steps = tuple((dim_var(t), _stride(a_axes, t), _stride(b_axes, t), _stride(c_axes, t))
                  for t in batch)
    return Gemm(_size(m), _size(n), _size(k), arrays[0], a_lay[0], a_lay[1],
                arrays[1], b_lay[0], b_lay[1], target.array, c_lay[1], steps,
                bool(filled), loops)


def _layout(axes, rows, cols):
    """(transposed, leading dimension) of the row-major array over `axes` read as
    the matrix rows × cols (each a group of indices), or None when BLAS cannot
    read it so (plan.dense.as_matrix)."""
    transposed = dense.as_matrix(axes, rows, cols)
    if transposed is None:
        return None
    if not transposed:
        return False, (_stride(axes, rows[-1]) if rows else _size(cols))
    return True, _stride(axes, cols[-1])


def _stride(axes, axis) -> imp.Expr:
    """The distance between neighbours along `axis` in a row-major array (0 where
    the array does not hold it: broadcast along a batch index)."""
    return _size(axes[axes.index(axis) + 1:]) if axis in axes else Const(0)


def _size(group) -> imp.Expr:
    total = Const(1)
    for v in group:
        total = imp.mul(total, dim_var(v))
    return total

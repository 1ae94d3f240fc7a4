"""Imp's statements that stand for a whole operation with a loop as their meaning
(a GEMM, a gathered sum and its pick, a fixpoint loop): part of Imp's syntax
(imp.nodes lists them in `Stmt` and the grammar), kept here for size."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gemm:
    """A dense matrix product over the real semiring (float64 or float32 values),
    in row-major terms: for i < m, j < n

        c[c0 + i·ldc + j]  (=, or +=)  Σ_{l<k} A(i, l) · B(l, j)

    where A(i, l) = a[a0 + i·lda + l], or a[a0 + l·lda + i] when `a_trans`, and
    B(l, j) = b[b0 + l·ldb + j], or b[b0 + j·ldb + l] when `b_trans`.
    `batch` ((count, a_step, b_step, c_step), ...) repeats the product over nested
    counters t1 < count1, t2 < count2, ...; the offsets are a0 = Σ t·a_step (b0,
    c0 likewise). With `overwrite` the cells of c are set to the sums (each cell
    is then written by exactly one product of the batch); else the sums are added.

    `fallback` is a statement with the same effect (the plain loop nest). The
    interpreter runs the product with numpy; C calls BLAS when it has one bound
    and every extent is between 1 and INT_MAX, and runs `fallback` otherwise.
    """
    m: "Expr"
    n: "Expr"
    k: "Expr"
    a_array: str
    a_trans: bool
    lda: "Expr"
    b_array: str
    b_trans: bool
    ldb: "Expr"
    c_array: str
    ldc: "Expr"
    batch: tuple
    overwrite: bool
    fallback: "Stmt"


@dataclass(frozen=True)
class GatherSum:
    """acc := acc ⊕ ⨁_{p in [q, end)} vals[p] ⊗ dense[crd[p]] (with `dense` None, a
    plain sum: acc ⊕ ⨁ vals[p], crd read only by checks); then q := end, over
    float64 with (⊕, ⊗) = `ops`: ("+", "*"), or min/max with + or *. `fallback` is
    the walk loop with the same effect, checks included: the interpreter runs
    it; C runs ep_gather_sum / ep_gather_ext (SIMD lanes, the reduction
    reassociated) where `pick` (a GatherPick's variable) is set, else the loop.
    With `dim` (a checked walk, lower.schedule.fused_checks), a coordinate
    outside [0, dim) sets `error` and ends the sum, reading nothing there; with
    `lanes_max` too (C's name of a SIMD maximum; serial kernels, a level whose
    blocks' pass tested dim != 0 first: lower.schedule.segment_checks), C's
    lanes read x at such a coordinate clamped into [0, dim) instead, keep the
    unsigned maximum of the coordinates in `lanes_max`, and the kernel sets
    `error` after its program when that is dim or more (c.render.function_body).
    With `square` (no `dense`, ops ("+", "*"), no `lanes_max`), each value times
    itself: acc + Σ vals[p]·vals[p] (a product of an access with itself)."""
    acc: str
    q: str
    end: str
    vals: str
    crd: str
    dense: str | None
    fallback: "Stmt"
    pick: str
    dim: str | None = None
    error: str | None = None
    ops: tuple = ("+", "*")
    lanes_max: str | None = None
    square: bool = False


@dataclass(frozen=True)
class GatherPick:
    """Declare index `var`, a pick made once per call from sampled segments of a
    level (pos[0..parents]). Without `crd`: whether this call's gathered sums run
    in SIMD lanes (C: ep_gather_pick samples the row lengths: 1 for irregular
    ones of a mean length >= `ragged` (0: `least` / 2), or rows of one length L >= `least`, or with `least` 0 those of
    6·ceil(L/8) <= L, or with `least` < 0 always (a flat walk: one segment);
    0 where C has no SIMD gathers). With `crd`: whether the segments are far, so that the values
    they gather are prefetched (C: ep_far_pick, 1 when `dim` >= `least` and most
    sampled segments of two entries or more span more than dim / `share`
    coordinates; it reads pos and crd only inside pos[0] .. pos[parents]). The
    interpreter sets 1. Only speed depends on it. Without `crd`, with `far` (the
    variable of a far pick declared before it): rows of one length take the
    lanes from `far_least` entries where that pick is set. With `rows_far` (a
    far pick's variable, lower/schedule/far_rows.py): where that pick is set,
    ragged rows take the lanes from a mean of `far_ragged` (0: `ragged`), and
    from `far_mild` (0: not) when their lengths' standard deviation is at most
    the mean / `far_spread` (C: ep_gather_spread). With `crd` and `near` > 0:
    instead, whether the segments' gathers share cache lines (C: ep_near_pick,
    1 when more than 1/`share` of the sampled segments of two entries or more
    have half of their first 16 steps between consecutive coordinates in [0,
    near]: a mesh's rows; random rows' are not)."""
    var: str
    pos: str
    parents: str
    crd: str | None = None
    dim: str | None = None
    share: int = 8
    least: int = 0
    far: str | None = None
    far_least: int = 0
    ragged: int = 0
    rows_far: str | None = None
    far_ragged: int = 0
    far_mild: int = 0
    far_spread: int = 4
    near: int = 0


@dataclass(frozen=True)
class Fixpoint:
    """steps := -1; for k = 1 .. limit: run `body`, exchange the arrays of each
    pair (state, next, size) of `pairs` (body reads state, writes next), and if
    `until` holds: steps := k, stop. On exit each state array (its own storage)
    holds the last step's `size` cells (size None: a scratch pair, unspecified);
    next arrays are unspecified. `until` reads no array of the pairs; `steps` is
    an index variable declared before; what body declares is local to a step.
    C runs body twice per turn, names exchanged in the second (no pointer is
    swapped: `restrict` holds) (proofs_notes/fixpoint_loop.md)."""
    steps: str
    limit: Expr
    body: "Stmt"
    pairs: tuple
    until: Expr

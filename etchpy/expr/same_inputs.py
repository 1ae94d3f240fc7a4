"""One input's factors of a product walked once, known when the kernel is made.

A product whose factors read one input at one index tuple, the input itself
and value predicates of its values (`A[i,j]·[A[i,j] > t]`), reads one
structure twice: whatever a call passes for A, both factors are bound from it
(the predicate's structure is the input's, runtime.predicates), and the kernel
as written merges two equal streams. They are joined into one value predicate
as expr.shared joins factors over one structure (`one_walk`), its column read
once (proofs_notes/shared.md, "One input's factors"). That they share one
structure holds for every call (one name is one value), where runtime.shared
finds which ep.Tensor inputs share one per call, so the request is rewritten
once (runtime.request, under Tuning.one_walk) for every kind of input. Only the
products holding such factors are rebuilt; every other node keeps its written
nesting (a nested sum says what to do first).

    same_inputs(expr)
"""
from __future__ import annotations

from dataclasses import replace

from . import formula
from .bins import is_bins
from .nodes import Access, Expr, Mul
from .shared import one_walk
from .sums import member, once_at
from .walk import map_operands, spine

__all__ = ["same_inputs"]


def same_inputs(e: Expr) -> Expr:
    """`e` with the factors of each product that read one input at one index tuple
    (and one declared format: `sums.member`'s key) one value predicate
    (expr.shared.one_walk), at the first one's place; every other node, products
    without such factors among them, as written (their nesting kept).

        >>> same_inputs(A[i, j] * (A[i, j] > "t") * x[j])
        Mul(Access(CompareVar(name='cmp_row_A_...', ...), (i, j)), Access(x, (j,)))
    """
    if not isinstance(e, Mul):
        return map_operands(e, same_inputs)
    fs = list(spine(e, Mul))
    groups: dict = {}
    for k in once_at(fs):       # a power's repeats stay factors of their own
        f = fs[k]
        m = member(f)
        if m is not None and len(set(m[0])) == 1 and not is_bins(f.tensor):
            groups.setdefault((m[1], m[0][0]), []).append(k)
    joined = [ks for ks in groups.values() if len(ks) > 1]
    if not joined:
        return map_operands(e, same_inputs)
    out: list = [same_inputs(f) for f in fs]
    for ks in joined:
        out[ks[0]] = _columns_once(one_walk([fs[k] for k in ks], None, fs[ks[0]].indices))
        for k in ks[1:]:
            out[k] = None
    kept = [f for f in out if f is not None]
    prod = kept[0]
    for f in kept[1:]:
        prod = Mul(prod, f)
    return prod


def _columns_once(a: Access) -> Access:
    """Joined predicate `a` (columns, weights and a test; no terms, no bins) with each
    column it holds twice (one input of one format at its own entries: the same
    values) read once, its weights and test renumbered."""
    tv = a.tensor
    columns = list(dict.fromkeys(tv.columns))
    at = {k: columns.index(c) for k, c in enumerate(tv.columns)}
    tests = formula.remapped(tv.tests, at, {p: p for p in range(tv.order)}) \
        if tv.tests != formula.TRUE else tv.tests
    return Access(replace(tv, columns=tuple(columns), weights=tuple(at[w] for w in tv.weights),
                          tests=tests), a.indices)

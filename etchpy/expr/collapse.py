"""Runs of summed levels read by one access alone, walked as one level.

A deep trie pays a step per level per entry. When consecutive compressed levels
k..j (two or more; singleton levels after the first too, as ep.table stores
a key that depends on the ones above) of one access X are summed, no other access reads their
indices and X's value reads none of their coordinates, the sum over them visits
each stored position of level j once, under its one chain of parents: the
positions under a position p of level k-1 are one range [P(p), P(p+1)) of level
j's positions, P = pos_j ∘ ... ∘ pos_k (proofs_notes/shared.md, "Runs of
levels"). So X may be read as X', whose levels k..j are one compressed level
over those positions (pos P, crd the positions themselves), and the Σ over the
run's indices as a Σ over one new index. A dense first level may start the
run too (its positions are [0, n) under the root: pos [0, n]; `dense`,
Tuning.dense_runs): lineitem's orders and lines walked as one loop.

    collapse(expr, names, order)  (expr with each such run of an access of the
                                  inputs `names` read as one level; the runs)
    (formats.positions: the format and level arrays with levels k..j as one)

An access qualifies when it is a plain tensor (not iso) or a value predicate
(its columns read at its positions, inputs of `names` read nowhere else in the
expression) stored in the order of its indices; a run with a fixed loop order
must be consecutive in it, in order.
"""
from __future__ import annotations

from dataclasses import replace

from . import formula
from ..formats.positions import collapsed_format, collapsible, passes_through
from .compare import CompareVar
from .nodes import Access, Add, Expr, Index, Map, Mul, Sum, TensorVar
from .walk import accesses, map_operands


def collapse(e: Expr, names: set, order: tuple | None,
             classes: dict | None = None, dense: bool = True) -> tuple[Expr, dict]:
    """(e with each qualifying run read as one level; {new index name: (the input
    names read collapsed, k, j, the names of the indices replaced)}). A value
    predicate's columns must be over one structure (`classes`, input name ->
    structure, as for expr.shared.fused; None: all one); `dense`: a run may start
    at a dense first level (Tuning.dense_runs)."""
    summed = {ix.name for ix in _sums(e)}
    ix_uses: dict = {}
    name_uses: dict = {}
    for acc in accesses(e):
        for ix in set(acc.indices):
            ix_uses[ix.name] = ix_uses.get(ix.name, 0) + 1
        for n in inputs(acc.tensor):
            name_uses[n] = name_uses.get(n, 0) + 1
    ok = {n for n in names if name_uses.get(n) == 1}
    runs: dict = {}
    new, firsts, gone = {}, {}, set()
    for acc in accesses(e):
        if acc in new:
            continue
        cur = acc
        cols = inputs(acc.tensor)
        if len(cols) > 1 and classes is not None and (
                len({classes.get(n) for n in cols}) != 1 or cols[0] not in classes):
            continue                       # columns of two structures: not aligned
        for k, j in _runs(acc, summed, ix_uses, ok, order, dense):     # right to left
            replaced = acc.indices[k:j + 1]
            q = Index("r_" + "_".join(ix.name for ix in replaced))
            cur = _read_as_one(cur, k, j, q)
            runs[q.name] = (inputs(acc.tensor), k, j, tuple(ix.name for ix in replaced))
            firsts[replaced[0].name] = q
            gone.update(ix.name for ix in replaced[1:])
        if cur is not acc:
            new[acc] = cur
    if not new:
        return e, {}
    return _rewrite(e, new, firsts, gone), runs


def inputs(tv) -> tuple:
    """The input names an access of `tv` reads at its positions (its structure)."""
    if isinstance(tv, CompareVar):
        return tuple(c[0] for c in tv.columns if c[2] is None) if tv.kind == "value" else ()
    return (tv.name,)


def declared(expr) -> dict:
    """{input name: the format expr declares for it} of the inputs its accesses
    (and its value predicates' columns) read at their own positions."""
    out = {}
    for a in accesses(expr):
        tv = a.tensor
        if getattr(tv, "kind", None) != "value" or getattr(tv, "columns", None) is None:
            out.setdefault(tv.name, tv.format)
        else:
            out.update({c[0]: c[1] for c in tv.columns if c[2] is None and c[0] not in out})
    return out

def _sums(e: Expr):
    match e:
        case Sum(ix, body):
            yield ix
            yield from _sums(body)
        case Mul(a, b) | Add(a, b):
            yield from _sums(a)
            yield from _sums(b)
        case Map(_, a, _):
            yield from _sums(a)


def _read_positions(tv) -> set:
    """The index positions whose coordinates a value predicate reads."""
    at = {p for c in tv.columns if c[2] is not None for p in c[2]}
    return at | {(formula.coordinate(n[3])[1:] or (0,))[0] for n in formula.walk(tv.tests)
                 if n[0] == "cmp" and formula.coordinate(n[3])}


def _runs(acc: Access, summed, ix_uses, ok, order, dense: bool) -> list:
    """[(k, j), ...]: the runs of two or more free levels of acc, right to left."""
    tv = acc.tensor
    if type(tv) is TensorVar:
        if tv.iso or tv.name not in ok:
            return []
        read = set()
    elif isinstance(tv, CompareVar) and tv.kind == "value" and set(inputs(tv)) <= ok:
        read = _read_positions(tv)
    else:
        return []
    fmt = tv.format
    if fmt.mode_order != tuple(range(len(fmt.levels))):
        return []
    free = [(collapsible(lv, dense and p == 0) or passes_through(lv)) and ix.name in summed
            and ix_uses.get(ix.name) == 1 and p not in read
            for p, (lv, ix) in enumerate(zip(fmt.levels, acc.indices))]
    out, start = [], None
    for p, f in enumerate(free + [False]):
        if f and start is None:
            start = p if collapsible(fmt.levels[p], dense and p == 0) else None
        elif not f and start is not None:
            if p - start >= 2 and _consecutive(acc.indices[start:p], order):
                out.append((start, p - 1))
            start = None
    return out[::-1]


def _consecutive(indices, order) -> bool:
    """Are `indices` consecutive, in this order, in the fixed loop order (if any)?"""
    if order is None:
        return True
    want = [ix.name for ix in indices]
    at = order.index(want[0]) if want[0] in order else -1
    return at >= 0 and list(order[at:at + len(want)]) == want


def _read_as_one(acc: Access, k: int, j: int, q: Index) -> Access:
    tv, gone = acc.tensor, j - k
    fmt = collapsed_format(tv.format, k, j)
    idx = acc.indices[:k] + (q,) + acc.indices[j + 1:]
    if type(tv) is TensorVar:
        return Access(TensorVar(tv.name, len(idx), fmt), idx)
    moved = {p: p if p < k else p - gone for p in range(len(acc.indices))}
    columns = tuple((n, collapsed_format(f, k, j), None) if at is None else  # (not its bins)
                    (n, f, tuple(moved[p] for p in at)) for n, f, at in tv.columns)
    tests = tv.tests if tv.tests == formula.TRUE else formula.remapped(
        tv.tests, {c: c for c in range(len(tv.columns))}, moved)
    return Access(replace(tv, order=len(idx), format=fmt, columns=columns, tests=tests), idx)


def _rewrite(e: Expr, new: dict, firsts: dict, gone: set) -> Expr:
    match e:
        case Access():
            return new.get(e, e)
        case Sum(ix, body):
            inner = _rewrite(body, new, firsts, gone)
            if ix.name in gone:
                return inner
            return Sum(firsts.get(ix.name, ix), inner)
    return map_operands(e, lambda x: _rewrite(x, new, firsts, gone))

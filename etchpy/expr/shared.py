"""Products over one structure: factors that walk the same index arrays, read once.

Several factors of a product may be value columns over one structure (a table's
columns: ep.relation(..., values=[...]), ep.table; at call time their level
arrays are the same objects). Walked as separate tensors, their streams are
merged level by level, though every segment of one equals the other's; the
intersection of identical segments is the segment itself (proofs_notes/shared.md),
so the product may walk the structure once and read each column's value at the
same position. `fused` makes that product one value predicate (expr.compare,
kind "value"): its columns are the factors' columns, its test the AND of the
factors' tests (formula.TRUE for none), and its `weights` the columns of the
plain factors, whose values multiply into its value where the test holds.

    groups(expr)          per product, the factors over one index tuple and one
                          sparse format that may share a structure: their input
                          names (what runtime.shared checks at call time)
    fused(expr, classes)  expr with each product's factors that `classes`
                          (input name -> structure) puts over one structure
                          replaced by one value predicate
    flat(expr, names)     expr with each Σ over all the indices of one access
                          alone a walk of its stored positions (one flat loop)

A factor qualifies when it is an access of a plain sparse tensor (not iso, not a
window, not dense: a dense operand is located, never merged) or a value
predicate (its columns read at its positions are its structure; a column read
at some of the indices, a dense tensor located, comes along as it is); the
factors of one group have the same indices in the same order and the same
declared format.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace

from . import formula
from ..formats import Bins, Format
from .bins import is_bins
from .compare import CompareVar
from .nodes import COMPARE_PREFIX, Access, Add, Expr, Index, Map, Mul, Sum, TensorVar
from .walk import map_operands, spine, sum_chain


def _member(f: Expr):
    """(input names, key) of a factor that may join a group, else None."""
    if not isinstance(f, Access):
        return None
    tv = f.tensor
    if tv.format.is_dense:
        return None
    if type(tv) is TensorVar and not tv.iso:
        return (tv.name,), (f.indices, tv.format)
    if isinstance(tv, CompareVar) and tv.kind == "value" and not (tv.bins or tv.terms) and all(
            fmt == tv.format for _, fmt, at in tv.columns if at is None):
        return tuple(c[0] for c in tv.columns if c[2] is None), (f.indices, tv.format)
    if isinstance(tv, CompareVar) and tv.kind == "bins" and not tv.columns[0][1].is_dense:
        return (tv.source,), (f.indices[:-1], tv.columns[0][1])     # its bins index apart
    return None


def _products(e: Expr):
    """Every maximal product of e, as its list of factors."""
    match e:
        case Mul():
            fs = list(spine(e, Mul))
            yield fs
            for f in fs:
                yield from _products(f)
        case Add(a, b):
            yield from _products(a)
            yield from _products(b)
        case Sum(_, body):
            yield from _products(body)
        case Map(_, a, _):
            yield from _products(a)


def groups(e: Expr) -> tuple[tuple[str, ...], ...]:
    """The input names of each product's factors that may share one structure
    (two or more factors with one key: see the module docstring)."""
    out = []
    for fs in _products(e):
        by_key: dict = {}
        for f in fs:
            m = _member(f)
            if m is not None:
                by_key.setdefault(m[1], []).append(m[0])
        for f in fs:                             # an Add of terms over one (`_terms`)
            for key in list(by_key):
                for member, _ in _terms(f, key, 0, _ANY, set(key[0])) or ():
                    if member is not None:
                        by_key[key].append((member.tensor.name,))
        out += [tuple(dict.fromkeys(n for names in ms for n in names))
                for ms in by_key.values() if len(ms) > 1]
    return tuple(dict.fromkeys(out))


class _Any(dict):
    """Every input name in one class (`groups`: the terms that may join)."""

    def get(self, key, default=None):
        return 0


_ANY = _Any()


def _addends(f: Expr) -> list:
    """The factor lists of the addends of an Add `f` ([] for any other factor)."""
    return [list(spine(t, Mul)) for t in spine(f, Add)] if isinstance(f, Add) else []


def _terms(f: Expr, key, cls, classes: dict, inner: set):
    """((member or None, (dense accesses...)), ...) when `f` is an Add each of
    whose addends is at most one plain column over the structure (`key`, class
    `cls`) times dense tensors at one tuple of other indices (not in `inner`),
    the same in every addend; else None (and None over a structure whose last
    level takes no level below: the dense tensors' indices are levels below it)."""
    if not key[1].takes_levels_below:
        return None
    out, extra = [], None
    for fs in _addends(f):
        member, dense = None, []
        for g in fs:
            m = _member(g)
            if m is not None and type(g.tensor) is TensorVar and m[1] == key and {
                    classes.get(n) for n in m[0]} == {cls} and member is None:
                member = g
            elif isinstance(g, Access) and type(g.tensor) is TensorVar and \
                    g.tensor.format.is_dense and not g.tensor.iso and not (
                    set(g.indices) & inner) and len(set(g.indices)) == len(g.indices):
                dense.append(g)
            else:
                return None
        ix = tuple(dict.fromkeys(i for g in dense for i in g.indices))
        if not ix or extra not in (None, ix):
            return None
        extra = ix
        out.append((member, tuple(dense)))
    return tuple(out) if out else None


def fused(e: Expr, classes: dict) -> Expr:
    """e with the factors of each product that one key and one structure (every
    input name of a factor mapped by `classes` to one value) join replaced by
    one value predicate, at the first one's place."""
    match e:
        case Mul():
            return _fused_product([fused(f, classes) for f in spine(e, Mul)], classes)
    return map_operands(e, lambda x: fused(x, classes))


def _fused_product(fs: list, classes: dict) -> Expr:
    buckets: dict = {}
    for k, f in enumerate(fs):
        m = _member(f)
        cls = {classes.get(n) for n in m[0]} if m is not None else {None}
        if len(cls) == 1 and None not in cls:
            buckets.setdefault((m[1], cls.pop()), []).append(k)
    out = list(fs)
    for (key, cls), ks in buckets.items():
        ks = _distinct_bins(fs, ks)
        inner = {ix for k in ks for ix in fs[k].indices}
        terms = next(((a, t) for a, f in enumerate(fs) if out[a] is not None and (
            t := _terms(f, key, cls, classes, inner)) is not None), None)
        if len(ks) > 1 or terms is not None:
            out[ks[0]] = one_walk([fs[k] for k in ks], terms and terms[1])
            for k in ks[1:] + ([terms[0]] if terms else []):
                out[k] = None
    kept = [f for f in out if f is not None]
    prod = kept[0]
    for f in kept[1:]:
        prod = Mul(prod, f)
    return prod


def _distinct_bins(fs: list, ks: list) -> list:
    """ks without the onehots whose bins index another factor of ks has too."""
    seen = {ix for k in ks if not is_bins(fs[k].tensor) for ix in fs[k].indices}
    out = []
    for k in ks:
        if is_bins(fs[k].tensor):
            if fs[k].indices[-1] in seen:
                continue
            seen.add(fs[k].indices[-1])
        out.append(k)
    return out


def one_walk(factors: list, terms: tuple | None = None) -> Access:
    """The value predicate that is the product of `factors` (accesses over one
    structure, at one index tuple, and onehots of its columns, each over one
    more index) and of the sum `terms` (`_terms`): their columns in order, the
    AND of their tests, the plain factors' columns as weights, the onehots'
    columns as its bins (their indices next, in order), each term's column and
    its dense tensors (located at its other indices, last) as its `terms`."""
    columns, weights, tests, bins, extra = [], [], [], [], []
    for f in factors:
        tv = f.tensor
        at = len(columns)
        if is_bins(tv):
            bins.append((at, tv.tests[0][1]))
            extra.append(f.indices[-1])
            columns.append(tv.columns[0])
            continue
        if type(tv) is TensorVar:
            weights.append(at)
            columns.append((tv.name, tv.format, None))
            continue
        columns += list(tv.columns)
        weights += [at + w for w in tv.weights]
        idx = {p: p for p in range(len(f.indices))}
        if tv.tests != formula.TRUE:
            tests.append(formula.remapped(tv.tests, {k: at + k for k in range(
                len(tv.columns))}, idx))
    test = formula.TRUE
    for t in tests:
        test = t if test == formula.TRUE else ("and", test, t)
    names = "_".join(dict.fromkeys(c[0] for c in columns))
    plain = [f for f in factors if not is_bins(f.tensor)]
    at = plain[0].indices if plain else factors[0].indices[:-1]
    fmt = columns[0][1]
    summed, over = _summed(terms, columns, len(at) + len(extra))
    key = (columns, test, weights) + ((tuple(bins), summed) if bins or summed else ())
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:8]
    tail = (*(Bins() for _ in bins), *("dense" for _ in over))  # below the structure's
    fmt = Format((*fmt.levels, *tail), (*fmt.mode_order, *range(len(at), len(at) + len(tail))))
    var = CompareVar(f"{COMPARE_PREFIX}row_{names[:40]}_{digest}", len(at) + len(tail),
                     fmt, kind="value", tests=test, source=columns[0][0],
                     columns=tuple(columns), weights=tuple(weights), bins=tuple(bins),
                     terms=summed)
    return Access(var, (*at, *extra, *over))


def _summed(terms, columns: list, first: int) -> tuple:
    """(the predicate's `terms`: ((column or None, (located columns...)), ...),
    the indices they add, from position `first` on), appending their columns."""
    if not terms:
        return (), ()
    over = tuple(dict.fromkeys(ix for _, dense in terms for g in dense for ix in g.indices))
    out = []
    for member, dense in terms:
        col = None
        if member is not None:
            col = len(columns)
            columns.append((member.tensor.name, member.tensor.format, None))
        located = []
        for g in dense:
            located.append(len(columns))
            columns.append((g.tensor.name, g.tensor.format,
                            tuple(first + over.index(ix) for ix in g.indices)))
        out.append((col, tuple(located)))
    return tuple(out), over


def flat(e: Expr, names: set, classes: dict | None = None) -> tuple[Expr, dict]:
    """(e with each Σ over all the indices of one access, alone, read as a walk
    of its stored positions: Σ_q X'[q], X' the vector of X's stored values;
    {the new index's name: (the names of the indices it replaces, the inputs
    read as their stored values)}). Only for an
    access whose inputs are all in `names` (ep.Tensors whose fill is the zero and
    whose every value position is a stored entry, runtime.shared) and read nowhere else in e, a plain tensor or a value
    predicate that reads no coordinate and no located column: its value at a
    stored entry is a function of the position alone (proofs_notes/shared.md);
    a predicate's columns must be over one structure (`classes`: input name ->
    structure, as for `fused`; None: all one)."""
    uses: dict = {}
    for acc in _accesses(e):
        for n in _names(acc.tensor):
            uses[n] = uses.get(n, 0) + 1
    ok = {n for n in names if uses.get(n) == 1}
    merged: dict = {}
    return _flat(e, ok, merged, classes), merged


def _accesses(e: Expr):
    match e:
        case Access():
            yield e
        case Mul(a, b) | Add(a, b):
            yield from _accesses(a)
            yield from _accesses(b)
        case Sum(_, body) | Map(_, body, _):
            yield from _accesses(body)


def _names(tv) -> tuple:
    if isinstance(tv, CompareVar):
        return tuple(c[0] for c in tv.columns)
    return (tv.name,)


def _flat(e: Expr, ok: set, merged: dict, classes) -> Expr:
    match e:
        case Sum():
            summed, body = sum_chain(e)
            flat_body = _flat_access(body, summed, ok, classes)
            if flat_body is not None:
                q = flat_body.indices[0]
                merged[q.name] = (tuple(ix.name for ix in body.indices),
                                  _names(flat_body.tensor))
                return Sum(q, flat_body)
            out = _flat(body, ok, merged, classes)
            for ix in reversed(summed):
                out = Sum(ix, out)
            return out
    return map_operands(e, lambda x: _flat(x, ok, merged, classes))


def _flat_access(body: Expr, summed: tuple, ok: set, classes):
    """The access of the stored values of `body` over one new index, or None."""
    if not isinstance(body, Access) or set(body.indices) != set(summed) \
            or len(summed) != len(body.indices):
        return None
    tv = body.tensor
    q = Index("q_" + "_".join(ix.name for ix in body.indices))
    vector = Format.parse("dense", 1)
    if type(tv) is TensorVar and not tv.iso and tv.name in ok:
        return Access(TensorVar(tv.name, 1, vector), (q,))
    one = classes is None or len({classes.get(n) for n in _names(tv)} - {None}) == 1 and all(
        n in classes for n in _names(tv))
    if isinstance(tv, CompareVar) and tv.kind == "value" and not (tv.bins or tv.terms) and set(
            _names(tv)) <= ok and one and all(
            c[2] is None for c in tv.columns) and not any(
            n[0] == "cmp" and n[3][0] == "idx" for n in formula.walk(tv.tests)):
        columns = tuple((c[0], vector, None) for c in tv.columns)
        return Access(replace(tv, order=1, format=vector, columns=columns), (q,))
    return None

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

    groups(expr, most)    per product (and per sum), the factors over one index
                          tuple and one sparse format that may share a
                          structure: their input names (what runtime.shared
                          checks at call time)
    fused(expr, classes, most)
                          expr with each product's factors that `classes`
                          (input name -> structure) puts over one structure
                          replaced by one value predicate, a sum of products
                          over that structure among them (expr.sums) its terms,
                          and each other such sum one value predicate alone
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

from . import formula, sums
from ..formats import Bins, Format
from .bins import is_bins
from .compare import CompareVar
from .nodes import COMPARE_PREFIX, Access, Add, Expr, Index, Map, Mul, Sum, TensorVar
from .sums import member, once
from .walk import map_operands, spine, sum_chain


_member = member


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


def _adds(e: Expr):
    """Every Add of e."""
    match e:
        case Add(a, b):
            yield e
            yield from _adds(a)
            yield from _adds(b)
        case Mul(a, b):
            yield from _adds(a)
            yield from _adds(b)
        case Sum(_, a) | Map(_, a, _):
            yield from _adds(a)


def groups(e: Expr, most: int) -> tuple[tuple[str, ...], ...]:
    """The input names of each product's factors that may share one structure
    (two or more factors with one key: see the module docstring), with those of
    a sum among them that would be its terms (expr.sums, at most `most`
    products), and of each sum that would be one walk alone."""
    out = []
    for fs in _products(e):
        by_key: dict = {}
        for f in once(fs):
            m = _member(f)
            if m is not None:
                by_key.setdefault(m[1], []).append(m[0])
        for f in fs:
            for key in list(by_key):
                if most and sums.terms(f, key, 0, _ANY, set(), most) is not None:
                    by_key[key] += sums.members_by_key(f, most).get(key, [])
        out += _grouped(by_key)
    for a in _adds(e):
        if most and _alone(a, _ANY, most) is not None:
            out += _grouped(sums.members_by_key(a, most))
    return tuple(dict.fromkeys(out))


def _grouped(by_key: dict) -> list:
    return [tuple(dict.fromkeys(n for names in ms for n in names))
            for ms in by_key.values() if len(ms) > 1]


class _Any(dict):
    """Every input name in one class (`groups`: the terms that may join)."""

    def get(self, key, default=None):
        return 0


_ANY = _Any()


def fused(e: Expr, classes: dict, most: int) -> Expr:
    """e with the factors of each product that one key and one structure (every
    input name of a factor mapped by `classes` to one value) join replaced by
    one value predicate, at the first one's place, a factor that is a sum over
    that structure among them (expr.sums, at most `most` products: 0, none);
    and each other sum over one structure one value predicate."""
    match e:
        case Mul():
            fs = [f if isinstance(f, Add) else fused(f, classes, most) for f in spine(e, Mul)]
            return _fused_product(fs, classes, most)
        case Add() if most:
            alone = _alone(e, classes, most)
            if alone is not None:
                return alone
    return map_operands(e, lambda x: fused(x, classes, most))


def _alone(e: Add, classes: dict, most: int):
    """Sum e as one value predicate, when each of its products holds a member over
    one structure (expr.sums.terms, alone), times the factors every product holds
    (`sums.common`: a·x + b·x = (a + b)·x); else, its products grouped by their
    factors of other structures (`sums.by_others`), each group one predicate
    times those factors, when that makes fewer walks; else None."""
    prods = sums.products(e, most)
    for g in (prods or [[]])[0]:
        m = _member(g)
        cls = {classes.get(n) for n in m[0]} if m is not None else {None}
        if len(cls) != 1 or None in cls:
            continue
        key, cls = m[1], cls.pop()
        whole = _walked(prods, key, cls, classes, most)
        if whole is not None:
            return whole
        parts = sums.by_others(prods, key, cls, classes)
        walks = [_walked(p, key, cls, classes, most) if len(p) > 1 else None for p in parts]
        if len(parts) < len(prods) and any(w is not None for w in walks):
            out = None
            for p, w in zip(parts, walks):
                w = w if w is not None else fused(sums.added(p), classes, most)
                out = w if out is None else Add(out, w)
            return out
    return None


def _walked(prods: list, key, cls, classes: dict, most: int):
    """The products `prods` as one value predicate over the structure of `key`
    and class `cls` times the factors they all hold, or None."""
    shared_, rest = sums.common(prods, key, cls, classes)
    terms = sums.terms(rest, key, cls, classes, set(), most, alone=True)
    if terms is None:
        return None
    out = one_walk([], terms, key[0])
    for f in shared_:
        out = Mul(fused(f, classes, most), out)
    return out


def _fused_product(fs: list, classes: dict, most: int) -> Expr:
    buckets: dict = {}
    for k, f in enumerate(fs):
        m = _member(f)
        cls = {classes.get(n) for n in m[0]} if m is not None else {None}
        if len(cls) == 1 and None not in cls:
            buckets.setdefault((m[1], cls.pop()), []).append(k)
    out = list(fs)
    for (key, cls), ks in buckets.items():
        ks = _distinct_bins(fs, ks)
        bins = {fs[k].indices[-1] for k in ks if is_bins(fs[k].tensor)}
        terms = _sum_factors(fs, out, key, cls, classes, bins, most)
        if len(once([fs[k] for k in ks])) > 1 or terms is not None:
            out[ks[0]] = one_walk([fs[k] for k in ks], terms and terms[1], key[0])
            for k in ks[1:] + (terms[0] if terms else []):
                out[k] = None
    kept = [fused(f, classes, most) if isinstance(f, Add) else f for f in out if f is not None]
    prod = kept[0]
    for f in kept[1:]:
        prod = Mul(prod, f)
    return prod


def _sum_factors(fs: list, out: list, key, cls, classes: dict, bins: set, most: int):
    """([the positions of the sums among fs, not yet taken (`out`), that are
    terms over the structure], their terms): all of them multiplied out
    together (a·(b + c)·(d + e): their product's products), else the first
    one alone that is; None when none is."""
    adds = [a for a, f in enumerate(fs) if isinstance(f, Add) and out[a] is not None]
    if not most or not adds:
        return None
    if len(adds) > 1:
        prods = [[]]
        for a in adds:
            got = sums.products(fs[a], most)
            prods = None if got is None or prods is None or len(prods) * len(got) > most \
                else [p + q for p in prods for q in got]
        t = sums.terms(prods, key, cls, classes, bins, most) if prods else None
        if t is not None:
            return adds, t
    for a in adds:
        t = sums.terms(fs[a], key, cls, classes, bins, most)
        if t is not None:
            return [a], t
    return None


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


def one_walk(factors: list, terms: tuple | None, at: tuple) -> Access:
    """The value predicate that is the product of `factors` (accesses over one
    structure, at index tuple `at`, and onehots of its columns, each over one
    more index) and of the sum `terms` (expr.sums.terms): their columns in
    order, the AND of their tests (and, when every term has a test, of their
    OR: an entry where no term holds is none, as in their union), the plain
    factors' columns as weights, the onehots' columns as its bins (their
    indices next, in order), and each term's columns, test, located dense
    tensors (at the structure's indices or at its other indices, last) and
    numbers as its `terms`."""
    columns, weights, tests, bins, extra = [], [], [], [], []
    for f in factors:
        tv = f.tensor
        if is_bins(tv):
            bins.append((len(columns), tv.tests[0][1]))
            extra.append(f.indices[-1])
            columns.append(tv.columns[0])
            continue
        _read(f, columns, weights, tests)
    names = "_".join(dict.fromkeys(c[0] for c in columns))
    summed, over = _summed(terms, columns, at, len(at) + len(extra))
    names = names or "_".join(dict.fromkeys(c[0] for c in columns))   # a sum alone
    if summed and formula.TRUE not in (t[2] for t in summed):   # no term holds: no entry
        either = summed[0][2]
        for t in summed[1:]:
            either = ("or", either, t[2])
        tests.append(either)
    test = _all(tests)
    fmt = columns[0][1]
    key = (columns, test, weights) + ((tuple(bins), summed) if bins or summed else ())
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:8]
    tail = (*(Bins() for _ in bins), *("dense" for _ in over))  # below the structure's
    fmt = Format((*fmt.levels, *tail), (*fmt.mode_order, *range(len(at), len(at) + len(tail))))
    var = CompareVar(f"{COMPARE_PREFIX}row_{names[:40]}_{digest}", len(at) + len(tail),
                     fmt, kind="value", tests=test, source=columns[0][0],
                     columns=tuple(columns), weights=tuple(weights), bins=tuple(bins),
                     terms=summed)
    return Access(var, (*at, *extra, *over))


def _read(f: Access, columns: list, weights: list, tests: list) -> None:
    """Append member f's columns (a plain column: one weight; a value predicate:
    its columns, weights and test, renumbered) to the predicate's."""
    tv, at = f.tensor, len(columns)
    if type(tv) is TensorVar:
        weights.append(at)
        columns.append((tv.name, tv.format, None))
        return
    columns += list(tv.columns)
    weights += [at + w for w in tv.weights]
    if tv.tests != formula.TRUE:
        tests.append(formula.remapped(tv.tests, {k: at + k for k in range(
            len(tv.columns))}, {p: p for p in range(len(f.indices))}))


def _all(tests: list):
    """The AND of `tests` (formula.TRUE for none)."""
    test = formula.TRUE
    for t in tests:
        test = t if test == formula.TRUE else ("and", test, t)
    return test


def _summed(terms, columns: list, at: tuple, first: int) -> tuple:
    """(the predicate's `terms`: ((columns...), (located columns...), test,
    (numbers...)), ...), the indices they add, from position `first` on),
    appending their columns; a dense tensor at indices of the structure `at` is
    located at their positions."""
    if not terms:
        return (), ()
    over = tuple(dict.fromkeys(ix for _, dense, *_ in terms for g in dense
                               for ix in g.indices if ix not in at))
    out = []
    for members, dense, numbers, pins in terms:
        cols, tests = [], []
        for g in members:
            _read(g, columns, cols, tests)
        located = []
        for g in dense:
            located.append(len(columns))
            columns.append((g.tensor.name, g.tensor.format, tuple(
                at.index(ix) if ix in at else first + over.index(ix) for ix in g.indices)))
        out.append((tuple(cols), tuple(located), _all(tests), tuple(numbers),
                    tuple((first + over.index(ix), c) for ix, c in pins)))
    return tuple(out), over


def flat(e: Expr, names: set, classes: dict | None = None, plain: set | None = None
         ) -> tuple[Expr, dict]:
    """(e with each Σ over all the indices of one access, alone, read as a walk
    of its stored positions: Σ_q X'[q], X' the vector of X's stored values;
    {the new index's name: (the names of the indices it replaces, the inputs
    read as their stored values)}). Only for an
    access whose inputs are all in `names` (ep.Tensors whose fill is the zero and
    whose every value position is a stored entry, runtime.shared) and read nowhere else in e, a plain tensor or a value
    predicate that reads no coordinate and no located column: its value at a
    stored entry is a function of the position alone (proofs_notes/shared.md);
    a predicate's columns must be over one structure (`classes`: input name ->
    structure, as for `fused`; None: all one); a plain tensor's name must be in
    `plain` too (None: any)."""
    uses: dict = {}
    for acc in _accesses(e):
        for n in _names(acc.tensor):
            uses[n] = uses.get(n, 0) + 1
    ok = {n for n in names if uses.get(n) == 1}
    merged: dict = {}
    return _flat(e, ok, ok if plain is None else ok & plain, merged, classes), merged


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


def _flat(e: Expr, ok: set, plain: set, merged: dict, classes) -> Expr:
    match e:
        case Sum():
            summed, body = sum_chain(e)
            flat_body = _flat_access(body, summed, ok, plain, classes)
            if flat_body is not None:
                q = flat_body.indices[0]
                merged[q.name] = (tuple(ix.name for ix in body.indices),
                                  _names(flat_body.tensor))
                return Sum(q, flat_body)
            out = _flat(body, ok, plain, merged, classes)
            for ix in reversed(summed):
                out = Sum(ix, out)
            return out
    return map_operands(e, lambda x: _flat(x, ok, plain, merged, classes))


def _flat_access(body: Expr, summed: tuple, ok: set, plain: set, classes):
    """The access of the stored values of `body` over one new index, or None."""
    if not isinstance(body, Access) or set(body.indices) != set(summed) \
            or len(summed) != len(body.indices):
        return None
    tv = body.tensor
    q = Index("q_" + "_".join(ix.name for ix in body.indices))
    vector = Format.parse("dense", 1)
    if type(tv) is TensorVar and tv.name in plain:    # (an iso one's stored values: ones)
        return Access(TensorVar(tv.name, 1, vector, tv.iso), (q,))
    one = classes is None or len({classes.get(n) for n in _names(tv)} - {None}) == 1 and all(
        n in classes for n in _names(tv))
    if isinstance(tv, CompareVar) and tv.kind == "value" and not (tv.bins or tv.terms) and set(
            _names(tv)) <= ok and one and all(
            c[2] is None for c in tv.columns) and not any(
            n[0] == "cmp" and formula.coordinate(n[3]) for n in formula.walk(tv.tests)):
        columns = tuple((c[0], vector, None) for c in tv.columns)
        return Access(replace(tv, order=1, format=vector, columns=columns), (q,))
    return None

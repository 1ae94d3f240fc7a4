"""Sums of products over one structure: the terms of a value predicate (expr.shared).

An Add whose products each read columns of one structure S (value columns of
one table, value predicates over them) times dense tensors and numbers is, at
each of S's stored entries, the ⊕ of each product's value there: the union of
the products' walks is S's walk itself (proofs_notes/shared.md, "Terms").
`expr.shared` makes it one walk of S; this module finds such sums.

    member(f)                 (input names, key) of an access that may be read
                              over a structure (key: its indices and format)
    once(fs)                  factors fs, each repeat of a plain access left out
    products(f, most)         f's addends as lists of factors, every product of
                              sums multiplied out; None past `most` products
    common(products, key, cls, classes)
                              the factors every product holds, and the rest
    by_others(products, key, cls, classes)
                              the products grouped by their factors of other
                              structures
    terms(f, key, cls, classes, bins, most, alone)
                              the products of f as terms over the structure of
                              `key` and class `cls`, or None
    members_by_key(f, most)   {key: [input names...]} of the members in f's products
    added(products)           their sum as an expression
"""
from __future__ import annotations

import collections

from . import formula
from .compare import CompareVar
from .nodes import Access, Add, Expr, Lit, Mul, TensorVar
from .walk import spine


def member(f: Expr):
    """(input names, key) of a factor that may join a group, else None."""
    if not isinstance(f, Access):
        return None
    tv = f.tensor
    if tv.format.is_dense:
        return None
    if type(tv) is TensorVar:
        return (tv.name,), (f.indices, tv.format)
    if isinstance(tv, CompareVar) and tv.kind == "value" and not (tv.bins or tv.terms) and all(
            fmt == tv.format for _, fmt, at in tv.columns if at is None):
        return tuple(c[0] for c in tv.columns if c[2] is None), (f.indices, tv.format)
    if isinstance(tv, CompareVar) and tv.kind == "bins" and not tv.columns[0][1].is_dense:
        return (tv.source,), (f.indices[:-1], tv.columns[0][1])     # its bins index apart
    return None


def once(fs: list) -> list:
    """fs with each repeat of a plain tensor's access left out: a power of one
    access (A[i,j]·A[i,j]) is one walk as written (streams.from_expr reads it
    once and maps its value), not a structure two factors share."""
    return [fs[k] for k in once_at(fs)]


def once_at(fs: list) -> list[int]:
    """The places in fs of the factors `once` keeps (by place: one factor object may
    stand at two places)."""
    seen, out = set(), []
    for k, f in enumerate(fs):
        if isinstance(f, Access) and type(f.tensor) is TensorVar:
            if f in seen:
                continue
            seen.add(f)
        out.append(k)
    return out


def products(f: Expr, most: int) -> list | None:
    """The addends of f (an Add or any other expression: one addend) as lists of
    factors, with each factor that is a sum multiplied out (a·(b + c) = a·b + a·c,
    distributivity, in every semiring); None when there would be more than
    `most` of them."""
    match f:
        case Add():
            out = []
            for t in spine(f, Add):
                got = products(t, most)
                if got is None or len(out) + len(got) > most:
                    return None
                out += got
            return out
        case Mul():
            out = [[]]
            for g in spine(f, Mul):
                got = products(g, most)
                if got is None or len(out) * len(got) > most:
                    return None
                out = [a + b for a in out for b in got]
            return out
    return [[f]]


def _in_term(g: Access) -> bool:
    """May member g be read in a term? A plain column, or a value predicate whose
    tests read no coordinate and whose columns are not read in a keyed order."""
    tv = g.tensor
    if type(tv) is TensorVar:
        return True
    return tv.kind == "value" and not tv.keyed and not any(
        n[0] == "cmp" and formula.coordinate(n[3]) for n in formula.walk(tv.tests))


def pin(g):
    """(i, c) when factor g is `ep.eq(i, c)`, c an integer written in the
    expression (a range whose tests are i <= c and i >= c), else None: in a
    term over an index below the structure, it fixes i to c (`terms`)."""
    if not (isinstance(g, Access) and isinstance(g.tensor, CompareVar)
            and g.tensor.kind == "range"):
        return None
    tests = g.tensor.tests
    if sorted(op for op, _ in tests) != ["<=", ">="] or len({b for _, b in tests}) != 1:
        return None
    b = tests[0][1]
    if isinstance(b, (str, bool)) or not float(b).is_integer():
        return None
    return g.indices[0], int(b)


def _dense(g) -> bool:
    return isinstance(g, Access) and type(g.tensor) is TensorVar and \
        g.tensor.format.is_dense and not g.tensor.iso and \
        len(set(g.indices)) == len(g.indices)


def common(prods: list, key, cls, classes: dict) -> tuple:
    """(the factors that every product of `prods` holds, one of each taken from
    every product, the products left), or ((), prods) when there are none; not
    numbers, dense tensors or members over the structure (`key`, class `cls`),
    which terms read, nor a product's last factor."""
    shared, rest = [], [list(fs) for fs in prods]
    for g in prods[0]:
        if _read(g, key, cls, classes):
            continue
        if not all(g in fs for fs in rest) or any(len(fs) == 1 for fs in rest):
            continue
        shared.append(g)
        for fs in rest:
            fs.remove(g)
    return (tuple(shared), rest) if shared else ((), prods)


def _read(g, key, cls, classes: dict) -> bool:
    """Is factor g one a term reads (a number, a dense tensor, a member over the
    structure of `key` and class `cls`)?"""
    m = member(g)
    if (p := pin(g)) is not None and p[0] not in key[0]:
        return True
    return isinstance(g, Lit) or _dense(g) or (m is not None and m[1] == key and {
        classes.get(n) for n in m[0]} == {cls})


def by_others(prods: list, key, cls, classes: dict) -> list:
    """prods grouped by the factors each holds that a term does not read (of
    other structures), as many of each; groups in order of first appearance."""
    out: dict = {}
    for fs in prods:
        others = collections.Counter(g for g in fs if not _read(g, key, cls, classes))
        out.setdefault(frozenset(others.items()), []).append(fs)
    return list(out.values())


def terms(f, key, cls, classes: dict, bins: set, most: int, alone: bool = False):
    """((members, dense, numbers, pins), ...) when `f` is an Add (or a list of
    products) each of whose products (`products`) is members over the structure (`key`, every input name mapped
    by `classes` to `cls`), dense tensors at indices of the structure or at
    other indices (none in `bins`), numbers and pins (`pin`: ep.eq(i, c), i one
    of those other indices, which some product's dense tensor reads, so that
    its size is known; the term is zero off i = c) (a product without some of the
    other indices is the same at each of their coordinates, as an addend of a
    sum is); else None. `alone` (f is not multiplied by another factor over
    the structure): every product must hold a member, or it would not vanish
    off the structure's entries. None over a structure whose last level takes
    no level below, when the dense tensors add indices."""
    if isinstance(f, list):
        prods = f
    elif isinstance(f, Add):
        prods = products(f, most)
    else:
        return None
    if prods is None:
        return None
    out, extra, pinned = [], None, set()
    for fs in prods:
        members, dense, numbers, pins = [], [], [], []
        for g in fs:
            m = member(g)
            if (p := pin(g)) is not None and p[0] not in key[0] and p[0] not in bins:
                pins.append(p)
                pinned.add(p[0])
            elif isinstance(g, Lit):
                numbers.append(g.value)
            elif m is not None and m[1] == key and (
                    type(g.tensor) is TensorVar or g.tensor.kind == "value"):
                if {classes.get(n) for n in m[0]} != {cls} or not _in_term(g):
                    return None
                members.append(g)
            elif _dense(g) and not set(g.indices) & bins:
                dense.append(g)
            else:
                return None
        if alone and not members:
            return None
        extra = (extra or set()) | {i for g in dense for i in g.indices if i not in key[0]}
        out.append((tuple(members), tuple(dense), tuple(numbers), tuple(pins)))
    if extra and not key[1].takes_levels_below or pinned - (extra or set()):
        return None
    return tuple(out) if out else None


def members_by_key(f: Expr, most: int) -> dict:
    """{key: [names, ...]}: the members (`member`) of f's products, by key."""
    out: dict = {}
    for fs in products(f, most) or ():
        for g in fs:
            m = member(g)
            if m is not None:
                out.setdefault(m[1], []).append(m[0])
    return out


def added(prods: list) -> Expr:
    """The sum of the products `prods` (lists of factors), as written."""
    out = None
    for fs in prods:
        prod = fs[0]
        for f in fs[1:]:
            prod = Mul(prod, f)
        out = prod if out is None else Add(out, prod)
    return out

"""Walks over expressions: their subexpressions, accesses, tensors and
product spines, and the one rebuild of a node from its operands."""
from __future__ import annotations

import functools
import struct
from typing import Iterator

from ..errors import ExpressionTypeError
from .nodes import Access, Add, Expr, Lit, Map, Mul, Sum, TensorVar


def subexprs(e: Expr) -> Iterator[Expr]:
    """e and every expression inside it, outermost first, left to right."""
    yield e
    match e:
        case Mul(a, b) | Add(a, b):
            yield from subexprs(a)
            yield from subexprs(b)
        case Sum(_, body) | Map(_, body, _):
            yield from subexprs(body)


def map_operands(e: Expr, f) -> Expr:
    """e rebuilt with f applied to each operand, left to right: a product's or
    a sum's two, a map's one, a Σ's body (its index kept); an access or a
    literal as it is."""
    match e:
        case Mul(a, b):
            return Mul(f(a), f(b))
        case Add(a, b):
            return Add(f(a), f(b))
        case Map(fn, a, arg):
            return Map(fn, f(a), arg)
        case Sum(ix, body):
            return Sum(ix, f(body))
    return e


def sum_chain(e: Expr) -> tuple[tuple, Expr]:
    """The indices of e's chain of Σ, outermost first, and the body under them
    (`(), e` when e is no Σ)."""
    idx = []
    while isinstance(e, Sum):
        idx.append(e.index)
        e = e.body
    return tuple(idx), e


def accesses(e: Expr) -> Iterator[Access]:
    """Every tensor access in `e`, left to right."""
    return (x for x in subexprs(e) if isinstance(x, Access))


def spine(e: Expr, cls):
    """The operands of a nest of `cls` nodes (Mul or Add), left to right: a·(b·c) → a, b, c."""
    if isinstance(e, cls):
        yield from spine(e.a, cls)
        yield from spine(e.b, cls)
    else:
        yield e


def tensors(e: Expr) -> dict[str, TensorVar]:
    """The tensor variables of `e` by name; one name must mean one declaration.
    A value comparison's companions (expr.compare: the implicit inputs it reads
    besides its structure) are among them."""
    out: dict[str, TensorVar] = {}
    for t in (x for acc in accesses(e) for x in (acc.tensor,
                                                  *getattr(acc.tensor, "companions", ()))):
        if out.setdefault(t.name, t) != t:
            raise ExpressionTypeError(f"tensor name {t.name} is declared twice with "
                                      f"different order or format: {out[t.name]!r} and {t!r}")
    return out


def uses_negation(e: Expr) -> bool:
    return any(isinstance(x, Lit) and x.negation for x in subexprs(e))


def literal_bits(e: Expr) -> tuple:
    """The bit patterns of e's float literals and map arguments, in order: what
    Expr equality misses (Lit(0.0) == Lit(-0.0), yet 1/x differs), for caches
    keyed by an expression."""
    vals, todo = [], [e]            # (subexprs' order, without its generators:
    while todo:                     # compile keys each expression by this per call)
        x = todo.pop()
        if isinstance(x, (Mul, Add)):
            todo += (x.b, x.a)
        elif isinstance(x, Sum):
            todo.append(x.body)
        elif isinstance(x, Map):
            if x.arg is not None:
                vals.append(x.arg)
            todo.append(x.a)
        elif isinstance(x, Lit):
            vals.append(x.value)
    return tuple([float_bits(v) for v in vals])


def float_bits(v):
    """A float as its bit pattern (0.0 and -0.0 differ, every NaN of one pattern is
    one value); anything else as it is."""
    return struct.pack("<d", v) if isinstance(v, float) else v


@functools.lru_cache(maxsize=256)       # the written expression, against each rewrite
def size_classes(e: Expr) -> frozenset:
    """The (tensor name, mode) pairs of `e` that must agree in size, as a set of
    groups: two modes are in one group when one index reaches both, a Σ's bound
    index being its own index (two Σ_j of one name range apart)."""
    parent: dict = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def walk(x: Expr, scope: dict) -> None:
        match x:
            case Access(t, idx):
                for m, ix in enumerate(idx):
                    parent[find((t.name, m))] = find(("index", scope.get(ix.name, ix.name)))
            case Mul(a, b) | Add(a, b):
                walk(a, scope)
                walk(b, scope)
            case Sum(ix, body):
                walk(body, {**scope, ix.name: (ix.name, id(x))})
            case Map(_, body, _):
                walk(body, scope)
    walk(e, {})
    groups: dict = {}
    for key in list(parent):
        if key[0] != "index":
            groups.setdefault(find(key), set()).add(key)
    return frozenset(frozenset(g) for g in groups.values())


def keeps_sizes(rewrite: Expr, written: Expr) -> bool:
    """Does `rewrite` ask no two modes to agree in size that `written` lets differ
    (each of its size groups inside one of `written`'s)?"""
    mine = size_classes(written)
    return all(any(g <= w for w in mine) for g in size_classes(rewrite))

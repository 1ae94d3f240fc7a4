"""Estimated work of loop nests and plans under the stream model (Etch §8).

A loop nest over order (v1, ..., vn) visits, at depth k, one record per point of
the body's support projected onto {v1..vk}. Every visit costs one unit, every
innermost record also pays one unit per operation of the body, and a dense
temporary pays `tuning.temp_weight` units per element (it is allocated, zeroed,
written and read back, usually from memory rather than registers or cache).

Support sizes are estimates from `Stats`: an index has a size (default
`tuning.default_dim`) and a tensor a nonzero count (default: full for dense
formats, a share `tuning.sparse_density` of it for sparse ones).
A sparse tensor with N nonzeros projected onto a subset W of its indices has
about min(|W|, N) points; a product is driven by its sparsest factor (streams
iterate the sparse side and locate into the other), a sum reads all operands.

    Stats(dims, nnz, origin, tuning)  sizes; origin maps renamed indices to user
                                  names; tuning (etchpy.tuning) gives the guesses
    support(e, S, stats)          estimated records of Σ-free e over index set S
    nest_cost(body, order, stats) work of one loop nest
    plan_cost(plan, stats)        work of a whole plan (steps, temporaries and the
                                  conversions it plans, priced when planned)
"""
from __future__ import annotations

import math

from .. import maps
from ..expr.nodes import Access, Add, Expr, Lit, Map, Mul
from ..tuning import DEFAULT, Tuning


def base_name(name: str) -> str:
    """The user's index behind a bound index the optimizer renamed: i__r2 -> i."""
    head, sep, tail = name.rpartition("__r")
    return head if sep and head and tail.isdigit() else name


class Stats:
    """Known index sizes (`dims`, by index name or Index) and nonzero counts (`nnz`,
    by tensor name); what is not known is guessed from `tuning` (default_dim,
    sparse_density), which also weighs temporaries (temp_weight)."""

    def __init__(self, dims=None, nnz=None, origin=None, tuning: Tuning = DEFAULT):
        self.dims = {getattr(k, "name", k): float(v) for k, v in (dims or {}).items()}
        self.nnz = {getattr(k, "name", k): float(v) for k, v in (nnz or {}).items()}
        self.origin = dict(origin or {})
        self.tuning = tuning

    def with_origin(self, origin) -> "Stats":
        s = Stats(tuning=self.tuning)
        s.dims, s.nnz, s.origin = self.dims, self.nnz, dict(origin)
        return s

    def dim(self, name: str) -> float:
        name = self.origin.get(name, name)
        return self.dims.get(name, self.dims.get(base_name(name), self.tuning.default_dim))

    def full(self, names) -> float:
        return math.prod(self.dim(v) for v in names)

    def tensor_nnz(self, acc: Access) -> float:
        names = [ix.name for ix in acc.indices]
        full = self.full(names)
        name = getattr(acc.tensor, "converted_from", acc.tensor.name)   # a converted copy
        if name in self.nnz:                                              # holds its source's
            return min(full, self.nnz[name])
        return full if acc.tensor.format.is_dense else max(1.0, self.tuning.sparse_density * full)


def support(e: Expr, space: frozenset, stats: Stats, independent=False) -> float:
    """Estimated number of points of e's support projected onto (and broadcast over)
    space. `independent`: a product's factors are taken as independent, so its
    support is also at most the product of their shares of the space (what the
    conversion search prices with: plan.convert)."""
    match e:
        case Access():
            mine = {ix.name for ix in e.indices}
            if e.tensor.format.is_dense:
                return stats.full(space)
            seen = mine & space
            return min(stats.full(seen), stats.tensor_nnz(e)) * stats.full(space - mine)
        case Lit():
            return stats.full(space)
        case Mul(a, b):
            sa, sb = support(a, space, stats, independent), support(b, space, stats, independent)
            if independent:
                return min(sa, sb, sa * sb / max(stats.full(space), 1.0))
            return min(sa, sb)
        case Add(a, b):
            return min(stats.full(space), support(a, space, stats, independent)
                       + support(b, space, stats, independent))
        case Map(fn, a, arg):      # f(0) ≠ 0: the whole dense domain
            return (support(a, space, stats, independent) if maps.keeps_zero(fn, arg)
                    else stats.full(space))
    raise TypeError(f"the cost model takes Σ-free bodies, got {e!r}")


def operations(e: Expr) -> int:
    match e:
        case Mul(a, b) | Add(a, b):
            return 1 + operations(a) + operations(b)
        case Map(_, a, _):
            return 1 + operations(a)
    return 0


def nest_cost(body: Expr, order, stats: Stats, independent=False) -> float:
    """Visits of every loop level plus the body's operations at the innermost level."""
    total, seen = 0.0, frozenset()
    for v in order:
        seen = seen | {v}
        total += support(body, seen, stats, independent)
    inner = support(body, seen, stats, independent) if order else 1.0
    return total + inner * operations(body)


def plan_cost(plan, stats: Stats | None = None) -> float:
    """Work of a plan: every step's loop nest plus the size of every dense temporary."""
    stats = (stats or Stats()).with_origin(plan.origin)
    total = 0.0
    for step in plan.steps:
        total += nest_cost(step.body, step.order, stats)
        if step.target in plan.temps:
            total += stats.tuning.temp_weight * stats.full(step.out)
    return total + sum(c.cost for c in getattr(plan, "conversions", ()))

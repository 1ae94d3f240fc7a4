"""Temporaries laid out for their reader (under `tuning.access_order`).

A step that makes a dense temporary writes it in the order of its own loops
(plan.plan), which that step chose before its reader existed. The reader may
walk the temporary's axes in another order, and then reads it against its
storage order: a strided inner loop, and no BLAS call where the step would
otherwise be a GEMM (lower.schedule.blas wants every index group in the same
order in each operand). `for_readers` lays each temporary out in the order its
first reader loops over its axes, when the maker has a legal loop order that
writes that layout (its free indices in that relative order) at no more than
`tuning.layout_slack` times the work of its own choice; every access to the temporary is
permuted alike. The values are the same in every semiring: a temporary's
layout is a permutation of its axes, and each reader names the same cell.
"""
from __future__ import annotations

from dataclasses import replace

from .cost import nest_cost
from .orders import legal_orders
from ..expr.nodes import Access, Add, Expr, Map, Mul, Sum
from ..expr.walk import accesses



def for_readers(plan, stats, keep_out=False):
    """The plan with each temporary laid out for its first reader where possible;
    where not, the reader's loop order is chosen again for the layout the temporary
    has (`keep_out`: the output's step keeps its order, a sparse output's)."""
    steps = list(plan.steps)
    for n, maker in enumerate(steps):
        if maker.target not in plan.temps:
            continue
        reads = [(m, a) for m, s in enumerate(steps[n + 1:], n + 1)
                 for a in accesses(s.body) if a.tensor.name == maker.target]
        if not reads:
            continue
        m, acc = reads[0]
        perm = _perm(acc, steps[m].order)
        if perm == tuple(range(len(perm))):
            continue
        made = _maker_for(maker, tuple(maker.out[a] for a in perm), stats)
        if made is not None:
            steps[n] = made
            _permute_reads(steps, n, perm)
        elif not (keep_out and steps[m].target == "out"):
            _reorder(steps, m, plan, stats)
    return replace(plan, steps=tuple(steps))


def _perm(acc, order) -> tuple:
    """The temporary's axes (positions in `acc`) in the order a loop nest walks them."""
    where = [order.index(ix.name) if ix.name in order else -1 for ix in acc.indices]
    return tuple(sorted(range(len(where)), key=lambda a: where[a]))


def _permute_reads(steps, n, perm) -> None:
    """Every access after step n to its temporary takes its indices in `perm` order."""
    for k in range(n + 1, len(steps)):
        steps[k] = replace(steps[k], body=_permuted(steps[k].body, steps[n].target, perm))


def _reorder(steps, m, plan, stats) -> None:
    """Step m in its cheapest legal loop order for the layouts its operands have; a
    temporary it makes follows its new loop order (its readers' accesses too)."""
    step = steps[m]
    variables = step.out + step.bound
    base = nest_cost(step.body, step.order, stats, out=step.out)
    cands = [(nest_cost(step.body, o, stats, out=step.out), o)
             for o in legal_orders(step.body, variables, 240)]
    cost, order = min(cands, default=(base, step.order))
    if cost >= 0.9 * base:
        return
    if step.target not in plan.temps:
        steps[m] = replace(step, order=order)
        return
    out = tuple(v for v in order if v in step.out)
    perm = tuple(step.out.index(v) for v in out)
    steps[m] = replace(step, out=out, order=order)
    _permute_reads(steps, m, perm)


def _maker_for(maker, out, stats):
    """The maker step writing layout `out`, or None when that costs too much."""
    base = nest_cost(maker.body, maker.order, stats, out=maker.out)
    variables = maker.out + maker.bound
    fits = [o for o in legal_orders(maker.body, variables, 240)
            if tuple(v for v in o if v in out) == out]
    if not fits:
        return None
    cost, order = min((nest_cost(maker.body, o, stats, out=out), o) for o in fits)
    if cost > stats.tuning.layout_slack * base:
        return None
    return replace(maker, out=out, order=order)


def _permuted(e: Expr, name: str, perm: tuple) -> Expr:
    """e with every access to `name` taking its indices in the order `perm`."""
    match e:
        case Access(t, idx) if t.name == name:
            return Access(t, tuple(idx[a] for a in perm))
        case Mul(a, b) | Add(a, b):
            return type(e)(_permuted(a, name, perm), _permuted(b, name, perm))
        case Map(fn, a, arg):
            return Map(fn, _permuted(a, name, perm), arg)
        case Sum(i, body):
            return Sum(i, _permuted(body, name, perm))
    return e

"""Chains of fused temporaries ended where their readers run cheaper as BLAS.

A chain (plan.fusion) runs each reader of a temporary inside its sparse
driver's loops, over a workspace, so the temporary is never laid out whole; a
reader of a dense temporary and a dense input is then a loop nest at every
point of the driver, even where, run whole after the driver, it would be a
matrix product (or a batch of them: plan.dense.blas_roles) that BLAS computes
several times faster than the loops.

`cut(plan, sr, stats)` prices, for each chain, every place it could end (before
each of its links, or nowhere): the plan laid out for BLAS (plan.layout.for_blas),
each step that then runs as BLAS calls priced at its loops' work over
`tuning.blas_gain` plus `tuning.blas_call` a call (as plan.dense prices a GEMM),
every other step and temporary as plan.cost.plan_cost prices it. The cheapest
ending is kept in Plan.cut: the temporaries whose link no chain takes (a chain
ends at its first such link: a step after it reads a dense temporary, and only a
sparse driver starts a chain). A cut changes which steps run where, not what any
step computes (proofs_notes/fusion.md, "A chain ended early").
"""
from __future__ import annotations

from dataclasses import replace

from . import dense, fusion, layout
from .cost import nest_cost, plan_cost


def cut(plan, sr, stats, dense_out: bool = True):
    """`plan` with Plan.cut set to the cheapest ending of each chain (module
    docstring); `dense_out`: whether the output is dense (BLAS writes no sparse
    target). Unchanged when `tuning.blas_cut`, `tuning.blas`,
    `tuning.access_order` or `tuning.fused_temporaries` is off, or `sr` has no BLAS.

        >>> import etchpy as ep
        >>> from etchpy.plan.plan import make_plan
        >>> from etchpy.plan.cost import Stats
        >>> i, j, k, a, b, c = ep.indices("i j k a b c")
        >>> X, (U, V, W) = ep.tensor("X", 3, "csf"), (ep.tensor(m, 2) for m in "UVW")
        >>> e = ep.sum(i, U[i, a] * ep.sum(j, V[j, b] * ep.sum(k, X[i, j, k] * W[k, c])))
        >>> plan = make_plan(e, (c, b, a), keep_factored=True)
        >>> [s.target for s in plan.steps]
        ['tmp', 'tmp_1', 'out']
        >>> sizes = {"i": 30, "j": 30, "k": 30, "a": 16, "b": 16, "c": 16}
        >>> cut(plan, ep.semirings.real, Stats(sizes, {"X": 3000})).cut
        frozenset({'tmp'})
    """
    return _settled(plan, sr, stats, dense_out)[0]


def gain(plan, sr, stats, dense_out: bool = True) -> float:
    """How much less `cut` prices `plan` than as its chains stand (≥ 0): what
    plan.nesting subtracts from a nesting's price, so that the nestings and
    rewrites are compared as they will run.

        >>> import etchpy as ep
        >>> from etchpy.plan.plan import make_plan
        >>> from etchpy.plan.cost import Stats
        >>> i, j = ep.indices("i j")
        >>> A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
        >>> gain(make_plan(ep.sum(j, A[i, j] * x[j])), ep.semirings.real, Stats())
        0.0
    """
    return _settled(plan, sr, stats, dense_out)[1]


def _settled(plan, sr, stats, dense_out):
    """(`plan` with its chains ended where cheapest, the price that saves)."""
    tuning = stats.tuning
    if not (tuning.blas_cut and tuning.blas and tuning.access_order
            and tuning.fused_temporaries and dense.has_blas(sr)) or not plan.temps:
        return plan, 0.0
    stats = stats.with_origin(plan.origin)
    chains = fusion.chains(plan)
    if not chains:
        return plan, 0.0
    start = price = _priced(plan, sr, stats, dense_out)
    best = plan
    for chain in chains:
        base = best
        for link in chain.links:
            trial = replace(base, cut=base.cut | {link.temp})
            cost = _priced(trial, sr, stats, dense_out)
            if cost < price:
                best, price = trial, cost
    return best, start - price


def _priced(plan, sr, stats, dense_out) -> float:
    """plan_cost of `plan` laid out for BLAS, each step that runs as BLAS calls
    priced as such."""
    laid = layout.for_blas(plan, sr, stats)
    tuning, total = stats.tuning, plan_cost(laid, stats)
    chained = fusion.chained_steps(laid, tuning)
    for n, step in enumerate(laid.steps):
        calls = None if n in chained or (step.target == "out" and not dense_out) else \
            _blas_calls(step, stats)
        if calls is not None:
            loops = nest_cost(step.body, step.order, stats, out=step.out)
            total += loops / tuning.blas_gain + calls * tuning.blas_call - loops
    return total


def _blas_calls(step, stats) -> float | None:
    """How many BLAS calls run `step` in its layouts (a batch point each), or
    None when it is no GEMM (plan.dense.blas_roles)."""
    pair = dense.pair_axes(step.body)
    if pair is None:
        return None
    roles = dense.blas_roles(*pair[1], step.out, step.bound, stats.tuning.blas_broadcast)
    return None if roles is None else stats.full(roles[3])

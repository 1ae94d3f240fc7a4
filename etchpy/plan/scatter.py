"""Scatters: a loop nest with a loop that walks stored coordinates and writes a
dense temporary at each of them, no sum inside that loop (`tmp[j] ⊕= x[i]·A[i,j]`
over a csr A, order (i, j); or a row at each: `tmp[i,k,b] ⊕= Σ_j X[i,j,k]·V[j,b]`,
order (i, j, k, b)). Each record then reads and writes cells at a position found
in the data, where a walk that sums its innermost index (`acc ⊕= A[i,j]·y[j]`) keeps
its running value in a register. plan.cost prices such a record
`tuning.scatter_weight` above a visited one, so that of two nestings of equal
work the one that reads the stored order without a scatter is planned.

    holds_every(e, v)    whether e's level of v holds every coordinate
    walks_sparse(e, v)   whether a loop over v finds e's points by walking
                         stored coordinates (None: e does not hold v)
    scatters(step)       whether a step writes at walked positions with no sum
                         inside (the innermost loop, or rows of dense loops)
"""
from __future__ import annotations

from ..expr.nodes import Access, Add, Expr, Mul


def holds_every(e: Access, v: str) -> bool:
    """Whether the level of e's tensor that stores index v (one of e's) holds every
    coordinate (a dense tensor, or a located level), so a loop over v finds e's
    points without walking stored coordinates."""
    fmt = e.tensor.format
    names = [ix.name for ix in e.indices]
    return fmt.is_dense or fmt.levels[fmt.mode_order.index(names.index(v))].located


def walks_sparse(e: Expr, v: str) -> bool | None:
    """Whether a loop over `v` finds e's points by walking stored coordinates (a
    level that is not located), as plan.cost.fanout steps them: a product walks
    when any factor does (the others are looked up), a sum only when every
    operand does (one that holds every position makes the loop dense); None
    when e does not hold v."""
    match e:
        case Access():
            return None if v not in [ix.name for ix in e.indices] else not holds_every(e, v)
        case Mul(a, b):
            wa, wb = walks_sparse(a, v), walks_sparse(b, v)
            return wb if wa is None else wa if wb is None else (wa or wb)
        case Add(a, b):
            wa, wb = walks_sparse(a, v), walks_sparse(b, v)
            return bool(wa and wb)
    return None


def scatters(step) -> bool:
    """Whether `step` (a plan.plan.Step) writes its target at positions a loop
    finds by walking stored coordinates with no sum inside it: that loop's index
    is one of the target's axes, and so is every index looped inside it (a row
    written at each record: `tmp[i,k,b] ⊕= Σ_j X[i,j,k]·V[j,b]`, order
    (i, j, k, b), over a csf X, where summing the innermost stored index instead
    keeps the row in registers)."""
    for n in range(len(step.order) - 1, -1, -1):
        v = step.order[n]
        if v not in step.out:
            return False
        if walks_sparse(step.body, v):
            return True
    return False

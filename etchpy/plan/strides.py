"""How a loop order moves through a dense operand's memory, for plan.cost's
access-order terms (`Tuning.access_order`): reads against the storage order at
the innermost loop (`strided`), an innermost loop of dense reads only
(`dense_inner`), and runs read with their outer axes out of storage order
(`out_of_order`)."""
from __future__ import annotations

from ..expr.nodes import Expr
from ..expr.walk import accesses


def dense_inner(body: Expr, inner: str) -> bool:
    """Does a loop over `inner` read only dense operands (it locates, no sparse walk)?

    >>> import etchpy as ep
    >>> i, j = ep.indices("i j")
    >>> A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "dense")
    >>> dense_inner(A[i, j] * x[j], "j"), dense_inner(x[j] * x[j], "j")
    (False, True)
    """
    held = [a for a in accesses(body) if any(ix.name == inner for ix in a.indices)]
    return bool(held) and all(a.tensor.format.is_dense for a in held)


def _dense_names(body: Expr, loose) -> list:
    """(index names, storage order) of every dense operand not in `loose`."""
    return [([ix.name for ix in acc.indices], acc.tensor.format.mode_order)
            for acc in accesses(body)
            if acc.tensor.format.is_dense and acc.tensor.name not in loose]


def strided(body: Expr, inner: str, loose=frozenset()) -> int:
    """Dense operands (tensors and temporaries, not in `loose`) that a loop over
    `inner`, innermost, reads against their storage order: they hold `inner` but
    not as their last stored axis, so consecutive records are far apart in memory.

    >>> import etchpy as ep
    >>> i, j = ep.indices("i j")
    >>> A = ep.tensor("A", 2, "dense")
    >>> strided(A[i, j], "i"), strided(A[i, j], "j")
    (1, 0)
    """
    return sum(1 for names, modes in _dense_names(body, loose)
               if inner in names and names[modes[-1]] != inner)


def out_of_order(body: Expr, order, stats, loose=frozenset()) -> int:
    """Dense operands (not in `loose`) of more than `tuning.cache_cells` cells read
    along their last stored axis innermost but whose other axes `order` visits out
    of storage order (an axis not in `order` is looped outside it): every run along
    the last axis starts far from the one before, so the operand is not streamed
    from memory in order.

    >>> import etchpy as ep
    >>> from etchpy.plan.stats import Stats
    >>> i, j, k = ep.indices("i j k")
    >>> A = ep.tensor("A", 3, "dense")
    >>> sizes = Stats(dims={"i": 100, "j": 100, "k": 100})
    >>> out_of_order(A[i, j, k], ("j", "i", "k"), sizes), out_of_order(A[i, j, k], "ijk", sizes)
    (1, 0)
    """
    n = 0
    rank = {v: p for p, v in enumerate(order)}
    for names, modes in _dense_names(body, loose):
        stored = [names[m] for m in modes]
        if (len(stored) > 1 and stored[-1] == order[-1]
                and sorted(stored, key=lambda v: rank.get(v, -1)) != stored
                and stats.full(stored) > stats.tuning.cache_cells):
            n += 1
    return n

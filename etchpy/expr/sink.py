"""Dependent levels read last: a located table's trailing one-child levels placed
below the loops that test rows (`Tuning.sink_located`).

A table's dependent columns (an order's customer, date and priority under its
key) are stored as levels with one child per parent position. When a query
reaches such a table by locating its key under another table's walk (Q12 reads
the orders of lineitem's lines in receipt-date order: at random), each of those
levels, placed above the other table's remaining loops, is read for every entry
there, whether or not that entry's tests pass. Placed last, it is read only
under the entries that pass (streams.hoist guards the loops below a failing
test). The sum is the same (proofs_notes/hoist.md, "Dependent levels read
last"): the moved indices are read by that one access alone (and by a dense
output), so no other factor's loops depend on them, and the access's own
levels are still walked in its storage order (a suffix of them moves, in order).

    sunk(expr, order, out_indices, dense_out)   the fixed loop order `order` with
                                                those levels moved to its end
"""
from __future__ import annotations

from .nodes import Add, Expr, Map
from .walk import accesses, subexprs


def sunk(expr: Expr, order: tuple | None, out_indices, dense_out: bool) -> tuple | None:
    """`order` with, for each access located under another's walk, the longest
    suffix of its trailing one-child levels whose indices no other access reads
    (nor a sparse output) moved to the end, when some loop of another access
    lies below them; `order` itself when there is none (or no fixed order, or
    the expression holds a sum of terms or a map)."""
    if order is None or any(isinstance(x, (Add, Map)) for x in subexprs(expr)):
        return order
    found = list(accesses(expr))
    readers: dict[str, int] = {}
    for a in found:
        for name in {ix.name for ix in a.indices}:
            readers[name] = readers.get(name, 0) + 1
    outs = set() if dense_out else {getattr(v, "name", v) for v in out_indices or ()}
    for a in found:
        run = _run(a, order, readers, outs)
        if run:
            order = tuple(v for v in order if v not in run) + run
    return order


def _run(a, order: tuple, readers: dict, outs: set) -> tuple:
    """The indices of `a`'s levels to move (storage order), or ()."""
    fmt = a.tensor.format
    if fmt.is_dense or any(v.name not in order for v in a.indices):
        return ()
    names = [a.indices[m].name for m in fmt.mode_order]
    k = len(names)
    while k > 1 and getattr(fmt.levels[k - 1], "one_per_parent", False) \
            and readers[names[k - 1]] == 1 and names[k - 1] not in outs:
        k -= 1
    run = tuple(names[k:])
    if not run or order.index(names[0]) == 0:       # walked, not located: stays
        return ()
    at = min(order.index(v) for v in run)
    below = [v for v in order[at:] if v not in run]
    return run if below else ()

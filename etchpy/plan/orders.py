"""Loop orders of one loop nest: those that walk every sparse access in its
storage order (`legal_orders`), the heuristic one (`choose_order`), and the
cheapest under the cost model (`cheapest_order`)."""
from __future__ import annotations

from .cost import nest_cost
from ..errors import OrderError
from ..expr.nodes import Expr
from ..expr.walk import accesses


def storage_constraints(body: Expr) -> list[tuple[str, tuple[str, ...]]]:
    """(tensor name, index names in storage order) for every access that constrains order."""
    out = []
    for acc in accesses(body):
        fmt = acc.tensor.format
        if fmt.is_dense:
            continue
        names = [ix.name for ix in acc.indices]
        out.append((acc.tensor.name, tuple(names[m] for m in fmt.mode_order)))
    return out



def choose_order(body: Expr, variables: tuple[str, ...], origin: dict,
                 user_order=None) -> tuple[str, ...]:
    """A loop order that walks every sparse access in storage order.

    Without a user order, indices are taken as early as the constraints allow,
    preferring indices that walk a sparse level (so that each sparse input is
    traversed once and dense-only indices such as MTTKRP's rank run innermost),
    then free before contracted ones, then the order of appearance.
    """
    cons = storage_constraints(body)
    if user_order is not None:
        rank = {o: k for k, o in enumerate(user_order)}
        missing = sorted({origin.get(v, v) for v in variables} - set(rank))
        if missing:
            raise OrderError(f"order {tuple(user_order)} does not list index "
                             f"{', '.join(missing)}")
        order = tuple(sorted(variables, key=lambda v: (rank[origin.get(v, v)], v)))
        for tname, st in cons:
            pos = [order.index(v) for v in st]
            if pos != sorted(pos):
                wanted = ", ".join(sorted(st, key=order.index))
                raise OrderError(f"order {tuple(user_order)} walks {tname} against its "
                                 f"storage order ({', '.join(st)}); it would read {tname} "
                                 f"in the order ({wanted}): convert {tname} to it (a "
                                 f"table's secondary order) or choose another order")
        return order
    preds = {v: set() for v in variables}
    for _, st in cons:
        for a, b in zip(st, st[1:]):
            preds[b].add(a)
    sparse = {v for _, st in cons for v in st}
    order, left = [], list(variables)
    while left:
        ready = [v for v in left if not preds[v] - set(order)]
        if not ready:
            raise OrderError(_cycle_message(cons, left))
        best = min(ready, key=lambda v: (v not in sparse, variables.index(v)))
        order.append(best)
        left.remove(best)
    return tuple(order)


def cheapest_order(body: Expr, variables: tuple[str, ...], default: tuple[str, ...],
                   stats, limit: int = 120, loose=frozenset(), out=None) -> tuple[str, ...]:
    """The legal order of least estimated work; `default` unless another is >10% cheaper
    (`loose`: operands whose layout is not chosen yet; `out`: the target's axes;
    cost.nest_cost)."""
    key = ("order", stats.origin_key, body, variables, default, limit, loose, out)
    if key not in stats.nests:
        stats.nests[key] = _cheapest(body, variables, default, stats, limit, loose, out)
    return stats.nests[key]


def _cheapest(body, variables, default, stats, limit, loose, out):
    base = nest_cost(body, default, stats, loose=loose, out=out)
    priced = [(nest_cost(body, cand, stats, loose=loose, out=out), cand)
              for cand in legal_orders(body, variables, limit)]
    best_cost, best = min(priced, default=(base, default))
    return best if best_cost < 0.9 * base else default


def _cycle_message(cons, left) -> str:
    involved = [f"{t}({', '.join(st)})" for t, st in cons if set(st) & set(left)]
    return ("no loop order walks every sparse input in its storage order: "
            + "; ".join(involved)
            + ". Convert one of these inputs to a format with another mode order "
              "(e.g. csr <-> csc) or to dense.")


def legal_orders(body: Expr, variables: tuple[str, ...], limit: int = 50):
    """Up to `limit` loop orders consistent with the storage orders in body."""
    cons = storage_constraints(body)
    preds = {v: set() for v in variables}
    for _, st in cons:
        for a, b in zip(st, st[1:]):
            preds[b].add(a)
    out: list[tuple[str, ...]] = []

    def go(prefix, left):
        if len(out) >= limit:
            return
        if not left:
            out.append(tuple(prefix))
            return
        for v in left:
            if not preds[v] - set(prefix):
                go(prefix + [v], [w for w in left if w != v])

    go([], list(variables))
    return out

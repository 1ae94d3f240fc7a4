"""Which of a table's stored orders a compiled query reads it in, and which order
it would want when none fits: `Table.explain(kernel)`.

A query reads a table in the order of the variable it was written with
(`T.var(value, order=...)`). Compiled without `order=`, the planner may read
that input converted to another order when its cost model prices that cheaper
(or when no loop order walks every input in storage order: plan/convert.py).
The converted structure is kept on the input (runtime.planned); a stored order
of the table is made at load as that same structure (`store_structure`), so a
conversion to it finds its index arrays made, and its values gathered at the
last call, checked against the table's (gathered again when written): the
planner prices it as that check, so among the stored orders it reads the one
its cost model prices least (Stats.stored). A
conversion to an order the table does not store is what the query would
want: `add_order(order)` keeps it, for a query that names it.

    lines(table, kernel, name)   the explain lines for input `name` of `kernel`
"""
from __future__ import annotations

from ..expr.walk import accesses
from ..runtime.planned import has_structure


def lines(table, kernel, name: str) -> list[str]:
    """For each format `kernel` declares input `name` in, the table's order it
    reads (as declared, or the planner's conversion of it; the planned plan of
    the kernel's last call, else its plan before any call)."""
    declared = list(dict.fromkeys(a.tensor.format for a in accesses(kernel.request.expr)
                                  if a.tensor.name == name))
    if not declared:
        return [f"  the query reads no input named {name!r}"]
    out = []
    for fmt in declared:
        order = _order_of(table, fmt)
        convs = [c for c in getattr(kernel.plan, "conversions", ())
                 if c.source == name and c.source_format == fmt]
        if not convs:
            out.append(f"  the query reads {name} in the {_what(table, order)} {order}")
        for c in convs:
            want = _order_of(table, c.format)
            if want in table.orders:
                made = has_structure(table.relation(None).tensor, c.format)
                out.append(f"  the planner reads {name} in the {_what(table, want)} {want} "
                           f"(declared {order}): " + (
                               "its structure is made, the values checked on each call "
                               "and gathered again when written" if made else
                               "converted once in the stored order's level kinds, then "
                               "kept"))
            else:
                out.append(f"  the planner reads {name} converted to {want}, an order the "
                           f"table does not store (declared {order}): add_order("
                           f"{list(want)}) would store it for a query that names it")
    return out


def _order_of(table, fmt) -> tuple:
    """The order of the table's columns that format `fmt` stores."""
    if fmt.order == len(table.order):
        return tuple(table.order[m] for m in fmt.mode_order)
    for order in table.orders:            # a value-keyed order: one more mode
        if len(order) == fmt.order and table._format(order).mode_order == fmt.mode_order:
            return order
    return tuple(f"mode {m}" for m in fmt.mode_order)


def _what(table, order) -> str:
    if order == table.order:
        return "storage order"
    if order == table.secondary:
        return "secondary order"
    if order in table._keyed:
        return "order keyed by a value"
    return "order added" if order in table.orders else "order"

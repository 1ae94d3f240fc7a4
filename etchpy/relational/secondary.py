"""A table's secondary order: given at load, or chosen from its queries' demand.

`ep.table(..., secondary=order)` stores one other order of the key columns at
load (`stored_order`: the planner's conversion of the storage structure, kept,
each level with one child per parent position a singleton). A query compiled
without `order=` may read the table in an order it does not store: the planner
converts the column it reads (plan.convert, priced) and the runtime counts
every call of a compiled kernel that pays that conversion on the column's
Tensor (runtime.planned.wanted_formats). That count is the table's demand:

    wanted(t)                      order -> conversions paid to it (the orders the
                                   table does not store), most paid first
    keep(t, least, replace)        the order paid for most (at least `least`
                                   times) stored as the table's one secondary
                                   order; one given at load is replaced only
                                   when `replace`
    stored_order(t, order, first)  (format, levels, where, missing) of `order`

A kept order is stored as `secondary=` stores one: the planner prices a read
of it as the check of its values (one read per row) rather than a conversion,
and a write of the values in the storage order is seen (the copy compared and
gathered again), as for every stored order. The order a replaced secondary
order leaves is dropped: `var`/`tensor` refuse it (InputError naming the
orders stored), and a planned read of it is a conversion again.
"""
from __future__ import annotations

from .table import dense_span
from ..errors import InputError
from ..formats import Format, singleton
from ..runtime.planned import store_structure, unstore_structure, wanted_formats
from ..runtime.tensor import Tensor


def wanted(t) -> dict:
    """order -> the calls that read a column of table `t` converted to it, for
    each order of all its key columns that `t` does not store, most first
    (ties: the order first converted to first)."""
    counts: dict = {}
    for r in t._relations.values():
        for fmt, n in wanted_formats(r.tensor).items():
            if fmt.order != len(t.order):
                continue
            order = tuple(t.order[m] for m in fmt.mode_order)
            if order not in t.orders:
                counts[order] = counts.get(order, 0) + n
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def keep(t, least: int = 1, replace: bool = False):
    """Store the order of `wanted(t)` paid for most, if at least `least` times,
    as `t`'s secondary order (module docstring); returns the secondary order
    then (None when there is none). A secondary order already stored stays,
    unless `replace`."""
    if isinstance(least, bool) or not isinstance(least, int) or least < 1:
        raise InputError(f"table {t.name!r}: keep_wanted_order(least=...) is a count of "
                         f"calls, an int >= 1, got {least!r}")
    counts = wanted(t)
    best = next(iter(counts), None)
    if best is None or counts[best] < least or (t.secondary is not None and not replace):
        return t.secondary
    if t.secondary is not None:
        _drop(t, t.secondary)
    t._orders[best] = stored_order(t, best, t._relations[None].tensor)
    t.secondary = best
    for v in sorted(t._relations, key=lambda v: v is not None):     # None first
        t._copies[best, v] = t._copy(best, v)
    return best


def _drop(t, order: tuple) -> None:
    """`order` no longer stored by `t`: its structure, copies and stored marks."""
    first = t._relations[None].tensor
    fmt = format_of(t, order, first)
    del t._orders[order]
    for key in [k for k in t._copies if k[0] == order]:
        del t._copies[key]
    for r in t._relations.values():
        unstore_structure(r.tensor, fmt)


def lines(t) -> list[str]:
    """explain()'s lines for the orders the table's queries were converted to."""
    return [f"  wanted, not stored {order}: converted in {n} call{'s' * (n != 1)} "
            f"(keep_wanted_order() would store it as the secondary order)"
            for order, n in wanted(t).items()]


def stored_order(t, order: tuple, stored: Tensor) -> tuple:
    """(format, levels, where, missing) of `order`: the planner's conversion of
    the storage structure (converted_structure), each level whose every parent
    position has one child there a singleton level (singleton.dependent: a key
    that depends on the keys above, as a line's date under its order and line)."""
    fmt = format_of(t, order, stored)
    levels, where, missing = store_structure(stored, fmt)
    for r in t._relations.values():     # what a planned conversion of a column to it finds
        store_structure(r.tensor, fmt, like=stored)
    kinds, levels = singleton.dependent(fmt.levels, levels)
    return Format(kinds, mode_order=fmt.mode_order), tuple(levels), where, missing


def format_of(t, order: tuple, stored: Tensor) -> Format:
    """The secondary order's format: the storage order's level kinds, compressed
    first when the first key's domain spans more codes a row than a dense first
    level of the storage order may (table.dense_span)."""
    kinds = singleton.independent(stored.format.levels)
    first = t.keys[t.order.index(order[0])]
    if kinds[0].located and len(first) > dense_span(len(kinds)) * max(stored.nnz, 1):
        kinds[0] = "compressed"
    return Format(kinds, mode_order=tuple(t.order.index(k) for k in order))

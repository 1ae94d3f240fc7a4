"""A table's order keyed by a value column: its rows sorted by the value, then
by key columns (lineitem by receipt date, then order and line).

A value column is tested in the kernel's loop at every stored row; when a
query keeps the rows whose value lies in a range (a year of receipt dates),
that walk reads every row to keep a few. An order whose first level is the
value's distinct values (coded as a Keys: codes keep the order of the values)
makes the range one range of codes of that level: `ep.between(v, lo, hi)` on
it searches to `lo` and stops at `hi` (a skip, not a scan), and only the rows
in the range are read below it. The order is a tensor of one more mode than
the table's keys: the value's code, then the key columns in storage order.

    build(table, order)   (format, levels, where, missing, Keys, values it was
                          built from) of `order` = (value column, key columns...)

Values are writable in place (docs/api.md): the order's structure depends on
the value column, so the Table keeps the values it was built from and builds
the order again when they differ (relational.stored, `Table._current`).
"""
from __future__ import annotations

import numpy as np

from .keys import Keys
from .table import dense_span
from ..errors import InputError
from ..formats import Format, singleton
from ..runtime.tensor import Tensor


def build(t, order: tuple, before: Format | None = None) -> tuple:
    """The value-keyed order `order` of Table `t` (module docstring): its format
    (the value's level dense when its distinct values are at most
    `dense_span` a row, else compressed; the key columns' levels compressed,
    each level whose every parent position has one child a singleton), its
    index arrays, for each of its positions the storage position whose values
    it holds (`where`), None (no position without a row), the value's Keys,
    and a copy of the values it was built from. `before`, the format of an
    earlier build: a level it did not store as a singleton stays compressed
    (the queries compiled for it read the new build as they are)."""
    column, keys = order[0], tuple(order[1:])
    check(t, order)
    stored = t.relation(None).tensor
    values = t.relation(column).tensor._vals
    levels_order = tuple(t.order[m] for m in stored.format.mode_order)
    head = _head(stored) if keys == levels_order else stored.format.order
    part = stored if head == stored.format.order else _first_levels(stored, head)
    coords, counts = part.to_coords()
    rows = np.flatnonzero(counts != stored.fill)       # stored positions holding a row
    if values.dtype.kind in "fc" and np.isnan(values[rows]).any():
        raise InputError(f"table {t.name!r}: value column {column!r} holds NaN, which "
                         f"no order sorts; the order {order} cannot be made")
    vkeys, vcodes = Keys.coded(_integral(values[rows]), name=column)
    narrow = vcodes.astype(np.int16) if len(vkeys) <= 2 ** 15 else vcodes   # a radix sort
    first_by_value = np.argsort(narrow, kind="stable")  # then storage order: sorted,
    rows, vcodes = rows[first_by_value], vcodes[first_by_value]      # not sorted again
    shape = (len(vkeys), *part.shape)
    first = "dense" if len(vkeys) <= dense_span(len(shape)) * max(len(rows), 1) \
        else "compressed"
    modes = (0, *(1 + t.order.index(k) for k in keys)) if part is stored \
        else tuple(range(head + 1))
    fmt = Format([first] + ["compressed"] * (len(shape) - 1), mode_order=modes)
    at = np.concatenate([vcodes[None, :], coords.take(rows, axis=1)])
    [pos] = Tensor.from_coords_columns(at, [rows.astype(np.float64) + 1.0], shape, fmt,
                                       name=t.name)
    kinds, levels = singleton.dependent(fmt.levels, pos.levels)
    whole = modes if part is stored else (0, *(1 + m for m in stored.format.mode_order))
    if before is not None and before.mode_order == whole:
        kept = [k for k, kind in enumerate(kinds) if kind != before.levels[k]
                and before.levels[k] == fmt.levels[k]]
        for k in kept:
            kinds[k], levels[k] = fmt.levels[k], pos.levels[k]
    where = pos.vals.astype(np.int64) - 1
    if part is not stored:               # the singleton levels below, gathered
        kinds += list(stored.format.levels[head:])
        levels += [{"crd": stored.levels[k]["crd"][where]}
                   for k in range(head, stored.format.order)]
    return (Format(kinds, mode_order=whole), tuple(levels), where, None, vkeys,
            values.copy())


def _head(stored: Tensor) -> int:
    """The storage levels above the singleton levels at its bottom (a key that
    depends on the keys above: a line's part, dates and mode under its order and
    line): only these are sorted and packed; those below are gathered."""
    head = stored.format.order
    while head > 1 and isinstance(stored.format.levels[head - 1], singleton.Singleton) \
            and stored.format.levels[head - 2].unique:
        head -= 1
    return head


def _first_levels(stored: Tensor, head: int) -> Tensor:
    """`stored`'s first `head` storage levels as a tensor of its own (modes in
    storage order), holding the row counts: each of its last level's positions
    is one stored position (the levels below are singletons)."""
    fmt = stored.format
    shape = tuple(stored.shape[m] for m in fmt.mode_order[:head])
    return Tensor._of((shape, Format(list(fmt.levels[:head])), stored.levels[:head],
                       stored.vals, stored.fill), stored.name)


def _integral(values: np.ndarray) -> np.ndarray:
    """`values` as int64 when they are whole numbers (days, counts: coded by their
    span, no sort, and compared as the numbers they are), else as given."""
    if values.dtype.kind == "f" and len(values) and np.abs(values).max() < 2.0 ** 53 \
            and np.array_equal(values, np.floor(values)):
        return values.astype(np.int64)
    return values


def check(t, order: tuple) -> None:
    """InputError unless `order` is a value column of Table `t` then its key
    columns, once each."""
    if not order or order[0] not in t.values or sorted(order[1:]) != sorted(t.order):
        raise InputError(f"table {t.name!r}: a value-keyed order is a value column (one "
                         f"of {list(t.values)}) then the key columns {t.order} once "
                         f"each, not {order}")

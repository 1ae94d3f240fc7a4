"""Value columns added to a table loaded once: `Table.add_values` (relational.stored).

The new columns come with the key columns of the rows they belong to (the
mapping the table was loaded from, or any mapping of the same rows, in any
order). The rows are coded by the table's own Keys and stored as at load
(duplicates of a key tuple combined by the table's semiring), and the result
must be the table's structure: the same key tuples, each with the same number
of rows (else an InputError naming the table and the column). Each new column
then lies over the storage-order trie's own index arrays, one structure with
the other columns (comparisons between them aligned by identity, runtime.shared
walks them once), and the other stored orders take it as they take the
others (a copy gathered at its first read in that order).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..formats import singleton
from ..runtime.planned import store_structure
from ..runtime.tensor import Tensor
from .table import Relation, relation


def add_values(t, columns: Mapping[str, object], values: Sequence[str] | str) -> tuple:
    """Table `t` with the value columns `values` of `columns` added (see the
    module docstring); returns the table's value columns."""
    names = [values] if isinstance(values, str) else list(values)
    if not names or None in names or len(set(names)) != len(names):
        raise InputError(f"table {t.name!r}: add_values takes value column names, once "
                         f"each, got {values!r}")
    for v in names:
        if v in t.values or v in t.order:
            raise InputError(f"table {t.name!r} already has a column {v!r}")
    first = t.relation(None).tensor
    kinds = singleton.independent(list(first.format.levels))
    try:
        built = relation(columns, list(t.order), values=[None, *names],
                         coding=dict(zip(t.order, t.keys)), levels=kinds,
                         semiring=getattr(t, "semiring", None), name=t.name)
    except InputError as e:
        raise InputError(f"table {t.name!r}: add_values {names}: {e}") from None
    built = _as_stored(built, first)
    if built is None:
        raise InputError(f"table {t.name!r}: the rows given with {names} are not the rows "
                         f"it was loaded from (other key tuples, or another number of "
                         f"rows per key tuple); give the key columns {list(t.order)} of "
                         f"the rows it holds")
    for v in names:
        col = built[v].tensor
        tensor = Tensor._of((first.shape, first.format, first.levels, col.vals, col.fill),
                            t.name)
        t._relations[v] = Relation(tensor, t.order, t.keys, v)
        for order, (fmt, *_) in t._orders.items():
            if order not in t._keyed:           # as relational.secondary.stored_order
                store_structure(tensor, fmt, like=first)
    t.values = (*t.values, *names)
    return t.values


def _as_stored(built: dict, first: Tensor) -> dict | None:
    """`built` (relations over one structure) in `first`'s format, if its entries
    and row counts are first's; else None."""
    t = built[None].tensor
    if t.format != first.format:
        kinds, levels = singleton.dependent(t.format.levels, t.levels)
        fmt = type(first.format)(kinds, mode_order=t.format.mode_order)
        if fmt != first.format:
            return None
        built = {v: Relation(Tensor._of((t.shape, fmt, tuple(levels), r.tensor.vals,
                                         r.tensor.fill), t.name), r.columns, r.keys, r.value)
                 for v, r in built.items()}
        t = built[None].tensor
    same = len(t.vals) == len(first.vals) and all(
        lv.keys() == fl.keys() and all(np.array_equal(lv[k], fl[k]) for k in lv)
        for lv, fl in zip(t.levels, first.levels))
    return built if same and np.array_equal(t.vals, first.vals) else None

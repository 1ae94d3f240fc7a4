"""SQL's rows of a grouped SUM, given the groups' counts (ep.decode's `count`).

A kernel's sum over no rows is the semiring's zero, and ep.decode keeps the
cells whose value is not its fill: a group whose rows sum to 0 is dropped, and
a sum with no GROUP BY over no rows is 0, where SQL gives the group with SUM 0
and NULL. With COUNT(*) per cell beside the sum (another output of the same
kernel, or a kernel of its own over the same keys), `entries` keeps the cells
that have rows, each with the sum's value there (its fill where the result
stores none), and gives NaN for the value of a result of no keys over no rows.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def entries(result, count, order: int, fill, entries_of) -> tuple:
    """(coords, values) of `result` at the cells where `count` (of result's
    shape) is not 0; `entries_of(x, order, fill)` lists an array's, a scipy
    array's or a Tensor's entries (relational.table._entries)."""
    shape, counts = _shape(result), _shape(count)
    if shape != counts:
        raise InputError(f"decode: count has shape {counts}, the result {shape}; give "
                         f"COUNT(*) of the result's cells (the same keys)")
    if order == 0:
        n, v = np.asarray(count).item(), np.asarray(result).item()
        return np.zeros((0, 1), np.int64), np.array([v if n else np.nan])
    have, _ = entries_of(count, order, 0)
    coords, vals = entries_of(result, order, fill)
    at = np.ravel_multi_index(tuple(have), shape) if have.size else np.zeros(0, np.int64)
    stored = np.ravel_multi_index(tuple(coords), shape) if coords.size else at[:0]
    sort = np.argsort(stored, kind="stable")
    k = np.searchsorted(stored[sort], at)
    found = k < len(stored)
    found[found] = stored[sort][k[found]] == at[found]
    out = np.full(len(at), fill, dtype=np.result_type(vals.dtype, np.asarray(fill).dtype))
    out[found] = vals[sort][k[found]]
    return have, out


def _shape(x) -> tuple:
    s = getattr(x, "shape", None)
    return tuple(np.shape(x) if s is None else s)

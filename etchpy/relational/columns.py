"""Key columns of mixed dtypes, brought together without changing a value.

numpy promotes int64 with uint64 to float64 (so 2**53 and 2**53 + 1 become one
key) and a number with a string to a string; a coding must never merge two
keys or match a key it does not hold through such a promotion. Here:

    joined       the columns of Keys.of in one dtype that holds every value
                 exactly (int64 with uint64: int64 when no value passes 2**63-1,
                 uint64 when none is negative), else an InputError naming the
                 dtypes
    as_probe     values to code, in the integer kind (signed or not) of the
                 coding, with a mask of those that kind cannot hold (no code)
    range_codes  (codes, present) under a range coding, in exact integers
    occurring    which values of an integer span occur in a column (a scatter,
                 no sort), and lookup_from the code of each from it
    distinct_ranks  the sorted distinct values of a column and each row's rank
                 among them, at the cost of a search per row among the
                 distinct values (not a sort of the rows) when they are few
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

INT64_MAX = int(np.iinfo(np.int64).max)
_FAMILY = {"b": "number", "i": "number", "u": "number", "f": "number"}


def joined(cols: list[np.ndarray], name: str) -> np.ndarray:
    """The concatenation of the 1-d `cols`, in a dtype that holds each value
    exactly (empty columns do not choose it); InputError naming the dtypes when
    none does (keys that would be merged or turned into strings)."""
    full = [c for c in cols if len(c)] or cols
    if not full:
        return np.array([], dtype=np.int64)
    shown = ", ".join(sorted({str(c.dtype) for c in full}))
    if len({_FAMILY.get(c.dtype.kind, c.dtype.kind) for c in full}) > 1:
        raise InputError(f"keys {name!r}: key columns of dtypes {shown} cannot be coded "
                         f"together; give columns of one kind (numbers, strings or dates)")
    common = _integer_dtype(full, name, shown) or np.result_type(*[c.dtype for c in full])
    out = []
    for c in full:
        cast = c.astype(common)
        if c.dtype != common and not np.array_equal(cast.astype(c.dtype), c,
                                                    equal_nan=c.dtype.kind == "f"):
            raise InputError(f"keys {name!r}: a key column of dtype {c.dtype} changes value "
                             f"in {common}, the common dtype of the columns ({shown}), so "
                             f"distinct keys would be merged; cast the columns to one "
                             f"dtype that holds them all")
        out.append(cast)
    return np.concatenate(out)


def _integer_dtype(cols, name, shown) -> np.dtype | None:
    """int64 or uint64 for signed and unsigned integer columns that numpy would
    promote to float64 (None otherwise)."""
    kinds = {c.dtype.kind for c in cols}
    if kinds != {"i", "u"} or np.result_type(*[c.dtype for c in cols]).kind != "f":
        return None
    if all(c.dtype.kind == "i" or not len(c) or int(c.max()) <= INT64_MAX for c in cols):
        return np.dtype(np.int64)
    if all(c.dtype.kind == "u" or not len(c) or int(c.min()) >= 0 for c in cols):
        return np.dtype(np.uint64)
    raise InputError(f"keys {name!r}: key columns of dtypes {shown} hold negative values "
                     f"and values past 2**63-1, which no integer dtype holds together")


def as_probe(values: np.ndarray, dtype: np.dtype):
    """(values, fits): integer `values` in the integer kind of the coding's
    `dtype` when the kinds differ (uint64 for unsigned keys, int64 for signed
    ones), fits False where that kind cannot hold the value (it has no code);
    fits None when nothing was converted."""
    if values.dtype.kind not in "iu" or dtype.kind not in "iu" or \
            values.dtype.kind == dtype.kind:
        return values, None
    if dtype.kind == "u":
        fits = values >= 0
        return np.where(fits, values, 0).astype(np.uint64), fits
    fits = values <= np.uint64(INT64_MAX)
    return np.where(fits, values, 0).astype(np.int64), fits


def range_codes(values: np.ndarray, low: int, size: int):
    """(codes int64, present) of `values` under the range coding low..low+size-1,
    compared and subtracted in exact integers (uint64 keys past 2**63 too)."""
    none = (np.zeros(len(values), dtype=np.int64), np.zeros(len(values), dtype=bool))
    high = low + size - 1
    if values.dtype.kind not in "iu" or size == 0 or high < 0 and values.dtype.kind == "u":
        return none
    if values.dtype.kind == "u":
        v, first = values.astype(np.uint64), np.uint64(max(low, 0))
        present = (v >= first) & (v <= np.uint64(high))
        if low >= 0:
            return np.where(present, v - first, 0).astype(np.int64), present
        return np.where(present, v, 0).astype(np.int64) - low, present   # high < 2**63
    if low > INT64_MAX:
        return none
    v = values.astype(np.int64)
    present = (v >= low) & (v <= min(high, INT64_MAX))
    return np.where(present, v, low) - low, present


def distinct_ranks(values: np.ndarray, sample: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """(the sorted distinct values of the 1-d `values`, each value's rank among
    them, int64): the distinct values of a sample of about `sample` rows, every
    row searched among them (a binary search over the few distinct values: a
    string column of a handful of values is coded without sorting its rows),
    and those the sample missed added. When the sample's values are mostly
    distinct, one np.unique of all rows instead.

        >>> distinct_ranks(np.array(["b", "a", "b"]))
        (array(['a', 'b'], dtype='<U1'), array([1, 0, 1]))
    """
    n = len(values)
    some = values[::max(1, n // sample)]
    table = np.unique(some)
    if n <= 2 * sample or 2 * len(table) > len(some):
        table, ranks = np.unique(values, return_inverse=True)
        return table, ranks.reshape(-1).astype(np.int64)
    ranks = np.minimum(np.searchsorted(table, values), len(table) - 1)
    missed = table[ranks] != values
    if missed.any():
        table = np.union1d(table, values[missed])
        ranks = np.searchsorted(table, values)
    return table, ranks.astype(np.int64)


def occurring(values: np.ndarray, low: int, span: int) -> np.ndarray | None:
    """A bool per value low..low+span-1 of the integer `values` (min `low`, span
    `span`): whether it occurs, by one scatter (O(rows + span), no sort); None
    when the span is more than 16 a row (plus 4096) or passes int64."""
    if span > 16 * len(values) + 4096 or low + span - 1 > INT64_MAX:
        return None
    seen = np.zeros(span, dtype=bool)
    seen[values.astype(np.int64) - low] = True
    return seen


def lookup_from(seen: np.ndarray) -> np.ndarray:
    """The code (rank among the values that occur) of each value of a span given
    by `occurring`, -1 for one that does not occur: value - low -> code."""
    small = np.count_nonzero(seen) < 2**31
    lookup = np.cumsum(seen, dtype=np.int32 if small else np.int64) - 1
    lookup[~seen] = -1
    return lookup

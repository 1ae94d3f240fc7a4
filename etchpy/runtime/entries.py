"""Sorting and combining coordinate lists: the shared first half of every build.

A build sorts a tensor's entries lexicographically by storage coordinates and
merges runs of equal coordinates. Both steps depend only on the coordinates,
so `sort_order` and `group_starts` return a permutation and the group starts,
and several value columns over the same coordinates (a relation with several
value columns) pay for the sort once.
"""
from __future__ import annotations

import math

import numpy as np

from .checks import sort_entries


def lexicographic_steps(storage):
    """Sign of the lexicographic step between consecutive columns (-1, 0 or 1)."""
    n = storage.shape[1]
    if storage.shape[0] == 0 or n < 2:
        return np.zeros(max(n - 1, 0), dtype=np.int64)
    step = np.sign(np.diff(storage, axis=1))
    first = (step != 0).argmax(axis=0)
    return step[first, np.arange(n - 1)]


def sort_order(storage):
    """The stable permutation that sorts the columns of `storage` (order, nnz)
    lexicographically, or None when they are sorted already. When the rows do
    not fit one int64 key together, the longest prefix of rows that does
    decides the order whenever it repeats no key (a table's primary key): its
    check and its sort cost one int64 pass, not one per row."""
    if storage.shape[0] == 0 or storage.shape[1] < 2:
        return None
    dims = [int(d) + 1 for d in storage.max(axis=1)]
    key, whole = prefix_key(storage, dims)
    if whole:
        if np.all(key[1:] >= key[:-1]):
            return None
        perm = counted_order(storage, key, dims)
        return stable_argsort(key) if perm is None else perm
    if np.all(key[1:] > key[:-1]):
        return None                  # the prefix orders every column, with no ties
    perm = stable_argsort(key)
    ordered = key[perm]
    if np.all(ordered[1:] > ordered[:-1]):
        return perm                  # a prefix that repeats no key decides the order
    if np.all(lexicographic_steps(storage) >= 0):
        return None
    return np.lexsort(storage[::-1])


def counted_order(storage, key, dims):
    """The stable order of `key` (prefix_key's over every row of `storage`, whose
    rows' bounds are `dims`) by a compiled counting sort on the first row, then a
    sort of each run of one first coordinate by the rest of the key
    (checks.sort_entries): O(entries + the first row's bound) and short sorts,
    where a sort of the whole key is
    O(entries log entries). None where the first row's bound is above 4 times
    the entries (its counts, 8 bytes each, would outweigh the entries), a
    coordinate is negative (the compiled sort indexes its counts by them), or no
    compiler is available.

        >>> counted_order(np.array([[1, 0, 1], [5, 9, 2]]), np.array([15, 9, 12]), [2, 10])
        array([1, 2, 0])
    """
    first, m = storage[0].astype(np.int64, copy=False), dims[0]
    if m > 4 * storage.shape[1] or int(first.min()) < 0:
        return None
    stride = math.prod(dims[1:])
    return sort_entries(first, key - first * stride, m)


def sort_storage(storage, values):
    """Entries sorted lexicographically by storage coordinates (stable)."""
    perm = sort_order(storage)
    if perm is None:
        return storage, values
    # take, not storage[:, perm]: numpy's mixed slice/array indexing is much slower
    return storage.take(perm, axis=1), values[perm]


def prefix_key(storage, dims=None):
    """(the row-major linear index of each column over the longest prefix of rows
    whose index fits int64 below 2**62, whether that prefix is every row); `dims`,
    the rows' bounds (each row's maximum plus one), where the caller has them."""
    dims = [int(d) + 1 for d in storage.max(axis=1)] if dims is None else dims
    rows, size = 0, 1
    while rows < len(dims) and size * dims[rows] < 2**62:
        size *= dims[rows]
        rows += 1
    rows = max(rows, 1)
    if rows == 1:
        return storage[0].astype(np.int64), len(dims) == 1
    return np.ravel_multi_index(tuple(storage[:rows]), dims[:rows]), rows == len(dims)


def stable_argsort(key):
    """np.argsort(key, kind="stable") for a nonnegative int64 key. When key and
    position fit in one int64 together, they are packed and sorted with np.sort
    (ties fall in position order), which is several times faster than numpy's
    stable argsort of int64 (a timsort)."""
    n = len(key)
    shift = max(n - 1, 1).bit_length()
    if int(key.max()).bit_length() + shift > 62:
        return np.argsort(key, kind="stable")
    packed = (key << shift) | np.arange(n, dtype=np.int64)
    packed.sort()
    return packed & ((1 << shift) - 1)


def group_starts(storage):
    """Where each run of equal (sorted) coordinates starts, or None when every
    column is distinct."""
    n = storage.shape[1]
    if n == 0:
        return None
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(storage[:, 1:] != storage[:, :-1], axis=0)
    starts = np.flatnonzero(new)
    return None if len(starts) == n else starts


def combine(values, starts, add):
    """Fold each run of `values` beginning at `starts` with `add` (a ufunc or a
    binary function); `starts` None means nothing to combine."""
    if starts is None:
        return values
    if isinstance(add, np.ufunc):
        return add.reduceat(values, starts).astype(values.dtype, copy=False)
    out = values[starts].copy()
    ends = np.append(starts[1:], len(values))
    for g in np.flatnonzero(ends - starts > 1):
        acc = values[starts[g]]
        for v in values[starts[g] + 1:ends[g]]:
            acc = add(acc, v)
        out[g] = acc
    return out

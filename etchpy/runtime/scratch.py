"""Scratch arrays kept between calls of the C helpers (the graph algorithms'
workspaces), so that a call does not pay for fresh pages: a new numpy array of
megabytes comes from pages the system zeroes on first touch (`clear_page`),
a quarter of a large graph call when every workspace was new.

    with SCRATCH.arrays((n, np.float64), (n + 1, np.int32)) as (inv, queue):
        ...                 # their contents are whatever the last user left

An array taken is the caller's alone until the `with` block ends (then it is
given back, and kept when fewer than `LIMITS.scratch_arrays` are); never
return one to a user. Safe from several threads (a lock around each take and
give; two threads take different arrays).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from ..settings import LIMITS


class Scratch:
    """A store of at most `most` numpy arrays waiting to be used again; arrays
    of fewer than `least` bytes are made new at each take and never kept."""

    def __init__(self, most: int, least: int = 0):
        self.most, self.least = most, least
        self._kept: list[np.ndarray] = []
        self._lock = threading.Lock()

    def take(self, n: int, dtype) -> np.ndarray:
        """An array of n elements of dtype: a kept one of n to 2n elements (its
        first n), else a new one; contents unspecified."""
        dtype = np.dtype(dtype)
        if n * dtype.itemsize < self.least:
            return np.empty(n, dtype=dtype)
        with self._lock:                 # the smallest that fits, in one plain loop
            kept, best, size = self._kept, -1, 0
            for k in range(len(kept)):
                m = len(kept[k])
                if n <= m <= 2 * n + 64 and kept[k].dtype == dtype and (best < 0 or m < size):
                    best, size = k, m
            if best >= 0:
                a = kept.pop(best)
                return a if size == n else a[:n]
        return np.empty(n, dtype=dtype)

    def give(self, a: np.ndarray) -> None:
        """Keep a (an array from `take`, given back once), in place of the
        smallest kept one when the store is full and that one is smaller."""
        base = a if a.base is None else a.base
        if base.nbytes < self.least:
            return
        with self._lock:
            if len(self._kept) < self.most:
                self._kept.append(base)
                return
            small = min(range(len(self._kept)), key=lambda k: self._kept[k].nbytes)
            if self._kept[small].nbytes < base.nbytes:
                self._kept[small] = base

    @contextmanager
    def arrays(self, *shapes):
        """Arrays of (n, dtype) each, taken for the block and given back after."""
        got = [self.take(n, dtype) for n, dtype in shapes]
        try:
            yield got
        finally:
            for a in got:
                self.give(a)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


SCRATCH = Scratch(LIMITS.scratch_arrays, LIMITS.scratch_least)

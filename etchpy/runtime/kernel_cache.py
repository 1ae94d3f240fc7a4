"""The one in-process store of compiled kernels and loaded C helpers.

`ep.compile`, the graph algorithms and the C helpers (runtime.checks, the
graph fixpoints' frontier and rank code) keep what they made in `KERNELS`, each
under its own key: a tuple whose first item names the front end that made it
("compile", "graph.push", "helper", ...), so that no two front ends share an
entry by accident. A front end may work out a cheaper key into it; it keeps no
second store.

KERNELS keeps its entries per build environment (CC, CFLAGS and the cache directory as
`build.environment` reads them at lookup): a kernel made under other compiler
flags is another entry, as it is another build on disk.

The store is bounded: the `size` most recently used entries stay (LIMITS in
etchpy.settings). An entry evicted is made again on next need, from the disk
cache (runtime.cache) where it was built before; a caller holding a kernel
keeps it alive. Safe to use from several threads (one lock around each
lookup and update; `made` may make an entry twice under a race, and keeps
the first one stored).
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from ..settings import LIMITS
from .build import environment

_MISSING = object()


def _same(key):
    return key


def _per_build(key):
    return key, environment()


class KernelCache:
    """A mapping that keeps its `size` most recently used entries; with
    `per_build`, each under its key and the build environment (KERNELS: built
    code), else under its key alone (stores of things made from kernels, such
    as lazy programs' tapes, whose C lookup probes the dict with the bare key)."""

    def __init__(self, size: int, per_build: bool = False):
        if size < 1:
            raise ValueError(f"a kernel cache holds at least one entry, not {size}")
        self.size = size
        self._key = _per_build if per_build else _same
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.generation = 0     # counts clears and evictions: a front end's memo of one
                                # entry holds while it is unchanged (api.compile)

    def get(self, key, default=None):
        """The entry under `key` (now the most recently used), else `default`."""
        key = self._key(key)
        with self._lock:
            v = self._d.get(key, _MISSING)
            if v is _MISSING:
                return default
            self._d.move_to_end(key)
            return v

    def plain_get(self, key, default=None):
        """get without the lock, for keys whose hash and == run no Python code
        (tuples of ints, strings, bools, None, numpy dtypes): the probe and the
        move to the end are then each one step under the GIL."""
        key = self._key(key)
        v = self._d.get(key, _MISSING)
        if v is _MISSING:
            return default
        try:
            self._d.move_to_end(key)
        except KeyError:                # evicted in between by another thread
            pass
        return v

    def put(self, key, value) -> None:
        """Keep `value` under `key`, evicting the least recently used beyond size."""
        key = self._key(key)
        with self._lock:
            self._d[key] = value
            self._keep(key)

    def made(self, key, make):
        """The entry under `key`, made by `make()` and kept on first need."""
        v = self.get(key, _MISSING)
        if v is _MISSING:
            v, key = make(), self._key(key)
            with self._lock:
                v = self._d.setdefault(key, v)
                self._keep(key)
        return v

    def _keep(self, key) -> None:
        """`key` becomes the most recently used; the least recent beyond size go
        (the lock held)."""
        self._d.move_to_end(key)
        while len(self._d) > self.size:
            self._d.popitem(last=False)
            self.generation += 1

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.generation += 1

    def __len__(self) -> int:
        return len(self._d)


KERNELS = KernelCache(LIMITS.kernel_cache, per_build=True)


def kept(front: str):
    """A decorator: the function's result kept in KERNELS under (front, its
    arguments), made on first need (its arguments must hash). For makers of
    kernels and helpers whose key is their arguments. `f.plain(*args)` is
    f(*args) looked up without the store's lock (KernelCache.plain_get), for
    positional arguments whose hash and == run no Python code (str, int)."""
    def wrap(make):
        def get(*args, **kwargs):
            key = (front, args, tuple(sorted(kwargs.items())))
            return KERNELS.made(key, lambda: make(*args, **kwargs))

        def plain(*args):
            got = KERNELS.plain_get((front, args, ()), _MISSING)
            return get(*args) if got is _MISSING else got
        get.__doc__, get.__name__, get.__wrapped__ = make.__doc__, make.__name__, make
        get.plain = plain
        return get
    return wrap

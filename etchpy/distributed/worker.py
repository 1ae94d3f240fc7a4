"""What runs on a Dask worker: the shipped kernel, one block's run, a reduction step.

A `Shipped` kernel is what travels to the workers, once per signature: its
compile request and compiled program, and the C text for each index type the
blocks need (never a shared object: each worker builds the C, or loads it from
its own disk cache, ETCHPY_CACHE_DIR). Workers keep the kernels they made by
token, so later calls with the same signature find them in memory.
"""
from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, replace

from . import blocks
from ..runtime.kernel_cache import KERNELS
from ..errors import EtchpyError
from ..runtime.kernel import Kernel
from ..runtime.restored import materialized
from ..semiring import semirings

# kernels made on this worker, by Shipped.token; bounded (see _kernel)
# seconds spent inside kernels by this worker's block runs since last asked (kernel_times)
_TIMES: list[float] = []


@dataclass(frozen=True)
class Shipped:
    """A kernel as it travels: token (unique per kernel and signature), request,
    compiled program, {index type: (C text, cdef)}, and the semiring's built-in
    name (None for a semiring defined at run time, which travels pickled)."""

    token: str
    request: object
    compiled: object
    texts: dict
    semiring: str | None

    @classmethod
    def of(cls, kern, token: str, idx_types) -> "Shipped":
        """Kernel `kern` to ship, with the C text of each index type in `idx_types`."""
        texts = {t: (kern.source(t).c, kern.source(t).cdef) for t in idx_types}
        sr = kern.semiring
        name = sr.name if getattr(semirings, sr.name, None) is sr else None
        return cls(token, kern.request, replace(materialized(kern.compiled), optimized=None),
                   texts, name)


class _ShippedKernel(Kernel):
    """A Kernel set up from a Shipped one: no compiling, the C text given."""

    def __init__(self, shipped: Shipped):
        req, compiled = shipped.request, shipped.compiled
        if shipped.semiring is not None:       # the worker's own built-in object
            req = replace(req, semiring=getattr(semirings, shipped.semiring))
            compiled = replace(compiled, request=req)
        self._shipped = (compiled, shipped.texts)
        self._setup(req, per_signature=False)     # the plan shipped is the plan run

    def _restore(self):
        compiled, texts = self._shipped
        self._texts = dict(texts)
        return compiled


def _where() -> str:
    try:
        from dask.distributed import get_worker
        return f"worker {get_worker().address} (host {socket.gethostname()}, pid {os.getpid()})"
    except (ImportError, ValueError):
        return f"process {os.getpid()} on host {socket.gethostname()}"


def _kernel(shipped: Shipped) -> Kernel:
    """The shipped kernel, built on this worker on first need and kept in the one
    store of runtime.kernel_cache under its token."""
    kern = KERNELS.get(("shipped", shipped.token))
    if kern is None:
        kern = _ShippedKernel(shipped)
        try:
            for idx_type in shipped.texts:
                kern.library(idx_type)
        except Exception as e:   # noqa: BLE001 - any build failure, reported with its place
            raise EtchpyError(f"{_where()} could not build kernel {kern.name!r}: "
                              f"{type(e).__name__}: {e}") from e
        KERNELS.put(("shipped", shipped.token), kern)
    return kern


def run_block(shipped: Shipped, names, values, cuts, lo: int, hi: int):
    """The kernel on one block: `values` in the order of `names`, each cut to lo:hi
    along its modes in `cuts` (the partitioned blocks come already cut)."""
    kern = _kernel(shipped)
    inputs = {n: blocks.cut(blocks.unpack(v), cuts.get(n, ()), lo, hi) for n, v in zip(names, values)}
    start = time.perf_counter()
    result = kern(**inputs)
    _TIMES.append(time.perf_counter() - start)
    return blocks.pack(result)


def kernel_times() -> list[float]:
    """The seconds inside kernels of this worker's block runs since the last ask."""
    times = list(_TIMES)
    _TIMES.clear()
    return times

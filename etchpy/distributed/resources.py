"""What the workers can hold: their memory limits, checked before a block runs."""
from __future__ import annotations

from ..settings import LIMITS
from ..errors import InputError


def workers_of(client):
    """(sorted worker addresses, {address: memory limit in bytes, 0 for none})."""
    limits = client.run_on_scheduler(_limits)
    if not limits:
        raise InputError(f"the Dask cluster of {client} has no workers")
    return sorted(limits), limits


def _limits(dask_scheduler) -> dict:
    return {a: int(w.memory_limit or 0) for a, w in dask_scheduler.workers.items()}


def check_memory(what: str, need: dict, limits: dict, total: int | None = None):
    """Raise InputError, naming the sizes, when a block run needs more than
    LIMITS.dask_memory_share of a worker's memory limit or when the blocks (`total` bytes,
    default the sum of `need`) exceed all the workers' limits together; `need` maps
    block number to bytes, `limits` worker address to bytes (0: no limit)."""
    if not limits or not all(limits.values()):
        return
    limit = min(limits.values())
    worst = max(need, key=need.get)
    total = sum(need.values()) if total is None else total
    gb = 1e9
    if total > sum(limits.values()):
        raise InputError(
            f"{what}: the blocks take {total / gb:.2f} GB but the {len(limits)} worker(s) "
            f"have memory limits of {sum(limits.values()) / gb:.2f} GB together "
            f"({limit / gb:.2f} GB the smallest); add workers or memory")
    if need[worst] > LIMITS.dask_memory_share * limit:
        raise InputError(
            f"{what}: block {worst} needs {need[worst] / gb:.2f} GB but the workers' "
            f"memory limit is {limit / gb:.2f} GB (a block run may use "
            f"{LIMITS.dask_memory_share:.0%} of it, {LIMITS.dask_memory_share * limit / gb:.2f} GB); "
            f"cut it into more blocks or use workers with more memory")


def estimate(x, mode: int, bounds) -> dict:
    """{block: bytes} of `x` (numpy, scipy sparse or Tensor) cut at `bounds` along
    `mode`, before cutting: exact for dense arrays and for csr/csc cut along their
    compressed mode, else the share of the whole by the block's extent."""
    n = max(x.shape[mode], 1)
    if hasattr(x, "indptr") and getattr(x, "format", None) in ("csr", "csc") and \
            mode == ("csr", "csc").index(x.format):
        item = x.data.itemsize + x.indices.itemsize
        return {b: int((x.indptr[hi] - x.indptr[lo]) * item + (hi - lo + 1) * x.indptr.itemsize)
                for b, (lo, hi) in enumerate(bounds)}
    whole = _nbytes(x)
    return {b: whole * (hi - lo) // n for b, (lo, hi) in enumerate(bounds)}


def _nbytes(x) -> int:
    if hasattr(x, "levels"):                            # an ep.Tensor
        return int(x.vals.nbytes + sum(a.nbytes for lv in x.levels for a in lv.values()))
    if hasattr(x, "data") and hasattr(x, "nnz"):          # scipy sparse
        parts = ("data", "indices", "indptr", "row", "col")
        return int(sum(getattr(x, p).nbytes for p in parts if hasattr(x, p)))
    return int(getattr(x, "nbytes", 0))

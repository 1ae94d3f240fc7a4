"""What the workers can hold: their memory limits, checked before a block runs."""
from __future__ import annotations

from ..errors import InputError

# the share of a worker's memory limit one block run may use: Dask's default
# spilling target, above which a worker starts moving data to disk
MEMORY_SHARE = 0.6


def workers_of(client):
    """(sorted worker addresses, {address: memory limit in bytes, 0 for none})."""
    limits = client.run_on_scheduler(_limits)
    if not limits:
        raise InputError(f"the Dask cluster of {client} has no workers")
    return sorted(limits), limits


def _limits(dask_scheduler) -> dict:
    return {a: int(w.memory_limit or 0) for a, w in dask_scheduler.workers.items()}


def check_memory(what: str, need: dict, limits: dict):
    """Raise InputError when a block needs more than MEMORY_SHARE of a worker's
    memory limit; `need` maps block number to bytes, `limits` worker to bytes."""
    limit = min(limits.values())
    if not limit:
        return
    worst = max(need, key=need.get)
    if need[worst] > MEMORY_SHARE * limit:
        raise InputError(
            f"{what}: block {worst} needs {need[worst] / 1e9:.2f} GB but the workers' "
            f"memory limit is {limit / 1e9:.2f} GB (a block run may use "
            f"{MEMORY_SHARE:.0%} of it, {MEMORY_SHARE * limit / 1e9:.2f} GB); "
            f"cut it into more blocks or use workers with more memory")

"""What the workers can hold: their memory limits, checked before a block runs."""
from __future__ import annotations

from ..errors import InputError

# the share of a worker's memory limit one block run may use: Dask's default
# spilling target, above which a worker starts moving data to disk
MEMORY_SHARE = 0.6


def workers_of(client):
    """(sorted worker addresses, {address: memory limit in bytes, 0 for none})."""
    info = client.scheduler_info()["workers"]
    if not info:
        raise InputError("partition: the Dask cluster has no workers")
    return sorted(info), {a: int(w.get("memory_limit") or 0) for a, w in info.items()}


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

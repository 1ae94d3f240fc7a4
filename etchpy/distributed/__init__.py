"""Compiled kernels over a Dask cluster (optional: `pip install etchpy[dask]`).

    parts = ep.partition(A, mode=0, blocks=4, client=client)   # blocks on the workers
    y = kern(A=parts, x=v)             # the same kernel, run block by block there
    print(etchpy.distributed.explain(kern, A=parts, x=v))

Dask is imported only when one of these runs, never by `import etchpy`; a
kernel call without partitioned inputs does not touch this package. Guide:
docs/distributed.md.
"""
from .partition import Partitioned, partition
from .call import compute_seconds, explain

__all__ = ["Partitioned", "partition", "explain", "compute_seconds"]

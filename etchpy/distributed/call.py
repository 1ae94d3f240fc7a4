"""A kernel call with partitioned inputs, run on their Dask cluster.

    run(kern, inputs, out)      what Kernel.__call__ returns for such a call
    explain(kern, **inputs)     kern.explain() plus the distributed plan (or refusal)

One call: pick the semiring (as an ordinary call does), plan the split
(distributed.split), check each block run fits its worker's memory, ship the
kernel once per signature and worker (distributed.worker.Shipped), send the
other inputs once to each worker holding blocks, submit one task per block
there, then combine: gather and concatenate when the split index is free, else
a tree of the semiring's add on the workers. A block task whose data went down
with a worker is submitted again once the data is back: distributed.tasks.
"""
from __future__ import annotations

import numpy as np

from . import blocks
from . import split as split_
from .resources import check_memory
from .tasks import BlockRun
from .worker import kernel_times
from .. import pipeline
from ..errors import InputError
from ..expr.walk import subexprs
from ..runtime import inputs as io_


def _partitioned(inputs) -> dict:
    return {n: v for n, v in inputs.items() if hasattr(type(v), "etchpy_distributed_call")}


def _prepare(kern, inputs):
    """(kernel of the call's semiring, {name: Partitioned}, Split)."""
    if inputs.keys() != kern._users.keys():
        io_.check_names(kern._users, inputs)
    sr = kern._semiring_of(inputs)
    kern = kern if sr is kern.semiring else kern._variant(sr)
    parts = _partitioned(inputs)
    for name, p in parts.items():
        tv = kern.tensors[name]
        if p.ndim != tv.order:
            raise InputError(f"input {name} has order {tv.order} but its partitioned value "
                             f"has {p.ndim} modes")
    kern = _planned(kern, inputs)
    clients = {id(p.client) for p in parts.values()}
    if len(clients) > 1:
        raise InputError("partitioned inputs " + ", ".join(parts) + " live on different "
                         "Dask clients; partition them with one client")
    return kern, parts, split_.plan(kern, parts)


def _stored(v) -> int | None:
    """Stored entries of a sparse input (a partitioned one's over all its
    blocks), None for a dense one."""
    stats = getattr(v, "stats", None)
    if isinstance(v, np.ndarray) or (stats is not None and all(b.idx32 is None for b in stats)):
        return None
    n = getattr(v, "nnz", None)
    return None if n is None else int(n)


def _planned(kern, inputs):
    """The kernel planned once for the whole call: its index sizes and stored
    entries read from the inputs, a partitioned one's added up over its blocks
    (every block then runs that one plan's C)."""
    if not getattr(kern, "_per_signature", False):
        return kern
    dims, nnz = {}, {}
    for ix, tname, mode in kern._modes:
        if tname in inputs:
            dims.setdefault(ix, int(np.shape(inputs[tname])[mode]))
    for name, v in inputs.items():
        if _stored(v) is not None:
            nnz[name] = _stored(v)
    cls = ("distributed", tuple(sorted((k, v.bit_length()) for k, v in dims.items())),
           tuple(sorted((k, v.bit_length()) for k, v in nnz.items())))
    measured = lambda: pipeline.Measured(tuple(sorted(dims.items())),    # noqa: E731
                                         tuple(sorted(nnz.items())), size_class=cls)
    return kern.planned_for_class(cls, measured)[1]


def explain(kern, **inputs) -> str:
    """`kern.explain()` followed by how a call with `inputs` runs over its
    partitioned inputs: the split index, how block results combine, what is
    broadcast, or why the call is refused.

        >>> print(etchpy.distributed.explain(kern, A=parts, x=v))
    """
    if inputs.keys() != kern._users.keys():
        io_.check_names(kern._users, inputs)
    sr = kern._semiring_of(inputs)
    kern = kern if sr is kern.semiring else kern._variant(sr)
    return kern.explain() + "\n\n" + split_.describe(kern, _partitioned(inputs))


def _nbytes(v) -> int:
    try:
        return blocks.stats(v).nbytes
    except (TypeError, ValueError, AttributeError):
        return 0


def _check_memory(kern, parts, split, others, out_bytes):
    limits = next(iter(parts.values())).limits
    shared = sum(_nbytes(v) for v in others.values())
    need = {b: sum(p.stats[b].nbytes for p in parts.values()) + shared + out_bytes(b)
            for b in range(len(split.bounds))}
    check_memory(f"kernel {kern.name!r} over " + ", ".join(parts), need, limits,
                 total=sum(p.nbytes for p in parts.values()) + shared)


def run(kern, inputs, out=None):
    """Kernel `kern` on `inputs`, some of them Partitioned: the same kind of result
    as an ordinary call (see the module docstring for the steps)."""
    kern, parts, split = _prepare(kern, inputs)
    others = {n: v for n, v in inputs.items() if n not in parts}
    shape = _out_shape(kern, parts, others, split)
    item = np.dtype(kern.semiring.dtype).itemsize
    _check_memory(kern, parts, split, others,
                  lambda b: 0 if kern.out_format else
                  item * int(np.prod(shape)) // (1 if not split.free else len(split.bounds)))
    result = BlockRun(kern, parts, split, list(inputs), others).run(shape)
    if out is not None:
        out[...] = result
        return out
    return result


def _out_shape(kern, parts, others, split):
    sizes = {}
    for name in kern.tensors:
        if name not in parts and name not in others:
            continue
        dims = parts[name].shape if name in parts else np.shape(others[name])
        for node_ix, n in zip(_indices_of(kern, name), dims):
            sizes.setdefault(node_ix, n)
    return tuple(sizes[ix.name] for ix in kern.out_indices)


def _indices_of(kern, name):
    for node in subexprs(kern.source_expr):
        if getattr(node, "tensor", None) is not None and node.tensor.name == name:
            return [ix.name for ix in node.indices]
    return []


def compute_seconds(client) -> dict:
    """{worker address: seconds inside kernels since last asked} (for benchmarks)."""
    return {a: float(np.sum(t)) for a, t in client.run(kernel_times).items()}

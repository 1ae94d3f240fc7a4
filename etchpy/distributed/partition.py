"""Partitioned tensors: a tensor cut along one mode into blocks held on Dask workers.

    parts = ep.partition(A, mode=0, blocks=4, client=client)
    y = kern(A=parts, x=v)          # runs on parts' cluster (see distributed.call)

`partition` takes a numpy array, a scipy sparse matrix/array, an ep.Tensor (cut
on the client, each block scattered to one worker) or a dask.array.Array whose
chunks are numpy arrays or scipy sparse matrices (its blocks are computed on the
workers and stay there; nothing is gathered to the client). The blocks are
persisted: later calls reuse them and move only the other operands.

A block lost with its worker is made again: Dask recomputes a dask array's; a
block cut on the client is cut again from the value it came from and sent again
(`Partitioned.restore`), after a check that the value is unchanged
(distributed.sources).
"""
from __future__ import annotations

import numpy as np

from . import blocks as blocks_
from . import call
from .resources import check_memory, estimate, workers_of
from .sources import Source
from ..errors import InputError
from ..runtime import inputs as io_

class Partitioned:
    """A tensor cut along `mode` into blocks on the workers of `client`.

    Attributes: client; mode; shape (the whole tensor's); dtype; bounds, ((lo,
    hi), ...) of each block along `mode`; futures, one per block; stats, one
    blocks.BlockStats per block (shape, nnz, bytes, int32 indices?); nnz, bytes;
    source, the sources.Source that cuts a lost block again (None for blocks
    made by Dask from a dask array, which Dask recomputes).
    A kernel called with it as an input runs on its cluster (distributed.call).
    """

    def __init__(self, client, mode, shape, dtype, bounds, futures, stats, name="tensor",
                 limits=None, source=None):
        self.client, self.mode, self.shape, self.dtype = client, mode, tuple(shape), dtype
        self.bounds, self.futures, self.stats = tuple(bounds), list(futures), list(stats)
        self.name, self.source = name, source
        self.limits = dict(limits or {})    # worker address -> memory limit, when made
        self.last_call: dict = {}           # seconds by phase of the last call (call.run)

    ndim = property(lambda self: len(self.shape))
    nnz = property(lambda self: sum(s.nnz for s in self.stats),
                   doc="Stored entries over all blocks.")
    nbytes = property(lambda self: sum(s.nbytes for s in self.stats),
                      doc="Bytes over all blocks.")

    def __repr__(self):
        return (f"Partitioned({self.name!r}: shape {self.shape}, mode {self.mode}, "
                f"{len(self.bounds)} blocks, nnz per block {[s.nnz for s in self.stats]})")

    def etchpy_distributed_call(self, kern, out, inputs):
        """Run kernel `kern` on `inputs` (this among them) on this tensor's cluster;
        the hook Kernel.__call__ delegates to (see distributed.call.run)."""
        return call.run(kern, inputs, out)

    def explain(self, kern, **inputs) -> str:
        """`kern.explain()` followed by how a call with `inputs` runs distributed."""
        return call.explain(kern, **inputs)

    def gather(self):
        """The blocks brought to the client (for checks on small data); lost ones
        are made again first (restore)."""
        self.restore()
        return [blocks_.unpack(b) for b in self.client.gather(self.futures)]

    def lost(self, which=None) -> list:
        """The blocks among `which` (default all) whose data went down with a worker."""
        which = range(len(self.futures)) if which is None else which
        return [b for b in which if self.futures[b].status in ("cancelled", "lost")
                and (self.source is not None or self.futures[b].status == "cancelled")]

    def restore(self, which=None, gone=()) -> list:
        """Send again, from the client, the blocks among `which` (default all) whose
        worker died, and the blocks `gone` (which the scheduler says nobody holds),
        each to the live worker holding fewest of this tensor's blocks; returns
        them. InputError when the value they were cut from changed since
        (sources.Source.block) or when no copy is left (a dask array's block
        cancelled by Dask)."""
        lost = sorted(set(self.lost(which)) | (set(gone) if self.source else set()))
        if not lost:
            return []
        if self.source is None:
            raise InputError(f"block {lost[0]} of partitioned input {self.name} was lost "
                             f"and Dask cancelled it ({self.futures[lost[0]].status}); "
                             "partition it again")
        places = _places(self.client, self.futures, lost)
        for b in lost:
            piece = blocks_.pack(self.source.block(b))
            self.futures[b] = self.client.scatter(piece, workers=[places[b]], hash=False)
        return lost


def _bounds(n: int, k: int):
    step, extra = divmod(n, k)
    cuts = [0]
    for b in range(k):
        cuts.append(cuts[-1] + step + (b < extra))
    return [(cuts[b], cuts[b + 1]) for b in range(k)]


def partition(x, mode: int = 0, blocks: int | None = None, client=None,
              name: str = "tensor") -> Partitioned:
    """`x` cut along `mode` into `blocks` blocks held on the Dask workers of `client`.

    Parameters: x, a numpy array, scipy sparse matrix/array, ep.Tensor, or
    dask.array.Array (chunks numpy or scipy.sparse; its chunks along `mode` are
    the blocks unless `blocks` asks for another number, and they are built on the
    workers); mode, the mode to cut; blocks, how many (default: one per worker;
    at most one per entry along `mode`: a request for more, as one block per
    worker on a cluster with more workers than rows, gives one block per entry);
    client, a dask.distributed Client (default: the current one); name, used in
    messages.
    Returns: a Partitioned, whose blocks stay on the workers. It holds a reference
    to `x` (no copy) and a fingerprint of each block, to send a block lost with
    its worker again (Partitioned.restore).
    Raises: InputError for a mode out of range, blocks < 1, or a block larger
    than settings.Limits.dask_memory_share of a worker's memory limit (naming the sizes).

        >>> parts = ep.partition(scipy_csr, mode=0, blocks=2, client=client)
    """
    from dask.distributed import default_client
    client = client or default_client()
    workers, limits = workers_of(client)
    if type(x).__module__.startswith("dask.array"):
        return _from_dask(x, mode, blocks, client, name, limits)
    if not hasattr(x, "shape"):
        raise InputError(f"partition: {name} must be an array, sparse matrix, ep.Tensor or "
                         f"dask array, got {type(x).__name__}")
    shape = tuple(x.shape)
    _check_mode(name, shape, mode)
    k = len(workers) if blocks is None else int(blocks)
    if k < 1:
        raise InputError(f"partition: {name} cannot be cut into {blocks} blocks; give at "
                         "least 1")
    bounds = _bounds(shape[mode], min(k, max(shape[mode], 1)))
    check_memory(f"partition of {name}", estimate(x, mode, bounds), limits)
    source, pieces = Source.cut(x, mode, bounds, name)
    stats = [blocks_.stats(p) for p in pieces]
    futures = [client.scatter(blocks_.pack(p), workers=[workers[b % len(workers)]], hash=False)
               for b, p in enumerate(pieces)]
    return Partitioned(client, mode, shape, io_.value_dtype(x), bounds, futures, stats, name,
                       limits, source)


def _places(client, futures, lost) -> dict:
    """{block: live worker address} for the `lost` blocks: each to the worker that
    holds fewest of `futures` (counting the ones placed before it)."""
    try:
        workers, _ = workers_of(client)
    except InputError as e:         # all died: their nannies may be starting new ones
        raise OSError(str(e)) from e
    held = [f for b, f in enumerate(futures) if b not in lost and f.status == "finished"]
    count = dict.fromkeys(workers, 0)
    for holders in client.who_has(held).values() if held else ():
        for w in holders:
            if w in count:
                count[w] += 1
    places = {}
    for b in lost:
        places[b] = min(workers, key=lambda w: (count[w], workers.index(w)))
        count[places[b]] += 1
    return places


def _check_mode(name, shape, mode):
    if not 0 <= mode < len(shape):
        raise InputError(f"partition: {name} has {len(shape)} modes; mode {mode} does not "
                         "exist")


def _from_dask(x, mode, blocks, client, name, limits) -> Partitioned:
    """Blocks made on the workers from a dask array's chunks (never gathered)."""
    _check_mode(name, x.shape, mode)
    if blocks is not None and int(blocks) != x.numblocks[mode]:
        x = x.rechunk({mode: -(-x.shape[mode] // int(blocks))})
    other = {m: -1 for m in range(x.ndim) if m != mode and x.numblocks[m] > 1}
    if other:
        x = x.rechunk(other)
    cuts = [0]
    for c in x.chunks[mode]:
        cuts.append(cuts[-1] + c)
    bounds = list(zip(cuts[:-1], cuts[1:]))
    if isinstance(x._meta, np.ndarray):       # dense chunks: their sizes are known now
        row = x.dtype.itemsize * int(np.prod(x.shape)) // max(x.shape[mode], 1)
        check_memory(f"partition of {name}",
                     {b: row * (hi - lo) for b, (lo, hi) in enumerate(bounds)}, limits)
    futures = client.compute(list(x.to_delayed().reshape(-1)))
    stats = client.gather(client.map(blocks_.stats, futures, pure=False))
    try:                                      # sparse chunks: known once built
        check_memory(f"partition of {name}", {b: s.nbytes for b, s in enumerate(stats)},
                     limits)
    except InputError:
        client.cancel(futures)
        raise
    return Partitioned(client, mode, x.shape, x.dtype, bounds, futures, stats, name, limits)

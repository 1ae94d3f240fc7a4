"""The block tasks of one distributed call, run until every block has its result
whatever workers die meanwhile.

    BlockRun(kern, parts, split, names, others).run(shape)    the call's result

Each block task runs on the worker holding its block. That worker gets its own
copy of the shipped kernel (worker.Shipped, once per kernel, signature and
worker) and of every other input (once per call): one scatter per worker, never
Dask's broadcast, whose replication loops forever on a worker that died while
it ran.

When a worker dies, a block task that needed its data ends cancelled. Its block
is made again (Partitioned.restore sends it from the client, or Dask recomputes
a dask array's block), the kernel and the other inputs are sent again where they
are missing, and the task is submitted again; the tasks still running go on. A
free split's results are gathered as they finish, so a worker dying later loses
none of them; a contracted split's are combined by a tree of the semiring's add
on the workers, run again from the blocks whose results a dead worker took.
"""
from __future__ import annotations

import time
import uuid
import weakref
from concurrent.futures import CancelledError

from . import blocks
from .worker import Shipped, run_block
from ..settings import LIMITS
from ..errors import EtchpyError


# per kernel: {(client id, index types): (token, {worker: future of its Shipped copy})}
_SHIPPED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def wait(futures, return_when="ALL_COMPLETED") -> set:
    """The `futures` done (finished, failed or cancelled) once all of them are
    (or the first, return_when="FIRST_COMPLETED"): dask.distributed.wait, which
    raises when one was cancelled instead of returning it."""
    from dask.distributed import wait as dask_wait
    try:
        return set(dask_wait(futures, return_when=return_when).done)
    except CancelledError:
        return {f for f in futures if f.status != "pending"}


def copies(client, held: dict, make, workers) -> dict:
    """`held` ({worker: future}) completed so that each of `workers` holds a copy of
    make() (a scatter to each worker that has none, or lost its copy)."""
    for w in workers:
        if w not in held or held[w].status != "finished":
            held[w] = client.scatter(make(), workers=[w], hash=False)
    return held


def shipped(kern, client, idx_types, workers) -> dict:
    """{worker: future of the Shipped kernel} for each of `workers` (remembered per
    kernel, client and index types: a worker is sent the kernel once)."""
    mine = _SHIPPED.setdefault(kern, {})
    key = (id(client), idx_types)
    if key not in mine:
        mine[key] = (f"{kern.name}-{uuid.uuid4().hex}", {})
    token, held = mine[key]
    return copies(client, held, lambda: Shipped.of(kern, token, idx_types), workers)


class BlockRun:
    """One call's block tasks (see the module docstring); `limits` (settings.Limits)
    bounds the sends and re-runs."""

    def __init__(self, kern, parts, split, names, others, limits=LIMITS):
        self.limits = limits
        self.kern, self.parts, self.split, self.names = kern, parts, split, names
        self.others, self.shared, self.losses = others, {n: {} for n in others}, 0
        self.first = next(iter(parts.values()))
        self.client = self.first.client
        idx32 = {s.idx32 for p in parts.values() for s in p.stats}
        self.idx_types = tuple(sorted({"int32_t" if flag is not False else "int64_t"
                                       for flag in idx32} | {"int64_t"}))
        self.call_id, self.pending, self.done = uuid.uuid4().hex[:12], {}, {}

    def run(self, shape):
        """Ship, send, run and combine; the seconds of each phase are left in the
        first partitioned input's `last_call` (shipping, running, combining)."""
        start = time.perf_counter()
        self._submit(range(len(self.split.bounds)))
        shipped_at = time.perf_counter()
        while True:
            self._collect()
            ran_at = time.perf_counter()
            try:
                result = combine(self.client, self.kern, self.split, self.done, shape)
                break
            except CancelledError:     # a block result went down with its worker
                self._resubmit([b for b, f in self.done.items() if f.status != "finished"])
        self.first.last_call = {"ship_s": shipped_at - start, "run_s": ran_at - shipped_at,
                                "combine_s": time.perf_counter() - ran_at}
        return result

    def _submit(self, which):
        """Block tasks for blocks `which`, after sending again what they need that
        a dead worker took with it. A send that meets a worker dying (a closed
        connection, an address the scheduler just removed, a block cancelled as it
        is looked up) or a cluster without workers (their nannies starting new ones)
        is tried again, for about 25 s."""
        for attempt in range(self.limits.dask_losses):
            try:
                return self._send(which)
            except (OSError, TimeoutError, KeyError, CancelledError):
                time.sleep(0.1 * 2 ** attempt)
        return self._send(which)

    def _holders(self, which) -> dict:
        """{block: the worker holding it} for blocks `which`, after making again
        the lost ones (a block the scheduler has no holder for counts as lost).
        A dask array's block that went down with its worker ("lost") is one Dask
        is making again: it is waited for as long as that takes (its task may
        queue behind the block tasks still running), not counted as a failed send."""
        for p in self.parts.values():
            p.restore(which)
        wait([p.futures[b] for p in self.parts.values() for b in which
              if p.futures[b].status in ("pending", "lost")])    # blocks Dask is making
        futures = {b: self.first.futures[b] for b in which}
        where = self.client.who_has(list(futures.values()))
        gone = [b for b, f in futures.items() if not where.get(f.key)]
        if gone:
            for p in self.parts.values():
                p.restore(gone, gone=gone)
            raise OSError(f"blocks {gone} had no holder")     # sent again: look again
        return {b: where[f.key][0] for b, f in futures.items()}

    def _send(self, which):
        client, holders = self.client, self._holders(which)
        on = set(holders.values())
        kernel = shipped(self.kern, client, self.idx_types, on)
        for n, v in self.others.items():
            copies(client, self.shared[n], lambda: blocks.pack(v), on)   # noqa: B023
        cuts, bounds = self.split.cuts, self.split.bounds
        for b in which:
            w = holders[b]
            values = [self.parts[n].futures[b] if n in self.parts else self.shared[n][w]
                      for n in self.names]
            fut = client.submit(run_block, kernel[w], self.names, values, cuts, *bounds[b],
                                key=f"etchpy-run-{self.call_id}-{self.losses}-{b}",
                                retries=self.limits.dask_retries, pure=False)
            self.pending[fut] = b

    def _resubmit(self, lost):
        self.losses += 1
        most = self.limits.dask_losses
        if self.losses > most:
            raise EtchpyError(f"kernel {self.kern.name!r}: workers died {most} times in "
                              f"one call, taking blocks {sorted(lost)} with them; check "
                              "the cluster's workers (memory, crashes)")
        for b in lost:
            self.done.pop(b, None)
        self._submit(lost)

    def _collect(self):
        """Wait until every block has a result (gathered for a free split, a
        finished future otherwise), submitting again the blocks that lose theirs."""
        while self.pending:
            ready = {f: self.pending.pop(f)
                     for f in wait(list(self.pending), return_when="FIRST_COMPLETED")}
            for f in ready:
                if f.status == "error":
                    f.result()               # raises the task's own error
            ok = {f: b for f, b in ready.items() if f.status == "finished"}
            if ok and self.split.free:
                ok = self._gather(ok)
            self.done.update({b: f for f, b in ok.items()})
            lost = [b for b in ready.values() if b not in self.done]
            if lost:
                self._resubmit(lost)

    def _gather(self, ok: dict) -> dict:
        """{result: block} for the futures `ok` ({future: block}) gathered; a result
        lost before it arrives is left out (its block is then submitted again)."""
        try:
            return {Held(v): b for v, b in zip(self.client.gather(list(ok)), ok.values())}
        except CancelledError:
            alive = {f: b for f, b in ok.items() if f.status == "finished"}
            return self._gather(alive) if len(alive) < len(ok) else {}


class Held:
    """A block result gathered to the client, standing where its future was."""

    status = "finished"

    def __init__(self, value):
        self.value = value


def combine(client, kern, split, done, shape):
    """The call's result from each block's (`done`: {block: Held result for a free
    split, a finished future for a contracted one}): concatenation, or a tree of
    the semiring's add on the workers."""
    sr, fmt = kern.semiring, kern.out_format
    order = sorted(done)
    if split.free:
        offsets = [split.bounds[b][0] for b in order]
        return blocks.glue([done[b].value for b in order], offsets, split.axis, shape, fmt,
                           sr)
    tasks, level, tree = [done[b] for b in order], 0, uuid.uuid4().hex[:12]
    while len(tasks) > 1:
        pairs = [client.submit(blocks.add_pair, tasks[k], tasks[k + 1], fmt, sr, shape,
                               key=f"etchpy-add-{tree}-{level}-{k}", retries=LIMITS.dask_retries)
                 for k in range(0, len(tasks) - 1, 2)]
        tasks = pairs + tasks[len(tasks) - len(tasks) % 2:]
        level += 1
    return blocks.unpack(client.gather(tasks[0]))

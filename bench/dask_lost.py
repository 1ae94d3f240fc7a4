"""The lost-worker row of `python -m bench dask`: a distributed call that loses a
worker half-way, against the same call undisturbed, on one LocalCluster of two
single-threaded worker processes with nannies (as LocalCluster starts them).

The workload is an SpMM (`Σ_k A[i,k]·B[k,j]`, A csr split by rows, B dense and
sent to the workers), sized so that the undisturbed call takes over a second.
Each round starts a cluster and partitions A (so both calls start from balanced
blocks), times one undisturbed call, then one call during which a timer SIGKILLs
the worker holding the last block at half the undisturbed time (its nanny starts
a new worker, which the call does not wait for). Reported: medians over the
rounds, for one block per worker and for two blocks per worker (a free split's
results are gathered as they finish, so with two a worker dying half-way takes
only the block it was running with it).
"""
from __future__ import annotations

import os
import signal
import threading

import numpy as np

import etchpy as ep

from .kernels import random_csr, rng_for
from .timing import timed


def _kill_later(client, future, delay):
    """A started timer that SIGKILLs, after `delay` seconds, the worker holding
    `future`."""
    where = next(iter(client.who_has(future).values()))[0]
    pid = client.run(os.getpid, workers=[where])[where]
    timer = threading.Timer(delay, os.kill, (pid, signal.SIGKILL))
    timer.start()
    return timer


def _inputs(quick):
    rng = rng_for("dask-lost")
    n, per_row, rank = (20_000, 40, 64) if quick else (200_000, 40, 64)
    return random_csr(rng, n, n, n * per_row), rng.random((n, rank))


def lost_worker_rows(distributed, quick, repeat):
    """The lost-worker rows (see the module docstring), one per blocks-per-worker."""
    i, j, k = ep.indices("i j k")
    kern = ep.compile(ep.sum(k, ep.tensor("A", 2, "csr")[i, k] * ep.tensor("B", 2)[k, j]))
    A, B = _inputs(quick)
    want = A @ B
    return [_row(distributed, kern, A, B, want, per_worker, max(3, repeat // 3))
            for per_worker in (1, 2)]


def _round(distributed, kern, A, B, want, per_worker, calm):
    """(undisturbed seconds, lost-worker seconds, correct?) on a new cluster (a
    nanny's new worker takes from one second to minutes to register here, so no
    round waits for one)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        parts = ep.partition(A, mode=0, blocks=2 * per_worker, client=client, name="A")
        kern(A=parts, B=B)                                   # ships the kernel
        undisturbed, got = timed(lambda: kern(A=parts, B=B))
        correct = bool(np.allclose(got, want))
        half = float(np.median(calm + [undisturbed])) / 2
        timer = _kill_later(client, parts.futures[-1], half)
        lost, got = timed(lambda: kern(A=parts, B=B))
        timer.join()
        return undisturbed, lost, correct and bool(np.allclose(got, want))


def _row(distributed, kern, A, B, want, per_worker, rounds):
    calm, hit, correct = [], [], True
    for _ in range(rounds):
        undisturbed, lost, ok = _round(distributed, kern, A, B, want, per_worker, calm)
        calm.append(undisturbed)
        hit.append(lost)
        correct &= ok
    undisturbed, lost = float(np.median(calm)), float(np.median(hit))
    return {"workload": f"spmm lost worker n={A.shape[0]:,} nnz={A.nnz:,} rank "
                        f"{B.shape[1]}, {per_worker} block(s) per worker",
            "undisturbed_ms": 1e3 * undisturbed, "lost_worker_ms": 1e3 * lost,
            "ratio": lost / undisturbed, "target_ratio": 2.0, "rounds": rounds,
            "undisturbed_samples_ms": [1e3 * s for s in calm],
            "lost_worker_samples_ms": [1e3 * s for s in hit], "correct": correct}

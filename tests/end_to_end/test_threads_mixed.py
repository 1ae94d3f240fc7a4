"""Python threads calling different kinds of kernels at once (cffi releases the
GIL in a call, so the C kernels run side by side and share each library's pools
of kept blocks): SpMV of scipy inputs, SpGEMM with every array mapped (kept
workspaces, spare blocks) and with two OpenMP threads, csc products, a nested
product, a traced lazy function and BFS levels, on sizes up and down. Every
answer equals scipy's. Two bugs this kind of run found are tested on their own:
tests/c/test_c_kept.py (a kept block's fill) and tests/runtime/test_restored.py
(a restored kernel decoded from two threads)."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import etchpy as ep
from etchpy import tuning
from etchpy.runtime.kernel_cache import KERNELS
from in_threads import run_threads

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k = ep.indices("i j k")
A_, B_ = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
Ac_, Bc_ = ep.tensor("A", 2, format="csc"), ep.tensor("B", 2, format="csc")
x_ = ep.tensor("x", 1)


def _random(seed, n, per_row):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    return sp.csr_array((rng.random(n * per_row) + 0.5,
                         (rows, rng.integers(0, n, n * per_row))), shape=(n, n))


def _kinds():
    spmv = ep.Kernel(ep.sum(j, A_[i, j] * x_[j]))
    mapped = ep.Kernel(ep.sum(j, A_[i, j] * B_[j, k]), output="csr",
                       tuning=tuning.DEFAULT.with_(map_bytes=1))
    two = ep.Kernel(ep.sum(j, A_[i, j] * B_[j, k]), output="csr", threads=2)
    csc = ep.Kernel(ep.sum(k, Ac_[i, k] * Bc_[k, j]), output="csc")
    nested = ep.Kernel(ep.sum(j, A_[i, j] * ep.sum(k, B_[j, k] * x_[k])))
    grad = ep.lazy.function(lambda X, w, y: X.T @ (X @ w - y))
    return [
        lambda A, B, x, y: (spmv(A=A, x=x), A @ x),
        lambda A, B, x, y: (mapped(A=A, B=B), A @ B),
        lambda A, B, x, y: (two(A=A, B=B), A @ B),
        lambda A, B, x, y: (csc(A=sp.csc_array(A), B=sp.csc_array(B)), A @ B),
        lambda A, B, x, y: (nested(A=A, B=B, x=x), A @ (B @ x)),
        lambda A, B, x, y: (grad(A, x, y), A.T @ (A @ x - y)),
        lambda A, B, x, y: (np.asarray(ep.graph.bfs_levels(A, 0)) >= 0,
                            np.isin(np.arange(A.shape[0]),
                                    cg.breadth_first_order(A, 0, return_predecessors=False))),
    ]


def _dense(a):
    return a.toarray() if hasattr(a, "toarray") else np.asarray(a)


def test_threads_calling_different_kernels_at_once_get_right_answers():
    pairs = [(_random(s, n, p), _random(s + 50, n, p))
             for s, (n, p) in enumerate([(400, 6), (1200, 5), (90, 9)])]
    for f in _kinds():                  # compiled for each size before the threads start
        for A, B in pairs:
            f(A, B, np.ones(A.shape[0]), np.ones(A.shape[0]))
    KERNELS.clear()         # the same kernels read back from their manifests, not decoded
    kinds = _kinds()

    def work(t):
        rng = np.random.default_rng(t)
        for r in range(20 * len(kinds)):            # the threads on one kind at a time
            A, B = pairs[(t + r) % len(pairs)]
            which = (r // 4) % len(kinds)
            got, want = kinds[which](A, B, rng.random(A.shape[0]), rng.random(A.shape[0]))
            got, want = _dense(got), _dense(want)
            assert got.shape == want.shape and np.allclose(got, want), (t, r, which)

    errors = run_threads(work, 4)
    assert not errors, errors[0]

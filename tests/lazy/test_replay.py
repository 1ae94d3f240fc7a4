"""Replayed lazy programs (etchpy.lazy.replay): a program run again on arrays of
the same kind replays its recorded steps on the new arrays and gives numpy's
answer; a guard that no longer holds runs it afresh; the caches are bounded."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.lazy.replay import PROGRAMS, signature

pytestmark = pytest.mark.usefixtures("shared_cache")

N = 25


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def test_replay_binds_new_arrays_and_matches_numpy():
    rng = np.random.default_rng(0)
    for seed in range(3):
        X = sp.random_array((N, N), density=0.2, format="csr", random_state=seed)
        w, y = rng.standard_normal(N), rng.random(N)
        got = ep.compute(logistic(ep, *(ep.lazy(a) for a in (X, w, y))))
        np.testing.assert_allclose(got, logistic(np, X, w, y), rtol=1e-12)
    nodes = [logistic(ep, *(ep.lazy(a) for a in (X, w, y)))]
    key = (signature(nodes)[0], True, 1, None)
    assert PROGRAMS.get(key) is not None          # the first run was recorded


def test_a_failed_guard_runs_the_program_afresh():
    X = sp.random_array((N, N), density=0.2, format="csr", random_state=4)
    d = np.linspace(1, 2, N)
    for dv in (d, np.where(np.arange(N) == 3, 0.0, d), d):
        got = (ep.lazy(X) * (1 / ep.lazy(dv))).compute()
        with np.errstate(all="ignore"):
            want = X.toarray() * (1 / dv)
        got = got.toarray() if sp.issparse(got) else got
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_patterns_and_results_that_are_inputs_are_replayed_right():
    A = sp.random_array((N, N), density=0.2, format="csr", random_state=5)
    B = sp.random_array((N, N), density=0.2, format="csr", random_state=6)
    same = sp.csr_array((np.arange(A.nnz) + 1.0, A.indices, A.indptr), shape=A.shape)
    for other in (same, B, same):
        a, b = ep.lazy(A), ep.lazy(other)
        s, t = ep.compute(a * b + a, a)
        np.testing.assert_allclose(s.toarray(), A.toarray() * other.toarray() + A.toarray())
        assert t is not A and np.array_equal(t.toarray(), A.toarray())


def test_a_lone_sparse_product_is_scipys():
    X = sp.random_array((N, N), density=0.2, format="csr", random_state=7)
    w = np.linspace(-1, 1, N)
    x = ep.lazy(X)
    assert "scipy product" in ep.explain(x.T @ ep.lazy(w))
    np.testing.assert_allclose(ep.compute(x.T @ ep.lazy(w)), X.T @ w, rtol=1e-12)
    assert "scipy product" not in ep.explain(x.T @ (ep.lazy(w) * 2))


def test_a_wrapped_scipy_matrix_keeps_its_sortedness_and_its_answers():
    """ep.lazy of a sorted csr_matrix shares its arrays in a csr_array; of an
    unsorted one, holds a sorted copy (the matrix untouched); sorted or not, the
    programs equal numpy's."""
    rng = np.random.default_rng(3)
    w, y = rng.standard_normal(N), rng.random(N)
    X = sp.random(N, N, density=0.3, format="csr", random_state=4)
    U = X.copy()
    for r in range(N):                          # each row's entries reversed: unsorted
        a, b = U.indptr[r], U.indptr[r + 1]
        U.indices[a:b], U.data[a:b] = U.indices[a:b][::-1].copy(), U.data[a:b][::-1].copy()
    U.has_sorted_indices = False
    for M in (X, U, X, U):
        leaf = ep.lazy(M)
        assert leaf.value.has_sorted_indices
        assert np.shares_memory(leaf.value.data, M.data) == M.has_sorted_indices
        want = logistic(np, sp.csr_array(M), w, y)
        np.testing.assert_allclose(ep.compute(logistic(ep, leaf, ep.lazy(w), ep.lazy(y))),
                                   want, rtol=1e-12)
        np.testing.assert_allclose(ep.compute((leaf * (leaf @ leaf)).sum()),
                                   (M.toarray() * (M.toarray() @ M.toarray())).sum(),
                                   rtol=1e-10)


def _unfused(F, X, w, y, W, Y):
    """The programs with nothing to fuse: logistic, least-squares and
    softmax-regression gradients (their steps are scipy's loops, numpy work
    and kernels, recorded once and replayed)."""
    E = F.exp(X @ W)
    return (logistic(F, X, w, y), X.T @ (X @ w - y),
            X.T @ (E / E.sum(axis=1, keepdims=True) - Y))


@pytest.mark.parametrize("n", [N, 300])
def test_arrays_written_in_place_between_replays_give_numpys_answer(n):
    """A replay reads the arrays as they are now: dense values, the sparse
    input's stored values and its pattern (one row's indices moved, nnz kept)
    written in place between evaluations give numpy's answer."""
    rng = np.random.default_rng(n)
    X = sp.random_array((n, n), density=0.05, format="csr", random_state=n)
    w, y = rng.standard_normal(n) / 4, rng.random(n)
    W, Y = rng.random((n, 4)) / 4, np.eye(4)[rng.integers(0, 4, n)]
    arrays = (X, w, y, W, Y)

    def check():
        got = ep.compute(*_unfused(ep, *(ep.lazy(a) for a in arrays)))
        for g, want in zip(got, _unfused(np, *arrays)):
            np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
    check()
    check()                                           # replayed
    X.data *= -1.5                                    # in place, the same objects
    w += 1.0
    W[:] = W[::-1].copy()
    y[::2] = 0.0
    check()
    row = int(np.argmax(np.diff(X.indptr)))           # one row's pattern moved
    lo, hi = X.indptr[row], X.indptr[row + 1]
    free = np.setdiff1d(np.arange(n), X.indices[lo:hi])[: hi - lo]
    X.indices[lo:hi] = np.sort(free)
    check()


@pytest.mark.parametrize("cls", [sp.csr_array, sp.csc_array, sp.csr_matrix, sp.csc_matrix])
def test_the_lookups_sparse_kinds_are_the_signatures_each_time(cls):
    """replay.sparse_kinds (the C lookup's key part) equals the kinds `signature`
    gives the same leaf values, on first sight and later, after a value's sort
    flag, stored entries, dtype or shape changed in place; a later leaf of the
    same pattern (the same arrays, or equal ones) is found as the signature finds
    it; a value neither numpy nor sparse is not covered."""
    from etchpy.lazy.replay import _leaf_sig, sparse_kinds
    M = cls(sp.random_array((6, 5), density=0.5, format="csr", random_state=3))
    x = np.ones(5)
    assert sparse_kinds([x, x]) == () and sparse_kinds([x, [1.0]]) is None

    def same():
        for values in ([M], [x, M], [M, x, M.copy(), M], [M, cls(M.T.T), x]):
            seen: list = []
            want = tuple(_leaf_sig(v, seen) for v in values if type(v) is not np.ndarray)
            for _ in range(2):
                assert sparse_kinds(values) == want, type(M)
    same()
    M.has_sorted_indices = False
    same()
    M.sort_indices()
    same()
    M.indptr[-1] = 1                        # in place: fewer entries stored
    same()
    M.data = M.data.astype(np.float32)
    same()
    M.resize((2, 3))                        # in place: another shape
    same()

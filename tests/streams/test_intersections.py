"""Intersections: merge or leapfrog (galloping), chosen per pair of segments, and
short segments intersected at once (an all-pairs compare), against the
reference."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import assert_same, check_backends, problems
from etchpy.tuning import DEFAULT
from tuned import as_scipy, csr_on_interpreter, random_csr, sparse3, tuned_kernel

i, j, k = ep.indices("i j k")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.parametrize("backend, n", [("streams", 400), ("c", 200000)])
def test_unbalanced_intersection_gallops_correctly(backend, n):
    """A short sparse list against a long one: skips jump far, past the linear phase."""
    rng = np.random.default_rng(n)
    long_idx = np.sort(rng.choice(n, size=n // 2, replace=False))
    short_idx = np.sort(rng.choice(n, size=7, replace=False))
    a = np.zeros(n)
    b = np.zeros(n)
    a[short_idx] = rng.integers(1, 5, size=7)
    b[long_idx] = rng.integers(1, 5, size=len(long_idx))
    x, y = ep.tensor("x", 1, format="csf"), ep.tensor("y", 1, format="csf")
    e = ep.sum(i, x[i] * y[i])
    got = ep.evaluate(e, backend=backend, check=(backend == "streams"),
                      x=ep.Tensor.from_dense(a, "csf"), y=ep.Tensor.from_dense(b, "csf"))
    assert got == float(a @ b)
    kern = ep.compile(e)
    assert "gallop" in kern.explain()


@pytest.mark.parametrize("ratio", [0, 10**9])
@settings(max_examples=25)
@given(problems())
def test_merge_and_leapfrog_ways_equal_reference(ratio, p):
    """Each way of a two-segment intersection on its own: ratio 0 always leapfrogs
    (gallops), a huge ratio always merges; both must agree with the reference."""
    want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **p.inputs)
    got = tuned_kernel(p.expr, DEFAULT.with_(gallop_ratio=ratio), semiring=p.semiring)
    assert_same(got(**p.inputs), want, p.semiring, what=str(p.expr))


def test_intersection_picks_merge_or_gallop_per_segment_pair():
    """Row 0 intersects 5000 entries with 7 (leapfrog, galloping), row 1 4000 with
    5000 (merge); the choice is made per pair of segments at run time and the loop
    is emitted once per way."""
    rng = np.random.default_rng(7)
    n = 10000
    x, y = np.zeros((2, n)), np.zeros((2, n))
    x[0, rng.choice(n, 5000, replace=False)] = 1.0
    y[0, rng.choice(n, 7, replace=False)] = 2.0
    x[1, rng.choice(n, 4000, replace=False)] = 3.0
    y[1, rng.choice(n, 5000, replace=False)] = 4.0
    X, Y = ep.tensor("X", 2, format="csr"), ep.tensor("Y", 2, format="csr")
    e = ep.sum((i, j), X[i, j] * Y[i, j])
    kern = ep.compile(e)
    assert "merge [" in kern.explain() and "leapfrog when one is" in kern.explain()
    assert kern.c_source.count("_gallop) {") == 1
    want = float((x * y).sum())
    Xs, Ys = sp.csr_matrix(x), sp.csr_matrix(y)
    assert kern(X=Xs, Y=Ys) == pytest.approx(want)
    assert ep.evaluate(e, backend="streams", check=True, X=Xs, Y=Ys) == pytest.approx(want)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_short_segments_intersect_at_once(index_dtype, semiring):
    """An innermost intersection of two segments of at most 4 entries is found
    with one all-pairs compare (SSE2 for int32, SSE4.2 for int64, the merge
    elsewhere). Lanes past a segment's end hold the next segment's coordinates,
    which must not match: A∘B below is empty, though row 0 of A holds 1, row 0
    of B holds 2 and row 1 of each starts with the other's. The same programs
    run on the Imp interpreter."""
    sr = ep.semirings.get(semiring)
    B = ep.tensor("B", 2, format="csr")
    e = A_csr[i, j] * B[i, j]
    # a fresh Kernel: ep.compile's in-process cache may hold one whose last call
    # planned another size class (its c_source is then that class's)
    kern = ep.Kernel(e, output="csr", semiring=semiring)
    assert "ep_short_match(" in kern.c_source

    def csr(indptr, indices, n):
        m = sp.csr_array((np.arange(1.0, len(indices) + 1), np.asarray(indices, index_dtype),
                          np.asarray(indptr, index_dtype)), shape=(len(indptr) - 1, n))
        m.data = m.data.astype(sr.dtype)
        return m
    # four rows each, padded with rows of 4 so that every segment has 4 readable entries
    M = csr([0, 1, 3, 7, 11, 15], [1, 2, 5, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3], 8)
    N = csr([0, 1, 3, 7, 11, 15], [2, 1, 6, 4, 5, 6, 7, 0, 1, 2, 3, 0, 1, 2, 3], 8)
    want = as_scipy(ep.evaluate(e, semiring=semiring, backend="reference", output="csr",
                                A=M, B=N))
    assert want.nnz == 8                           # only rows 3 and 4 meet
    for got in (as_scipy(kern(A=M, B=N)), csr_on_interpreter(e, sr, A=M, B=N)):
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    # inner3 on random csf tensors: fibers of 1-3 entries, most of them short
    T, U = sparse3(60, 20000, 1), sparse3(60, 20000, 2)
    if index_dtype == np.int64:
        T, U = (ep.Tensor(t.shape, t.format, [{k: a.astype(np.int64) for k, a in lv.items()}
                                              for lv in t.levels], t.vals, t.fill)
                for t in (T, U))
    Tv, Uv = ep.tensor("T", 3, format="csf"), ep.tensor("U", 3, format="csf")
    inner = ep.sum((i, j, k), Tv[i, j, k] * Uv[i, j, k])
    np.testing.assert_allclose(ep.evaluate(inner, T=T, U=U),
                               np.sum(T.to_dense() * U.to_dense()), rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), semiring=st.sampled_from(["real", "min_plus", "boolean"]),
       index_dtype=st.sampled_from([np.int32, np.int64]),
       shape=st.tuples(st.integers(1, 12), st.integers(1, 9)),
       density=st.floats(0.05, 0.7), output=st.sampled_from(["dense", "csr"]))
def test_short_intersections_equal_reference(seed, semiring, index_dtype, shape, density,
                                             output):
    """Element-wise products and row dot products of random csr matrices with rows
    of 0-9 entries: short segments next to long ones and at the ends of the
    arrays, on C (all-pairs way where it fits) and on streams, against the
    reference."""
    sr = ep.semirings.get(semiring)
    rng = np.random.default_rng(seed)

    def rand_csr():
        mask = rng.random(shape) < density
        vals = rng.integers(1, 5, shape).astype(sr.dtype) * mask
        m = sp.csr_array(vals)
        m.eliminate_zeros()
        return sp.csr_array((m.data, m.indices.astype(index_dtype),
                             m.indptr.astype(index_dtype)), shape=shape)
    B = ep.tensor("B", 2, format="csr")
    M, N = rand_csr(), rand_csr()
    check_backends(A_csr[i, j] * B[i, j], {"A": M, "B": N}, semiring=semiring, output=output)
    check_backends(ep.sum(j, A_csr[i, j] * B[i, j]), {"A": M, "B": N}, semiring=semiring)


def test_short_intersections_without_simd_merge(monkeypatch):
    """Built without SSE4.2 (CFLAGS=-O2), the int64 kernel has no all-pairs compare
    and its short way is the two-finger merge: the same results."""
    monkeypatch.setenv("CFLAGS", "-O2")
    B = ep.tensor("B", 2, format="csr")
    kern = ep.Kernel(A_csr[i, j] * B[i, j], output="csr")
    M, N = random_csr(300, 8, 700, 21), random_csr(300, 8, 700, 22)    # rows of 0-6
    wide = [sp.csr_array((m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64)),
                         shape=m.shape) for m in (M, N)]
    got = kern(A=wide[0], B=wide[1])
    assert kern.library("int64_t").flags[-1] == "-O2"
    np.testing.assert_array_equal(got.toarray(), M.multiply(N).toarray())


@pytest.mark.parametrize("match_step", [True, False])
@pytest.mark.parametrize("pattern", ["same", "half", "shifted", "disjoint"])
def test_a_merge_steps_a_match_by_its_own_branch(match_step, pattern):
    """Tuning.match_step: a two-finger merge moves both operands on a match in a
    branch of its own (the rest by strict compares, no branch), the same moves as
    the branch-free ≤ step. Checked on scipy inputs (the C path and its checks)
    where every step matches, half do, none do, and where rows end at once."""
    rng = np.random.default_rng(len(pattern))
    A = sp.random(60, 50, density=0.3, format="csr", random_state=rng)
    B = {"same": lambda: A.copy(),
         "half": lambda: sp.random(60, 50, density=0.3, format="csr", random_state=rng) + A,
         "shifted": lambda: sp.csr_matrix(np.roll(A.toarray(), 1, axis=1)),
         "disjoint": lambda: sp.csr_matrix(np.where(A.toarray() == 0, 1.5, 0.0))}[pattern]()
    B = sp.csr_matrix(B)
    B.data = rng.uniform(1, 2, B.nnz)
    tn = DEFAULT.with_(match_step=match_step, gallop_ratio=10**9)
    kern = ep.compile(A_csr[i, j] * ep.tensor("B", 2, format="csr")[i, j], output="csr",
                      tuning=tn)
    got = sp.csr_array(kern(A=A, B=B)).toarray()
    np.testing.assert_array_equal(got, A.multiply(B).toarray())
    step = "j_q_2 = (j_q_2 + 1);" in kern.c_source
    assert step == match_step

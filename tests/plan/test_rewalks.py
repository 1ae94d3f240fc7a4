"""A sparse operand walked again under a loop it does not hold is priced as read
again from memory (plan.cost.rewalks), and a dense inner loop that writes its
target contiguously keeps its SIMD price when the target's cells are revisited."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.plan import plan as planning
from etchpy.plan.cost import Stats, nest_cost, rewalks

i, j, k, a, b, c = ep.indices("i j k a b c")
X = ep.tensor("X", 3, "csf")
U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
FIBERS = [("X", 1, 1, 120, 120, 120), ("X", 2, 120, 14400, 120, 120)]


def _stats(**dims):
    return Stats(dims=dims, nnz={"X": 188_000}, fibers=FIBERS)


def test_a_whole_sparse_walk_under_a_broadcast_loop_is_priced_per_walk():
    st = _stats(i=120, j=120, k=120, a=16)
    body = X[i, j, k] * U[i, a]
    again = rewalks(body, ("a", "i", "j", "k"), st)
    assert again >= 14 * 188_000          # 15 walks after the first, each read again
    assert rewalks(body, ("i", "j", "k", "a"), st) == 0
    assert rewalks(body, ("i", "a", "j", "k"), st) == 0     # 1.6k entries a walk: cached


def test_a_walk_the_other_factors_restrict_is_not_a_rewalk():
    st = Stats(dims={"i": 1e5, "j": 1e5, "k": 1e5}, nnz={"A": 1e6, "B": 1e6})
    assert rewalks(A[i, j] * B[j, k], ("i", "j", "k"), st) == 0   # SpGEMM's row walk


def test_the_rank_loop_goes_inside_the_sparse_walk():
    st = _stats(i=120, j=120, k=120, a=16)
    body = X[i, j, k] * U[i, a]
    costs = {o: nest_cost(body, o, st, out=("a", "j", "k"))
             for o in [("a", "i", "j", "k"), ("i", "a", "j", "k"), ("i", "j", "k", "a")]}
    best = costs[("i", "j", "k", "a")]
    assert best < 0.9 * min(costs[("a", "i", "j", "k")], costs[("i", "a", "j", "k")])


def test_tucker_written_i_first_makes_its_temporary_rank_last_and_agrees():
    n, r = 12, 3
    rng = np.random.default_rng(3)
    coords = np.unique(rng.integers(0, n, size=(300, 3)), axis=0)
    xt = ep.Tensor.from_coords(coords.T, rng.random(len(coords)), (n, n, n), "csf")
    u, v, w = (rng.random((n, r)) for _ in range(3))
    nested = ep.sum(k, W[k, c] * ep.sum(j, V[j, b] * ep.sum(i, X[i, j, k] * U[i, a])))
    st = _stats(i=120, j=120, k=120, a=16, b=16, c=16)
    plan = planning.make_plan(nested, (a, b, c), keep_factored=True, stats=st)
    first = plan.steps[0]
    assert first.order[-1] == "a" and first.out[-1] == "a"
    got = ep.compile(nested, out_indices=(a, b, c))(X=xt, U=u, V=v, W=w)
    want = np.einsum("ijk,ia,jb,kc->abc", xt.to_dense(), u, v, w)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_a_fused_readers_prefix_counts_for_the_targets_revisits():
    """A reader fused under a contracted prefix (Σ_i outside a, k, b) leaves and
    comes back to each of its target's cells once per prefix point."""
    st = _stats(i=120, j=120, k=120, a=16, b=16)
    T = ep.tensor("T", 2)
    body = U[i, a] * T[k, b]
    alone = nest_cost(body, ("a", "k", "b"), st, out=("a", "k", "b"))
    under = nest_cost(body, ("a", "k", "b"), st, out=("a", "k", "b"), outside=("i",))
    free = nest_cost(body, ("a", "k", "b"), st, out=("a", "k", "b"), outside=("a",))
    assert under > alone and free == alone


def test_a_chain_through_a_loop_the_operand_does_not_hold_is_walked_once_a_point():
    """In a Galerkin product Σ_kl R[i,k]·A[k,l]·Q[l,j] walked (i, k, l, j), Q's rows
    are reached through k and l: each i walks about 20 of Q's entries, not all of
    them (projecting k away would join i to every l). The planner then reads a csr
    P of Pᵀ·A·P converted to csc and writes rows of the output in order, instead of
    walking k outermost and sorting every record."""
    st = Stats(dims={"i": 4161, "j": 4161, "k": 16641, "l": 16641},
               nnz={"A": 82689, "Q": 16641, "R": 16641})
    R, Q = ep.tensor("R", 2, "csr"), ep.tensor("Q", 2, "csr")
    assert rewalks(R[i, k] * A[k, j] * Q[j, c], ("i", "k", "j", "c"), st) == 0
    m, n = 400, 100
    rng = np.random.default_rng(4)
    P = sp.csr_array((rng.random(m), rng.integers(0, n, m), np.arange(m + 1)), shape=(m, n))
    M = sp.random_array((m, m), density=0.02, format="csr", random_state=rng) + sp.eye_array(m)
    kern = ep.compile(ep.sum((k, j), A[k, i] * B[k, j] * A[j, c]), output="csr")
    got = kern(A=P, B=sp.csr_array(M))
    assert "loop order (i, k, j, c)" in kern.explain()
    np.testing.assert_allclose(got.toarray(), (P.T @ M @ P).toarray(), rtol=1e-12)

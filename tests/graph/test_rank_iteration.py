"""PageRank's C iteration, compiled from its step (graph/rank.py `_iteration`:
an imp.Fixpoint around the compiled pull, proofs_notes/fixpoint_loop.md): the
interpreter and C agree on it; it agrees with the per-step driver on
weighted, pattern and dangling graphs, for scipy, dense, Tensor and Graph
inputs; max_iter limits it; a matrix written in place between calls gives
the new graph's ranks or an InputError."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import graph
from etchpy.graph import rank
from etchpy.lower import run_program
from etchpy.tuning import FIXPOINT

REAL = ep.semirings.get("real")


def _graph(n=60, density=0.06, seed=0, weighted=True, dangling=0):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=density, random_state=rng, format="csr")
    A.data[:] = rng.uniform(0.5, 3, A.nnz) if weighted else 1.0
    A = A.tolil()
    for v in range(dangling):
        A[v * 7 % n, :] = 0                  # rows without out-edges
    return sp.csr_array(A)


def _power(A, alpha=0.85, tol=1e-6, max_iter=100):
    """The dense power iteration of networkx / graphblas-algorithms."""
    M = A.toarray()
    n, deg = len(M), M.sum(axis=1)
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        w = np.where(deg > 0, alpha * x / np.where(deg > 0, deg, 1), 0)
        new = (1 - alpha) / n + alpha / n * x[deg == 0].sum() + M.T @ w
        if np.abs(new - x).sum() < n * tol:
            return new
        x = new
    raise AssertionError("no convergence")


@pytest.mark.parametrize("iso", [False, True])
def test_the_interpreter_runs_the_compiled_iteration_as_c_does(iso):
    A = _graph(weighted=not iso, dangling=3)
    G = graph.Graph(A)
    prog, roles = rank._iteration(rank._pull_kernel(iso, FIXPOINT, 1).compiled.program)
    T, _ = rank._operand(G)
    inv, dmask = G.cached("pagerank scale", rank._scale)
    n, alpha, tol = G.n, 0.85, 1e-8
    env = {"A_pos1": T.levels[1]["pos"].astype(np.int64),
           "A_crd1": T.levels[1]["crd"].astype(np.int64), "A_vals": np.asarray(T.vals),
           "w_vals": np.zeros(n), "out": np.zeros(n), "x": np.full(n, 1.0 / n), "inv": inv,
           "dangling": np.flatnonzero(dmask), "dangles": int(dmask.sum()),
           "consts": np.array([alpha, (1 - alpha) / n, alpha / n, n * tol]),
           "max_iter": 100, "dim": n}
    ran = run_program(prog, REAL, {p.name: env[role] for p, role in zip(prog.params, roles)
                                   if role != "steps"})
    x_c = rank._rank_in_c(G, alpha, tol, 100, FIXPOINT)
    assert ran["steps"] > 1
    np.testing.assert_allclose(ran["x"], x_c, rtol=1e-13, atol=0)


@pytest.mark.parametrize("weighted, dangling", [(True, 0), (False, 0), (True, 5), (False, 9)])
def test_the_c_iteration_agrees_with_the_per_step_driver_and_the_power_iteration(
        weighted, dangling):
    A = _graph(weighted=weighted, dangling=dangling, seed=dangling)
    G = graph.Graph(A)
    for tol in (1e-6, 1e-11):
        x, y = graph.pagerank(G, tol=tol, driver="c"), graph.pagerank(G, tol=tol,
                                                                      driver="python")
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-15)
        np.testing.assert_allclose(x, _power(A, tol=tol), rtol=0, atol=1e-12)
        assert abs(x.sum() - 1) < 1e-12
    with pytest.raises(graph.ConvergenceError, match="did not converge in max_iter=2"):
        graph.pagerank(G, tol=1e-12, max_iter=2, driver="c")


def _errors(A, steps, alpha=0.85):
    """Σ|x' − x| after each of the first `steps` power iterations."""
    M = A.toarray()
    n, deg = len(M), M.sum(axis=1)
    x, out = np.full(n, 1.0 / n), []
    for _ in range(steps):
        w = np.where(deg > 0, alpha * x / np.where(deg > 0, deg, 1), 0)
        new = (1 - alpha) / n + alpha / n * x[deg == 0].sum() + M.T @ w
        out.append(np.abs(new - x).sum())
        x = new
    return out


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_the_ranks_are_the_last_step_s_whichever_buffer_it_wrote(steps):
    A = _graph(seed=3, dangling=2)
    G, n = graph.Graph(A), A.shape[0]
    errs = _errors(A, steps)
    assert all(a > b for a, b in zip(errs, errs[1:]))
    tol = (errs[-1] + (errs[-2] if steps > 1 else 2 * errs[-1])) / 2 / n   # stops at `steps`
    want = graph.pagerank(G, tol=tol, driver="python")
    np.testing.assert_array_equal(graph.pagerank(G, tol=tol, driver="c"), want)
    with pytest.raises(graph.ConvergenceError):
        graph.pagerank(G, tol=tol, max_iter=steps - 1, driver="c") if steps > 1 else \
            graph.pagerank(G, tol=errs[0] / n / 2, max_iter=1, driver="c")


def test_every_input_kind_gives_the_same_ranks():
    A = _graph(dangling=4, seed=5)
    want = graph.pagerank(graph.Graph(A), driver="python")
    kinds = [A, A.tocsc(), A.toarray(), ep.Tensor.from_scipy(A, "csr"),
             ep.Tensor.from_scipy(A, "csc"), graph.Graph(A)]
    for kind in kinds:
        np.testing.assert_allclose(graph.pagerank(kind), want, rtol=0, atol=1e-15)
    with pytest.raises(ep.InputError, match="2-d ep.Tensor"):
        graph.pagerank(ep.Tensor.from_dense(np.ones(3)))


def test_a_matrix_written_in_place_between_calls_gives_the_new_ranks_or_an_input_error():
    A = _graph(seed=6)
    before = graph.pagerank(A)
    A.data[:] = np.random.default_rng(1).uniform(0.5, 3, A.nnz)     # new weights
    B = sp.csr_array((A.data.copy(), A.indices.copy(), A.indptr.copy()), shape=A.shape)
    after = graph.pagerank(A)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, graph.pagerank(graph.Graph(B), driver="python"),
                               rtol=0, atol=1e-15)
    A.indices[3] = A.shape[0] + 5                                 # not a vertex
    with pytest.raises(ep.InputError, match="A.indices"):
        graph.pagerank(A)
    A.indices[3] = 0
    A.data[0] = -1.0
    with pytest.raises(ep.InputError, match="negative weight"):
        graph.pagerank(A)

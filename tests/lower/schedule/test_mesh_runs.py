"""A mesh's rows run the unprefetched sizes' code (lower/schedule/mesh_runs.py,
Tuning.mesh_runs, the host's at -1: 1 on AMD Zen)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import host_facts, imp
from etchpy.lower.schedule import prefetch, size_switch
from etchpy.tuning import DEFAULT

SPMV = "y[i] = A[i, j] * x[j]"
N = imp.Load("A_pos1", imp.Var("A_dim0"))
ON = DEFAULT.with_(mesh_runs=1, run_mean_below=16, run_min_entries=1 << 19, prefetch_values=0)


def test_the_host_fact():
    assert host_facts.mesh_runs(("AuthenticAMD", 25)) == 1
    assert host_facts.mesh_runs(("GenuineIntel", 6)) == 0
    assert DEFAULT.mesh_runs == -1


def _ifs(prog, test):
    return [s for s in imp.statements(prog.body)
            if isinstance(s, imp.If) and test in size_switch.conjuncts(s.cond)]


def test_the_prefetched_copy_is_taken_only_where_the_rows_are_not_a_mesh():
    test = prefetch.large_runs(N, ON)
    prog = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON).compiled.build(True)
    ifs = _ifs(prog, test)
    picks = [s for s in imp.statements(prog.body) if isinstance(s, imp.GatherPick)
             and s.var.startswith(("A_far_all", "A_near"))]
    assert ifs[0].cond == test and any(p in imp.statements(ifs[0].then) for p in picks)
    near = [p for p in picks if p.near]
    assert len(near) == 1 and (near[0].near, near[0].share) == (8, 4)
    mesh = imp.seq_parts(ifs[0].then)[-1].name
    assert all(s.cond == imp.and_(test, imp.Not(imp.Var(mesh))) for s in ifs[1:]) and ifs[1:]
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON.with_(mesh_runs=0)).compiled
    assert [s.cond for s in _ifs(off.build(True), test)] == [test]
    assert "ep_near_pick(A_pos1, A_crd1, A_dim0, 8, 4)" in ep.compile(
        SPMV, formats={"A": "csr"}, tuning=ON).source("int32_t").c


def mesh_like(n: int):
    """Rows that are far (each spans n/2 columns) and near (six of seven steps 1): the
    mesh pick holds on every sampled row."""
    rows = []
    for i in range(n):
        a = i % (n // 2)
        rows.append(list(range(a, a + 4)) + list(range(a + n // 2 - 4, a + n // 2)))
    pos = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    crd = np.concatenate(rows)
    return sp.csr_array((np.arange(1.0, len(crd) + 1), crd, pos), shape=(n, n))


def others(n: int, rng):
    yield "mesh", mesh_like(n)
    yield "random", sp.random_array((n, n), density=8 / n, rng=rng, format="csr")
    grid = int(np.sqrt(n))
    t = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(grid, grid))
    yield "stencil", sp.csr_array(sp.kron(t, sp.eye(grid)) + sp.kron(sp.eye(grid), t))


@pytest.mark.parametrize("mesh_runs", [0, 1])
def test_every_copy_agrees_and_refuses_a_bad_coordinate(mesh_runs):
    """run_min_entries=0: the size test holds on these small matrices, so the call
    takes the prefetched copy or (a mesh under mesh_runs 1) the other."""
    rng = np.random.default_rng(75)
    tuning = ON.with_(run_min_entries=0, mesh_runs=mesh_runs)
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
    for label, A in others(1024, rng):
        A.indices = A.indices.astype(np.int32)
        A.indptr = A.indptr.astype(np.int32)
        x = rng.random(A.shape[1])
        np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12, err_msg=label)
        np.testing.assert_allclose(kern(A=ep.Tensor.from_scipy(A), x=x), A @ x, rtol=1e-12)
        bad = A.copy()
        bad.indices[len(bad.indices) // 2] = A.shape[1]
        with pytest.raises(ep.InputError, match="A"):
            kern(A=bad, x=x)

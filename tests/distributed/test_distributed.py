"""Kernels over a Dask cluster (etchpy.distributed) on a LocalCluster of two worker
processes on loopback: the distributed result equals the single-process one."""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, strategies as st

import etchpy as ep
from etchpy.distributed import resources, split
from etchpy.testing import assert_same, problems

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")

i, j, k, l = ep.indices("i j k l")
SEMIRINGS = ["real", "min_plus", "max_plus", "boolean", "integer", "max_times"]


def _values(sr, shape, density, seed):
    rng = np.random.default_rng(seed)
    sr = getattr(ep.semirings, sr)
    vals = rng.integers(1, 5, size=shape).astype(sr.dtype)
    return np.where(rng.random(shape) < density, vals, sr.zero).astype(sr.dtype)


@pytest.mark.parametrize("sr", SEMIRINGS)
@pytest.mark.parametrize("mode", [0, 1])
def test_spmv_split_free_and_contracted_index(client, sr, mode):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), semiring=sr)
    M = ep.Tensor.from_dense(_values(sr, (37, 29), 0.2, 1), "csr", semiring=sr)
    v = _values(sr, (29,), 1.0, 2)
    parts = ep.partition(M, mode=mode, blocks=3, client=client)
    assert [s.nnz for s in parts.stats] and sum(s.nnz for s in parts.stats) == M.nnz
    assert_same(kern(A=parts, x=v), kern(A=M, x=v), kern.semiring, f"{sr} mode {mode}")
    report = ep.distributed.explain(kern, A=parts, x=v)
    assert ("concatenated" if mode == 0 else "tree reduction") in report


def test_a_call_is_planned_once_from_the_blocks_sizes_added_up(client):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    M = sp.random(300, 70, density=0.05, format="csr", random_state=3)
    parts = ep.partition(M, mode=0, blocks=2, client=client)
    v = np.arange(70.0)
    np.testing.assert_allclose(kern(A=parts, x=v), M @ v)
    classes = [c for c in kern._planned if c[0] == "distributed"]
    assert len(classes) == 1
    planned, _ = kern._planned[classes[0]]
    if hasattr(planned, "resolve"):     # planned by an earlier process (a warm disk cache)
        planned = planned.resolve()
    assert planned is not None and planned.request.measured is not None
    assert dict(planned.request.measured.nnz)["A"] == M.nnz       # the whole, not a block
    assert dict(planned.request.measured.dims) == {"i": 300, "j": 70}


def test_scipy_input_dense_scalar_output_and_out(client):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    M = sp.random(50, 40, 0.1, format="csr", random_state=3)
    v = np.arange(40.0)
    parts = ep.partition(M, mode=0, blocks=2, client=client)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    out = np.empty(50)
    assert kern(A=parts, x=v, out=out) is out
    np.testing.assert_allclose(out, M @ v)
    total = ep.compile(ep.sum((i, j), A[i, j] * x[j]))
    np.testing.assert_allclose(total(A=parts, x=v), (M @ v).sum())


@pytest.mark.parametrize("sr", ["real", "min_plus", "boolean"])
@pytest.mark.parametrize("which", ["A0", "A1", "B1"])
def test_sparse_outputs(client, sr, which):
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum(j, A[i, j] * B[j, k]), semiring=sr, output="csr")
    MA = _values(sr, (20, 15), 0.2, 4)
    MB = _values(sr, (15, 18), 0.2, 5)
    whole = {"A": MA, "B": MB}
    name, mode = which[0], int(which[1])
    inputs = dict(whole, **{name: ep.partition(whole[name], mode=mode, blocks=2,
                                                client=client)})
    got, want = kern(**inputs), kern(**whole)
    assert type(got) is type(want)
    assert_same(got, want, kern.semiring, which)


def test_order_three_tensor_mttkrp(client):
    T, B, C = ep.tensor("T", 3, "csf"), ep.tensor("B", 2), ep.tensor("C", 2)
    kern = ep.compile(ep.sum((j, k), T[i, j, k] * B[j, l] * C[k, l]))
    dense = _values("real", (9, 8, 7), 0.3, 6)
    t = ep.Tensor.from_dense(dense, "csf")
    b, c = _values("real", (8, 4), 1.0, 7), _values("real", (7, 4), 1.0, 8)
    want = kern(T=t, B=b, C=c)
    for mode in (0, 1, 2):
        got = kern(T=ep.partition(t, mode=mode, blocks=2, client=client), B=b, C=c)
        np.testing.assert_allclose(got, want)


@settings(max_examples=12, deadline=None)
@given(p=problems(max_indices=3, max_occurrences=3), data=st.data())
def test_random_problems_equal_single_process(client, p, data):
    big = [n for n, v in p.inputs.items() if np.ndim(v) >= 1]
    assume(big)                       # a product of scalars alone: rare
    kern = ep.compile(p.expr, semiring=p.semiring)
    name = data.draw(st.sampled_from(big))
    value = ep.Tensor.from_dense(p.inputs[name], p.formats[name], semiring=p.semiring)
    inputs = dict(p.inputs, **{name: value})
    modes = [m for m in range(value.order) if split._why_not(kern, name, m) is None]
    want = kern(**inputs)
    if not modes:
        parts = ep.partition(value, mode=0, blocks=1, client=client)
        with pytest.raises(ep.InputError, match="cannot run kernel"):
            kern(**dict(inputs, **{name: parts}))
        assert "refused" in ep.distributed.explain(kern, **dict(inputs, **{name: parts}))
        return
    mode = data.draw(st.sampled_from(modes))
    blocks = min(2, value.shape[mode])
    parts = ep.partition(value, mode=mode, blocks=blocks, client=client)
    assert_same(kern(**dict(inputs, **{name: parts})), want, p.semiring, repr(p))


def _generated_block(b, rows, cols):
    return sp.random(rows, cols, 0.05, format="csr", random_state=b)


def test_dask_array_of_scipy_chunks_built_on_workers(client):
    dask = pytest.importorskip("dask")
    rows, cols = 30, 25
    chunks = [da.from_delayed(dask.delayed(_generated_block)(b, rows, cols), (rows, cols),
                              dtype=np.float64, meta=sp.csr_matrix((0, 0)))
              for b in range(3)]
    darr = da.concatenate(chunks, axis=0)
    parts = ep.partition(darr, mode=0, client=client)
    assert parts.bounds == ((0, 30), (30, 60), (60, 90))
    M = sp.vstack([_generated_block(b, rows, cols) for b in range(3)]).tocsr()
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    v = np.linspace(0, 1, cols)
    np.testing.assert_allclose(ep.compile(ep.sum(j, A[i, j] * x[j]))(A=parts, x=v), M @ v)
    dense = da.from_array(M.toarray(), chunks=(20, 10))
    parts = ep.partition(dense, mode=1, client=client)
    assert len(parts.bounds) == 3 and parts.shape == (90, 25)
    np.testing.assert_allclose(ep.compile(ep.sum(j, A[i, j] * x[j]))(A=parts, x=v), M @ v)


def test_refused_split_says_why_and_which_modes_work(client):
    A, x, b = ep.tensor("A", 2, "csr"), ep.tensor("x", 1), ep.tensor("b", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]) + b[i])
    M = sp.random(10, 8, 0.3, format="csr", random_state=1)
    parts = ep.partition(M, mode=1, blocks=2, client=client)
    inputs = dict(A=parts, x=np.ones(8), b=np.ones(10))
    with pytest.raises(ep.InputError, match=r"index j .* contracted inside.*modes \[0\]"):
        kern(**inputs)
    assert "refused" in ep.distributed.explain(kern, **inputs)
    rows = ep.partition(M, mode=0, blocks=2, client=client)
    np.testing.assert_allclose(kern(**dict(inputs, A=rows)), M @ np.ones(8) + 1)
    # a comparison is made from coordinates, which a block would see as its own
    upper = ep.compile(ep.sum(j, A[i, j] * (i < j)))
    with pytest.raises(ep.InputError, match="a diagonal or a comparison"):
        upper(A=rows)


def test_a_free_index_summed_again_inside_is_refused(client):
    """out[i] = A[i]·(Σ_i A[i])·B[i] split along B's i: each block would cut A to its
    rows, so the inner Σ_i would sum the block's part of A only (dev profile seed
    5011 drew it: 3 for the whole sum 5)."""
    A, B = ep.tensor("A", 1, "csf"), ep.tensor("B", 1)
    kern = ep.compile(A[i] * ep.sum(i, A[i]) * B[i])
    a, b = np.array([1.0, 2.0, -1.0, 3.0]), np.array([1.0, 0.0, 0.0, 0.0])
    assert "summed inside" in split._why_not(kern, "B", 0)
    parts = ep.partition(b, mode=0, blocks=2, client=client)
    with pytest.raises(ep.InputError, match="free in the output but also summed inside"):
        kern(A=a, B=parts)
    assert kern(A=a, B=b)[0] == 5.0


def test_memory_limit_is_checked_with_sizes():
    one, two = {"tcp://a": int(1.5e9)}, {"tcp://a": int(1.5e9), "tcp://b": int(1.5e9)}
    with pytest.raises(ep.InputError, match=r"block 1 needs 1\.40 GB .* limit is 1\.50 GB"):
        resources.check_memory("partition of A", {0: 10, 1: int(1.4e9)}, two)
    halves = {b: int(0.6e9) for b in range(4)}
    with pytest.raises(ep.InputError, match=r"blocks take 2\.40 GB .* 1\.50 GB together"):
        resources.check_memory("partition of A", halves, one)
    resources.check_memory("partition of A", halves, two)
    # a csr matrix of 2.4 GB that is never touched (calloc'ed), cut along its rows
    nnz, n = 150_000_000, 1_000
    M = sp.csr_array((np.zeros(nnz), np.zeros(nnz, dtype=np.int64),
                      np.linspace(0, nnz, n + 1).astype(np.int64)), shape=(n, n))
    sizes = resources.estimate(M, 0, [(0, 500), (500, 1000)])
    assert sum(sizes.values()) == M.data.nbytes + M.indices.nbytes + 1002 * 8
    with pytest.raises(ep.InputError, match=r"blocks take 2\.40 GB"):
        resources.check_memory("partition of A", sizes, one)


def test_worker_without_compiler_is_named(client, tmp_path):
    workers = sorted(client.scheduler_info()["workers"])
    saved = client.run(lambda: (os.environ.get("CC"), os.environ.get("ETCHPY_CACHE_DIR")),
                       workers=[workers[0]])[workers[0]]

    def set_env(cc, cache):
        for key, value in (("CC", cc), ("ETCHPY_CACHE_DIR", cache)):
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    client.run(set_env, "/nonexistent/cc", str(tmp_path / "empty"), workers=[workers[0]])
    try:
        A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
        kern = ep.compile(ep.sum(j, A[i, j] * x[j] * 3.0), name="no_cc_kernel")
        parts = ep.partition(sp.random(8, 8, 0.5, format="csr"), mode=0, blocks=2,
                             client=client)
        with pytest.raises(ep.EtchpyError, match=f"{workers[0]}.*could not build kernel "
                                                 "'no_cc_kernel'.*CC"):
            kern(A=parts, x=np.ones(8))
    finally:
        client.run(set_env, *saved, workers=[workers[0]])


def test_single_machine_path_never_imports_dask():
    code = ("import sys, numpy as np, etchpy as ep\n"
            "i, j = ep.indices('i j'); A = ep.tensor('A', 2); x = ep.tensor('x', 1)\n"
            "ep.compile(ep.sum(j, A[i, j] * x[j]))(A=np.eye(3), x=np.ones(3))\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', "
            "'distributed')], 'dask imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def _graph(n, m, seed):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    return sp.coo_array((rng.integers(1, 9, keep.sum()).astype(float),
                         (dst[keep], src[keep])), shape=(n, n)).tocsr()


def test_iterative_pagerank_bellman_ford_bfs_move_only_the_vector(client):
    n = 60
    W = _graph(n, 240, 9)                       # W[i, j]: an edge j -> i of weight W[i, j]
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    spmv = ep.sum(j, A[i, j] * x[j])
    # PageRank: column-stochastic P, the graph persisted once
    out_deg = np.asarray((W != 0).sum(axis=0)).ravel()
    P = (W != 0).astype(float) @ sp.diags_array(1 / np.maximum(out_deg, 1))
    P = sp.csr_array(P)
    P.sort_indices()
    parts = ep.partition(P, mode=0, blocks=2, client=client)
    kern, r, ref = ep.compile(spmv), np.full(n, 1 / n), np.full(n, 1 / n)
    for _ in range(20):
        r = 0.15 / n + 0.85 * kern(A=parts, x=r)
        ref = 0.15 / n + 0.85 * (P @ ref)
    np.testing.assert_allclose(r, ref)
    # Bellman-Ford over min_plus from vertex 0, until nothing changes
    parts = ep.partition(W, mode=1, blocks=2, client=client)      # a contracted split
    relax = ep.compile(spmv, semiring="min_plus")
    dist = np.full(n, np.inf)
    dist[0] = 0.0
    for _ in range(n):
        new = np.minimum(dist, relax(A=parts, x=dist))
        if np.array_equal(new, dist):
            break
        dist = new
    from scipy.sparse.csgraph import shortest_path
    want = shortest_path(sp.csr_matrix(W.T), method="BF", indices=0)
    np.testing.assert_array_equal(dist, want)
    # BFS over boolean: levels from vertex 0
    parts = ep.partition(W != 0, mode=0, blocks=2, client=client)
    step = ep.compile(spmv, semiring="boolean")
    level = np.full(n, -1)
    frontier = np.zeros(n, dtype=bool)
    frontier[0], level[0] = True, 0
    for depth in range(1, n):
        reached = step(A=parts, x=frontier) & (level < 0)
        if not reached.any():
            break
        level[reached], frontier = depth, reached
    hops = shortest_path(sp.csr_matrix((W != 0).T.astype(float)), unweighted=True, indices=0)
    np.testing.assert_array_equal(level, np.where(np.isinf(hops), -1, hops))


def test_two_partitioned_inputs_split_together_or_refused(client):
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(A[i, j] * B[i, j], output="csr")
    M = sp.random(30, 20, 0.3, format="csr", random_state=2)
    N = sp.random(30, 20, 0.3, format="csr", random_state=3)
    got = kern(A=ep.partition(M, mode=0, blocks=3, client=client),
               B=ep.partition(N, mode=0, blocks=3, client=client))
    assert_same(got, kern(A=M, B=N), kern.semiring, "both split along i")
    with pytest.raises(ep.InputError, match="different bounds"):
        kern(A=ep.partition(M, mode=0, blocks=3, client=client),
             B=ep.partition(N, mode=0, blocks=2, client=client))
    with pytest.raises(ep.InputError, match="split along index i but B along mode 1"):
        kern(A=ep.partition(M, mode=0, blocks=2, client=client),
             B=ep.partition(N, mode=1, blocks=2, client=client))

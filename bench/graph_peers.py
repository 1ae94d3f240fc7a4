"""The peers of bench.graphs, one thread: graphblas-algorithms where it has the
algorithm, a masked vxm loop in python-graphblas where it has not (components),
and scipy.sparse.csgraph. Each takes what `prepare` made (outside the timing)
and returns a numpy array comparable with etchpy.graph's result."""
from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as cg

try:
    import graphblas as gb
    import graphblas_algorithms as ga
    gb.ss.config["nthreads"] = 1
except ImportError:            # the bench runs with the scipy peers alone
    gb = ga = None


def prepare(A, directed: bool):
    """{"scipy": csr, "G": a graphblas-algorithms graph, "M": its graphblas Matrix}."""
    out = {"scipy": A}
    if gb is not None:
        M = gb.io.from_scipy_sparse(A)
        out["M"], out["G"] = M, (ga.DiGraph(M) if directed else ga.Graph(M))
    return out


def _dense(v, n, fill):
    return v.to_dense(fill_value=fill) if v.size == n else np.full(n, fill)


def bellman_ford_peers(p, s):
    n = p["scipy"].shape[0]
    # scipy's bellman_ford is O(V·E) (30 s at R-MAT scale 14): its dijkstra stands in
    peers = {"scipy.dijkstra": lambda: cg.dijkstra(p["scipy"], indices=s)}
    if ga is not None:
        peers["gb-algorithms"] = lambda: _dense(
            ga.single_source_bellman_ford_path_length(p["G"], s), n, np.inf)
    return peers


def bfs_peers(p, s):
    n = p["scipy"].shape[0]
    peers = {"scipy.breadth_first_order": lambda: levels_of(
        *cg.breadth_first_order(p["scipy"], s, return_predecessors=True), s)}
    if ga is not None:
        peers["gb-algorithms"] = lambda: _dense(
            ga.single_source_shortest_path_length(p["G"], s), n, -1).astype(np.int64)
    return peers


def levels_of(order, pred, s):
    """BFS levels from scipy's order and predecessors (-1 unreached), by pointer
    doubling: d[v] is the number of edges from v up to its ancestor anc[v]."""
    n = len(pred)
    anc = np.where(pred >= 0, pred, np.arange(n))
    d = (pred >= 0).astype(np.int64)
    while True:
        up = anc[anc]
        if np.array_equal(up, anc):
            break
        d, anc = d + d[anc], up
    level = np.full(n, -1, dtype=np.int64)
    level[order] = d[order]
    return level


def pagerank_peers(p, tol):
    if ga is None:
        return {}
    n = p["scipy"].shape[0]
    return {"gb-algorithms": lambda: _dense(ga.pagerank(p["G"], tol=tol), n, 0.0)}


def components_peers(p):
    peers = {"scipy": lambda: cg.connected_components(p["scipy"], directed=False)[1]}
    if gb is not None:
        peers["graphblas vxm loop"] = lambda: gb_components(p["M"])
    return peers


def gb_components(M):
    """Min-label propagation in python-graphblas, a masked vxm loop: push the labels
    that changed (the frontier) through A with min_first; keep the improvements."""
    n = M.nrows
    labels = gb.Vector.from_coo(np.arange(n), np.arange(n), size=n)
    front = labels.dup()
    t = gb.Vector(labels.dtype, n)
    better = gb.Vector(bool, n)
    while front.nvals:
        t << gb.semiring.min_first(front @ M)
        better << gb.binary.lt(t & labels)
        front(better.V, replace=True) << t
        labels(better.V) << t
    return labels.to_dense()

"""The cost of a call, graph part of `python -m bench calls` (issue 39):

  graph  BFS levels, connected components, Bellman-Ford and PageRank with a scipy
         csr matrix passed on every call, and with a reused ep.graph.Graph,
         against scipy.sparse.csgraph (breadth_first_order without predecessors,
         connected_components(directed=False), dijkstra from the source) and
         python-graphblas (graphblas-algorithms' pagerank on a DiGraph made once,
         outside the timing; one thread). Targets: ≤ 1.0× each.

Graphs (int32 indices, canonical, undirected, weights uniform in [1, 10), seeds
fixed): the 4-neighbour grids 300², 600², 1000² (quick: 300²); others that are
not generated grids: the pixel graphs of scikit-image's `camera` photograph
(512² pixels, 4-neighbours joined where their grey levels differ by at most 8:
many components of every size) and of its `retina` fundus photograph (1411²,
not with --quick) and, when scikit-fem imports, the P2 Laplacian of
scikit-fem's unstructured disc mesh (init_circle, 6 refinements; 7 too without
--quick). The source is the middle vertex of the largest component. Each way
of calling etchpy alternates with the peer, one call at a time
(bench.calls.alternate), in its own pair: each side then runs right after the
other, so what one call leaves behind (caches holding its arrays or evicted,
memory handed back to the system that the next call's arrays fault in again;
a python-graphblas call slows what follows it) falls on both sides alike. The
ratios are of medians.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

from etchpy import graph

from bench import graph_inputs as gi
from bench import graph_peers as gp

TOL = 1e-6


def _int32(A):
    """A canonical csr array with int32 index arrays (scipy's own choice when they fit)."""
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.sort_indices()
    return sp.csr_array((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                        shape=A.shape)


def camera_graph(most: int = 8):
    """scikit-image's camera photograph as a graph (pixel_graph)."""
    import skimage.data
    return pixel_graph(skimage.data.camera(), most)


def retina_graph(most: int = 8):
    """scikit-image's retina photograph (a fundus image, 1411² pixels; its grey
    levels the mean of the three channels) as a graph (pixel_graph)."""
    import skimage.data
    return pixel_graph(skimage.data.retina().mean(axis=2).round(), most)


def pixel_graph(img, most: int):
    """The pixels of a grey image joined to their 4 neighbours of grey levels
    within `most`, weights uniform in [1, 10)."""
    img = np.asarray(img).astype(np.int16)
    v = np.arange(img.size).reshape(img.shape)
    pairs = []
    for a, b, ia, ib in [(v[:, :-1], v[:, 1:], img[:, :-1], img[:, 1:]),
                         (v[:-1, :], v[1:, :], img[:-1, :], img[1:, :])]:
        keep = np.abs(ia - ib) <= most
        pairs.append((a[keep], b[keep]))
    r = np.concatenate([p[0] for p in pairs])
    c = np.concatenate([p[1] for p in pairs])
    w = np.random.default_rng(7).uniform(1.0, 10.0, len(r))
    A = sp.coo_array((np.r_[w, w], (np.r_[r, c], np.r_[c, r])), shape=(img.size,) * 2)
    return _int32(A)


def fem_graph(refinements: int):
    """The P2 Laplacian of scikit-fem's disc mesh: its pattern, weights in [1, 10)."""
    import skfem
    from skfem.helpers import dot, grad

    @skfem.BilinearForm
    def laplace(u, v, _):
        return dot(grad(u), grad(v))
    basis = skfem.Basis(skfem.MeshTri.init_circle(refinements), skfem.ElementTriP2())
    A = _int32(laplace.assemble(basis))
    A.data = np.random.default_rng(refinements).uniform(1.0, 10.0, A.nnz)
    return _int32(A + A.T)


def graphs(quick: bool):
    """(name, canonical csr matrix) per graph, made when reached."""
    for side in (300,) if quick else (300, 600, 1000):
        yield f"grid {side}²", _int32(gi.grid(side))
    yield "camera pixels 512²", camera_graph()
    if not quick:
        yield "retina pixels 1411²", retina_graph()
    try:
        import skfem  # noqa: F401
    except ImportError:
        return
    for k in (6,) if quick else (6, 7):
        yield f"scikit-fem P2 disc r{k}", fem_graph(k)


def cases(A, given=None, **kw):
    """(algorithm, etchpy call of an adjacency argument, peer name, peer call,
    agree(etchpy answer, peer-side answer), peer-side answer maker); csgraph's
    calls get `given` (A in another scipy kind; default A); kw (tuning=) goes to
    every etchpy call."""
    P = A if given is None else given
    _, label = cg.connected_components(A, directed=False)
    big = np.flatnonzero(label == np.argmax(np.bincount(label)))
    s = int(big[len(big) // 2])        # the middle vertex of the largest component
    peer_graph = gp.prepare(A, True).get("G")
    out = [
        ("bfs_levels", lambda M: graph.bfs_levels(M, s, **kw), "csgraph.breadth_first_order",
         lambda: cg.breadth_first_order(P, s, return_predecessors=False),
         lambda: gp.levels_of(*cg.breadth_first_order(A, s), s), np.array_equal),
        ("components", lambda M: graph.connected_components(M, directed=False, **kw),
         "csgraph.connected_components",
         lambda: cg.connected_components(P, directed=False),
         lambda: cg.connected_components(A, directed=False)[1], same_partition),
        ("bellman_ford", lambda M: graph.bellman_ford(M, s, **kw), "csgraph.dijkstra",
         lambda: cg.dijkstra(P, indices=s), lambda: cg.dijkstra(A, indices=s),
         lambda a, b: np.allclose(a, b, rtol=1e-12)),
    ]
    if peer_graph is not None:
        rank = gp.pagerank_peers({"scipy": A, "G": peer_graph}, TOL)["gb-algorithms"]
        out.append(("pagerank", lambda M: graph.pagerank(M, tol=TOL, **kw), "graphblas pagerank",
                    rank, rank, lambda a, b: float(np.abs(a - b).sum()) < 2 * len(a) * TOL))
    return out


def same_partition(a, b) -> bool:
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def part_graph(quick, seconds, say, calls) -> list[dict]:
    """The rows of the graph part (see the module docstring)."""
    rows = []
    for gname, A in graphs(quick):
        G = graph.Graph(A)
        say(f"    {gname}: n={A.shape[0]:,}, nnz={A.nnz:,}, "
            f"{cg.connected_components(A, directed=False)[0]:,} components")
        for alg, ours, peer_name, peer, reference, agree in cases(A):
            if not (agree(ours(A), reference()) and agree(ours(G), reference())):
                raise AssertionError(f"{alg} on {gname}: etchpy and {peer_name} disagree")
            span = seconds * (2 if A.nnz > 10**6 else 1)
            for way, arg in (("scipy csr each call", A), ("reused Graph", G)):
                mine, theirs = calls.alternate([lambda arg=arg: ours(arg), peer], span, most=2000)
                rows.append(calls.row("graph", f"{alg} {gname}, {way}", mine, peer_name,
                                      theirs, 1.0, nnz=int(A.nnz), graph=gname,
                                      algorithm=alg, input=way))
                calls.say_row(rows[-1], say)
    return rows

"""Graph fixpoints (etchpy.graph) against graphblas-algorithms, a python-graphblas
vxm loop and scipy.sparse.csgraph, one thread; and the skewed triangle query.

    python -m bench.graphs [--quick] [--rounds N] [--only NAME[,NAME...]]
                           [--graphs rmat,er,grid] [--skip-peers NAME[,NAME...]]
    python -m bench.graphs --only pull [--graphs ...]   (PageRank's kernel alone)

Graphs (bench/graph_inputs.py, seeds fixed): R-MAT scale 18, edge factor 16
(a, b, c = 0.57, 0.19, 0.19); Erdős–Rényi with 10**6 vertices and 10**7 edges; the
1000×1000 grid. `--quick` uses scale 14, 10**5/10**6 and 300×300. Weights are
uniform in [1, 10) for Bellman-Ford; BFS and components read the symmetrised
graph; the source is the vertex of most out-edges. Each implementation's graph
object (an etchpy.graph.Graph, a graphblas-algorithms Graph, the scipy csr
matrix) is made once, outside the timing; each caches what it derives. Calls
alternate etchpy and each peer; the table gives medians and the ratio
etchpy / fastest peer, after checking the answers agree (distances and levels
equal, PageRank within the tolerance, components as partitions).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import os

import numpy as np

from etchpy import graph
from bench import graph_inputs as gi
from bench import graph_peers as gp
from bench.timing import fmt_time, timed

TOL = 1e-6


def graphs(quick: bool, kinds=("rmat", "er", "grid")):
    """(name, directed weighted csr, symmetric csr) per graph, made when reached."""
    scale, n, m, side = (14, 10**5, 10**6, 300) if quick else (18, 10**6, 10**7, 1000)
    if "rmat" in kinds:
        yield f"rmat{scale}", gi.rmat(scale), gi.rmat(scale, symmetric=True)
    if "er" in kinds:
        yield f"er{n:.0e}", gi.erdos_renyi(n, m), gi.erdos_renyi(n, m, symmetric=True)
    if "grid" in kinds:
        g = gi.grid(side)
        yield f"grid{side}", g, g


def same_partition(a, b) -> bool:
    """Two labelings define the same partition of the vertices."""
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def cases(directed, symmetric):
    """(algorithm, etchpy call, {peer: call}, agree(etchpy, peer)) for one graph."""
    s = int(np.argmax(np.diff(directed.indptr)))       # the vertex of most out-edges
    pd, ps = gp.prepare(directed, True), gp.prepare(symmetric, False)
    pattern = directed.copy()
    pattern.data[:] = 1.0          # PageRank reads the unweighted graph
    pp = gp.prepare(pattern, True)
    gd, gs, gpat = graph.Graph(directed), graph.Graph(symmetric), graph.Graph(pattern)
    pr_close = lambda a, b: float(np.abs(a - b).sum()) < 2 * len(a) * TOL  # noqa: E731
    return [
        ("bellman_ford", lambda: graph.bellman_ford(gd, s),
         gp.bellman_ford_peers(pd, s), lambda a, b: np.allclose(a, b, rtol=1e-12)),
        ("bfs_levels", lambda: graph.bfs_levels(gs, s), gp.bfs_peers(ps, s),
         np.array_equal),
        ("pagerank", lambda: graph.pagerank(gpat, tol=TOL), gp.pagerank_peers(pp, TOL),
         pr_close),
        ("components", lambda: graph.connected_components(gs, directed=False),
         gp.components_peers(ps), same_partition),
    ]


def measure(ours, peers, agree, rounds):
    """(etchpy median, {peer: median}, {peer: answers agree}); calls alternate."""
    _, mine = timed(ours)                                  # warm-up: compile and plan
    answers = {name: timed(call)[1] for name, call in peers.items()}
    ok = {name: bool(agree(mine, theirs)) for name, theirs in answers.items()}
    t_ours, t_peer = [], {name: [] for name in peers}
    for _ in range(rounds):
        for name, call in peers.items():
            t_ours.append(timed(ours)[0])
            t_peer[name].append(timed(call)[0])
    return float(np.median(t_ours)), {k: float(np.median(v)) for k, v in t_peer.items()}, ok


def run_graphs(quick, rounds, only, kinds, skip=()):
    print(f"one thread; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(other processes share the machine: noisy)")
    print(f"{'graph':<10} {'algorithm':<13} {'etchpy':>9}  {'fastest peer':<36} ratio  agree")
    for gname, directed, symmetric in graphs(quick, kinds.split(",")):
        print(f"{gname}: n={directed.shape[0]}, directed nnz={directed.nnz}, "
              f"symmetric nnz={symmetric.nnz}", flush=True)
        for alg, ours, peers, agree in cases(directed, symmetric):
            if only and alg not in only.split(","):
                continue
            peers = {k: v for k, v in peers.items() if k not in skip}
            mine, theirs, ok = measure(ours, peers, agree, rounds)
            best = min(theirs, key=theirs.get)
            others = ", ".join(f"{k} {fmt_time(v)}" for k, v in theirs.items() if k != best)
            print(f"{gname:<10} {alg:<13} {fmt_time(mine):>9}  "
                  f"{best + ' ' + fmt_time(theirs[best]):<36} {mine / theirs[best]:5.2f}  "
                  f"{all(ok.values())}  ({others})", flush=True)
            if not all(ok.values()):
                print(f"  DISAGREE: {ok}")


def triangles(ns, rounds, tuning=None):
    """Seconds per n of Σ_{a,b,c} R[a,b]·S[b,c]·T[a,c] on the skewed instance."""
    import etchpy as ep
    a, b, c = ep.indices("a b c")
    R, S, T = (ep.tensor(x, 2, format="csr") for x in "RST")
    kern = ep.compile(ep.sum((a, b, c), R[a, b] * S[b, c] * T[a, c]), tuning=tuning)
    times = []
    for n in ns:
        m = ep.Tensor.from_scipy(gi.skewed(n), "csr")
        _, value = timed(lambda: kern(R=m, S=m, T=m))
        assert value == 3 * n - 2, (n, value)      # (0,0,0), and (0,i,0),(i,0,0),(0,0,i)…
        times.append(float(np.median([timed(lambda: kern(R=m, S=m, T=m))[0]
                                      for _ in range(rounds)])))
    return times


def run_triangles(quick, rounds):
    for label, tuning, top in (("default plan", None, 10**5),
                               ("markers off", {"markers": False}, 10**6)):
        ns = [n for n in (10**3, 10**4, 10**5, 10**6) if n <= (top // 10 if quick else top)]
        ts = triangles(ns, rounds, tuning)
        slope = np.polyfit(np.log(ns[1:]), np.log(ts[1:]), 1)[0] if len(ns) > 2 else float("nan")
        cells = ", ".join(f"n={n:.0e}: {fmt_time(t)}" for n, t in zip(ns, ts))
        print(f"skewed triangles, {label}: {cells}; fitted exponent {slope:.2f}", flush=True)


def pull_step(graphs_, rounds):
    """PageRank's kernel alone, `c + Σ_j A[j,i]·w[j]` (A csc, a Tensor), with the
    steps lowered one by one, with fused rows, and with fused rows reading A as a
    pattern (iso), against scipy's `A.T @ w`; calls alternated, medians."""
    import etchpy as ep
    i, j = ep.indices("i j")
    for gname, directed, _ in graphs_:
        M = directed.copy()
        M.data[:] = 1.0
        T = ep.Tensor.from_scipy(M.tocsc(), "csc")
        w, out, c = np.random.default_rng(0).random(M.shape[0]), np.empty(M.shape[0]), 0.1

        def kern(iso, **tuning):
            A = ep.tensor("A", 2, "csc", iso=iso)
            e = ep.tensor("c", 0)[()] + ep.sum(j, A[j, i] * ep.tensor("w", 1)[j])
            return ep.compile(e, tuning=tuning or None)
        ways = {"one by one": (kern(False, fused_rows=False), T), "fused": (kern(False), T),
                "fused, pattern": (kern(True), T.pattern())}
        Mt = M.T.tocsr()
        times = {name: [] for name in [*ways, "scipy"]}
        for _ in range(rounds):
            for name, (k, t) in ways.items():
                times[name].append(timed(lambda: k(A=t, w=w, c=np.float64(c), out=out))[0])
            times["scipy"].append(timed(lambda: Mt @ w)[0])
        med = {name: float(np.median(v)) for name, v in times.items()}
        print(f"{gname} pull step: " + ", ".join(
            f"{name} {fmt_time(v)} ({v / med['scipy']:.2f}x scipy)" for name, v in med.items()),
            flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small graphs")
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per implementation")
    ap.add_argument("--only", default="", help="algorithms (comma-separated: bellman_ford, "
                    "bfs_levels, pagerank, components), or 'triangles', or 'pull' "
                    "(PageRank's kernel alone)")
    ap.add_argument("--graphs", default="rmat,er,grid", help="comma-separated: rmat, er, grid")
    ap.add_argument("--skip-peers", default="", help="peers not run (comma-separated names "
                    "as printed, e.g. 'graphblas vxm loop', which takes minutes on the grid)")
    args = ap.parse_args(argv)
    if args.only == "pull":
        return pull_step(graphs(args.quick, args.graphs.split(",")), args.rounds)
    if args.only != "triangles":
        run_graphs(args.quick, args.rounds, args.only, args.graphs,
                   tuple(filter(None, args.skip_peers.split(","))))
    if args.only in ("", "triangles"):
        run_triangles(args.quick, args.rounds)


if __name__ == "__main__":
    main()

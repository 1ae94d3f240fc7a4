"""Graph calls in thread CPU time (issue 39), one process:

    python -m bench.graph_probe grid300,camera,digits bfs_levels,pagerank [SECONDS]
        [--kind csr|csr_matrix|csc|coo] [--against FIELD=VALUE[,FIELD=VALUE]]

For each graph and algorithm of bench.calls_graph.cases, three calls are
alternated one at a time in a new shuffled order each round (gc paused):
etchpy with the scipy matrix (a canonical int32 csr_array, or that matrix as
--kind: the peer gets it too), etchpy with a reused ep.graph.Graph, and the
peer; about SECONDS (3) per case, 15 to 2000 rounds. With --against, etchpy
under the default Tuning with those fields changed (0/1 for switches) joins
the alternation, both ways, so an optimisation is timed against its own
switch in one process. Prints the medians of time.thread_time per call
(preemption by other processes is not counted, as wall-clock medians on a
shared machine count it) and their ratios to the peer's, and the ratios of
wall-clock medians.

Graphs: gridN (the N×N grid), camera, retina, coins, moon (scikit-image
photographs as pixel graphs, bench.calls_graph.pixel_graph), femK
(scikit-fem's P2 disc, K refinements), karate, lesmis (networkx's graphs),
digits (scikit-learn's digits joined to their 10 nearest neighbours, both
ways); weights uniform in [1, 10).
"""
from __future__ import annotations

import gc
import random
import sys
import time

import numpy as np
import scipy.sparse as sp

from bench import _env  # noqa: F401  (environment first)
from bench import calls_graph as cgr, graph_inputs as gi
from etchpy import graph
from etchpy.tuning import DEFAULT


def _networkx(name):
    import networkx as nx
    g = {"karate": nx.karate_club_graph, "lesmis": nx.les_miserables_graph}[name]()
    M = nx.to_scipy_sparse_array(g, weight=None, format="csr").astype(float)
    M.data = np.random.default_rng(1).uniform(1.0, 10.0, M.nnz)
    return cgr._int32(M + M.T)


def _digits():
    from sklearn.datasets import load_digits
    from sklearn.neighbors import kneighbors_graph
    M = kneighbors_graph(load_digits().data, 10, mode="distance")
    return cgr._int32(M + M.T)


def make(name: str):
    """The graph called `name` (module docstring) as a canonical int32 csr matrix."""
    if name.startswith("grid"):
        return cgr._int32(gi.grid(int(name[4:])))
    if name.startswith("fem"):
        return cgr.fem_graph(int(name[3:]))
    if name in ("karate", "lesmis"):
        return _networkx(name)
    if name == "digits":
        return _digits()
    if name == "retina":
        return cgr.retina_graph()
    import skimage.data
    return cgr.pixel_graph(getattr(skimage.data, name)(), 8)


def alternate(fns, rounds: int):
    """(thread CPU medians, wall medians) of fns called alternately, in seconds."""
    cpu, wall = [[] for _ in fns], [[] for _ in fns]
    order, shuffle = list(range(len(fns))), random.Random(0).shuffle
    gc.disable()
    try:
        for _ in range(rounds):
            shuffle(order)
            for k in order:
                w0, c0 = time.perf_counter(), time.thread_time()
                fns[k]()
                cpu[k].append(time.thread_time() - c0)
                wall[k].append(time.perf_counter() - w0)
    finally:
        gc.enable()
    return [float(np.median(c)) for c in cpu], [float(np.median(w)) for w in wall]


KINDS = {"csr": lambda A: A, "csr_matrix": sp.csr_matrix, "csc": sp.csc_array,
         "coo": sp.coo_array}


def main(names, algorithms, seconds: float = 3.0, kind: str = "csr", against=None) -> None:
    for name in names:
        A = make(name)
        G, M = graph.Graph(A), KINDS[kind](A)
        more = cgr.cases(A, M, tuning=DEFAULT.with_(**against)) if against else None
        for k, (alg, ours, _, peer, reference, agree) in enumerate(cgr.cases(A, M)):
            if alg not in algorithms:
                continue
            if not (agree(ours(M), reference()) and agree(ours(G), reference())):
                raise AssertionError(f"{alg} on {name}: etchpy and its peer disagree")
            fns = [lambda: ours(M), lambda: ours(G), peer]
            if more:
                fns += [lambda o=more[k][1]: o(M), lambda o=more[k][1]: o(G)]
            t0 = time.perf_counter()
            for f in fns:
                f()
            rounds = int(max(15, min(2000, seconds / (time.perf_counter() - t0))))
            cpu, wall = alternate(fns, rounds)
            extra = (f" | against: {cpu[3] * 1e6:9.1f} / {cpu[4] * 1e6:9.1f} ratio "
                     f"{cpu[3] / cpu[2]:.2f} / {cpu[4] / cpu[2]:.2f}") if more else ""
            print(f"{name:8s} {alg:13s} n={A.shape[0]:<8d} rounds={rounds:<5d} cpu us: {kind} "
                  f"{cpu[0] * 1e6:9.1f} Graph {cpu[1] * 1e6:9.1f} peer {cpu[2] * 1e6:9.1f} | "
                  f"ratio {cpu[0] / cpu[2]:.2f} / {cpu[1] / cpu[2]:.2f} | wall "
                  f"{wall[0] / wall[2]:.2f} / {wall[1] / wall[2]:.2f}{extra}", flush=True)


def _arguments(argv):
    import argparse
    p = argparse.ArgumentParser(description="graph calls in thread CPU time")
    p.add_argument("graphs")
    p.add_argument("algorithms")
    p.add_argument("seconds", nargs="?", type=float, default=3.0)
    p.add_argument("--kind", choices=sorted(KINDS), default="csr")
    p.add_argument("--against", default="")
    a = p.parse_args(argv)
    fields = {}
    for item in filter(None, a.against.split(",")):
        key, value = item.split("=")
        fields[key] = type(getattr(DEFAULT, key))(float(value) if "." in value else int(value))
    return a.graphs.split(","), a.algorithms.split(","), a.seconds, a.kind, fields


if __name__ == "__main__":
    main(*_arguments(sys.argv[1:]))

"""Where a lazy program with nothing to fuse spends its time beyond numpy's, on a dense X.

    python -m bench.lazy_split [--m 1000 500] [--rounds 301]

For the logistic and least-squares gradients of bench.lazy on a dense X m×m (one
thread: bench._env), in one process, call by call in turn: numpy as written;
etchpy's *build* (the ep.lazy wrappings and the operators: its nodes) and its
*compute* (ep.compute of those nodes: the program's lookup and replay), timed
apart; and *bare*, the replay's own steps written by hand (the binder's BLAS
product twice and numpy's element-wise work between), which is what etchpy's
call would cost with no Python around it. Thread CPU time, so that waiting
for the other core is not counted; percentiles 10 and 50 of each, and
numpy's median over etchpy's (build + compute).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import gc
import time

import numpy as np

import etchpy as ep
from etchpy.lazy import c_nodes
from bench.lazy import logistic_gradient, least_squares_gradient

PROGRAMS = {
    "logistic": (logistic_gradient, lambda X, w, y: X.T @ (1 / (1 + np.exp(-(X @ w))) - y),
                 lambda p, X, w, y: p(X, 1 / (1 + np.exp(-p(X, w, False))) - y, True)),
    "least squares": (least_squares_gradient, lambda X, w, y: X.T @ (X @ w - y),
                      lambda p, X, w, y: p(X, p(X, w, False) - y, True)),
}


def measure(m: int, rounds: int, say=print) -> None:
    rng = np.random.default_rng(0)
    X, w, y = rng.random((m, m)) / m, rng.standard_normal(m) / m ** 0.5, rng.random(m)
    product = c_nodes.product()
    for name, (prog, peer, bare) in PROGRAMS.items():
        got = ep.compute(*prog(ep, ep.lazy(X), ep.lazy(w), ep.lazy(y)))
        assert np.allclose(got[0] if isinstance(got, tuple) else got, peer(X, w, y))
        times = {k: [] for k in ("numpy", "build", "compute", "bare")}
        gc.disable()
        try:
            for _ in range(rounds):
                t = time.thread_time()
                peer(X, w, y)
                times["numpy"].append(time.thread_time() - t)
                t = time.thread_time()
                nodes = prog(ep, ep.lazy(X), ep.lazy(w), ep.lazy(y))
                times["build"].append(time.thread_time() - t)
                t = time.thread_time()
                ep.compute(*nodes)
                times["compute"].append(time.thread_time() - t)
                if product is not None:
                    t = time.thread_time()
                    bare(product, X, w, y)
                    times["bare"].append(time.thread_time() - t)
        finally:
            gc.enable()
        us = {k: np.array(v) * 1e6 for k, v in times.items() if v}
        parts = "  ".join(f"{k} {np.percentile(v, 10):.1f}/{np.median(v):.1f}"
                          for k, v in us.items())
        ours = np.median(us["build"] + us["compute"])
        say(f"{name:14s} X {m}×{m}  µs p10/p50: {parts}  numpy/etchpy "
            f"{np.median(us['numpy']) / ours:.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="+", default=[1000, 500])
    ap.add_argument("--rounds", type=int, default=301)
    args = ap.parse_args(argv)
    for m in args.m:
        measure(m, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

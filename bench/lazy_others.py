"""Lazy programs with nothing to fuse beyond bench.lazy's three, against numpy/scipy.

    python -m bench.lazy_others [--m 100 500 1000] [--sparse 1000 5000] [--rounds 61]

The check that a change for bench.lazy's gradients is not fitted to them: a
ridge gradient, a Poisson-regression gradient, a two-layer MLP's forward
(hidden width 32, 10 outputs), a least-squares gradient with 10 outputs,
and bench.lazy's logistic and softmax gradients again, on a dense X m×m
(entries in [0, 1)/m) and on a scipy csr X m×m at 1% density. Each program is
built from operators and computed under `tuning=None` in the timed call, as a
training loop does; numpy/scipy runs it as written. One thread (bench._env),
one process, calls alternating (each side first in every other round), thread
CPU time, medians; the speedup is numpy's median over etchpy's.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep


def ridge(F, X, w, y):
    return X.T @ (X @ w - y) + 0.1 * w


def poisson(F, X, w, y):
    return X.T @ (F.exp(X @ w) - y)


def mlp(F, X, W1, W2):
    return F.maximum(X @ W1, 0) @ W2


def outputs(F, X, W, Y):
    return X.T @ (X @ W - Y)


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def softmax(F, X, V, Y):
    E = F.exp(X @ V)
    return X.T @ (E / E.sum(axis=1, keepdims=True) - Y)


def cases(X, m: int, rng) -> dict:
    """{name: (program, arguments)} on X (m rows and columns)."""
    vec, mat = rng.standard_normal(m) / m ** 0.5, rng.standard_normal((m, 10)) / m ** 0.5
    return {"ridge": (ridge, (X, vec, rng.random(m))),
            "poisson": (poisson, (X, vec, rng.random(m))),
            "mlp h=32": (mlp, (X, rng.standard_normal((m, 32)) / m ** 0.5,
                               rng.standard_normal((32, 10)))),
            "10 outputs": (outputs, (X, mat, rng.random((m, 10)))),
            "logistic": (logistic, (X, vec, rng.random(m))),
            "softmax": (softmax, (X, mat, np.eye(10)[rng.integers(0, 10, m)]))}


def measure(m: int, sparse: bool, rounds: int, say=print) -> None:
    rng = np.random.default_rng(0)
    X = (sp.random_array((m, m), density=0.01, format="csr", random_state=1) if sparse
         else rng.random((m, m)) / m)
    for name, (prog, args) in cases(X, m, rng).items():
        def ours(prog=prog, args=args):
            return ep.compute(prog(ep, *(ep.lazy(a) for a in args)))

        def peer(prog=prog, args=args):
            return prog(np, *args)
        got, want = ours(), peer()
        got = got.toarray() if hasattr(got, "toarray") else got
        assert np.allclose(got, want.toarray() if hasattr(want, "toarray") else want), name
        times: dict = {ours: [], peer: []}
        for r in range(rounds):
            for f in ((ours, peer) if r % 2 else (peer, ours)):
                t = time.thread_time()
                f()
                times[f].append(time.thread_time() - t)
        tp, te = np.median(times[peer]), np.median(times[ours])
        say(f"{'sparse' if sparse else 'dense'} X {m}² {name:11s} numpy {tp * 1e6:9.1f} µs  "
            f"etchpy {te * 1e6:9.1f} µs  speedup {tp / te:.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="*", default=[100, 500, 1000])
    ap.add_argument("--sparse", type=int, nargs="*", default=[1000, 5000])
    ap.add_argument("--rounds", type=int, default=61)
    args = ap.parse_args(argv)
    for m in args.m:
        measure(m, False, args.rounds)
    for m in args.sparse:
        measure(m, True, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

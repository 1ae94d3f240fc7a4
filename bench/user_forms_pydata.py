"""User forms (bench.user_forms): ep.einsum over a pydata `sparse.COO` of three axes, as
a pydata user writes it, against pydata's own `S @ x`, `S.sum()`, `S.sum(axis=2)` and
`sparse.einsum`, and a numpy `np.add.at` over the coordinates (an operand of any order
whose fill value is 0 is read as a coo tensor: expr.einsum._infer_format; before
session 92 it was made dense on every call). S stacks bench.user_forms' A (scikit-fem's
P1 Laplacian) and its reversed-order copy B twice: S[t] = A, B, A, B. Skipped where
pydata `sparse` (a bench extra) is missing. bench.user_forms_sparse appends these to
its CASES.
"""
from __future__ import annotations

import itertools

import numpy as np

import etchpy as ep

from bench.user_forms_layouts import registrar

try:
    import sparse
except ImportError:                 # the bench extra is missing: no cases
    sparse = None

CASES = []                  # (name, peer label, make(data) -> (ours, peer, same))
case = registrar(CASES) if sparse is not None else (lambda name, peer: lambda make: make)


def _stack(d):
    return sparse.stack([sparse.COO.from_scipy_sparse(m) for m in (d.A, d.B, d.A, d.B)])


def _dense(x):
    return x.toarray() if hasattr(x, "toarray") else x.todense() if hasattr(x, "todense") else x


def _same(a, b):
    return np.allclose(_dense(a), _dense(b), rtol=1e-9, atol=1e-9)


@case("ep.einsum('tij,j->ti', S, x) (a stack of matrices), pydata COO", "S @ x (pydata)")
def _(d):
    S, ours, peer = _stack(d), itertools.cycle(d.xs).__next__, itertools.cycle(d.xs).__next__
    return (lambda: ep.einsum("tij,j->ti", S, ours())), (lambda: S @ peer()), _same


@case("ep.einsum('tij->', S), pydata COO", "S.sum()")
def _(d):
    S = _stack(d)
    return (lambda: ep.einsum("tij->", S)), S.sum, _same


@case("ep.einsum('tij->ti', S) (row sums, a csr out), pydata COO", "S.sum(axis=2)")
def _(d):
    S = _stack(d)
    return (lambda: ep.einsum("tij->ti", S)), (lambda: S.sum(axis=2)), _same


@case("ep.einsum('tij,ir,jr->tr', S, U, V) (MTTKRP, rank 8), pydata COO",
      "np.add.at over S.coords")
def _(d):
    S, rng = _stack(d), np.random.default_rng(9)
    U, V = rng.random((S.shape[1], 8)), rng.random((S.shape[2], 8))
    t, i, j = S.coords

    def peer():
        out = np.zeros((S.shape[0], 8))
        np.add.at(out, t, S.data[:, None] * U[i] * V[j])
        return out
    return (lambda: ep.einsum("tij,ir,jr->tr", S, U, V)), peer, _same

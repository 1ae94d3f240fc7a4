"""The etchpy expressions the benchmark compiles, by name.

Each entry returns (expression, compile keyword arguments). The module is shared
by the harness and by the subprocess that measures warm loads from the disk cache,
so both compile exactly the same kernels.
"""
from __future__ import annotations

import etchpy as ep
from etchpy.formats import Compressed, Dense, Format


def _ix(names):
    return ep.indices(names)


def spmv():
    i, j = _ix("i j")
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    return ep.sum(j, A[i, j] * x[j]), {}


def spmm():
    i, j, c = _ix("i j c")
    A, X = ep.tensor("A", 2, "csr"), ep.tensor("X", 2)
    return ep.sum(j, A[i, j] * X[j, c]), {}


def spgemm():
    i, j, k = _ix("i j k")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    return ep.sum(j, A[i, j] * B[j, k]), {"output": "csr"}


def ewise_add():
    i, j = _ix("i j")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    return A[i, j] + B[i, j], {"output": "csr"}


def transpose():
    """csr A rewritten as csc: the loops walk A's rows, the output's compressed index."""
    i, j = _ix("i j")
    A = ep.tensor("A", 2, "csr")
    return A[i, j], {"output": "csc"}


def ewise_mul():
    i, j = _ix("i j")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    return A[i, j] * B[i, j], {"output": "csr"}


def sddmm():
    i, j, r = _ix("i j r")
    X, U, V = ep.tensor("X", 2, "csr"), ep.tensor("U", 2), ep.tensor("V", 2)
    return ep.sum(r, X[i, j] * U[i, r] * V[j, r]), {"output": "csr"}


def ttv():
    i, j, k = _ix("i j k")
    B, v = ep.tensor("B", 3, "csf"), ep.tensor("v", 1)
    return ep.sum(k, B[i, j, k] * v[k]), {}


# TTM output: (i, j) fibers compressed, r dense -- the sparse analogue of
# "unfold @ M" over the fibers that are present.
TTM_OUTPUT = Format([Compressed(), Compressed(), Dense()])


def ttm():
    i, j, k, r = _ix("i j k r")
    B, M = ep.tensor("B", 3, "csf"), ep.tensor("M", 2)
    return ep.sum(k, B[i, j, k] * M[k, r]), {"output": TTM_OUTPUT}


def ttm_dense():
    e, _ = ttm()
    return e, {}


def mttkrp():
    i, j, k, r = _ix("i j k r")
    B, C, D = ep.tensor("B", 3, "csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    return ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r]), {}


def inner3():
    i, j, k = _ix("i j k")
    B, C = ep.tensor("B", 3, "csf"), ep.tensor("C", 3, "csf")
    return ep.sum((i, j, k), B[i, j, k] * C[i, j, k]), {}


def minplus():
    """d'[v] = min(d[v], min_u d[u] + W[u,v]) -- pull over the columns of W (csc)."""
    u, v = _ix("u v")
    W, d = ep.tensor("W", 2, "csc"), ep.tensor("d", 1)
    return ep.sum(u, d[u] * W[u, v]) + d[v], {"semiring": "min_plus"}


def orand():
    """f'[v] = OR_u f[u] AND W[u,v] -- one BFS frontier step, pushed from a sparse
    frontier f along the rows of csr W (the loop walks f's nonzeros only)."""
    u, v = _ix("u v")
    W, f = ep.tensor("W", 2, "csr"), ep.tensor("f", 1, "csf")
    return ep.sum(u, f[u] * W[u, v]), {"semiring": "boolean"}


def triangle():
    a, b, c = _ix("a b c")
    U = ep.tensor("U", 2, "csr")
    return ep.sum((a, b, c), U[a, b] * U[b, c] * U[a, c]), {"semiring": "integer"}


EXPRS = {f.__name__: f for f in (spmv, spmm, spgemm, ewise_add, ewise_mul, transpose, sddmm,
                                 ttv, ttm, ttm_dense, mttkrp, inner3, minplus, orand, triangle)}


def get(name):
    """(expr, compile kwargs) for `name`."""
    return EXPRS[name]()

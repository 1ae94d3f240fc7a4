"""The benchmark's expressions at real sizes (nnz ≥ 1e5), against scipy and numpy."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from tuned import random_csr, sparse3

i, j, k, r = ep.indices("i j k r")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_benchmark_expressions_at_real_size():
    rng = np.random.default_rng(0)
    n = 20000
    A = random_csr(n, n, 200000, 1)
    B = random_csr(n, n, 200000, 2)
    x = rng.random(n)
    Ac, Bc = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    xv = ep.tensor("x", 1)
    np.testing.assert_allclose(ep.evaluate(ep.sum(j, Ac[i, j] * xv[j]), A=A, x=x), A @ x)
    C = ep.evaluate(ep.sum(j, Ac[i, j] * Bc[j, k]), A=A, B=B, output="csr")
    assert abs(C - A @ B).max() < 1e-12
    # inner products visit every (i, k) pair: sized so that nnz is still 1e5
    A2 = random_csr(1000, 1000, 100000, 5)
    B2 = random_csr(1000, 1000, 100000, 6)
    C2 = ep.evaluate(ep.sum(j, Ac[i, j] * Bc[k, j]), A=A2, B=sp.csr_array(B2.T), output="csr")
    assert abs(C2 - A2 @ B2).max() < 1e-12
    T = sparse3(200, 200000, 3)
    dense = T.to_dense()
    c, M1, M2 = rng.random(200), rng.random((200, 8)), rng.random((200, 8))
    Tv = ep.tensor("T", 3, format="csf")
    cv, Mv, Nv = ep.tensor("c", 1), ep.tensor("M", 2), ep.tensor("N", 2)
    np.testing.assert_allclose(ep.evaluate(ep.sum(k, Tv[i, j, k] * cv[k]), T=T, c=c),
                               np.einsum("ijk,k->ij", dense, c))
    np.testing.assert_allclose(ep.evaluate(ep.sum(k, Tv[i, j, k] * Mv[k, r]), T=T, M=M1),
                               np.einsum("ijk,kr->ijr", dense, M1))
    np.testing.assert_allclose(
        ep.evaluate(ep.sum((j, k), Tv[i, j, k] * Mv[j, r] * Nv[k, r]), T=T, M=M1, N=M2),
        np.einsum("ijk,jr,kr->ir", dense, M1, M2))
    U = sparse3(200, 200000, 4)
    Uv = ep.tensor("U", 3, format="csf")
    np.testing.assert_allclose(ep.evaluate(ep.sum((i, j, k), Tv[i, j, k] * Uv[i, j, k]),
                                           T=T, U=U), np.sum(dense * U.to_dense()))

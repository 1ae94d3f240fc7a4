"""User forms (bench.user_forms): ep.einsum over two scipy matrices with a matrix out,
as a scipy user writes `A @ B`, `A @ B.T`, `A.multiply(B)`, `A.T`, a column scaling
and SDDMM (a csr result since session 90: runtime.einsum_calls.default_output), a
quadratic form, a Galerkin product PᵀAP and AᵀB. A and B
of bench.user_forms' Data (scikit-fem's P1 Laplacian and its reversed-order copy). bench.user_forms runs
these after its own cases (CASES here, appended there), and bench.user_forms_pydata's
after them.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench.user_forms_layouts import registrar
from bench.user_forms_pydata import CASES as PYDATA_CASES

CASES = []                  # (name, peer label, make(data) -> (ours, peer, same))
case = registrar(CASES)


def _product(spec, peer_name, peer):
    @case(f"ep.einsum('{spec}', A, B), scipy csr", peer_name)
    def make(d):
        A, B = d.A, d.B
        return (lambda: ep.einsum(spec, A, B)), (lambda: peer(A, B)), None


_product("ij,jk->ik", "A @ B", lambda A, B: A @ B)
_product("ij,kj->ik", "A @ B.T", lambda A, B: A @ B.T)
_product("ij,ij->ij", "A.multiply(B)", lambda A, B: A.multiply(B))


@case("ep.einsum('ij->ji', A), scipy csr", "A.T.tocsr()")
def _(d):
    A = d.A
    return (lambda: ep.einsum("ij->ji", A)), (lambda: A.T.tocsr()), None


@case("ep.einsum('ij,j->ij', A, d) (column scaling), scipy csr", "A @ diags(d)")
def _(d):
    A, v = d.A, d.ws[0]
    D = sp.dia_array((v, 0), shape=A.shape)
    return (lambda: ep.einsum("ij,j->ij", A, v)), (lambda: A @ D), None


@case("ep.einsum('ij,ik,jk->ij', A, U, V) (SDDMM, 8 columns)", "csr of A.data · rows' dots")
def _(d):
    A, rng = d.A, np.random.default_rng(8)
    U, V = rng.random((A.shape[0], 8)), rng.random((A.shape[1], 8))
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))

    def peer():
        dots = np.einsum("ij,ij->i", U[rows], V[A.indices])
        return sp.csr_array((A.data * dots, A.indices, A.indptr), shape=A.shape)
    return (lambda: ep.einsum("ij,ik,jk->ij", A, U, V)), peer, None


@case("ep.einsum('i,ij,j->', x, A, x) (a quadratic form), scipy csr", "x @ (A @ x)")
def _(d):
    A, ours, peer = d.A, itertools.cycle(d.xs).__next__, itertools.cycle(d.xs).__next__
    return (lambda: (lambda x: ep.einsum("i,ij,j->", x, A, x))(ours())), \
        (lambda: (lambda x: x @ (A @ x))(peer())), None     # (each its own cycle: one x)


@case("ep.einsum('ki,kl,lj->ij', P, A, P) (Galerkin, aggregates of 4), scipy csr",
      "P.T @ A @ P")
def _(d):
    A, m = d.A, d.A.shape[0]
    P = sp.csr_array((np.ones(m), np.arange(m) // 4, np.arange(m + 1)), shape=(m, (m + 3) // 4))
    return (lambda: ep.einsum("ki,kl,lj->ij", P, A, P)), (lambda: P.T @ A @ P), None


_product("ki,kj->ij", "A.T @ B", lambda A, B: A.T @ B)
CASES += PYDATA_CASES                       # bench.user_forms_pydata

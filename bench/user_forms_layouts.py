"""User forms (bench.user_forms) with dense operands as numpy users hold them: Fortran
order (`np.asfortranarray`), transposed views of C-order arrays (`a.T`), strided and
cast vectors (`v2[::2]`, float32), through compiled kernels and the rebuilt form,
against numpy's `a @ v`, `a @ b` and `np.einsum` on the same arrays, and a Fortran-order
X beside a scipy csr A against scipy's `A @ X` (issue 39;
runtime.dense_orders, Tuning.binder_casts). Dense n×n operands of about 1e3, 1e5 and
1e6 elements (bench.user_forms' Data: `a`, `b`, `v`); new vectors cycled from a pool.
bench.user_forms runs these after its own cases (CASES here, appended there).
"""
from __future__ import annotations

import itertools

import numpy as np

import etchpy as ep

i, j, k = ep.indices("i j k")
M_, N_, x_ = ep.tensor("M", 2), ep.tensor("N", 2), ep.tensor("x", 1)
MATVEC = ep.compile(ep.sum(j, M_[i, j] * x_[j]))
MATMUL = ep.compile(ep.sum(k, M_[i, k] * N_[k, j]))
ROWDOTS = ep.compile(ep.sum(j, M_[i, j] * N_[i, j]))
SPMM = ep.compile(ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * N_[j, k]))
CASES = []                  # (name, peer label, make(data) -> (ours, peer, same))


def registrar(cases: list):
    """case(name, peer): a decorator adding (name, peer, make) to `cases` (this
    module's and bench.user_forms's lists)."""
    def case(name, peer):
        def register(make):
            cases.append((name, peer, make))
            return make
        return register
    return case


case = registrar(CASES)


def _pool(d, prep=lambda v: v):
    """Two cyclers over the same four new vectors of length n (one for each side)."""
    rng = np.random.default_rng(d.n)
    vs = [prep(rng.random(d.n)) for _ in range(4)]
    return itertools.cycle(vs).__next__, itertools.cycle(vs).__next__


@case("dense matvec, Fortran-order a, rebuilt", "a_F @ v")
def _(d):
    a, v = np.asfortranarray(d.a), d.v

    def ours():
        m, x = ep.tensor("M", 2), ep.tensor("x", 1)
        return ep.evaluate(ep.sum(j, m[i, j] * x[j]), M=a, x=v)
    return ours, (lambda: a @ v), None


def _matvec(name, peer, prep_a, prep_v=lambda v: v):
    @case(name, peer)
    def make(d):
        a = prep_a(d.a)
        nv, pv = _pool(d, prep_v)
        return (lambda: MATVEC(M=a, x=nv())), (lambda: a @ pv()), None


_matvec("dense matvec kernel, C-order a, new v", "a @ v", lambda a: a)
_matvec("dense matvec kernel, Fortran-order a", "a_F @ v", np.asfortranarray)
_matvec("dense matvec kernel, a.T of a C array", "a.T @ v", lambda a: a.T)
_matvec("dense matvec kernel, v strided v2[::2]", "a @ v2[::2]", lambda a: a,
        lambda v: np.repeat(v, 2)[::2])
_matvec("dense matvec kernel, v float32", "a @ v32", lambda a: a,
        lambda v: v.astype(np.float32))


@case("matmul kernel, A.T of a C array", "a.T @ b")
def _(d):
    a, b = d.a.T, d.b
    return (lambda: MATMUL(M=a, N=b)), (lambda: a @ b), None


@case("matmul kernel, B Fortran-order", "a @ b_F")
def _(d):
    a, b = d.a, np.asfortranarray(d.b)
    return (lambda: MATMUL(M=a, N=b)), (lambda: a @ b), None


@case("row dots Σj M·N kernel, both Fortran-order", "np.einsum('ij,ij->i')")
def _(d):
    a, b = np.asfortranarray(d.a), np.asfortranarray(d.b)
    return (lambda: ROWDOTS(M=a, N=b)), (lambda: np.einsum("ij,ij->i", a, b)), None


@case("SpMM kernel, scipy csr A, X Fortran-order (8 columns)", "A @ X_F")
def _(d):
    A, rng = d.A, np.random.default_rng(d.n)
    Xs = [np.asfortranarray(rng.random((A.shape[1], 8))) for _ in range(4)]
    nX, pX = itertools.cycle(Xs).__next__, itertools.cycle(Xs).__next__
    return (lambda: SPMM(A=A, N=nX())), (lambda: A @ pX()), None


@case("ep.einsum('ijk,kl->ijl', T, M) (a stack of m² × m, as many elements)", "T @ M")
def _(d):
    m = max(2, round(d.n ** (2 / 3)))
    rng = np.random.default_rng(9)
    t, b = rng.random((m, m, m)), rng.random((m, m))
    return (lambda: ep.einsum("ijk,kl->ijl", t, b)), (lambda: t @ b), None

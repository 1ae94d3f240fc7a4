"""User forms (bench.user_forms): sums as numpy and scipy users write them, through
compiled kernels, against `A.sum()`, `a.sum()`, `a.sum(axis=1)` and a min-plus matvec
in numpy (issue 39; lower.schedule.flat_walks and counted_sums), and an SpMV of a sum
of two new vectors, `Σ_j A[i,j]·(x[j] + y[j])`, against `A @ (x + y)` (its checked walk
gathers two arrays: lower.schedule.checks_first.gathers). The sparse A of
bench.user_forms' Data (scikit-fem's P1 Laplacian) as the scipy csr matrix and as an
ep.Tensor; its dense n×n `a` and new vectors `v`. bench.user_forms runs these after its
own cases (CASES here, appended there).
"""
from __future__ import annotations

import itertools

import numpy as np

import etchpy as ep

from bench.user_forms_layouts import registrar

i, j = ep.indices("i j")
A_, M_, x_ = ep.tensor("A", 2, format="csr"), ep.tensor("M", 2), ep.tensor("x", 1)
SPARSE_TOTAL = ep.compile(ep.sum(i, ep.sum(j, A_[i, j])))
TOTAL, ROWSUMS = ep.compile(ep.sum(i, ep.sum(j, M_[i, j]))), ep.compile(ep.sum(j, M_[i, j]))
MINPLUS = ep.compile(ep.sum(j, M_[i, j] * x_[j]), semiring="min_plus")
y_ = ep.tensor("y", 1)
SUM_SPMV = ep.compile(ep.sum(j, A_[i, j] * (x_[j] + y_[j])))
CASES = []                  # (name, peer label, make(data) -> (ours, peer, same))
case = registrar(CASES)


def _total(name, prep):
    @case(f"A.sum() as Σij A, {name}", "A.sum()")
    def make(d):
        A = prep(d.A)
        return (lambda: SPARSE_TOTAL(A=A)), d.A.sum, None


_total("scipy csr", lambda A: A)
_total("an ep.Tensor of A", lambda A: ep.Tensor.from_scipy(A, "csr"))


@case("dense sum Σij a", "a.sum()")
def _(d):
    a = d.a
    return (lambda: TOTAL(M=a)), a.sum, None


@case("dense row sums Σj a", "a.sum(axis=1)")
def _(d):
    a = d.a
    return (lambda: ROWSUMS(M=a)), (lambda: a.sum(axis=1)), None


@case("ep.einsum('ij,ij->j', a, b) (column sums of a product)", "np.einsum")
def _(d):
    a, b = d.a, d.b
    return (lambda: ep.einsum("ij,ij->j", a, b)), (lambda: np.einsum("ij,ij->j", a, b)), None


@case("dense min-plus matvec, new v", "(a + v).min(axis=1)")
def _(d):
    a, rng = d.a, np.random.default_rng(d.n)
    vs = [rng.random(d.n) for _ in range(4)]
    nv, pv = itertools.cycle(vs).__next__, itertools.cycle(vs).__next__
    return (lambda: MINPLUS(M=a, x=nv())), (lambda: (a + pv()).min(axis=1)), None


@case("SpMV of a sum Σj A·(x + y), csr, new x and y", "A @ (x + y)")
def _(d):
    A, pairs = d.A, list(zip(d.xs, d.ws))
    nxt, pxt = itertools.cycle(pairs).__next__, itertools.cycle(pairs).__next__

    def ours():
        u, v = nxt()
        return SUM_SPMV(A=A, x=u, y=v)

    def peer():
        u, v = pxt()
        return A @ (u + v)
    return ours, peer, None

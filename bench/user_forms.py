"""User forms: etchpy called the way a numpy/scipy user writes it, against the peer.

    python -m bench.user_forms [--quick] [--only WORD[,WORD]] [--seconds S] [--json PATH]

`python -m bench calls` times the forms issue 39 names (a csr matrix and a new x, prebuilt
kernels, plain float64). This survey times the others a demanding user writes, one call at
a time alternated with the peer (bench.timing.alternate_clocks, medians of thread CPU time):
ep.einsum with scipy operands, mixed dtypes, transposed / strided / Fortran-order views;
the string front end and expressions rebuilt in the loop (Aᵀx as Σ over i, a new scipy
matrix, float32, a column slice); nested and chained forms; dense operands in Fortran
order, transposed, strided or cast (bench.user_forms_layouts);
SpMV with csc, int64-index, transposed, float32 and strided inputs, values of another dtype
(float32, bool, complex beside real); min-plus SpMV; sparse
outputs from csc / coo inputs; graph algorithms with a scipy matrix; lazy programs. Sizes:
about 1e3, 1e5 and 1e6 stored entries (sparse: scikit-fem's P1 Laplacian; dense: n×n of as
many elements); --quick stops at 1e5. Every case checks its answer against the peer's once
before it is timed. A ratio is etchpy / peer (below 1: etchpy faster).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import datetime
import itertools
import json
import sys
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import etchpy as ep

from bench.calls_kernels import fem_p1
from bench.kernels import rng_for
from bench.timing import alternate_clocks, fmt_time
from bench.user_forms_layouts import CASES as LAYOUT_CASES, registrar
from bench.user_forms_sums import CASES as SUM_CASES
from bench.user_forms_sparse import CASES as SPARSE_CASES

SIZES = {"1e3": (4, 32), "1e5": (7, 316), "1e6": (9, 1000)}   # label: (P1 refinements, n)
POOL = 4                                  # distinct new vectors cycled through
i, j, k = ep.indices("i j k")
CASES = []                                # (name, peer label, make(data) -> (ours, peer, same))
case = registrar(CASES)


def cycling(pool):
    return itertools.cycle(pool).__next__


def close(a, b):
    """Whether a and b agree to rtol 1e-5 (sparse ones compared sparse)."""
    if sp.issparse(a) and sp.issparse(b):
        d, top = abs(sp.csr_array(a) - sp.csr_array(b)), abs(sp.csr_array(b))
        return (d.max() if d.nnz else 0.0) <= 1e-5 * max(1.0, top.max() if top.nnz else 0.0)
    a = a.toarray() if sp.issparse(a) else np.asarray(a)
    b = b.toarray() if sp.issparse(b) else np.asarray(b)
    return np.allclose(a, b, rtol=1e-5, atol=1e-8 * max(1.0, float(np.abs(b).max(initial=0))))


class Data:
    """The operands of one size: a sparse A (csr, float64, int32 indices), a second
    matrix B of A's shape, new-vector pools, dense n×n operands."""

    def __init__(self, label):
        refine, n = SIZES[label]
        rng = rng_for(f"user-forms-{label}")
        self.label, self.n = label, n
        self.A = fem_p1(refine)
        m = self.A.shape[0]
        self.B = sp.csr_array(self.A[np.arange(m)[::-1]][:, np.arange(m)[::-1]])
        self.B.sort_indices()
        self.xs = [rng.standard_normal(m) for _ in range(POOL)]
        self.ws = [rng.random(m) * 10 for _ in range(POOL)]
        self.a, self.b = rng.random((n, n)), rng.random((n, n))
        self.v = rng.random(n)


A_ = ep.tensor("A", 2, format="csr")
Ac_ = ep.tensor("A", 2, format="csc")
P_, Q_ = ep.tensor("P", 2, format="csr"), ep.tensor("Q", 2, format="csr")
x_ = ep.tensor("x", 1)
SPMV = ep.compile(ep.sum(j, A_[i, j] * x_[j]))
SPMV_CSC = ep.compile(ep.sum(j, Ac_[i, j] * x_[j]))
NESTED = ep.compile(ep.sum(j, P_[i, j] * ep.sum(k, Q_[j, k] * x_[k])))
MINPLUS = ep.compile(ep.sum(j, A_[i, j] * x_[j]), semiring="min_plus")


def spmv_case(name, peer, prep, xprep=lambda x: x, kern=SPMV):
    """SpMV y = A·x with A = prep(data.A) and x = xprep(new vector) each call."""
    @case(name, peer)
    def make(d):
        A = prep(d.A)
        xs = [xprep(x) for x in d.xs]
        nx, px = cycling(xs), cycling(xs)
        return (lambda: kern(A=A, x=nx())), (lambda: A @ px()), None


spmv_case("SpMV kernel, csc input, new x", "A_csc @ x", lambda A: sp.csc_array(A))
spmv_case("SpMV csc kernel, csc input, new x", "A_csc @ x", lambda A: sp.csc_array(A),
          kern=SPMV_CSC)
spmv_case("SpMV, csr with int64 indices", "A @ x", lambda A: sp.csr_array(
    (A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape))
spmv_case("SpMV, A.T of a csr (csc view)", "A.T @ x", lambda A: A.T)
spmv_case("SpMV, csr_matrix (not array)", "A @ x", lambda A: sp.csr_matrix(A))
spmv_case("SpMV, A float64, x float32", "A @ x32", lambda A: A,
          lambda x: x.astype(np.float32))
spmv_case("SpMV, x strided view x2[::2]", "A @ x2[::2]", lambda A: A,
          lambda x: np.repeat(x, 2)[::2])
spmv_case("SpMV, coo_array input (csr kernel)", "A_coo @ x", lambda A: sp.coo_array(A))
spmv_case("SpMV, A float32, x float64", "A32 @ x", lambda A: A.astype(np.float32))
spmv_case("SpMV, A bool (a pattern), x float64", "A_bool @ x", lambda A: A.astype(bool))
spmv_case("SpMV, A int64 (scipy's integers), x float64", "A_int @ x",
          lambda A: (A * 8).astype(np.int64))
spmv_case("SpMV, A float64, x int64", "A @ x_int", lambda A: A,
          lambda x: np.round(x * 8).astype(np.int64))
spmv_case("SpMV, A float64, x complex128", "A @ z", lambda A: A, lambda x: x * (1 - 2j))
spmv_case("SpMV, A complex128, x float64", "A_z @ x", lambda A: A * (1 + 1j))


@case("ep.einsum('ij,j->i', A_csr, x)", "A @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    return (lambda: ep.einsum("ij,j->i", A, nx())), (lambda: A @ px()), None


@case("ep.evaluate(text), csr, new x", "A @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    return (lambda: ep.evaluate("y[i] = A[i,j] * x[j]", A=A, x=nx())), (lambda: A @ px()), None


@case("ep.compile(text)(...) each call", "A @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    ours = lambda: ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"})(A=A, x=nx())  # noqa
    return ours, (lambda: A @ px()), None


@case("Expr rebuilt each call + evaluate", "A @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)

    def ours():
        a, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        return ep.evaluate(ep.sum(j, a[i, j] * x[j]), A=A, x=nx())
    return ours, (lambda: A @ px()), None


@case("ep.evaluate(expr), expr built once", "A @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    e = ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * ep.tensor("x", 1)[j])
    return (lambda: ep.evaluate(e, A=A, x=nx())), (lambda: A @ px()), None


@case("Aᵀx as Σi A[i,j]·x[i], rebuilt, scipy csr", "A.T @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)

    def ours():
        a, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        return ep.evaluate(ep.sum(i, a[i, j] * x[i]), A=A, x=nx())
    return ours, (lambda: A.T @ px()), None


@case("Expr rebuilt, a new csr_array each call", "csr_array(...) @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    parts = [(A.data * (1 + q), A.indices, A.indptr) for q in range(POOL)]
    na, pa = cycling(parts), cycling(parts)

    def ours():
        a, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        return ep.evaluate(ep.sum(j, a[i, j] * x[j]), A=sp.csr_array(na(), shape=A.shape),
                           x=nx())
    return ours, (lambda: sp.csr_array(pa(), shape=A.shape) @ px()), None


@case("Expr rebuilt, float32 A and x", "A32 @ x32")
def _(d):
    A, xs = d.A.astype(np.float32), [x.astype(np.float32) for x in d.xs]
    nx, px = cycling(xs), cycling(xs)

    def ours():
        a, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        return ep.evaluate(ep.sum(j, a[i, j] * x[j]), A=A, x=nx())
    return ours, (lambda: A @ px()), None


@case("Expr rebuilt, x a column slice X[:, 0]", "A @ X[:, 0]")
def _(d):
    A, xs = d.A, [np.stack([x, x], axis=1)[:, 0] for x in d.xs]
    nx, px = cycling(xs), cycling(xs)

    def ours():
        a, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
        return ep.evaluate(ep.sum(j, a[i, j] * x[j]), A=A, x=nx())
    return ours, (lambda: A @ px()), None


@case("ep.einsum('ij,jk,k->i', A, A, x) (a chain)", "A @ (A @ x)")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    return (lambda: ep.einsum("ij,jk,k->i", A, A, nx())), (lambda: A @ (A @ px())), None


@case("ep.einsum('ji,j->i', A_csr, x) (Aᵀx)", "A.T @ x")
def _(d):
    A, nx, px = d.A, cycling(d.xs), cycling(d.xs)
    return (lambda: ep.einsum("ji,j->i", A, nx())), (lambda: A.T @ px()), None


@case("nested Σj P·(Σk Q·x), scipy, new x", "P @ (Q @ x)")
def _(d):
    P, Q, nx, px = d.A, d.B, cycling(d.xs), cycling(d.xs)
    return (lambda: NESTED(P=P, Q=Q, x=nx())), (lambda: P @ (Q @ px())), None


@case("min_plus SpMV, scipy csr, new x", "numpy minimum.reduceat")
def _(d):
    A, nx, px = d.A, cycling(d.ws), cycling(d.ws)
    starts = A.indptr[:-1]                  # every row of the P1 Laplacian is stored

    def peer():
        return np.minimum.reduceat(A.data + px()[A.indices], starts)
    return (lambda: MINPLUS(A=A, x=nx())), peer, None


def sparse_out_case(name, peer_name, expr, fmt, conv, peer_fn, output="csr"):
    @case(name, peer_name)
    def make(d):
        A, B = conv(d.A), conv(d.B)
        kern = ep.compile(expr(ep.tensor("A", 2, format=fmt), ep.tensor("B", 2, format=fmt)),
                          output=output)
        return (lambda: kern(A=A, B=B)), (lambda: peer_fn(A, B)), None


sparse_out_case("A+B csc inputs -> csc", "A + B (csc)", lambda a, b: a[i, j] + b[i, j],
                "csc", sp.csc_array, lambda A, B: A + B, output="csc")
sparse_out_case("A*B elementwise, coo inputs", "A * B (coo)", lambda a, b: a[i, j] * b[i, j],
                "coo", sp.coo_array, lambda A, B: A * B)
sparse_out_case("A@B, csc inputs -> csc", "A @ B (csc)",
                lambda a, b: ep.sum(k, a[i, k] * b[k, j]), "csc", sp.csc_array,
                lambda A, B: A @ B, output="csc")
sparse_out_case("A+B, csr kernel fed csc inputs", "A + B (csc)",
                lambda a, b: a[i, j] + b[i, j], "csr", sp.csc_array, lambda A, B: A + B)


@case("ep.einsum('ij,jk->ik', int64, float64)", "a_int @ b")
def _(d):
    ai = (d.a * 100).astype(np.int64)
    return (lambda: ep.einsum("ij,jk->ik", ai, d.b)), (lambda: ai @ d.b), None


@case("ep.einsum('ij,jk->ik', float32)", "a32 @ b32")
def _(d):
    a, b = d.a.astype(np.float32), d.b.astype(np.float32)
    return (lambda: ep.einsum("ij,jk->ik", a, b)), (lambda: a @ b), None


@case("ep.einsum('ij,j->i', a.T, v)", "a.T @ v")
def _(d):
    a, v = d.a, d.v
    return (lambda: ep.einsum("ij,j->i", a.T, v)), (lambda: a.T @ v), None


@case("ep.einsum('ij,j->i', a[:, ::2], v[::2])", "a[:, ::2] @ v[::2]")
def _(d):
    a, v = d.a[:, ::2], d.v[::2]
    return (lambda: ep.einsum("ij,j->i", a, v)), (lambda: a @ v), None


@case("ep.einsum('ij,jk->ik', F-order, F-order)", "a_F @ b_F")
def _(d):
    a, b = np.asfortranarray(d.a), np.asfortranarray(d.b)
    return (lambda: ep.einsum("ij,jk->ik", a, b)), (lambda: a @ b), None


@case("ep.einsum('ij,j->i', float32 a, float64 v)", "a32 @ v")
def _(d):
    a = d.a.astype(np.float32)
    return (lambda: ep.einsum("ij,j->i", a, d.v)), (lambda: a @ d.v), None


@case("ep.einsum('ij,ij->', a, b) (Frobenius)", "np.einsum('ij,ij->')")
def _(d):
    a, b = d.a, d.b
    return (lambda: ep.einsum("ij,ij->", a, b)), (lambda: np.einsum("ij,ij->", a, b)), None


def graph_case(name, peer_name, ours_fn, peer_fn, same, conv=lambda A: A):
    @case(name, peer_name)
    def make(d):
        A = conv(d.A)
        return (lambda: ours_fn(A)), (lambda: peer_fn(A)), same


def _levels(A):
    return cg.breadth_first_order(A, 0, return_predecessors=False)


graph_case("graph.bfs_levels(csr_matrix)", "csgraph.breadth_first_order",
           lambda A: ep.graph.bfs_levels(A, 0), _levels,
           lambda o, p: int((o >= 0).sum()) == len(p), sp.csr_matrix)
graph_case("graph.connected_components(csc)", "csgraph.connected_components",
           lambda A: ep.graph.connected_components(A, directed=False),
           lambda A: cg.connected_components(A, directed=False),
           lambda o, p: len(np.unique(o)) == p[0], sp.csc_array)
graph_case("graph.bellman_ford(abs csr)", "csgraph.dijkstra",
           lambda A: ep.graph.bellman_ford(A, 0),
           lambda A: cg.dijkstra(A, indices=0), close, lambda A: abs(A))
graph_case("graph.bfs_levels(coo_array)", "csgraph.breadth_first_order",
           lambda A: ep.graph.bfs_levels(A, 0), _levels,
           lambda o, p: int((o >= 0).sum()) == len(p), sp.coo_array)


@case("lazy: logistic gradient, ep.lazy + compute", "numpy/scipy")
def _(d):
    X, ws = d.A, [x[: d.A.shape[1]] for x in d.xs]
    y = np.random.default_rng(1).random(X.shape[0])
    nw, pw = cycling(ws), cycling(ws)

    def ours():
        x = ep.lazy(X)
        return (x.T @ (1 / (1 + ep.exp(-(x @ nw()))) - y)).compute()

    def peer():
        return X.T @ (1 / (1 + np.exp(-(X @ pw()))) - y)
    return ours, peer, None


@case("lazy: logistic gradient, ep.lazy.function", "numpy/scipy")
def _(d):
    X, ws = d.A, [x[: d.A.shape[1]] for x in d.xs]
    y = np.random.default_rng(1).random(X.shape[0])
    nw, pw = cycling(ws), cycling(ws)
    grad = ep.lazy.function(lambda X, w, y: X.T @ (1 / (1 + ep.exp(-(X @ w))) - y))
    return (lambda: grad(X, nw(), y)), (lambda: X.T @ (1 / (1 + np.exp(-(X @ pw()))) - y)), None


CASES += LAYOUT_CASES + SUM_CASES + SPARSE_CASES   # user_forms_layouts, _sums, _sparse


def run(quick, seconds, only, say):
    rows = []
    labels = ("1e3", "1e5") if quick else tuple(SIZES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        for label in labels:
            d = Data(label)
            say(f"size {label}: A {d.A.shape[0]}² nnz {d.A.nnz}, dense {d.n}²")
            for name, peer_name, make in CASES:
                if only and not any(w in name for w in only):
                    continue
                try:
                    ours, peer, same = make(d)
                    o, p = ours(), peer()
                    ok = (same or close)(o, p)
                    (oc, ow), (pc, pw) = alternate_clocks([ours, peer], seconds)
                except Exception as err:  # noqa: BLE001 - a survey reports and goes on
                    say(f"  {name:<44} FAILED: {type(err).__name__}: {str(err)[:90]}")
                    rows.append({"size": label, "case": name, "error": repr(err)[:300]})
                    continue
                r = {"size": label, "case": name, "peer": peer_name, "etchpy_s": oc,
                     "peer_s": pc, "ratio": oc / pc, "etchpy_wall_s": ow, "peer_wall_s": pw,
                     "agrees": bool(ok)}
                rows.append(r)
                say(f"  {name:<44} {fmt_time(oc):>9}  {peer_name:<28} {fmt_time(pc):>9}"
                    f"  {oc / pc:6.2f}×{'' if ok else '  DISAGREES'}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.user_forms", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="sizes 1e3 and 1e5, shorter runs")
    ap.add_argument("--seconds", type=float, default=None, help="per case and size")
    ap.add_argument("--only", default="", help="comma-separated words of case names")
    ap.add_argument("--json", default=None, help="write the rows there")
    args = ap.parse_args(argv)
    seconds = args.seconds or (0.3 if args.quick else 1.0)
    only = [w for w in args.only.split(",") if w]
    say = lambda s: print(s, flush=True)  # noqa: E731
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    say(f"user forms: {when}, load {' '.join(load)}, {'quick' if args.quick else 'full'}")
    rows = run(args.quick, seconds, only, say)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"when": when, "load": load, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

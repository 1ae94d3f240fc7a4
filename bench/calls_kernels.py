"""The cost of a call (issue 39) for kernels other than SpMV, a part of
`python -m bench calls`:

  kernels  on real matrices of about 1e3, 1e4, 1e5 and 1e6 stored entries (a
       scikit-fem P1 Laplacian on a refined square, the 3-D 7-point Poisson
       stencil, a k-nearest-neighbour graph of scikit-learn's digits and, at 1e6,
       the camera photograph's pixel graph), a scipy csr matrix passed on every
       call and a new dense operand on every call, one thread, against scipy:
         SpMM    Y[i,k] = A[i,j]*X[j,k], X of 1, 4, 10, 16 columns vs A @ X
         SpMVᵀ   y[j] = A[i,j]*x[i] on a csr input              vs A.T @ x
         A+B     C[i,j] = A[i,j] + B[i,j] into csr, B of A's pattern (other
                 values) and of another (A's rows reversed)      vs A + B
         A∘B     C[i,j] = A[i,j] * B[i,j], the same two B        vs A.multiply(B)
         A·B     C[i,j] = A[i,k] * B[k,j] into csr, B = A (1e3 to 1e5 only) vs A @ A
         rowsum  y[i] = A[i,j]                                  vs A.sum(axis=1)
         xAy     s = x[i]*A[i,j]*y[j]                           vs x @ (A @ y)

Each case alternates its two calls one at a time (a seeded shuffle per round, the
collector paused) and reports the medians of the thread's CPU time
(time.thread_time) and of wall time, and their ratios etchpy / scipy.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench.kernels import rng_for
from bench.timing import alternate_clocks, fmt_time

TARGETS = (1_000, 10_000, 100_000, 1_000_000)


def _canonical(A):
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.sort_indices()
    return A


def fem_p1(refine: int):
    """scikit-fem's P1 Laplacian on the unit square's triangle mesh refined `refine` times."""
    import skfem
    from skfem.models.poisson import laplace
    basis = skfem.Basis(skfem.MeshTri().refined(refine), skfem.ElementTriP1())
    return _canonical(laplace.assemble(basis))


def knn_digits(samples: int, k: int):
    """The k-nearest-neighbour graph (distances as weights) of scikit-learn's bundled
    digits, its first `samples` images."""
    from sklearn.datasets import load_digits
    from sklearn.neighbors import kneighbors_graph
    X = load_digits().data[:samples]
    return _canonical(kneighbors_graph(X, k, mode="distance"))


def matrices(quick: bool):
    """(family, size label, csr matrix), about 1e3 .. 1e6 stored entries (quick: to 1e5)."""
    from bench.calls import stencil3_csr
    from bench.calls_graph import camera_graph
    fem = {1_000: 4, 10_000: 5, 100_000: 7, 1_000_000: 9}
    grid3 = {1_000: 6, 10_000: 12, 100_000: 25, 1_000_000: 53}
    knn = {1_000: (100, 10), 10_000: (1000, 10), 100_000: (1797, 56)}
    for target in TARGETS[:3] if quick else TARGETS:
        yield "scikit-fem P1 2-D", target, fem_p1(fem[target])
        yield "3-D 7-point Poisson", target, stencil3_csr(grid3[target])
        if target in knn:
            yield "k-NN digits", target, knn_digits(*knn[target])
        else:
            yield "camera pixel graph", target, _canonical(camera_graph()).astype(np.float64)


def other_pattern(A):
    """A's rows reversed: the same entries a row, another pattern."""
    return _canonical(A[np.arange(A.shape[0])[::-1]])


def same_pattern(A, rng):
    B = A.copy()
    B.data = rng.uniform(1.0, 2.0, B.nnz)
    return B


def _pool(rng, shape, n):
    return [rng.random(shape) for _ in range(n)]


def compiled(text):
    """The kernel of `text`, A and B csr, a 2-d output csr (compiled when a case runs)."""
    output = "csr" if text.startswith("C[") else "dense"
    return ep.compile(text, formats={n: "csr" for n in "AB" if f"{n}[" in text}, output=output)


def cases(A, rng):
    """(kernel name, statement, etchpy call, scipy call, pool of dense operands) for one
    matrix: each call takes the kernel and one of the pool's operands."""
    n, m = A.shape
    few = 8 if A.nnz < 100_000 else 3
    out = [(f"SpMM X of {cols} column{'s' * (cols > 1)}", "Y[i, k] = A[i, j] * X[j, k]",
            lambda k, X: k(A=A, X=X), lambda X: A @ X, _pool(rng, (m, cols), few))
           for cols in (1, 4, 10, 16)]   # 1 and 10: no lanes, the generic nest
    out.append(("SpMVᵀ (csr)", "y[j] = A[i, j] * x[i]", lambda k, x: k(A=A, x=x),
                lambda x: A.T @ x, _pool(rng, n, few)))
    out.append(("row sums", "y[i] = A[i, j]", lambda k, _: k(A=A), lambda _: A.sum(axis=1),
                [None]))
    out.append(("sum of all entries", "s = A[i, j]", lambda k, _: k(A=A), lambda _: A.sum(),
                [None]))
    xs = list(zip(_pool(rng, n, few), _pool(rng, m, few)))
    out.append(("x·(A y)", "s = x[i] * A[i, j] * y[j]", lambda k, p: k(A=A, x=p[0], y=p[1]),
                lambda p: p[0] @ (A @ p[1]), xs))
    return out


def sparse_cases(A, rng):
    """cases' rows for the sparse outputs, the pool the one B."""
    add, mul = "C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]"
    out = []
    for label, B in (("same pattern", same_pattern(A, rng)), ("other pattern", other_pattern(A))):
        out.append((f"A+B {label}", add, lambda k, B: k(A=A, B=B), lambda B: A + B, [B]))
        out.append((f"A∘B {label}", mul, lambda k, B: k(A=A, B=B), lambda B: A.multiply(B), [B]))
    if A.nnz <= 200_000:
        out.append(("A·A (SpGEMM)", "C[i, j] = A[i, k] * B[k, j]", lambda k, B: k(A=A, B=B),
                    lambda B: A @ B, [A]))
    return out


def _close(ours, theirs):
    """ours equals theirs within rounding (a sparse pair compared as sparse: n² is large)."""
    if sp.issparse(theirs):
        ours = sp.csr_array(ours)
        scale = abs(theirs).max() + 1
        assert ours.shape == theirs.shape and abs(ours - theirs).max() <= 1e-9 * scale
        return
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9 * (np.abs(theirs).max() + 1))


def run_case(text, ours, theirs, pool, seconds):
    """(cpu, wall) medians of etchpy and scipy on one case, the answers compared first."""
    kern = compiled(text)
    _close(ours(kern, pool[0]), theirs(pool[0]))
    a, b = itertools.cycle(pool).__next__, itertools.cycle(pool).__next__
    return alternate_clocks([lambda: ours(kern, a()), lambda: theirs(b())], seconds, most=4000)


def part_kernels(quick, seconds, say, calls, source=None, only=None) -> list[dict]:
    """The survey: one row per matrix and kernel. `source`: (family, target, matrix)
    triples in place of `matrices(quick)`; `only`: the names of the cases to run."""
    rows = []
    for family, target, A in matrices(quick) if source is None else source:
        rng = rng_for(f"calls-kernels-{family}-{target}")
        say(f"  {family}: n={A.shape[0]:,} nnz={A.nnz:,}")
        for name, text, ours, theirs, pool in cases(A, rng) + sparse_cases(A, rng):
            if only is not None and name not in only:
                continue
            (oc, ow), (pc, pw) = run_case(text, ours, theirs, pool,
                                          seconds * (2 if A.nnz > 5e5 else 1))
            rows.append({"part": "kernels", "case": f"{name}, {family} nnz={A.nnz:,}",
                         "kernel": name, "family": family, "nnz": int(A.nnz),
                         "etchpy_s": oc, "peer": "scipy", "peer_s": pc, "ratio": oc / pc,
                         "etchpy_wall_s": ow, "peer_wall_s": pw, "wall_ratio": ow / pw,
                         "target": 1.0, "met": oc / pc <= 1.0})
            say(f"    {name:<26} cpu {fmt_time(oc):>9} / {fmt_time(pc):>9} = {oc / pc:5.2f}×"
                f"   wall {fmt_time(ow):>9} / {fmt_time(pw):>9} = {ow / pw:5.2f}×"
                f"{'' if oc <= pc else '  MISSED'}")
    return rows

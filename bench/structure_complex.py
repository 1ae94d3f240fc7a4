"""Complex SpMV and SpGEMM against scipy on complex128 (issue 40's complex
target: ≤ 1.0× scipy), scipy inputs, one thread, etchpy and scipy alternating
call by call in one process, ratios of medians:

    python -m bench complex [--rounds N] [--only poisson,random,short,spmv] [--quick]

poisson  the 2-d five-point Laplacian on an n×n grid (n = 1000: 1e6 rows,
         5 a row) plus an imaginary shift iσ·I (a Helmholtz-type operator),
         built with scipy.sparse; SpMV y = A·x, and SpGEMM A·A (n = 300; and
         the 3-d seven-point one on 45³ nodes)
random   a random csr matrix with complex entries (1e6 rows, 8 a row for SpMV;
         2e4 rows, 10 a row for SpGEMM)
short    SpGEMM A·A with short output rows: random rows of 4 and of 8 (5e4 rows;
         about 16 and 64 a row out) and scikit-fem's P1 Laplacian on a triangle
         mesh refined 8 times (66,049 nodes in refinement order, 13 a row out),
         each in float64, float32 and complex128
spmv     SpMV y = A·x with a new x each call (four vectors in turn, as an
         iterative solver's): the 2-d and 3-d shifted operators (1e6 rows),
         random rows of 8 (1e6 rows) and the P1 mesh refined 9 times (263,169
         nodes)

Both outputs are what the user asks for: a dense vector, a sorted csr matrix
(scipy's `A @ B` leaves its rows' columns unsorted). `cases(quick=True)` gives
small versions whose values the tests compare (no time is asserted).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import functools
import itertools

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from bench.kernels import per_row_csr
from bench.timing import alternating_medians, fmt_ratio, fmt_time

TARGET = 1.0


def shifted_poisson(n: int, shift: float = 0.5) -> sp.csr_array:
    """The five-point Laplacian on an n×n grid plus i·shift on the diagonal."""
    t = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(n)
    lap = sp.kron(t, eye) + sp.kron(eye, t)
    return sp.csr_array(lap + 1j * shift * sp.eye_array(n * n), dtype=np.complex128)


def shifted_poisson3(n: int, shift: float = 0.5) -> sp.csr_array:
    """The seven-point Laplacian on an n×n×n grid plus i·shift on the diagonal."""
    t = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(n)
    lap = (sp.kron(sp.kron(t, eye), eye) + sp.kron(sp.kron(eye, t), eye)
           + sp.kron(sp.kron(eye, eye), t))
    return sp.csr_array(lap + 1j * shift * sp.eye_array(n ** 3), dtype=np.complex128)


def random_complex(rng, n: int, per_row: int) -> sp.csr_array:
    """A random n×n csr matrix, per_row entries a row, complex values."""
    m = per_row_csr(rng, n, n, per_row).tocsr()
    return sp.csr_array((m.data - 0.5 + 1j * rng.standard_normal(m.nnz), m.indices,
                         m.indptr), shape=m.shape)


@functools.lru_cache(maxsize=2)
def p1_triangles(refine: int = 8) -> sp.csr_array:
    """scikit-fem's P1 Laplacian on the unit square's triangle mesh refined
    `refine` times, nodes in refinement order (random-looking columns)."""
    import skfem
    from skfem.models.poisson import laplace
    mesh = skfem.MeshTri().refined(refine)
    return sp.csr_array(laplace.assemble(skfem.Basis(mesh, skfem.ElementTriP1())))


def _kernels(semiring="complex"):
    i, j, k = ep.indices("i j k")
    A, B, x = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr"), ep.tensor("x", 1)
    spmv = ep.compile(ep.sum(j, A[i, j] * x[j]), semiring=semiring)
    spgemm = ep.compile(ep.sum(k, A[i, k] * B[k, j]), semiring=semiring, output="csr")
    return spmv, spgemm


def short_cases(rng, quick: bool = False):
    """SpGEMM A·A with short output rows, float64, float32 and complex128
    (quick: no scikit-fem mesh)."""
    gemm = {"f64": _kernels("real")[1], "f32": _kernels("real32")[1], "c128": _kernels()[1]}
    rows = 500 if quick else 50_000
    mats = [(f"rows of {k} n={rows:,}", random_complex(rng, rows, k)) for k in (4, 8)]
    if not quick:                     # (importing scikit-fem takes seconds)
        mats.append(("P1 triangles", sp.csr_array(p1_triangles(8), dtype=complex)))
    out = []
    for what, M in mats:
        for dtype, f in gemm.items():
            Md = sp.csr_array(M if dtype == "c128" else
                              M.real.astype(np.float32 if dtype == "f32" else np.float64))
            out.append((f"SpGEMM {what} {dtype}",
                        lambda Md=Md, f=f: f(A=Md, B=Md), lambda Md=Md: Md @ Md))
    return out


def spmv_cases(rng, quick: bool = False):
    """SpMV on complex128 operators, each call with the next of four new x (an
    x the caller has just written, as in an iterative solver; etchpy does not
    see the last call's x again) (quick: no scikit-fem mesh)."""
    spmv = _kernels()[0]
    n2, n3, rows = (30, 8, 2000) if quick else (1000, 100, 1_000_000)
    mats = [(f"2-d shifted Poisson n={n2 * n2:,}", shifted_poisson(n2)),
            (f"3-d shifted Poisson n={n3 ** 3:,}", shifted_poisson3(n3)),
            (f"random rows of 8 n={rows:,}", random_complex(rng, rows, 8))]
    if not quick:
        mats.append(("P1 triangles n=263,169", sp.csr_array(p1_triangles(9), dtype=complex)))
    out = []
    for what, M in mats:
        n = M.shape[1]
        xs = [rng.standard_normal(n) + 1j * rng.standard_normal(n) for _ in range(4)]
        ours, theirs = itertools.cycle(xs), itertools.cycle(xs)
        out.append((f"SpMV new x {what}", lambda M=M, c=ours: spmv(A=M, x=next(c)),
                    lambda M=M, c=theirs: M @ next(c)))
    return out


def cases(quick: bool = False, groups=("poisson", "random", "short", "spmv")):
    """{group: [(label, etchpy call, scipy call)]} of the groups asked (poisson
    and random always), sized for timing or, with quick, for a test."""
    rng = np.random.default_rng(40)
    spmv, spgemm = _kernels()
    grid, grid_mm = (30, 12) if quick else (1000, 300)
    rows, rows_mm = (2000, 500) if quick else (1_000_000, 20_000)
    P, Pm = shifted_poisson(grid), shifted_poisson(grid_mm)
    R, Rm = random_complex(rng, rows, 8), random_complex(rng, rows_mm, 10)
    out = {}
    for name, M, Mm, what in (("poisson", P, Pm, "shifted Poisson"),
                              ("random", R, Rm, "random")):
        v = rng.standard_normal(M.shape[1]) + 1j * rng.standard_normal(M.shape[1])
        out[name] = [
            (f"SpMV {what} n={M.shape[0]:,}",
             lambda M=M, v=v: spmv(A=M, x=v), lambda M=M, v=v: M @ v),
            (f"SpGEMM {what} n={Mm.shape[0]:,}",
             lambda Mm=Mm: spgemm(A=Mm, B=Mm), lambda Mm=Mm: Mm @ Mm)]
    P3 = shifted_poisson3(4 if quick else 45)
    out["poisson"].append((f"SpGEMM 3-d shifted Poisson n={P3.shape[0]:,}",
                           lambda: spgemm(A=P3, B=P3), lambda: P3 @ P3))
    if "short" in groups:
        out["short"] = short_cases(rng, quick)
    if "spmv" in groups:                # its own generator: the others' draws are as before
        out["spmv"] = spmv_cases(np.random.default_rng(41), quick)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench complex", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--only", default="poisson,random,short,spmv")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = ap.parse_args(argv)
    table, missed = cases(args.quick, args.only.split(",")), 0
    print(f"{'case (complex128 unless said)':<44} {'etchpy':>9} {'scipy':>9}  {'ratio':>5} {'target':>6}")
    for name in args.only.split(","):
        for label, ours, theirs in table[name]:
            med = alternating_medians([ours, theirs], args.rounds)
            missed += med[0] / med[1] > TARGET
            print(f"{label:<44} {fmt_time(med[0]):>9} {fmt_time(med[1]):>9}  "
                  f"{fmt_ratio(med[0] / med[1]):>5} {TARGET:>6}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

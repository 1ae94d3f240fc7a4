"""The cost of a call (issue 39) on scipy's structured layouts, a part of
`python -m bench calls`:

  structured  y = A·x through `ep.einsum("ij,j->i", A, x)`, A a scipy bsr or dia
       array passed on every call and a new x on every call, against scipy's
       A @ x: bsr of scikit-fem's 2-D linear elasticity (2×2 blocks: the two
       displacements of a node) and of a random matrix of 4×4 blocks; dia of the
       1-D Laplacian (what `sp.diags` returns) and of the 2-D 5-point Poisson
       stencil. A bsr array is bound as it lies (format bsr, a tile level); a dia
       array is regrouped into row bands on every call (format uniform_band).

Each case alternates its two calls one at a time (bench.calls.alternate) and
reports medians and their ratio etchpy / scipy (target ≤ 1.0).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench.kernels import rng_for


def elasticity(refine: int):
    """scikit-fem's 2-D linear elasticity stiffness on a refined square, as bsr of
    2×2 blocks (a node's two displacements are adjacent unknowns)."""
    import skfem
    from skfem.models.elasticity import lame_parameters, linear_elasticity
    basis = skfem.Basis(skfem.MeshTri().refined(refine), skfem.ElementVector(skfem.ElementTriP1()))
    K = sp.csr_array(linear_elasticity(*lame_parameters(1e3, 0.3)).assemble(basis))
    K.sum_duplicates()
    return sp.bsr_array(K, blocksize=(2, 2))


def random_blocks(n: int, per_row: int, size: int, rng):
    """A bsr array of n×n blocks of size×size, about per_row blocks a block row."""
    pattern = sp.random_array((n, n), density=per_row / n, rng=rng, format="csr")
    return sp.bsr_array(sp.kron(pattern, rng.random((size, size)), format="bsr"))


def matrices(quick: bool):
    """(family, scipy array) of about 1e4 .. 1e6 stored entries (quick: to 1e5)."""
    from bench.calls import stencil_csr
    rng = rng_for("calls-structured")
    for k, (refine, blocks, rows, grid) in enumerate(((4, 300, 3_000, 45), (6, 1_500, 30_000, 141),
                                                      (8, 6_000, 300_000, 450))):
        if quick and k == 2:
            break
        yield "bsr 2×2, scikit-fem elasticity", elasticity(refine)
        yield "bsr 4×4, random blocks", random_blocks(blocks, 6, 4, rng)
        yield "dia, 1-D Laplacian", sp.diags_array([1.0, -2.0, 1.0], offsets=[-1, 0, 1],
                                                   shape=(rows, rows))
        yield "dia, 2-D 5-point Poisson", sp.dia_array(stencil_csr(grid))


def part_structured(quick, seconds, say, calls) -> list[dict]:
    """One row per matrix: ep.einsum's SpMV against scipy's, a new x every call."""
    rows = []
    for family, A in matrices(quick):
        n = A.shape[1]
        rng = rng_for(f"calls-structured-x-{n}")
        pool = [rng.random(n) for _ in range(8 if A.nnz < 100_000 else 3)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ep.PerformanceWarning)   # dia: regrouped
            np.testing.assert_allclose(ep.einsum("ij,j->i", A, pool[0]), A @ pool[0],
                                       rtol=1e-9, atol=1e-9 * abs(A @ pool[0]).max())
            ours, theirs = (itertools.cycle(pool).__next__ for _ in range(2))
            t = calls.alternate([lambda: ep.einsum("ij,j->i", A, ours()),
                                 lambda: A @ theirs()], seconds * (2 if A.nnz > 5e5 else 1),
                                most=4000)
        nnz = int(A.data.size)
        rows.append(calls.row("structured", f"{family} n={A.shape[0]:,} stored={nnz:,}",
                              t[0], "scipy A @ x", t[1], 1.0, nnz=nnz, family=family))
        calls.say_row(rows[-1], say)
    return rows

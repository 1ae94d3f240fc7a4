"""A compiled complex product is numpy's textbook product, (ac − bd) + (ad + bc)i, on
every pair of special parts (0, ±1, ±0.5, ±inf, NaN): the kernels do not
follow C99 Annex G, which recovers infinities numpy leaves as NaN
(proofs_notes/complex.md, "The product in C")."""
import itertools
import warnings

import numpy as np
import pytest

import etchpy as ep

# No finite part whose product overflows: there a fused multiply-add (Tuning.fp_contract,
# and numpy's own vector loops) gives -inf where two roundings give NaN.
PARTS = (0.0, 1.0, -1.0, 0.5, -0.5, np.inf, -np.inf, np.nan)
SPECIAL = np.array([complex(r, m) for r, m in itertools.product(PARTS, repeat=2)])


def _same(got, want):
    """Equal part by part, NaN equal to NaN."""
    def eq(u, v):
        return (np.isnan(u) & np.isnan(v)) | (u == v)
    return eq(got.real, want.real) & eq(got.imag, want.imag)


@pytest.mark.parametrize("semiring", ["complex", "complex64"])
def test_compiled_products_are_numpys_on_special_values(semiring):
    dt = np.complex128 if semiring == "complex" else np.complex64
    a_vals, b_vals = (np.array(p, dtype=dt) for p in zip(*itertools.product(SPECIAL, SPECIAL)))
    (i,), (j,) = ep.indices("i"), ep.indices("j")
    a, b = ep.tensor("a", 1), ep.tensor("b", 1)
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = np.multiply(a_vals, b_vals)
        got = ep.compile(a[i] * b[i], semiring=semiring)(a=a_vals, b=b_vals)
        assert _same(np.asarray(got), want).all()
        n = len(a_vals)                   # one entry a row: the sum adds the product to 0
        rows = ep.Tensor.from_coords((np.arange(n), np.arange(n)), a_vals, (n, n), "csr")
        got = ep.compile(ep.sum(j, A[i, j] * x[j]), semiring=semiring)(A=rows, x=b_vals)
        assert _same(np.asarray(got), want + dt(0)).all()

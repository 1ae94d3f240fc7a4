"""SpGEMM's sorted row write on the paths a touched row takes by default (the
near insertion, rows below marks_walk_min written to their ranked places, the
network, the marks walk, the quicksort), complex, on two threads, against the
dense reference: rows of 0, 1 and many entries, banded rows (repeated columns,
nearly sorted touched rows within 1/8 of the dimension) and random ones; and
rows of exactly 0, 1, 16, 17, 32, 33, 40, 41 and 48 out."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

VARIANTS = {  # (semiring, threads, tuning); the knobs' other paths: tests/c/test_c_helpers.py
    "complex, threads 2": ("complex", 2, None),
}  # (real32 runs in tests/end_to_end/test_bench_complex.py; 32 lanes: tests/c/test_c_helpers.py)
DTYPES = {"complex": np.complex128, "real32": np.float32}
KERNELS = {}


def kernel(name):
    if name not in KERNELS:
        semiring, threads, tuning = VARIANTS[name]
        i, j, k = ep.indices("i j k")
        A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
        KERNELS[name] = ep.compile(ep.sum(k, A[i, k] * B[k, j]), semiring=semiring,
                                   output="csr", threads=threads, tuning=tuning)
    return KERNELS[name]


@st.composite
def operand(draw, rows, cols, dtype):
    """A csr matrix whose rows hold 0, 1 or many entries, banded around the
    row's place or random."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    banded = draw(st.booleans())
    r, c = [], []
    for i in range(rows):
        n = min(cols, draw(st.sampled_from([0, 1, 2, 4, 8, 30])))
        if banded:
            mid = i * cols // max(rows, 1)
            picks = np.clip(mid + rng.integers(-4, 5, n), 0, cols - 1)
        else:
            picks = rng.integers(0, cols, n)
        picks = np.unique(picks)
        r += [i] * len(picks)
        c += list(picks)
    vals = rng.integers(1, 5, len(r)).astype(float)
    if dtype == np.complex128:
        vals = vals + 1j * rng.integers(-2, 3, len(r))
    return sp.csr_array((vals, (r, c)), shape=(rows, cols))


@pytest.mark.parametrize("name", list(VARIANTS))
@settings(max_examples=8, deadline=None)
@given(st.data())
def test_spgemm_rows_equal_the_dense_product(name, data):
    dtype = DTYPES[VARIANTS[name][0]]
    n = data.draw(st.integers(0, 40), label="n")
    m = data.draw(st.integers(1, 40), label="m")
    p = data.draw(st.sampled_from([1, 7, 300, 3000]), label="p")
    A = data.draw(operand(n, m, dtype), label="A")
    B = data.draw(operand(m, p, dtype), label="B")
    A, B = A.astype(dtype), B.astype(dtype)
    got = kernel(name)(A=A, B=B)
    assert got.has_sorted_indices and got.dtype == dtype
    np.testing.assert_allclose(got.toarray(), A.toarray() @ B.toarray(), rtol=1e-6)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_rows_of_0_1_16_17_and_32_entries(name):
    """Each output row is one row of B (A a permutation): rows of exactly 0, 1,
    16, 17, 32, 33, 40, 41 and 48 random columns, around the network's and the
    rank's widths and the ranked places' limit (c.sorted_walk.place_max)."""
    rng = np.random.default_rng(38)
    sizes = [0, 1, 16, 17, 32, 33, 40, 41, 48, 2, 15]
    cols = [rng.choice(5000, k, replace=False) for k in sizes]
    B = sp.csr_array((np.arange(1.0, 1 + sum(sizes)), np.concatenate(cols),
                      np.cumsum([0] + sizes)), shape=(len(sizes), 5000))
    perm = rng.permutation(len(sizes))
    A = sp.csr_array((np.ones(len(sizes)), perm, np.arange(len(sizes) + 1)))
    dtype = DTYPES[VARIANTS[name][0]]
    got = kernel(name)(A=A.astype(dtype), B=B.astype(dtype))
    assert got.has_sorted_indices and list(np.diff(got.indptr)) == [sizes[p] for p in perm]
    np.testing.assert_array_equal(got.toarray(), (A @ B).toarray())

"""Temporaries fused into a reader that adds other terms (plan.fusion `Link.whole`,
lower.schedule.fuse_temps): `b[i] − Σ_j A[i,j]·x[j]` and `c·Σ_j …` run as the
SpMV's own nest, the row's sum in a one-cell workspace the compiler keeps in a
register, each output cell stored once (no zero fill); a driver that skips points
of the prefix (a sparse row level) keeps the temporary; a scalar of the rows'
values (`x·A·x`, `|v − A·x|²`) sums in a register. Every semiring and index
name gives the dense reference's answer, rows without entries included, with the
fusion on and off, and a malformed scipy input is still refused."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.semiring import semirings
from etchpy.tuning import Tuning

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = Tuning(fused_temporaries=False)


def _matrix(seed, n=300, m=200):
    M = sp.random_array((n, m), density=0.03, format="csr", random_state=seed)
    M.data = np.round(M.data * 8) + 1
    keep = np.ones(n, bool)
    keep[::7] = False                                  # rows without entries
    return sp.csr_array(sp.diags_array(keep.astype(float)) @ M)


@pytest.mark.parametrize("names, sr, form", [(("i", "j"), "real", "v - A x"),
                                             (("pos", "row"), "min_plus", "v + 3 A x"),
                                             (("out", "n"), "max_times", "2 A x")])
def test_a_whole_reader_runs_in_the_walk_and_agrees_with_the_reference(names, sr, form):
    i, j = ep.indices(" ".join(names))
    A, x, v = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("v", 1)
    ring = semirings.get(sr)
    M, rng = _matrix(len(sr)), np.random.default_rng(len(names[0]))
    args = {"A": M, "x": rng.integers(-3, 6, 200).astype(float),
            "v": rng.integers(-3, 6, 300).astype(float)}
    walk = ep.sum(j, A[i, j] * x[j])
    forms = {"v - A x": v[i] - walk, "v + 3 A x": v[i] + 3.0 * walk,
             "2 A x": ep.sum(j, 2.0 * A[i, j] * x[j])}
    e = forms[form]
    on = ep.compile(e, semiring=ring, threads=1)
    off = ep.compile(e, semiring=ring, threads=1, tuning=OFF)
    used = {k: a for k, a in args.items() if k in on.tensors}
    want = ep.evaluate(e, semiring=ring, backend="reference", **used)
    for kern in (on, off):
        np.testing.assert_allclose(kern(**used), want, rtol=1e-12, err_msg=str(e))
        T = {**used, "A": ep.Tensor.from_scipy(M, semiring=ring)}
        np.testing.assert_allclose(kern(**T), want, rtol=1e-12, err_msg=str(e))
    assert "one nest" in on.explain() and "one nest" not in off.explain()
    assert "out_zeroed" not in on.c_source and "tmp_vals[1];" in on.c_source
    bad = M.copy()
    bad.indices[bad.indptr[100]] = 200                 # past the last column
    with pytest.raises(InputError, match="A"):
        on(**{**used, "A": bad})


@pytest.mark.parametrize("names, sr", [(("n", "out"), "real"), (("row", "pos"), "min_plus")])
def test_a_scalar_of_the_rows_sums_in_a_register(names, sr):
    # x·(A x) and |v − A x|²: the temporary read under a product, and twice
    i, j = ep.indices(" ".join(names))
    A, x, v = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("v", 1)
    ring, walk = semirings.get(sr), ep.sum(j, A[i, j] * x[j])
    r = v[i] + 3.0 * walk if sr == "min_plus" else v[i] - walk
    M, rng = _matrix(2, m=300), np.random.default_rng(2)
    args = {"A": M, "x": rng.integers(-3, 6, 300).astype(float),
            "v": rng.integers(-3, 6, 300).astype(float)}
    for e in (ep.sum(i, x[i] * walk), ep.sum(i, r * r)):
        kern = ep.compile(e, semiring=ring, threads=1)
        used = {k: a for k, a in args.items() if k in kern.tensors}
        want = ep.evaluate(e, semiring=ring, backend="reference", **used)
        np.testing.assert_allclose(kern(**used), want, rtol=1e-12, err_msg=str(e))
        assert "one nest" in kern.explain() and "out_fold[1];" in kern.c_source


def test_a_driver_that_skips_rows_keeps_the_temporary():
    i, j = ep.indices("i j")
    A, x, v = ep.tensor("A", 2, format="dcsr"), ep.tensor("x", 1), ep.tensor("v", 1)
    e = v[i] - ep.sum(j, A[i, j] * x[j])
    kern = ep.compile(e, threads=1)
    assert "one nest" not in kern.explain()
    M, rng = _matrix(5), np.random.default_rng(5)
    args = {"A": ep.Tensor.from_scipy(M, "dcsr"), "x": rng.standard_normal(200),
            "v": rng.standard_normal(300)}
    np.testing.assert_allclose(kern(**args), args["v"] - M @ args["x"], rtol=1e-12)

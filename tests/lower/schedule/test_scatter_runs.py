"""A scatter's runs in a register (lower.schedule.scatter_runs, Tuning.scatter_runs): a
coo input's walk into a dense output keeps the cell it fills in a register and flushes
it when the coordinate changes. Entries in order, shuffled, repeated, under every
semiring and index name give the dense reference's answer with the pass on and off;
the checked build still refuses a coordinate out of range (its order-free test reads
the run's flush as the add it stands for: scatter_runs.is_flush)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.semiring import semirings

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = {"scatter_runs": False}


def _coo(seed, order):
    """A 60 × 40 coo_array with rows of 0-9 entries: in row order, shuffled, or with
    repeated entries in runs and apart."""
    rng = np.random.default_rng(seed)
    M = sp.random_array((60, 40), density=0.12, format="coo", random_state=seed)
    M = sp.coo_array(M.tocsr().tocoo())
    row, col, val = M.row.copy(), M.col.copy(), M.data.copy()
    if order == "repeats":
        take = rng.integers(0, len(row), 30)
        row, col, val = np.r_[row, row[take]], np.r_[col, col[take]], np.r_[val, val[take] / 2]
        keep = np.argsort(row, kind="stable")
        row, col, val = row[keep], col[keep], val[keep]
    elif order == "shuffled":
        p = rng.permutation(len(row))
        row, col, val = row[p], col[p], val[p]
    return sp.coo_array((np.round(val * 8), (row, col)), shape=M.shape)


@pytest.mark.parametrize("names, sr", [(("i", "j"), "real"), (("pos", "row"), "min_plus"),
                                       (("out", "n"), "max_times")])
def test_runs_agree_with_the_reference_in_every_order(names, sr):
    i, j = ep.indices(" ".join(names))
    A, x = ep.tensor("A", 2, format="coo"), ep.tensor("x", 1)
    ring = semirings.get(sr)
    for e in (ep.sum(j, A[i, j] * x[j]), ep.sum(j, A[i, j])):
        on = ep.compile(e, semiring=ring, threads=1)
        off = ep.compile(e, semiring=ring, threads=1, tuning=OFF)
        assert "run_at" in on.c_source and "run_at" not in off.c_source
        for order in ("in order", "shuffled", "repeats"):
            M = _coo(len(names[0]) + len(sr), order)
            xv = np.random.default_rng(3).integers(-3, 6, 40).astype(float)
            args = {"A": M, "x": xv} if "x" in on.tensors else {"A": M}
            want = ep.evaluate(e, semiring=ring, backend="reference", **args)
            for kern in (on, off):
                np.testing.assert_allclose(kern(**args), want, rtol=1e-12, err_msg=order)
                T = {**args, "A": ep.Tensor.from_scipy(M, "coo", semiring=ring)}
                np.testing.assert_allclose(kern(**T), want, rtol=1e-12, err_msg=order)


def test_the_checked_build_keeps_refusing_a_coordinate_out_of_range():
    i, j = ep.indices("i j")
    kern = ep.compile(ep.sum(j, ep.tensor("A", 2, format="coo")[i, j] * ep.tensor("x", 1)[j]),
                      threads=1)
    assert kern.compiled.checked is not None and "A" in kern.compiled.checked.fused
    M, x = _coo(7, "in order"), np.ones(40)
    np.testing.assert_allclose(kern(A=M, x=x), M @ x)
    for at, arr in ((5, "row"), (len(M.row) - 1, "col")):
        bad = sp.coo_array((M.data, (M.row.copy(), M.col.copy())), shape=M.shape)
        getattr(bad, arr)[at] = 60 if arr == "row" else 40
        with pytest.raises(InputError, match="A"):
            kern(A=bad, x=x)
    np.testing.assert_allclose(kern(A=M, x=x), M @ x)

"""Gathered sums over min_plus, max_plus and max_times (imp.GatherSum's `ops`,
ep_gather_ext): min and max do not round and each product is rounded as the loop
rounds it, so the lanes give the loop's result exactly. A scipy input's values
are checked for NaN by the kernel's walks where they read every stored value
(fused_checks.reads_every_value, Program.fused_nan), so the runtime leaves out
its own pass; a NaN anywhere is still refused with an InputError naming the
input (proofs_notes/gather_sums.md, validation.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lower.schedule import fused_checks

from test_gather_sums import matrices

SPMV = "y[i] = A[i,j] * x[j]"
LANES = ("min_plus", "max_plus", "max_times")


def reference(A, x, semiring):
    """Σ_j A[i,j] ⊗ x[j] over the stored entries, by numpy on the dense matrix."""
    dense, stored = A.toarray(), (A != 0).toarray()
    if semiring == "min_plus":
        return np.where(stored, dense + x, np.inf).min(axis=1, initial=np.inf)
    if semiring == "max_plus":
        return np.where(stored, dense + x, -np.inf).max(axis=1, initial=-np.inf)
    return np.where(stored, dense * x, 0.0).max(axis=1, initial=0.0)


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("case", list(dict(matrices())))
@pytest.mark.parametrize("semiring", LANES)
def test_lanes_give_the_loops_result_exactly(semiring, case, idx):
    A = dict(matrices())[case]
    A = sp.csr_array((A.data + 0.25, A.indices.astype(idx), A.indptr.astype(idx)),
                     shape=A.shape)
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring=semiring)
    rng = np.random.default_rng(2)
    for _ in range(2):                                      # a new x each call
        x = rng.standard_normal(A.shape[1]) * 4
        want = reference(A, x, semiring)
        np.testing.assert_array_equal(kern(A=A, x=x), want)
        tensor = ep.Tensor.from_scipy(A, "csr")             # the build without checks
        np.testing.assert_array_equal(kern(A=tensor, x=x), want)


@pytest.mark.parametrize("where", [0, 7, 8, 26])         # both chunks and the tail
@pytest.mark.parametrize("rows", ["long", "short regular", "short irregular"])
@pytest.mark.parametrize("semiring", LANES)
def test_a_nan_value_anywhere_is_refused_naming_the_input(semiring, rows, where):
    if rows == "long":
        A = sp.csr_array(np.arange(1, 60 * 80 + 1, dtype=float).reshape(60, 80) % 7 * (
            np.arange(80) % 3 == 0) + (np.arange(80) % 3 == 0))    # 27 entries a row
    elif rows == "short regular":
        A = dict(matrices())["regular short rows"]
    else:
        A = dict(matrices())["irregular short rows"]
    A = A.copy()
    A.data[min(where * 5, A.nnz - 1)] = np.nan
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring=semiring)
    assert kern.compiled.checked.fused_nan == {"A"}
    with pytest.raises(InputError, match="input A contains NaN"):
        kern(A=A, x=np.ones(A.shape[1]))


def test_infinity_minus_infinity_is_not_taken_for_a_nan_input():
    A = sp.csr_array(np.array([[1.0, -np.inf, 2.0] * 6] * 3))   # 18 entries a row
    x = np.array([np.inf, np.inf, 1.0] * 6)
    got = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus")(A=A, x=x)
    assert got.shape == (3,)                                # no InputError


def test_values_are_left_to_the_kernel_only_where_it_reads_every_one():
    def fused_nan(expr, formats, semiring="min_plus"):
        checked = ep.compile(expr, formats=formats, semiring=semiring).compiled.checked
        return checked.fused_nan if checked is not None else frozenset()
    assert fused_nan(SPMV, {"A": "csr"}) == {"A"}
    assert fused_nan("y[i] = 2 * A[i,j] * x[j]", {"A": "csr"}) == {"A"}
    assert fused_nan(SPMV, {"A": "csr"}, semiring="real") == frozenset()    # NaN allowed
    assert fused_nan("y[i] = A[i,j] * B[i,j]", {"A": "csr", "B": "csr"}) == frozenset()
    assert fused_nan("y[i] = A[i,j] * b[i]", {"A": "csr", "b": ep.Format(["compressed"])}) == frozenset()
    assert not fused_checks.reads_every_value(
        ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus").compiled.program, "x")


def test_a_tensor_of_fill_zero_binds_once_and_reads_writes_in_place():
    M = sp.random_array((40, 50), density=0.3, random_state=4, format="csr")
    tensor = ep.Tensor.from_scipy(M, "csr")                 # fill 0: min_plus's is ∞
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus")
    x = np.linspace(0, 1, 50)
    np.testing.assert_array_equal(kern(A=tensor, x=x), reference(M, x, "min_plus"))
    bound = tensor.__dict__.get("_etchpy_bound", {})
    assert bound, "the binding under the semiring's fill is kept"
    assert np.shares_memory(tensor.vals, M.data)            # the Tensor reads M's values
    M.data[0] = -5.0
    np.testing.assert_array_equal(kern(A=tensor, x=x), reference(M, x, "min_plus"))

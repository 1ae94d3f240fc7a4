"""A walk whose body scatters into a row workspace (Gustavson's SpGEMM: each
product touches a cell, listed on its first touch, ⊕-added after) is order-free
when the workspace's list is drained only in order (lower.schedule.order_free,
proofs_notes/validation.md "Order-free walks"): its input is checked for range
alone, so a scipy product (indices left unsorted) or a row with repeats runs the
kernel once, with no sort. Index names from the generated code's own."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.lower.schedule.order_free import drained_lists
from etchpy.testing import assert_same
from tuned import as_scipy

pytestmark = pytest.mark.usefixtures("shared_cache")


def _gemm(names, semiring="real"):
    i, k, j = ep.indices(" ".join(names))
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    e = ep.sum(k, A[i, k] * B[k, j])
    return e, ep.compile(e, output="csr", semiring=semiring, threads=1)


def _unsorted(seed, n=50):
    M = sp.random_array((n, n), density=0.15, format="csr", random_state=seed)
    M = M @ M                                          # scipy leaves its indices unsorted
    assert not M.has_sorted_indices
    return M


def _return_code(kern, inputs) -> int:
    """The code the kernel's C function returns on `inputs` as a call binds them
    (0: done; 4: a fused check failed, and the call would be made again on the
    inputs canonicalised); its outputs freed."""
    runner, lib, types, function, in_args, bound, out_shape, _, _ = kern._make(inputs, None)
    args = list(in_args)
    _, grown = runner._output_args(args, None, out_shape, bound, lib, types)
    code = function(*args)
    free = getattr(lib.lib, f"{runner.name}_free")
    for name, cell in grown.items():
        if code == 0 and "count" not in name:
            free(cell[0])
    return code


@pytest.mark.parametrize("names", [("pos", "out", "n"), ("row", "n", "pos")])
def test_an_unsorted_right_operand_runs_the_kernel_once(names):
    """B of scipy's own product: the checked build tests B's coordinates for range
    only (no `prev` in the kernel), its C function accepts the unsorted arrays
    (code 0: no second call, no sort), and the answer is scipy's."""
    e, kern = _gemm(names)
    checked = kern.compiled.checked
    assert "B" in checked.fused and drained_lists(checked.body)
    assert "_prev" not in kern.c_source
    A, B = sp.random_array((40, 50), density=0.2, format="csr", random_state=1), _unsorted(2)
    assert _return_code(kern, {"A": A, "B": B}) == 0
    np.testing.assert_allclose(as_scipy(kern(A=A, B=B)).toarray(), (A @ B).toarray(),
                               rtol=1e-12, atol=1e-12)
    assert not B.has_sorted_indices                    # the caller's arrays untouched


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_repeats_in_a_scattered_row_combine_by_the_semiring(semiring):
    """A row of B that repeats a coordinate, out of order: its values combine by ⊕
    (min for min_plus), as the canonical B's would (⊗ distributes over ⊕)."""
    sr = ep.semirings.get(semiring)
    e, kern = _gemm(("i", "k", "j"), semiring)
    A = sp.csr_array(np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 5.0]]))
    B = sp.csr_array((np.array([4.0, 1.0, 7.0, 2.0, 6.0, 3.0]), np.array([3, 0, 3, 1, 2, 1]),
                      np.array([0, 3, 4, 6])), shape=(3, 4))        # row 0: 3, 0, 3 (a repeat)
    want = ep.evaluate(e, semiring=semiring, backend="reference",
                       A=ep.Tensor.from_scipy(A, semiring=semiring),
                       B=ep.Tensor.from_scipy(B, semiring=semiring))
    got = as_scipy(kern(A=A, B=B)).tocoo()
    dense = np.full(got.shape, sr.zero, dtype=sr.dtype)
    dense[got.row, got.col] = got.data
    assert_same(dense, want, sr, what="A·B with a repeat in B")


def test_a_coordinate_out_of_range_in_a_scattered_row_is_refused():
    _, kern = _gemm(("i", "k", "j"))
    A = sp.csr_array(np.eye(3))
    B = sp.csr_array((np.ones(3), np.array([2, 9, 0]), np.array([0, 2, 2, 3])), shape=(3, 4))
    with pytest.raises(ep.InputError, match="'B'"):
        kern(A=A, B=B)

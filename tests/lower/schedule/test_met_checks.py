"""Intersections check their scipy inputs whole, a block of rows ahead
(Tuning.met_checks; lower.schedule.met_checks, segment_checks._crd_scan;
proofs_notes/validation.md, "Checks ahead of an intersection"): a bad entry in
a row the merge stops before reading is still refused by the kernel."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import calling

MUL = "C[i, j] = A[i, j] * B[i, j]"
CSR = {"A": "csr", "B": "csr"}
ON = {"met_checks": True, "check_block": 3}


def kernel_rc(kern, values):
    """The return code of the checked build's C function on `values`."""
    runner, lib, types, function, in_args, bound, out_shape, _, _ = kern._make(values, None)
    args = list(in_args)
    runner._output_args(args, None, out_shape, bound, lib, types)
    return function(*args)


def fused(text, formats=CSR, **kw):
    checked = ep.compile(text, output="csr", formats=formats, **kw).compiled.checked
    return checked.fused if checked is not None else frozenset()


def test_which_intersections_are_checked_in_the_kernel():
    assert fused(MUL, tuning=ON) == {"A", "B"}
    assert fused(MUL, tuning=ON, threads=2) == {"A", "B"}
    assert fused(MUL) == frozenset()                                    # off by default
    assert fused(MUL, tuning={**ON, "fused_checks": False}) == frozenset()
    assert fused(MUL, {"A": "dcsr", "B": "dcsr"}, tuning=ON) == frozenset()   # no full loop


def early_pair(seed, n=12, m=20):
    """A and B where B's row 5 holds only column 0: the merge of row 5 stops after
    its first step, leaving A's row 5 (columns 0, 4, 8, 12, 16) unread past it."""
    A = sp.random_array((n, m), density=0.3, format="csr", random_state=seed).tolil()
    B = sp.random_array((n, m), density=0.3, format="csr", random_state=seed + 1).tolil()
    A[5, :] = 0
    B[5, :] = 0
    for col in (0, 4, 8, 12, 16):
        A[5, col] = 1.0 + col
    B[5, 0] = 2.0
    return sp.csr_array(A), sp.csr_array(B)


def _spoil(how, M, row=5):
    """M with one change in `row`'s last entries (the merge's unread tail), in place."""
    p, q = M.indptr, M.indices
    last = p[row + 1] - 1
    if how == "unsorted":
        q[last - 1], q[last] = q[last], q[last - 1]
    elif how == "out_of_range":
        q[last] = M.shape[1]
    elif how == "negative":
        q[last] = -1
    elif how == "indptr_decreasing":
        p[row + 1] = p[row] - 1
    elif how == "indptr_past_nnz":
        p[row + 1] = p[-1] + 3
    return M


@pytest.mark.parametrize("threads", [1, 2])
def test_bad_entries_the_merge_never_reads_are_refused(threads):
    """Each change, made in place after a good call in a row whose merge stops
    early, is found by the kernel (its return code); the call then answers the
    canonical form (unsorted) or raises an InputError naming the input."""
    kern = ep.compile(MUL, output="csr", formats=CSR, tuning=ON, threads=threads)
    hows = ("unsorted", "out_of_range", "negative", "indptr_decreasing", "indptr_past_nnz")
    for seed, how in enumerate(hows):
        for name in "AB" if how.startswith("indptr") else "A":
            A, B = early_pair(seed)
            values = {"A": A, "B": B}
            np.testing.assert_allclose(kern(**values).toarray(), A.multiply(B).toarray())
            _spoil(how, values[name])
            assert kernel_rc(kern, values) == calling.CHECK_FAILED, (how, name)
            if how == "unsorted":
                want = values["A"].toarray() * values["B"].toarray()
                np.testing.assert_allclose(kern(**values).toarray(), want)
            else:
                with pytest.raises(ep.InputError, match=f"'{name}'"):
                    kern(**values)


@pytest.mark.parametrize("threads", [1, 2])
def test_answers_equal_scipy_for_every_way_of_meeting(threads):
    """Merges, gallops (one row 16x longer) and short segments (≤ 4 each), empty
    and full rows, blocks of 3 rows with a last one of two."""
    kern = ep.compile(MUL, output="csr", formats=CSR, tuning=ON, threads=threads)
    rng = np.random.default_rng(0)
    for density in (0.0, 0.1, 0.5, 1.0):
        A = sp.random_array((17, 70), density=density, format="csr", random_state=rng)
        B = sp.random_array((17, 70), density=density, format="csr", random_state=rng).tolil()
        B[3, :] = 0
        B[3, 7] = 1.5           # a row of one against a long one: a gallop
        B = sp.csr_array(B)
        np.testing.assert_allclose(kern(A=A, B=B).toarray(), A.multiply(B).toarray())
        assert kernel_rc(kern, {"A": A, "B": B}) == 0

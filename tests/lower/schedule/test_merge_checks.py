"""Union merges check their scipy inputs where they open them (lower.schedule.
merge_checks, segment_checks._crd_scan; proofs_notes/validation.md, "Checks
inside a union merge"): no pass before the call, the same answers and errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import calling

ADD = "C[i, j] = A[i, j] + B[i, j]"
CSR = {"A": "csr", "B": "csr"}


def kernel_rc(kern, values):
    """The return code of the checked build's C function on `values`."""
    made = kern._make(values, None)
    runner, lib, types, function, in_args, bound, out_shape, _, _ = made
    args = list(in_args)
    runner._output_args(args, None, out_shape, bound, lib, types)
    return function(*args)


def pair(seed, n=40, m=30):
    return [sp.random_array((n, m), density=0.25, format="csr", random_state=seed + k)
            for k in range(2)]


def test_which_merges_are_fused():
    """A union walks both inputs to their ends; an intersection may stop early
    and keeps the full pass (Tuning.fused_checks off: test_changed_inputs.py)."""
    def fused(text, **kw):
        checked = ep.compile(text, output="csr", formats=CSR, **kw).compiled.checked
        return checked.fused if checked is not None else frozenset()
    assert fused(ADD) == {"A", "B"}
    assert fused(ADD, threads=2) == {"A", "B"}
    assert fused("C[i, j] = A[i, j] * B[i, j]") == frozenset()


def _bad(how, M):
    p, q = M.indptr, M.indices
    r = next(r for r in range(len(p) - 1) if p[r + 1] - p[r] >= 2)
    if how == "unsorted":
        q[p[r]], q[p[r] + 1] = q[p[r] + 1], q[p[r]]
    elif how == "out_of_range":
        q[p[r] + 1] = M.shape[1]
    elif how == "negative":
        q[p[r]] = -1
    elif how == "bad_pos":
        p[r + 1] = p[r + 2] + 2 if r + 2 < len(p) else p[r]
    return M


@pytest.fixture(scope="module")
def kern():
    """Blocks of 3 rows: segments checked ahead of blocks, rows longer than one."""
    return ep.compile(ADD, output="csr", formats=CSR, tuning={"check_block": 3})


def test_bad_inputs_refused_by_the_kernel(kern):
    """Each change is found by the kernel (its return code), then the call
    answers the canonical form (unsorted) or raises an InputError naming it;
    arrays changed in place between calls are found the same way (the threaded
    build runs the same checks per block: tests/trust/test_changed_inputs.py)."""
    for seed, how in enumerate(("unsorted", "out_of_range", "negative", "bad_pos")):
        for name in "AB":
            A, B = pair(seed)
            values = {"A": A, "B": B}
            got = kern(**values)
            np.testing.assert_allclose(got.toarray(), (A + B).toarray(), rtol=1e-14)
            _bad(how, values[name])         # changed in place after a call
            assert kernel_rc(kern, values) == calling.CHECK_FAILED, (how, name)
            if how == "unsorted":
                want = values["A"].toarray() + values["B"].toarray()
                np.testing.assert_allclose(kern(**values).toarray(), want, rtol=1e-14)
            else:
                with pytest.raises(ep.InputError, match=f"'{name}'"):
                    kern(**values)


def test_answers_equal_the_dense_reference(kern):
    """Empty inputs, empty rows, full rows, a last block of two rows."""
    for seed, density in enumerate((0.0, 0.05, 0.5, 1.0)):
        A, B = (sp.random_array((17, 9), density=density, format="csr", random_state=seed + k)
                for k in range(2))
        np.testing.assert_allclose(kern(A=A, B=B).toarray(), A.toarray() + B.toarray(),
                                   rtol=1e-14)
        assert kernel_rc(kern, {"A": A, "B": B}) == 0

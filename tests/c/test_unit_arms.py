"""Unit arms (etchpy.unit_arms, Tuning.unit_arms): a kernel whose output's last index
is the last index of row-major dense operands also holds, as a C function of its
own, the kernel with that index dropped, and runs it when every operand's extent
of the index is 1. proofs_notes/unit_arms.md."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.testing import assert_same
from tuned import random_csf, random_csr

pytestmark = pytest.mark.usefixtures("shared_cache")

CASES = [   # (statement, formats, the dense operands' leading shapes by name)
    ("Y[i, k] = A[i, j] * X[j, k]", {"A": "csr"}, {"X": (9,)}),
    ("Y[i, k] = A[i, j] * X[j, k] + Z[i, k]", {"A": "csr"}, {"X": (9,), "Z": (11,)}),
    ("Y[i, k] = A[i, j] * X[j, k] * W[j, k]", {"A": "csc"}, {"X": (9,), "W": (9,)}),
    ("Y[i, r] = B[i, j, l] * C[j, r] * D[l, r]", {"B": "csf"}, {"C": (9,), "D": (7,)}),
]


def _inputs(formats, dense, cols, sr, rng, int64=False):
    out = {}
    for name, fmt in formats.items():
        if fmt == "csf":
            out[name] = random_csf((11, 9, 7), 60, 3)
            continue
        m = random_csr(11, 9, 40, 4)
        m.data = np.rint(m.data * 4 + 1)
        if int64:
            m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
        out[name] = (m if fmt == "csr" else sp.csc_matrix(m)).astype(sr.dtype)
    for name, lead in dense.items():
        out[name] = rng.integers(0, 4, (*lead, cols)).astype(sr.dtype)
    return out


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_an_extent_of_one_runs_the_unit_arm_and_agrees(semiring, case):
    """The C holds `etchpy_kernel_unit` and the exported function calls it when the
    operands' last extents are 1; with extents 1 and 3, scipy inputs of int32 and
    int64 indices and ep.Tensors, a given out=, the result is the reference's."""
    text, formats, dense = case
    sr = ep.semirings.get(semiring)
    kern = ep.compile(text, formats=formats, semiring=sr)
    src = kern.c_source
    assert "static EP_ARM int etchpy_kernel_unit(" in src
    test = re.search(r"if \((.*)\) return etchpy_kernel_unit\(", src).group(1)
    assert set(test.split(" && ")) == {f"{n}_dim{len(lead)} == 1" for n, lead in dense.items()}
    rng = np.random.default_rng(7)
    for cols in (1, 3):
        for int64 in (False, True):
            inputs = _inputs(formats, dense, cols, sr, rng, int64)
            want = ep.evaluate(kern.request.expr, semiring=sr, backend="reference",
                               out_indices=kern.request.out_indices, **inputs)
            assert_same(kern(**inputs), want, sr, what=text)
            tensors = {n: ep.Tensor.from_scipy(v) if sp.issparse(v) else v
                       for n, v in inputs.items()}
            assert_same(kern(**tensors), want, sr, what=text)
            out = np.full(want.shape, 7, dtype=want.dtype)
            assert kern(out=out, **inputs) is out
            assert_same(out, want, sr, what=text)


def test_extents_that_disagree_are_refused_not_run_as_one():
    """X of one column and W of two: the test of the unit arm fails, the kernel's
    own size check refuses the call."""
    kern = ep.compile("Y[i, k] = A[i, j] * X[j, k] * W[j, k]", formats={"A": "csr"})
    A = random_csr(11, 9, 40, 4)
    with pytest.raises(InputError):
        kern(A=A, X=np.ones((9, 1)), W=np.ones((9, 2)))
    with pytest.raises(InputError):
        kern(A=A, X=np.ones((9, 2)), W=np.ones((9, 1)))


@pytest.mark.parametrize("text, formats, options", [
    ("Y[i, k] = A[i, j] * X[j, k]", {"A": "csr"}, {"tuning": {"unit_arms": False}}),
    ("Y[i, k] = A[i, j] * X[j, k]", {"A": "csr"}, {"threads": 2}),
    ("Y[i, k] = A[i, j] * X[k, j]", {"A": "csr"}, {}),          # k not X's last index
    ("Y[i, k] = A[i, j] * X[j, k]", {"A": "csr", "X": "csr"}, {}),   # X not dense
    ("Y[i, k] = A[i, j] * X[j, k]", {"A": "csr"}, {"output": "csr"}),
    ("Y[i, k] = A[i, j] * X[j, k]", {}, {}),                     # nothing sparse: BLAS
    ("Y[i, l, k] = A[i, j] * X[j, l] * X[j, k]", {"A": "csr"}, {}),  # X read without k too
])
def test_no_unit_arm_where_it_does_not_apply(text, formats, options):
    """Off, on threads, an index not last or not dense, a sparse output, a dense
    kernel: no unit function; the kernel still answers an extent of 1."""
    kern = ep.compile(text, formats=formats, **options)
    assert "etchpy_kernel_unit" not in kern.c_source
    A = random_csr(11, 9, 40, 4)
    X = np.arange(9.0).reshape(9, 1) if "X[k, j]" not in text else np.arange(9.0).reshape(1, 9)
    inputs = {"A": A if formats else A.toarray(),
              "X": sp.csr_matrix(X) if formats.get("X") == "csr" else X}
    got = kern(**inputs)
    want = ep.evaluate(kern.request.expr, backend="reference",
                       out_indices=kern.request.out_indices, **inputs)
    np.testing.assert_allclose(got.toarray() if sp.issparse(got) else got, want)

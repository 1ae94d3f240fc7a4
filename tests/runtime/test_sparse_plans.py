"""Call plans of kernels with a sparse output (runtime.call_plans `_sparse_out`):
the plan gives the kernel's grown arrays their cells and reads them back as the
general path does (runtime.outputs.reader), so a call answers exactly as with
`Tuning(sparse_plans=False)`: the same values, type, layout and sortedness, an
empty result included, and inputs changed in place between calls give the right
answer or an InputError. `outputs.compressed` makes scipy's csr/csc without its
constructor only where the constructor sets nothing else."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import outputs
from etchpy.runtime.call_plans import MISS

pytestmark = pytest.mark.usefixtures("shared_cache")

ADD = "C[i, j] = A[i, j] + B[i, j]"
MUL = "C[i, j] = A[i, k] * B[k, j]"
CSR = {"A": "csr", "B": "csr"}


def _pair(rng, n, m, density, fmt="csr"):
    return [sp.random_array((n, m), density=density, format=fmt, dtype=np.float64,
                            random_state=int(rng.integers(1 << 30))) for _ in range(2)]


def _same(got, want):
    assert type(got) is type(want) and got.format == want.format
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.has_canonical_format
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data)


@pytest.mark.parametrize("text, out", [(ADD, "csc"), (MUL, "csr")])
def test_a_sparse_output_plan_answers_as_the_general_path(text, out):
    kern = ep.compile(text, output=out, formats=CSR)
    plain = ep.compile(text, output=out, formats=CSR, tuning={"sparse_plans": False})
    rng = np.random.default_rng(3)
    A, B = _pair(rng, 12, 12, 0.2)
    kern(A=A, B=B)
    assert kern._plan is not None and plain._plan is None
    for density in (0.0, 0.1, 1.0):        # empty, sparse, dense results
        A, B = _pair(rng, 12, 12, density)
        want = plain(A=A, B=B)
        _same(kern(A=A, B=B), want)              # planned, or learnt for this size class
        got = kern._plan({"A": A, "B": B})
        assert got is not MISS
        _same(got, want)
        ref = (A + B if text == ADD else A @ B).asformat(out)
        ref.sort_indices()                       # scipy's product leaves rows unsorted
        _same(want, ref)


def test_tensors_and_a_semiring_whose_output_is_a_tensor():
    kern = ep.compile(ADD, output="csr", formats=CSR, semiring="min_plus")
    plain = ep.compile(ADD, output="csr", formats=CSR, semiring="min_plus",
                       tuning={"sparse_plans": False})
    rng = np.random.default_rng(4)
    for _ in range(3):
        A, B = (ep.Tensor.from_scipy(M, semiring="min_plus") for M in _pair(rng, 9, 7, 0.3))
        got, want = kern(A=A, B=B), plain(A=A, B=B)
        assert isinstance(got, ep.Tensor) and got.fill == np.inf
        np.testing.assert_array_equal(got.to_dense(), want.to_dense())
    assert kern._plan is not None


def test_inputs_written_in_place_between_planned_calls():
    kern = ep.compile(ADD, output="csr", formats=CSR)
    rng = np.random.default_rng(5)
    A, B = _pair(rng, 10, 10, 0.3)
    kern(A=A, B=B)
    A.data[:] = 2.0                                   # new values: read, not kept
    _same(kern(A=A, B=B), (A + B).tocsr())
    A.indices[0] = 10                                 # out of bounds: refused by name
    with pytest.raises(ep.InputError, match="A"):
        kern(A=A, B=B)


class _Extra(sp.csr_array):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.extra = 1


def test_compressed_takes_the_constructor_where_it_sets_more():
    data, ind, ptr = np.ones(2), np.array([0, 2], np.int32), np.array([0, 1, 2], np.int32)
    for make in (sp.csr_array, sp.csc_array, _Extra):
        for _ in range(2):                            # learnt on the first, used after
            got = outputs.compressed(make, data, ind, ptr, (2, 3) if make is not sp.csc_array
                                     else (3, 2))
            assert type(got) is make and vars(got).keys() >= {"data", "indices", "indptr"}
            assert np.shares_memory(got.indices, ind) and got.shape in ((2, 3), (3, 2))
            np.testing.assert_array_equal(got.toarray(), make((data, ind, ptr),
                                                              shape=got.shape).toarray())
    assert outputs.compressed(_Extra, data, ind, ptr, (2, 3)).extra == 1

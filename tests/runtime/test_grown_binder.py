"""Grown sparse outputs through the C binder (runtime.binder, call_plans._in_c): a
kernel growing a csr/csc output answers exactly as the plain path
(`sparse_plans=False`; the Python plan answers as that: test_sparse_plans): the same
values, type, layout, index dtype and fields, an empty result included; scipy
inputs whose kernel does not check them as it reads them get the compiled check
from C, so inputs changed in place between calls give the right answer or an
InputError, never a crash; a result outlives its kernel."""
import gc

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import binder
from etchpy.runtime.call_plans import MISS

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no binder on this machine")]

ADD = "C[i, j] = A[i, j] + B[i, j]"
MUL = "C[i, j] = A[i, k] * B[k, j]"
CSR = {"A": "csr", "B": "csr"}


def _two(text, out, **options):
    """(binder plan, no plan) kernels of one expression (test_sparse_plans' builds)."""
    return tuple(ep.compile(text, output=out, formats=CSR, **options, tuning=t)
                 for t in ({}, {"sparse_plans": False}))


def _pair(rng, n, density, idx=np.int32):
    out = []
    for _ in "AB":
        M = sp.random_array((n, n), density=density, format="csr",
                            random_state=int(rng.integers(1 << 30)))
        M.indptr, M.indices = M.indptr.astype(idx), M.indices.astype(idx)
        out.append(M)
    return out


def _same(got, want):
    assert type(got) is type(want) and got.shape == want.shape
    if isinstance(want, ep.Tensor):
        np.testing.assert_array_equal(got.to_dense(), want.to_dense())
        return
    assert got.format == want.format and vars(got).keys() == vars(want).keys()
    for f in ("indptr", "indices", "data"):
        a, b = getattr(got, f), getattr(want, f)
        assert a.dtype == b.dtype and a.flags.writeable
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("text, out", [(ADD, "csc"), (MUL, "csr")])
def test_grown_outputs_in_the_binder_answer_as_the_other_paths(text, out):
    on, plain = _two(text, out)
    rng = np.random.default_rng(7)
    # empty, sparse and full results; int64 indices (one more build: A+B only)
    for idx, density in [(np.int32, 0.0), (np.int32, 0.2), (np.int32, 1.0),
                         *([(np.int64, 0.3)] if text == ADD else [])]:
        A, B = _pair(rng, 12, density, idx)
        results = [k(A=A, B=B) for k in (on, plain)]
        assert type(on._plan).__name__ == "partial" and plain._plan is None
        again = on._plan({"A": A, "B": B})           # the binder's own answer
        assert again is not MISS
        for r in (results[1], again):
            _same(r, results[0])
        ref = (A + B if text == ADD else A @ B).asformat(out)
        ref.sort_indices()
        np.testing.assert_allclose(results[0].toarray(), ref.toarray())


def test_a_tensor_output_is_made_by_the_plans_finish():
    on, plain = _two(ADD, "csr", semiring="min_plus")
    rng = np.random.default_rng(8)
    for _ in range(3):
        A, B = (ep.Tensor.from_scipy(M, semiring="min_plus") for M in _pair(rng, 9, 0.3))
        got = on(A=A, B=B)
        assert isinstance(got, ep.Tensor) and got.fill == np.inf
        _same(got, plain(A=A, B=B))
    assert type(on._plan).__name__ == "partial"


def test_scipy_inputs_changed_in_place_between_binder_calls():
    on, plain = _two(ADD, "csc")
    A, B = _pair(np.random.default_rng(9), 10, 0.4)
    on(A=A, B=B)
    assert type(on._plan).__name__ == "partial"
    A.data[:] = 3.0                                  # new values: read, not kept
    _same(on(A=A, B=B), plain(A=A, B=B))
    A.has_sorted_indices = False       # a stale flag, not read: A+B checks A's order
    _same(on._plan({"A": A, "B": B}), plain(A=A, B=B))   # inside the kernel (union merges)
    _same(on(A=A, B=B), plain(A=A, B=B))
    row = int(np.argmax(np.diff(A.indptr)))          # a row of two entries or more
    lo = A.indptr[row]
    A.indices[[lo, lo + 1]] = A.indices[[lo + 1, lo]]     # unsorted: canonicalised
    A.has_sorted_indices = True                           # a stale flag
    assert on._plan({"A": A, "B": B}) is MISS
    _same(on(A=A, B=B), plain(A=A, B=B))
    np.testing.assert_allclose(on(A=A, B=B).toarray(), A.toarray() + B.toarray())
    A.indices[lo] = 10                                    # out of bounds
    with pytest.raises(ep.InputError, match="A"):
        on(A=A, B=B)
    A.indices[lo] = A.indices[lo + 1]
    A.indptr[row + 1] = A.indptr[row] - 1                  # positions that go back
    with pytest.raises(ep.InputError, match="A"):
        on(A=A, B=B)


def test_a_result_outlives_its_kernel():
    on = ep.compile(MUL, output="csr", formats=CSR)
    A, B = _pair(np.random.default_rng(10), 12, 0.3)
    on(A=A, B=B)
    got = on(A=A, B=B)
    del on
    gc.collect()
    got.data *= 2.0                                       # writeable, still held
    np.testing.assert_allclose(got.toarray(), 2.0 * (A @ B).toarray())

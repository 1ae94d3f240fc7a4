"""ep.einsum's fixed calls (runtime.fixed_calls): after a prepared call's first
kernel call on numpy operands, later calls of the same key take only the
operands' buffers, and answer as the kernel's general path does: new arrays and
values written in place read afresh, non-contiguous operands, NaN refused on
every call, diagonals (implicit identities), other semirings and dtypes. One
operand's specs run their kernel here under `Tuning(numpy_einsum=False)` (by
default numpy runs them: tests/api/test_einsum_numpy.py)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import api
from etchpy.runtime import einsum_calls
from etchpy.runtime.call_plans import MISS
from etchpy.tuning import Tuning

pytestmark = pytest.mark.usefixtures("shared_cache")

KERNELS = Tuning(numpy_einsum=False)


def _fixed(spec, *ops, **options):
    key = einsum_calls.einsum_key(spec, ops, options.get("semiring"), options.get("output"), "c",
                                  options.get("tuning", KERNELS))
    call = api._einsum_calls.get(key)
    assert isinstance(call, einsum_calls.KernelCall)
    return call.fixed


SPECS = [("ij->i", [(5, 7)]), ("ij,ij->ij", [(5, 7), (5, 7)]), ("ii->", [(6, 6)]),
         ("ij->ji", [(3, 8)]), ("ijk,jk->ij", [(4, 3, 5), (3, 5)]), ("ii->i", [(4, 4)]),
         ("i,j->ij", [(9,), (4,)])]


@pytest.mark.parametrize("spec, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_fixed_calls_answer_as_numpy_on_new_operands(spec, shapes):
    rng = np.random.default_rng(0)
    ops = [rng.random(s) for s in shapes]
    ep.einsum(spec, *ops, tuning=KERNELS)
    fixed = _fixed(spec, *ops)
    assert fixed is not None
    for _ in range(3):
        ops = [rng.random(s) for s in shapes]
        want = np.einsum(spec, *ops)
        got = fixed(*ops)
        assert got is not MISS
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(ep.einsum(spec, *ops, tuning=KERNELS), want, rtol=1e-12)
        assert np.shape(ep.einsum(spec, *ops, tuning=KERNELS)) == np.shape(want)


def test_values_written_in_place_and_non_contiguous_operands():
    rng = np.random.default_rng(1)
    a = rng.random((6, 6))
    ep.einsum("ij->i", a, tuning=KERNELS)
    a[2, 3] = 100.0
    np.testing.assert_allclose(ep.einsum("ij->i", a, tuning=KERNELS), a.sum(axis=1))
    big = rng.random((6, 12))
    view = big[:, ::2]                            # same shape and dtype, not contiguous
    assert _fixed("ij->i", a)(view) is MISS
    np.testing.assert_allclose(ep.einsum("ij->i", view, tuning=KERNELS), view.sum(axis=1))
    np.testing.assert_allclose(ep.einsum("ij->i", a.T, tuning=KERNELS), a.sum(axis=0))


def test_nan_refused_on_every_call_where_the_semiring_refuses_it():
    a = np.arange(9.0).reshape(3, 3)
    for _ in range(2):
        np.testing.assert_array_equal(ep.einsum("ij->i", a, semiring="min_plus"), [0, 3, 6])
    bad = a.copy()
    bad[1, 1] = np.nan
    for _ in range(2):
        with pytest.raises(ep.InputError, match="NaN"):
            ep.einsum("ij->i", bad, semiring="min_plus")
    with_nan = ep.einsum("ij->i", bad)             # the real semiring lets NaN through
    assert np.isnan(with_nan[1]) and with_nan[0] == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(2)
    ops = [(rng.random((4, 5)) * 4).astype(dtype) for _ in range(2)]
    for _ in range(3):
        got = ep.einsum("ij,ij->i", *ops)
        want = np.einsum("ij,ij->i", *ops)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
        ops = [(rng.random((4, 5)) * 4).astype(dtype) for _ in range(2)]


def test_a_diagonal_of_another_size_is_another_key():
    for n in (3, 4, 3):
        a = np.arange(float(n * n)).reshape(n, n)
        for _ in range(2):
            assert ep.einsum("ii->", a, tuning=KERNELS) == np.trace(a)
            assert ep.einsum("ii->", a) == np.trace(a)
    for tuning in (KERNELS, None):
        with pytest.raises(ep.InputError, match="diagonal"):
            ep.einsum("ii->", np.ones((3, 4)), tuning=tuning)


@pytest.mark.parametrize("kind", ["csr", "csc", "tensor"])
def test_sparse_operands_take_the_binders_plan_in_order(kind):
    """A scipy or ep.Tensor operand: the fixed call is the C binder's plan taking the
    operands in order (runtime.fixed_calls.in_c), which checks each operand's kind
    and structure on every call: new matrices, values and indices written in place,
    an index out of range refused as the general path refuses it."""
    import scipy.sparse as sp
    from etchpy.errors import InputError
    from etchpy.runtime import binder
    rng = np.random.default_rng(3)

    def matrix(seed):
        M = sp.random_array((30, 30), density=0.2, format="csr", random_state=seed)
        return {"csr": M.tocsr(), "csc": M.tocsc(),
                "tensor": ep.Tensor.from_scipy(M.tocsr(), "csr")}[kind]
    A, x = matrix(0), rng.random(30)
    for _ in range(2):
        ep.einsum("ij,j->i", A, x)
    fixed = _fixed("ij,j->i", A, x, tuning=None)
    if binder.module() is not None:
        assert fixed.func is binder.module().call_in_order
    for seed in (1, 2):
        B, y = matrix(seed), rng.random(30)
        dense = B.to_dense() if kind == "tensor" else B.toarray()
        np.testing.assert_allclose(ep.einsum("ij,j->i", B, y), dense @ y, rtol=1e-12)
    if kind != "tensor":
        B.data[:] = 2.0
        np.testing.assert_allclose(ep.einsum("ij,j->i", B, y), (B != 0) @ y * 2.0)
        B.indices[3] = 99           # out of range: refused, never read
        with pytest.raises(InputError):
            ep.einsum("ij,j->i", B, y)

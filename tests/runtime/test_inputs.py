"""Bad input is refused with a clear error (malformed scipy arrays, mismatched
shapes, NaN in a boolean semiring, wrong dtypes, missing inputs); unsorted and
duplicate entries are canonicalised, and the input is left as it was."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from tuned import csr_from

i, j = ep.indices("i j")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def _broken(kind):
    """A scipy csr_array whose arrays were corrupted after construction."""
    m = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    if kind == "out of range":
        m.indices[1] = 7
    elif kind == "negative":
        m.indices[0] = -1
    elif kind == "short pointers":
        m.indptr = m.indptr[:2]
    elif kind == "non-monotone":
        m.indptr[1] = 3
        m.indptr[2] = 2
    return m


@pytest.mark.parametrize("kind", ["out of range", "negative", "short pointers", "non-monotone"])
@pytest.mark.parametrize("backend", ["c", "streams", "reference"])
def test_malformed_scipy_input_raises(kind, backend):
    with pytest.raises(ep.InputError):
        ep.evaluate(SPMV, backend=backend, A=_broken(kind), x=np.ones(3))


def test_mismatched_shapes_name_the_index():
    with pytest.raises(ep.InputError, match="index j"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.ones(4))


def test_nan_in_boolean_semiring_raises():
    u, v = ep.indices("u v")
    A = ep.tensor("A", 2, format="csr")
    f = ep.tensor("f", 1)
    e = ep.sum(u, f[u] * A[u, v])
    with pytest.raises(ep.InputError, match="NaN"):
        ep.evaluate(e, semiring="boolean", backend="c", A=sp.csr_array(np.eye(3)),
                    f=np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ep.InputError, match="NaN"):
        ep.evaluate(e, semiring="boolean", backend="c",
                    A=sp.csr_array(np.array([[np.nan, 1.0], [0, 1]])), f=np.ones(2, bool))


def test_wrong_dtype_and_missing_inputs():
    with pytest.raises(ep.InputError):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.array(["a", "b", "c"]))
    with pytest.raises(ep.InputError, match="missing"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)))
    with pytest.raises(ep.InputError, match="not a tensor"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.ones(3), y=1)
    with pytest.raises(ep.InputError, match="dimensions"):
        ep.evaluate(SPMV, backend="c", A=sp.csr_array(np.eye(3)), x=np.ones((3, 1)))


def test_unsorted_and_duplicate_entries_are_canonicalised():
    m = csr_from([0, 3, 4], [2, 0, 2, 1], [1.0, 2.0, 3.0, 4.0], (2, 3))
    before = (m.indices.copy(), m.data.copy())
    y = ep.evaluate(SPMV, backend="c", A=m, x=np.array([1.0, 10.0, 100.0]))
    np.testing.assert_array_equal(y, [2.0 + 400.0, 40.0])
    np.testing.assert_array_equal(m.indices, before[0])   # the input is not modified
    mp = ep.evaluate(SPMV, backend="c", semiring="min_plus", A=m, x=np.zeros(3))
    np.testing.assert_array_equal(mp, [1.0, 4.0])          # duplicates combine with min


def test_min_plus_explicit_zero_is_an_edge():
    W = sp.csr_array((np.array([0.0]), np.array([1]), np.array([0, 1, 1])), shape=(2, 2))
    d = ep.evaluate(SPMV, backend="c", semiring="min_plus", A=W, x=np.array([5.0, 2.0]))
    np.testing.assert_array_equal(d, [2.0, np.inf])


@pytest.mark.parametrize("backend", ["c", "streams"])
def test_a_sparse_input_too_large_to_make_dense_names_its_format(backend):
    """A large sparse matrix bound to a tensor declared dense (the default) is an
    InputError that names the input and the format to declare, not a MemoryError."""
    n = 10**7                                    # dense: 8e14 bytes, more than any machine
    one = np.zeros(1, dtype=np.int64)
    big = sp.coo_array((np.ones(1), (one, one)), shape=(n, n))
    total = ep.sum((i, j), ep.tensor("A", 2)[i, j])
    with pytest.raises(ep.InputError, match=r"input A .*format='coo'"):
        ep.evaluate(total, backend=backend, A=big)
    sparse_total = ep.sum((i, j), ep.tensor("A", 2, format="coo")[i, j])
    assert ep.evaluate(sparse_total, backend=backend, A=big) == 1.0



def test_a_tensor_of_the_declared_format_under_another_name_is_not_said_to_be_converted():
    """A Tensor stored "rle" bound where Format(["dense", "runs"]) (the same format,
    unnamed: what the one walk's fused predicate declares, runtime.shared) is
    declared is taken as it is: no PerformanceWarning (it named the fused kernel's
    internal input and claimed a conversion on every call; session 51)."""
    import warnings
    B = ep.tensor("B", 2, format=ep.Format(["dense", "runs"]))
    T = ep.Tensor.from_dense(np.array([[1, 1, 0], [0, 2, 2]]), "rle", semiring="integer")
    kern = ep.compile(B[i, j] * B[i, j], semiring="integer")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ep.PerformanceWarning)
        assert np.array_equal(kern(B=T), [[1, 1, 0], [0, 4, 4]])

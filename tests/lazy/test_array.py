"""ep.lazy arrays: shapes, dtypes, numpy's operators and protocols, errors; each
result equals numpy's on dense copies."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")

RNG = np.random.default_rng(0)
A = RNG.random((4, 3))
B = RNG.random((3, 5))
S = sp.random_array((4, 3), density=0.4, format="csr", random_state=1)
x3, x4 = RNG.random(3), RNG.random(4)


def dense(v):
    return v.toarray() if hasattr(v, "toarray") else np.asarray(v)


def check(lazy_result, expected):
    got = lazy_result.compute()
    assert np.asarray(dense(got)).shape == np.shape(expected)
    np.testing.assert_allclose(dense(got), expected, rtol=1e-12, atol=1e-12)
    return got


def test_attributes_and_repr():
    a = ep.lazy(A)
    assert a.shape == (4, 3) and a.ndim == 2 and a.dtype == np.float64
    m = a @ ep.lazy(B)
    assert m.shape == (4, 5)
    assert "LazyArray(shape=(4, 5), dtype=float64" in repr(m) and "@" in repr(m)
    assert a.T.shape == (3, 4) and a.T.T is a
    assert a.sum(axis=1, keepdims=True).shape == (4, 1)


def test_operators_match_numpy():
    a, b, s = ep.lazy(A), ep.lazy(B), ep.lazy(S)
    Sd = S.toarray()
    check(a @ b, A @ B)
    check(a.T @ a, A.T @ A)
    check(a + x3, A + x3)
    check(1 + a, 1 + A)
    check(2 * a - a / 4, 2 * A - A / 4)
    check(1 / (a + 1), 1 / (A + 1))
    check(-a, -A)
    check(a ** 3, A ** 3)
    check(a ** 0, A ** 0)
    check(s @ b, Sd @ B)
    check(s.T @ x4, Sd.T @ x4)
    check(x4 @ s, x4 @ Sd)
    check((a * s).sum(axis=0), (A * Sd).sum(axis=0))
    check(a.sum(), A.sum())
    check(a.sum(axis=0, keepdims=True) * a, A.sum(axis=0, keepdims=True) * A)
    check(ep.lazy(x4.reshape(4, 1)) + x3, x4.reshape(4, 1) + x3)


def test_wrapped_matrix_follows_ndarray_semantics():
    m = sp.csr_matrix(S)
    got = check(ep.lazy(m) * ep.lazy(A), S.toarray() * A)     # element-wise, not @
    assert sp.issparse(got)


def test_maps_relu_softmax():
    a = ep.lazy(A - 0.5)
    check(ep.maximum(a, 0), np.maximum(A - 0.5, 0))
    check(ep.minimum(a, 0.1), np.minimum(A - 0.5, 0.1))
    check(ep.abs(a), np.abs(A - 0.5))
    check(ep.sqrt(ep.lazy(A)), np.sqrt(A))
    check(ep.log(ep.lazy(A) @ ep.lazy(B)), np.log(A @ B))
    p = ep.exp(ep.lazy(A))
    check(p / p.sum(axis=1, keepdims=True), np.exp(A) / np.exp(A).sum(axis=1, keepdims=True))


def test_numpy_protocols_build_nodes_or_refuse():
    a = ep.lazy(A)
    assert isinstance(np.exp(a), ep.LazyArray)
    assert isinstance(np.maximum(a, 0), ep.LazyArray)
    assert isinstance(B.T @ a.T, ep.LazyArray)
    check(B.T @ a.T, B.T @ A.T)
    check(np.sum(a, axis=0), A.sum(axis=0))
    check(np.multiply(a, 2), A * 2)
    with pytest.raises(TypeError, match="ep.exp"):
        np.sin(a)
    with pytest.raises(TypeError, match="ep."):
        np.linalg.norm(a)
    with pytest.raises(TypeError, match="compute"):
        np.asarray(a)
    with pytest.raises(TypeError):
        bool(a)


def test_dtypes_follow_numpy():
    i = ep.lazy(np.arange(6, dtype=np.int64).reshape(2, 3))
    f32 = ep.lazy(np.ones((2, 3), np.float32))
    assert (i + 1).dtype == np.int64 and (i + 1.5).dtype == np.float64
    assert (i / 2).dtype == np.float64 and (f32 * 2.0).dtype == np.float32
    assert ep.exp(i).dtype == np.float64
    got = (i * 2 + 1).sum(axis=0).compute()
    assert got.dtype == np.int64 and list(got) == [8, 12, 16]
    assert (f32 * 2).sum().compute().dtype == np.float32


def test_inputs_refused_clearly():
    with pytest.raises(InputError, match="ep.lazy"):
        ep.lazy("abc")
    with pytest.raises(InputError, match="at most 2"):
        ep.lazy(np.ones((2, 2, 2)))
    with pytest.raises(InputError, match="bool"):
        ep.lazy(np.ones(3, bool))
    with pytest.raises(InputError, match="align"):
        ep.lazy(A) @ ep.lazy(A)
    with pytest.raises(InputError, match="broadcast"):
        ep.lazy(A) + ep.lazy(B)
    with pytest.raises(InputError, match="integer n >= 0"):
        ep.lazy(A) ** 0.5
    with pytest.raises(InputError, match="scalar"):
        ep.maximum(ep.lazy(A), A)


def test_tensor_input_and_scalars():
    t = ep.Tensor.from_dense(A)
    check(ep.lazy(t) * 2, A * 2)
    assert isinstance(ep.lazy(A).sum().compute(), np.floating)


def test_remembered_shapes_and_dtypes_still_refuse_bad_operands():
    """The builders remember broadcast shapes, sum shapes and map dtypes by their
    key; an answer met before is reused, an error is raised every time (never
    remembered), naming the operation."""
    a, col, row = ep.lazy(np.ones((3, 4))), ep.lazy(np.ones((3, 1))), ep.lazy(np.ones(4))
    for _ in range(2):
        assert (a * col).shape == (3, 4) and (a + row).shape == (3, 4)
        assert a.sum(axis=1, keepdims=True).shape == (3, 1) and a.sum(axis=-2).shape == (4,)
        assert ep.exp(ep.lazy(np.arange(3))).dtype == np.float64
        with pytest.raises(InputError, match="add: shapes"):
            a + ep.lazy(np.ones(3))
        with pytest.raises(InputError, match="axis 2"):
            a.sum(axis=2)
        with pytest.raises(InputError, match="scalar"):
            ep.maximum(a, np.ones(2))

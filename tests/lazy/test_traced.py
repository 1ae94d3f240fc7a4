"""Traced lazy functions (ep.lazy.function, etchpy.lazy.traced): traced once per
kind of input, then replayed on new arrays with numpy's answers; arrays changed
in place are read as they are; a new kind traces again; bad arguments raise an
InputError naming them; a replay builds no node."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lazy import keys

pytestmark = pytest.mark.usefixtures("shared_cache")

N = 30


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def softmax(F, X, V, Y):
    E = F.exp(X @ V)
    return X.T @ (E / E.sum(axis=1, keepdims=True) - Y)


def _arrays(seed, sparse=False):
    rng = np.random.default_rng(seed)
    X = (sp.random_array((N, N - 5), density=0.2, format="csr", random_state=seed) if sparse
         else rng.random((N, N - 5)))
    return X, rng.standard_normal(N - 5), rng.random(N)


@pytest.mark.parametrize("sparse", [False, True])
def test_new_arrays_each_call_give_numpys_answer_and_one_trace(sparse):
    grad = ep.lazy.function(lambda X, w, y: logistic(ep, X, w, y))
    for seed in range(4):
        X, w, y = _arrays(seed, sparse)
        np.testing.assert_allclose(grad(X, w, y), logistic(np, X, w, y), rtol=1e-12)
    assert len(grad.traces) == 1


def test_arrays_changed_in_place_are_read_as_they_are_now():
    grad = ep.lazy.function(lambda X, w, y: logistic(ep, X, w, y))
    X, w, y = _arrays(0)
    grad(X, w, y)
    X *= -2.0
    w[:3] = 7.0
    np.testing.assert_allclose(grad(X, w, y), logistic(np, X, w, y), rtol=1e-12)
    S = sp.random_array((N, N - 5), density=0.2, format="csr", random_state=1)
    grad(S, w, y)
    S.data[:] = np.arange(S.nnz, dtype=float)
    np.testing.assert_allclose(grad(S, w, y), logistic(np, S, w, y), rtol=1e-12)


def test_a_replay_builds_no_node():
    grad = ep.lazy.function(lambda X, w, y: logistic(ep, X, w, y))
    grad(*_arrays(0))
    before = keys.built()
    X, w, y = _arrays(1)
    np.testing.assert_allclose(grad(X, w, y), logistic(np, X, w, y), rtol=1e-12)
    assert keys.built() == before


def test_a_new_kind_traces_again_and_the_same_array_twice_is_its_own_kind():
    mul = ep.lazy.function(lambda a, b: (a * b + a).sum(axis=0))
    A, B = np.arange(6.0).reshape(3, 2), np.ones((3, 2))
    for x, y in ((A, A), (A, B), (A, A), (B, A), (A[:2], B[:2])):
        np.testing.assert_array_equal(mul(x, y), (x * y + x).sum(axis=0))
    assert len(mul.traces) == 3                     # aliased, distinct, 2 rows


def test_several_results_keywords_scalars_and_a_closure():
    V0 = np.linspace(0, 1, 4)

    @ep.lazy.function
    def f(X, lam, V):
        return X @ V + lam * ep.lazy(V0), (X ** 2).sum()

    rng = np.random.default_rng(3)
    for lam in (0.5, 2.0):
        X, V = rng.random((5, 3)), rng.random((3, 4))
        s, t = f(X, V=V, lam=lam)
        np.testing.assert_allclose(s, X @ V + lam * V0, rtol=1e-12)
        assert np.isclose(t, (X ** 2).sum()) and np.ndim(t) == 0
    V0[:] = 3.0                                    # the closure's array, read as it is
    np.testing.assert_allclose(f(X, 1.0, V)[0], X @ V + 3.0, rtol=1e-12)


def test_softmax_with_options_and_a_scipy_matrix():
    grad = ep.lazy.function(lambda X, V, Y: softmax(ep, X, V, Y), optimize=False)
    rng = np.random.default_rng(2)
    X = sp.csr_matrix(sp.random_array((N, N), density=0.2, random_state=2))
    V, Y = rng.random((N, 4)), np.eye(4)[rng.integers(0, 4, N)]
    for _ in range(2):
        np.testing.assert_allclose(grad(X, V, Y), softmax(np, X.toarray(), V, Y), rtol=1e-10)


def test_a_failed_guard_runs_afresh():
    f = ep.lazy.function(lambda X, U, V: ((X - U @ V.T) ** 2).sum())
    rng = np.random.default_rng(4)
    X, U, V = rng.random((6, 5)), rng.random((6, 2)), rng.random((5, 2))
    for x in (X, np.where(X > 0.5, np.inf, X), X):
        with np.errstate(all="ignore"):
            want = ((x - U @ V.T) ** 2).sum()
        got = f(x, U, V)
        assert got == want if np.isinf(want) else np.isclose(got, want)


def test_bad_arguments_raise_input_errors_naming_them():
    grad = ep.lazy.function(lambda X, w, y: logistic(ep, X, w, y))
    X, w, y = _arrays(0)
    grad(X, w, y)
    with pytest.raises(InputError, match=r"w: ndarray \(7,\)"):
        grad(X, np.ones(7), y)
    with pytest.raises(InputError, match="argument y"):
        grad(X, w, "y")
    with pytest.raises(InputError, match="argument X"):
        grad(np.ones((2, 2, 2)), w, y)
    with pytest.raises(InputError, match="argument w"):
        grad(X, np.ones(N - 5, dtype=complex), y)
    with pytest.raises(InputError, match="takes a function"):
        ep.lazy.function(3)


def test_a_numpy_region_ignores_floating_point_errors_only_while_it_runs():
    import warnings
    f = ep.lazy.function(lambda x, y: ep.exp(x) / y - y)
    x, y = np.array([1000.0, 1.0]), np.array([1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            np.testing.assert_array_equal(f(x, y), [np.inf, np.inf])
        with pytest.raises(RuntimeWarning):
            np.exp(x)


def test_sparse_arguments_sharing_a_pattern_or_not_are_kinds_of_their_own():
    f = ep.lazy.function(lambda a, b: a * b + a)
    A = sp.random_array((N, N), density=0.2, format="csr", random_state=5)
    B = sp.random_array((N, N), density=0.2, format="csr", random_state=6)
    same = sp.csr_array((np.arange(A.nnz) + 1.0, A.indices, A.indptr), shape=A.shape)
    for other in (same, B, same, A):
        got = f(A, other)
        np.testing.assert_allclose(got.toarray(), A.toarray() * other.toarray() + A.toarray())
    assert len(f.traces) == 3                       # shared pattern, another, the same object


def test_the_same_scipy_argument_again_replays_by_one_test_that_sees_changes():
    """Called again on the same scipy matrix (its arrays and shape as they were)
    and numpy arrays of the same kinds, a traced function replays by one generated
    test (`_general`, made on the second such call in a row): no conversion nor
    kind is made again. Values written in place are read; an array rebound, a
    shape, a dtype or another matrix falls back to the general call (an InputError
    naming the argument when a rebound array is bad); a matrix whose index arrays
    are written out of bounds in place gives an InputError; the entry goes with
    the matrix; the same numpy array twice is another kind and makes none."""
    import gc
    from etchpy.lazy.traced import _none
    f = ep.lazy.function(lambda A, x: A @ x + 1)
    A = sp.random_array((N, N), density=0.2, format="csr", random_state=7)
    xs = [np.random.default_rng(s).random(N) for s in range(4)]
    for x in xs:
        np.testing.assert_allclose(f(A, x), A @ x + 1, rtol=1e-12)
    assert f._general is not _none and len(f.traces) == 1
    A.data[:] = np.arange(A.nnz, dtype=float)              # in place: read
    np.testing.assert_allclose(f(A, xs[0]), A @ xs[0] + 1, rtol=1e-12)
    A.data = A.data * 2.0                                   # rebound: the general call
    np.testing.assert_allclose(f(A, xs[1]), A @ xs[1] + 1, rtol=1e-12)
    np.testing.assert_allclose(f(A, xs[1].astype(np.float32)), A @ xs[1] + 1, rtol=1e-6)
    B = sp.random_array((N, N), density=0.3, format="csr", random_state=8)
    np.testing.assert_allclose(f(B, xs[2]), B @ xs[2] + 1, rtol=1e-12)
    np.testing.assert_allclose(f(A, xs[3]), A @ xs[3] + 1, rtol=1e-12)
    gone = A.copy()
    for _ in range(2):
        f(gone, xs[0])
    assert f._general is not _none
    del gone
    gc.collect()
    assert f._general is _none                              # gone with its matrix
    bad = A.copy()
    for _ in range(2):
        f(bad, xs[0])
    bad.indices = bad.indices.copy()
    bad.indices[0] = N + 3                                  # rebound and bad
    with pytest.raises(InputError, match="argument A|A"):
        f(bad, xs[0])
    worse = A.copy()
    for _ in range(2):
        f(worse, xs[0])
    assert f._general is not _none
    worse.indices[0] = N + 3                                # in place, out of bounds
    with pytest.raises(InputError):
        f(worse, xs[0])
    M = sp.csr_matrix(A)                                    # a matrix: its array view
    for x in xs:
        np.testing.assert_allclose(f(M, x), A @ x + 1, rtol=1e-12)
    assert f._general is not _none
    del M
    gc.collect()
    assert f._general is _none
    g = ep.lazy.function(lambda A, x, y: A @ x + y)
    for _ in range(3):
        np.testing.assert_allclose(g(A, xs[0], xs[0]), A @ xs[0] + xs[0], rtol=1e-12)
    assert g._general is _none
    for k in range(8):                  # kinds in turn: each tried once, answers right
        y = xs[0] if k % 3 == 0 else xs[1]
        np.testing.assert_allclose(g(A, xs[0], y), A @ xs[0] + y, rtol=1e-12)
    assert g._general is not _none and len(g._made) <= 2

"""The fixed cost of a warm lazy call, counted (never timed): building a program
makes one node per operation, a replayed compute makes none, the replay key is
read off the nodes' keys (etchpy.lazy.keys) and tells apart programs whose
leaves are shared differently; a scipy product step keeps its transpose only
while the array and its arrays are the same."""
import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.lazy import keys
from etchpy.lazy.regions import Transposed
from etchpy.lazy.replay import PROGRAMS, signature

pytestmark = pytest.mark.usefixtures("shared_cache")

N = 20


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def _arrays(seed):
    rng = np.random.default_rng(seed)
    X = sp.random_array((N, N), density=0.2, format="csr", random_state=seed)
    return X, rng.standard_normal(N), rng.random(N)


def test_a_warm_call_builds_one_node_per_operation_and_replays_without_building():
    X, w, y = _arrays(0)
    ep.compute(logistic(ep, *(ep.lazy(a) for a in (X, w, y))))      # warm: recorded
    held = [X, w, y]        # (a dropped array's leaf and nodes are given to a new one)
    for seed in (1, 2):
        X, w, y = _arrays(seed)
        held += [X, w, y]
        before = keys.built()
        g = logistic(ep, *(ep.lazy(a) for a in (X, w, y)))
        # 3 leaves; X@w, -, exp, 1+, recip, -1·y, +, X.T, @ (scalars are cached consts)
        assert keys.built() - before == 12
        assert PROGRAMS.get((signature([g])[0], True, 1, None)) is not None
        before = keys.built()
        got = ep.compute(g)
        assert keys.built() == before          # replayed: no translation, no new node
        np.testing.assert_allclose(got, logistic(np, X, w, y), rtol=1e-12)


def test_keys_merge_equal_subprograms_and_the_replay_key_sees_shared_leaves():
    A, B, C = (np.random.default_rng(k).random((3, 3)) for k in range(3))
    a, b, c = ep.lazy(A), ep.lazy(B), ep.lazy(C)
    assert (a @ b + 1).key == (ep.lazy(A) @ ep.lazy(B) + 1).key
    assert (a * a).skey != (a * b).skey and (a * b).skey == (b * c).skey
    assert (a * b).key != (b * c).key
    assert signature([a * b, a])[0] != signature([a * b, b])[0]
    for x, y in ((a, a), (a, b), (b, b), (b, c)):          # replays must not mix them up
        s, t = ep.compute(x * y + x, x)
        np.testing.assert_array_equal(s, x.value * y.value + x.value)
        np.testing.assert_array_equal(t, x.value)


def test_a_weak_scalar_and_a_numpy_scalar_give_their_own_dtypes():
    a = ep.lazy(np.ones(3, np.float32))
    s, t = ep.compute(a + 1, a + np.float64(1))
    assert s.dtype == (np.ones(3, np.float32) + 1).dtype
    assert t.dtype == (np.ones(3, np.float32) + np.float64(1)).dtype


def test_a_transpose_is_kept_while_its_array_and_arrays_are_the_same():
    cache = Transposed()
    X = sp.random_array((5, 4), density=0.5, format="csr", random_state=0)
    first = cache.of(X)
    assert cache.of(X) is first and first.shape == (4, 5)
    X.data = X.data * 2                          # a new values array: a new transpose
    again = cache.of(X)
    assert again is not first
    np.testing.assert_array_equal(again.toarray(), X.toarray().T)
    data = weakref.ref(X.data)
    del X, first, again
    gc.collect()
    assert cache.view is None and data() is None   # the array died: nothing kept


def _programs(F, X, M, U, V):
    R = M * (U @ V.T) - X
    return (((X - U @ V.T) ** 2).sum(), (U @ V.T).sum() - (X * F.log(U @ V.T)).sum(),
            R @ V, R.T @ U)


def test_sampled_programs_are_replayed_on_new_arrays():
    """Work sampled on a sparse pattern (SDDMM kernels, gathers) is recorded as
    steps of the slots: a second run on new arrays (new patterns) replays them,
    building no node, and still equals numpy."""
    n, r = 30, 3
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = sp.random_array((n, n), density=0.2, format="csr", random_state=seed)
        M = sp.csr_array((rng.random(X.nnz) + 0.5, X.indices, X.indptr), shape=X.shape)
        U, V = rng.random((n, r)) + 0.1, rng.random((n, r)) + 0.1
        outs = _programs(ep, *(ep.lazy(a) for a in (X, M, U, V)))
        replayed = PROGRAMS.get((signature(list(outs))[0], True, 1, None)) is not None
        before = keys.built()
        got = ep.compute(*outs)
        assert replayed == (keys.built() == before)
        assert seed == 0 or replayed               # X's nnz keeps its power of two
        Xd, Md = X.toarray(), M.toarray()
        want = _programs(np, Xd, Md, U, V)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.toarray() if sp.issparse(g) else g, w, rtol=1e-9)


def test_a_wrapped_scipy_matrix_has_one_array_view_while_its_arrays_are_the_same():
    """ep.lazy of a csr_matrix holds a csr_array over its arrays; wrapping the same
    matrix again gives the same view (so its kept transpose and sortedness are
    reused), a matrix whose arrays were replaced a new one, with the new values."""
    m = sp.random(30, 20, density=0.2, format="csr", random_state=2)
    v = np.arange(20.0)
    first, again = ep.lazy(m), ep.lazy(m)
    assert first.value is again.value and sp.issparse(first.value)
    want = m.T @ (m @ v)
    np.testing.assert_allclose((ep.lazy(m).T @ (ep.lazy(m) @ v)).compute(), want)
    m.data = m.data * 2                               # arrays replaced: a new view
    np.testing.assert_allclose((ep.lazy(m).T @ (ep.lazy(m) @ v)).compute(), 4 * want)
    m.data *= 0.5                                     # values changed in place: shared
    np.testing.assert_allclose((ep.lazy(m).T @ (ep.lazy(m) @ v)).compute(), want)
    ref = weakref.ref(m)
    del m, first, again
    gc.collect()
    assert ref() is None                              # the view does not keep m alive


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize("k", [None, 1, 3])
def test_a_library_product_calls_scipys_loop_and_equals_its_product(fmt, flip, k):
    """library.product is scipy's `@` (its own sparsetools loop) on csr and csc
    inputs, transposed or not, vectors and blocks, int32 and int64 indices; an
    operand the loop cannot read as it is gets None (the step then uses `@`)."""
    from etchpy.lazy.library import product
    X = sp.random_array((7, 5), density=0.4, format=fmt, random_state=3)
    m = X.shape[0] if flip else X.shape[1]
    d = np.random.default_rng(0).random(m if k is None else (m, k))
    want = (X.T if flip else X) @ d
    np.testing.assert_array_equal(product(X, flip, d), want)
    X64 = X.copy()
    X64.indices, X64.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    np.testing.assert_array_equal(product(X64, flip, d), want)
    assert product(X, flip, d.astype(np.float32)) is None
    assert product(X.astype(np.float32), flip, d) is None
    if k == 3:
        assert product(X, flip, np.asfortranarray(d)) is None
    assert product(X, not flip, d) is None or X.shape[0] == X.shape[1]


def test_a_node_built_by_its_builder_has_the_dataclass_constructors_fields_and_keys():
    """The operators build nodes through nodes.leaf/pair/unary (slots set
    directly); the dataclass constructor (with_args, replace) must give the same
    fields and keys, so both kinds merge as common subexpressions and replay."""
    from dataclasses import fields
    A, v = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    a, x = ep.lazy(A), ep.lazy(v)
    built = [a, a @ x, (a @ x) * 2 + 1, a.T, ep.exp(a), ep.maximum(a, 0.5), a ** 2,
             a.sum(axis=1, keepdims=True), a @ x + (a @ x), 1 / (a + 1), a - a]
    for n in built:
        again = n.with_args(*n.args) if n.args else type(n)(n.value, shape=n.shape,
                                                             dtype=n.dtype)
        assert type(again) is type(n)
        assert [m.key for m in again.leaves] == [m.key for m in n.leaves]
        for f in fields(n):
            mine, theirs = getattr(n, f.name), getattr(again, f.name)
            if isinstance(mine, (ep.LazyArray, np.ndarray)):
                assert mine is theirs, f.name
            elif f.name != "_leaves":
                assert mine == theirs, f.name


def test_merging_leaves_is_first_use_order_with_each_shared_leafs_position():
    """keys.merge against its definition (a scan for few leaves, a dict for many):
    la's leaves, then lb's new ones in order; the sharing is None when nothing is
    shared, else each of lb's leaves' position in la (-1: new)."""
    import random
    from etchpy.lazy.keys import merge

    def defined(la, lb, ka, kb):
        share = tuple(ka.index(k) if k in ka else -1 for k in kb)
        new = [i for i, s in enumerate(share) if s < 0]
        return (la + tuple(lb[i] for i in new), ka + tuple(kb[i] for i in new),
                None if not ka or not kb or max(share) < 0 else share)
    rng = random.Random(7)
    for _ in range(3000):
        ka = tuple(rng.sample(range(24), rng.randint(0, 12)))
        kb = ka if rng.random() < 0.2 else tuple(rng.sample(range(24), rng.randint(0, 12)))
        la, lb = tuple(f"L{k}" for k in ka), tuple(f"L{k}" for k in kb)
        assert merge(la, lb, ka, kb) == defined(la, lb, ka, kb), (ka, kb)

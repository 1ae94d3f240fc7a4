"""The C operators' node memo (Tuning.lazy_node_bytes, codegen_templates/
binder_nodes.c.j2): the same small array wrapped again gives the same leaf, an
operator on the same operand objects the same node, and the answers are the
plain path's: arrays written in place between calls, reshaped or retyped in
place, float32, operands dropped and their addresses reused. What it keeps is
let go: an array the caller dropped, one too large or a view never kept, all
of it when switched off; of the arrays larger than lazy_node_bytes, one (of at
most lazy_node_large bytes) is kept at a time, let go at the next wrap once the
caller dropped it."""
import gc
import weakref

import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import c_nodes, keys
from etchpy.runtime import binder

pytestmark = pytest.mark.skipif(not binder.available(), reason="no C binder here")

# numpy's steps (no kernel to compile); the C operators and the node memo as by default
NUMPY = ep.Tuning(lazy_step_cost=1e15, lazy_library_step=0)
RNG = np.random.default_rng(7)


@pytest.fixture
def memo(shared_cache):
    c_nodes.use(True)
    if c_nodes._made() is None:
        pytest.skip("the binder does not build here")
    yield
    c_nodes.use(True)


def grads(F, X, w, y, V=None, Y=None):
    """The logistic and least-squares gradients (numpy's steps), and with V and
    Y the softmax one (a kernel: test_c_nodes.py's, compiled once a session)."""
    out = (X.T @ (1 / (1 + F.exp(-(X @ w))) - y), X.T @ (X @ w - y))
    if V is None:
        return out
    E = F.exp(X @ V)
    return (*out, X.T @ (E / E.sum(axis=1, keepdims=True) - Y))


def _arrays(n=30, k=4, dtype=np.float64):
    X, w, y = RNG.random((n, n)) / n, RNG.standard_normal(n), RNG.random(n)
    V, Y = RNG.random((n, k)), np.eye(k)[RNG.integers(0, k, n)]
    return [a.astype(dtype) for a in (X, w, y, V, Y)]


def _check(arrays, rtol=1e-10):
    got = ep.compute(*grads(ep, *(ep.lazy(a) for a in arrays)), tuning=NUMPY)
    c_nodes.use(True, True, 0)              # the plain path: nodes built afresh (a tuning
    plain = grads(ep, *(ep.lazy(a) for a in arrays))    # saying so is another kernel key)
    plain = ep.compute(*plain, tuning=NUMPY)
    for g, p, want in zip(got, plain, grads(np, *arrays)):
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(g, p, rtol=rtol, atol=rtol)


def test_the_same_arrays_give_the_same_nodes_and_the_right_answers(memo):
    arrays = _arrays()
    _check(arrays)                          # kept (the C operators installed by now)
    first = grads(ep, *(ep.lazy(a) for a in arrays))
    before = keys.built()
    again = grads(ep, *(ep.lazy(a) for a in arrays))
    assert keys.built() == before and all(p is q for p, q in zip(first, again))
    for _ in range(3):
        _check(arrays)
        arrays[1] *= -1.5                   # written in place between calls
        arrays[3][0, :] += 1.0
    c_nodes.use(True, True, 0)              # off: built afresh, equal keys
    fresh = grads(ep, *(ep.lazy(a) for a in arrays))
    assert keys.built() > before and all(p is not q and p.key == q.key
                                         for p, q in zip(first, fresh))
    c_nodes.use(True)


def test_an_array_reshaped_or_retyped_in_place_gets_a_new_leaf(memo):
    arrays = _arrays()[:3]
    _check(arrays)
    _check(arrays)
    old = ep.lazy(arrays[1])
    arrays[1].shape = (30, 1)               # in place: w is now a column
    assert ep.lazy(arrays[1]) is not old and ep.lazy(arrays[1]).shape == (30, 1)
    x = RNG.random(6)
    lx = ep.lazy(x)
    x.dtype = np.float32                    # in place: 12 float32s
    assert ep.lazy(x) is not lx and ep.lazy(x).dtype == np.float32
    np.testing.assert_array_equal(ep.compute(ep.lazy(x) * 2, tuning=NUMPY), x * 2)
    arrays[1].shape = (30,)
    _check(arrays)


def test_float32_and_new_arrays_at_reused_addresses(memo):
    _check(_arrays(dtype=np.float32)[:3], rtol=1e-4)
    for _ in range(4):                      # dropped each time: addresses reused
        _check(_arrays()[:3])


def test_what_is_kept_is_let_go(memo):
    a = RNG.random(5)
    gone = weakref.ref(a)
    ep.lazy(a) * 2 + 1                      # (a compute's tape holds its last values)
    assert ep.lazy(a) is ep.lazy(a)
    del a
    ep.lazy(RNG.random(5))                  # a new array kept: the dropped one let go
    assert gone() is None
    big = np.zeros(c_nodes.DEFAULT[3] // 8 + 1)         # too large to keep
    view = RNG.random(10)[2:]                           # a view (its base held)
    for x in (big, view):
        assert ep.lazy(x) is not ep.lazy(x) and ep.lazy(x).value is x
    b = RNG.random(5)
    ep.lazy(b) + 1
    held = weakref.ref(b)
    c_nodes.use(True, True, 0)              # off: everything let go
    del b
    assert held() is None
    c_nodes.use(True)


def test_the_c_lookup_replays_kept_nodes_on_arrays_written_in_place(memo):
    a, b = RNG.random((4, 4)), RNG.random(4)

    def prog():
        return (ep.lazy(a) * 2 + ep.lazy(b)) / 4        # numpy's step, tuning=None

    for k in range(4):
        np.testing.assert_allclose(ep.compute(prog()), (a * 2 + b) / 4)
        a[k, k] = -k                                    # written in place


def test_a_new_w_each_call_takes_the_dropped_ones_nodes(memo):
    """A loop making a new w each call (the last one dropped) builds no node once
    warm: the dropped w's leaf and the nodes over it are given the new w
    (binder_nodes.c.j2, lz_rebind). Not while anything else holds them: a node
    over the old w kept by the caller still computes on the old w."""
    X, w, y, V, Y = _arrays()
    for k in range(5):
        w = w + 0.5                         # a new w, the last one dropped
        if k == 3:
            w[1:] = np.flip(w[1:])          # and written in place before the compute
        c_nodes.use(True)
        before = keys.built()
        got = ep.compute(*grads(ep, *(ep.lazy(a) for a in (X, w, y))), tuning=NUMPY)
        assert k < 2 or keys.built() == before
        for g, want in zip(got, grads(np, X, w, y)):
            np.testing.assert_allclose(g, want, rtol=1e-10)
    for k in range(3):                      # float32 (_check: the plain path's too)
        _check([a.astype(np.float32) for a in (X, w * k, y)], rtol=1e-4)
    old_w = w + 0.0
    held = grads(ep, *(ep.lazy(a) for a in (X, old_w, y)))      # the caller holds them
    want = grads(np, X, old_w, y)
    del old_w
    for k in range(3):
        new_w = w * (k + 2.0)
        _check([X, new_w, y])
    for h, g in zip(ep.compute(*held, tuning=NUMPY), want):
        np.testing.assert_allclose(h, g, rtol=1e-10)
    w2 = w + 0.0
    kept = ep.lazy(w2)
    del w2
    k1 = (ep.lazy(X) @ kept).key
    w3 = w * 3.0                            # another array: its own leaf, kept's untouched
    assert ep.lazy(w3) is not kept and (ep.lazy(X) @ kept).key == k1
    np.testing.assert_allclose(ep.compute(ep.lazy(X) @ kept, tuning=NUMPY), X @ w)


def test_one_large_array_is_kept_and_let_go_once_dropped(memo):
    small, large = c_nodes.DEFAULT[2:]
    L1, L2 = RNG.random(small // 8 + 1), RNG.random(large // 8)    # both large, kept
    w = RNG.random(5)

    def kept(x):        # (no assert holds the nodes: pytest keeps what it compares)
        return ep.lazy(x) is ep.lazy(x) and ep.lazy(x) * 2 is ep.lazy(x) * 2

    same = kept(L1)
    assert same
    np.testing.assert_array_equal(ep.compute(ep.lazy(L1) * 2), L1 * 2)
    held = weakref.ref(L1)
    same = kept(L2)                                   # another: the first given up
    assert same
    del L1
    gc.collect()        # (a first run's evaluator is a cycle holding its leaves)
    assert held() is None
    held = weakref.ref(L2)
    del L2
    alive = held() is not None                        # held until the next wrap
    assert alive
    ep.lazy(w)
    assert held() is None
    L3 = RNG.random(small // 8 + 1)
    c_nodes.use(True, True, small, 0)                 # none kept beyond lazy_node_bytes
    same = ep.lazy(L3) is ep.lazy(L3)
    assert not same
    c_nodes.use(True)
    same = kept(L3)
    assert same
    held = weakref.ref(L3)
    c_nodes.use(True, True, small, 0)                 # switched off: let go
    del L3
    assert held() is None
    c_nodes.use(True)


def test_a_large_array_written_in_place_between_calls(memo):
    n = c_nodes.DEFAULT[2] // 8 // 64 * 2             # X of 2 lazy_node_bytes: large
    X, w, y = RNG.random((n, 64)), RNG.random(64), RNG.random(n)
    for _ in range(3):
        got = ep.compute(ep.lazy(X).T @ (ep.exp(ep.lazy(X) @ ep.lazy(w)) - ep.lazy(y)))
        np.testing.assert_allclose(got, X.T @ (np.exp(X @ w) - y), rtol=1e-12)
        X *= 0.5
        X[0, 0] = np.nan
        got = ep.compute(ep.lazy(X).T @ (ep.exp(ep.lazy(X) @ ep.lazy(w)) - ep.lazy(y)))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(X.T @ (np.exp(X @ w) - y)))
        X[0, 0] = 1.0


def test_a_scipy_matrix_wrapped_again_gives_its_leaf_until_changed_or_dropped(memo):
    """ep.lazy of the same scipy csr/csc matrix gives the same leaf while it holds
    the same arrays and shape and stays canonical (values written in place are
    read); an array rebound or the canonical flag cleared builds anew; a matrix
    its caller dropped is let go at the next one kept; off, nothing is kept."""
    import scipy.sparse as sp
    x = RNG.random(20)
    for fmt in ("csr", "csc"):
        A = sp.random_array((20, 20), density=0.3, format=fmt, random_state=2)
        la = ep.lazy(A)
        assert ep.lazy(A) is la and ep.lazy(A, constant=True) is not la
        A.data *= 2.0                                   # written in place: read
        assert ep.lazy(A) is la
        np.testing.assert_allclose(ep.compute(ep.lazy(A) @ x), A @ x, rtol=1e-12)
        A.data = A.data.copy()                          # rebound
        lb = ep.lazy(A)
        assert lb is not la and lb.key == la.key and ep.lazy(A) is lb
        A.has_canonical_format = False                  # said not canonical: a copy
        lc = ep.lazy(A)
        assert lc is not lb and lc.value is not A
        np.testing.assert_allclose(ep.compute(lc @ x), A @ x, rtol=1e-12)
    gone = weakref.ref(A)
    del A, la, lb, lc
    B = sp.random_array((20, 20), density=0.3, format="csr", random_state=3)
    ep.lazy(B)                                          # the next one kept
    gc.collect()
    assert gone() is None
    c_nodes.use(True, True, 0)                          # off: built afresh, B let go
    assert ep.lazy(B) is not ep.lazy(B)
    gone = weakref.ref(B)
    del B
    gc.collect()
    assert gone() is None
    c_nodes.use(True)

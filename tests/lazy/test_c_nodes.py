"""Lazy arrays' operators in C (etchpy.lazy.c_nodes, Tuning.lazy_c_nodes) build the
nodes the Python operators build (class, fields, keys, leaves), fall back to
them for anything else, and give the programs the same answers, on arrays
written in place between calls too."""
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lazy import array, c_nodes, keys
from etchpy.lazy.replay import PROGRAMS
from etchpy.lazy.nodes import LazyArray
from etchpy.runtime import binder
from etchpy.settings import LIMITS

pytestmark = pytest.mark.skipif(not binder.available(), reason="no C binder here")

RNG = np.random.default_rng(1)
ARRAYS = [RNG.random((4, 3)), RNG.random(3), RNG.random(4), RNG.random((4, 1)),
          sp.random_array((4, 3), density=0.5, format="csr", random_state=1),
          RNG.random((4, 3)).astype(np.float32), np.arange(3), RNG.random((3, 3))]
OPS = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
       lambda a, b: a @ b, lambda a, b: a @ b.T, lambda a, b: a.T, lambda a, b: -a,
       lambda a, b: 1 + a, lambda a, b: 1 - a, lambda a, b: a - 1, lambda a, b: 2 * a,
       lambda a, b: 1 / a, lambda a, b: a / 2.0, lambda a, b: ep.exp(a),
       lambda a, b: ep.log(a), lambda a, b: a.sum(axis=1, keepdims=True),
       lambda a, b: a + ARRAYS[1], lambda a, b: ep.sqrt(a) * b.T, lambda a, b: 0.1 * a,
       lambda a, b: a - 0.5, lambda a, b: -0.0 * a, lambda a, b: ep.maximum(a, 0),
       lambda a, b: ep.minimum(a, 0.5), lambda a, b: ep.maximum(a, True),
       # a numpy array operand, wrapped as ep.lazy wraps it
       lambda a, b: a @ ARRAYS[1], lambda a, b: a - ARRAYS[2], lambda a, b: a * ARRAYS[3],
       lambda a, b: a / ARRAYS[6], lambda a, b: a - ARRAYS[5], lambda a, b: 2.0 - a,
       lambda a, b: a + ARRAYS[7]]


@pytest.fixture(scope="module")
def c_ops(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:    # conftest's shared_cache, for the module
        mp.setenv("ETCHPY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
        yield from _installed()


def _installed():
    c_nodes.use(True)
    if c_nodes._made() is None:
        pytest.skip("the binder does not build here")
    yield
    c_nodes.use(True)


def _build(recipe):
    pool = [ep.lazy(a) for a in ARRAYS]
    for op, i, j in recipe:
        try:
            pool.append(OPS[op](pool[i % len(pool)], pool[j % len(pool)]))
        except InputError:
            pass
    return pool


def _same(x, y, seen: set) -> None:
    if id(x) in seen:
        return
    seen.add(id(x))
    assert type(x) is type(y), (x, y)
    assert (x.shape, x.dtype, x.key, x.skey, x.lkeys) == (y.shape, y.dtype, y.key, y.skey,
                                                         y.lkeys), (x, y)
    assert [p.value for p in x.leaves] == [q.value for q in y.leaves] or all(
        p.value is q.value for p, q in zip(x.leaves, y.leaves))
    for f in type(x).__slots__:
        if f not in ("a", "b", "value"):
            assert getattr(x, f) == getattr(y, f), (f, x, y)
    for p, q in zip(x.args, y.args):
        _same(p, q, seen)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 40),
                          st.integers(0, 40)), min_size=1, max_size=8))
def test_c_operators_build_the_python_operators_nodes(c_ops, recipe):
    made = []                   # C twice (patterns met; from the memo), without it, Python
    for on, memo in ((True, True), (True, True), (True, False), (False, True)):
        c_nodes.use(on, memo, 0)        # no node memo (test_node_memo.py)
        before = keys.built()
        made.append((_build(recipe), keys.built() - before))
    (ref, n_ref), *others = made[::-1]
    for k, (nodes, n) in enumerate(others):
        assert n == n_ref or k == 2         # one node per operation, patterns met
        for x, z in zip(nodes, ref):
            _same(x, z, set())
    c_nodes.use(True)


@pytest.mark.parametrize("bad", [np.ones((2, 2, 2)), np.array([True, False, True]),
                                 np.ones(3, dtype=complex), np.array(["a", "b", "c"])])
@pytest.mark.parametrize("op", [lambda a, x: a + x, lambda a, x: a - x, lambda a, x: a @ x,
                                lambda a, x: a / x, lambda a, x: x * a])
def test_a_numpy_operand_ep_lazy_refuses_is_refused_alike(c_ops, bad, op):
    """A numpy operand is wrapped by ep.lazy's rules in C as in Python: what
    ep.lazy refuses, the operator refuses with the same error."""
    errors = []
    for on in (True, False):
        c_nodes.use(on)
        with pytest.raises(InputError) as err:
            op(ep.lazy(ARRAYS[1]), bad)
        errors.append(str(err.value))
    c_nodes.use(True)
    assert errors[0] == errors[1]


def test_a_new_numpy_operand_each_call_is_built_in_c(c_ops):
    """`A @ x - b` with x (and b) a new numpy array each call (a solver's loop): once
    the patterns are met, Python builds no node (the C operators wrap the array)."""
    A = sp.random_array((30, 30), density=0.2, format="csr", random_state=3)
    b = RNG.random(30)
    la = ep.lazy(A)
    for k in range(4):
        x = RNG.random(30)
        before = keys.BUILT[0]
        got = ep.compute(la @ x - b, tuning=NUMPY)
        assert k < 2 or keys.BUILT[0] == before
        np.testing.assert_allclose(got, A @ x - b, rtol=1e-12)
        b = RNG.random(30)


# numpy's steps wherever the plan may choose (few kernels to compile: the tests' time)
NUMPY = ep.Tuning(lazy_step_cost=1e15, lazy_library_step=0)


def _programs(F, X, w, y, V, Y):
    E = F.exp(X @ V)
    return (X.T @ (1 / (1 + F.exp(-(X @ w))) - y), X.T @ (X @ w - y),
            X.T @ (E / E.sum(axis=1, keepdims=True) - Y))


def test_programs_agree_and_see_arrays_written_in_place(c_ops):
    X, w, y = RNG.random((30, 30)) / 30, RNG.standard_normal(30), RNG.random(30)
    V, Y = RNG.random((30, 4)), np.eye(4)[RNG.integers(0, 4, 30)]
    for on in (True, False, True):
        for _ in range(3):                  # recorded, then replayed
            c_nodes.use(on)                 # (the compute puts C back, after the build)
            got = ep.compute(*_programs(ep, *(ep.lazy(a) for a in (X, w, y, V, Y))),
                             tuning=NUMPY)
            for g, want in zip(got, _programs(np, X, w, y, V, Y)):
                np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
            w *= -1.5                       # written in place between calls
            V[0, :] += 1.0


def test_the_tuning_chooses_the_operators(c_ops):
    a = ep.lazy(np.ones((2, 2)))
    ep.compute(a * 2, tuning=NUMPY.with_(lazy_c_nodes=False))    # numpy's step
    assert c_nodes.INSTALLED[0] is False
    assert type(LazyArray.__dict__["__add__"]).__name__ == "function"
    ep.compute(a * 2, tuning=NUMPY.with_(lazy_c_memo=False))
    assert c_nodes.CHOSEN[0] == (True, False, *c_nodes.DEFAULT[2:])
    ep.compute(a * 2, tuning=NUMPY.with_(lazy_node_bytes=0))
    assert c_nodes.CHOSEN[0] == (True, True, 0, c_nodes.DEFAULT[3])
    ep.compute(a * 2, tuning=NUMPY)         # on by default
    assert c_nodes.INSTALLED[0] is True and c_nodes.CHOSEN[0] is c_nodes.DEFAULT
    assert type(LazyArray.__dict__["__add__"]).__name__ == "method_descriptor"


def test_what_c_does_not_cover_runs_the_python_operators(c_ops):
    a = ep.lazy(RNG.random((3, 3)))
    np.testing.assert_allclose(ep.compute((a + 1.5 + a / a) * 2, tuning=NUMPY),
                               (a.value + 2.5) * 2)
    with pytest.raises(InputError):
        ep.lazy(np.ones((2, 2, 2)))
    with pytest.raises(InputError):
        ep.lazy(np.ones((2, 2))) @ ep.lazy(np.ones(3))
    assert ep.lazy(np.ones(3), constant=True).constant
    big = np.arange(3, dtype=">f8")         # another dtype object of float64's kind
    for _ in range(2):
        np.testing.assert_array_equal(ep.compute(ep.lazy(big) * 2 + ep.lazy(big),
                                                 tuning=NUMPY), 3 * big)


def test_a_float_operand_is_the_python_operators_const(c_ops):
    a = ep.lazy(RNG.random((3, 3)))
    for c in (0.1, 0.0, -0.0, float("nan"), 1e300, 0.1):
        for on in (False, True, True):      # Python's first (the const made), then C
            c_nodes.use(on, True, 0)
            n, m = c * a, a + c
            assert n.a is array.as_node(c) and m.b is array.as_node(c)
    c_nodes.use(True)
    assert (0.0 * a).a is not (-0.0 * a).a          # 1/x tells them apart
    np.testing.assert_array_equal(ep.compute(-0.0 * a + 0.25, tuning=NUMPY), -0.0 * a.value + 0.25)


def test_maximum_of_a_number_is_made_in_c_as_python_makes_it(c_ops):
    a = ep.lazy(RNG.random((3, 3)) - 0.5)
    for c in (0, 0.25, -0.0, 1e300, np.float64(0.5)):
        made = []
        for on in (False, True, True):      # Python's first (the pattern kept), then C
            c_nodes.use(on, True, 0)
            before = keys.built()
            made.append((ep.maximum(a, c), keys.built() - before))
        c_nodes.use(True)
        (ref, n_ref), *others = made
        for n, k in others:
            _same(n, ref, set())
            assert n.arg is c and k == n_ref == 1
    assert type(LazyArray.__dict__["_map_arg"].__func__).__name__ == "builtin_function_or_method"
    np.testing.assert_array_equal(ep.compute(ep.minimum(a, 0.0), tuning=NUMPY),
                                  np.minimum(a.value, 0.0))


def test_c_patterns_start_over_with_the_keys_table(c_ops):
    A, w = RNG.random((3, 3)), RNG.random(3)
    a, v = ep.lazy(A), ep.lazy(w)
    old = (a @ v + 1).skey
    assert (a @ v + 1).skey == old
    for k in range(LIMITS.lazy_interned + 1):          # fill the table: it starts over
        keys.intern(("test_c_nodes", k))
    new = ep.lazy(A) @ ep.lazy(w) + 1
    c_nodes.use(False)
    ref = ep.lazy(A) @ ep.lazy(w) + 1
    assert new.skey != old and (new.skey, new.key) == (ref.skey, ref.key)


def test_c_operators_leave_no_reference_behind(c_ops):
    c_nodes.use(True)
    X, w = RNG.random((5, 5)), RNG.random(5)

    def once():
        a, v = ep.lazy(X), ep.lazy(w)
        return (1 / (1 + ep.exp(-(a @ v))) - v) / (a.T @ v) + ep.lazy(w) * 2

    once(), once()
    ones = array._INTS[1], array._INTS[-1]
    before = [sys.getrefcount(x) for x in (X, w, *ones)]
    for _ in range(50):
        once()
    assert [sys.getrefcount(x) for x in (X, w, *ones)] == before


def test_a_program_met_before_is_replayed_by_the_c_lookup(c_ops):
    c_nodes.use(True)
    a, b = RNG.random((4, 4)), RNG.random(4)

    def prog():
        return (ep.lazy(a) * 2 + ep.lazy(b)) / 4        # numpy's step, tuning=None

    ep.compute(prog()), ep.compute(prog())              # recorded, replayed
    got = c_nodes.LOOKUP[0](prog(), PROGRAMS._d, True, 1)
    np.testing.assert_allclose(got, (a * 2 + b) / 4)
    a[0, 0] = 7.0                                       # written in place
    np.testing.assert_allclose(ep.compute(prog()), (a * 2 + b) / 4)
    assert c_nodes.LOOKUP[0](prog(), PROGRAMS._d, False, 1) is None     # not recorded
    sparse = ep.lazy(sp.eye_array(4, format="csr")) * 2
    assert c_nodes.LOOKUP[0](sparse, PROGRAMS._d, True, 1) is None      # not recorded


def test_a_program_with_sparse_leaves_is_replayed_by_the_c_lookup(c_ops):
    """The sparse leaves' kinds (replay.sparse_kinds) join the lookup's key: a csr
    matrix and its csc twin are two tapes, each found; values written in place
    are read; an index written out of bounds in place gives the InputError naming
    ep.lazy's operand, as compute's Python path words it; two sparse leaves of
    other patterns, of one pattern in two objects, or one object twice are
    three tapes, each found."""
    c_nodes.use(True)
    A = sp.random_array((6, 6), density=0.4, format="csr", random_state=5)
    x = RNG.random(6)
    for M in (A, A.tocsc(), A.copy()):
        ep.compute(ep.lazy(M) @ x), ep.compute(ep.lazy(M) @ x)         # recorded, replayed
        for _ in range(2):
            got = c_nodes.LOOKUP[0](ep.lazy(M) @ x, PROGRAMS._d, True, 1)
            np.testing.assert_allclose(got, M @ x, rtol=1e-12)
            M.data *= -2.0                                  # written in place
    M.indices[0] = 99                                       # out of bounds, in place
    with pytest.raises(InputError, match="ep.lazy's operand"):
        c_nodes.LOOKUP[0](ep.lazy(M) @ x, PROGRAMS._d, True, 1)
    with pytest.raises(InputError, match="ep.lazy's operand"):
        ep.compute(ep.lazy(M) @ x)
    A = sp.random_array((6, 6), density=0.4, format="csr", random_state=6)
    for B in (A.T.tocsr(), A.copy(), A):
        for _ in range(2):
            ep.compute(ep.lazy(A) @ (ep.lazy(B) @ x))               # recorded, replayed
        for _ in range(2):
            got = c_nodes.LOOKUP[0](ep.lazy(A) @ (ep.lazy(B) @ x), PROGRAMS._d, True, 1)
            np.testing.assert_allclose(got, A @ (B @ x), rtol=1e-12)
            B.data *= -2.0                                  # written in place
    B = A.T.tocsr()
    program = ep.lazy(A) @ (ep.lazy(B) @ x)
    B.indices[0] = 99                                       # out of bounds, in place
    with pytest.raises(InputError, match="ep.lazy's operand"):
        c_nodes.LOOKUP[0](program, PROGRAMS._d, True, 1)


def test_the_memo_leaves_a_key_to_be_made_when_read(c_ops):
    X, w = RNG.random((3, 3)), RNG.random(3)
    slot = LazyArray.__dict__["key"]        # the field itself, not __getattr__
    for memo in (True, False):
        c_nodes.use(True, memo, 0)
        for _ in range(2):                  # the patterns met, then from the memo
            n = ep.lazy(X) @ ep.lazy(w) + 1
        try:
            slot.__get__(n)
            unset = False
        except AttributeError:
            unset = True
        assert unset is memo
        assert n.key == (n.skey, n.lkeys) == slot.__get__(n) and hash(n) == hash(n.key)
        with pytest.raises(AttributeError, match="no attribute 'kee'"):
            n.kee
    c_nodes.use(True)
    bare = object.__new__(type(ep.lazy(X)))     # a leaf's key is never made up
    with pytest.raises(AttributeError):
        bare.key


def test_the_lookup_keeps_its_last_hit_and_still_probes_the_tapes(c_ops):
    c_nodes.use(True)
    a, b = RNG.random((4, 4)), RNG.random(4)

    def prog(a=a, b=b):
        return (ep.lazy(a) * 2 + ep.lazy(b)) / 4        # numpy's step, tuning=None

    def look(a=a, b=b):
        return c_nodes.LOOKUP[0](prog(a, b), PROGRAMS._d, True, 1)
    ep.compute(prog()), ep.compute(prog())              # recorded, replayed
    for _ in range(2):                                  # found, then from the last hit
        np.testing.assert_allclose(look(), (a * 2 + b) / 4)
    a[1, 2] = -3.0                                      # written in place
    np.testing.assert_allclose(look(), (a * 2 + b) / 4)
    PROGRAMS.clear()
    assert look() is None                               # the tapes are probed still
    np.testing.assert_allclose(ep.compute(prog()), (a * 2 + b) / 4)
    np.testing.assert_allclose(look(), (a * 2 + b) / 4)
    for c, d in ((RNG.random((5, 5)), RNG.random(5)),                   # another shape
                 (a.astype(np.float32), b.astype(np.float32))):         # another dtype
        assert look(c, d) is None
        for _ in range(3):
            np.testing.assert_allclose(ep.compute(prog(c, d)), (c * 2 + d) / 4, rtol=1e-6)
        np.testing.assert_allclose(look(c, d), (c * 2 + d) / 4, rtol=1e-6)
        np.testing.assert_allclose(look(), (a * 2 + b) / 4)

"""The operators' fast path (etchpy.lazy.operators) builds the nodes that the
builders of etchpy.lazy.array build: the same class, fields, keys and leaves,
and one node per operation, on a pattern's first meeting and on later ones,
and after the keys' table starts over."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.lazy import c_nodes, keys
from etchpy.lazy.array import binary, lazy, map_node, matmul, reduce_sum, subtract, transpose
from etchpy.lazy.nodes import Add, Div, Leaf, Mul
from etchpy.settings import LIMITS

pytestmark = pytest.mark.usefixtures("shared_cache")

RNG = np.random.default_rng(0)
ARRAYS = [RNG.random((4, 3)), RNG.random(3), RNG.random(4), RNG.random((4, 1)),
          sp.random_array((4, 3), density=0.5, format="csr", random_state=0),
          RNG.random((4, 3)).astype(np.float32), np.arange(3)]

# each operation as the operators write it, and by the builders
OPS = {
    "add": (lambda a, b: a + b, lambda a, b: binary(Add, a, b)),
    "sub": (lambda a, b: a - b, subtract),
    "mul": (lambda a, b: a * b, lambda a, b: binary(Mul, a, b)),
    "div": (lambda a, b: a / b, lambda a, b: binary(Div, a, b)),
    "matmul": (lambda a, b: a @ b.T, lambda a, b: matmul(a, transpose(b))),
    "T": (lambda a, b: a.T, lambda a, b: transpose(a)),
    "sum0": (lambda a, b: a.sum(axis=0), lambda a, b: reduce_sum(a, 0)),
    "sum1k": (lambda a, b: a.sum(axis=-1, keepdims=True),
              lambda a, b: reduce_sum(a, -1, True)),
    "sum": (lambda a, b: a.sum(), lambda a, b: reduce_sum(a)),
    "exp": (lambda a, b: ep.exp(a), lambda a, b: map_node("exp", a)),
    "max0": (lambda a, b: ep.maximum(a, 0), lambda a, b: map_node("maximum", a, 0)),
    "min.5": (lambda a, b: ep.minimum(a, 0.5), lambda a, b: map_node("minimum", a, 0.5)),
    "max-1.": (lambda a, b: ep.maximum(a, -1.0), lambda a, b: map_node("maximum", a, -1.0)),
    "neg": (lambda a, b: -a, lambda a, b: binary(Mul, -1, a)),
    "2*": (lambda a, b: 2 * a, lambda a, b: binary(Mul, 2, a)),
    "1/": (lambda a, b: 1 / a, lambda a, b: binary(Div, 1, a)),
    "/2.": (lambda a, b: a / 2.0, lambda a, b: binary(Div, a, 2.0)),
    "-1": (lambda a, b: a - 1, lambda a, b: subtract(a, 1)),
    "1-": (lambda a, b: 1 - a, lambda a, b: subtract(1, a)),
    "+arr": (lambda a, b: a + b.value if type(b) is Leaf else a + b,
             lambda a, b: binary(Add, a, b.value) if type(b) is Leaf else binary(Add, a, b)),
}


@pytest.fixture(scope="module", autouse=True)
def _no_node_memo():
    """Nodes are counted here: the C operators' node memo, which gives a node met
    before again (test_node_memo.py), is off while they are installed."""
    on = c_nodes.INSTALLED[0] is True
    if on:
        c_nodes.use(True, True, 0)
    yield
    if on:
        c_nodes.use(True)


def same(x, y, seen: set) -> None:
    """x and y are the same node: class, shape, dtype, keys, leaves, fields."""
    if id(x) in seen:
        return
    seen.add(id(x))
    assert type(x) is type(y), (x, y)
    assert (x.shape, x.dtype, x.key, x.skey, x.lkeys) == (y.shape, y.dtype, y.key, y.skey,
                                                         y.lkeys), (x, y)
    assert len(x.leaves) == len(y.leaves) and all(
        p.value is q.value for p, q in zip(x.leaves, y.leaves)), (x, y)
    for f in type(x).__slots__:
        if f not in ("a", "b", "value"):
            assert getattr(x, f) == getattr(y, f), (f, x, y)
    for p, q in zip(x.args, y.args):
        same(p, q, seen)


def build(ops, wrap, recipe):
    """The nodes of a recipe ((op, i, j) steps over a pool of the arrays' leaves)."""
    pool = [wrap(a) for a in ARRAYS]
    for name, i, j in recipe:
        try:
            pool.append(OPS[name][ops](pool[i % len(pool)], pool[j % len(pool)]))
        except ep.errors.InputError:
            pass
    return pool


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 40),
                          st.integers(0, 40)), min_size=1, max_size=8))
def test_operators_build_the_builders_nodes(recipe):
    made = []
    for ops, wrap in ((0, ep.lazy), (0, ep.lazy), (1, lazy)):   # twice: patterns met
        before = keys.built()
        made.append((build(ops, wrap, recipe), keys.built() - before))
    (first, _), (second, n2), (ref, n3) = made
    assert n2 == n3          # (the first pass also makes the scalars' consts, once)
    for x, y, z in zip(first, second, ref):
        same(x, z, set())
        same(y, z, set())


def test_patterns_start_over_with_the_keys_table():
    A, w = RNG.random((3, 3)), RNG.random(3)
    a, v = ep.lazy(A), ep.lazy(w)
    old = (a @ v + 1).skey
    assert (a @ v + 1).skey == old                      # a pattern met before
    for k in range(LIMITS.lazy_interned + 1):          # fill the table: it starts over
        keys.intern(("test_operators", k))
    a, v = ep.lazy(A), ep.lazy(w)
    new = a @ v + 1
    ref = binary(Add, matmul(lazy(A), lazy(w)), 1)
    assert new.skey != old and new.skey == ref.skey and new.key == ref.key

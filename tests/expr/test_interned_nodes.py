"""Hash-consed nodes (expr.interned): the syntax gives one node per operation and
operands, so that an expression rebuilt in a loop is the object built before; literals
of other types or signs stay apart; a key found only ever names its own operands
(proofs_notes/interned_nodes.md); pickles and jsondata are as before; the table is
bounded and can keep nothing."""
import math
import pickle
import random

import pytest

import etchpy as ep
from etchpy.expr import interned
from etchpy.expr.interned import NODES
from etchpy.expr.nodes import Access, Add, Lit, Mul, Sum
from etchpy.expr.walk import literal_bits
from etchpy.runtime import jsondata, statements

i, j, k = ep.indices("i j k")


def spmv(scale=None):
    a, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    body = a[i, j] * x[j] if scale is None else a[i, j] * x[j] * scale
    return ep.sum(j, body)


@pytest.fixture
def table_of():
    """NODES.resize, its size given back after the test."""
    size = NODES.size
    yield NODES.resize
    NODES.resize(size)


def test_a_rebuilt_expression_is_the_object_built_before():
    assert spmv() is spmv() and spmv(2.0) is spmv(2.0)
    x, z = ep.tensor("x", 1), ep.tensor("z", 1)
    for build in [lambda: x[i] + z[i], lambda: x[i] - z[i], lambda: -x[i],
                  lambda: x[i] ** 3, lambda: 2 * x[i] + z[i] * 0.5,
                  lambda: ep.sum((i, j), ep.tensor("A", 2)[i, j]),
                  lambda: ep.indices("i j")[1], lambda: ep.map("exp", x[i]),
                  lambda: ep.map("maximum", x[i] - 1, 0.0)]:
        assert build() is build()


def test_the_rebuilt_expression_finds_compiles_last_kernel_by_identity():
    kern = ep.compile(spmv())
    args = statements.last_args(spmv(), None, "dense", None, "etchpy_kernel", None, None,
                                None, None, None, None)
    assert statements.last_kernel(args) is kern


@pytest.mark.parametrize("a, b", [(1, 1.0), (0, 0.0), (0.0, -0.0), (2.0, 2), (-1, -1.0),
                                  (10**30, 1e30)])
def test_literals_of_another_type_or_sign_stay_apart(a, b):
    x = ep.tensor("x", 1)
    ea, eb = x[i] * a, x[i] * b
    assert ea is not eb and type(ea.b.value) is type(a) and type(eb.b.value) is type(b)
    assert repr(ea.b.value) == repr(a) and repr(eb.b.value) == repr(b)
    assert literal_bits(x[i] * 0.0) != literal_bits(x[i] * -0.0)


def test_a_negation_literal_is_not_the_plain_minus_one():
    x, z = ep.tensor("x", 1), ep.tensor("z", 1)
    minus, times = x[i] - z[i], x[i] + -1 * z[i]
    assert minus.b.a.negation and not times.b.a.negation and minus != times


def test_map_arguments_of_another_type_or_sign_stay_apart():
    x = ep.tensor("x", 1)
    for a, b in [(0.0, -0.0), (1, 1.0)]:
        ma, mb = ep.map("maximum", x[i], a), ep.map("maximum", x[i], b)
        assert ma is not mb and repr(ma.arg) == repr(a) and repr(mb.arg) == repr(b)
    with pytest.raises(ep.errors.MapError):
        ep.map("maximum", x[i])
    with pytest.raises(ep.errors.MapError):
        ep.map("maximum", x[i])


def test_nan_literals_hold_their_own_value():
    x = ep.tensor("x", 1)
    nan = float("nan")
    assert (x[i] * nan).b.value is nan
    other = float("nan")
    assert (x[i] * other).b.value is other


def test_errors_are_raised_each_time_and_nothing_is_kept_for_them():
    a = ep.tensor("A", 2)
    for _ in range(2):
        with pytest.raises(ep.errors.ExpressionTypeError):
            a[i]
        with pytest.raises(ep.errors.ExpressionTypeError):
            ep.sum(k, a[i, j])
        with pytest.raises(ep.errors.ExpressionTypeError):
            a[i, "j"]


def test_diagonals_and_windows_are_built_as_before():
    a = ep.tensor("A", 2)
    assert a[i, i] == a[i, i] and not isinstance(a[i, i], Access)
    w = a[i[0:3], j]
    assert w == a[i[0:3], j]


def test_pickles_and_jsondata_are_those_of_a_node_built_new(table_of):
    kept = spmv(2.0)
    hash(kept)
    table_of(0)
    new = spmv(2.0)
    assert new == kept and new is not kept
    assert pickle.dumps(new) == pickle.dumps(kept)
    assert jsondata.dumps(new) == jsondata.dumps(kept)
    back = pickle.loads(pickle.dumps(kept))
    assert back == kept and back is not kept


def test_the_table_is_bounded_and_size_zero_keeps_nothing(table_of):
    table_of(16)
    x = ep.tensor("x", 1)
    for n in range(200):
        assert (x[i] * n).b.value == n
        assert len(NODES) <= 16
    table_of(0)
    assert spmv() == spmv() and spmv() is not spmv() and len(NODES) == 0


def _random_tree(rng, leaves, depth):
    """(syntax build, constructor build) of one random expression."""
    if depth == 0 or rng.random() < 0.3:
        if rng.random() < 0.3:
            v = rng.choice([0, 1, 2, 0.0, -0.0, 1.5, -1])
            return (lambda: leaves()[0] * v), (lambda: Mul(leaves()[1], Lit(v)))
        return (lambda: leaves()[0]), (lambda: leaves()[1])
    sa, ca = _random_tree(rng, leaves, depth - 1)
    sb, cb = _random_tree(rng, leaves, depth - 1)
    op = rng.choice("*+-")
    if op == "*":
        return (lambda: sa() * sb()), (lambda: Mul(ca(), cb()))
    if op == "+":
        return (lambda: sa() + sb()), (lambda: Add(ca(), cb()))
    return (lambda: sa() - sb()), (lambda: Add(ca(), Mul(Lit(-1, negation=True), cb())))


@pytest.mark.parametrize("size", [3, 64, 4096])
def test_built_by_syntax_equals_built_by_constructors_while_objects_come_and_go(
        table_of, size):
    """Tensors made new (TensorVar, not interned), dropped and made again, so that ids
    are reused: every expression built by the syntax still equals, literal bits
    included, the one built by the constructors."""
    table_of(size)
    rng = random.Random(size)
    for trial in range(300):
        name = rng.choice("xyz")
        def leaves(name=name):
            t = ep.TensorVar(name, 1)
            return t[i], Access(t, (i,))
        syn, con = _random_tree(rng, leaves, 3)
        built, want = syn(), con()
        assert built == want and literal_bits(built) == literal_bits(want)
        summed = ep.sum(i, built)
        assert summed == Sum(i, want) and literal_bits(summed) == literal_bits(want)
        assert len(NODES) <= size


def test_kept_literal_keys_are_of_int_float_and_bool_only():
    assert interned.literal_key(1 + 2j, False) is None
    assert interned.literal_key(0.0, False) != interned.literal_key(-0.0, False)
    assert interned.literal_key(1, False) != interned.literal_key(True, False)
    assert interned.literal_key(0, False) != interned.literal_key(False, False)
    assert interned.literal_key(1, False) != interned.literal_key(1, True)
    assert interned.literal_key(math.inf, False) == interned.literal_key(math.inf, False)

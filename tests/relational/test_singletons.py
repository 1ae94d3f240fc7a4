"""Key columns that depend on the keys above them, stored as singleton levels by
ep.table (stored._singletons: every parent position has one child, so the level
keeps its crd alone), read by kernels as any level: sums, located and sparse
factors at the level, joins with other relations on it, a free index there,
value comparisons and one walk, values written in place between calls, all
against numpy on the dense tensors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.formats.singleton import Singleton

a, b, c, d, e = ep.indices("a b c d e")
o_, ln_, p_, d_ = ep.indices("o ln p d")
row = st.tuples(st.integers(0, 5), st.integers(0, 3))


def load(pairs, dep, vals, first=None, secondary=None):
    """Table keyed (a, b) with c = dep[a, b] % 4 and d = (a + dep[a, b]) % 3
    carried as keys below them; values v."""
    keys = np.array(pairs).T
    f = np.array([dep[(x * 4 + y) % len(dep)] for x, y in pairs])
    cols = {"a": keys[0], "b": keys[1], "c": f % 4, "d": (keys[0] + f) % 3,
            "v": np.array(vals[:len(pairs)], dtype=float)}
    coding = {k: ep.Keys(np.arange(n), name=k) for k, n in zip("abcd", (6, 4, 4, 3))}
    levels = None if first is None else [first] + ["compressed"] * 3
    return ep.table(cols, ["a", "b"], keys=["c", "d"], values=["v"], coding=coding,
                    levels=levels, secondary=secondary, name="T"), cols


def run(expr, **inputs):
    return np.asarray(ep.compile(expr)(**inputs))


tables = dict(pairs=st.lists(row, min_size=1, max_size=16, unique=True),
              dep=st.lists(st.integers(0, 11), min_size=1, max_size=8),
              vals=st.lists(st.integers(-3, 5), min_size=16, max_size=16))


@settings(max_examples=25, deadline=None)
@given(**tables)
def test_dependent_keys_are_singleton_levels_read_right(pairs, dep, vals):
    T, cols = load(pairs, dep, vals)
    t = T.tensor("v")
    assert [isinstance(lv, Singleton) for lv in t.format.levels[2:]] == [True, True]
    D = t.to_dense()
    V = T.var("v", name="V")
    x = np.arange(4.0) - 1
    assert np.allclose(run(ep.sum((a, b, c, d), V[a, b, c, d] * ep.tensor("x", 1, "dense")[c]),
                           V=t, x=x), np.einsum("abcd,c->", D, x))
    W = ep.Tensor.from_dense(np.array([0.0, 2.0, 0.0, 3.0]), "csf")
    assert np.allclose(run(ep.sum((a, b, d), V[a, b, c, d] * ep.tensor("W", 1, "csf")[c]),
                           V=t, W=W), np.einsum("abcd,c->c", D, W.to_dense()))
    R = ep.Tensor.from_dense(np.arange(12.0).reshape(4, 3) % 5, "dcsr")
    got = run(ep.sum((b, c, d), V[a, b, c, d] * ep.tensor("R", 2, "dcsr")[c, e]), V=t, R=R)
    assert np.allclose(got, np.einsum("abcd,ce->ae", D, R.to_dense()))
    assert np.allclose(run(ep.sum((a, b, c), V[a, b, c, d]), V=t), D.sum((0, 1, 2)))


@settings(max_examples=20, deadline=None)
@given(**tables, first=st.sampled_from(["dense", "compressed"]))
def test_a_singleton_table_meets_a_compressed_copy_and_comparisons(pairs, dep, vals, first):
    T, cols = load(pairs, dep, vals)
    U, _ = load(pairs, dep, vals, first=first)       # levels given: no singleton
    assert not any(isinstance(lv, Singleton) for lv in U.tensor("v").format.levels)
    t, u = T.tensor("v"), U.tensor("v")
    D = t.to_dense()
    V, W = T.var("v", name="V"), U.var("v", name="W")
    got = run(ep.sum((b, c), V[a, b, c, d] * W[a, b, c, d]), V=t, W=u)
    assert np.allclose(got, np.einsum("abcd,abcd->ad", D, u.to_dense()))
    kern = ep.compile(ep.sum((a, b, c, d), V[a, b, c, d] * (V[a, b, c, d] < "t")))
    for step in range(2):
        want = sum(v for v in t.vals if v < 2)
        assert np.isclose(kern(V=t, t=2), want)
        t.vals[:] = t.vals[::-1] - step               # written in place
    kern = ep.compile(ep.sum((b, c, d), V[a, b, c, d] * (d >= "lo")))
    assert np.allclose(kern(V=t, lo=1), t.to_dense()[..., 1:].sum((1, 2, 3)))


@settings(max_examples=15, deadline=None)
@given(**tables)
def test_the_secondary_order_and_a_planned_conversion_of_a_singleton_table(pairs, dep, vals):
    T, _ = load(pairs, dep, vals, secondary=["c", "a", "b", "d"])
    t = T.tensor("v")
    D = t.to_dense()
    assert np.allclose(T.tensor("v", order=["c", "a", "b", "d"]).to_dense(), D)
    t.vals[:] = t.vals * 2 + 1                        # written in place
    assert np.allclose(T.tensor("v", order=["c", "a", "b", "d"]).to_dense(), t.to_dense())
    X = ep.tensor("X", 2, "csr")                      # X[c, a]: the planner may convert V
    x = ep.Tensor.from_dense((np.arange(24.0).reshape(4, 6) % 3), "csr")
    got = np.asarray(ep.compile(ep.sum((a, b, d), T.var("v", name="V")[a, b, c, d] * X[c, a]))(
        V=t, X=x))
    assert np.allclose(got, np.einsum("abcd,ca->c", t.to_dense(), x.to_dense()))


def test_a_key_that_does_not_depend_stays_compressed():
    cols = {"a": np.array([0, 0, 1]), "b": np.array([1, 2, 1]), "v": np.ones(3)}
    T = ep.table(cols, ["a"], keys=["b"], values=["v"], name="T")
    assert not isinstance(T.tensor("v").format.levels[1], Singleton)
    T = ep.table({"a": np.array([0, 1]), "b": np.array([1, 2]), "v": np.ones(2)},
                 ["a"], keys=["b"], values=["v"], name="T")
    assert isinstance(T.tensor("v").format.levels[1], Singleton)
    assert "singleton" in T.explain()


@pytest.mark.parametrize("levels", [["dense", "singleton"], ["compressed", "singleton"],
                                    ["compressed", "singleton", "singleton"]])
def test_a_singleton_under_a_unique_level_needs_one_child_each(levels):
    fmt = ep.Format(levels)
    coords = np.array([[0, 1, 2], [2, 0, 1], [1, 1, 0]])[:len(levels)]
    t = ep.Tensor.from_coords(coords, np.array([1.0, 2.0, 3.0]), (3,) * len(levels), fmt)
    assert np.allclose(t.to_dense(), ep.Tensor.from_coords(
        coords, np.array([1.0, 2.0, 3.0]), (3,) * len(levels), "coo").to_dense())
    with pytest.raises(ep.errors.FormatError, match="one coordinate per parent"):
        ep.Tensor.from_coords(np.array([[0, 0], [1, 2], [0, 0]])[:len(levels)],
                              np.ones(2), (3,) * len(levels), fmt)


def test_the_planner_knows_a_singleton_level_under_a_key_holds_one_entry_each():
    """The fibres of a singleton level under a unique level are measured (one
    entry each) and the planner prices its choices with them."""
    T, _ = load([(0, 0), (0, 1), (2, 3), (4, 2)], [1, 5, 2], list(range(16)))
    W = ep.Tensor.from_dense(np.array([0.0, 2.0, 0.0, 3.0]), "csf")
    kern = ep.compile(ep.sum((a, b, c, d), T.var("v", name="V")[a, b, c, d]
                             * ep.tensor("W", 1, "csf")[c]), order=["a", "b", "c", "d"])
    kern(V=T.tensor("v"), W=W)
    text = kern.explain()
    assert "V level 2: 4 fibers, 4 non-empty, longest 1, mean 1" in text
    assert "not known" not in text


def test_a_stored_order_keeps_one_child_levels_as_singletons_and_reads_writes():
    """The secondary order (and an order added) stores each level whose every
    parent position has one child there as a singleton level; a kernel reading
    it agrees with the storage order, before and after a write in place."""
    cols = {"o": np.array([1, 1, 2, 3, 3]), "ln": np.array([1, 2, 1, 1, 2]),
            "p": np.array([3, 1, 1, 2, 3]), "d": np.array([9, 8, 9, 7, 8]),
            "v": np.array([10.0, 20.0, 5.0, 7.0, 1.0])}
    second = ["p", "o", "ln", "d"]
    T = ep.table(cols, ["o", "ln"], keys=["p", "d"], values=["v"], secondary=second,
                 name="T")
    kinds = [str(k) for k in T.tensor("v", order=second).format.levels]
    assert kinds == ["dense", "compressed", "singleton", "singleton"], kinds
    assert T.add_order(["d", "o", "ln", "p"]) and "order added" in T.explain()
    V = T.var("v", order=second, name="V")
    kern = ep.compile(ep.sum((o_, ln_, d_), V[o_, ln_, p_, d_] * (d_ >= "lo")),
                      order=["p", "o", "ln", "d"])
    for step in range(2):
        D = T.tensor("v").to_dense()
        lo = 1
        assert np.allclose(kern(V=T.tensor("v", order=second), lo=lo),
                           D[..., lo:].sum((0, 1, 3)))
        T.tensor("v").vals[:] = T.tensor("v").vals * 3 - step     # written in place


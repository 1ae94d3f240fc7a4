"""The Imp interpreter: each statement's meaning, and the preconditions it checks."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy import imp
from etchpy.imp import Const, Load, Var

REAL = ep.semirings.get("real")


def machine(**env):
    return imp.Machine(REAL, env)


def test_expressions():
    m = machine(x=5, a=np.array([10, 20, 30], dtype=np.int64))
    ev = m.eval
    assert ev(imp.Bin("/", Var("x"), Const(2))) == 2 and ev(imp.Bin("&", Var("x"), Const(3))) == 1
    assert ev(Load("a", Const(2))) == 30 and isinstance(ev(Load("a", Const(2))), int)
    assert ev(imp.Ring("add", Const(1.5, "value"), Const(2, "value"))) == 3.5
    assert ev(imp.Select(imp.lt(Var("x"), Const(3)), Const(1), Const(2))) == 2
    # && and || are lazy: the out-of-bounds load is never evaluated
    assert ev(imp.Bin("&&", imp.FALSE, imp.lt(Load("a", Const(9)), Const(0)))) is False
    assert ev(imp.Bin("||", imp.TRUE, imp.lt(Load("a", Const(9)), Const(0)))) is True
    with pytest.raises(imp.ImpRuntimeError, match="out of bounds"):
        ev(Load("a", Const(3)))


def test_hash_is_a_slot_of_the_table():
    m = machine()
    slots = {m.eval(imp.Bin("hash", Const(k), Const(63))) for k in range(1000)}
    assert slots <= set(range(64)) and len(slots) > 32


def test_stores_check_bounds_and_accumulate_with_the_semiring():
    mp = imp.Machine(ep.semirings.get("min_plus"), {"a": np.array([5.0, 5.0])})
    mp.exec(imp.Accum("a", Const(1), Const(3.0, "value")))
    assert list(mp.env["a"]) == [5.0, 3.0]
    with pytest.raises(imp.ImpRuntimeError, match="write a"):
        mp.exec(imp.Store("a", Const(2), Const(0.0, "value")))
    with pytest.raises(imp.ImpRuntimeError, match="prefetch"):
        mp.exec(imp.Prefetch("a", Const(3)))
    mp.exec(imp.Prefetch("a", Const(2)))        # one past the end is an address C may form


def test_reserve_keeps_contents_and_move_empties_the_source():
    m = machine()
    m.exec(imp.seq(imp.Alloc("a", "index", Const(2), Const(7)),
                   imp.Reserve("a", "index", Const(3), Const(1)),
                   imp.Alloc("b", "index", Const(1), imp.ZERO),
                   imp.Move("b", "a")))
    assert list(m.env["b"]) == [7, 7, 1, 1] and len(m.env["a"]) == 0


def test_parallel_for_runs_in_order_with_fresh_private_arrays():
    m = machine(out=np.zeros(4), w=np.array([9.0]))
    body = imp.seq(imp.Accum("w", imp.ZERO, Const(1.0, "value")),
                   imp.Store("out", Var("i"), Load("w", imp.ZERO)))
    m.exec(imp.ParallelFor("i", imp.ZERO, Const(4), body, 2,
                           private=(("w", "value", Const(1), Const(0.0, "value")),)))
    assert list(m.env["out"]) == [1.0, 2.0, 3.0, 4.0]
    assert list(m.env["w"]) == [9.0]               # the outer array is restored


@given(st.lists(st.integers(0, 60), unique=True, max_size=12).map(sorted),
       st.integers(-2, 62), st.booleans(), st.data())
def test_seek_moves_past_exactly_the_positions_behind_the_target(crd, t, r, data):
    q = data.draw(st.integers(0, len(crd)))
    end = data.draw(st.integers(q, len(crd)))
    m = machine(crd=np.array(crd, dtype=np.int64), q=q)
    m.exec(imp.Seek("q", Const(end), "crd", Const(t), Const(r, "bool")))
    side = "right" if r else "left"
    assert m.env["q"] == q + np.searchsorted(np.array(crd[q:end], dtype=np.int64), t, side=side)


def test_seek_checks_its_precondition():
    m = machine(crd=np.array([1, 3, 3, 5], dtype=np.int64), q=0)
    with pytest.raises(imp.ImpRuntimeError, match="not increasing"):
        m.exec(imp.Seek("q", Const(4), "crd", Const(4), imp.TRUE))
    with pytest.raises(imp.ImpRuntimeError, match="out of bounds"):
        m.exec(imp.Seek("q", Const(5), "crd", Const(0), imp.TRUE))


def _short(width, a, b, na, nb):
    m = machine(ca=np.array(a, dtype=np.int64), cb=np.array(b, dtype=np.int64),
                qa=0, ea=na, qb=0, eb=nb, hits=np.zeros(2 * len(a) + 1, dtype=np.int64), n=0)
    body = imp.seq(imp.Store("hits", Var("n"), Var("qa")),
                   imp.Store("hits", imp.add(Var("n"), imp.ONE), Var("qb")),
                   imp.Assign("n", imp.add(Var("n"), Const(2))))
    m.exec(imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb", body, width))
    return m


@given(st.integers(1, 6), st.data())
def test_short_intersect_visits_common_coordinates_in_order(width, data):
    seg = st.lists(st.integers(0, 12), unique=True, max_size=width).map(sorted)
    a, b = data.draw(seg), data.draw(seg)
    pad = lambda xs: xs + [99] * width      # noqa: E731  (width entries from the start)
    m = _short(width, pad(a), pad(b), len(a), len(b))
    common = sorted(set(a) & set(b))
    pairs = [(a.index(c), b.index(c)) for c in common]
    assert [tuple(m.env["hits"][k:k + 2]) for k in range(0, m.env["n"], 2)] == pairs
    assert (m.env["qa"], m.env["qb"]) == (len(a), len(b))


def test_short_intersect_checks_its_width():
    with pytest.raises(imp.ImpRuntimeError, match="width 2"):
        _short(2, [1, 2, 3, 9], [1, 2, 9, 9], 3, 2)      # a segment of 3 > 2
    with pytest.raises(imp.ImpRuntimeError, match="precondition"):
        _short(4, [1, 2, 3], [1, 2, 9, 9], 2, 2)         # ca holds 3 < 4 entries


def test_sorted_walk_over_marks_on_the_interpreter():
    """ForSorted runs its body in ascending order of the listed indices, leaves the
    marks and bits all-zero, and refuses marks that are not exactly the list, bits
    not zero (or a list with repeats); with no marks it only sorts."""
    m = machine()
    size = Const(200)
    listed = [130, 7, 64, 63, 199]
    walk = imp.seq(imp.Alloc("seen", "index", Const(5), imp.ZERO),
                   imp.Decl("t", "index", imp.ZERO),
                   imp.ForSorted("k", "list", Const(5), size, "bits",
                                 imp.seq(imp.Store("seen", Var("t"), Var("k")),
                                         imp.incr("t")), marks="marks"))
    m.exec(imp.seq(imp.Alloc("list", "index", Const(5), imp.ZERO),
                   imp.Alloc("marks", "byte", size, imp.ZERO),
                   imp.Alloc("bits", "bits", imp.sort_bits_words(size), imp.ZERO)))
    for t, k in enumerate(listed):
        m.exec(imp.seq(imp.Store("list", Const(t), Const(k)),
                       imp.Store("marks", Const(k), imp.ONE)))
    m.exec(walk)
    assert list(m.env["seen"]) == sorted(listed)
    assert not m.env["bits"].any() and not m.env["marks"].any()
    m.exec(imp.seq(*(imp.Store("list", Const(t), Const(k))
                     for t, k in enumerate(listed)), imp.Store("marks", Const(7), imp.ONE)))
    with pytest.raises(imp.ImpRuntimeError, match="not exactly"):
        m.exec(walk)                              # only one of the five is marked
    m.exec(imp.seq(*(imp.Store("marks", Const(k), imp.ONE) for k in listed),
                   imp.SetBit("bits", Const(3), True)))
    with pytest.raises(imp.ImpRuntimeError, match="not zero"):
        m.exec(walk)                              # a bit left set
    m.exec(imp.seq(imp.SetBit("bits", Const(3), False), imp.Store("list", Const(1), Const(130))))
    with pytest.raises(imp.ImpRuntimeError, match="distinct"):
        m.exec(imp.ForSorted("k", "list", Const(5), size, None, imp.SKIP))
    with pytest.raises(ValueError, match="together"):
        imp.ForSorted("k", "list", Const(5), size, "bits", imp.SKIP)


def test_unfilled_arrays_hold_garbage_on_the_interpreter():
    """Alloc without a fill (and the grown part of a Reserve) is undefined in C; the
    interpreter puts values there that no test expects, so reading one shows."""
    m = machine()
    m.exec(imp.seq(imp.Alloc("v", "value", Const(3), None),
                   imp.Alloc("c", "index", Const(2), None),
                   imp.Alloc("z", "index", Const(2), imp.ZERO),
                   imp.Reserve("z", "index", Const(5))))
    assert np.all(m.env["v"] == 918273.645) and np.all(m.env["c"] == 1 << 40)
    assert list(m.env["z"][:2]) == [0, 0] and np.all(m.env["z"][2:] == 1 << 40)


def test_local_arrays_and_opaque():
    m = machine()
    m.exec(imp.seq(imp.LocalArray("r", 3, Const(2.0, "value")), imp.Opaque("r")))
    assert list(m.env["r"]) == [2.0, 2.0, 2.0]
    with pytest.raises(imp.ImpRuntimeError, match="not an Imp statement"):
        m.exec("nonsense")

"""A flat sum's tests as a byte mask over blocks (lower.schedule.flat_mask,
Tuning.flat_mask): the sum is the loop's own to the last bit (same additions,
same order; a group of entries that all fail skipped), for blocks and groups that
do and do not divide the entries, in both forms the loop takes: the selected sum
of a one-walk row predicate (TPC-H Q6's shape: value columns of one table) and
the guarded sum over dense vectors; compiled to C and run by the Imp
interpreter. The pass refuses what its law does not cover: an accumulator that
may start at -0.0, a read at another place than the counter. (The central
property's problems reach neither shape: 508 loops of 10 of its draws tried, none
blocked, session 52; so these properties draw the shapes themselves.)"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import tuning
from etchpy.imp import Assign, Bin, Const, Decl, Load, Ring, Select, Seq, Var, While
from etchpy.lower.schedule import flat_mask
from etchpy.runtime.predicates import with_predicates
from etchpy.testing.oracles import imp_evaluate

pytestmark = pytest.mark.usefixtures("shared_cache")

(i,) = ep.indices("i"),
OFF = tuning.DEFAULT.with_(call_binder=False)
BLOCKS = (8, 16, 24, 40)


def _same(a, b) -> bool:
    """Equal to the last bit (NaN and the sign of zero included)."""
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def _dense():
    V, A, B = ep.tensor("V", 1), ep.tensor("A", 1), ep.tensor("B", 1)
    return ep.sum(i, V[i] * ((A[i] >= "lo") & (A[i] < "hi")) * (B[i] <= "bb"))


@pytest.fixture(scope="module")
def dense_kernels():
    e = _dense()
    return e, {b: ep.compile(e, tuning=OFF.with_(flat_mask=b)) for b in (0, *BLOCKS)}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 130), st.integers(0, 2**32 - 1), st.floats(0, 1), st.floats(0, 1))
def test_guarded_sums_over_blocks_are_the_loops_to_the_last_bit(dense_kernels, n, seed, lo, hi):
    e, kern = dense_kernels
    assert "i_c_fm_mask[16]" in kern[16].c_source and "fm_mask" not in kern[0].c_source
    rng = np.random.default_rng(seed)
    v, a, b = rng.standard_normal(n), rng.random(n), rng.random(n)
    args = dict(V=v, A=a, B=b, lo=lo, hi=hi, bb=0.5)
    want = kern[0](**args)
    assert np.isclose(want, (v * ((a >= lo) & (a < hi)) * (b <= 0.5)).sum(), rtol=1e-12, atol=1e-12)
    for blk in BLOCKS:
        assert _same(kern[blk](**args), want), (blk, n)


def test_the_imp_interpreter_runs_the_blocked_loop():
    e = _dense()
    rng = np.random.default_rng(3)
    n = 77
    v, a, b = rng.standard_normal(n), rng.random(n), rng.random(n)
    bound = with_predicates(e, dict(V=v, A=a, B=b, lo=0.25, hi=0.75, bb=0.5), ep.semirings.real)
    want = ep.compile(e, tuning=OFF)(V=v, A=a, B=b, lo=0.25, hi=0.75, bb=0.5)
    for blk in (8, 24):
        got = imp_evaluate(e, bound, tuning=OFF.with_(flat_mask=blk))
        assert _same(got, want), blk


def _table(rng, n):
    """n lines of orders (an order's lines numbered 0, 1, ...), sorted as stored."""
    o = np.sort(rng.integers(0, max(n // 3, 1), n))
    ln = np.arange(n) - np.searchsorted(o, o)
    v = rng.standard_normal(n)
    v[rng.random(n) < 0.2] = -0.0                         # signed zeros, passing and not
    a, b = rng.integers(0, 20, n).astype(float), rng.integers(0, 11, n) / 100.0
    return ep.table({"o": o, "ln": ln, "v": v, "a": a, "b": b}, ["o", "ln"],
                    values=["v", "a", "b"], name="L"), (v, a, b)


@pytest.mark.parametrize("seed", range(3))
def test_a_row_predicates_selected_sum_is_the_loops_to_the_last_bit(seed):
    """Q6's shape: every factor a value column of one table at the same levels,
    so the call walks its stored entries once (runtime.shared), the tests a row
    predicate whose sum selects the value."""
    o, ln = ep.indices("o ln")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(100, 400))
    T, (v, a, b) = _table(rng, n)
    A, B = T.var("a", name="A")[o, ln], T.var("b", name="B")[o, ln]
    e = ep.sum((o, ln), T.var("v", name="V")[o, ln] * ((A >= "lo") & (A < "hi")) * (B <= "bb"))
    kern = {blk: ep.compile(e, optimize=False, order=["o", "ln"],
                            tuning=OFF.with_(flat_mask=blk))
            for blk in (0, 16, 40)}
    args = dict(V=T.tensor("v"), A=T.tensor("a"), B=T.tensor("b"))
    for lo, hi, bb in ((3, 9, 0.05), (0, 20, 0.1), (5, 5, 0.1), (19, 20, 0.0)):
        got = {blk: k(**args, lo=lo, hi=hi, bb=bb) for blk, k in kern.items()}
        keep = (a >= lo) & (a < hi) & (b <= bb)
        assert np.isclose(got[0], v[keep].sum(), rtol=1e-12, atol=1e-12)
        for blk in (16, 40):
            assert _same(got[blk], got[0]), (blk, lo, hi, bb)
    walked = kern[16]._walked            # the one walk's kernel, blocked; not as written
    assert "fm_mask[16]" in walked.c_source and "fm_mask" not in kern[16].c_source
    assert "fm_mask" not in kern[0]._walked.c_source


def _loop(start, index=Var("i")):
    """acc = start; while (i < n) { acc = acc + (A[i] < 1 ? V[index] : 0.0); i++ }"""
    sel = Select(Bin("<", Load("A", Var("i")), Const(1.0, "value")), Load("V", index),
                 Const(0.0, "value"))
    loop = While(Bin("<", Var("i"), Var("n")), Seq((
        Assign("acc", Ring("add", Var("acc"), sel)),
        Assign("i", Bin("+", Var("i"), Const(1))))))
    return (Decl("acc", "value", Const(start, "value")),), loop


def test_what_the_law_does_not_cover_is_left_as_written():
    how = (16, True, True)
    before, loop = _loop(0.0)
    assert flat_mask._blocked(loop, before, how, set()) is not None
    before, loop = _loop(-0.0)                         # -0.0 + 0.0 is +0.0: not skipped
    assert flat_mask._blocked(loop, before, how, set()) is None
    assert flat_mask._blocked(loop, (), how, set()) is None      # start unknown
    before, loop = _loop(0.0, Load("R", Var("i")))      # V[R[i]]: a gather
    assert flat_mask._blocked(loop, before, how, set()) is None
    before, loop = _loop(0.0)
    assert flat_mask._blocked(loop, before, (16, False, True), set()) is None  # not a plain +


"""A block's first tests as a mask (lower.schedule.guard_mask, Tuning.guard_mask):
TPC-H Q14's shape (each line's date a range test, then its part's row), the
lines listed through a mask of both ends of the range, in groups; the answers
equal numpy's for blocks and groups that do and do not divide the lines, and
for ranges no line, some lines and every line passes (compiled to C, and
the program run by the Imp interpreter). Which tests the mask
takes: those reading at the counter only what the first reads there."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import tuning
from etchpy.imp import Bin, Const, Load, Select, Var
from etchpy.lower.schedule import guard_mask
from etchpy.testing.oracles import imp_evaluate

pytestmark = pytest.mark.usefixtures("shared_cache")

l, p, d, t = ep.indices("l p d t")
M, NP = 203, 7


def _tables(rng):
    part, date, v = rng.integers(0, NP, M), rng.integers(0, 10, M), rng.random(M)
    types = rng.permutation(np.arange(NP) % 3)          # every type: 3 codes
    keys = {"p": ep.Keys(np.arange(NP), name="p"), "d": ep.Keys(np.arange(10), name="d")}
    lines = ep.table({"l": np.arange(M), "p": part, "d": date, "v": v}, ["l"], keys=["p", "d"],
                     values=["v"], coding=keys, name="L")
    parts = ep.table({"p": np.arange(NP), "t": types}, ["p"], keys=["t"],
                     coding={"p": keys["p"]}, name="P")
    return lines, parts, (part, date, v, types)


def test_lines_listed_through_a_mask_give_numpys_sums():
    lines, parts, (part, date, v, types) = _tables(np.random.default_rng(2))
    e = ep.sum((l, p, d), lines.var("v")[l, p, d] * ep.between(d, "dlo", "dhi")
               * parts.var()[p, t])
    kern = {g: ep.compile(e, optimize=False, order=["l", "p", "d", "t"],
                          tuning=tuning.DEFAULT.with_(call_binder=False, guard_block=40,
                                                      guard_mask=g, guard_blocks_far=3))
            for g in (8, 3, 0)}
    assert "l_c_mask[40]" in kern[8].c_source and "l_c_mask" not in kern[0].c_source
    assert "(l_c_t + 7)" in kern[8].c_source and "(l_c_t + 2)" in kern[3].c_source
    assert "EP_PREFETCH(&L_crd1[l_c_list[(l_c_t + 3)]])" in kern[8].c_source
    for lo, hi in ((3, 7), (4, 5), (0, 10), (9, 9), (2, 3)):
        want = np.bincount(types[part], weights=v * ((date >= lo) & (date < hi)), minlength=3)
        for g, k in kern.items():
            got = k(L=lines.tensor("v"), P=parts.tensor(), dlo=lo, dhi=hi)
            assert np.allclose(got, want, rtol=1e-12, atol=0), (g, lo, hi)
    on = tuning.DEFAULT.with_(guard_block=40, guard_mask=8, guard_blocks_far=3)
    dates = ep.Tensor.from_coords(np.arange(3, 7)[None, :], np.ones(4), (10,), "csf")
    got = imp_evaluate(e, {"L": lines.tensor("v"), "P": parts.tensor(),       # the Imp run
                           "cmp_d_ge_p_dlo_lt_p_dhi": dates},      # (the range, as made per call)
                       order=["l", "p", "d", "t"], tuning=on, optimize=False)
    want = np.bincount(types[part], weights=v * ((date >= 3) & (date < 7)), minlength=3)
    assert np.allclose(got, want, rtol=1e-12, atol=0)


def test_the_mask_takes_the_tests_reading_the_first_tests_places():
    i, A, B = "i", Load("A", Var("i")), Load("B", Var("i"))
    lo = Select(Bin("<", Load("P", Const(0)), Load("P", Const(1))), Load("C", Const(0)), Const(0))
    first, second = Bin("<=", lo, A), Bin("<", A, Load("C", Load("P", Const(1))))
    assert guard_mask.prefix([first, second], i) == 2
    assert guard_mask.prefix([first, Bin("<", B, Const(3)), second], i) == 1   # B: not read
    gathered = Bin("<", Load("A", Load("R", Var("i"))), Const(3))                # A[R[i]]
    assert guard_mask.prefix([gathered, second], i) == 0
    only_in_select = Bin("<", Select(Bin("<", Var("x"), Const(0)), B, Const(0)), Const(1))
    assert guard_mask.prefix([only_in_select, Bin("<", B, Const(2))], i) == 1
    assert guard_mask.prefix([Bin("<", Var("x"), Const(0)), second], i) == 0  # no read at i

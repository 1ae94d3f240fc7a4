"""Size tests switched once (lower.schedule.size_switch, Tuning.size_switch): a
test of a walked level's entry count inside a loop (the prefetch passes' "are
A's arrays large") is made once before the loops, each way of the switch a copy
of the statement with the test folded; tests that read a loop's own variables
stay where they are. Both ways give the loop's results."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.lower.schedule import size_switch
from etchpy.tuning import DEFAULT
from tuned import INTEL, on_interpreter, random_csr

i, j, k = ep.indices("i j k")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])
LARGE = "524288 <= A_pos1[A_dim0]"

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_the_size_test_is_made_once_before_the_rows():
    """SpMV's rows prefetch only when A holds 2^19 entries or more: the test is
    made once, outside every loop, in both builds; a per-row part (the row's
    length, with run_short > 0) stays in the rows. Off, the test is made in
    every row."""
    kern = ep.compile(SPMV, tuning=INTEL.with_(prefetch_values=0))   # (far values: a copy;
    #                                      Intel's test of the mean: test_run_mean)
    for checked in (True, False):
        prog = kern.compiled.build(checked)
        n = imp.Load("A_pos1", imp.Var("A_dim0"))
        test = imp.Bin("<=", imp.Const(INTEL.run_min_entries), n)
        assert [s.cond for s in imp.statements(prog.body)
                if isinstance(s, imp.If) and test in size_switch.conjuncts(s.cond)] == [test]
        loops = [s for s in imp.statements(prog.body) if isinstance(s, imp.While)]
        assert loops and all(not size_switch.size_tests(loop, {n}) for loop in loops)
    assert kern.c_source.count(f"if ({LARGE}) {{") == 1
    short = INTEL.with_(run_short=4, prefetch_values=0)
    src = ep.compile(SPMV, tuning=short).c_source
    assert src.count(f"if ({LARGE}) {{") == 1
    assert "if (4 <= (j_end - j_q)) {" in src
    off = ep.compile(SPMV, tuning=short.with_(size_switch=False)).c_source
    assert f"if (({LARGE}) && (4 <= (j_end - j_q))) {{" in off


def test_both_ways_give_the_loops_results():
    """On the interpreter (which checks every index, prefetched ones included),
    below and above the size the test asks for (run_min_entries 0 takes the
    prefetching way at any size), with the switch on and off."""
    rng = np.random.default_rng(3)
    sr = ep.semirings.get("real")
    for A in (random_csr(40, 30, 300, 1), sp.csr_matrix((6, 30)),
              sp.csr_matrix(np.triu(np.ones((30, 30))))):
        x = rng.random(30)
        for tuning in (DEFAULT, DEFAULT.with_(run_min_entries=0, run_ahead=3, run_long=2),
                       DEFAULT.with_(run_min_entries=0, size_switch=False)):
            final, _, _ = on_interpreter(SPMV, sr, None, {"A": A, "x": x}, tuning=tuning)
            np.testing.assert_allclose(final["out"], A @ x, rtol=1e-12)


def test_only_tests_of_constants_and_entry_counts_are_switched():
    """A comparison is a size test when each side is a constant or an entry
    count and one side is a count; a row's length, a dimension product or a
    conjunction is not."""
    n = imp.Load("A_pos1", imp.Var("A_dim0"))
    counts = {n}
    assert size_switch.is_size_test(imp.Bin("<=", imp.Const(4), n), counts)
    assert not size_switch.is_size_test(imp.Bin("<=", imp.Const(4), imp.Var("j_q")), counts)
    assert not size_switch.is_size_test(imp.Bin("<=", imp.Const(4), imp.Const(5)), counts)
    assert not size_switch.is_size_test(imp.Bin("<=", imp.Load("A_pos1", imp.Var("i")),
                                                n), counts)
    both = imp.and_(imp.Bin("<=", imp.Const(4), n), imp.Bin("<", imp.Var("q"), imp.Var("e")))
    assert not size_switch.is_size_test(both, counts)
    assert size_switch.conjuncts(both) == [both.a, both.b]
    loop = imp.While(imp.Bin("<", imp.Var("q"), imp.Var("e")), imp.If(both, imp.SKIP))
    folded = size_switch.fold(imp.replaced(loop, both.a, imp.FALSE))
    assert folded == imp.While(loop.cond, imp.SKIP)
    assert size_switch.fold(imp.replaced(loop, both.a, imp.TRUE)) == imp.While(
        loop.cond, imp.If(both.b, imp.SKIP))


def test_each_step_switches_its_own_level_s_test():
    """A nested product Σ_j A[i,j]·(Σ_k B[j,k]·x[k]) runs two SpMV steps, one over
    B's entries and one over A's, each asking whether its own level is large: each
    test is made once before its step's loops (the program is over
    unswitch_limit statements, and the first test's copies do not hold the
    second's), in both builds; with the whole-body limit alone (before session 65)
    both stayed in their row loops. The interpreter gives the product either way."""
    B_csr = ep.tensor("B", 2, format="csr")
    nested = ep.sum(j, A_csr[i, j] * ep.sum(k, B_csr[j, k] * x_vec[k]))
    kern = ep.compile(nested, tuning=INTEL)     # (no range test of run_mean_below)
    counts = {imp.Load(f"{t}_pos1", imp.Var(f"{t}_dim0")) for t in "AB"}
    for checked in (True, False):
        prog = kern.compiled.build(checked)
        assert sum(1 for _ in imp.statements(prog.body)) > DEFAULT.unswitch_limit
        loops = [s for s in imp.statements(prog.body) if isinstance(s, imp.While)]
        assert loops and all(not size_switch.size_tests(loop, counts) for loop in loops)
    assert "if (524288 <= B_pos1[B_dim0]) {" in kern.c_source and LARGE in kern.c_source
    rng = np.random.default_rng(5)
    A, B, x = random_csr(30, 20, 200, 1), random_csr(20, 25, 150, 2), rng.random(25)
    sr = ep.semirings.get("real")
    for tuning in (DEFAULT.with_(run_min_entries=0), DEFAULT.with_(size_switch=False)):
        final, _, _ = on_interpreter(nested, sr, None, {"A": A, "B": B, "x": x}, tuning=tuning)
        np.testing.assert_allclose(final["out"], A @ (B @ x), rtol=1e-12)

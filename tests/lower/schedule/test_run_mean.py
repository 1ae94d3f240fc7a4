"""Tuning.run_mean_below (etchpy.host_facts; lower.schedule.prefetch.large_runs):
consecutive rows prefetch their arrays only where the level holds run_min_entries
entries or more and its rows' mean length (entries over rows) is below
run_mean_below, as one unsigned comparison that size_switch makes once before
the loops; 0 keeps the test `run_min_entries <= n` (Intel's C). Either way of the
switch gives scipy's product, and a bad coordinate is refused."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import host_facts, imp
from etchpy.lower.schedule import prefetch, size_switch
from etchpy.tuning import DEFAULT

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
N = imp.Load("A_pos1", imp.Var("A_dim0"))

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_the_table_and_the_default():
    for facts, mean in [(("GenuineIntel", 6), 0), (("AuthenticAMD", 25), 16),
                        (("AuthenticAMD", 23), 0), (("", 0), 0)]:
        assert host_facts.run_mean_below(facts) == mean
    assert DEFAULT.run_mean_below == -1
    assert host_facts.resolved(DEFAULT).run_mean_below == host_facts.run_mean_below()
    with pytest.raises(ep.InputError, match="run_mean_below"):
        host_facts.resolved(DEFAULT.with_(run_mean_below=-2))


def test_the_hosts_least_entries():
    """Tuning.run_min_entries is the host's at -1: 1.375 · 2²⁰ on AMD Zen (a matrix in
    its L3: no row prefetches), 2¹⁹ elsewhere; an explicit value wins in the test."""
    for facts, least in [(("GenuineIntel", 6), 1 << 19), (("AuthenticAMD", 25), 11 << 17),
                         (("", 0), 1 << 19)]:
        assert host_facts.run_min_entries(facts) == least
    assert DEFAULT.run_min_entries == -1
    assert host_facts.resolved(DEFAULT).run_min_entries == host_facts.run_min_entries()
    for least in (0, 64, 1 << 22):
        test = prefetch.large_runs(N, DEFAULT.with_(run_mean_below=0, run_min_entries=least))
        assert test == imp.Bin("<=", imp.Const(least), N)


def test_the_test_is_one_unsigned_comparison_made_once():
    """With a mean, the size test bounds n on both sides in one comparison that
    size_switch takes for a size test (made once, outside every loop); with 0
    it is the old one."""
    tuning = DEFAULT.with_(run_mean_below=16, prefetch_values=0, run_min_entries=1 << 19,
                           mesh_runs=0)   # (mesh_runs: tests/lower/schedule/test_mesh_runs.py)
    test = prefetch.large_runs(N, tuning)
    assert test.op == "<u" and size_switch.is_size_test(test, {N})
    assert prefetch.large_runs(N, tuning.with_(run_mean_below=0)) == imp.Bin(
        "<=", imp.Const(1 << 19), N)
    kern = ep.compile(SPMV, tuning=tuning)
    prog = kern.compiled.build(True)
    assert [s.cond for s in imp.statements(prog.body) if isinstance(s, imp.If)
            and test in size_switch.conjuncts(s.cond)] == [test]
    loops = [s for s in imp.statements(prog.body) if isinstance(s, imp.While)]
    assert loops and all(not size_switch.size_tests(loop, {N}) for loop in loops)
    src = kern.c_source
    assert "(uint64_t)(ep_max((16 * A_dim0), 524288) - 524288)" in src
    assert "524288 <= A_pos1[A_dim0]" in ep.compile(
        SPMV, tuning=tuning.with_(run_mean_below=0)).c_source


def _rows(n, per_row, seed):
    rng = np.random.default_rng(seed)
    cols = np.sort(np.stack([rng.choice(n, per_row, replace=False) for _ in range(n)]), axis=1)
    return sp.csr_array((rng.random(n * per_row), cols.ravel(), np.arange(n + 1) * per_row),
                        shape=(n, n))


@pytest.mark.parametrize("per_row", [3, 12])
def test_both_ways_agree_with_scipy_and_refuse_a_bad_coordinate(per_row):
    """run_min_entries lowered to 64 so that a small matrix is large: rows of 3
    (mean below 8: the prefetching way) and of 12 (not): scipy's product, and an
    InputError naming A for a coordinate past the dimension, in both."""
    kern = ep.compile(SPMV, tuning=DEFAULT.with_(run_min_entries=64, run_mean_below=8))
    M = _rows(200, per_row, per_row)
    v = np.random.default_rng(1).random(200)
    np.testing.assert_allclose(kern(A=M, x=v), M @ v, rtol=1e-12)
    bad = M.copy()
    bad.indices[len(bad.indices) // 2 + 1] = 10**6
    with pytest.raises(ep.InputError, match="A"):
        kern(A=bad, x=v)

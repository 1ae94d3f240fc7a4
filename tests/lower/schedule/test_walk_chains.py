"""Walk sums in chains (lower/schedule/walk_chains.py; Tuning.walk_chains,
walk_chain_count): the checked build's long rows, tested before their block runs
(checks_first.long_rows), add their terms into k accumulators, and no other walk
does; where that arm holds, the lanes pick is 0. It answers as numpy (and as the
kernel with one chain) for real, real32, min_plus and complex SpMVs over ragged
rows of 20 to 33 entries and a few of 0 to 3 (every remainder), k = 2, 3 and 4,
from a scipy input (the checked build) and an ep.Tensor (the unchecked one), with
index names the C uses; a coordinate out of range inside a chained stretch,
given or written in place between calls, is refused; loops it must not take are
left alone (proofs_notes/walk_chains.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import host_facts, imp
from etchpy.lower.schedule import walk_chains
from tuned import INTEL_FACTS

pytestmark = pytest.mark.usefixtures("shared_cache")
TEXT = "y[row] = A[row, n] * x[n]"
FIRST = ep.Tuning(**{**INTEL_FACTS, "check_first_from": 20, "walk_chain_count": 2})
OFF = FIRST.with_(walk_chains=False)


def _chains(stmt) -> int:
    return sum(1 for s in imp.statements(stmt) if isinstance(s, imp.Decl) and "_chain" in s.name)


def _split(prog) -> list:
    """The split Ifs between two row loops (not the near pick's, which has no else)."""
    return [s for s in imp.statements(prog.body)
            if isinstance(s, imp.If) and s.split and s.else_ is not None]


def _ragged(dtype, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.r_[np.tile(np.arange(20, 34), 3), 0, 0, 1, 2, 3]   # mean >= 20: the long arm
    rng.shuffle(lengths)
    cols = [np.sort(rng.choice(40, k, replace=False)) for k in lengths]
    indptr = np.r_[0, np.cumsum(lengths)]
    vals = rng.random(indptr[-1]) + (1j * rng.random(indptr[-1]) if dtype == complex else 0)
    return sp.csr_array((vals.astype(dtype), np.concatenate(cols).astype(np.int32), indptr),
                        shape=(len(lengths), 40))


def test_the_long_arm_alone_takes_the_chains():
    kern = ep.compile(TEXT, formats={"A": "csr"}, tuning=FIRST)
    checked = kern.compiled.build(True)
    arms = _split(checked)
    assert arms and all(_chains(s.then) > 0 and _chains(s.else_) == 0 for s in arms)
    assert _chains(kern.compiled.build(False)) == 0           # an ep.Tensor's build: one chain
    three = ep.compile(TEXT, formats={"A": "csr"}, tuning=FIRST.with_(walk_chain_count=3))
    assert _chains(three.compiled.build(True)) == 2 * _chains(checked)
    for t in (OFF, FIRST.with_(walk_chain_count=1), FIRST.with_(check_first_from=0), "noopt"):
        assert _chains(ep.compile(TEXT, formats={"A": "csr"}, tuning=t).compiled.build(True)) == 0
    integer = ep.compile(TEXT, formats={"A": "csr"}, tuning=FIRST, semiring="integer")
    assert _chains(integer.compiled.build(True)) == 0


def test_the_lanes_are_not_picked_where_long_rows_chain():
    """The lanes pick, declared under a new name, is 0 where the long rows' test
    holds and a near pick (ep_near_pick: the rows' gathers share cache lines, a
    mesh's) says so (a pick only steers); the near pick is made in the long
    rows' function alone, the other keeps the C of before."""
    src = ep.compile(TEXT, formats={"A": "csr"}, tuning=FIRST).source("int32_t").c
    zero, one = (src[src.index(f"int etchpy_kernel_arm{k}("):] for k in (0, 1))
    zero = zero[:zero.index("\n}\n")]
    assert "ep_near_pick(A_pos1, A_crd1, A_dim0, 8, 2);" in one[:one.index("\n}\n")]
    assert "ep_near_pick(A_pos1, A_crd1" not in zero
    assert src.count("int64_t A_gather = (A_near ? 0 : A_gather_1);") == 2
    off = ep.compile(TEXT, formats={"A": "csr"}, tuning=OFF).source("int32_t").c
    assert "A_gather_1" not in off and "ep_near_pick" not in off


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("sr,dtype", [("real", np.float64), ("real32", np.float32),
                                      ("min_plus", np.float64), ("complex", complex)])
def test_chained_rows_answer_as_numpy_and_one_chain(sr, dtype, k):
    A = _ragged(dtype)
    x = np.random.default_rng(1).random(40).astype(dtype)
    on, off = (ep.compile(TEXT, formats={"A": "csr"}, semiring=sr, tuning=t)
               for t in (FIRST.with_(walk_chain_count=k), OFF))
    if sr == "min_plus":
        want = np.array([min((A.data[q] + x[A.indices[q]]
                              for q in range(A.indptr[r], A.indptr[r + 1])), default=np.inf)
                         for r in range(A.shape[0])])
    else:
        want = A @ x
    for given in (A, ep.Tensor.from_scipy(A, "csr"), A):   # checked, unchecked, checked again
        got = on(A=given, x=x)
        if sr == "min_plus":
            assert np.array_equal(got, want) and np.array_equal(got, off(A=given, x=x))
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("bad", [40, -1, 2**31 - 1])
def test_a_coordinate_out_of_range_in_a_chain_is_refused(bad):
    A = _ragged(np.float64, seed=3)
    x = np.ones(40)
    kern = ep.compile(TEXT, formats={"A": "csr"}, tuning=FIRST)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x)
    long = int(np.argmax(np.diff(A.indptr)))
    wrong = A.copy()
    wrong.indices[A.indptr[long] + 1] = bad            # the second of a chained pair
    with pytest.raises(ep.InputError, match="'A'"):
        kern(A=wrong, x=x)
    A.indices[A.indptr[long] + 2] = bad                # written in place between calls
    with pytest.raises(ep.InputError, match="'A'"):
        kern(A=A, x=x)


def test_the_hosts_count():
    assert host_facts.walk_chain_count(("AuthenticAMD", 25)) == 2
    assert host_facts.walk_chain_count(("GenuineIntel", 6)) == 1
    with pytest.raises(ep.InputError, match="walk_chain_count"):
        host_facts.resolved(ep.Tuning(walk_chain_count=-2))


def _loop(*body, cond=None):
    q, e = imp.Var("q"), imp.Var("e")
    return imp.While(cond or imp.Bin("<", q, e), imp.seq(*body, imp.Assign("q", imp.add(q, imp.ONE))))


def test_loops_it_must_not_take_are_left_alone():
    t = imp.Load("v", imp.Var("q"))
    add = imp.Assign("acc", imp.Ring("add", imp.Var("acc"), t))
    assert walk_chains.summed_walk(_loop(add)) is not None
    refused = [
        _loop(add, imp.Assign("other", imp.Var("acc"))),            # acc read elsewhere
        _loop(add, imp.Assign("q", imp.add(imp.Var("q"), imp.ONE))),  # q stepped twice
        _loop(add, imp.Assign("e", imp.Var("q"))),                   # the end changed
        _loop(imp.If(imp.Var("c"), add)),                            # not straight-line
        _loop(add, imp.Assign("bad", imp.add(imp.Var("bad"), imp.ONE))),   # a clamped walk's count
        _loop(add, cond=imp.Bin("<=", imp.Var("q"), imp.Var("e"))),
    ]
    assert all(walk_chains.summed_walk(loop) is None for loop in refused)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_a_chained_walk_runs_as_the_walk_on_the_interpreter(k):
    """chained() of a walk summing v[q] from q = s to e, run on the Imp
    interpreter for every length 0 .. 12: the loop's sum, each term once."""
    names = imp.Names()
    body = imp.Assign("acc", imp.Ring("add", imp.Var("acc"), imp.Load("v", imp.Var("q"))))
    loop = _loop(body)
    got = walk_chains.chained(loop, k, names, imp.Const(0.0, "value"))
    assert got is not None
    v = np.arange(1.0, 40.0) ** 2
    for start in (0, 3):
        for length in range(13):
            m = imp.Machine(ep.semirings.get("real"),
                            {"v": v, "q": start, "e": start + length, "acc": 0.5})
            m.exec(got)
            assert m.env["acc"] == 0.5 + v[start:start + length].sum()
            assert m.env["q"] == start + length

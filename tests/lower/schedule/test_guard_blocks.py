"""Entries listed in blocks, then walked (lower.schedule.guard_blocks,
Tuning.guard_blocks): orders whose date lies in a range and whose customer's
segment passes a filter, then their lines (TPC-H Q3's shape, small), run as
blocks of listed orders; the answers equal numpy's for random tables with
the pass on (blocks of 3, the listed lines prefetched 2 on; one C build: the
same loops with the pass off are the kernels of test_guard_prefetch, and at
the TPC-H fixture test_tpch_queries and test_tpch_tables check Q3, Q4 and Q19,
where it fires, against DuckDB's rows). The split refuses a loop where an
entry whose tests fail would change the loop's state (a store or a count
before the tests not taken back)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp, tuning
from etchpy.lower.schedule import guard_blocks

pytestmark = pytest.mark.usefixtures("shared_cache")

o, c, d, g, ln = ep.indices("o c d g ln")
N, NC = 40, 9


def q3_tables(rng):
    keys = {"o": ep.Keys(np.arange(N), name="o"), "c": ep.Keys(np.arange(NC), name="c"),
            "d": ep.Keys(np.arange(10), name="d")}
    cust, date, seg = rng.integers(0, NC, N), rng.integers(0, 10, N), rng.integers(0, 3, NC)
    orders = ep.table({"o": np.arange(N), "c": cust, "d": date}, ["o"], keys=["c", "d"],
                      coding=keys, name="O")
    customers = ep.table({"c": np.arange(NC), "g": seg}, ["c"], keys=["g"],
                         coding={"c": keys["c"]}, name="C")
    per = rng.integers(0, 4, N)                       # some orders have no line
    lo = np.repeat(np.arange(N), per)
    v = rng.random(len(lo))
    lines = ep.table({"o": lo, "ln": np.concatenate([np.arange(k) for k in per]), "v": v},
                     ["o", "ln"], values=["v"], coding={"o": keys["o"]}, name="L")
    return orders, customers, lines, (cust, date, seg, lo, v)


def _kernels(orders, customers, lines):
    S = ep.tensor("S", 1, "csf")
    e = ep.sum((c, d, g, ln), orders.var()[o, c, d] * ep.between(d, "dlo", "dhi")
               * customers.var()[c, g] * S[g] * lines.var("v")[o, ln])
    knobs = {"on": dict(guard_block=3, guard_blocks_ahead=2), "off": dict(guard_blocks=False)}
    return {k: ep.compile(e, optimize=False, order=["o", "c", "d", "g", "ln"], output="csf",
                          tuning=tuning.DEFAULT.with_(call_binder=False, **kw))
            for k, kw in knobs.items()}


@pytest.fixture(scope="module")
def kernels():
    return _kernels(*q3_tables(np.random.default_rng(0))[:3])


def test_the_passing_orders_are_listed_in_blocks_and_the_answers_stay(kernels):
    assert "o_c_list[3]" in kernels["on"].c_source and "_list[" not in kernels["off"].c_source
    assert "EP_PREFETCH(&L_vals[L_pos1[o_c_list[(o_c_t + 2)]]])" in kernels["on"].c_source
    Sd = np.array([0.0, 2.0, -1.0])
    for seed in range(4):                       # random tables, one build of each kernel
        orders, customers, lines, (cust, date, seg, lo, v) = q3_tables(np.random.default_rng(seed))
        want = np.zeros(N)
        np.add.at(want, lo, (Sd[seg[cust]] * ((date >= 3) & (date < 7)))[lo] * v)
        args = dict(O=orders.tensor(), C=customers.tensor(), L=lines.tensor("v"),
                    S=ep.Tensor.from_dense(Sd, "csf"), dlo=3, dhi=7)
        assert np.allclose(kernels["on"](**args).to_dense(), want, rtol=1e-12)


def _loop(prog):
    return next(s for s in imp.statements(prog.body)
                if isinstance(s, imp.While) and s.cond == imp.lt(imp.Var("o_c"), imp.Var("dim_o")))


def _with(prog, loop, stmts):
    """prog with `stmts` put at the top of the order loop's body."""
    new = imp.While(loop.cond, imp.seq(*stmts, loop.body), loop.walk)
    return prog.__class__(**{**vars(prog), "body": imp.replaced(prog.body, loop, new)})


def test_the_split_is_refused_where_a_failing_entry_would_change_anything(kernels):
    """The off kernel's program splits as is; with a store into the output's
    values, or a count moved, before the tests (neither taken back), it does not."""
    prog = kernels["off"].program
    loop = _loop(prog)
    t = tuning.DEFAULT.with_(guard_block=3)
    split = lambda p: any(isinstance(s, imp.LocalArray) for s in imp.statements(
        guard_blocks.run(p, t).body))
    assert split(prog)
    count = next(s.name for s in imp.statements(loop.body) if isinstance(s, imp.Assign)
                 and s.name.startswith("out_count"))
    for bad in ([imp.Store("out_vals", imp.Var(count), imp.Const(1.0, "value"))],
                [imp.Assign(count, imp.add(imp.Var(count), imp.ONE))]):
        assert not split(_with(prog, loop, bad)), bad
    assert split(_with(prog, loop, [imp.Decl("mine", "index", imp.Var("o_c"))]))


def test_lines_whose_date_passes_are_listed_before_their_parts_row():
    """TPC-H Q14's shape: each line's date a range test (a singleton level), then
    its part's row located (`q = P[X]; e = P[X] + 1`, Tuning.guard_located): the
    passing lines are listed in blocks, the part rows of the line 2 on
    prefetched; the answers equal numpy's; with guard_located off the loop is
    not split."""
    l, p, t = ep.indices("l p t")
    rng = np.random.default_rng(1)
    M, NP = 50, 7
    part, date, v = rng.integers(0, NP, M), rng.integers(0, 10, M), rng.random(M)
    types = rng.integers(0, 3, NP)
    keys = {"p": ep.Keys(np.arange(NP), name="p"), "d": ep.Keys(np.arange(10), name="d")}
    lines = ep.table({"l": np.arange(M), "p": part, "d": date, "v": v}, ["l"], keys=["p", "d"],
                     values=["v"], coding=keys, name="L")
    parts = ep.table({"p": np.arange(NP), "t": types}, ["p"], keys=["t"],
                     coding={"p": keys["p"]}, name="P")
    e = ep.sum((l, p, d), lines.var("v")[l, p, d] * ep.between(d, "dlo", "dhi")
               * parts.var()[p, t])
    kern = {k: ep.compile(e, optimize=False, order=["l", "p", "d", "t"],
                          tuning=tuning.DEFAULT.with_(call_binder=False, guard_block=3,
                                                      guard_blocks_ahead=2, guard_located=on))
            for k, on in (("on", True), ("off", False))}
    assert "l_c_list[3]" in kern["on"].c_source and "_list[" not in kern["off"].c_source
    assert "EP_PREFETCH(&P_crd1[L_crd1[l_c_list[(l_c_t + 2)]]])" in kern["on"].c_source
    want = np.bincount(types[part], weights=v * ((date >= 3) & (date < 7)), minlength=3)
    got = kern["on"](L=lines.tensor("v"), P=parts.tensor(), dlo=3, dhi=7)     # (one C build)
    assert np.allclose(got, want, rtol=1e-12)

"""Guarded fibres prefetched ahead (lower.schedule.guard_prefetch,
Tuning.prefetch_guarded): a walk over orders whose lines are read only where the
order's customer passes a sparse filter (TPC-H Q7's shape, small) prefetches
the lines of the order d on where its filter passes; the kernel's answer, built
in C (d = 3: the last orders' look-ahead past the loop's end is skipped), equals
numpy's (the loops with the pass switched off are those without its if)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import tuning
from tests.lower.schedule.test_guard_blocks import q3_tables

pytestmark = pytest.mark.usefixtures("shared_cache")

o, c, ln = ep.indices("o c ln")
_DEFAULT = tuning.DEFAULT.with_(guard_blocks=False)      # (the loops not split: test_guard_blocks)
_AHEAD = "EP_PREFETCH(&L_vals[L_pos1[(o_c + 64)]])"


def _tables(rng, n=40, customers=9):
    okeys = ep.Keys(np.arange(n), name="o")
    cust = rng.integers(0, customers, n)
    orders = ep.table({"o": np.arange(n), "c": cust}, ["o"], keys=["c"],
                      coding={"o": okeys}, name="O")
    per = rng.integers(0, 4, n)                       # some orders have no line
    lo = np.repeat(np.arange(n), per)
    lnum = np.concatenate([np.arange(k) for k in per])
    v = rng.random(len(lo))
    lines = ep.table({"o": lo, "ln": lnum, "v": v}, ["o", "ln"], values=["v"],
                     coding={"o": okeys}, name="L")
    return orders, lines, cust, lo, v


def _kernel(orders, lines, t):
    F = ep.tensor("F", 1, "csf")
    e = ep.sum((o, c, ln), F[c] * orders.var()[o, c] * lines.var("v")[o, ln])
    return ep.compile(e, optimize=False, order=["o", "c", "ln"], tuning=t)


def test_the_lines_of_an_order_d_on_are_prefetched_where_its_filter_passes():
    rng = np.random.default_rng(0)
    orders, lines, cust, lo, v = _tables(rng)
    Fd = np.zeros(9)
    Fd[[2, 5]] = [1.5, -2.0]
    F = ep.Tensor.from_dense(Fd, "csf")
    want = float(np.sum(Fd[cust[lo]] * v))
    off = _kernel(orders, lines, _DEFAULT.with_(prefetch_guarded=0))
    assert "EP_PREFETCH(&" not in off.c_source
    assert _AHEAD not in off.c_source
    assert _AHEAD in _kernel(orders, lines, _DEFAULT).c_source     # d = 64: C only
    on = _kernel(orders, lines, _DEFAULT.with_(prefetch_guarded=3, call_binder=False))
    assert "(o_c + 3) < dim_o" in on.c_source and "EP_PREFETCH(&L_vals[L_pos1[(o_c + 3)]])" \
        in on.c_source, on.c_source
    args = dict(F=F, O=orders.tensor(), L=lines.tensor("v"))
    assert on(**args) == pytest.approx(want, rel=1e-12)      # one C build (off's: the same
                                                             # kernel without the if)


def test_no_prefetch_without_a_guard_or_with_prefetch_off():
    rng = np.random.default_rng(1)
    orders, lines, *_ = _tables(rng)
    e = ep.sum((o, c, ln), orders.var()[o, c] * lines.var("v")[o, ln])
    k = ep.compile(e, optimize=False, order=["o", "c", "ln"])
    assert _AHEAD not in k.c_source
    noprefetch = _kernel(orders, lines, _DEFAULT.with_(prefetch=False))
    assert _AHEAD not in noprefetch.c_source


d = ep.indices("d")[0]
g = ep.indices("g")[0]
_FAR = "EP_PREFETCH(&C_crd1[O_crd1[(o_c + 3)]])"


def test_a_located_read_under_a_range_test_is_prefetched_ahead_unconditionally():
    """Orders whose date (a one-position level's seek and stop) lies in a range,
    their customer's segment read at the order's customer (TPC-H Q3's shape):
    with prefetch_guard_reads the segment of the order 3 on is prefetched with
    no test (a position every order walks); the lines are not (a range test
    evaluated ahead costs more than it saves). With it off the C is the same but for
    that prefetch; the answer equals numpy's."""
    orders, customers, lines, (cust, date, seg, lo, v) = q3_tables(np.random.default_rng(2))
    S = ep.tensor("S", 1, "csf")
    e = ep.sum((o, c, d, g, ln), orders.var()[o, c, d] * ep.between(d, "dlo", "dhi")
               * customers.var()[c, g] * S[g] * lines.var("v")[o, ln])
    Sd = np.array([0.0, 2.0, -1.0])
    want = float(np.sum((Sd[seg[cust]] * ((date >= 3) & (date < 7)))[lo] * v))
    args = dict(O=orders.tensor(), C=customers.tensor(), L=lines.tensor("v"),
                S=ep.Tensor.from_dense(Sd, "csf"), dlo=3, dhi=7)
    kern = {far: ep.compile(e, optimize=False, order=["o", "c", "d", "g", "ln"],
                            tuning=_DEFAULT.with_(prefetch_guard_reads=far,
                                                        call_binder=False)) for far in (3, 0)}
    block = "        if ((o_c + 3) < dim_o) {\n            %s;\n        }\n" % _FAR
    assert block in kern[3].c_source and "EP_PREFETCH(&L_" not in kern[3].c_source
    body = {far: k.c_source[k.c_source.index(" */"):] for far, k in kern.items()}
    assert body[0] == body[3].replace(block, "")     # off: the same loops (tuning line aside)
    assert kern[3](**args) == pytest.approx(want, rel=1e-12)         # one C build


def test_no_read_ahead_in_a_loop_over_one_fibre():
    """Lines whose ship date (a singleton level under the line) lies in a range,
    each line's part type read at its part (TPC-H Q14's shape): the loop under
    the range test is a loop over one order's lines (its end read from a pos
    array), a few entries, so no read 3 entries on is prefetched there (nor in
    the one-position loops below it); the C is the same as with the pass off."""
    rng = np.random.default_rng(3)
    per = rng.integers(0, 4, 20)
    lo = np.repeat(np.arange(20), per)
    cols = {"o": lo, "ln": np.concatenate([np.arange(k) for k in per]),
            "p": rng.integers(0, 6, len(lo)), "sd": rng.integers(0, 9, len(lo)),
            "v": rng.random(len(lo))}
    pk = ep.Keys(np.arange(6), name="p")
    lines = ep.table(cols, ["o", "ln"], keys=["p", "sd"], values=["v"], coding={"p": pk},
                     name="L")
    parts = ep.table({"p": np.arange(6), "t": rng.integers(0, 3, 6)}, ["p"], keys=["t"],
                     coding={"p": pk}, name="P")
    ln_, p, sd, t = ep.indices("ln p sd t")
    e = ep.sum((o, ln_, p, sd), lines.var("v")[o, ln_, p, sd] * ep.between(sd, "lo", "hi")
               * parts.var()[p, t])
    src = {far: ep.compile(e, optimize=False, order=["o", "ln", "p", "sd", "t"],
                           tuning=_DEFAULT.with_(prefetch_guard_reads=far)).c_source
           for far in (3, 0)}
    assert "EP_PREFETCH(&P_" not in src[3]
    strip = lambda s: s[s.index(" */"):]
    assert strip(src[3]) == strip(src[0])

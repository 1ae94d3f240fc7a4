"""A kernel's last call kept when it reads value predicates (runtime.kept_rows,
runtime.last_call): the same inputs again reuse the call's binding, read values
written in place, work out each call's bounds (a new slots array when they
differ, the kept one untouched), refuse a NaN bound as binding does, and are not
kept when a column is an alignment's gathered copy or under
`Tuning(keep_last_call=False)`; a one-walk sum of products (expr.sums) keeps
its fused kernel's call."""
import threading

import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import InputError

o, n, k = ep.indices("o n k")


def lines():
    t = {"o": np.array([0, 0, 1, 2, 2]), "n": np.array([0, 1, 0, 0, 1]),
         "c": np.array([10.0, 12.0, 9.0, 20.0, 3.0]),
         "r": np.array([11.0, 12.0, 14.0, 18.0, 40.0])}
    return ep.relation(t, ["o", "n"], values=["c", "r"], name="L")


def late_count(c, r, days):
    return [int(sum(r[m] > c[m] + days for m in rows)) for rows in ([0, 1], [2], [3, 4])]


@pytest.mark.parametrize("tuning", [None, ep.Tuning(keep_last_call=False)])
def test_a_row_predicates_call_is_kept_and_reads_values_and_bounds_anew(tuning):
    L = lines()
    C, R = L["c"].var("C")[o, n], L["r"].var("R")[o, n]
    kern = ep.compile(ep.sum(n, R > C + "days"), tuning=tuning)
    cols = {"C": L["c"].tensor, "R": L["r"].tensor}
    c, r = L["c"].tensor.vals, L["r"].tensor.vals
    for days in (0, 0, 1.5, -2, 0):
        assert kern(**cols, days=days).tolist() == late_count(c, r, days)
    r[0] = 0.0                                      # written in place
    assert kern(**cols, days=0).tolist() == late_count(c, r, 0)
    with pytest.raises(InputError, match="NaN"):
        kern(**cols, days=np.nan)
    assert kern(**cols, days=0).tolist() == late_count(c, r, 0)
    assert kern._kept.hits == (0 if tuning else 7)     # every call after the first


def test_columns_of_different_structures_are_not_kept():
    """Aligned columns are gathered copies: a call is bound afresh, so values
    written in place are read."""
    L = lines()
    other = ep.relation({"o": np.array([0, 2]), "n": np.array([1, 1]),
                         "r": np.array([5.0, 50.0])}, ["o", "n"], values="r",
                        coding={"o": L["c"].keys[0], "n": L["c"].keys[1]}, name="M")
    C, M = L["c"].var("C")[o, n], other.var("M")[o, n]
    kern = ep.compile(ep.sum(n, M > C + "days"))
    ins = {"C": L["c"].tensor, "M": other.tensor}
    assert kern(**ins, days=0).tolist() == [0.0, 0.0, 1.0]
    other.tensor.vals[0] = 100.0
    assert kern(**ins, days=0).tolist() == [1.0, 0.0, 1.0]
    assert kern._kept.hits == 0


def test_threads_with_different_bounds_get_their_own():
    L = lines()
    C, R = L["c"].var("C")[o, n], L["r"].var("R")[o, n]
    kern = ep.compile(ep.sum(n, R > C + "days"))
    cols = {"C": L["c"].tensor, "R": L["r"].tensor}
    c, r = L["c"].tensor.vals, L["r"].tensor.vals
    kern(**cols, days=0)
    wrong = []

    def run(days):
        for _ in range(200):
            if kern(**cols, days=days).tolist() != late_count(c, r, days):
                wrong.append(days)
    threads = [threading.Thread(target=run, args=(d,)) for d in (-3, 0, 1.5, 30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_a_one_walk_sum_keeps_its_fused_kernels_call():
    L = ep.relation({"o": np.array([0, 0, 1]), "n": np.array([0, 1, 0]),
                     "a": np.array([1.0, 2.0, 4.0]), "b": np.array([3.0, 1.0, 5.0])},
                    ["o", "n"], values=["a", "b"], name="L")
    A, B = L["a"].var("A")[o, n], L["b"].var("B")[o, n]
    E0, E1 = ep.tensor("E0", 1)[k], ep.tensor("E1", 1)[k]
    kern = ep.compile(ep.sum(n, A * E0 + (B < A + "t") * B * E1))
    ins = {"A": L["a"].tensor, "B": L["b"].tensor, "E0": np.eye(2)[0], "E1": np.eye(2)[1]}
    for t in (0, 0, 2, 0):
        want = [[3.0, sum(b for a, b in ((1, 3), (2, 1)) if b < a + t)],
                [4.0, 5.0 if 5 < 4 + t else 0.0]]
        assert kern(**ins, t=t).tolist() == want
    fused = kern._walk_memo[2][0]                   # (runtime.shared)
    assert fused is not None and fused._kept.hits == 3

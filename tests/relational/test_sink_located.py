"""A located table's one-child levels read last (expr.sink, Tuning.sink_located):
orders' dependent key (pr, stored singleton under o) reached from lines walked
by another key first moves below the lines' own level; a level another factor
reads, or a table walked first, stays where it was written. (The kernel's
answer with the moved order: Q12 on one load, tests/end_to_end/test_tpch_tables.py.)"""
import numpy as np

import etchpy as ep
from etchpy.expr import sink

r, o, x, pr = ep.indices("r o x pr")


def _tables(seed):
    rng = np.random.default_rng(seed)
    okeys = ep.Keys(np.arange(12), name="o")
    orders = ep.table({"o": np.arange(12), "pr": rng.integers(0, 3, 12)}, ["o"],
                      keys=["pr"], coding={"o": okeys}, name="O")
    cells = rng.choice(5 * 12 * 3, 40, replace=False)
    cols = {"r": cells // 36, "o": cells // 3 % 12, "x": cells % 3,
            "a": rng.integers(0, 5, 40).astype(float), "b": rng.integers(0, 5, 40).astype(float)}
    lines = ep.table(cols, ["r", "o", "x"], values=["a", "b"], coding={"o": okeys}, name="L")
    return orders, lines


def _expr(orders, lines):
    A, B = lines.var("a", name="A"), lines.var("b", name="B")
    return ep.sum((r, o, x), (A[r, o, x] < B[r, o, x]) * orders.var()[o, pr])


def test_only_a_located_tables_unshared_levels_move():
    orders, lines = _tables(3)
    e = _expr(orders, lines)
    assert sink.sunk(e, ("r", "o", "pr", "x"), (pr,), True) == ("r", "o", "x", "pr")
    assert sink.sunk(e, ("r", "o", "pr", "x"), (pr,), False) == ("r", "o", "pr", "x")
    assert sink.sunk(e, ("r", "o", "x", "pr"), (pr,), True) == ("r", "o", "x", "pr")
    assert sink.sunk(e, None, (pr,), True) is None
    W = ep.tensor("W", 1, "csf")                        # another factor reads pr
    assert sink.sunk(e * W[pr], ("r", "o", "pr", "x"), (pr,), True) == ("r", "o", "pr", "x")
    Ow = orders.var()                                   # the orders walked first
    walked = ep.sum((o, x), Ow[o, pr] * lines.var("a", name="A")[r, o, x])
    assert sink.sunk(walked, ("o", "pr", "r", "x"), (pr, r), True) == ("o", "pr", "r", "x")

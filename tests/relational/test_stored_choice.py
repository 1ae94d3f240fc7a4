"""The planner among a table's stored orders (plan.convert, Stats.stored): a query
compiled without a loop order, which cannot walk the table in the order it
declares, reads it in a stored order when one fits (its structure made at
load, priced as one check of the values: runtime.planned keeps the gathered
values while the table's are unchanged), and `explain()` says which; the
answer stays right when values are written in place between calls."""
import numpy as np

import etchpy as ep

LINES = {"order": np.array([1, 1, 2, 3, 3, 4, 5, 5]), "line": np.array([1, 2, 1, 1, 2, 1, 1, 2]),
         "part": np.array([3, 1, 1, 2, 3, 2, 1, 3]),
         "rev": np.array([10.0, 20.0, 5.0, 7.0, 1.0, 2.0, 4.0, 8.0])}
BY_LINE = ("line", "part", "order")
o, ln, p = ep.indices("o ln p")


def _want(Q, rev):
    """Σ rev over the lines whose (part, order) codes pass Q > 1.5."""
    return sum(r for a, b, r in zip(LINES["part"] - 1, LINES["order"] - 1, rev)
               if Q.get((a, b), 0.0) > 1.5)


def test_the_planner_reads_the_stored_order_that_fits():
    Lt = ep.table(LINES, ["order", "line"], keys=["part"], values=["rev"], name="Lt")
    Lt.add_order(BY_LINE)
    # Q's value comparison is read in Q's order (part, then order): no loop order
    # walks Lt as stored, and of the orders that fit Q, (line, part, order) is stored
    Qv = ep.tensor("Q", 2, "csr")
    kern = ep.compile(ep.sum((o, ln, p), Lt.var("rev")[o, ln, p] * (Qv[p, o] > 1.5)))
    pairs = {(0, 0): 2.0, (2, 0): 3.0, (1, 2): 2.0, (2, 4): 1.0, (0, 4): 5.0}
    q = ep.Tensor.from_coords(np.array(list(pairs)).T, list(pairs.values()), (3, 5), "csr")
    assert kern(Lt=Lt.tensor("rev"), Q=q) == _want(pairs, LINES["rev"])
    text = Lt.explain(kern)
    assert "the planner reads Lt in the order added ('line', 'part', 'order')" in text, text
    assert "its structure is made" in text
    rev = Lt.tensor("rev").vals
    for k in range(3):                   # written in place: the kept values gathered again
        rev[k] += 100.0
        assert kern(Lt=Lt.tensor("rev"), Q=q) == _want(pairs, rev.copy())

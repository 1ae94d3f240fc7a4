"""Table.explain(kernel): the stored order a compiled query reads a table in
(as declared, or the planner's conversion to a stored order), and the order it
would want when the table stores none that fits (relational.orders)."""
import numpy as np

import etchpy as ep

LINES = {"order": np.array([1, 1, 2, 3, 3]), "line": np.array([1, 2, 1, 1, 2]),
         "part": np.array([3, 1, 1, 2, 3]), "rev": np.array([10.0, 20.0, 5.0, 7.0, 1.0])}


def _table():
    return ep.table(LINES, ["order", "line"], keys=["part"], values=["rev"],
                    secondary=["part", "order", "line"], name="Lt")


def test_explain_names_the_order_read_and_the_one_wanted():
    Lt = _table()                     # (as declared: test_value_orders.py)
    o, ln, p = ep.indices("o ln p")
    # a value comparison of Q is read in Q's storage order (part, then order), so
    # the planner reads Lt part first: the secondary order, its structure made
    Q = ep.tensor("Q", 2, "csr")
    by_part = ep.compile(ep.sum((o, ln, p), Lt.var("rev")[o, ln, p] * (Q[p, o] > 1.5)))
    q = ep.Tensor.from_coords([[0, 2, 1], [0, 1, 2]], [1.0, 2.0, 3.0], (3, 3), "csr")
    assert by_part(Lt=Lt.tensor("rev"), Q=q) == 7.0
    text = Lt.explain(by_part)
    assert "the planner reads Lt in the secondary order ('part', 'order', 'line')" in text
    assert "its structure is made" in text
    # line first: an order the table does not store
    by_line = ep.compile(ep.sum((o, ln, p), Lt.var("rev")[o, ln, p] * (Q[ln, o] > 0.5)))
    q2 = ep.Tensor.from_coords([[0, 1], [0, 2]], [1.0, 2.0], (2, 3), "csr")
    assert by_line(Lt=Lt.tensor("rev"), Q=q2) == 11.0
    assert "add_order(['line', 'order', 'part']) would store it" in Lt.explain(by_line)
    assert "reads no input named 'X'" in Lt.explain(by_line, name="X")

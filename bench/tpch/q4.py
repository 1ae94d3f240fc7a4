"""TPC-H Q4 (order priority checking) written as docs/relational.md teaches, on the
tables loaded once (bench/tpch/tables.py `load`).

    q4(tables, date="1993-07-01")   one warm query

Orders are read in their storage order (by key); the quarter is a range of
date codes (`ep.between`, tested at each order's date); `l_commitdate <
l_receiptdate` is a comparison of two value columns of lineitem, tested in the
kernel's loop; the EXISTS is the sparse output over (order, priority) of the
count of late lines: an order is stored there iff one of its lines is late (a
sparse output keeps no key whose row the filters emptied), so the count of
orders per priority is the number of stored entries per priority code.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.queries import days


def _keys(T, column: str) -> ep.Keys:
    return T.keys[T.order.index(column)]


def kernel(tables, make, **kw):
    """The kernel of make(tables) = (expression, loop order), compiled once per load
    and kept in tables["kernels"]; with tables["tuning"] (an ep.Tuning) under it."""
    kept = tables["kernels"]
    if make not in kept:
        expr, order = make(tables)
        kept[make] = ep.compile(expr, optimize=False, order=order.split(),
                                tuning=tables.get("tuning"), **kw)
    return kept[make]


def q4_expr(tables):
    o, c, d, pr, ln, p, s, sd, m = ep.indices("o c d pr ln p s sd m")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    late = L.var("l_commitdate", name="Cd")[at] < L.var("l_receiptdate", name="Rd")[at]
    body = tables["orders"].var()[o, c, d, pr] * ep.between(d, "dlo", "dhi") * late
    return ep.sum((c, d, ln, p, s, sd, m), body), "o c d pr ln p s sd m"


def q4(tables, date: str = "1993-07-01") -> dict:
    """o_orderpriority, order_count: the orders of the quarter from `date` with a
    line received after its commit date, counted per priority."""
    O, L = tables["orders"], tables["lineitem"]
    end = str(np.datetime64(date, "M") + 3) + "-01"
    dlo, dhi = _keys(O, "o_orderdate").codes_between(days(date), days(end))
    late = kernel(tables, q4_expr, output=ep.Format(["compressed", "compressed"]))(
        O=O.tensor(), Cd=L.tensor("l_commitdate"), Rd=L.tensor("l_receiptdate"),
        dlo=dlo, dhi=dhi)
    prio = _keys(O, "o_orderpriority")
    count = np.bincount(late.to_coords()[0][1], minlength=len(prio))
    keep = count > 0
    return {"o_orderpriority": prio.values()[keep], "order_count": count[keep]}

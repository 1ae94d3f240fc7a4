"""TPC-H Q15 (top supplier) written as docs/relational.md teaches, on the tables
loaded once (bench/tpch/tables.py `load`; the supplier's columns carried at
load: bench/tpch/more.py `carried`).

    q15(tables, date="1996-01-01")

The view (revenue per supplier in the quarter) is one kernel: lineitem's
revenue summed by its supplier level, a dense output over supplier codes, the
quarter a comparison of the ship date value column (so that the walk reads
lineitem's columns once, runtime.shared). Its MAX is the output's maximum
(numpy); a second kernel keeps the suppliers whose revenue equals it
(`ep.eq(Rev[s], "top")`, the maximum a parameter), decoded with their name,
address and phone carried, by supplier key.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.queries import days


def _revenue_expr(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    ship = L.var("ship", name="Sd")[at]
    body = L.var("rev", name="Lr")[at] * ((ship >= "dlo") & (ship < "dhi"))
    return ep.sum((o, ln, p, sd, m), body), "o ln p s sd m"


def _top_expr(tables):
    (s,) = ep.indices("s")
    rev = ep.tensor("Rev", 1)[s]
    return rev * ep.eq(rev, "top"), "s"


def q15(tables, date: str = "1996-01-01") -> dict:
    """s_suppkey, s_name, s_address, s_phone, total_revenue: the suppliers with
    the largest revenue over the three months from `date`."""
    L = tables["lineitem"]
    end = str(np.datetime64(date, "M") + 3) + "-01"
    revenue = np.asarray(_kernel(tables, _revenue_expr)(
        Lr=L.tensor("rev"), Sd=L.tensor("ship"), dlo=days(date), dhi=days(end)))
    top = np.asarray(_kernel(tables, _top_expr)(Rev=revenue, top=revenue.max()))  # = MAX
    attrs = tables["supplier_more"]
    return ep.decode(top, [_keys(tables["supplier"], "s_suppkey")], columns=["s_suppkey"],
                     value="total_revenue",
                     carry={a: ("s_suppkey", attrs[a]) for a in ("s_name", "s_address",
                                                                 "s_phone")},
                     order_by="s_suppkey")

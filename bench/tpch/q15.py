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

On a load that stores lineitem ship date first (LINE_BY_SHIP, a key order
added at load: bench/tpch/one_order.py `load`), the view walks that order and
the quarter is a range of its first level's codes (`ep.between`: a search and
a stop), so only the quarter's lines are read (about a 28th of them), not
every line tested; `q15_walk` is the walk of every line (tables without it).
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.queries import days

# lineitem ship date first, then its other key columns in storage order (Q15's
# quarter a range of the first level), an order added at load
LINE_BY_SHIP = ("l_shipdate", "l_orderkey", "l_linenumber", "l_partkey", "l_suppkey",
                "l_shipmode")


def _revenue_expr(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    ship = L.var("ship", name="Sd")[at]
    body = L.var("rev", name="Lr")[at] * ((ship >= "dlo") & (ship < "dhi"))
    return ep.sum((o, ln, p, sd, m), body), "o ln p s sd m"


def _revenue_expr_by_ship(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    at = (o, ln, p, s, sd, m)
    body = (tables["lineitem"].var("rev", order=LINE_BY_SHIP, name="Lr")[at]
            * ep.between(sd, "dlo", "dhi"))
    return ep.sum((o, ln, p, sd, m), body), "sd o ln p s m"


def _top_expr(tables):
    (s,) = ep.indices("s")
    rev = ep.tensor("Rev", 1)[s]
    return rev * ep.eq(rev, "top"), "s"


def q15(tables, date: str = "1996-01-01") -> dict:
    """s_suppkey, s_name, s_address, s_phone, total_revenue: the suppliers with
    the largest revenue over the three months from `date` (on lineitem's ship
    date order when the load made it, else as q15_walk)."""
    return _top(tables, view(tables, date))


def q15_walk(tables, date: str = "1996-01-01") -> dict:
    """Q15 on lineitem's storage order: every line's ship date tested."""
    return _top(tables, view(tables, date, walk=True))


def view(tables, date: str = "1996-01-01", walk: bool = False) -> np.ndarray:
    """The revenue of each supplier code over the quarter from `date`: on
    lineitem's ship date order (a range of its first level) when the load made
    it and not `walk`, else every line's ship date tested."""
    L = tables["lineitem"]
    end = str(np.datetime64(date, "M") + 3) + "-01"
    if walk or LINE_BY_SHIP not in L.orders:
        return np.asarray(_kernel(tables, _revenue_expr)(
            Lr=L.tensor("rev"), Sd=L.tensor("ship"), dlo=days(date), dhi=days(end)))
    dlo, dhi = _keys(L, "l_shipdate").codes_between(days(date), days(end))
    return np.asarray(_kernel(tables, _revenue_expr_by_ship)(
        Lr=L.tensor("rev", order=LINE_BY_SHIP), dlo=dlo, dhi=dhi))


def _top(tables, revenue: np.ndarray) -> dict:
    """The view's MAX, the suppliers that reach it, decoded with their columns."""
    top = np.asarray(_kernel(tables, _top_expr)(Rev=revenue, top=revenue.max()))  # = MAX
    attrs = tables["supplier_more"]
    return ep.decode(top, [_keys(tables["supplier"], "s_suppkey")], columns=["s_suppkey"],
                     value="total_revenue",
                     carry={a: ("s_suppkey", attrs[a]) for a in ("s_name", "s_address",
                                                                 "s_phone")},
                     order_by="s_suppkey")

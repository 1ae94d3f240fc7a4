"""TPC-H Q21 (suppliers who kept orders waiting) written as docs/relational.md
teaches, on the tables loaded once (bench/tpch/tables.py `load`).

    q21(tables, nation="SAUDI ARABIA", limit=100)   one warm query

A line l1 (late: receipt after commit, its supplier s1 of the nation, its
order's status 'F') counts when its order has a line of another supplier
(EXISTS l2, l2's supplier <> s1) and no late line of another supplier (NOT
EXISTS l3). Since s1 is one of the order's suppliers (and, l1 being late, one
of its late lines' suppliers), those are tests of the order alone: its lines'
suppliers are not all one (EXISTS), its late lines' suppliers are all one
(NOT EXISTS). A set of codes is all one value when n * sum(v^2) = sum(v)^2
(its variance is 0; exact in float64 for supplier codes and an order's few
lines): a first query sums, per order, the line count, the supplier's code
and its square (lineitem value columns made at load), over all lines and
over the late ones: three sums at one more index k, each a walk of lineitem;
numpy makes the two spreads per order; the second query counts the late
lines of the nation's suppliers (a sparse filter over supplier codes, made
by a kernel as Q11's) under the orders whose spreads pass (`Al[o] > 0`,
`~(Lt[o] > 0)`, tested at each order) and whose status is 'F', by supplier.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q11 import _suppliers_expr
from bench.tpch.q19 import _code, _is
from bench.tpch.q4 import _keys, kernel as _kernel

UNITS = {f"E{j}": np.eye(3)[j] for j in range(3)}


def _late(L, at):
    return L.var("l_commitdate", name="Cd")[at] < L.var("l_receiptdate", name="Rd")[at]


def _spread(tables, lines):
    """Per order, over the lines `lines(L, at)` keeps: their count, the sum of their
    supplier codes and of the squares (k = 0, 1, 2), one walk of lineitem."""
    o, ln, p, s, sd, m, k = ep.indices("o ln p s sd m k")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    E = [ep.tensor(f"E{j}", 1)[k] for j in range(3)]
    sums = (E[0] + L.var("supp", name="Sv")[at] * E[1] + L.var("supp2", name="Sq")[at] * E[2])
    return ep.sum(at[1:], lines(L, at) * sums), "o ln p s sd m k"


def _q21_all_expr(tables):
    return _spread(tables, lambda L, at: L.var(name="Ln")[at])


def _q21_late_expr(tables):
    return _spread(tables, _late)


def _q21_expr(tables):
    o, c, d, pr, ln, p, s, sd, m = ep.indices("o c d pr ln p s sd m")
    L, O = tables["lineitem"], tables["orders"]
    at = (o, ln, p, s, sd, m)
    Al, Lt = ep.tensor("Al", 1), ep.tensor("Lt", 1)
    Sk = ep.tensor("Sk", 1, ep.Format(["compressed"]))
    body = (O.var(name="O")[o, c, d, pr] * _is(O.var("ostatus", name="Os")[o, c, d, pr], "f")
            * (Al[o] > 0.0) * ~(Lt[o] > 0.0) * _late(L, at) * Sk[s])
    return ep.sum((o, c, d, pr, ln, p, sd, m), body), "o c d pr ln p s sd m"


def q21(tables, nation: str = "SAUDI ARABIA", limit: int = 100) -> dict:
    """s_name, numwait: the nation's suppliers by the number of their late lines
    in the orders ('F') where they alone were late among several suppliers."""
    L, O = tables["lineitem"], tables["orders"]
    late = {"Cd": L.tensor("l_commitdate"), "Rd": L.tensor("l_receiptdate")}
    supp = {"Sv": L.tensor("supp"), "Sq": L.tensor("supp2"), **UNITS}
    every = _kernel(tables, _q21_all_expr)(Ln=L.tensor(), **supp)
    spread_all = every[:, 0] * every[:, 2] - every[:, 1] ** 2   # > 0: several suppliers
    lat = _kernel(tables, _q21_late_expr)(**late, **supp)
    spread_late = lat[:, 0] * lat[:, 2] - lat[:, 1] ** 2        # 0: one late supplier
    names = _keys(tables["nation"], "n_name").mask(lambda v: v == nation, sparse=True)
    sk = _kernel(tables, _suppliers_expr, output=ep.Format(["compressed"]))(
        S=tables["supplier"].tensor(), N=tables["nation"].tensor(), Nm=names)
    wait = _kernel(tables, _q21_expr)(
        O=O.tensor(), Os=O.tensor("ostatus"), f=_code(tables["ostatus"], "F"), Al=spread_all,
        Lt=spread_late, Sk=sk, **late)
    out = ep.decode(wait, [_keys(tables["supplier"], "s_suppkey")], columns=["s_suppkey"],
                    value="numwait", carry={"s_name": ("s_suppkey", tables["supp_names"])},
                    order_by=["numwait", "s_name"], descending=[True, False], limit=limit)
    return {"s_name": out["s_name"], "numwait": out["numwait"].astype(np.int64)}

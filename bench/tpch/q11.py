"""TPC-H Q11 (important stock identification) written as docs/relational.md teaches,
on the tables loaded once (bench/tpch/tables.py `load`).

    q11(tables, nation="GERMANY", fraction=0.0001)   one warm query

The stock value of a part, `ps_supplycost * ps_availqty`, is a computed value
column of partsupp (made at load, as lineitem's revenue is). The nation's
suppliers are a sparse filter over supplier codes, made per call by a kernel
over the supplier and nation tables (`n_name = nation` a sparse mask over the
name codes), probed at each partsupp row's supplier (as Q7 keeps its two
nations' customers); the value per part is a dense output over part codes.
HAVING with a scalar subquery is two results read by a third query: the
total is the sum of that output (numpy), and the parts whose value passes
(`Vt[p] > "least"`, the bound fraction * total given at the call) are a
sparse output, decoded by value descending.
"""
from __future__ import annotations

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel


def _suppliers_expr(tables):
    s, n, r, nm = ep.indices("s n r nm")
    Nm = ep.tensor("Nm", 1, "csf")
    body = tables["supplier"].var()[s, n] * tables["nation"].var()[n, r, nm] * Nm[nm]
    return ep.sum((n, r, nm), body), "s n r nm"


def _q11_value_expr(tables):
    p, s = ep.indices("p s")
    Sk = ep.tensor("Sk", 1, ep.Format(["compressed"]))
    return ep.sum(s, tables["partsupp"].var("ps_value", name="Pv")[p, s] * Sk[s]), "p s"


def _q11_having_expr(tables):
    (p,) = ep.indices("p")
    Vt = ep.tensor("Vt", 1)
    return Vt[p] * (Vt[p] > "least"), "p"


def q11(tables, nation: str = "GERMANY", fraction: float = 0.0001) -> dict:
    """ps_partkey, value: the parts whose stock at the nation's suppliers is worth
    more than `fraction` of the nation's whole stock, by value descending."""
    names = _keys(tables["nation"], "n_name").mask(lambda v: v == nation, sparse=True)
    sk = _kernel(tables, _suppliers_expr, output=ep.Format(["compressed"]))(
        S=tables["supplier"].tensor(), N=tables["nation"].tensor(), Nm=names)
    value = _kernel(tables, _q11_value_expr)(Pv=tables["partsupp"].tensor("ps_value"), Sk=sk)
    least = fraction * float(value.sum())
    big = _kernel(tables, _q11_having_expr, output=ep.Format(["compressed"]))(
        Vt=value, least=least)
    return ep.decode(big, [_keys(tables["partsupp"], "ps_partkey")], columns=["ps_partkey"],
                     order_by=["value", "ps_partkey"], descending=[True, False])

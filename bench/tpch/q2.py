"""TPC-H Q2 (minimum cost supplier) written as docs/relational.md teaches, on the
tables loaded once (bench/tpch/tables.py `load`, with the supplier's and part's
reported columns carried: bench/tpch/more.py `carried`).

    q2(tables, size=15, type="BRASS", region="EUROPE")

A first kernel (real semiring) lists the candidate rows: partsupp's supply
cost at (part, supplier) for the parts of that size (`p_size = size`, a test
of the part's size carried by part code) whose type is LIKE '%type' (a sparse
mask over the part's type codes, a key of part) and the suppliers of the
region (supplier, nation, region, and a sparse mask over region names): a
sparse output over (part, supplier). The correlated MIN subquery is a second
kernel over that output in the min_plus semiring: the least cost per part
(a dense output, +inf where a part has no candidate). A third kernel keeps
the rows whose cost equals their part's least (`ep.eq(X[p, s], Least[p])`: a
value against a vector read at one of its indices, tested in the kernel's
walk of the first output), and
`ep.decode` carries the supplier's balance, name, address, phone and comment,
its nation's name and the part's maker, and sorts and limits (ORDER BY
s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100).
"""
from __future__ import annotations

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.q19 import _is

SUPPLIER_ATTRS = ("s_acctbal", "s_name", "s_address", "s_phone", "s_comment")


def _candidates_expr(tables):
    p, pn, t, s, n, r, nm, rn = ep.indices("p pn t s n r nm rn")
    Ty, Rm, Sz = ep.tensor("Ty", 1, "csf"), ep.tensor("Rm", 1, "csf"), ep.tensor("Sz", 1)
    body = (tables["part"].var()[p, pn, t] * Ty[t] * _is(Sz[p], "size")
            * tables["partsupp"].var("ps_supplycost", name="Pc")[p, s]
            * tables["supplier"].var()[s, n] * tables["nation"].var()[n, r, nm]
            * tables["region"].var()[r, rn] * Rm[rn])
    return ep.sum((pn, t, n, r, nm, rn), body), "p pn t s n r nm rn"


def _least_expr(tables):
    p, s = ep.indices("p s")
    return ep.sum(s, ep.tensor("X", 2, ep.Format(["compressed", "compressed"]))[p, s]), "p s"


def _best_expr(tables):
    p, s = ep.indices("p s")
    X = ep.tensor("X", 2, ep.Format(["compressed", "compressed"]))
    return X[p, s] * ep.eq(X[p, s], ep.tensor("Least", 1)[p]), "p s"


def q2(tables, size: int = 15, type: str = "BRASS", region: str = "EUROPE",
       limit: int = 100) -> dict:
    """s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment:
    for each part of `size` and type LIKE '%type', the suppliers of `region`
    whose supply cost is the least among that region's suppliers of the part."""
    P, R = tables["part"], tables["region"]
    cost = _kernel(tables, _candidates_expr, output=ep.Format(["compressed", "compressed"]))(
        P=P.tensor(), Ty=_keys(P, "p_type").like(f"%{type}", sparse=True),
        Sz=tables["part_attrs"]["p_size"], size=float(size),
        Pc=tables["partsupp"].tensor("ps_supplycost"), S=tables["supplier"].tensor(),
        N=tables["nation"].tensor(), R=R.tensor(),
        Rm=_keys(R, "r_name").mask(lambda v: v == region, sparse=True))
    least = _kernel(tables, _least_expr, semiring=ep.semirings.min_plus)(X=cost)
    best = _kernel(tables, _best_expr, output=ep.Format(["compressed", "compressed"]))(
        X=cost, Least=least)                     # ps_supplycost = the part's MIN
    attrs = tables["supplier_more"]
    carry = {a: ("s_suppkey", attrs[a]) for a in (*SUPPLIER_ATTRS, "n_name")}
    carry["p_mfgr"] = ("p_partkey", tables["part_more"]["p_mfgr"])
    return ep.decode(best, [_keys(P, "p_partkey"), _keys(tables["supplier"], "s_suppkey")],
                     columns=["p_partkey", "s_suppkey"], carry=carry,
                     order_by=["s_acctbal", "n_name", "s_name", "p_partkey"],
                     descending=[True, False, False, False], limit=limit)

"""TPC-H Q20 (potential part promotion) written as docs/relational.md teaches, on
the tables loaded once (bench/tpch/tables.py `load`, with partsupp's available
quantity added to partsupp's table and the supplier's columns made at load:
bench/tpch/more.py `carried`).

    q20(tables, color="forest", date="1994-01-01", nation="CANADA")

A first kernel sums the quantity shipped per (part, supplier) in the
year, for the parts whose name is LIKE 'color%' (a sparse mask over part
names: part read in its name order, and lineitem in its part order, so only
those parts' lines are walked; the year a range of ship date codes): a sparse
output over (part, supplier), holding only the pairs with lines, as the
subquery's sum is NULL (and the comparison false) for the others. A second
kernel compares partsupp's available quantity with half of it where both
store an entry (`Av[p, s] > 0.5 * Sum[p, s]`, as SQL writes it: a scaled
operand; the relation with fewer entries, the pairs with lines, is the one
listed, and partsupp's coordinates are sorted once, runtime.align),
keeps the suppliers of the nation
(supplier, nation and a sparse mask over nation names) and counts the
passing parts per supplier (a dense output over supplier codes): IN is a
count > 0. `ep.decode` carries the supplier's name and address and sorts
by name.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.queries import days

LINE_BY_PART = ["l_partkey", "l_suppkey", "l_orderkey", "l_linenumber", "l_shipdate",
                "l_shipmode"]
PART_BY_NAME = ["p_name", "p_partkey", "p_type"]


def _shipped_expr(tables):
    pn, p, t, s, o, ln, sd, m = ep.indices("pn p t s o ln sd m")
    G = ep.tensor("G", 1, "csf")
    body = (G[pn] * tables["part"].var(order=PART_BY_NAME)[p, pn, t]
            * tables["lineitem"].var("l_quantity", order=LINE_BY_PART, name="Lq")[
                o, ln, p, s, sd, m] * ep.between(sd, "dlo", "dhi"))
    return ep.sum((pn, t, o, ln, sd, m), body), "pn p t s o ln sd m"


def _suppliers_expr(tables):
    p, s, n, r, nm = ep.indices("p s n r nm")
    Sum = ep.tensor("Sum", 2, ep.Format(["compressed", "compressed"]))
    Nm = ep.tensor("Nm", 1, "csf")
    avail = tables["partsupp"].var("ps_availqty", name="Av")[p, s]
    body = ((avail > 0.5 * Sum[p, s]) * tables["supplier"].var()[s, n]
            * tables["nation"].var()[n, r, nm] * Nm[nm])
    return ep.sum((p, n, r, nm), body), "p s n r nm"


def q20(tables, color: str = "forest", date: str = "1994-01-01",
        nation: str = "CANADA") -> dict:
    """s_name, s_address: the suppliers of `nation` with a part named 'color%'
    of which they hold more than half the quantity they shipped in the year
    from `date`, by name."""
    P, L, N = tables["part"], tables["lineitem"], tables["nation"]
    end = f"{int(date[:4]) + 1}{date[4:]}"
    dlo, dhi = _keys(L, "l_shipdate").codes_between(days(date), days(end))
    shipped = _kernel(tables, _shipped_expr, output=ep.Format(["compressed", "compressed"]))(
        G=_keys(P, "p_name").like(f"{color}%", sparse=True), P=P.tensor(order=PART_BY_NAME),
        Lq=L.tensor("l_quantity", order=LINE_BY_PART), dlo=dlo, dhi=dhi)
    count = _kernel(tables, _suppliers_expr)(
        Sum=shipped, Av=tables["partsupp"].tensor("ps_availqty"), S=tables["supplier"].tensor(),
        N=N.tensor(), Nm=_keys(N, "n_name").mask(lambda v: v == nation, sparse=True))
    attrs = tables["supplier_more"]
    out = ep.decode(np.asarray(count), [_keys(tables["supplier"], "s_suppkey")],
                    columns=["s_suppkey"], value="parts",
                    carry={a: ("s_suppkey", attrs[a]) for a in ("s_name", "s_address")},
                    order_by="s_name")
    return {a: out[a] for a in ("s_name", "s_address")}

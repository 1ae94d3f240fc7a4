"""TPC-H Q8 (national market share) written as docs/relational.md teaches, on the
tables loaded once (bench/tpch/tables.py `load`).

    q8(tables, nation="BRAZIL", region="AMERICA", type="ECONOMY ANODIZED STEEL")

The share is a ratio per year of two sums: one kernel sums the volume by
(year of the order, nation of the supplier), a dense output over (year codes,
nation key codes); the nation's column over the row's total is the share,
in numpy (150 cells). The nation is reached through two paths: the
supplier's (S[s, n2], kept as a free index) and the customer's (C[c, n1],
whose region is tested: R[r, rn] times a sparse mask over region names).
`p_type = '...'` is a sparse mask over the part's type codes (part stores its
type as a key), tested at each part before its lines are read: lineitem is
read in its secondary order (part first), so only the lines of the parts of
that type are walked. The two years are a range of order date codes
(`ep.between`), the year a mapping (`Keys.mapping`).
"""
from __future__ import annotations

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.queries import _year, days

# lineitem's secondary order and part's storage order (bench/tpch/tables.py SPEC)
LINE_BY_PART = ["l_partkey", "l_suppkey", "l_orderkey", "l_linenumber", "l_shipdate",
                "l_shipmode"]


def _q8_expr(tables):
    p, pn, t, s, o, ln, sd, m, c, d, pr, n1, g, r, nm, rn, y, n2 = ep.indices(
        "p pn t s o ln sd m c d pr n1 g r nm rn y n2")
    Ty, Rm = ep.tensor("Ty", 1, "csf"), ep.tensor("Rm", 1, "csf")
    Y = ep.tensor("Y", 2, "csr")
    body = (tables["part"].var()[p, pn, t] * Ty[t]
            * tables["lineitem"].var("rev", order=LINE_BY_PART, name="Lr")[o, ln, p, s, sd, m]
            * tables["supplier"].var()[s, n2]
            * tables["orders"].var()[o, c, d, pr] * ep.between(d, "dlo", "dhi") * Y[d, y]
            * tables["customer"].var()[c, n1, g] * tables["nation"].var()[n1, r, nm]
            * tables["region"].var()[r, rn] * Rm[rn])
    return ep.sum((p, pn, t, s, o, ln, sd, m, c, d, pr, n1, g, r, nm, rn), body), \
        "p pn t s n2 o ln sd m c d pr y n1 g r nm rn"


def q8(tables, nation: str = "BRAZIL", region: str = "AMERICA",
       type: str = "ECONOMY ANODIZED STEEL") -> dict:
    """o_year, mkt_share: per year of 1995 and 1996, the share of `nation`'s
    suppliers in the volume of parts of `type` sold to customers of `region`."""
    O, P = tables["orders"], tables["part"]
    dlo, dhi = _keys(O, "o_orderdate").codes_between(days("1995-01-01"), days("1997-01-01"))
    Y, years = _year_of_order(tables)
    vol = _kernel(tables, _q8_expr)(
        P=P.tensor(), Ty=_keys(P, "p_type").mask(lambda v: v == type, sparse=True),
        Lr=tables["lineitem"].tensor("rev", order=LINE_BY_PART),
        S=tables["supplier"].tensor(), O=O.tensor(), Y=Y, C=tables["customer"].tensor(),
        N=tables["nation"].tensor(), R=tables["region"].tensor(),
        Rm=_keys(tables["region"], "r_name").mask(lambda v: v == region, sparse=True),
        dlo=dlo, dhi=dhi).T       # axes (n2, y): first appearance; by year
    mine = tables["nation_names"] == nation          # the nation key codes named so
    total = vol.sum(axis=1)
    keep = total != 0
    return {"o_year": years.values()[keep],
            "mkt_share": vol[:, mine].sum(axis=1)[keep] / total[keep]}


def _year_of_order(tables):
    """(the mapping order date code -> year code, the years' Keys), once per load."""
    key = ("year", "orders", "o_orderdate")
    if key not in tables:
        tables[key] = _keys(tables["orders"], "o_orderdate").mapping(_year, name="year")
    return tables[key]

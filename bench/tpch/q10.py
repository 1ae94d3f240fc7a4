"""TPC-H Q10 (returned item reporting) and Q14 (promotion effect) written as
docs/relational.md teaches, on the tables loaded once (bench/tpch/tables.py `load`).

    q10(tables, date="1993-10-01")   one warm query: the 20 customers with the most
                                     revenue lost to returned lines, in the quarter
    q14(tables, date="1995-09-01")   one warm query: the share of the month's revenue
                                     from promotional parts

Q10: orders are read in their storage order (by key), the quarter a range of
order date codes (`ep.between`, tested at each order's date), `l_returnflag =
'R'` a test of lineitem's value column of return flag codes; the revenue is
grouped by the order's customer (a dense output over customer codes). The
customer's name, balance, nation, address, phone and comment depend on the
group's key: they are carried (`Keys.carried`, made at load) and `ep.decode`
adds them to the 20 rows it keeps (`carry=`).

Q14: lineitem in its storage order, the month a range of ship date codes
(tested at each line's ship date), each line's part located in the part table
(by key), the revenue grouped by part type (a dense output over its codes);
`p_type LIKE 'PROMO%'` is `Keys.like` over the type dictionary, applied to
that small result.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.q15 import LINE_BY_SHIP
from bench.tpch.q19 import _code, _is
from bench.tpch.queries import days

# Q10's carried customer columns, in SQL's order after c_custkey and revenue
CUSTOMER_ATTRS = ("c_name", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")


def carried(cols: dict, coding: dict) -> dict:
    """Q10's customer columns by customer code, made at load: the nation's name
    by nation code first, then by customer through the customer's nation."""
    cust = {k.split(".")[1]: v for k, v in cols.items() if k.startswith("customer.")}
    nation = {k.split(".")[1]: v for k, v in cols.items() if k.startswith("nation.")}
    nationkey, custkey = coding["n_nationkey"], coding["c_custkey"]
    n_name = nationkey.carried(nation["n_nationkey"], nation["n_name"])
    cust["n_name"] = n_name[nationkey.code(cust["c_nationkey"])]
    return {a: custkey.carried(cust["c_custkey"], cust[a]) for a in CUSTOMER_ATTRS}


# ---- Q10 ----------------------------------------------------------------------------

def q10_expr(tables):
    o, c, d, pr, ln, p, s, sd, m = ep.indices("o c d pr ln p s sd m")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    returned = _is(L.var("rflag", name="Rf")[at], "r")
    body = (tables["orders"].var()[o, c, d, pr] * ep.between(d, "dlo", "dhi")
            * L.var("rev", name="Lr")[at] * returned)
    return ep.sum((o, d, pr, ln, p, s, sd, m), body), "o c d pr ln p s sd m"


def q10(tables, date: str = "1993-10-01", limit: int = 20) -> dict:
    """c_custkey, c_name, revenue, c_acctbal, n_name, c_address, c_phone, c_comment:
    the customers' revenue from the lines returned ('R') of the orders of the
    three months from `date`, the `limit` largest."""
    O, L = tables["orders"], tables["lineitem"]
    end = str(np.datetime64(date, "M") + 3) + "-01"
    dlo, dhi = _keys(O, "o_orderdate").codes_between(days(date), days(end))
    rev = _kernel(tables, q10_expr)(O=O.tensor(), Lr=L.tensor("rev"), Rf=L.tensor("rflag"),
                                    r=_code(tables["rflags"], "R"), dlo=dlo, dhi=dhi)
    attrs = tables["customer_attrs"]
    return ep.decode(rev, [_keys(O, "o_custkey")], columns=["c_custkey"], value="revenue",
                     carry={a: ("c_custkey", attrs[a]) for a in CUSTOMER_ATTRS},
                     order_by="revenue", descending=True, limit=limit)


# ---- Q14 ----------------------------------------------------------------------------

def q14_expr(tables):
    o, ln, p, s, sd, m, pn, t = ep.indices("o ln p s sd m pn t")
    body = (tables["lineitem"].var("rev", name="Lr")[o, ln, p, s, sd, m]
            * ep.between(sd, "slo", "shi") * tables["part"].var()[p, pn, t])
    return ep.sum((o, ln, p, s, sd, m, pn), body), "o ln p s sd m pn t"


def q14_expr_by_ship(tables):
    o, ln, p, s, sd, m, pn, t = ep.indices("o ln p s sd m pn t")
    body = (tables["lineitem"].var("rev", order=LINE_BY_SHIP, name="Lr")[o, ln, p, s, sd, m]
            * ep.between(sd, "slo", "shi") * tables["part"].var()[p, pn, t])
    return ep.sum((o, ln, p, s, sd, m, pn), body), "sd o ln p s m pn t"


def q14(tables, date: str = "1995-09-01", walk: bool = False) -> dict:
    """promo_revenue: 100 times the share of the revenue of the lines shipped in
    the month from `date` that comes from parts whose type starts with PROMO (on
    lineitem's ship date order when the load made it and not `walk`: the month
    a range of its first level, only its lines read)."""
    L, P = tables["lineitem"], tables["part"]
    end = str(np.datetime64(date, "M") + 1) + "-01"
    slo, shi = _keys(L, "l_shipdate").codes_between(days(date), days(end))
    if walk or LINE_BY_SHIP not in L.orders:
        by_type = _kernel(tables, q14_expr)(Lr=L.tensor("rev"), P=P.tensor(), slo=slo, shi=shi)
    else:
        by_type = _kernel(tables, q14_expr_by_ship)(Lr=L.tensor("rev", order=LINE_BY_SHIP),
                                                    P=P.tensor(), slo=slo, shi=shi)
    promo = _keys(P, "p_type").like("PROMO%", sparse=False).to_dense()
    total = by_type.sum()
    share = 100.0 * float(by_type @ promo) / total if total else np.nan
    return {"promo_revenue": np.array([share])}

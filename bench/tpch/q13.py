"""TPC-H Q13 (customer distribution) and Q18 (large volume customer) written as
docs/relational.md teaches, on the tables loaded once (bench/tpch/tables.py `load`).

    q13(tables, word1="special", word2="requests")   one warm query
    q18(tables, quantity=300)                        one warm query

Q13: the order's comment is coded once at load (a dictionary of its distinct
strings, `Keys`; orders store each order's comment code as a value column);
`o_comment NOT LIKE '%w1%w2%'` is `Keys.like(..., negate=True)` over that
dictionary, a 0/1 vector over comment codes, read at each order's comment
code through `ep.onehot` (the value as an index). The count of each
customer's orders is a dense output over customer codes, so a customer with
no order is a 0 (the LEFT OUTER JOIN); the number of customers per count is a
histogram of that result, `ep.sum(c, ep.onehot(k, Cnt[c], "nbins"))`, its
number of bins a parameter given at call time (one kernel for every count).

Q18: HAVING is a comparison of a result: the first kernel sums each order's
quantities (a dense output over order codes), the second reads that array as
a dense input `Qt[o]`, keeps the orders with `Qt[o] > "big"` (a test at each
order, before its customer is read) and groups by order and customer (a
sparse output: only the orders that pass are stored); the customer's name
and the order's date and total price are carried (`Keys.carried`, made at
load) and `ep.decode` sorts by total price (descending) and date.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel


# ---- Q13 ----------------------------------------------------------------------------

def _q13_counts_expr(tables):
    o, c, d, pr, cm = ep.indices("o c d pr cm")
    n = len(tables["comments"])
    Keep = ep.tensor("Keep", 1)
    body = ep.onehot(cm, tables["orders"].var("comment", name="Oc")[o, c, d, pr], n) * Keep[cm]
    return ep.sum((o, d, pr, cm), body), "o c d pr cm"


def _histogram(tables):
    """The histogram of a count per customer, its number of bins a parameter
    `nbins` (one kernel for every number of bins)."""
    c, k = ep.indices("c k")
    return ep.sum(c, ep.onehot(k, ep.tensor("Cnt", 1)[c], "nbins")), "c k"


def q13(tables, word1: str = "special", word2: str = "requests") -> dict:
    """c_count, custdist: the number of customers per count of their orders whose
    comment is not LIKE '%word1%word2%' (customers with none counted at 0),
    by custdist descending, then c_count descending."""
    keep = tables["comments"].like(f"%{word1}%{word2}%", negate=True)
    counts = _kernel(tables, _q13_counts_expr)(Oc=tables["orders"].tensor("comment"),
                                               Keep=keep)
    n = int(counts.max(initial=0)) + 1
    dist = _kernel(tables, _histogram)(Cnt=counts, nbins=n)
    return ep.decode(dist, [ep.Keys(np.arange(n), name="c_count")], value="custdist",
                     order_by=["custdist", "c_count"], descending=True)


# ---- Q18 ----------------------------------------------------------------------------

def _q18_quantity_expr(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    at = (o, ln, p, s, sd, m)
    return ep.sum(at[1:], tables["lineitem"].var("l_quantity", name="Lq")[at]), \
        "o ln p s sd m"


def _q18_expr(tables):
    o, c, d, pr = ep.indices("o c d pr")
    Qt = ep.tensor("Qt", 1)
    body = tables["orders"].var()[o, c, d, pr] * (Qt[o] > "big") * Qt[o]
    return ep.sum((d, pr), body), "o c d pr"


def q18(tables, quantity: int = 300, limit: int = 100) -> dict:
    """c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity):
    the orders whose lines' quantities sum to more than `quantity`, by total
    price descending, then date, the first `limit`."""
    O = tables["orders"]
    qty = _kernel(tables, _q18_quantity_expr)(Lq=tables["lineitem"].tensor("l_quantity"))
    big = _kernel(tables, _q18_expr, output=ep.Format(["compressed", "compressed"]))(
        O=O.tensor(), Qt=qty, big=float(quantity))
    orders, names = tables["order_attrs"], tables["customer_attrs"]["c_name"]
    out = ep.decode(big, [_keys(O, "o_orderkey"), _keys(O, "o_custkey")],
                    columns=["o_orderkey", "c_custkey"], value="sum(l_quantity)",
                    carry={"c_name": ("c_custkey", names),
                           "o_orderdate": ("o_orderkey", orders["o_orderdate"]),
                           "o_totalprice": ("o_orderkey", orders["o_totalprice"])},
                    order_by=["o_totalprice", "o_orderdate"], descending=[True, False],
                    limit=limit)
    return out

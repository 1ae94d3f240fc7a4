"""TPC-H Q22 (global sales opportunity) written as docs/relational.md teaches, on
the tables loaded once (bench/tpch/tables.py `load`).

    q22(tables, codes=("13", "31", "23", "29", "30", "18", "17"))   one warm query

The country code `substring(c_phone, 1, 2)` is a computed column coded once
at load (bench/tpch/derived.py: a value column of codes, read as an index by
`ep.onehot`), its `IN (...)` a 0/1 mask over those codes (`Keys.mask`). The
scalar subquery (the average positive balance of those countries) is a
first query: two sums at one more index k (the balance and the row count);
its average the bound of the second query's `Bal > "avg"`. NOT EXISTS
(orders of the customer) reads a first result too: each customer's order
count, a dense output over customer codes (a customer with none holds 0),
compared at the customer (`~(Cnt[c] > 0)`). The count and the balance per
country code are the second query's sums at k.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import kernel as _kernel

CODES = ("13", "31", "23", "29", "30", "18", "17")
UNITS = {"E0": np.array([1.0, 0.0]), "E1": np.array([0.0, 1.0])}


def _sums(tables, test):
    """Σ over customers of onehot(country code) · In[code] · test · (balance at k=0,
    the row count at k=1), by country code."""
    c, n, g, cc, k = ep.indices("c n g cc k")
    C = tables["customer"]
    at = (c, n, g)
    bal = C.var("acctbal", name="Bal")[at]
    body = (ep.onehot(cc, C.var("cntry", name="Cc")[at], len(tables["cntry"]))
            * ep.tensor("In", 1)[cc] * test(bal, c)
            * (bal * ep.tensor("E0", 1)[k] + C.var(name="Cr")[at] * ep.tensor("E1", 1)[k]))
    return ep.sum((c, n, g), body), "c n g cc k"


def _q22_avg_expr(tables):
    return _sums(tables, lambda bal, c: bal > 0.0)


def _q22_expr(tables):
    return _sums(tables, lambda bal, c: (bal > "avg") * ~(ep.tensor("Cnt", 1)[c] > 0.0))


def _orders_expr(tables):
    o, c, d, pr = ep.indices("o c d pr")
    return ep.sum((o, d, pr), tables["orders"].var()[o, c, d, pr]), "o c d pr"


def q22(tables, codes=CODES) -> dict:
    """cntrycode, numcust, totacctbal: per country code among `codes`, the
    customers with no order whose balance is above the average positive
    balance of those countries' customers."""
    C = tables["customer"]
    cols = {"Bal": C.tensor("acctbal"), "Cc": C.tensor("cntry"), "Cr": C.tensor(),
            "In": tables["cntry"].mask(lambda v: np.isin(v, codes)), **UNITS}
    total = _kernel(tables, _q22_avg_expr)(**cols).sum(axis=0)
    avg = total[0] / total[1] if total[1] else np.inf
    count = _kernel(tables, _orders_expr)(O=tables["orders"].tensor())
    got = _kernel(tables, _q22_expr)(**cols, Cnt=count, avg=float(avg))
    keep = got[:, 1] > 0
    return {"cntrycode": tables["cntry"].values()[keep],
            "numcust": got[keep, 1].astype(np.int64), "totacctbal": got[keep, 0]}

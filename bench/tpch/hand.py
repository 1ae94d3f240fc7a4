"""TPC-H Q5 over relations built by hand: scipy csr matrices with the filters applied
in numpy (the planning case of bench.tpch.q5, and of tests/end_to_end/test_tpch_q5.py,
which imports it; no bench environment is set here).

    revenue[n] = Σ_{o,c,s} O[o,c]·C[c,n]·L[o,s]·S[s,n]·R[n]
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import etchpy as ep

DAY0, DAY1 = 8766, 9131          # 1994-01-01 and 1995-01-01, days since 1970-01-01


def expression():
    """The Q5 expression and its loop indices (o, c, s, n)."""
    o, c, s, n = ep.indices("o c s n")
    O, C = ep.tensor("O", 2, "csr"), ep.tensor("C", 2, "csr")
    L, S = ep.tensor("L", 2, "csr"), ep.tensor("S", 2, "csr")
    R = ep.tensor("R", 1, "csf")
    return ep.sum((o, c, s), O[o, c] * C[c, n] * L[o, s] * S[s, n] * R[n]), (o, c, s, n)


def _ones(rows, cols, shape):
    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def relations(cols: dict) -> dict:
    """O, C, L, S (scipy csr) and R (an ep.Tensor) of Q5, by tensor name."""
    g = lambda k: cols[k]
    nkeys = int(g("orders.o_orderkey").max()) + 1
    ncust = int(g("customer.c_custkey").max()) + 1
    nsupp = int(g("supplier.s_suppkey").max()) + 1
    nnat = int(g("nation.n_nationkey").max()) + 1
    date = g("orders.o_orderdate")
    keep = (date >= DAY0) & (date < DAY1)
    O = _ones(g("orders.o_orderkey")[keep], g("orders.o_custkey")[keep], (nkeys, ncust))
    C = _ones(g("customer.c_custkey"), g("customer.c_nationkey"), (ncust, nnat))
    S = _ones(g("supplier.s_suppkey"), g("supplier.s_nationkey"), (nsupp, nnat))
    rev = g("lineitem.l_extendedprice") * (1.0 - g("lineitem.l_discount"))
    L = sp.csr_matrix((rev, (g("lineitem.l_orderkey"), g("lineitem.l_suppkey"))),
                      shape=(nkeys, nsupp))
    L.sum_duplicates()
    asia = g("region.r_regionkey")[g("region.r_name") == "ASIA"]
    mask = np.isin(g("nation.n_regionkey"), asia)
    R = ep.Tensor.from_coords([g("nation.n_nationkey")[mask]], np.ones(int(mask.sum())),
                              (nnat,), "csf")
    return {"O": O, "C": C, "L": L, "S": S, "R": R}


def answer(revenue: np.ndarray, cols: dict) -> dict:
    """{nation name: revenue} of the nations with revenue, from a vector over n."""
    names = dict(zip(cols["nation.n_nationkey"].tolist(), cols["nation.n_name"].tolist()))
    return {names[k]: float(v) for k, v in enumerate(np.asarray(revenue)) if v != 0}

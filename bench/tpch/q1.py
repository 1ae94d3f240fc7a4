"""TPC-H Q1 (pricing summary report) written as docs/relational.md teaches, on the
tables loaded once (bench/tpch/tables.py `load`).

    q1(tables, delta=90)   one warm query: per return flag and line status, the
                           sums, averages and count of the lines shipped up to
                           `delta` days before 1998-12-01

The group-by columns are value columns of codes (lineitem's return flag and
line status, coded at load), read as indices by `ep.onehot` (a group-by on a
value column: the output is dense over their codes, 3 x 2); the date limit is
a value comparison of the ship date. The eight aggregates are six sums (the
averages are sums over the count) over one more index k, each sum a column
times a unit vector at k (`E_j[k]`, the count a unit vector alone): one
expression, whose product over lineitem's structure (the onehots, the
comparison, the sum of the columns) is one walk of lineitem's stored
positions that reads every column at each line and adds the line to its
group's six sums (expr.shared; docs/relational.md, "Grouping by value columns").
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import kernel as _kernel
from bench.tpch.queries import days

# the sums, by lineitem value column (None: the count), in the order of k
SUMS = ("l_quantity", "l_extendedprice", "rev", "charge", "l_discount", None)
UNITS = {f"E{j}": np.eye(len(SUMS))[j] for j in range(len(SUMS))}


def q1_expr(tables):
    o, ln, p, s, sd, m, f, g, k = ep.indices("o ln p s sd m f g k")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    group = (ep.onehot(f, L.var("rflag", name="Rf")[at], len(tables["rflags"]))
             * ep.onehot(g, L.var("lstatus", name="Ls")[at], len(tables["lstatuses"]))
             * (L.var("ship", name="Sd")[at] <= "hi"))
    sums = None
    for j, column in enumerate(SUMS):
        term = ep.tensor(f"E{j}", 1)[k]
        if column is not None:
            term = L.var(column, name=f"M{j}")[at] * term
        sums = term if sums is None else sums + term
    return ep.sum(at, group * sums), "o ln p s sd m f g k"


def q1(tables, delta: int = 90) -> dict:
    """l_returnflag, l_linestatus, sum_qty, sum_base_price, sum_disc_price,
    sum_charge, avg_qty, avg_price, avg_disc, count_order of the lines shipped
    on or before 1998-12-01 minus `delta` days, by flag and status."""
    L = tables["lineitem"]
    got = _kernel(tables, q1_expr)(
        Rf=L.tensor("rflag"), Ls=L.tensor("lstatus"), Sd=L.tensor("ship"),
        hi=days("1998-12-01") - delta, **UNITS,
        **{f"M{j}": L.tensor(c) for j, c in enumerate(SUMS) if c is not None})
    flag, status = np.nonzero(got[:, :, -1] > 0)       # the groups with a line, in order
    qty, price, disc_price, charge, disc, count = (got[flag, status, j] for j in range(6))
    return {"l_returnflag": tables["rflags"].values()[flag],
            "l_linestatus": tables["lstatuses"].values()[status],
            "sum_qty": qty, "sum_base_price": price, "sum_disc_price": disc_price,
            "sum_charge": charge, "avg_qty": qty / count, "avg_price": price / count,
            "avg_disc": disc / count, "count_order": count.astype(np.int64)}

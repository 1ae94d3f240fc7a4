"""TPC-H Q17 (small-quantity-order revenue) written as docs/relational.md teaches, on
the tables loaded once (bench/tpch/tables.py `load`).

    q17(tables, brand="Brand#23", container="MED BOX")   one warm query

The correlated subquery (`l_quantity < 0.2 * avg(l_quantity)` of the same part)
is a first query's result read by a second, as HAVING is: the first sums each
part's quantities and counts its lines (two sums at one more index k, a
column times a unit vector each, the count the row count of lineitem's
structure: one walk), for the parts whose brand and container pass (tests of
the part's attributes carried by part code, at the loop over parts: lineitem
is read in its part order, so the lines of the other parts are skipped); the
limit 0.2 * sum / count is numpy over the part codes; the second sums the
price of the lines whose quantity is below their part's limit (`Lq[...] <
Lim[p]`, a value of lineitem against a dense vector read at the line's part).
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import kernel as _kernel
from bench.tpch.q19 import _code, _is

UNITS = {"E0": np.array([1.0, 0.0]), "E1": np.array([0.0, 1.0])}


def _part(p):
    """p_brand = the parameter b and p_container = c (part attributes by code)."""
    return _is(ep.tensor("PB", 1)[p], "b") & _is(ep.tensor("PC", 1)[p], "c")


def _q17_sums_expr(tables):
    o, ln, p, s, sd, m, k = ep.indices("o ln p s sd m k")
    L = tables["lineitem"]
    at, by_part = (o, ln, p, s, sd, m), L.secondary
    qty = L.var("l_quantity", order=by_part, name="Lq")[at]
    rows = L.var(order=by_part, name="Lc")[at]          # 1 per line: the count
    body = _part(p) * (qty * ep.tensor("E0", 1)[k] + rows * ep.tensor("E1", 1)[k])
    return ep.sum((o, ln, s, sd, m), body), "p s o ln sd m k"


def _q17_expr(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    L = tables["lineitem"]
    at, by_part = (o, ln, p, s, sd, m), L.secondary
    qty = L.var("l_quantity", order=by_part, name="Lq")[at]
    price = L.var("l_extendedprice", order=by_part, name="Lp")[at]
    body = price * _part(p) * (qty < 0.2 * ep.tensor("Avg", 1)[p])
    return ep.sum(at, body), "p s o ln sd m"


def q17(tables, brand: str = "Brand#23", container: str = "MED BOX") -> dict:
    """avg_yearly: the yearly price of the lines of the brand's parts in the
    container whose quantity is below a fifth of their part's average."""
    L, attrs = tables["lineitem"], tables["part_attrs"]
    by_part = L.secondary                 # lineitem by part (tables.LINE_BY_PART)
    part = {"PB": attrs["brand"], "PC": attrs["container"],
            "b": _code(tables["brands"], brand), "c": _code(tables["containers"], container)}
    qty = L.tensor("l_quantity", order=by_part)
    sums = _kernel(tables, _q17_sums_expr)(Lq=qty, Lc=L.tensor(order=by_part), **part, **UNITS)
    avg = sums[:, 0] / np.maximum(sums[:, 1], 1.0)
    total = _kernel(tables, _q17_expr)(Lq=qty, Lp=L.tensor("l_extendedprice", order=by_part),
                                       Avg=avg, **part)
    return {"avg_yearly": np.array([float(total) / 7.0])}

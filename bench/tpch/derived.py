"""Columns the later queries derive from a table's columns at load (bench/tpch/
tables.py `load` calls `derive` for each table before storing it).

    derive(out, name, t)   adds t's derived columns (and into `out`, the load,
                           the codings made), when t holds the columns they need

partsupp: its stock value `ps_supplycost * ps_availqty` (Q11). supplier: its
comment coded once (`Keys.coded`, text index made: Q16's NOT LIKE). customer:
its account balance as a value and its phone's country code (the first two
characters) coded once (Q22). part: its brand, type and size coded, by part code;
partsupp: a second table of it, "partsupp_groups", stored by its part's brand,
type and size codes, then part and supplier (Q16 groups by the three: its
COUNT(DISTINCT) is a sparse output over the group's levels, written in order:
the join with part made once, at load). lineitem: its supplier's code and its
square as values; orders: its status coded; supplier: its name by supplier code
(Q21).
"""
from __future__ import annotations

import numpy as np

import etchpy as ep

GROUP = ("p_brand", "p_type", "p_size")       # Q16's GROUP BY


def _coded_at(column, name: str, at, n: int):
    """(the Keys of `column`, by part code the code of its row, -1 for no row)."""
    keys, codes = ep.Keys.coded(column, name=name)
    by_part = np.full(n, -1, dtype=np.int64)
    by_part[at] = codes
    return keys, by_part


def derive(out: dict, name: str, t: dict, coding: dict) -> None:
    if name == "partsupp" and "ps_availqty" in t:
        t["ps_value"] = t["ps_supplycost"] * t["ps_availqty"]
    if name == "supplier" and "s_comment" in t:
        out["supp_comments"], t["scomment"] = ep.Keys.coded(t["s_comment"], name="s_comment")
        out["supp_comments"].prepare_like()
    if name == "customer" and "c_phone" in t:
        out["cntry"], t["cntry"] = ep.Keys.coded(t["c_phone"].astype("U2"), name="cntrycode")
        t["acctbal"] = t["c_acctbal"]
    if name == "lineitem":          # the supplier's code as a value, and its square
        t["supp"] = coding["l_suppkey"].code(t["l_suppkey"]).astype(float)
        t["supp2"] = t["supp"] * t["supp"]
    if name == "orders" and "o_orderstatus" in t:
        out["ostatus"], t["ostatus"] = ep.Keys.coded(t["o_orderstatus"], name="o_orderstatus")
    if name == "part" and "p_brand" in t:       # its group's codes by part code (Q16)
        at, n = coding["p_partkey"].code(t["p_partkey"]), len(coding["p_partkey"])
        out["part_groups"] = [_coded_at(t[c], c, at, n) for c in GROUP]
    if name == "partsupp" and "part_groups" in out:     # partsupp by its part's group
        part = coding["ps_partkey"].code(t["ps_partkey"])
        cols = {c: codes[part] for c, (_, codes) in zip(GROUP, out["part_groups"])}
        out["partsupp_groups"] = ep.table(
            {**cols, "ps_partkey": t["ps_partkey"], "ps_suppkey": t["ps_suppkey"]},
            [*GROUP, "ps_partkey", "ps_suppkey"], name="PSG",
            coding={"ps_partkey": coding["ps_partkey"], "ps_suppkey": coding["ps_suppkey"],
                    **{c: ep.Keys(np.arange(len(k)), name=c)
                       for c, (k, _) in zip(GROUP, out["part_groups"])}})
    if name == "supplier" and "s_name" in t:
        out["supp_names"] = coding["s_suppkey"].carried(t["s_suppkey"], t["s_name"])

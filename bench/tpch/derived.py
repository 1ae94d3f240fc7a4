"""Columns the later queries derive from a table's columns at load (bench/tpch/
tables.py `load` calls `derive` for each table before storing it).

    derive(out, name, t)   adds t's derived columns (and into `out`, the load,
                           the codings made), when t holds the columns they need

partsupp: its stock value `ps_supplycost * ps_availqty` (Q11). supplier: its
comment coded once (`Keys.coded`, text index made: Q16's NOT LIKE). customer:
its account balance as a value and its phone's country code (the first two
characters) coded once (Q22). lineitem: its supplier's code and its square as
values; orders: its status coded; supplier: its name by supplier code (Q21).
"""
from __future__ import annotations

import etchpy as ep


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
    if name == "supplier" and "s_name" in t:
        out["supp_names"] = coding["s_suppkey"].carried(t["s_suppkey"], t["s_name"])

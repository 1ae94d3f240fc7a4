"""The TPC-H queries written on the tables loaded once after bench/tpch/tables.py
(Q8, Q2, Q20, Q15), by name, and the columns they report, carried at load.

tables.py ends with `load = extend(load, QUERIES)`: its QUERIES gain MORE, and
its load also makes `carried(cols, tables)` (the supplier's and part's columns
Q2 reports, by supplier and part code), when the columns hold them.
"""
from __future__ import annotations

import functools

from bench.tpch.q2 import SUPPLIER_ATTRS, q2
from bench.tpch.q8 import q8
from bench.tpch.q15 import q15
from bench.tpch.q20 import q20

MORE = {"Q8": q8, "Q2": q2, "Q20": q20, "Q15": q15}


def carried(cols: dict, tables: dict) -> None:
    """Adds "supplier_more" (Q2's supplier columns and the nation's name, by
    supplier code) and "part_more" (p_mfgr by part code) to `tables`, and
    partsupp's available quantity (Q20) to the partsupp table loaded once, as
    a value column over its structure (Table.add_values)."""
    def table(name):
        return {k.split(".")[1]: v for k, v in cols.items() if k.startswith(name + ".")}
    supp, nation, part, ps = (table(t) for t in ("supplier", "nation", "part", "partsupp"))
    if "ps_availqty" in ps and "ps_availqty" not in tables["partsupp"].values:
        tables["partsupp"].add_values(ps, "ps_availqty")
    if not all(a in supp for a in SUPPLIER_ATTRS) or "p_mfgr" not in part:
        return
    suppkey, nationkey = (tables[t].keys[0] for t in ("supplier", "nation"))
    supp["n_name"] = nationkey.carried(nation["n_nationkey"], nation["n_name"])[
        nationkey.code(supp["s_nationkey"])]
    tables["supplier_more"] = {a: suppkey.carried(supp["s_suppkey"], supp[a])
                               for a in (*SUPPLIER_ATTRS, "n_name")}
    tables["part_more"] = {"p_mfgr": tables["part"].keys[0].carried(part["p_partkey"],
                                                                    part["p_mfgr"])}


def extend(load, queries: dict):
    """`load` that also carries the columns above; `queries` gains MORE."""
    queries.update(MORE)

    @functools.wraps(load)
    def more_load(cols: dict, *args, **kw) -> dict:
        tables = load(cols, *args, **kw)
        carried(cols, tables)
        return tables
    return more_load

"""TPC-H Q16 (parts/supplier relationship) written as docs/relational.md teaches, on
the tables loaded once (bench/tpch/tables.py `load`).

    q16(tables, brand="Brand#45", type_="MEDIUM POLISHED", sizes=(49, 14, ...))

The supplier's comment is coded once at load (orders' comment likewise, Q13)
and supplier stores each one's code; the suppliers NOT IN the set whose
comment is LIKE '%Customer%Complaints%' are a sparse filter over supplier
codes made per call by a kernel (`Keys.like(..., negate=True)` read at each
supplier's comment code through `ep.onehot`), probed at each partsupp row's
supplier. The part's tests are written on its attributes carried by part
code (`p_brand <> b` is `~` of an equality, `p_size IN (...)` an OR of
equalities) and on its type, a key of part (NOT LIKE a sparse mask over the
type codes). The kernel's output is the partsupp rows that pass, a sparse
output over (part, supplier). COUNT(DISTINCT ps_suppkey) per (brand, type,
size) has no kernel form (a count of distinct values: docs/relational.md):
it is numpy over those rows, the distinct (group, supplier) pairs counted.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import _keys, kernel as _kernel
from bench.tpch.q19 import _code, _is

SIZES = (49, 14, 23, 45, 19, 3, 36, 9)


def _suppliers_expr(tables):
    s, n, cm = ep.indices("s n cm")
    Sc = tables["supplier"].var("scomment", name="Sc")[s, n]
    body = ep.onehot(cm, Sc, len(tables["supp_comments"])) * ep.tensor("Keep", 1, "csf")[cm]
    return ep.sum((n, cm), body), "s n cm"


def _q16_expr(tables):
    p, pn, t, s = ep.indices("p pn t s")
    PB, PZ = ep.tensor("PB", 1), ep.tensor("PZ", 1)
    sized = _is(PZ[p], "z0")
    for j in range(1, len(SIZES)):
        sized = sized | _is(PZ[p], f"z{j}")
    Tk, Sk = ep.tensor("Tk", 1, "csf"), ep.tensor("Sk", 1, ep.Format(["compressed"]))
    body = (tables["part"].var()[p, pn, t] * Tk[t] * ~_is(PB[p], "b") * sized
            * tables["partsupp"].var(name="PSc")[p, s] * Sk[s])
    return ep.sum((pn, t), body), "p pn t s"


def q16(tables, brand: str = "Brand#45", type_: str = "MEDIUM POLISHED",
        sizes=SIZES) -> dict:
    """p_brand, p_type, p_size, supplier_cnt: per brand, type and size, the number
    of distinct suppliers without complaints of the parts that pass, by count
    descending, then brand, type and size."""
    P, attrs = tables["part"], tables["part_attrs"]
    keep = tables["supp_comments"].like("%Customer%Complaints%", negate=True, sparse=True)
    sk = _kernel(tables, _suppliers_expr, output=ep.Format(["compressed"]))(
        Sc=tables["supplier"].tensor("scomment"), Keep=keep)
    types = _keys(P, "p_type")
    rows = _kernel(tables, _q16_expr, output=ep.Format(["compressed", "compressed"]))(
        P=P.tensor(), PSc=tables["partsupp"].tensor(), Sk=sk,
        Tk=types.like(f"{type_}%", sparse=True, negate=True), PB=attrs["brand"],
        PZ=attrs["p_size"], b=_code(tables["brands"], brand),
        **{f"z{j}": float(z) for j, z in enumerate(sizes)})
    (p, s), kept = rows.to_coords()
    p, s = p[kept != 0], s[kept != 0]         # (a row a factor made 0 is stored: no row)
    b, t, z = attrs["brand"][p].astype(np.int64), attrs["type"][p], attrs["p_size"][p]
    group = (b * len(types) + t) * 64 + z.astype(np.int64)
    width = int(s.max(initial=0)) + 1
    pairs = np.sort(group * width + s)          # by group, then supplier (np.unique hashes)
    pairs = pairs[np.diff(pairs, prepend=-1) != 0] // width    # one per (group, supplier)
    first = np.flatnonzero(np.diff(pairs, prepend=-1))    # each group's first pair
    groups, count = pairs[first], np.diff(first, append=len(pairs))
    b, rest = np.divmod(groups, len(types) * 64)
    t, z = np.divmod(rest, 64)
    order = np.lexsort((z, t, b, -count))      # codes keep the order of the values
    return {"p_brand": tables["brands"].values()[b[order]],
            "p_type": types.values()[t[order]], "p_size": z[order],
            "supplier_cnt": count[order]}

"""TPC-H Q16 (parts/supplier relationship) written as docs/relational.md teaches, on
the tables loaded once (bench/tpch/tables.py `load`).

    q16(tables, brand="Brand#45", type_="MEDIUM POLISHED", sizes=(49, 14, ...))

COUNT(DISTINCT ps_suppkey) GROUP BY p_brand, p_type, p_size in its kernel form
(docs/relational.md, "COUNT(DISTINCT)"): a first kernel sums the rows that pass
into a sparse output over (brand, type, size, supplier), so each distinct
(group, supplier) is one stored entry (its value the number of its parts, at
least 1); a second counts each group's stored entries, Σ_s (D[b,t,z,s] > 0),
into a sparse output over the groups, which `ep.decode` orders. Partsupp is
read in a second table of it stored by its part's brand, type and size codes,
then part and supplier (`partsupp_groups`, made at load: bench/tpch/derived.py,
with the three Keys in `part_groups`), so the groups come in order and the
first output is written group by group through its row workspace. The part's
tests are sparse masks over those levels' codes (`p_brand <> b` the other
brands, `p_type NOT LIKE` the other types, `p_size IN (...)` the sizes
listed): skips over groups before any of their rows is read. The supplier's
comment is coded once at load and supplier stores each one's code; the
suppliers NOT IN the set whose comment is LIKE '%Customer%Complaints%' are a
sparse filter over supplier codes made per call by a kernel
(`Keys.like(..., negate=True)` read at each supplier's comment code through
`ep.onehot`), probed at each row's supplier.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.q4 import kernel as _kernel

SIZES = (49, 14, 23, 45, 19, 3, 36, 9)
GROUPS = ["p_brand", "p_type", "p_size"]


def _suppliers_expr(tables):
    s, n, cm = ep.indices("s n cm")
    Sc = tables["supplier"].var("scomment", name="Sc")[s, n]
    body = ep.onehot(cm, Sc, len(tables["supp_comments"])) * ep.tensor("Keep", 1, "csf")[cm]
    return ep.sum((n, cm), body), "s n cm"


def _pairs_expr(tables):
    """D[b,t,z,s]: the parts of each group that pass, per supplier that passes."""
    b, t, z, p, s = ep.indices("b t z p s")
    Bm, Tm, Zm = (ep.tensor(n, 1, "csf") for n in ("Bm", "Tm", "Zm"))
    Sk = ep.tensor("Sk", 1, ep.Format(["compressed"]))
    body = tables["partsupp_groups"].var()[b, t, z, p, s] * Bm[b] * Tm[t] * Zm[z] * Sk[s]
    return ep.sum(p, body), "b t z p s"


def _count_expr(tables):
    """Per group, its stored (group, supplier) entries: COUNT(DISTINCT s)."""
    b, t, z, s = ep.indices("b t z s")
    D = ep.tensor("D", 4, ep.Format(["compressed"] * 4))
    return ep.sum(s, D[b, t, z, s] > 0), "b t z s"


def q16(tables, brand: str = "Brand#45", type_: str = "MEDIUM POLISHED",
        sizes=SIZES) -> dict:
    """p_brand, p_type, p_size, supplier_cnt: per brand, type and size, the number
    of distinct suppliers without complaints of the parts that pass, by count
    descending, then brand, type and size."""
    keep = tables["supp_comments"].like("%Customer%Complaints%", negate=True, sparse=True)
    sk = _kernel(tables, _suppliers_expr, output=ep.Format(["compressed"]))(
        Sc=tables["supplier"].tensor("scomment"), Keep=keep)
    brands, types, size_keys = (k for k, _ in tables["part_groups"])
    pairs = _kernel(tables, _pairs_expr, output=ep.Format(["compressed"] * 4))(
        PSG=tables["partsupp_groups"].tensor(), Sk=sk,
        Bm=brands.mask(lambda v: v != brand, sparse=True),
        Tm=types.like(f"{type_}%", sparse=True, negate=True),
        Zm=size_keys.mask(lambda v: np.isin(v, sizes), sparse=True))
    count = _kernel(tables, _count_expr, output=ep.Format(["compressed"] * 3))(D=pairs)
    out = ep.decode(count, [brands, types, size_keys], columns=GROUPS, value="supplier_cnt",
                    order_by=["supplier_cnt", *GROUPS], descending=[True, False, False, False])
    out["supplier_cnt"] = out["supplier_cnt"].astype(np.int64)
    return out

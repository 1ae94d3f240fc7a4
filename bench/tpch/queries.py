"""TPC-H Q5, Q9, Q3 and Q6 written with ep.relation, ep.Keys and ep.decode.

    tries = build(cols)                  the tables as tries (cols: data.tables(sf))
    q5(tries, **params)                  one warm query: {column: numpy array}

bench/tpch/catalog.py gives each query's SQL and parameter sets (QUERIES).

`build` depends only on the tables and on each trie's level order, never on a
query's constants: the date ranges, the region, the colour and the market
segment are predicates that the warm query builds (`predicates_q5`, ...) and
multiplies in as 0/1 factors over a key's codes. Those three functions are the
one place where predicates are made; when predicates become skips in the
compiler, they change there. Each query sorts and cuts its result (ORDER BY,
LIMIT) itself and returns decoded columns.

Kernels are compiled with optimize=False and a fixed loop order (the trie
orders below are chosen for it), once per set of tries (kept under "kernels").
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from etchpy.relational.keys import look_up, lookup_of

DAY = np.timedelta64(1, "D")


def days(iso: str) -> int:
    """Days since 1970-01-01 of an ISO date (the bench's date columns)."""
    return int(np.datetime64(iso, "D").astype(np.int64))


# each query's tries: name -> (table, key columns in level order, relation options)
TRIES = {
    # Q5: orders by date first, so a date range is a range of the outer level;
    # each order's customer, its nation and region (the region test guards the
    # order's lines), then the lines whose supplier is of that nation: suppliers
    # by nation, both levels dense (25 x suppliers), so that test is one load
    "Q5": {"O5": ("orders", ["o_orderdate", "o_orderkey", "o_custkey"], {}),
           "C5": ("customer", ["c_custkey", "c_nationkey"], {}),
           "L5": ("lineitem", ["l_orderkey", "l_suppkey"], {"values": "rev"}),
           "S5": ("supplier", ["s_nationkey", "s_suppkey"], {"levels": ["dense", "dense"]}),
           "N5": ("nation", ["n_nationkey", "n_regionkey", "n_name"], {}),
           "R": ("region", ["r_regionkey", "r_name"], {})},
    # Q9: lineitem by part first, so the part filter prunes whole subtrees
    "Q9": {"L9": ("lineitem", ["l_partkey", "l_suppkey", "l_orderkey"],
                  {"values": ["rev", "l_quantity"]}),
           "PS": ("partsupp", ["ps_partkey", "ps_suppkey"], {"values": "ps_supplycost"}),
           "P": ("part", ["p_name", "p_partkey"], {}),
           "S": ("supplier", ["s_suppkey", "s_nationkey"], {}),
           "N9": ("nation", ["n_nationkey", "n_name"], {}),
           "O9": ("orders", ["o_orderkey", "o_orderdate"], {})},
    # Q3: orders by date (as Q5), each order's customer and its segment, the
    # order's lineitems by ship date: the orders are walked in code order
    "Q3": {"O3": ("orders", ["o_orderdate", "o_orderkey", "o_custkey"], {}),
           "C3": ("customer", ["c_custkey", "c_mktsegment"], {}),
           "L3": ("lineitem", ["l_orderkey", "l_shipdate"], {"values": "rev"})},
    # Q7: suppliers by nation (a nation pair's suppliers only), their lineitems by
    # ship date (a range) and order, each order's customer and its nation
    "Q7": {"S7": ("supplier", ["s_nationkey", "s_suppkey"], {}),
           "L7": ("lineitem", ["l_suppkey", "l_shipdate", "l_orderkey"], {"values": "rev"}),
           "O7": ("orders", ["o_orderkey", "o_custkey"], {}),
           "C7": ("customer", ["c_custkey", "c_nationkey"], {}),
           "N7": ("nation", ["n_nationkey", "n_name"], {})},
    # Q12: lineitem by ship mode, order and line, its three dates value columns
    # (compared row by row in the kernel's loop: expr.compare), and each order's priority
    "Q12": {"L12": ("lineitem", ["l_shipmode", "l_orderkey", "l_linenumber"],
                    {"values": ["l_commitdate", "l_receiptdate", "l_shipdate"]}),
            "O12": ("orders", ["o_orderkey", "o_orderpriority"], {})},
    # Q19: lineitem by ship instruction and mode (the tests every clause repeats are
    # skips), then part; each part's size, brand and container (codes) as values
    # over the part codes, read at a line's part inside the clauses' one row test
    "Q19": {"L19": ("lineitem", ["l_shipinstruct", "l_shipmode", "l_partkey", "l_orderkey",
                                 "l_linenumber"], {"values": ["rev", "l_quantity"]}),
            "P19": ("part", ["p_partkey"], {"values": ["p_size", "brand", "container"],
                                            "levels": ["dense"]})},
    # Q6: lineitem by ship date, discount and quantity: each predicate a range of a level
    "Q6": {"L6": ("lineitem", ["l_shipdate", "l_discount", "l_quantity"],
                  {"values": "disc_price"})},
}
# the key columns of each join, coded by one Keys (built from the first column)
SHARED = {"orderkey": ("orders.o_orderkey", "l_orderkey"), "custkey": ("customer.c_custkey",
          "o_custkey"), "suppkey": ("supplier.s_suppkey", "l_suppkey", "ps_suppkey"),
          "partkey": ("part.p_partkey", "l_partkey", "ps_partkey"),
          "nationkey": ("nation.n_nationkey", "c_nationkey", "s_nationkey"),
          "regionkey": ("region.r_regionkey", "n_regionkey"),
          "orderdate": ("orders.o_orderdate",)}


class ClusteredKeys(ep.Keys):
    """A coding of unique key values whose codes follow another column `by` (then
    the key): orders coded in order of their date, a clustered index. Codes are
    dense 0..n-1; code, decode, values, mask and mapping as for ep.Keys, but codes
    keep the order of (by, key), not of the key values.

        >>> k = ClusteredKeys(np.array([10, 20, 30]), np.array([5, 1, 3]), name="o")
        >>> k.code(np.array([10, 20])), k.values()
        (array([2, 0]), array([20, 30, 10]))
    """

    def __init__(self, values, by, *, name: str = "keys", lookup_span: float | None = 8.0):
        values = np.asarray(values)
        self.name, self.kind, self.low, self.size = str(name), "clustered", 0, len(values)
        self.lookup_span = lookup_span
        self.dtype, self._table = values.dtype, None
        order = _clustered(values, np.asarray(by))       # code -> row
        self._values = values[order]
        rank = np.empty(len(values), dtype=np.int64)
        rank[order] = np.arange(len(values))
        ascending = len(values) < 2 or bool((values[1:] > values[:-1]).all())
        srt = None if ascending else np.argsort(values, kind="stable")
        self._sorted = values if srt is None else values[srt]
        self._code_of_sorted = rank if srt is None else rank[srt]
        if len(values) and (np.diff(self._sorted) == 0).any():
            raise ep.InputError(f"keys {name!r}: a clustered coding needs unique keys")
        at = lookup_of(self._sorted, lookup_span)         # value - min -> position
        self._lookup_table = np.where(at >= 0, self._code_of_sorted[at], -1)

    def values(self) -> np.ndarray:
        return self._values

    def code(self, values, *, missing: str = "error"):
        values = np.asarray(values)
        if len(self._lookup_table) and values.dtype.kind in "iu":
            codes, present = look_up(self._lookup_table, self._sorted[0], values)
        else:
            at = np.minimum(np.searchsorted(self._sorted, values), max(self.size - 1, 0))
            present = self._sorted[at] == values if self.size else np.zeros(len(values), bool)
            codes = np.where(present, self._code_of_sorted[at], 0)
        if missing == "mask":
            return codes, present
        if not present.all():
            raise ep.InputError(f"keys {self.name!r}: {int((~present).sum())} values "
                                f"have no code")
        return codes

    def decode(self, codes) -> np.ndarray:
        return self._values[np.asarray(codes)]


def _clustered(values: np.ndarray, by: np.ndarray) -> np.ndarray:
    """The rows in order of (by, value): np.lexsort((values, by)), but when the
    values are ascending already (orders come by key) one stable sort of `by`,
    a radix sort when by spans fewer than 2**16 values (dates)."""
    if len(values) < 2 or not (values[1:] > values[:-1]).all():
        return np.lexsort((values, by))
    lo, hi = int(by.min()), int(by.max())
    if by.dtype.kind in "iu" and hi - lo < 2**15:
        return np.argsort((by - lo).astype(np.int16), kind="stable")
    return np.argsort(by, kind="stable")


def build(cols: dict, queries=("Q5", "Q9", "Q3", "Q6", "Q7", "Q12", "Q19"), *,
          cluster: bool = True) -> dict:
    """The relations (by name, see TRIES) and codings ("keys") that `queries`
    read. Keys shared by a join are one ep.Keys. Orders are coded in order of
    their date (ClusteredKeys; with cluster=False, by order key, dictionary-coded:
    the keys have gaps), so that the orders of a date range have consecutive
    codes and their lineitem rows lie together."""
    keys, coding = {}, {}
    for name, (col, *others) in SHARED.items():
        table, first = col.split(".")
        if name == "orderkey" and cluster:
            keys[name] = ClusteredKeys(cols[col], cols["orders.o_orderdate"], name=name)
        else:
            keys[name] = ep.Keys(cols[col], name=name)
        coding.update({c: keys[name] for c in (first, *others)})
    tables, codes = {}, {}
    out = {"keys": keys}
    for q in queries:
        for name, (table, key_cols, kw) in TRIES[q].items():
            if table not in tables:
                tables[table] = _table(cols, table)
            for k in key_cols:     # each column coded once, whichever tries read it
                if k not in coding:
                    coding[k] = ep.Keys(tables[table][k], name=k)
                if k not in codes:
                    codes[k] = coding[k].code(tables[table][k])
            r = ep.relation(tables[table], key_cols, coding=coding, name=name,
                            codes={k: codes[k] for k in key_cols}, **kw)
            out.update({f"{name}{v}": x for v, x in r.items()} if isinstance(r, dict)
                       else {name: r})
    if "Q9" in queries:
        out["Y"], out["years"] = keys["orderdate"].mapping(_year, name="o_year")
        out["P"].keys[0].prepare_like()     # the part names' text index (LIKE)
    if "Q7" in queries:    # the year of a ship date; each nation key code's name
        out["Y7"], out["years7"] = out["L7"].keys[1].mapping(_year, name="l_year")
        n = tables["nation"]
        out["nation_names"] = n["n_name"][np.argsort(keys["nationkey"].code(n["n_nationkey"]))]
    if "Q19" in queries:   # the codings of the part's brand and container (as _table's)
        part = tables["part"]
        out["brands"], out["containers"] = ep.Keys(part["p_brand"]), ep.Keys(part["p_container"])
    if "Q3" in queries:    # o_orderdate and o_shippriority by order code (attributes)
        o = tables["orders"]
        out["order_attrs"] = {a: keys["orderkey"].carried(o["o_orderkey"], o[a])
                              for a in ("o_orderdate", "o_shippriority")}
    return out


def _table(cols: dict, name: str) -> dict:
    pre = name + "."
    t = {k[len(pre):]: v for k, v in cols.items() if k.startswith(pre)}
    if name == "part":          # the brand and container as their codes (numbers)
        t["brand"] = ep.Keys(t["p_brand"]).code(t["p_brand"])
        t["container"] = ep.Keys(t["p_container"]).code(t["p_container"])
    if name == "lineitem":      # a computed column of the table (no query constant)
        t["rev"] = t["l_extendedprice"] * (1.0 - t["l_discount"])
        t["disc_price"] = t["l_extendedprice"] * t["l_discount"]
    return t


def _year(d: np.ndarray) -> np.ndarray:
    return d.astype("datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970


def _kernel(tries, make, **kw):
    """The kernel of make(tries) = (expression, loop order), compiled once per set
    of tries and kept in it under "kernels" (ep.compile caches too, but building
    the expression and looking it up cost more than Q5's kernel at sf 0.1)."""
    kept = tries.setdefault("kernels", {})
    if make not in kept:
        expr, order = make(tries)
        kept[make] = ep.compile(expr, optimize=False, order=order.split(), **kw)
    return kept[make]


# ---- Q5: local supplier volume ------------------------------------------------------

def predicates_q5(tries, region: str, date: str) -> dict:
    """Q5's predicates: the codes [dlo, dhi) of the order dates in [date, date + 1
    year) for ep.between (a skip over the date level), and the region's name
    (stored sparse: its test guards the loops below the region)."""
    lo = days(date)
    hi = days(str(np.datetime64(date, "D").astype("datetime64[Y]") + 1) + "-01-01")
    dlo, dhi = tries["keys"]["orderdate"].codes_between(lo, hi)
    return {"dlo": dlo, "dhi": dhi,
            "Rm": tries["R"].keys[1].mask(lambda v: v == region, sparse=True)}


Q5_TRIES = ("O5", "C5", "L5", "S5", "N5", "R")


def q5_expr(tries):
    d, o, c, s, n, nm, r, rn = ep.indices("d o c s n nm r rn")
    T = {k: tries[k].var(k) for k in Q5_TRIES}
    Rm = ep.tensor("Rm", 1, "csf")
    body = (T["O5"][d, o, c] * ep.between(d, "dlo", "dhi") * T["C5"][c, n] * T["L5"][o, s]
            * T["S5"][n, s] * T["N5"][n, r, nm] * T["R"][r, rn] * Rm[rn])
    return ep.sum((d, o, c, s, n, r, rn), body), "d o c n r rn nm s"


def q5(tries, region: str = "ASIA", date: str = "1994-01-01") -> dict:
    """n_name, revenue of the nations of `region` from orders placed in the year
    from `date`, by revenue descending."""
    kern = _kernel(tries, q5_expr)
    rev = kern(**{k: tries[k].tensor for k in Q5_TRIES}, **predicates_q5(tries, region, date))
    return ep.decode(rev, [tries["N5"].keys[2]], columns=["n_name"], value="revenue",
                     order_by="revenue", descending=True)


# ---- Q9: product type profit -------------------------------------------------------

def predicates_q9(tries, color: str) -> dict:
    """Q9's predicate: p_name LIKE '%color%', over the part-name codes."""
    return {"G": tries["P"].keys[0].like(f"%{color}%", sparse=True)}


def q9_expr(tries):
    p, pn, s, n, nm, o, d, y = ep.indices("p pn s n nm o d y")
    T = {k: tries[k].var(k) for k in ("L9rev", "L9l_quantity", "PS", "P", "S", "N9", "O9")}
    G, Y = ep.tensor("G", 1, "csf"), ep.tensor("Y", 2, "csr")
    amount = T["L9rev"][p, s, o] - T["L9l_quantity"][p, s, o] * T["PS"][p, s]
    body = (G[pn] * T["P"][pn, p] * amount * T["S"][s, n] * T["N9"][n, nm]
            * T["O9"][o, d] * Y[d, y])
    return ep.sum((p, pn, s, n, o, d), body), "pn p s n nm o d y"


def q9(tries, color: str = "green") -> dict:
    """nation, o_year, sum_profit over the lines of parts whose name contains
    `color`, by nation and year descending."""
    kern = _kernel(tries, q9_expr)
    names = ("L9rev", "L9l_quantity", "PS", "P", "S", "N9", "O9")
    profit = kern(**{k: tries[k].tensor for k in names}, Y=tries["Y"],
                  **predicates_q9(tries, color))
    out = ep.decode(profit, [tries["N9"].keys[1], tries["years"]],
                    columns=["nation", "o_year"], value="sum_profit")
    rows = np.lexsort((-out["o_year"], out["nation"]))
    return {k: v[rows] for k, v in out.items()}


# ---- Q3: shipping priority ---------------------------------------------------------

def predicates_q3(tries, segment: str, date: str) -> dict:
    """Q3's predicates: the market segment (a mask stored sparse), orders before
    `date` (codes below dhi: a skip over the date level), lines shipped after it
    (ship-date codes from slo: a skip within each order's lines)."""
    day = days(date)
    _, dhi = tries["keys"]["orderdate"].codes_between(None, day)
    slo, _ = tries["L3"].keys[1].codes_between(day + 1, None)
    return {"Sg": tries["C3"].keys[1].mask(lambda v: v == segment, sparse=True),
            "dhi": dhi, "slo": slo}


def q3_expr(tries):
    d, o, c, g, sd = ep.indices("d o c g sd")
    T = {k: tries[k].var(k) for k in ("O3", "C3", "L3")}
    Sg = ep.tensor("Sg", 1, "csf")
    body = (T["O3"][d, o, c] * ep.between(d, None, "dhi") * T["C3"][c, g] * Sg[g]
            * T["L3"][o, sd] * (sd >= "slo"))
    return ep.sum((d, c, g, sd), body), "d o c g sd"


SPARSE = ep.Format(["compressed"])


def q3(tries, segment: str = "BUILDING", date: str = "1995-03-15", limit: int = 10) -> dict:
    """l_orderkey, revenue, o_orderdate, o_shippriority of the `limit` orders of
    the most revenue (then earliest), grouped by order (the order's date and
    priority are its attributes): a sparse group-by, the orders with revenue."""
    kern = _kernel(tries, q3_expr, output=SPARSE)
    rev = kern(**{k: tries[k].tensor for k in ("O3", "C3", "L3")},
               **predicates_q3(tries, segment, date))
    code, vals = rev.levels[0]["crd"], rev.vals
    attrs = tries["order_attrs"]
    rows = np.lexsort((attrs["o_orderdate"][code], -vals))[:limit]
    code = code[rows]
    return {"l_orderkey": tries["keys"]["orderkey"].decode(code), "revenue": vals[rows],
            "o_orderdate": attrs["o_orderdate"][code],
            "o_shippriority": attrs["o_shippriority"][code]}


# ---- Q6: forecasting revenue change ------------------------------------------------

def predicates_q6(tries, date: str, discount: float, quantity: int) -> dict:
    """Q6's predicates, each a range of one level's codes (ep.between: a skip):
    ship dates in [date, date + 1 year), discounts within discount ± 0.01 and
    quantities below `quantity`."""
    keys = tries["L6"].keys
    d0 = days(date)
    dlo, dhi = keys[0].codes_between(d0, days(f"{int(date[:4]) + 1}{date[4:]}"))
    eps = 1e-9                                   # the decimal bounds are inclusive
    clo, chi = keys[1].codes_between(discount - 0.01 - eps, discount + 0.01 + eps)
    _, qhi = keys[2].codes_between(None, quantity)
    return {"dlo": dlo, "dhi": dhi, "clo": clo, "chi": chi, "qhi": qhi}


def q6_expr(tries):
    d, c, q = ep.indices("d c q")
    body = (tries["L6"].var("L6")[d, c, q] * ep.between(d, "dlo", "dhi")
            * ep.between(c, "clo", "chi") * ep.between(q, None, "qhi"))
    return ep.sum((d, c, q), body), "d c q"


def q6(tries, date: str = "1994-01-01", discount: float = 0.06, quantity: int = 24) -> dict:
    """revenue: Σ l_extendedprice · l_discount over the lines shipped in the year
    from `date` with a discount within 0.01 of `discount` and fewer than
    `quantity` items."""
    kern = _kernel(tries, q6_expr)
    rev = kern(L6=tries["L6"].tensor, **predicates_q6(tries, date, discount, quantity))
    return {"revenue": np.array([float(rev)])}

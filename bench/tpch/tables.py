"""The TPC-H tables loaded once with ep.table, and the bench's queries on them.

    tables = load(cols)            the eight tables (cols: data.tables(sf)), one trie
                                   each in storage order (primary key first), a
                                   secondary order for lineitem, part and supplier;
                                   skip_unwritten=True (the bench writes no value)
    QUERIES[name](tables, **params)   one warm query on that load (catalog's params)

Unlike bench/tpch/queries.py (`build`: each query's own tries, in the level
order best for it), every query here reads the same tries. A table's levels are
its primary key, then the columns queries join or group on; the columns they
only filter on are value columns, tested in the kernel's loop (expr.compare).
Lineitem is stored by order and line, by part (the secondary order, for
Q9's part filter), by supplier (an order added at load, Table.add_order, for
Q7, which starts from the two nations' suppliers) and by ship mode (another,
for Q12: its two modes a skip over the outer level, the lines of the other five
never read); part by key and by name (Q9's LIKE), its type a key too (Q14
groups by it); supplier by key and by nation (Q5). Q10 and Q14 are
bench/tpch/q10.py's: the customer's columns Q10 reports are carried by
customer code (made at load), and lineitem's return flag is a value column
of its codes (its line status too: Q1, bench/tpch/q1.py, groups by both, read
as indices by ep.onehot, in one walk of lineitem). Q13 and Q18 are
bench/tpch/q13.py's: orders store each order's comment code (the comment coded once
at load, its text index made then for NOT LIKE; the supplier's too, Q16: q16.py; Q17
and Q11: q17.py, q11.py). Each query names every level of a table it reads (those it
does not use are summed). Columns of lineitem multiplied or compared at the same
levels are walked once (runtime.shared); Q6 tests its ship date as a value column
too, so that its sum reads no level at all: one loop over lineitem's stored
positions. Q19's part attributes (size, brand and container codes) are carried by
part code (Keys.carried, made at load) and read at a line's part; it reads lineitem
in its part order, where the OR of its clauses' part tests (a factor implied by the
OR: expr.logic) is a test at each part, and the lines of the parts that fail it are
skipped.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.derived import derive
from bench.tpch.q1 import q1
from bench.tpch.q12 import HIGH
from bench.tpch.q4 import kernel as _kernel, q4
from bench.tpch.q10 import carried, q10, q14
from bench.tpch.q11 import q11
from bench.tpch.q13 import q13, q18
from bench.tpch.q16 import q16
from bench.tpch.q17 import q17
from bench.tpch.q19 import CONTAINERS, SIZES, _code, _is
from bench.tpch.q21 import q21
from bench.tpch.q22 import q22
from bench.tpch.queries import _table, _year, days

# table -> (primary key, other key columns, value columns, secondary order)
SPEC = {
    "region": (["r_regionkey"], ["r_name"], [], None),
    "nation": (["n_nationkey"], ["n_regionkey", "n_name"], [], None),
    "customer": (["c_custkey"], ["c_nationkey", "c_mktsegment"], ["acctbal", "cntry"], None),
    "supplier": (["s_suppkey"], ["s_nationkey"], ["scomment"], ["s_nationkey", "s_suppkey"]),
    "part": (["p_partkey"], ["p_name", "p_type"], [], ["p_name", "p_partkey", "p_type"]),
    "partsupp": (["ps_partkey", "ps_suppkey"], [], ["ps_supplycost", "ps_value"], None),
    "orders": (["o_orderkey"], ["o_custkey", "o_orderdate", "o_orderpriority"],
               ["comment", "ostatus"], None),
    "lineitem": (["l_orderkey", "l_linenumber"],
                 ["l_partkey", "l_suppkey", "l_shipdate", "l_shipmode"],
                 ["rev", "disc_price", "l_quantity", "l_discount", "l_commitdate",
                  "l_receiptdate", "ship", "instr", "rflag", "lstatus", "l_extendedprice",
                  "charge", "supp", "supp2"],
                 ["l_partkey", "l_suppkey", "l_orderkey", "l_linenumber", "l_shipdate",
                  "l_shipmode"]),
}
# the key columns of each join: one Keys, from the first (the primary key)
JOINS = {"orderkey": ("orders.o_orderkey", "l_orderkey"),
         "custkey": ("customer.c_custkey", "o_custkey"),
         "suppkey": ("supplier.s_suppkey", "l_suppkey", "ps_suppkey"),
         "partkey": ("part.p_partkey", "l_partkey", "ps_partkey"),
         "nationkey": ("nation.n_nationkey", "c_nationkey", "s_nationkey"),
         "regionkey": ("region.r_regionkey", "n_regionkey")}
LINE_BY_PART = SPEC["lineitem"][3]
# a column only compared read as its narrow twin (Q6's; as sound as skip_unwritten)
TUNING = ep.Tuning(narrow_compared=256)
# lineitem supplier first (Q7), an order added at load (Table.add_order)
LINE_BY_SUPP = ["l_suppkey", "l_orderkey", "l_linenumber", "l_partkey", "l_shipdate",
                "l_shipmode"]
# lineitem ship mode first (Q12: its two modes are a skip over the outer level), an
# order added at load
LINE_BY_MODE = ["l_shipmode", "l_orderkey", "l_linenumber", "l_partkey", "l_suppkey",
                "l_shipdate"]
Q12_DATES = (("l_commitdate", "Cd"), ("l_receiptdate", "Rd"), ("ship", "Sd"))
SUPP_BY_NATION = SPEC["supplier"][3]
PART_BY_NAME = SPEC["part"][3]


def load(cols: dict, added_orders: bool = True) -> dict:
    """The eight tables as ep.Table (by table name), plus "kernels" (kept per load)
    and what the queries derive from the codings once (a year mapping);
    added_orders=False: lineitem without its supplier and ship-mode orders
    (bench/tpch/one_order.py's queries read none)."""
    coding = {}
    for name, (first, *others) in JOINS.items():
        table, col = first.split(".")
        keys = ep.Keys(cols[first], name=name)
        coding.update({c: keys for c in (col, *others)})
    out = {}
    names = {"partsupp": "PS"}
    for name, (primary, keys, values, secondary) in SPEC.items():
        t = _table(cols, name)
        if name == "lineitem":
            t["ship"] = t["l_shipdate"]           # the ship date as a value too (Q12)
            out["instr"] = ep.Keys(t["l_shipinstruct"], name="l_shipinstruct")
            t["instr"] = out["instr"].code(t["l_shipinstruct"])     # its code (Q19)
            out["rflags"] = ep.Keys(t["l_returnflag"], name="l_returnflag")
            t["rflag"] = out["rflags"].code(t["l_returnflag"])      # its code (Q10)
            out["lstatuses"] = ep.Keys(t["l_linestatus"], name="l_linestatus")
            t["lstatus"] = out["lstatuses"].code(t["l_linestatus"])  # its code (Q1)
            t["charge"] = t["rev"] * (1.0 + t["l_tax"])          # a computed column (Q1)
        derive(out, name, t, coding)   # Q11's stock value, Q16's and Q22's codes (derived.py)
        if name == "orders":      # the comment coded once, each order's code (Q13)
            out["comments"], t["comment"] = ep.Keys.coded(t["o_comment"], name="o_comment")
            out["comments"].prepare_like()
        values = [v for v in values if v in t]    # (columns without them: no Q11, Q16)
        out[name] = ep.table(t, primary, keys=keys, values=values, secondary=secondary,
                             coding=coding, name=names.get(name, name[0].upper()),
                             skip_unwritten=True)   # the bench writes no value
    if added_orders:
        out["lineitem"].add_order(LINE_BY_SUPP)
        out["lineitem"].tensor("rev", order=LINE_BY_SUPP)     # its copy of rev, at load
        out["lineitem"].add_order(LINE_BY_MODE)
        for value, _ in Q12_DATES:                            # the dates' copies too
            out["lineitem"].tensor(value, order=LINE_BY_MODE)
    orders = _table(cols, "orders")       # an order's date and priority by its code (Q3)
    keys = coding["o_orderkey"]
    out["order_attrs"] = {a: keys.carried(orders["o_orderkey"], orders[a])
                          for a in ("o_orderdate", "o_shippriority", "o_totalprice")}
    nation = _table(cols, "nation")       # each nation key code's name (Q7)
    out["nation_names"] = nation["n_name"][np.argsort(coding["n_nationkey"].code(
        nation["n_nationkey"]))]
    part = _table(cols, "part")           # a part's size, brand and container by code (Q19)
    out["part_attrs"] = {a: coding["p_partkey"].carried(part["p_partkey"], part[a]).astype(
        np.float64) for a in ("p_size", "brand", "container")}
    out["brands"], out["containers"] = ep.Keys(part["p_brand"]), ep.Keys(part["p_container"])
    out["customer_attrs"] = carried(cols, coding)     # a customer's name, nation... (Q10)
    out["kernels"] = {}
    out["tuning"] = TUNING
    return out


def _keys(T, column: str) -> ep.Keys:
    return T.keys[T.order.index(column)]


def _year_mapping(tables, table: str, column: str):
    """(the mapping date code -> year code, the years' Keys), made once per load."""
    key = ("year", table, column)
    if key not in tables:
        tables[key] = _keys(tables[table], column).mapping(_year, name="year")
    return tables[key]


def _region(tables, name: str):
    return _keys(tables["region"], "r_name").mask(lambda v: v == name, sparse=True)


# ---- Q5 -----------------------------------------------------------------------------

def _q5_expr(tables):
    o, c, d, pr, n, g, r, rn, nm, ln, p, s, sd, m = ep.indices(
        "o c d pr n g r rn nm ln p s sd m")
    Tb = tables
    Rm = ep.tensor("Rm", 1, "csf")
    body = (Tb["orders"].var()[o, c, d, pr] * ep.between(d, "dlo", "dhi")
            * Tb["customer"].var()[c, n, g] * Tb["nation"].var()[n, r, nm]
            * Tb["region"].var()[r, rn] * Rm[rn]
            * Tb["lineitem"].var("rev")[o, ln, p, s, sd, m]
            * Tb["supplier"].var(order=SUPP_BY_NATION)[s, n])
    return ep.sum((o, c, d, pr, n, g, r, rn, ln, p, s, sd, m), body), \
        "o c d pr n g r rn nm ln p s sd m"


def q5(tables, region: str = "ASIA", date: str = "1994-01-01") -> dict:
    lo = days(date)
    hi = days(str(np.datetime64(date, "D").astype("datetime64[Y]") + 1) + "-01-01")
    dlo, dhi = _keys(tables["orders"], "o_orderdate").codes_between(lo, hi)
    rev = _kernel(tables, _q5_expr)(
        O=tables["orders"].tensor(), C=tables["customer"].tensor(),
        N=tables["nation"].tensor(), R=tables["region"].tensor(),
        L=tables["lineitem"].tensor("rev"),
        S=tables["supplier"].tensor(order=SUPP_BY_NATION),
        Rm=_region(tables, region), dlo=dlo, dhi=dhi)
    return ep.decode(rev, [_keys(tables["nation"], "n_name")], columns=["n_name"],
                     value="revenue", order_by="revenue", descending=True)


# ---- Q3 -----------------------------------------------------------------------------

def _q3_expr(tables):
    o, c, d, pr, n, g, ln, p, s, sd, m = ep.indices("o c d pr n g ln p s sd m")
    Sg = ep.tensor("Sg", 1, "csf")
    body = (tables["orders"].var()[o, c, d, pr] * ep.between(d, None, "dhi")
            * tables["customer"].var()[c, n, g] * Sg[g]
            * tables["lineitem"].var("rev")[o, ln, p, s, sd, m] * (sd >= "slo"))
    return ep.sum((c, d, pr, n, g, ln, p, s, sd, m), body), "o c d pr n g ln p s sd m"


def q3(tables, segment: str = "BUILDING", date: str = "1995-03-15", limit: int = 10) -> dict:
    O, L = tables["orders"], tables["lineitem"]
    day = days(date)
    _, dhi = _keys(O, "o_orderdate").codes_between(None, day)
    slo, _ = _keys(L, "l_shipdate").codes_between(day + 1, None)
    seg = _keys(tables["customer"], "c_mktsegment").mask(lambda v: v == segment, sparse=True)
    kern = _kernel(tables, _q3_expr, output=ep.Format(["compressed"]))
    rev = kern(O=O.tensor(), C=tables["customer"].tensor(), L=L.tensor("rev"), Sg=seg,
               dhi=dhi, slo=slo)
    code, vals = rev.levels[0]["crd"], rev.vals
    attrs = tables["order_attrs"]
    rows = np.lexsort((attrs["o_orderdate"][code], -vals))[:limit]
    code = code[rows]
    return {"l_orderkey": _keys(O, "o_orderkey").decode(code), "revenue": vals[rows],
            "o_orderdate": attrs["o_orderdate"][code],
            "o_shippriority": attrs["o_shippriority"][code]}


# ---- Q6 -----------------------------------------------------------------------------

def _q6_expr(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    disc, qty = L.var("l_discount", name="Dc")[at], L.var("l_quantity", name="Qt")[at]
    ship = L.var("ship", name="Sd")[at]
    body = (L.var("disc_price", name="Dp")[at] * ((ship >= "dlo") & (ship < "dhi"))
            * ((disc >= "clo") & (disc <= "chi") & (qty < "qhi")))
    return ep.sum(at, body), "o ln p s sd m"


def q6(tables, date: str = "1994-01-01", discount: float = 0.06, quantity: int = 24) -> dict:
    """Every test a value comparison (the ship date's days too), so that the whole
    sum is one walk of lineitem's stored positions (runtime.shared)."""
    L = tables["lineitem"]
    eps = 1e-9                                   # the decimal bounds are inclusive
    rev = _kernel(tables, _q6_expr)(
        Dp=L.tensor("disc_price"), Dc=L.tensor("l_discount"), Qt=L.tensor("l_quantity"),
        Sd=L.tensor("ship"), dlo=days(date), dhi=days(f"{int(date[:4]) + 1}{date[4:]}"),
        clo=discount - 0.01 - eps, chi=discount + 0.01 + eps, qhi=float(quantity))
    return {"revenue": np.array([float(rev)])}


# ---- Q9 -----------------------------------------------------------------------------

def _q9_expr(tables):
    pn, p, t, s, n, r, nm, o, ln, sd, m, c, d, pr, y = ep.indices(
        "pn p t s n r nm o ln sd m c d pr y")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    G, Y = ep.tensor("G", 1, "csf"), ep.tensor("Y", 2, "csr")
    amount = (L.var("rev", order=LINE_BY_PART, name="Lr")[at]
              - L.var("l_quantity", order=LINE_BY_PART, name="Lq")[at]
              * tables["partsupp"].var("ps_supplycost")[p, s])
    body = (G[pn] * tables["part"].var(order=PART_BY_NAME)[p, pn, t] * amount
            * tables["supplier"].var()[s, n] * tables["nation"].var()[n, r, nm]
            * tables["orders"].var()[o, c, d, pr] * Y[d, y])
    return ep.sum((pn, p, t, s, n, r, o, ln, sd, m, c, d, pr), body), \
        "pn p t s n r nm o ln sd m c d pr y"


def q9(tables, color: str = "green") -> dict:
    L, P = tables["lineitem"], tables["part"]
    Y, years = _year_mapping(tables, "orders", "o_orderdate")
    profit = _kernel(tables, _q9_expr)(
        Lr=L.tensor("rev", order=LINE_BY_PART), Lq=L.tensor("l_quantity", order=LINE_BY_PART),
        P=P.tensor(order=PART_BY_NAME), S=tables["supplier"].tensor(),
        N=tables["nation"].tensor(), O=tables["orders"].tensor(), Y=Y,
        PS=tables["partsupp"].tensor("ps_supplycost"),
        G=_keys(P, "p_name").like(f"%{color}%", sparse=True))
    out = ep.decode(profit, [_keys(tables["nation"], "n_name"), years],
                    columns=["nation", "o_year"], value="sum_profit")
    rows = np.lexsort((-out["o_year"], out["nation"]))
    return {k: v[rows] for k, v in out.items()}


# ---- Q7 -----------------------------------------------------------------------------

def _q7_expr(tables):
    o, ln, p, s, sd, m, y, n1, r1, nm1, c, d, pr, n2, g, r2, nm2 = ep.indices(
        "o ln p s sd m y n1 r1 nm1 c d pr n2 g r2 nm2")
    Y, N = ep.tensor("Y", 2, "csr"), tables["nation"]
    pair = (ep.eq(n1, "a") & ep.eq(n2, "b")) | (ep.eq(n1, "b") & ep.eq(n2, "a"))
    body = (N.var(name="Na")[n1, r1, nm1] * pair
            * tables["supplier"].var(order=SUPP_BY_NATION)[s, n1]
            * tables["lineitem"].var("rev", order=LINE_BY_SUPP)[o, ln, p, s, sd, m]
            * ep.between(sd, "dlo", "dhi") * Y[sd, y] * tables["orders"].var()[o, c, d, pr]
            * tables["customer"].var()[c, n2, g] * N.var(name="Nb")[n2, r2, nm2])
    return ep.sum((o, ln, p, s, sd, m, n1, r1, c, d, pr, n2, g, r2), body), \
        "n1 r1 nm1 s o ln p sd m y c d pr n2 g r2 nm2"


def q7(tables, nation1: str = "FRANCE", nation2: str = "GERMANY") -> dict:
    """Supplier first: the pair's nations (`(n1 = a AND n2 = b) OR (n1 = b AND n2 =
    a)` on the nation codes, its implied n1 in {a, b} a skip), their suppliers (supplier by nation),
    then each supplier's lines (lineitem in the order added at load for it,
    Table.add_order) and their orders and customers, so that only the lines of
    the two nations' suppliers are visited."""
    names = tables["nation_names"]
    a, b = (int(np.flatnonzero(names == x)[0]) for x in (nation1, nation2))
    L = tables["lineitem"]
    dlo, dhi = _keys(L, "l_shipdate").codes_between(days("1995-01-01"), days("1997-01-01"))
    Y, years = _year_mapping(tables, "lineitem", "l_shipdate")
    nation = tables["nation"].tensor()
    vol = _kernel(tables, _q7_expr)(
        Na=nation, Nb=nation, a=a, b=b, S=tables["supplier"].tensor(order=SUPP_BY_NATION),
        L=L.tensor("rev", order=LINE_BY_SUPP), Y=Y, O=tables["orders"].tensor(),
        C=tables["customer"].tensor(), dlo=dlo, dhi=dhi)
    n_name = _keys(tables["nation"], "n_name")
    return ep.decode(vol, [n_name, years, n_name],
                     columns=["supp_nation", "l_year", "cust_nation"], value="revenue",
                     order_by=["supp_nation", "cust_nation", "l_year"])


# ---- Q12 ----------------------------------------------------------------------------

def _q12_expr(tables):
    o, ln, p, s, sd, m, c, d, pr = ep.indices("o ln p s sd m c d pr")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    C, R, S = (L.var(v, order=LINE_BY_MODE, name=n)[at] for v, n in Q12_DATES)
    late = (C < R) & (S < C) & (R >= "lo") & (R < "hi")
    Modes = ep.tensor("Modes", 1, "csf")
    body = Modes[m] * late * tables["orders"].var()[o, c, d, pr]
    return ep.sum((o, ln, p, s, sd, c, d), body), "m o ln p s sd c d pr"


def q12(tables, mode1: str = "MAIL", mode2: str = "SHIP", date: str = "1994-01-01") -> dict:
    L, O = tables["lineitem"], tables["orders"]
    modes = _keys(L, "l_shipmode")
    counts = _kernel(tables, _q12_expr)(
        **{n: L.tensor(v, order=LINE_BY_MODE) for v, n in Q12_DATES}, O=O.tensor(), Modes=modes.mask(lambda v: (v == mode1) | (v == mode2), sparse=True),
        lo=days(date), hi=days(f"{int(date[:4]) + 1}{date[4:]}"))
    high = np.isin(_keys(O, "o_orderpriority").values(), HIGH)
    hi, lo = counts[:, high].sum(axis=1), counts[:, ~high].sum(axis=1)
    keep = (hi + lo) > 0
    return {"l_shipmode": modes.values()[keep], "high_line_count": hi[keep].astype(np.int64),
            "low_line_count": lo[keep].astype(np.int64)}


# ---- Q19 ----------------------------------------------------------------------------

def _q19_expr(tables):
    o, ln, p, s, sd, m = ep.indices("o ln p s sd m")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    qty = L.var("l_quantity", order=LINE_BY_PART, name="Lq")[at]
    instr = L.var("instr", order=LINE_BY_PART, name="Li")[at]
    PS, PB, PC = (ep.tensor(n, 1) for n in ("PS", "PB", "PC"))

    def clause(k):
        container = _is(PC[p], f"c{k}0")
        for j in range(1, 4):
            container = container | _is(PC[p], f"c{k}{j}")
        return (_is(instr, "ins") & (ep.between(m, "m1", "m1e") | ep.between(m, "m2", "m2e"))
                & _is(PB[p], f"b{k}") & container & (qty >= f"q{k}") & (qty <= f"q{k}h")
                & (PS[p] >= 1) & (PS[p] <= f"z{k}"))
    rev = L.var("rev", order=LINE_BY_PART, name="Lr")[at]
    body = rev * (clause(1) | clause(2) | clause(3))
    return ep.sum(at, body), "p s o ln sd m"


def q19(tables, brand1: str = "Brand#12", brand2: str = "Brand#23", brand3: str = "Brand#34",
        quantity1: int = 1, quantity2: int = 10, quantity3: int = 20,
        containers1=CONTAINERS[0], containers2=CONTAINERS[1],
        containers3=CONTAINERS[2]) -> dict:
    """Q19 with `|` over its three clauses (bench/tpch/q19.py) on the one load: the
    instruction and quantity value columns of lineitem, the part's attributes
    carried by part code (Keys.carried, made at load), the modes a skip over m.
    Lineitem is read in its part order (the loop over parts first): the OR of
    the clauses' part tests is tested once per part, and only the lines of the
    parts that pass it are walked."""
    L, attrs = tables["lineitem"], tables["part_attrs"]
    modes = _keys(L, "l_shipmode")
    params = {"ins": _code(tables["instr"], "DELIVER IN PERSON")}
    for j, mode in enumerate(("AIR", "AIR REG"), 1):
        c = _code(modes, mode)
        params.update({f"m{j}": c, f"m{j}e": c + 1})
    for k, (brand, qty, conts) in enumerate(zip(
            (brand1, brand2, brand3), (quantity1, quantity2, quantity3),
            (containers1, containers2, containers3)), 1):
        params.update({f"b{k}": _code(tables["brands"], brand), f"q{k}": qty,
                       f"q{k}h": qty + 10, f"z{k}": SIZES[k - 1]})
        params.update({f"c{k}{j}": _code(tables["containers"], c) for j, c in enumerate(conts)})
    rev = _kernel(tables, _q19_expr)(
        Lr=L.tensor("rev", order=LINE_BY_PART), Lq=L.tensor("l_quantity", order=LINE_BY_PART),
        Li=L.tensor("instr", order=LINE_BY_PART),
        PS=attrs["p_size"], PB=attrs["brand"], PC=attrs["container"], **params)
    return {"revenue": np.array([float(rev)])}


QUERIES = {"Q5": q5, "Q3": q3, "Q6": q6, "Q9": q9, "Q7": q7, "Q12": q12, "Q19": q19,
           "Q4": q4, "Q10": q10, "Q14": q14, "Q13": q13, "Q18": q18, "Q1": q1, "Q17": q17,
           "Q11": q11, "Q16": q16, "Q22": q22, "Q21": q21}
load = __import__("bench.tpch.more", fromlist=["extend"]).extend(load, QUERIES)  # Q8, Q2...

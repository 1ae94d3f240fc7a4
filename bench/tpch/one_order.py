"""The bench's queries on the tables with no key order added: lineitem read in
its storage order (order, line) and its one secondary order (part first). On
request the load adds by hand an order keyed by receipt date (a value column:
Table.add_order, made at load) and an order by ship date (its keys permuted:
Q15's quarter, Q14's month); the queries read them when present.

    tables = load(cols)                  tables.load(cols, added_orders=False): one
                                         secondary order a table; by_receipt=True
                                         adds lineitem by receipt date, by_ship=True
                                         by ship date (bench/tpch/orders_ab.py)
    QUERIES[name](tables, **params)      Q7 and Q12 written without an added key
                                         order; the others as bench/tpch/tables.py

`python -m bench tpch --load-once --tables --one-order` runs them. Q7 walks
orders in storage order and keeps those of the two nations' customers: a
sparse filter over customer codes, made per call by a kernel over the
customer table (the customers whose nation is one of the two), is probed at
each order's customer and skips the lines of the others (until session 39 it
walked lineitem by part and supplier, keeping the two nations' suppliers'
lines: 1.5-2.0x DuckDB; docs/performance.md, "Q7 on the storage orders").
Q12 reads the year's receipt dates as one range of the receipt order's first
level (a search and a stop), testing the lines below it: written as comparisons
of the date columns, the receipt date's become that range (expr.keyed;
`q12_codes` writes the range by hand on the codes); `q12_walk` (used on
tables without that order) walks every line in storage order: the two ship
modes a marker probe and the three dates' comparisons one test of each line
(Tuning.hoist_row_tests), which at lineitem's last level guards the line's
update of the output (Tuning.guard_leaves). What an added key order would
give them instead: docs/performance.md, "TPC-H on tables loaded once".
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch import tables as shared
from bench.tpch.q12 import HIGH
from bench.tpch.q15 import LINE_BY_SHIP
from bench.tpch.queries import days
from bench.tpch.tables import Q12_DATES, _kernel, _keys, _year_mapping

# lineitem keyed by its receipt date, then its key columns in storage order (Q12)
LINE_BY_RECEIPT = ("l_receiptdate", "l_orderkey", "l_linenumber", "l_partkey", "l_suppkey",
                   "l_shipdate", "l_shipmode")


def _customers_expr(tables):
    c, n2, g = ep.indices("c n2 g")
    two = ep.eq(n2, "a") | ep.eq(n2, "b")        # the two nations' codes: a skip
    return ep.sum((n2, g), tables["customer"].var()[c, n2, g] * two), "c n2 g"


def _q7_expr(tables):
    o, ln, p, s, sd, m, y, n1, r1, nm1, c, d, pr, n2, g, r2, nm2 = ep.indices(
        "o ln p s sd m y n1 r1 nm1 c d pr n2 g r2 nm2")
    NP, Y = ep.tensor("NP", 2, "csr"), ep.tensor("Y", 2, "csr")
    Ck = ep.tensor("Ck", 1, ep.Format(["compressed"]))
    N = tables["nation"]
    body = (Ck[c] * N.var(name="Na")[n1, r1, nm1] * NP[n2, n1]     # out: nm1, y, nm2
            * tables["supplier"].var()[s, n1] * tables["lineitem"].var("rev")[o, ln, p, s, sd, m]
            * ep.between(sd, "dlo", "dhi") * Y[sd, y] * tables["orders"].var()[o, c, d, pr]
            * tables["customer"].var()[c, n2, g] * N.var(name="Nb")[n2, r2, nm2])
    return ep.sum((o, ln, p, s, sd, m, n1, r1, c, d, pr, n2, g, r2), body), \
        "o c d pr n2 g r2 nm2 ln p s n1 r1 nm1 sd m y"


def q7(tables, nation1: str = "FRANCE", nation2: str = "GERMANY") -> dict:
    """Q7 on the storage orders, orders first: the customers of the two nations
    a sparse filter at c (made per call by a kernel over the customer table, the
    two nations `n2 = a OR n2 = b`), probed at each order's customer, so
    that only those orders' lines are read (each located under its order:
    lineitem's storage order); the nation pair, a filter over pairs of nation
    keys (Keys.pairs: `(n1 = a AND n2 = b) OR (n1 = b AND n2 = a)`, csr over
    the customer's nation), is then a marker probe of each line's supplier.
    No order is added to any table, no Tensor built by hand. (Written as that
    predicate in the kernel, as tables.py's Q7 is, it gives the same rows at
    3.3-4.0x DuckDB rather than 23-28x: docs/performance.md, "Q7's nation
    pair as predicates".)"""
    names = tables["nation_names"]              # by nation key code
    a, b = (int(np.flatnonzero(names == x)[0]) for x in (nation1, nation2))
    keys = _keys(tables["nation"], "n_nationkey")
    ka, kb = keys.values()[[a, b]]
    pair = keys.pairs(keys, lambda x, y: ((x == ka) & (y == kb)) | ((x == kb) & (y == ka)))
    Ck = _kernel(tables, _customers_expr, output=ep.Format(["compressed"]))(
        C=tables["customer"].tensor(), a=a, b=b)
    L = tables["lineitem"]
    dlo, dhi = _keys(L, "l_shipdate").codes_between(days("1995-01-01"), days("1997-01-01"))
    Y, years = _year_mapping(tables, "lineitem", "l_shipdate")
    nation = tables["nation"].tensor()
    vol = _kernel(tables, _q7_expr)(
        Ck=Ck, Na=nation, Nb=nation, NP=pair, S=tables["supplier"].tensor(),
        L=L.tensor("rev"), Y=Y, O=tables["orders"].tensor(),
        C=tables["customer"].tensor(), dlo=dlo, dhi=dhi)
    n_name = _keys(tables["nation"], "n_name")
    return ep.decode(vol, [n_name, years, n_name],
                     columns=["supp_nation", "l_year", "cust_nation"], value="revenue",
                     order_by=["supp_nation", "cust_nation", "l_year"])


def _q12_expr(tables):
    o, ln, p, s, sd, m, c, d, pr = ep.indices("o ln p s sd m c d pr")
    L = tables["lineitem"]
    at = (o, ln, p, s, sd, m)
    C, R, S = (L.var(v, name=n)[at] for v, n in Q12_DATES)
    late = (C < R) & (S < C) & (R >= "lo") & (R < "hi")
    Modes = ep.tensor("Modes", 1, "csf")
    body = Modes[m] * late * tables["orders"].var()[o, c, d, pr]
    return ep.sum((o, ln, p, s, sd, c, d), body), "o c d pr ln p s sd m"


def _q12_expr_by_receipt(tables):
    r, o, ln, p, s, sd, m, c, d, pr = ep.indices("r o ln p s sd m c d pr")
    L = tables["lineitem"]
    at = (r, o, ln, p, s, sd, m)
    C, R, S = (L.var(v, order=LINE_BY_RECEIPT, name=n)[at] for v, n in Q12_DATES)
    late = (C < R) & (S < C) & (R >= "lo") & (R < "hi")      # as q12_walk writes it
    Modes = ep.tensor("Modes", 1, "csf")
    body = Modes[m] * late * tables["orders"].var()[o, c, d, pr]
    return ep.sum((r, o, ln, p, s, sd, c, d), body), "r o c d pr ln p s sd m"


def _q12_expr_by_codes(tables):
    r, o, ln, p, s, sd, m, c, d, pr = ep.indices("r o ln p s sd m c d pr")
    L = tables["lineitem"]
    at = (r, o, ln, p, s, sd, m)
    C, R, S = (L.var(v, order=LINE_BY_RECEIPT, name=n)[at] for v, n in Q12_DATES)
    Modes = ep.tensor("Modes", 1, "csf")
    body = (ep.between(r, "rlo", "rhi") * Modes[m] * ((C < R) & (S < C))
            * tables["orders"].var()[o, c, d, pr])
    return ep.sum((r, o, ln, p, s, sd, c, d), body), "r o c d pr ln p s sd m"


def q12(tables, mode1: str = "MAIL", mode2: str = "SHIP", date: str = "1994-01-01") -> dict:
    """Q12 on lineitem's order keyed by receipt date (when the load made it),
    its WHERE written on the date columns as q12_walk writes it: the receipt
    variable is that order's keyed column (Table.var), so its range is one
    range of codes of the first level (a search and a stop, expr.keyed), the
    lines below it tested, and the order's customer, date and priority read
    below those tests (expr.sink: only at the lines that pass); else on the
    storage order."""
    L, O = tables["lineitem"], tables["orders"]
    if LINE_BY_RECEIPT not in L.orders:
        return q12_walk(tables, mode1, mode2, date)
    modes = _keys(L, "l_shipmode")
    counts = _kernel(tables, _q12_expr_by_receipt)(
        **{n: L.tensor(v, order=LINE_BY_RECEIPT) for v, n in Q12_DATES}, O=O.tensor(),
        Modes=modes.mask(lambda v: (v == mode1) | (v == mode2), sparse=True),
        lo=days(date), hi=days(f"{int(date[:4]) + 1}{date[4:]}"))
    return _q12_rows(tables, modes, counts)


def q12_codes(tables, mode1: str = "MAIL", mode2: str = "SHIP",
              date: str = "1994-01-01") -> dict:
    """Q12 with the receipt range written by hand on the order's codes
    (`value_keys(order).codes_between`, `ep.between`): what q12 compiles to."""
    L, O = tables["lineitem"], tables["orders"]
    modes = _keys(L, "l_shipmode")
    rlo, rhi = L.value_keys(LINE_BY_RECEIPT).codes_between(
        days(date), days(f"{int(date[:4]) + 1}{date[4:]}"))
    counts = _kernel(tables, _q12_expr_by_codes)(
        **{n: L.tensor(v, order=LINE_BY_RECEIPT) for v, n in Q12_DATES}, O=O.tensor(),
        Modes=modes.mask(lambda v: (v == mode1) | (v == mode2), sparse=True),
        rlo=rlo, rhi=rhi)
    return _q12_rows(tables, modes, counts)


def q12_walk(tables, mode1: str = "MAIL", mode2: str = "SHIP",
             date: str = "1994-01-01") -> dict:
    """Q12 on lineitem's storage order: every line tested once."""
    L, O = tables["lineitem"], tables["orders"]
    modes = _keys(L, "l_shipmode")
    counts = _kernel(tables, _q12_expr)(
        **{n: L.tensor(v) for v, n in Q12_DATES}, O=O.tensor(),
        Modes=modes.mask(lambda v: (v == mode1) | (v == mode2), sparse=True),
        lo=days(date), hi=days(f"{int(date[:4]) + 1}{date[4:]}"))
    return _q12_rows(tables, modes, counts)


def _q12_rows(tables, modes, counts) -> dict:
    high = np.isin(_keys(tables["orders"], "o_orderpriority").values(), HIGH)
    hi, lo = counts[:, high].sum(axis=1), counts[:, ~high].sum(axis=1)
    keep = (hi + lo) > 0
    return {"l_shipmode": modes.values()[keep], "high_line_count": hi[keep].astype(np.int64),
            "low_line_count": lo[keep].astype(np.int64)}


def load(cols: dict, by_receipt: bool = False, by_ship: bool = False) -> dict:
    """The tables with no order added (tables.load(cols, added_orders=False)):
    lineitem in its storage order and its one secondary order (part first),
    every query on them (Q12, Q14 and Q15 walk lineitem in storage order).
    With `by_receipt` lineitem's order keyed by its receipt date
    (LINE_BY_RECEIPT, Table.add_order with a value column first) and its
    three dates' copies in it, made at load; with `by_ship` lineitem ship
    date first (q15.LINE_BY_SHIP, a permutation of its keys) and its revenue's
    copy in it (Q15)."""
    tables = shared.load(cols, added_orders=False)
    L = tables["lineitem"]
    if by_receipt:
        L.add_order(LINE_BY_RECEIPT)
        for value, _ in Q12_DATES:
            L.tensor(value, order=LINE_BY_RECEIPT)
    if by_ship:
        L.add_order(LINE_BY_SHIP)
        L.tensor("rev", order=LINE_BY_SHIP)
    return tables


QUERIES = {**shared.QUERIES, "Q7": q7, "Q12": q12}

"""TPC-H Q12 (shipping modes and order priority) written as docs/relational.md
writes column comparisons, on the tries of bench/tpch/queries.py (`build`,
TRIES["Q12"]).

    q12(tries, mode1="MAIL", mode2="SHIP", date="1994-01-01")   one warm query

The line's three dates are value columns of one relation (one structure), and
its WHERE is written as it is in SQL: `C < R`, `S < C` and the receipt-date
range are comparisons of those columns, joined with `&` into one row predicate
that the kernel tests entry by entry in its loop (expr.compare, expr.logic);
the ship modes are a sparse 0/1 vector over the mode codes (a skip). The result
is over (mode, priority); the high and low line counts are its sums over the
priorities of each class.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.queries import _kernel, days

HIGH = ("1-URGENT", "2-HIGH")


def predicates_q12(tries, mode1: str, mode2: str, date: str) -> dict:
    """The two ship modes (a sparse mask over the mode codes) and the receipt
    dates [lo, hi) of the year from `date`, as days (parameters of the row
    predicate)."""
    modes = tries["L12l_commitdate"].keys[0].mask(lambda v: (v == mode1) | (v == mode2),
                                                  sparse=True)
    return {"Modes": modes, "lo": days(date), "hi": days(f"{int(date[:4]) + 1}{date[4:]}")}


def q12_expr(tries):
    m, o, n, p = ep.indices("m o n p")
    C, R, S = (tries[f"L12{c}"].var(v) for c, v in (("l_commitdate", "C"),
                                                    ("l_receiptdate", "R"),
                                                    ("l_shipdate", "S")))
    late = ((C[m, o, n] < R[m, o, n]) & (S[m, o, n] < C[m, o, n])
            & (R[m, o, n] >= "lo") & (R[m, o, n] < "hi"))
    Modes = ep.tensor("Modes", 1, "csf")
    body = Modes[m] * late * tries["O12"].var("O12")[o, p]
    return ep.sum((o, n), body), "m o p n"


def q12(tries, mode1: str = "MAIL", mode2: str = "SHIP", date: str = "1994-01-01") -> dict:
    """l_shipmode, high_line_count, low_line_count over the lines of the two modes
    received in the year from `date`, late (committed before receipt) and
    shipped before their commit date."""
    kern = _kernel(tries, q12_expr)
    L = {v: tries[f"L12{c}"].tensor for c, v in (("l_commitdate", "C"),
                                                 ("l_receiptdate", "R"),
                                                 ("l_shipdate", "S"))}
    counts = kern(**L, O12=tries["O12"].tensor, **predicates_q12(tries, mode1, mode2, date))
    prio = tries["O12"].keys[1].values()
    high = np.isin(prio, HIGH)
    modes = tries["L12l_commitdate"].keys[0].values()
    hi, lo = counts[:, high].sum(axis=1), counts[:, ~high].sum(axis=1)
    keep = (hi + lo) > 0
    return {"l_shipmode": modes[keep], "high_line_count": hi[keep].astype(np.int64),
            "low_line_count": lo[keep].astype(np.int64)}

"""TPC-H Q7 (volume shipping between two nations) written with ep.relation,
ep.Keys and ep.decode, on the tries of bench/tpch/queries.py (`build`, TRIES["Q7"]).

    q7(tries, nation1="FRANCE", nation2="GERMANY")   one warm query

The nation pair is written as SQL writes it, `(n1 = a AND n2 = b) OR (n1 = b
AND n2 = a)` over nation key codes (expr.logic): its implied `n1 in {a, b}` is
a skip over the suppliers' nations (the suppliers of the other 23 nations are
skipped), its implied `n2 in {a, b}` a test of each order's customer nation,
which guards the levels below it, and the OR itself is tested where both are
bound. The ship-date range is a skip over L7's date level; the year
of a ship date is a mapping (Keys.mapping). Result: supp_nation, cust_nation,
l_year, revenue, ordered by the first three.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.queries import _kernel, days

Q7_TRIES = ("S7", "L7", "O7", "C7")


def predicates_q7(tries, nation1: str, nation2: str) -> dict:
    """Q7's predicates: the nation pair's two codes (a, b: the kernel tests
    `(n1 = a AND n2 = b) OR (n1 = b AND n2 = a)`), and the ship dates of 1995
    and 1996 as codes [dlo, dhi) (a skip)."""
    names = tries["nation_names"]
    a, b = (int(np.flatnonzero(names == x)[0]) for x in (nation1, nation2))
    dlo, dhi = tries["L7"].keys[1].codes_between(days("1995-01-01"), days("1997-01-01"))
    return {"a": a, "b": b, "dlo": dlo, "dhi": dhi}


def q7_expr(tries):
    n1, nm1, s, sd, y, o, c, n2, nm2 = ep.indices("n1 nm1 s sd y o c n2 nm2")
    T = {k: tries[k].var(k) for k in Q7_TRIES}
    Y = ep.tensor("Y7", 2, "csr")
    Na, Nb = tries["N7"].var("Na"), tries["N7"].var("Nb")
    pair = (ep.eq(n1, "a") & ep.eq(n2, "b")) | (ep.eq(n1, "b") & ep.eq(n2, "a"))
    body = (pair * Na[n1, nm1] * T["S7"][n1, s] * T["L7"][s, sd, o]
            * ep.between(sd, "dlo", "dhi") * Y[sd, y] * T["O7"][o, c] * T["C7"][c, n2]
            * Nb[n2, nm2])
    return ep.sum((n1, s, sd, o, c, n2), body), "n1 nm1 s sd y o c n2 nm2"


def q7(tries, nation1: str = "FRANCE", nation2: str = "GERMANY") -> dict:
    """supp_nation, cust_nation, l_year, revenue: the lines shipped in 1995 and
    1996 by suppliers of one nation of the pair to customers of the other."""
    kern = _kernel(tries, q7_expr)
    n7 = tries["N7"].tensor
    vol = kern(**{k: tries[k].tensor for k in Q7_TRIES}, Na=n7, Nb=n7, Y7=tries["Y7"],
               **predicates_q7(tries, nation1, nation2))
    names = tries["N7"].keys[1]
    return ep.decode(vol, [names, tries["years7"], names],
                     columns=["supp_nation", "l_year", "cust_nation"], value="revenue",
                     order_by=["supp_nation", "cust_nation", "l_year"])

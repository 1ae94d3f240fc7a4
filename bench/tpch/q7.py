"""TPC-H Q7 (volume shipping between two nations) written with ep.relation,
ep.Keys and ep.decode, on the tries of bench/tpch/queries.py (`build`, TRIES["Q7"]).

    q7(tries, nation1="FRANCE", nation2="GERMANY")   one warm query

The nation pair is a 0/1 relation NP[n1, n2] over nation key codes (both
orders of the pair), stored sparse in both levels: its rows are the suppliers'
nations walked (the suppliers of the other 23 nations are skipped), and its
entry under each order's customer nation is a marker probe, which guards the
levels below it. The ship-date range is a skip over L7's date level; the year
of a ship date is a mapping (Keys.mapping). Result: supp_nation, cust_nation,
l_year, revenue, ordered by the first three.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.queries import _kernel, days

Q7_TRIES = ("S7", "L7", "O7", "C7")


def predicates_q7(tries, nation1: str, nation2: str) -> dict:
    """Q7's predicates: the nation pair as a sparse 0/1 relation over nation key
    codes, and the ship dates of 1995 and 1996 as codes [dlo, dhi) (a skip)."""
    names = tries["nation_names"]
    a, b = (int(np.flatnonzero(names == x)[0]) for x in (nation1, nation2))
    pairs = np.array(sorted({(a, b), (b, a)})).T
    pair = ep.Tensor.from_coords(pairs, np.ones(pairs.shape[1]), (len(names),) * 2, "dcsr")
    dlo, dhi = tries["L7"].keys[1].codes_between(days("1995-01-01"), days("1997-01-01"))
    return {"NP": pair, "dlo": dlo, "dhi": dhi}


def q7_expr(tries):
    n1, nm1, s, sd, y, o, c, n2, nm2 = ep.indices("n1 nm1 s sd y o c n2 nm2")
    T = {k: tries[k].var(k) for k in Q7_TRIES}
    NP, Y = ep.tensor("NP", 2, "dcsr"), ep.tensor("Y7", 2, "csr")
    Na, Nb = tries["N7"].var("Na"), tries["N7"].var("Nb")
    body = (NP[n1, n2] * Na[n1, nm1] * T["S7"][n1, s] * T["L7"][s, sd, o]
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

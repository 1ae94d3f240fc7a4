"""TPC-H Q19 (discounted revenue) written with `|` over its three clauses, as SQL
writes it, on the tries of bench/tpch/queries.py (`build`, TRIES["Q19"]).

    q19(tries, brand1="Brand#12", brand2="Brand#23", brand3="Brand#34",
        quantity1=1, quantity2=10, quantity3=20)          one warm query

Each clause is an AND of the line's tests (ship instruction and modes: tests of
L19's index codes; its quantity: a value column) and its part's (brand,
container, size: value columns over the part codes). The OR (expr.logic) keeps
the tests every clause repeats (instruction, modes) as factors of their own,
skips over L19's first levels, and joins the rest into one row predicate over
L19's structure that reads each part's values at the line's part: one test per
line, and a line that passes two clauses counts once. The container lists are
parameters too (`containers1`...), so that clauses can be made to overlap.
"""
from __future__ import annotations

import numpy as np

import etchpy as ep
from bench.tpch.queries import _kernel

CONTAINERS = (("SM CASE", "SM BOX", "SM PACK", "SM PKG"),
              ("MED BAG", "MED BOX", "MED PKG", "MED PACK"),
              ("LG CASE", "LG BOX", "LG PACK", "LG PKG"))
SIZES = (5, 10, 15)


def _code(keys: ep.Keys, value) -> int:
    """The code of `value`, or -1 (no part has it) when the coding lacks it."""
    codes, present = keys.code(np.array([value]), missing="mask")
    return int(codes[0]) if present[0] else -1


def predicates_q19(tries, brands, quantities, containers) -> dict:
    """The parameters of Q19's tests: the instruction's code range, the two modes'
    codes, and per clause its brand's code, its containers' codes, its quantity
    range and largest size."""
    instr, modes = tries["L19rev"].keys[0], tries["L19rev"].keys[1]
    i = _code(instr, "DELIVER IN PERSON")
    out = {"ilo": i, "ihi": i + 1}
    for j, mode in enumerate(("AIR", "AIR REG"), 1):
        c = _code(modes, mode)
        out.update({f"m{j}": c, f"m{j}e": c + 1})
    for k, (brand, qty, conts) in enumerate(zip(brands, quantities, containers), 1):
        out.update({f"b{k}": _code(tries["brands"], brand), f"q{k}": qty,
                    f"q{k}h": qty + 10, f"z{k}": SIZES[k - 1]})
        out.update({f"c{k}{j}": _code(tries["containers"], c) for j, c in enumerate(conts)})
    return out


def _is(x, name):
    """x = the parameter `name`."""
    return (x >= name) & (x <= name)


def q19_expr(tries):
    s, m, p, o, n = ep.indices("s m p o n")
    Q, Rev = tries["L19l_quantity"].var("Q"), tries["L19rev"].var("Rev")
    PS, PB, PC = (tries[f"P19{c}"].var(v) for c, v in (("p_size", "PS"), ("brand", "PB"),
                                                       ("container", "PC")))
    qty = Q[s, m, p, o, n]

    def clause(k):
        container = _is(PC[p], f"c{k}0")
        for j in range(1, 4):
            container = container | _is(PC[p], f"c{k}{j}")
        return (ep.between(s, "ilo", "ihi") & (ep.between(m, "m1", "m1e")
                                               | ep.between(m, "m2", "m2e"))
                & _is(PB[p], f"b{k}") & container & (qty >= f"q{k}") & (qty <= f"q{k}h")
                & (PS[p] >= 1) & (PS[p] <= f"z{k}"))
    body = Rev[s, m, p, o, n] * (clause(1) | clause(2) | clause(3))
    return ep.sum((s, m, p, o, n), body), "s m p o n"


def q19(tries, brand1: str = "Brand#12", brand2: str = "Brand#23", brand3: str = "Brand#34",
        quantity1: int = 1, quantity2: int = 10, quantity3: int = 20,
        containers1=CONTAINERS[0], containers2=CONTAINERS[1],
        containers3=CONTAINERS[2]) -> dict:
    """revenue: Σ l_extendedprice · (1 - l_discount) over the lines delivered in
    person by air whose part and quantity pass one of the three clauses."""
    kern = _kernel(tries, q19_expr)
    params = predicates_q19(tries, (brand1, brand2, brand3), (quantity1, quantity2, quantity3),
                            (containers1, containers2, containers3))
    rev = kern(Q=tries["L19l_quantity"].tensor, Rev=tries["L19rev"].tensor,
               PS=tries["P19p_size"].tensor, PB=tries["P19brand"].tensor,
               PC=tries["P19container"].tensor, **params)
    return {"revenue": np.array([float(rev)])}

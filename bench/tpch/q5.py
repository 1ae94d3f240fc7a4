"""TPC-H Q5 as a sum of products of sparse relations, against DuckDB.

    python -m bench.tpch.q5 [--sf 0.1] [--rounds N] [--json PATH] [--explain]
    python -m bench.tpch.q5 --sf 0.01 --fixture tests/end_to_end/data/tpch_q5_sf0.01.npz
        (the same as python -m bench.tpch.fixture PATH)

    revenue[n] = Σ_{o,c,s} O[o,c]·C[c,n]·L[o,s]·S[s,n]·R[n]

O[o,c] = 1 for the orders of 1994 (order o placed by customer c), C[c,n] = 1 for
customer c of nation n, L[o,s] = Σ extendedprice·(1 - discount) over order o's
lines supplied by s, S[s,n] = 1 for supplier s of nation n, R[n] = 1 for the
nations of region ASIA; all csr (R a compressed vector), the filters applied in
numpy. The o index spans every order key (600k at sf 0.1).

One thread, one process. Timed alternating call by call, after a warm-up:
(a) ep.compile's defaults, (b) optimize=False as written, (c) the best loop order
by hand (every order with optimize=False, the fastest kept), (d) DuckDB's SQL Q5
on one thread over the same columns (the query alone). Reports medians and the
ratios default/best-hand, default/optimize=False and default/duckdb1.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import itertools
import json

import numpy as np

import etchpy as ep
from bench.timing import fmt_ratio, fmt_time, timed
from bench.tpch import data
from bench.tpch.hand import answer, expression, relations  # noqa: F401  (joins reads q5.relations)

SQL = """
SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey AND r_name = 'ASIA'
  AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'
GROUP BY n_name ORDER BY revenue DESC
"""


def duckdb_answer(con) -> dict:
    return {name: float(v) for name, v in con.execute(SQL).fetchall()}


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.isclose(a[k], b[k], rtol=1e-9) for k in a)


def best_order(expr, order_idx, rel, rounds=3):
    """The fastest loop order with optimize=False: (order names, kernel, median s)."""
    best = None
    for perm in itertools.permutations(order_idx):
        try:
            k = ep.compile(expr, optimize=False, order=perm)
        except ep.OrderError:        # walks a relation against its storage order
            continue
        k(**rel)
        t = float(np.median([timed(lambda: k(**rel))[0] for _ in range(rounds)]))
        if best is None or t < best[2]:
            best = (tuple(ix.name for ix in perm), k, t)
    return best


def run(sf: float, rounds: int) -> dict:
    cols = data.tables(sf)
    rel = relations(cols)
    expr, idx = expression()
    con = data.duckdb_with(cols, threads=1)
    want = duckdb_answer(con)
    default = ep.compile(expr)
    plain = ep.compile(expr, optimize=False)
    hand_order, hand, _ = best_order(expr, idx, rel)
    calls = {"default": lambda: default(**rel), "optimize=False": lambda: plain(**rel),
             "best hand": lambda: hand(**rel), "duckdb1": lambda: con.execute(SQL).fetchall()}
    ok = {k: same(answer(f(), cols), want) for k, f in calls.items() if k != "duckdb1"}
    times = {k: [] for k in calls}
    for _ in range(rounds):
        for k, f in calls.items():
            times[k].append(timed(f)[0])
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {"sf": sf, "rounds": rounds, "versions": data.versions(), "medians_s": med,
            "best_hand_order": hand_order, "answers_agree": ok,
            "ratios": {"default/best hand": med["default"] / med["best hand"],
                       "default/optimize=False": med["default"] / med["optimize=False"],
                       "default/duckdb1": med["default"] / med["duckdb1"]},
            "plan": default.explain()}


def write_fixture(path, sf: float = 0.01) -> dict:
    """The test fixture (bench/tpch/fixture.py: every query's columns and DuckDB's
    answers) at `path`; returns DuckDB's Q5 answer for ASIA, 1994."""
    from bench.tpch import fixture
    rows = fixture.write(path, sf)["Q5"][0]["rows"]
    return {name: v for name, v in rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tpch.q5", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", help="write the results there")
    ap.add_argument("--explain", action="store_true", help="print the default's plan")
    ap.add_argument("--fixture", help="write the test fixture (columns and DuckDB's "
                    "answer at --sf) there and stop")
    args = ap.parse_args(argv)
    if args.fixture:
        print(write_fixture(args.fixture, args.sf))
        return 0
    r = run(args.sf, args.rounds)
    print(f"TPC-H Q5 sf {args.sf:g}, one thread, {args.rounds} alternating rounds "
          f"(duckdb {r['versions']['duckdb']}, tpch {r['versions']['duckdb_extension_tpch']})")
    for k, t in r["medians_s"].items():
        note = f"  order {','.join(r['best_hand_order'])}" if k == "best hand" else ""
        agree = "" if k == "duckdb1" else f"  answer {'ok' if r['answers_agree'][k] else 'WRONG'}"
        print(f"  {k:<16} {fmt_time(t):>10}{agree}{note}")
    for k, v in r["ratios"].items():
        print(f"  {k:<24} {fmt_ratio(v)}")
    if args.explain:
        print(r["plan"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v for k, v in r.items() if k != "plan"}, f, indent=1)
    return 0 if all(r["answers_agree"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Lineitem's added orders beside DuckDB: each query read in the order made for
it and by the walk of every line, alternated call by call in one process.

    python -m bench.tpch.orders_ab [--sf 1] [--rounds 7] [--queries Q12 Q14 Q15 Q1]

Loads the columns into DuckDB (one thread) and into etchpy once
(bench/tpch/one_order.py `load`: lineitem's storage and secondary orders,
plus its order keyed by receipt date and its order by ship date), then, per
query and parameter set, calls in turn: the query on its order (`order`), the
same query walking lineitem in storage order (`walk`: what a load without the
added order gives), and DuckDB. Thread CPU (`time.thread_time`) of each call;
prints the medians and DuckDB/etchpy for both forms, the answers compared with
DuckDB's, and `uptime`'s load before and after.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench.tpch import data, one_order, q15 as q15_mod
from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

# query -> (on its order, walking every line); Q1 reads no added order (a control)
FORMS = {
    "Q12": (one_order.q12, one_order.q12_walk),
    "Q14": (shared.QUERIES["Q14"], lambda t, **p: shared.QUERIES["Q14"](t, **p, walk=True)),
    "Q15": (q15_mod.q15, q15_mod.q15_walk),
    "Q1": (shared.QUERIES["Q1"], shared.QUERIES["Q1"]),
}


def _thread_ms(fn) -> float:
    c = time.thread_time()
    fn()
    return 1e3 * (time.thread_time() - c)


def _duck_rows(con, q, p) -> list:
    return [tuple(str(v) if hasattr(v, "isoformat") else v for v in r)
            for r in con.execute(q.sql(p)).fetchall()]


def run(sf: float, names, rounds: int, tables=None, con=None) -> list[dict]:
    """Per query and parameter set: the medians (thread CPU ms) of the three
    forms and whether both etchpy forms' answers equal DuckDB's. `tables` and
    `con` (a load and a DuckDB connection) are made when not given."""
    cols = data.tables(sf) if tables is None or con is None else None
    con = con or data.duckdb_with(cols, threads=1)
    tables = tables or one_order.load(cols, by_receipt=True, by_ship=True)
    out = []
    for name in names:
        q, (ordered, walk) = QUERIES[name], FORMS[name]
        for p in q.params:
            want = _duck_rows(con, q, p)
            calls = {"order": lambda p=p: ordered(tables, **p),
                     "walk": lambda p=p: walk(tables, **p),
                     "duckdb": lambda p=p: con.execute(q.sql(p)).fetchall()}
            right = all(same(rows_of(f(), q), want, q) for k, f in calls.items()
                        if k != "duckdb")
            times = {k: [] for k in calls}
            for _ in range(rounds):
                for k, f in calls.items():
                    times[k].append(_thread_ms(f))
            med = {k: float(np.median(v)) for k, v in times.items()}
            out.append({"query": name, "params": p, "correct": right, **med})
    return out


def report(rows: list[dict]) -> str:
    lines = [f"{'query':<6}{'order':>9}{'walk':>9}{'duckdb':>9}{'d/order':>9}{'d/walk':>9}"
             "  correct  params"]
    for r in rows:
        lines.append(f"{r['query']:<6}{r['order']:>9.2f}{r['walk']:>9.2f}{r['duckdb']:>9.2f}"
                     f"{r['duckdb'] / r['order']:>8.2f}x{r['duckdb'] / r['walk']:>8.2f}x"
                     f"  {str(r['correct']):<7}  "
                     + " ".join(f"{k}={v}" for k, v in r["params"].items()))
    return "\n".join(lines) + "\n(thread CPU ms, medians; order: on the added order, " \
                              "walk: lineitem's storage order)"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--queries", nargs="+", default=list(FORMS))
    args = ap.parse_args(argv)
    print("load before:", os.getloadavg())
    print(report(run(args.sf, args.queries, args.rounds)))
    print("load after:", os.getloadavg())


if __name__ == "__main__":
    main()

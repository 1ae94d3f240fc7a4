"""The relational section: TPC-H Q5, Q9, Q3, Q6, Q7, Q12, Q19 (and Q4, Q10, Q14, Q13,
Q18, Q1, Q17, Q11, Q16, Q22, Q21, Q8, Q2, Q20, Q15, on the shared tables only): etchpy against DuckDB, SQLite.

    python -m bench tpch --sf SF [--json PATH] [--rounds N] [--sqlite-rounds N]
                         [--queries Q5,Q9,Q3,Q6,Q7,Q12,Q19,Q4,Q10,Q14,Q13,Q18,Q1,Q17,Q11,Q16,Q22,Q21,Q8,Q2,Q20,Q15]
                         [--load-once [--tables] [--one-order] [--per-params]]

(--load-once: one load of the tables serves every query; bench/tpch/loaded.py;
--tables: that load is one ep.table per table, bench/tpch/tables.py; --one-order:
those tables with no key order added to lineitem (one keyed by its receipt
date instead), bench/tpch/one_order.py.)

Generates (or reads from the cache) the TPC-H columns at scale factor SF
(bench/tpch/data.py), then per query:

* build_ms: etchpy's table -> trie build of the query's relations from the
  columns (bench/tpch/queries.py: build), median of 3;
* etchpy_ms: the warm query (kernel compiled beforehand): predicates, the
  kernel call, decoding, ORDER BY and LIMIT, one thread;
* duckdb1_ms / duckdb_ms: the same SQL in DuckDB with one thread / its default
  threads, over tables holding the same columns;
* sqlite_ms: the SQL in SQLite (stdlib sqlite3, in memory, indexes on the join
  keys; bench/tpch/data.py: sqlite_with);
* correct: etchpy's rows equal DuckDB's for every parameter set (values up to
  float summation order);
* etchpy_cpu_ms, duckdb1_cpu_ms, sqlite_cpu_ms: the same calls' CPU time
  (time.process_time, all of the process's threads): on a loaded machine the
  wall times include waiting for a core, these do not.

Each round runs the query's three substitution parameter sets (queries.py),
each system called in turn for each set (alternating call by call); the times
are medians over all calls (SQLite joins only the first --sqlite-rounds
rounds). Writes a JSON list, one object per query, with the versions of DuckDB,
its tpch extension and SQLite.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import gc
import json
import time

import numpy as np

from bench.timing import timed
from bench.tpch import data
from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch.loaded import report_loaded, run_loaded
from bench.tpch.queries import build


def _clocks(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call, the collector paused."""
    gc.disable()
    try:
        w, c = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - w, time.process_time() - c
    finally:
        gc.enable()


def _rows(cursor_rows) -> list[tuple]:
    return [tuple(str(v) if hasattr(v, "isoformat") else v for v in r) for r in cursor_rows]


def _sql(con, text: str):
    return lambda: _rows(con.execute(text).fetchall())


def measure(query, cols, cons, rounds: int, sqlite_rounds: int) -> dict:
    """One query's JSON object (see the module docstring)."""
    build_s = float(np.median([timed(lambda: build(cols, (query.name,)))[0]
                               for _ in range(3)]))
    tries = build(cols, (query.name,))
    calls = []
    correct = True
    for p in query.params:
        etch = lambda p=p: rows_of(query.run(tries, **p), query)
        correct &= same(etch(), _sql(cons["duckdb1"], query.sql(p))(), query)
        calls.append({"etchpy": etch,
                      "duckdb1": _sql(cons["duckdb1"], query.sql(p)),
                      "duckdb": _sql(cons["duckdb"], query.sql(p)),
                      "sqlite": _sql(cons["sqlite"], query.sql(p, "sqlite"))})
    times = {k: [] for k in calls[0]}
    for r in range(rounds):
        for call in calls:
            for k, f in call.items():
                if k != "sqlite" or r < sqlite_rounds:
                    times[k].append(_clocks(f))
    ms = {k: 1e3 * float(np.median([w for w, _ in v])) for k, v in times.items()}
    cpu = {f"{k}_cpu_ms": 1e3 * float(np.median([c for _, c in v]))
           for k, v in times.items() if k != "duckdb"}
    return {"query": query.name, "sf": cons["sf"], "build_ms": 1e3 * build_s,
            "etchpy_ms": ms["etchpy"], "duckdb1_ms": ms["duckdb1"],
            "duckdb_ms": ms["duckdb"], "sqlite_ms": ms["sqlite"], "correct": bool(correct),
            **cpu,
            "params": list(query.params), "rounds": rounds, "sqlite_rounds": sqlite_rounds,
            **data.versions()}


def run(sf: float, names, rounds: int, sqlite_rounds: int) -> list[dict]:
    cols = data.tables(sf)
    cons = {"sf": sf, "duckdb1": data.duckdb_with(cols, threads=1),
            "duckdb": data.duckdb_with(cols, threads=None), "sqlite": data.sqlite_with(cols)}
    return [measure(QUERIES[n], cols, cons, rounds, sqlite_rounds) for n in names
            if QUERIES[n].run is not None]    # (Q4: on the shared tables only)


def report(results: list[dict]) -> str:
    head = (f"{'query':<6}{'sf':>6}{'build':>10}{'etchpy':>10}{'duckdb1':>10}{'duckdb':>10}"
            f"{'sqlite':>11}{'duck1/etch':>12}{'sqlite/etch':>12}{'cpu d1/e':>10}  correct")
    lines = [head]
    for r in results:
        lines.append(f"{r['query']:<6}{r['sf']:>6g}{r['build_ms']:>9.1f} {r['etchpy_ms']:>9.2f} "
                     f"{r['duckdb1_ms']:>9.2f} {r['duckdb_ms']:>9.2f} {r['sqlite_ms']:>10.1f} "
                     f"{r['duckdb1_ms'] / r['etchpy_ms']:>11.2f}x"
                     f"{r['sqlite_ms'] / r['etchpy_ms']:>11.1f}x"
                     f"{r['duckdb1_cpu_ms'] / r['etchpy_cpu_ms']:>9.2f}x  {r['correct']}")
    return "\n".join(lines) + ("\n(ms, wall-clock medians; ratios > 1: etchpy faster; "
                               "cpu d1/e: the same ratio in CPU time)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench tpch", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--json", help="write the JSON list there")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sqlite-rounds", type=int, default=3)
    ap.add_argument("--queries", default="Q5,Q9,Q3,Q6,Q7,Q12,Q19,Q4,Q10,Q14,Q13,Q18,Q1,Q17,Q11,Q16,Q22,Q21,"
                    "Q8,Q2,Q20,Q15")
    ap.add_argument("--load-once", action="store_true",
                    help="load the tables once, run every query on that load "
                         "(bench/tpch/loaded.py)")
    ap.add_argument("--tables", action="store_true",
                    help="with --load-once: one ep.table per table, shared by the queries "
                         "(bench/tpch/tables.py)")
    ap.add_argument("--one-order", action="store_true",
                    help="with --load-once: --tables with no key order added to "
                         "lineitem, an order keyed by its receipt date instead "
                         "(bench/tpch/one_order.py)")
    ap.add_argument("--per-params", action="store_true",
                    help="with --load-once: a line per parameter set under each query")
    args = ap.parse_args(argv)
    if args.load_once:
        loaded = run_loaded(args.sf, args.queries.split(","), args.rounds, args.tables,
                            args.one_order)
        print(report_loaded(loaded, args.per_params))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(loaded, f, indent=1)
        return 0 if all(q["correct"] for q in loaded["queries"]) else 1
    results = run(args.sf, args.queries.split(","), args.rounds, args.sqlite_rounds)
    print(report(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["correct"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

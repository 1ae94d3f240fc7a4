"""Load once, query many: every query of the bench on one load of the tables.

    python -m bench tpch --sf SF --load-once [--tables] [--queries ...] [--rounds N]
                         [--json PATH]

Loads the columns (bench/tpch/data.py) into etchpy's relations once, for all
the queries named (bench/tpch/queries.py `build`: each table's tries and the
codings shared by the joins), and into DuckDB once (`data.duckdb_with`: CREATE
TABLE ... AS SELECT from the registered numpy columns, one thread), reporting
both load times; then runs every query on that one load, each system called in
turn for each parameter set, with the answers compared. One JSON object: the
load times, the first query's first call (its time from the numpy columns is
the load's and that call's) and, per query, the medians of wall-clock and CPU time (the process's
threads, time.process_time) over every call and, under "by_params", over each
parameter set's calls (--per-params prints them).

With --tables the load is bench/tpch/tables.py `load`: one ep.table per table,
its storage order (primary key first) and at most one secondary order, shared
by the queries written there (tables.QUERIES); the others are left out and
listed under "not_on_tables". With --one-order (implies --tables) lineitem has
neither tables.py's supplier nor ship-mode order, nor any other added order (its
storage and secondary orders alone: one_order.load) and Q7 and Q12 are
bench/tpch/one_order.py's.
"""
from __future__ import annotations

import time

import numpy as np

from bench.tpch import data
from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch import tables as shared
from bench.tpch.one_order import QUERIES as one_order_queries, load as one_order_load
from bench.tpch.queries import build


def _timed(fn):
    """(fn's answer, (wall seconds, CPU seconds of this process's threads))."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, (time.perf_counter() - w, time.process_time() - c)


def _clocks(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process's threads) of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def run_loaded(sf: float, names, rounds: int, tables: bool = False,
               one_order: bool = False) -> dict:
    """The load times (ms) of etchpy and DuckDB and each query's times on that load
    (`tables`: the shared tables of bench/tpch/tables.py; `one_order` too: with
    no key order added to lineitem, the queries of bench/tpch/one_order.py)."""
    cols = data.tables(sf)
    con, duck_s = _timed(lambda: data.duckdb_with(cols, threads=1))
    tables = tables or one_order
    written = one_order_queries if one_order else shared.QUERIES
    skipped = [n for n in names if (n not in written if tables
                                    else QUERIES[n].run is None)]
    names = [n for n in names if n not in skipped]
    if tables:
        tries, etch_s = _timed(lambda: one_order_load(cols) if one_order else shared.load(cols))
    else:
        tries, etch_s = _timed(lambda: build(cols, tuple(names)))
    queries, first = [], {}
    for name in names:
        q = QUERIES[name]
        run = written[name] if tables else q.run
        calls, correct = [], True
        for p in q.params:
            etch = lambda p=p, run=run: rows_of(run(tries, **p), q)
            duck = lambda p=p: con.execute(q.sql(p)).fetchall()
            (etch_rows, e1), (duck_rows, d1) = _timed(etch), _timed(duck)
            first = first or {"first_query": name, "first_call_etchpy_ms": 1e3 * e1[0],
                              "first_call_duckdb1_ms": 1e3 * d1[0]}
            correct &= same(etch_rows, [tuple(str(v) if hasattr(v, "isoformat") else v
                                              for v in r) for r in duck_rows], q)
            calls.append((etch, duck))
        times = [{"etchpy": [], "duckdb1": []} for _ in calls]
        for _ in range(rounds):
            for (etch, duck), t in zip(calls, times):
                t["etchpy"].append(_clocks(etch))
                t["duckdb1"].append(_clocks(duck))
        queries.append({"query": name, **_medians([x for t in times for x in t["etchpy"]],
                                                  [x for t in times for x in t["duckdb1"]]),
                        "correct": bool(correct),
                        "by_params": [{"params": p, **_medians(t["etchpy"], t["duckdb1"])}
                                      for p, t in zip(q.params, times)]})
    return {"sf": sf, "load_etchpy_ms": 1e3 * etch_s[0], "load_duckdb1_ms": 1e3 * duck_s[0],
            "load_etchpy_cpu_ms": 1e3 * etch_s[1], "load_duckdb1_cpu_ms": 1e3 * duck_s[1],
            **first, "tables": tables, "one_order": one_order, "not_on_tables": skipped,
            "queries": queries, "rounds": rounds, **data.versions()}


def _medians(etch: list, duck: list) -> dict:
    """The medians (ms) of the (wall, CPU) pairs of both systems' calls."""
    return {f"{k}_{c}ms": 1e3 * float(np.median([x[i] for x in v]))
            for k, v in (("etchpy", etch), ("duckdb1", duck))
            for i, c in ((0, ""), (1, "cpu_"))}


def _ratios(r: dict) -> str:
    return (f"{r['etchpy_ms']:>10.2f}{r['duckdb1_ms']:>10.2f}"
            f"{r['duckdb1_ms'] / r['etchpy_ms']:>11.2f}x"
            f"{r['duckdb1_cpu_ms'] / max(r['etchpy_cpu_ms'], 1e-6):>9.2f}x")


def _short(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def report_loaded(r: dict, per_params: bool = False) -> str:
    """The load line and a line per query (`per_params`: and one per parameter
    set below it, each the median of its rounds)."""
    lines = [f"load (sf {r['sf']:g}): etchpy {r['load_etchpy_ms']:.0f} ms, DuckDB (one thread) "
             f"{r['load_duckdb1_ms']:.0f} ms: {r['load_etchpy_ms'] / r['load_duckdb1_ms']:.2f}x"
             + (f"; CPU {r['load_etchpy_cpu_ms']:.0f} ms, {r['load_duckdb1_cpu_ms']:.0f} ms: "
                f"{r['load_etchpy_cpu_ms'] / r['load_duckdb1_cpu_ms']:.2f}x"
                if "load_etchpy_cpu_ms" in r else ""),
             f"{'query':<6}{'etchpy':>10}{'duckdb1':>10}{'duck1/etch':>12}{'cpu d1/e':>10}"
             "  correct"]
    if r.get("first_query"):
        e2e = [r[f"load_{k}_ms"] + r[f"first_call_{k}_ms"] for k in ("etchpy", "duckdb1")]
        lines.insert(1, f"{r['first_query']} from the numpy columns, end to end (the load and "
                        f"its first call, the kernels compiled or read from the cache): "
                        f"etchpy {e2e[0]:.0f} ms, DuckDB (one thread) {e2e[1]:.0f} ms: "
                        f"{e2e[0] / e2e[1]:.2f}x")
    for q in r["queries"]:
        lines.append(f"{q['query']:<6}{_ratios(q)}  {q['correct']}")
        for b in q.get("by_params", ()) if per_params else ():
            lines.append(f"{'':<6}{_ratios(b)}  {_short(b['params'])}")
    if r.get("not_on_tables"):
        where = "not written on the shared tables" if r["tables"] else \
            "written on the shared tables only (--tables)"
        lines.append(f"{where}: {', '.join(r['not_on_tables'])}")
    return "\n".join(lines) + ("\n(ms, wall-clock medians; cpu d1/e: the ratio of the same "
                               "calls' CPU times; every query on the one load)")

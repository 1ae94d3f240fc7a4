"""The TPC-H test fixture: the columns the queries read at a small scale factor and
DuckDB's answers, in one compressed npz.

    python -m bench.tpch.fixture tests/end_to_end/data/tpch_q5_sf0.01.npz [--sf 0.01]

Keys:
    "table.column"                  the columns of data.COLUMNS, each integer column
                                    in the narrowest integer dtype that holds it
                                    (l_quantity, whole numbers, as int8)
    "answer.n_name", "answer.revenue"   Q5 for ASIA, 1994 (tests/end_to_end/test_tpch_q5.py)
    "answers"                       JSON: {query: [{"params": {...}, "rows": [[...]]}]},
                                    DuckDB's rows for every parameter set of
                                    bench/tpch/queries.py (dates as ISO text)
    "versions"                      JSON: DuckDB's, the tpch extension's, and "sf"
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from bench.tpch import data
from bench.tpch.catalog import QUERIES


def narrow(a: np.ndarray) -> np.ndarray:
    """`a` in the narrowest integer dtype holding it (whole floats too), else as is."""
    if a.dtype.kind == "f" and len(a) and np.all(a == np.round(a)) and np.abs(a).max() < 128:
        return a.astype(np.int8)
    if a.dtype.kind not in "iu" or not len(a):
        return a
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= a.min() and a.max() <= np.iinfo(t).max:
            return a.astype(t)
    return a


def answers(con) -> dict:
    """DuckDB's rows for every query and parameter set."""
    out = {}
    for name, q in QUERIES.items():
        out[name] = [{"params": p, "rows": [[str(v) if hasattr(v, "isoformat") else v
                                             for v in row]
                                            for row in con.execute(q.sql(p)).fetchall()]}
                     for p in q.params]
    return out


def write(path, sf: float = 0.01) -> dict:
    cols = data.tables(sf)
    con = data.duckdb_with(cols)
    got = answers(con)
    q5 = got["Q5"][0]
    assert q5["params"] == {"region": "ASIA", "date": "1994-01-01"}
    np.savez_compressed(
        path, **{k: narrow(v) for k, v in cols.items()},
        **{"answer.n_name": np.array([r[0] for r in q5["rows"]]),
           "answer.revenue": np.array([r[1] for r in q5["rows"]]),
           "answers": np.array(json.dumps(got)),
           "versions": np.array(json.dumps({**data.versions(), "sf": sf}))})
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tpch.fixture", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--sf", type=float, default=0.01)
    args = ap.parse_args(argv)
    got = write(args.path, args.sf)
    print({q: [len(a["rows"]) for a in v] for q, v in got.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

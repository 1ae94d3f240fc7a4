"""DuckDB's rows for the queries of bench/tpch/more.py at the test fixture's
columns, written beside it (tests/end_to_end/data/tpch_more_sf0.01.json).

    python -m bench.tpch.more_answers tests/end_to_end/data/tpch_more_sf0.01.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench.tpch import data
from bench.tpch.catalog import QUERIES
from bench.tpch.more import MORE

FIXTURE = Path("tests/end_to_end/data/tpch_q5_sf0.01.npz")


def answers(cols: dict) -> dict:
    con = data.duckdb_with(cols)
    return {name: [{"params": p, "rows": [[str(v) if hasattr(v, "isoformat") else v
                                           for v in row]
                                          for row in con.execute(QUERIES[name].sql(p)).fetchall()]}
                   for p in QUERIES[name].params] for name in MORE}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tpch.more_answers", description=__doc__)
    ap.add_argument("path")
    args = ap.parse_args(argv)
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
    got = answers(cols)
    Path(args.path).write_text(json.dumps(got, indent=1) + "\n")
    print({q: [len(a["rows"]) for a in v] for q, v in got.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

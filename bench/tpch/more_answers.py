"""DuckDB's rows for the queries of bench/tpch/more.py at the test fixture's
columns, written beside it (tests/end_to_end/data/tpch_more_sf0.01.json), and the
columns those queries read that the fixture lacks (EXTRA, generated at the
fixture's scale factor, its keys checked against the fixture's:
tpch_more_sf0.01.npz).

    python -m bench.tpch.more_answers tests/end_to_end/data/tpch_more_sf0.01
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench.tpch import data
from bench.tpch.catalog import QUERIES
from bench.tpch.fixture import narrow
from bench.tpch.more import MORE

FIXTURE = Path("tests/end_to_end/data/tpch_q5_sf0.01.npz")
EXTRA = ("part.p_mfgr", "partsupp.ps_availqty", "supplier.s_name", "supplier.s_address",
         "supplier.s_phone", "supplier.s_acctbal", "supplier.s_comment")
KEYS = ("part.p_partkey", "partsupp.ps_partkey", "partsupp.ps_suppkey", "supplier.s_suppkey")


def fixture_columns(stem: Path) -> dict:
    """The fixture's columns and the EXTRA ones stored beside it (stem + ".npz")."""
    with np.load(stem.parent / FIXTURE.name) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
    extra = Path(f"{stem}.npz")
    if extra.is_file():
        with np.load(extra) as z:
            cols.update({k: z[k] for k in z.files})
    return cols


def answers(cols: dict, names=MORE) -> dict:
    """DuckDB's rows of each query of `names` for each of its parameter sets."""
    con = data.duckdb_with(cols)
    return {name: [{"params": p, "rows": [[str(v) if hasattr(v, "isoformat") else v
                                           for v in row]
                                          for row in con.execute(QUERIES[name].sql(p)).fetchall()]}
                   for p in QUERIES[name].params] for name in names}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tpch.more_answers", description=__doc__)
    ap.add_argument("path")
    args = ap.parse_args(argv)
    stem = Path(args.path)
    cols = fixture_columns(stem)
    with np.load(stem.parent / FIXTURE.name) as z:
        gen = data.tables(json.loads(str(z["versions"]))["sf"])
    assert all(np.array_equal(gen[k], cols[k]) for k in KEYS), "not the fixture's rows"
    np.savez_compressed(f"{stem}.npz", **{k: narrow(gen[k]) for k in EXTRA})
    cols.update({k: gen[k] for k in EXTRA})
    got = answers(cols)
    Path(f"{stem}.json").write_text(json.dumps(got, indent=1) + "\n")
    print({q: [len(a["rows"]) for a in v] for q, v in got.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

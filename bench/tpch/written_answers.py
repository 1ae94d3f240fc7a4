"""DuckDB's rows for Q11, Q16, Q17, Q21 and Q22 (written from relational.md:
bench/tpch/q11.py ...) at the test fixture's columns and those stored beside it
(tpch_extra_sf0.01.npz), written to tests/end_to_end/data/tpch_written_sf0.01.json,
so that the test needs no DuckDB.

    python -m bench.tpch.written_answers
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bench.tpch.more_answers import answers

DATA = Path("tests/end_to_end/data")
WRITTEN = ("Q11", "Q16", "Q17", "Q21", "Q22")


def columns(folder: Path) -> dict:
    """The fixture's columns and the extra ones beside it."""
    cols = {}
    for name in ("tpch_q5_sf0.01.npz", "tpch_extra_sf0.01.npz"):
        with np.load(folder / name) as z:
            cols.update({k: z[k] for k in z.files if "." in k and not k.startswith("answer")})
    return cols


def main() -> int:
    got = answers(columns(DATA), WRITTEN)
    (DATA / "tpch_written_sf0.01.json").write_text(json.dumps(got, indent=1) + "\n")
    print({q: [len(a["rows"]) for a in v] for q, v in got.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

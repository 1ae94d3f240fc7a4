"""TPC-H Q6 on the tables loaded once (bench/tpch/tables.py), its one walk's sum
run with its tests as a byte mask over blocks (Tuning.flat_mask, off by default):
the same bits as the loop as written, for each of the catalog's parameter sets,
and DuckDB's rows (the sf 0.01 fixture; proofs_notes/flat_mask.md); and so with its
compared columns read narrow (Tuning.narrow_compared, proofs_notes/narrow.md)."""
import json
from pathlib import Path

import numpy as np
import pytest

import etchpy as ep
from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

pytestmark = pytest.mark.usefixtures("shared_cache")

FIXTURE = Path(__file__).parent / "data" / "tpch_q5_sf0.01.npz"


def test_q6_with_its_tests_as_a_mask_gives_the_same_bits_and_duckdbs_rows():
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
        answers = json.loads(str(z["answers"]))
    tables = shared.load(cols, added_orders=False)
    wide = {**tables, "kernels": {}, "tuning": ep.Tuning()}    # (not the bench's TUNING)
    forms = {blk: {**tables, "kernels": {}, "tuning": ep.Tuning(flat_mask=blk)}
             for blk in (16, 1024)}
    for case in answers["Q6"]:
        off = shared.q6(wide, **case["params"])
        for blk, t in forms.items():
            on = shared.q6(t, **case["params"])
            assert on["revenue"].tobytes() == off["revenue"].tobytes(), (blk, case["params"])
        got, want = rows_of(off, QUERIES["Q6"]), [tuple(r) for r in case["rows"]]
        assert same(got, want, QUERIES["Q6"]), (case["params"], got, want)
    walked = forms[16]["kernels"][shared._q6_expr]._walked
    assert "fm_mask[16]" in walked.c_source


def test_q6_with_its_compared_columns_narrow_gives_the_same_bits_and_duckdbs_rows():
    """Tuning.narrow_compared: the ship date read as int16 days, the discount as
    int8 hundredths, the quantity as int8 (runtime.narrow), under the mask."""
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
        answers = json.loads(str(z["answers"]))
    tables = shared.load(cols, added_orders=False)
    wide = {**tables, "kernels": {}, "tuning": ep.Tuning()}
    on = {**tables, "kernels": {}, "tuning": ep.Tuning(narrow_compared=256)}
    assert shared.TUNING == on["tuning"]                   # the bench's
    for case in answers["Q6"]:
        off, got = shared.q6(wide, **case["params"]), shared.q6(on, **case["params"])
        assert got["revenue"].tobytes() == off["revenue"].tobytes(), case["params"]
        rows, want = rows_of(got, QUERIES["Q6"]), [tuple(r) for r in case["rows"]]
        assert same(rows, want, QUERIES["Q6"]), (case["params"], rows, want)
    walked = on["kernels"][shared._q6_expr]._walked.c_source
    assert "fm_mask[256]" in walked and "(const int16_t *)" in walked
    assert walked.count("(const int8_t *)") >= 4          # discount, quantity, their bounds

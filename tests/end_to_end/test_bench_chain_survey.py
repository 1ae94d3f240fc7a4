"""bench.chain_survey on tiny chains: every split plan it prices is the chain
itself (reference backend), its parts are bracketed in the matrix-chain order,
and a survey row compares unguided saturation with the cheapest split plan."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.expr.nodes import Sum

survey = pytest.importorskip("bench.chain_survey")
sketches = pytest.importorskip("bench.sketches")


def _dense(v):
    return v.todense() if hasattr(v, "todense") else np.asarray(v)


def test_every_split_plan_is_the_chain():
    sizes, sparse = [5, 2, 4, 3, 2, 6], {1, 3}
    expr, ins, dims, nnz = sketches._chain("survey-test", sizes, sparse, "flat",
                                           mask_nnz=12, density=0.5)
    plans = survey.split_plans(sizes, sparse, {"dims": dims, "nnz": nnz})
    assert len(plans) == 10                 # (p, q) with 1 <= p <= q <= 4
    assert [c for c, *_ in plans] == sorted(c for c, *_ in plans)
    want = _dense(ep.evaluate(expr, backend="reference", **ins))
    for cost, p, q, plan in plans:
        got = _dense(ep.evaluate(plan, backend="reference", **ins))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"{p},{q}")


def test_parts_follow_the_matrix_chain_order():
    # (A1·A2)·A3 costs 10·100·5 + 10·5·50 = 7 500; A1·(A2·A3) costs 75 000
    ix = ep.indices("i0 i1 i2 i3")
    mats = [ep.tensor(f"A{k + 1}", 2) for k in range(3)]
    cost, e = survey._ordered(mats, ix, [10, 100, 5, 50], 0, 3, {})
    assert cost == 7500
    assert isinstance(e, Sum) and e.index.name == "i2"


def test_a_survey_row_compares_unguided_with_the_best_split():
    rows = survey.survey(10, 1)
    assert rows[0]["length"] == 10 and len(rows[0]["sizes"]) == 11
    assert rows[0]["ratio"] == pytest.approx(
        rows[0]["unguided_cost"] / rows[0]["best_split_cost"], rel=1e-3)
    assert survey.summary(rows)[10]["chains"] == 1

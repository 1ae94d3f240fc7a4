"""bench.mttkrp_plans on a tiny tensor: the four plans of a 5-mode MTTKRP (the
written nest, unguided, and two sketched factorisations) compile, agree with
each other (the module asserts it) and have the shapes they are named for."""
import pytest

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_mttkrp_plans_agree_and_have_their_shapes():
    plans = pytest.importorskip("bench.mttkrp_plans")
    rows = {row["plan"]: row for row in plans.plans((3, 4, 3, 2, 3), 40, 4, repeat=1)}
    assert list(rows) == ["written", "unguided", "partial", "levels"]
    assert rows["written"]["expr"].count("Σ") == 4 and rows["written"]["vs_written"] == 1.0
    assert rows["levels"]["expr"].startswith("Σ_j B[j,r]·(Σ_k C[k,r]·(Σ_l D[l,r]·(Σ_m")
    assert all(row["ms"] > 0 and row["cost"] > 0 for row in rows.values())

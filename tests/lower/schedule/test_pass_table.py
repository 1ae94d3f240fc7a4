"""The schedule passes the Emitter runs are values (lower.schedule.PASSES): each
names its point and the Tuning switch that turns it off, and NOOPT runs none."""
from dataclasses import fields

import numpy as np
import pytest

import etchpy as ep
from etchpy import tuning
from etchpy.lower import schedule

POINTS = ("group", "call", "step", "level", "loop", "program")


def test_each_pass_names_a_point_and_a_boolean_switch():
    switches = {f.name for f in fields(tuning.Tuning) if f.type in ("bool", bool)}
    assert schedule.PASSES
    for p in schedule.PASSES:
        assert p.at in POINTS and p.switch in switches, p
        assert callable(p.run)


@pytest.mark.parametrize("point", POINTS)
def test_noopt_runs_no_pass_and_a_switch_removes_its_pass(point):
    assert schedule.at(point, tuning.NOOPT) == ()
    for p in [p for p in schedule.PASSES if p.at == point]:
        off = tuning.DEFAULT.with_(**{p.switch: False})
        assert p in schedule.at(point, tuning.DEFAULT) and p not in schedule.at(point, off)


def test_the_order_is_the_declared_order():
    loop = schedule.at("loop", tuning.DEFAULT)
    assert [p.name for p in loop] == [p.name for p in schedule.PASSES if p.at == "loop"]
    # fused rows sees the chains' claims: a chain adding into the output keeps it off
    group = [p.name for p in schedule.at("group", tuning.DEFAULT)]
    assert group.index("fused temporaries") < group.index("fused rows")
    # a Khatri-Rao pair is claimed first: no chain or fused nest takes its steps
    assert group.index("Khatri-Rao pairs") < group.index("fused temporaries")


def test_a_group_pass_leaves_groups_an_earlier_claim_adds_into_the_output():
    """fused_rows.claim makes no claim once an earlier one adds into the output, nor
    over groups an earlier claim covers."""
    from types import SimpleNamespace
    from etchpy.lower.schedule import Claim, fused_rows
    into_out = Claim(0, frozenset({0}), True, lambda: None)
    lw = SimpleNamespace(plan=None, target=SimpleNamespace(dense_axes=("i",)))
    out = SimpleNamespace(target="out")
    assert fused_rows.claim(lw, [[out], [out]], (into_out,)) == []
    assert fused_rows.claim(lw, [[out], [out]], (into_out.__class__(
        1, frozenset({1}), False, lambda: None),)) == []


def test_fused_rows_claims_the_steps_into_a_dense_output_and_answers_alike():
    """`c[i] + Σ_j A[i,j]·w[j]` over a csr A: two steps into out stored in one nest
    (the claim of the fused rows pass) with the pass on, one by one with it off."""
    i, j = ep.indices("i j")
    A, w, c = ep.tensor("A", 2, "csr"), ep.tensor("w", 1), ep.tensor("c", 1)
    e = c[i] + ep.sum(j, A[i, j] * w[j])
    rng = np.random.default_rng(1)
    a = ep.Tensor.from_dense(rng.random((8, 6)) * (rng.random((8, 6)) < 0.5), "csr")
    cv, wv = rng.random(8), rng.random(6)
    on = ep.compile(e)
    off = ep.compile(e, tuning={"fused_rows": False})
    texts = (on.compiled.program.streams_text, off.compiled.program.streams_text)
    assert any("(in one nest)" in t for t in texts[0])
    assert not any("(in one nest)" in t for t in texts[1])
    for kern in (on, off):
        np.testing.assert_allclose(kern(A=a, w=wv, c=cv), cv + a.to_dense() @ wv)


@pytest.mark.parametrize("switch", sorted({p.switch for p in schedule.PASSES}))
def test_each_pass_off_keeps_the_answer(switch):
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    x = ep.tensor("x", 1)
    rng = np.random.default_rng(0)
    a = ep.Tensor.from_dense(rng.random((9, 7)) * (rng.random((9, 7)) < 0.4), "csr")
    b = ep.Tensor.from_dense(rng.random((9, 7)) * (rng.random((9, 7)) < 0.4), "csr")
    xv = rng.random(7)
    t = tuning.FORCE.with_(**{switch: False})
    e = ep.sum(j, (A[i, j] + B[i, j]) * x[j])
    want = (a.to_dense() + b.to_dense()) @ xv
    for tn in (t, tuning.FORCE):
        assert np.allclose(ep.compile(e, tuning=tn, threads=2)(A=a, B=b, x=xv), want)

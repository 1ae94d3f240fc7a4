"""The schedule passes the Emitter runs are values (lower.schedule.PASSES): each
names its point and the Tuning switch that turns it off, and NOOPT runs none."""
from dataclasses import fields

import numpy as np
import pytest

import etchpy as ep
from etchpy import tuning
from etchpy.lower import schedule

POINTS = ("step", "level", "loop")


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

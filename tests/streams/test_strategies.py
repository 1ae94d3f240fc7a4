"""Each strategy variant of the combinators on its own, chosen by the Tuning.

Streams (with the invariant checker) and the whole lowered Imp program on the
interpreter must equal the reference under every setting: the default, every
switch off (NOOPT), each switch off alone, and each way of a two-segment
intersection alone (gallop ratio 0 always leapfrogs, 10⁹ always merges).
"""
import numpy as np
import pytest
from hypothesis import given, settings

import etchpy as ep
from etchpy import api, imp, streams
from etchpy.expr.walk import tensors
from etchpy.plan import plan as planning
from etchpy.runtime.planned import with_conversions
from etchpy.runtime import inputs as binding
from etchpy.testing import assert_same, problems, run_plan_imp
from etchpy.tuning import DEFAULT, FORCE, NOOPT

SWITCHES = ("markers", "merge_or_gallop", "match_step", "step_fronts", "short_intersect",
            "hide_segment_counters")
TUNINGS = {"default": DEFAULT, "noopt": NOOPT, "force": FORCE,
           "always_leapfrog": DEFAULT.with_(gallop_ratio=0),
           "always_merge": DEFAULT.with_(gallop_ratio=10**9),
           **{f"no_{k}": DEFAULT.with_(**{k: False}) for k in SWITCHES}}


def _streams_under(tuning, e, sr, inputs):
    """⟦s⟧ of each step's stream under `tuning` (checked), summed into a dense
    output; None for a plan with temporaries."""
    plan = planning.make_plan(e)
    bound = with_conversions(plan, binding.bind_inputs(tensors(e), inputs, sr))
    if any(step.target != "out" for step in plan.steps):
        return None
    sizes = binding.index_sizes(plan, bound)
    machine = imp.Machine(sr, api.imp_env(bound, sizes))
    out = np.full(tuple(sizes[v] for v in plan.out), sr.zero, dtype=sr.dtype)
    bindings = {n: streams.array_names(n, t.format) for n, t in bound.items()}
    for step in plan.steps:
        s = streams.lower_step(sr, bindings, step.body, step.order, step.bound, tuning=tuning)
        values: dict = {}
        streams.run_stream(s, machine, values, check=True)
        free = [v for v in step.order if v not in step.bound]     # the keys' order
        for key, v in values.items():
            at = tuple(key[free.index(ax)] for ax in step.out)
            out[at] = sr.add(out[at], v)
    return out


def _program_under(tuning, e, sr, inputs):
    """The whole lowered program under `tuning` run on the Imp interpreter."""
    return run_plan_imp(e, inputs, sr, tuning=tuning)[0]


@pytest.mark.parametrize("name", sorted(TUNINGS))
@settings(max_examples=40)
@given(p=problems())
def test_every_strategy_setting_equals_reference(name, p):
    tuning, sr, e = TUNINGS[name], p.semiring, p.expr
    want = ep.evaluate(e, semiring=sr, backend="reference", **p.inputs)
    assert_same(_program_under(tuning, e, sr, p.inputs), want, sr, what=f"{name}: {e}")
    got = _streams_under(tuning, e, sr, p.inputs)
    if got is not None:                 # a plan with temporaries: the program covers it
        assert_same(got, want, sr, what=f"{name} streams: {e}")


def _intersection(tuning):
    i, j = ep.indices("i j")
    x, y = ep.tensor("X", 2, format="csr"), ep.tensor("Y", 2, format="csr")
    bindings = {n: streams.array_names(n, t.format) for n, t in (("X", x), ("Y", y))}
    return streams.lower_step(ep.semirings.get("real"), bindings, x[i, j] * y[i, j],
                              ("i", "j"), (), tuning=tuning)


def test_switches_choose_the_intersection_strategy():
    """Two csr rows intersect by merge-or-leapfrog (with the all-pairs way) by
    default, by leapfrog alone with merge_or_gallop off, and without the
    all-pairs way with short_intersect off."""
    row = _intersection(DEFAULT).value
    assert row.facts.get(streams.Choice) and row.facts.get(streams.Short)
    assert "leapfrog when one is ≥16x longer, all pairs at once" in row.search
    assert "≥3x" in _intersection(DEFAULT.with_(gallop_ratio=3)).value.search
    plain = _intersection(DEFAULT.with_(merge_or_gallop=False)).value
    assert plain.search.startswith("intersect [") and streams.Choice not in plain.facts
    no_short = _intersection(DEFAULT.with_(short_intersect=False)).value
    assert streams.Choice in no_short.facts and streams.Short not in no_short.facts


def test_step_fronts_switch_chooses_the_union_strategy():
    i = ep.indices("i")[0]
    x, y = ep.tensor("X", 1, format="csf"), ep.tensor("Y", 1, format="csf")
    bindings = {n: streams.array_names(n, t.format) for n, t in (("X", x), ("Y", y))}

    def union(tuning):
        return streams.lower_step(ep.semirings.get("real"), bindings, x[i] + y[i], ("i",),
                                  (), tuning=tuning)
    stepping, skipping = union(DEFAULT), union(DEFAULT.with_(step_fronts=False))
    assert len(stepping.state) == len(skipping.state) + 2   # the two front flags
    assert stepping.facts.get(streams.Split) == skipping.facts.get(streams.Split)


def test_markers_switch_and_hidden_counters():
    i, j = ep.indices("i j")
    b = ep.tensor("B", 1, format="csf")
    bindings = {"B": streams.array_names("B", b.format)}

    def lowerer(tuning):
        low = streams.Lowerer(ep.semirings.get("real"), bindings, imp.Names(), markers=True,
                              tuning=tuning)
        return low, low.lower(b[j], ("i", "j"))
    low, s = lowerer(DEFAULT)
    assert low.scratch and streams.Prelude in s.facts
    assert any(isinstance(st, imp.Opaque) for st in imp.statements(s.init))
    low, s = lowerer(DEFAULT.with_(hide_segment_counters=False))
    assert not any(isinstance(st, imp.Opaque) for st in imp.statements(s.init))
    low, s = lowerer(DEFAULT.with_(markers=False))
    assert not low.scratch and streams.Prelude not in s.facts
    assert streams.hidden("q", NOOPT) == imp.SKIP
    assert streams.hidden("q", DEFAULT) == imp.Opaque("q")

"""Lowering under each Tuning preset equals the reference: with every schedule
pass and strategy off (NOOPT) the plain loops are correct, and with every
threshold at its minimum (FORCE, FORCE_HASH) every optimised path fires on
test-sized inputs. Every output kind, every format, semirings real, min_plus
and boolean; on the Imp interpreter and in C."""
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import tuning as tunings
from etchpy.expr.nodes import free_indices
from etchpy.testing import assert_same, formats_for, problems
from tuned import run_lowered, tuned_kernel

PRESETS = {"noopt": tunings.NOOPT, "force": tunings.FORCE, "force_hash": tunings.FORCE_HASH,
           "default": tunings.DEFAULT}
SEMIRINGS = ["real", "min_plus", "boolean"]


@st.composite
def problem_and_output(draw, semiring):
    """A problem, and an output format for it (None: dense)."""
    p = draw(problems(max_indices=3, semiring=ep.semirings.get(semiring)))
    out = free_indices(p.expr)
    fmt = draw(st.one_of(st.none(), formats_for(len(out)))) if out else None
    return p, fmt


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("semiring", SEMIRINGS)
@settings(max_examples=30)
@given(data=st.data())
def test_interpreter_equals_reference_under_preset(preset, semiring, data):
    p, fmt = data.draw(problem_and_output(semiring))
    threads = data.draw(st.sampled_from([1, 2]))
    want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **p.inputs)
    got, _ = run_lowered(p.expr, p.semiring, fmt, p.inputs, threads, PRESETS[preset])
    assert_same(got, want, p.semiring, what=f"{preset}: {p.expr} into {fmt}")


@pytest.mark.parametrize("preset", ["noopt", "force", "force_hash"])
@pytest.mark.parametrize("semiring", SEMIRINGS)
@settings(max_examples=8)
@given(data=st.data())
def test_c_equals_reference_under_preset(preset, semiring, data):
    p, fmt = data.draw(problem_and_output(semiring))
    threads = data.draw(st.sampled_from([1, 2]))
    want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **p.inputs)
    kern = tuned_kernel(p.expr, PRESETS[preset], semiring=p.semiring,
                        output=fmt or "dense", threads=threads)
    assert_same(kern(**p.inputs), want, p.semiring, what=f"{preset}: {p.expr} into {fmt}")

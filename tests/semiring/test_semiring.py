"""Semirings: built-ins obey the laws, user-defined ones are checked, casting is value-safe."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.semiring_laws import check_axioms
from etchpy.testing import max_min, semiring_values


@pytest.mark.parametrize("sr", ep.semirings.all() + [max_min], ids=lambda s: s.name)
@given(data=st.data())
def test_builtin_semirings_satisfy_axioms(sr, data):
    vals = data.draw(st.lists(semiring_values(sr), min_size=1, max_size=3))
    assert check_axioms(sr, vals) == []


def test_checker_finds_a_broken_semiring():
    bad = ep.Semiring("minus", np.float64, 0.0, 1.0, ("{a} - {b}", np.subtract),
                      ("{a} * {b}", np.multiply))
    laws = {f[0] for f in check_axioms(bad, [1.0, 2.0])}
    assert "add commutative" in laws and "add associative" in laws


def test_user_semiring_takes_ops_as_pairs_or_op():
    s = ep.Semiring("mx", "int64", 0, 1, ep.Op("({a} > {b} ? {a} : {b})", np.maximum),
                    ("{a} * {b}", np.multiply))
    assert s.add.render("x", "y") == "(x > y ? x : y)"
    assert s.add(2, 5) == 5 and s.zero == 0 and s.dtype == np.int64
    with pytest.raises(TypeError):
        ep.Semiring("bad", "int64", 0, 1, "{a}+{b}", np.multiply)


def test_min_plus_zero_is_infinity():
    mp = ep.semirings.min_plus
    assert mp.zero == np.inf and mp.one == 0.0
    assert mp.mul(3.0, mp.zero) == np.inf


def test_value_safe_casting():
    b = ep.semirings.boolean
    assert b.cast(np.array([0.0, 1.0])).dtype == np.bool_
    with pytest.raises(ep.InputError, match="NaN"):
        b.cast(np.array([1.0, np.nan]))
    with pytest.raises(ep.InputError):
        b.cast(np.array([0.5]))
    z = ep.semirings.integer
    assert z.cast(np.array([2.0, -3.0])).tolist() == [2, -3]
    with pytest.raises(ep.InputError):
        z.cast(np.array([2.5]))
    with pytest.raises(ep.InputError, match="NaN"):
        ep.semirings.min_plus.cast(np.array([np.nan]))
    assert np.isnan(ep.semirings.real.cast(np.array([np.nan]))[0])
    with pytest.raises(ep.InputError):
        ep.semirings.real.cast(np.array(["a"]))


@given(st.one_of(st.sampled_from([2**24 + 1, 2**31 - 1, 2**53 + 1, 2**63 - 1, 2**63,
                                   2**64 - 1, -2**63, -2**53 - 1, 7]),
                 st.integers(-2**64, 2**64)), st.sampled_from([np.int32, np.int64, np.uint64]),
       st.sampled_from(["real", "real32", "integer", "min_plus"]))
def test_a_cast_never_wraps_or_rounds_an_integer(v, dtype, name):
    """Integers numpy calls safe to cast (int64 to float64) or that survive a round
    trip (uint64 through int64) are refused unless the carrier holds them exactly."""
    info = np.iinfo(dtype)
    if not info.min <= v <= info.max:
        return
    sr = ep.semirings.get(name)
    a = np.array([v, 1], dtype=dtype)
    try:
        out = sr.cast(a)
    except ep.InputError:
        exact = (v == int(sr.dtype.type(v)) if sr.dtype.kind == "f"
                 else np.iinfo(sr.dtype).min <= v <= np.iinfo(sr.dtype).max)
        assert not exact, (v, dtype, name)
    else:
        assert int(out[0]) == v, (v, dtype, name, out)


def test_literal_and_negation_requirements():
    assert ep.semirings.real.literal(2) == 2.0
    with pytest.raises(ep.SemiringError):
        ep.semirings.boolean.literal(2)
    with pytest.raises(ep.SemiringError, match="negation"):
        ep.semirings.min_plus.require("negation")
    assert ep.semirings.get("min_plus") is ep.semirings.min_plus
    with pytest.raises(ep.SemiringError):
        ep.semirings.get("nope")


def test_the_builtin_registry_says_what_it_holds():
    text = repr(ep.semirings)
    assert "object at" not in text
    for s in ep.semirings.all():
        assert s.name in text

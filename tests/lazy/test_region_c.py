"""A replayed numpy region by numpy's own loops called from the binder
(Tuning.lazy_region_c, codegen_templates/binder_region.c.j2): the same loops on
the same values in the same order as the region's Python function, so the same
bits as with the switch off, special values included; an operand it does not
cover (not C-contiguous, broadcast) runs the function instead; floating-point
errors are ignored, as the function ignores them."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import replay
from etchpy.runtime import binder

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no C binder here")]

OFF = ep.Tuning(lazy_region_c=False)

PROGRAMS = {
    "sigmoid": lambda F, a, b: 1 / (1 + F.exp(-a)) - b,
    "log sqrt abs": lambda F, a, b: F.log(1 + F.abs(a)) + F.sqrt(F.abs(b)),
    "relu clip": lambda F, a, b: F.maximum(a, 0) + F.minimum(b, 0.5),
    "recip": lambda F, a, b: 1 / (a + 2.0) * b,
    "scaled sum": lambda F, a, b: a * b - 0.1 * a / b,
    "exp minus": lambda F, a, b: F.exp(a) - b,
    "tanh link": lambda F, a, b: 2 / (1 + F.exp(-2 * a)) - 1 - b,      # a python int operand
}


def _args(dtype, seed, special=False):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((20, 7)) * 30, rng.random((20, 7))
    if special:
        a.flat[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 800.0]
        b.flat[:4] = [0.0, -0.0, np.nan, np.inf]
    return a.astype(dtype), b.astype(dtype)


def _runner(prog, args, tuning=None):
    out = prog(ep, *(ep.lazy(x) for x in args))
    ep.compute(out, tuning=tuning)
    return replay.PROGRAMS.get((replay.signature([out])[0], True, 1, tuning)).single.text


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("special", [False, True])
def test_the_c_region_gives_the_bits_of_the_function(name, dtype, special):
    prog = PROGRAMS[name]
    # (float32 - 1 with the lazy int constant -1·1 is a float64 node: not described)
    covered = not (name == "tanh link" and dtype == np.float32)
    assert ("region(" in _runner(prog, _args(dtype, 0))) is covered
    assert "region(" not in _runner(prog, _args(dtype, 0), OFF)
    with np.errstate(all="ignore"):
        for seed in (1, 2, 3):
            args = _args(dtype, seed, special)
            got = ep.compute(prog(ep, *(ep.lazy(x) for x in args)))
            off = ep.compute(prog(ep, *(ep.lazy(x) for x in args)), tuning=OFF)
            np.testing.assert_array_equal(got, off)
            assert got.dtype == off.dtype and got.shape == off.shape
            want = prog(np, *args)      # numpy as written (the lazy program may reorder)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.nanmax(
                np.abs(np.where(np.isfinite(want), want, 0))))


def test_an_operand_it_does_not_cover_runs_the_function():
    prog = PROGRAMS["sigmoid"]
    a, b = _args(np.float64, 0)
    _runner(prog, (a, b))
    for x, y in ((np.asfortranarray(a), b), (a, np.asfortranarray(b)),
                 (a, np.ascontiguousarray(np.stack([b, b], axis=2))[:, :, 0])):
        with np.errstate(all="ignore"):
            got = ep.compute(prog(ep, ep.lazy(x), ep.lazy(y)))
            np.testing.assert_array_equal(got, prog(np, x, y))


def test_a_broadcast_operand_is_not_described():
    rows = lambda F, a, b: F.exp(a) - b       # noqa: E731
    a, b = np.random.default_rng(0).random((20, 7)), np.random.default_rng(1).random(7)
    text = _runner(rows, (a, b))
    assert "region(" not in text
    np.testing.assert_array_equal(ep.compute(rows(ep, ep.lazy(a), ep.lazy(b))), np.exp(a) - b)


def test_its_floating_point_errors_are_ignored_under_any_error_state():
    prog = PROGRAMS["exp minus"]
    a, b = _args(np.float64, 0, special=True)
    _runner(prog, (a, b))
    with np.errstate(all="raise"):      # numpy checks (and clears) the flags itself
        with pytest.raises(FloatingPointError):
            np.exp(np.array([1000.0]))
        ep.compute(prog(ep, ep.lazy(a), ep.lazy(b)))      # overflow inside, ignored
        np.add(np.ones(3), np.ones(3))                   # no stale flag seen here

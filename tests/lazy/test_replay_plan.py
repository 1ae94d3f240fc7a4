"""A replayed program that is one kernel step over its leaves in order
(etchpy.lazy.fast_replay's `plan`) runs that kernel's call plan from the C
lookup, without the runner's frame: the same answers as numpy and as the plain
path (tuning given: no C lookup), on arrays written in place between calls, a
changed shape or dtype, float32, and an input the plan refuses (Fortran order:
its MISS runs the runner, then the general path)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import replay
from etchpy.runtime import binder

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(not binder.available(), reason="no C binder here")]

PLAIN = ep.Tuning()         # a tuning given: compute's Python path, no C lookup


def _gradient(F, X, w, y):
    return X.T @ (X @ w - y)


def _arrays(seed, m=40, n=30, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.random((m, n)).astype(dtype) / n, rng.standard_normal(n).astype(dtype),
            rng.random(m).astype(dtype)]


def _both(args):
    fast = ep.compute(_gradient(ep, *(ep.lazy(a) for a in args)))
    plain = ep.compute(_gradient(ep, *(ep.lazy(a) for a in args)), tuning=PLAIN)
    return fast, plain


def test_one_kernel_over_its_leaves_replays_by_its_plan():
    args = _arrays(0)
    _both(args)
    outs = [_gradient(ep, *(ep.lazy(a) for a in args))]
    tape = replay.PROGRAMS.get((replay.signature(outs)[0], True, 1, None))
    assert tape is not None and tape.plan is not None
    for _ in range(3):              # written in place between calls
        for a in args:
            a *= 1.25
        fast, plain = _both(args)
        np.testing.assert_allclose(fast, _gradient(np, *args), rtol=1e-12)
        np.testing.assert_array_equal(fast, plain)


def test_another_shape_and_dtype_and_a_refused_input_give_the_same_answers():
    dtype = np.float32
    for _ in range(2):
        args = _arrays(1, 12, 7, dtype)
        fast, plain = _both(args)
        assert fast.dtype == plain.dtype == dtype
        np.testing.assert_array_equal(fast, plain)
    args[0] = np.asfortranarray(args[0])        # same program, refused by the plan
    fast, plain = _both(args)
    np.testing.assert_array_equal(fast, plain)
    np.testing.assert_allclose(fast, _gradient(np, *args), rtol=1e-5)

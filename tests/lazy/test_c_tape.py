"""A replay run by the binder (Tuning.lazy_c_tape, codegen_templates/binder_tape.c.j2):
a tape of one dense result and no guard whose every step the binder makes (a
BLAS product with its epilogue or not, a region by numpy's loops, a kernel by
its plan) is run from the C lookup, step by step as the runner runs it, so its
answers are the runner's bit for bit; a step that declines (an operand not
C-contiguous) runs the runner, which gives the answer all the same."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.lazy import replay
from etchpy.runtime import binder

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no C binder here")]

OFF = ep.Tuning(lazy_c_tape=False)

PROGRAMS = {
    "poisson": lambda F, X, w, y: X.T @ (F.exp(X @ w) - y),
    "ridge": lambda F, X, w, y: X.T @ (X @ w - y) + 0.1 * w,
    "logistic": lambda F, X, w, y: X.T @ (1 / (1 + F.exp(-(X @ w))) - y),
    "relu": lambda F, X, w, y: F.maximum(X @ w, 0) * y,
    "power": lambda F, X, w, y: (X @ w) / F.sqrt(((X @ w) * (X @ w)).sum()),
}


def _args(seed, n=60):
    rng = np.random.default_rng(seed)
    return rng.random((n, n)) / n, rng.standard_normal(n), rng.random(n)


def _tape(prog, args, tuning=None):
    out = prog(ep, *(ep.lazy(a) for a in args))
    ep.compute(out, tuning=tuning)
    return replay.PROGRAMS.get((replay.signature([out])[0], True, 1, tuning))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_its_answers_are_the_runners(name):
    prog = PROGRAMS[name]
    tape = _tape(prog, _args(0))
    if name in ("poisson", "logistic"):     # a kernel and a BLAS product, not one kernel
        assert "etchpy.lazy.tape" in repr(tape.plan)
    _tape(prog, _args(0), OFF)
    for seed in (1, 2, 3):
        args = _args(seed)
        node = prog(ep, *(ep.lazy(a) for a in args))
        got = ep.compute(node)
        runner = tape.single(replay.signature([node])[1])   # the leaves it reads
        off = ep.compute(prog(ep, *(ep.lazy(a) for a in args)), tuning=OFF)
        np.testing.assert_array_equal(got, runner)
        np.testing.assert_array_equal(got, off)
        np.testing.assert_allclose(got, prog(np, *args), rtol=1e-10, atol=1e-12)


def test_a_step_that_declines_runs_the_runner():
    prog = PROGRAMS["poisson"]
    X, w, y = _args(0)
    _tape(prog, (X, w, y))
    for args in ((np.asfortranarray(X), w, y), (X, w[::-1].copy()[::-1], y),
                 (X, w, np.ascontiguousarray(np.stack([y, y], 1))[:, 0])):
        got = ep.compute(prog(ep, *(ep.lazy(a) for a in args)))
        np.testing.assert_allclose(got, prog(np, *args), rtol=1e-10, atol=1e-12)


def test_arrays_written_in_place_and_nan():
    prog = PROGRAMS["logistic"]
    X, w, y = _args(4)
    for k in range(4):
        X[k, k] = np.nan if k == 2 else X[k, k] * 2
        w *= 1.5
        got = ep.compute(prog(ep, ep.lazy(X), ep.lazy(w), ep.lazy(y)))
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(got, prog(np, X, w, y), rtol=1e-10, atol=1e-12)

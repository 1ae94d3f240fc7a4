"""The written-out replay (etchpy.lazy.fast_replay, Tuning.lazy_fast_replay):
the same answers as the loop it replaces, with the knob on and off; its
kernel steps call the kernels' fixed calls and fall back to their general path
on inputs those refuse; a traced function's entry (its last kind's test and
replay in one call) yields to the full lookup on any other kind."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.lazy import replay

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(lazy_fast_replay=False)


def least_squares(F, X, w, y):
    return X.T @ (X @ w - y)


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def softmax(F, X, V, Y):
    E = F.exp(X @ V)
    return X.T @ (E / E.sum(axis=1, keepdims=True) - Y), E.sum()


def _dense(seed, m=40, n=30, k=1):
    rng = np.random.default_rng(seed)
    X = rng.random((m, n)) / n
    w = rng.standard_normal((n, k)) if k > 1 else rng.standard_normal(n)
    y = rng.random((m, k)) if k > 1 else rng.random(m)
    return X, w, y


def _tape(prog, args, tuning=None):
    nodes = [ep.lazy(a) for a in args]
    out = prog(ep, *nodes)
    outs = list(out) if isinstance(out, tuple) else [out]
    ep.compute(*outs, tuning=tuning)
    sig = replay.signature(outs)[0]
    return replay.PROGRAMS.get((sig, True, 1, tuning))


@pytest.mark.parametrize("prog, k", [(least_squares, 1), (logistic, 1), (softmax, 4)])
def test_the_written_replay_equals_the_loop_and_numpy(prog, k):
    for tuning in (None, OFF):
        tape = _tape(prog, _dense(0, k=k), tuning)
        assert tape is not None
        for seed in range(1, 4):
            args = _dense(seed, k=k)
            want = prog(np, *args)
            want = want if isinstance(want, tuple) else (want,)
            for got in (tape.run(list(args)), tape.replay(list(args))):
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g, w, rtol=1e-12)
        assert (tape.run == tape.replay) == (tuning is OFF)


def test_a_kernel_step_calls_its_fixed_call_and_falls_back_on_a_miss():
    tape = _tape(least_squares, _dense(0))
    (slot, fn), = tape.steps
    assert fn.kernel is not None           # the fused Xᵀ(Xw - y) kernel, fixable
    X, w, y = _dense(1)
    Xf = np.asfortranarray(X)              # its fixed call refuses it: the general path
    np.testing.assert_allclose(tape.run([Xf, w, y])[0], least_squares(np, X, w, y),
                               rtol=1e-12)
    np.testing.assert_allclose(tape.run([X, w, y])[0], least_squares(np, X, w, y), rtol=1e-12)


def test_without_the_binder_the_written_fixed_call_runs():
    tuning = ep.Tuning(call_binder=False)
    tape = _tape(least_squares, _dense(0), tuning)
    for seed in (1, 2):
        X, w, y = _dense(seed)
        np.testing.assert_allclose(tape.run([X, w, y])[0], least_squares(np, X, w, y),
                                   rtol=1e-12)
        Xr, wr = X[:, ::-1].copy(), w[::-1].copy()
        np.testing.assert_allclose(tape.run([Xr, wr, y])[0], least_squares(np, Xr, wr, y),
                                   rtol=1e-12)


def test_a_traced_entry_yields_to_other_kinds_and_to_sparse_arguments():
    grad = ep.lazy.function(lambda X, w, y: logistic(ep, X, w, y))
    for args in [_dense(0), _dense(1), _dense(2, m=20, n=10), _dense(3),
                 (sp.csr_array(_dense(4)[0]), *_dense(4)[1:]), _dense(5)]:
        np.testing.assert_allclose(grad(*args), logistic(np, *args), rtol=1e-12)
    assert len(grad.traces) == 3
    X, w, y = _dense(6)
    np.testing.assert_allclose(grad(X, w, X[:, 0].copy()), logistic(np, X, w, X[:, 0]),
                               rtol=1e-12)
    with pytest.raises(ep.errors.InputError):
        grad(X, np.ones(7), y)
    assert grad._last((X, w)) is None and grad._last((X, w, w)) is None


@pytest.mark.parametrize("tuning", [None, OFF])
def test_a_failed_guard_in_either_replay_runs_afresh(tuning):
    f = ep.lazy.function(lambda X, U, V: ((X - U @ V.T) ** 2).sum(), tuning=tuning)
    rng = np.random.default_rng(4)
    X, U, V = rng.random((6, 5)), rng.random((6, 2)), rng.random((5, 2))
    for x in (X, X + 1, np.where(X > 0.5, np.inf, X), X, X + 2):
        with np.errstate(all="ignore"):
            want = ((x - U @ V.T) ** 2).sum()
            got = f(x, U, V)
        assert got == want if np.isinf(want) else np.isclose(got, want)


def test_a_kernel_step_on_a_scipy_input_calls_the_binders_plan_and_checks_it():
    from etchpy.runtime import binder
    rng = np.random.default_rng(0)
    X = sp.random_array((40, 30), density=0.1, format="csr", random_state=0)
    w, y = rng.standard_normal(30), rng.random(40)
    tape = _tape(logistic, (X, w, y))
    fixed = [k for k, (_, fn) in enumerate(tape.steps) if f"c{k}" in tape.run.__globals__]
    assert fixed or binder.module() is None
    for seed in (1, 2):
        X2 = sp.random_array((40, 30), density=0.1, format="csr", random_state=seed)
        np.testing.assert_allclose(tape.run([X2, w, y])[0], logistic(np, X2, w, y), rtol=1e-12)
    X2.data[:] = 2.0                                   # changed in place: read as it is
    np.testing.assert_allclose(tape.run([X2, w, y])[0], logistic(np, X2, w, y), rtol=1e-12)
    X2.indices[0] = 10 ** 6                            # broken: refused, never read
    with pytest.raises(ep.errors.InputError):
        tape.run([X2, w, y])


def test_the_written_kind_test_refuses_every_other_kind():
    X, w, y = _dense(0, m=30)
    tape = _tape(logistic, (X, w, y))
    entry, entry_single = tape.entries
    np.testing.assert_allclose(entry_single((X, w, y)), logistic(np, X, w, y), rtol=1e-12)
    np.testing.assert_allclose(entry([X, w, y])[0], logistic(np, X, w, y), rtol=1e-12)
    for bad in [(X, w), (X, w, y, y), (X, w, y[:5]), (X.astype(np.float32), w, y),
                (X, w, y.tolist()), (sp.csr_array(X), w, y), (X, w, w), (X, y, y)]:
        assert entry_single(bad) is None and entry(bad) is None
    for same_kind in [(np.asfortranarray(X), w, y), (X, w, X[:, 0])]:   # layout: the fixed
        want = logistic(np, *same_kind)                                 # call's own test
        np.testing.assert_allclose(entry_single(same_kind), want, rtol=1e-12)
    assert _tape(logistic, (sp.csr_array(X), w, y)).entries == (None, None)


@pytest.mark.parametrize("tuning", [None, OFF])
def test_a_scalar_kernel_output_read_by_later_steps(tuning):
    def prog(X, w):
        return ep.exp((X @ w).sum() / 100) * (X.T @ (X @ w)), (X @ w).sum()
    f = ep.lazy.function(prog, tuning=tuning)
    for seed in range(3):
        X, w, _ = _dense(seed)
        got = f(X, w)
        np.testing.assert_allclose(got[0], np.exp((X @ w).sum() / 100) * (X.T @ (X @ w)),
                                   rtol=1e-12)
        assert np.ndim(got[1]) == 0 and np.isclose(got[1], (X @ w).sum())

"""Fusion plans (etchpy.lazy.fusion): every plan over a program's candidates
gives numpy's answer; the chosen plan is the cheapest priced, and explain shows
the candidates and both plans."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.lazy import fusion
from etchpy.lazy.program import _program
from etchpy.lazy.steps import Evaluator, to_result

from test_properties import dense, programs

pytestmark = pytest.mark.usefixtures("shared_cache")

RNG = np.random.default_rng(11)
X = sp.random_array((6, 5), density=0.4, format="csr", random_state=3)
W, Y, U = RNG.standard_normal(5), RNG.random(6), RNG.random((6, 5))


def every_plan(arrays, limit=8):
    """The results of each plan over the program's candidates (up to `limit`)."""
    _, outs, uses, _ = _program(arrays, True)
    cands = fusion.candidates(Evaluator(uses), outs)
    for bits in itertools.islice(itertools.product((False, True), repeat=len(cands)), limit):
        ev = Evaluator(uses)
        ev.plan = {c.key: b for c, b in zip(cands, bits)}
        yield cands, [to_result(o, ev.value(o)) for o in outs]


def check(arrays, wants):
    count = 0
    for cands, got in every_plan(arrays):
        count += 1
        for g, w in zip(got, wants):
            np.testing.assert_allclose(dense(g), w, rtol=1e-9, atol=1e-12)
    return count


def test_every_plan_of_fixed_programs_gives_numpys_answer():
    x, w, y, u = (ep.lazy(a) for a in (X, W, Y, U))
    z = ep.exp(x @ w) * 0.5 + y                       # shared, on a map of a sum
    Xd = X.toarray()
    zd = np.exp(Xd @ W) * 0.5 + Y
    assert check([x.T @ z, z.sum(), x.T @ (1 / (1 + ep.exp(-(x @ w))) - y)],
                 [Xd.T @ zd, zd.sum(), Xd.T @ (1 / (1 + np.exp(-(Xd @ W))) - Y)]) >= 4
    assert check([x.T @ (x @ w - y)], [Xd.T @ (Xd @ W - Y)]) == 4   # a sparse operand
    s = u @ w                                         # a shared product
    assert check([s.sum(), ep.sqrt(s * s + 1)], [(U @ W).sum(), np.sqrt((U @ W) ** 2 + 1)]) >= 2


@settings(max_examples=5, deadline=None)
@given(programs())
def test_every_plan_of_random_programs_gives_numpys_answer(outs):
    (a, da), *_ = outs
    t, dt = a * 2 + 1, da * 2 + 1          # shared work: a candidate
    check([t.sum(), ep.abs(t)] + [b for b, _ in outs[1:]],
          [dt.sum(), np.abs(dt)] + [want for _, want in outs[1:]])


def test_explain_shows_candidates_and_the_cheapest_plan():
    x, w, y = ep.lazy(X), ep.lazy(W), ep.lazy(Y)
    text = ep.explain(x.T @ (1 / (1 + ep.exp(-(x @ w))) - y))
    assert "fusion plan (exhaustive search, 4 plans priced)" in text
    assert "C0: (X0 @ X1)" in text and "chosen plan:" in text and "rules' plan:" in text
    costs = [float(ln.rsplit("cost ", 1)[1]) for ln in text.splitlines() if "plan:  " in ln]
    assert costs[1] <= costs[0]


def test_a_dense_operand_of_a_sparse_product_can_be_materialised():
    """Xᵀ·(X·w − y): X·w − y is a candidate; materialised, both products are
    library products (chosen when scipy's matvec is priced below a kernel's
    work: lazy_matvec_library_work 0.8); fused, one kernel (the default, 1.0:
    an etchpy SpMV kernel is as fast as scipy's matvec, and the kernel reads X
    once for both products). Both give numpy's answer."""
    n = 2000
    Xb = sp.random_array((n, n), density=0.01, format="csr", random_state=5)
    x, w, y = ep.lazy(Xb), ep.lazy(np.ones(n)), ep.lazy(np.arange(n, dtype=float))
    want = Xb.T @ (Xb @ np.ones(n) - np.arange(n))
    for tuning, library in [(ep.Tuning(lazy_matvec_library_work=0.8), 2), (None, 0)]:
        text = ep.explain(x.T @ (x @ w - y), tuning=tuning)
        assert "C1: ((X0 @ X1) + (-1 * X2))" in text
        assert text.count("scipy product") == library
        got = ep.compute(x.T @ (x @ w - y), tuning=tuning)
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_a_libm_map_is_priced_per_entry_in_a_kernel():
    """exp in a kernel is one libm call an entry, numpy's exp is SIMD: with a
    high lazy_libm_cost no kernel computes exp (X @ W is materialised, exp runs
    in numpy); free, the exp is fused into X @ W's kernel. Both give numpy's
    answer, recorded and replayed."""
    n, k = 300, 8
    Xb = sp.random_array((n, n), density=0.02, format="csr", random_state=6)
    Wb = np.random.default_rng(6).random((n, k))
    x, w = ep.lazy(Xb), ep.lazy(Wb)
    e = ep.exp(x @ w)
    p = e / e.sum(axis=1, keepdims=True)
    ed = np.exp(Xb @ Wb)
    want = Xb.T @ (ed / ed.sum(axis=1, keepdims=True))
    for cost, fused in ((1e4, False), (0.0, True)):
        tuning = {"lazy_libm_cost": cost}
        steps = ep.explain(x.T @ p, tuning=tuning).split("steps:")[1]
        kernels = [ln for ln in steps.splitlines() if ln.startswith("  kernel")]
        assert any("exp(" in ln for ln in kernels) == fused
        for _ in range(2):
            np.testing.assert_allclose(ep.compute(x.T @ p, tuning=tuning), want, rtol=1e-10)

"""Every nesting a user may write of one contraction is planned alike once the
sizes are measured on the inputs: the optimizer's tied terms (extract.ties) are all
priced by the plan model, a fused reader's revisits of a target larger than the
cache are priced (plan.cost, `outside`), and with measured sizes a rewrite needs
only `rewrite_margin * measured_relief` of the written price (pipeline._margin)."""
import itertools

import numpy as np
import pytest

import etchpy as ep
from etchpy.expr.nodes import Mul, Sum
from etchpy.optimizer.optimize import optimize

i, j, k, a, b, c = ep.indices("i j k a b c")
X = ep.tensor("X", 3, "csf")
U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
FACTOR = {"i": (i, U[i, a]), "j": (j, V[j, b]), "k": (k, W[k, c])}


def _nested(first_to_last):
    e = X[i, j, k]
    for v in first_to_last:
        ix, f = FACTOR[v]
        e = ep.sum(ix, e * f)
    return e


def _inputs(n=40, r=12, entries=6000, seed=8):
    rng = np.random.default_rng(seed)
    coords = np.unique(rng.integers(0, n, size=(entries, 3)), axis=0)
    xt = ep.Tensor.from_coords(coords.T, rng.random(len(coords)), (n, n, n), "csf")
    return {"X": xt, **{m: rng.random((n, r)) for m in "UVW"}}


def _order(e) -> str:
    """The contracted indices of a nested term, outermost Σ first."""
    match e:
        case Sum(index=ix, body=body):
            return ix.name + _order(body)
        case Mul(a=x, b=y):
            return _order(x) + _order(y)
    return ""


def test_the_optimizer_offers_every_tied_contraction_order():
    dims = {**{v: 120 for v in "ijk"}, **{v: 16 for v in "abc"}}
    got = optimize(_nested("ijk"), dims=dims, nnz={"X": 188_000})
    orders = {_order(t) for t in (got.expr, *got.alternatives)}
    assert {"".join(p) for p in itertools.permutations("ijk")} <= orders


@pytest.mark.parametrize("relief", [1.8, 1.0])
def test_every_written_order_is_priced_near_the_best(relief):
    ins, margin = _inputs(), 0.5 * relief
    want = np.einsum("ijk,ia,jb,kc->abc", ins["X"].to_dense(), ins["U"], ins["V"], ins["W"])
    chosen = {}
    for order in itertools.permutations("ijk"):
        kern = ep.compile(_nested(order), out_indices=(a, b, c),
                          tuning={"measured_relief": relief})
        np.testing.assert_allclose(kern(**ins), want, rtol=1e-10)
        written, rewritten, used = kern.plan_costs
        chosen[order] = rewritten if used else written
        assert chosen[order] <= written         # never priced above what was written
        if rewritten <= margin * written:
            assert used
    best = min(chosen.values())
    if relief > 1:                  # every order within the margin of the best
        assert max(chosen.values()) <= best / margin

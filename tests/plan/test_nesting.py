"""Never worse than written (plan.nesting): a Σ nested in a product as the user
wrote it is a plan the planner can always choose; the chosen plan's price is at
most the written nesting's; a temporary is laid out for its reader (plan.layout)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import pipeline
from etchpy.runtime.kernel import make_request
from etchpy.plan import nesting
from etchpy.plan.cost import Stats, strided
from etchpy.plan.plan import make_plan, total_cost
from etchpy.testing import check_backends, problems

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k, l, a, b, c = ep.indices("i j k l a b c")
S = ep.sum


def chain3():
    P, Q, R, x = ep.tensor("P", 2), ep.tensor("Q", 2), ep.tensor("R", 2), ep.tensor("x", 1)
    return S(j, P[i, j] * S(k, Q[j, k] * S(l, R[k, l] * x[l])))


def test_factor_points_are_the_products_with_a_nested_sum():
    e = chain3()
    assert nesting.factor_points(e) == (("s",), ("s", 1, "s"))
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    assert nesting.factor_points(S(j, A[i, j] * x[j])) == ()


def test_a_written_chain_runs_as_written_steps_and_agrees():
    """P(Q(Rx)) written nested: three matrix-vector steps, not one O(n⁴) nest."""
    n = 40
    rng = np.random.default_rng(0)
    d = {t: rng.random((n, n)) for t in "PQR"} | {"x": rng.random(n)}
    kern = ep.compile(chain3())
    np.testing.assert_allclose(kern(**d), d["P"] @ (d["Q"] @ (d["R"] @ d["x"])))
    assert len(kern.plan.steps) == 3
    assert all(len(s.order) == 2 for s in kern.plan.steps)
    text = kern.explain()
    assert "nesting: 2 Σ nested in products; written nesting" in text
    assert "chosen: as written" in text


def test_without_the_optimizer_the_written_nesting_is_kept_too():
    n = 30
    rng = np.random.default_rng(1)
    d = {t: rng.random((n, n)) for t in "PQR"} | {"x": rng.random(n)}
    kern = ep.compile(chain3(), optimize=False)
    assert len(kern.plan.steps) == 3
    np.testing.assert_allclose(kern(**d), d["P"] @ (d["Q"] @ (d["R"] @ d["x"])))
    flat = ep.compile(chain3(), optimize=False, tuning={"written_nesting": False})
    assert len(flat.plan.steps) == 1          # the switch off: one plain loop nest
    np.testing.assert_allclose(flat(**d), kern(**d))


def test_an_optimizer_result_compiled_again_keeps_its_nesting():
    P, Q, R, x = ep.tensor("P", 2), ep.tensor("Q", 2), ep.tensor("R", 2), ep.tensor("x", 1)
    flat = S((j, k, l), P[i, j] * Q[j, k] * R[k, l] * x[l])
    opt = ep.optimize(flat, dims=dict.fromkeys("ijkl", 300))
    assert len(ep.compile(flat).plan.steps) == 3
    assert len(ep.compile(opt.expr, optimize=False).plan.steps) == 3


def test_a_nested_sum_read_at_few_places_is_flattened():
    """Σ_j a[j]·(Σ_k B[j,k]) with a holding 10 of 1000 entries: kept, the temporary
    sums every row of B; flattened, only the 10 rows a reads."""
    a, B = ep.tensor("a", 1, "csf"), ep.tensor("B", 2)
    e = S(j, a[j] * S(k, B[j, k]))
    got = nesting.best(e, None, None, Stats(dims=dict.fromkeys("jk", 1000), nnz={"a": 10}))
    assert got.kept == frozenset() and got.price == got.flat < got.written
    assert len(got.plan.steps) == 1


def test_a_nested_sum_that_saves_work_is_kept():
    """Σ_j A[i,j]·(Σ_k B[j,k]), both sparse: flattened, B's row j is summed again
    for every A[i,j]; kept, once per j."""
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    e = S(j, A[i, j] * S(k, B[j, k]))
    got = nesting.best(e, None, None, Stats(dims=dict.fromkeys("ijk", 1000)))
    assert got.kept == frozenset(got.points) and got.price == got.written < got.flat
    assert len(got.plan.steps) == 2


def _sized(expr, n):
    return Stats(dims={ix: n for ix in "ijklabc"})


@st.composite
def nested_products(draw):
    """A random product tree of matrices and vectors with Σ nested where drawn."""
    fmts = st.sampled_from(["dense", "csr", "csc", "dcsr"])
    names = iter("ABCDEFGH")
    idx = list(ep.indices("i j k l m"))

    def term(depth, out):
        if depth == 0 or draw(st.booleans()):
            other = draw(st.sampled_from([v for v in idx if v != out]))
            t = ep.tensor(next(names), 2, draw(fmts))
            return t[out, other], other
        inner, free = term(depth - 1, out)
        nxt = draw(st.sampled_from([v for v in idx if v not in (out, free)]))
        t = ep.tensor(next(names), 2, draw(fmts))
        return S(free, inner * t[free, nxt]), nxt

    body, last = term(3, idx[0])
    x = ep.tensor("x", 1)
    return S(last, body * x[last])


@settings(max_examples=25)
@given(nested_products(), st.sampled_from([4, 50, 2000]))
def test_the_chosen_plan_is_never_priced_above_the_written_nesting(e, n):
    stats = _sized(e, n)
    got = nesting.best(e, None, None, stats)
    try:
        written = make_plan(e, keep_factored=True, stats=stats)
    except ep.OrderError:
        return
    assert got.price <= total_cost(written, stats.with_origin(written.origin)) * (1 + 1e-9)
    assert got.price <= got.flat * (1 + 1e-9)


@settings(max_examples=15)
@given(problems(max_indices=3))
def test_chosen_nestings_agree_with_the_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",))


@settings(max_examples=10)
@given(nested_products())
def test_random_nested_products_compile_right(e):
    rng = np.random.default_rng(2)
    ins = {}
    for acc in ep.expr.walk.accesses(e):
        t = acc.tensor
        ins[t.name] = (rng.random(5) if t.order == 1 else
                       sp.random(5, 5, 0.4, format="csr", random_state=3)
                       if not t.format.is_dense else rng.random((5, 5)))
    check_backends(e, ins, backends=("c",))


def test_a_strided_read_is_counted():
    T = ep.tensor("T", 2)
    assert strided(T[i, j], "i") == 1 and strided(T[i, j], "j") == 0
    assert strided(T[i, j], "k") == 0


def test_a_temporary_is_laid_out_in_its_readers_order():
    """Tucker: each temporary's axes are in the order its reader loops over them."""
    X = ep.tensor("X", 3, "csf")
    U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
    e = S(i, U[i, a] * S(j, V[j, b] * S(k, X[i, j, k] * W[k, c])))
    stats = Stats(dims={"i": 200, "j": 200, "k": 200, "a": 16, "b": 16, "c": 16},
                  nnz={"X": 300_000})
    plan = make_plan(e, (a, b, c), keep_factored=True, stats=stats)
    for n, s in enumerate(plan.steps):
        if s.target not in plan.temps:
            continue
        reader = next(r for r in plan.steps[n + 1:] if s.target in str(r.body))
        acc = next(x for x in ep.expr.walk.accesses(reader.body) if x.tensor.name == s.target)
        pos = [reader.order.index(ix.name) for ix in acc.indices]
        assert pos == sorted(pos), (s, reader)


def test_tucker_picks_the_contraction_order_the_model_prices_least():
    """The optimizer's term and its one-class alternatives are priced by the plan
    model; the flat Tucker contraction compiles at most the price of every
    written order of it."""
    X = ep.tensor("X", 3, "csf")
    U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
    dims = {"i": 200, "j": 200, "k": 200, "a": 16, "b": 16, "c": 16}
    opts = {"dims": dims, "nnz": {"X": 300_000}}
    flat = S((i, j, k), X[i, j, k] * U[i, a] * V[j, b] * W[k, c])
    chosen = pipeline.compile_request(make_request(flat, out_indices=(a, b, c),
                                                   optimizer_options=opts))
    stats = Stats(dims, {"X": 300_000})
    f = {"i": (U, a), "j": (V, b), "k": (W, c)}
    for o in ("ijk", "kji", "jki", "kij"):
        t = X[i, j, k]
        for v in o:
            ix = ep.Index(v)
            m, r = f[v]
            t = S(ix, m[ix, r] * t)
        written = nesting.best(t, (a, b, c), None, stats, only_written=True)
        assert chosen.costs[1 if chosen.costs[2] else 0] <= written.price * 1.05
    assert chosen.costs[2]


def test_explain_without_the_switch_says_the_nesting_is_not_priced():
    kern = ep.compile(chain3(), tuning={"written_nesting": False})
    assert "Tuning.written_nesting off" in kern.explain()
    assert math.isfinite(kern.plan_costs[0])

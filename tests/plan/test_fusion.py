"""plan.fusion: which temporaries run inside the loops of the step that makes
them, and how the plan cost model prices them."""
import math

import etchpy as ep
from etchpy.plan import fusion
from etchpy.plan.cost import Stats, plan_cost
from etchpy.plan.plan import make_plan
from etchpy.tuning import Tuning

i, j, k, l, r = ep.indices("i j k l r")
X = ep.tensor("X", 3, format="csf")
B, C = ep.tensor("B", 2), ep.tensor("C", 2)
leveled = ep.sum(j, B[j, r] * ep.sum(k, C[k, r] * X[i, j, k]))


def test_a_level_by_level_mttkrp_is_one_chain():
    plan = make_plan(leveled, keep_factored=True)
    assert len(plan.steps) == 2
    (chain,) = fusion.chains(plan)
    (link,) = chain.links
    assert chain.first == 0 and link.temp == plan.steps[0].target
    assert link.prefix == ("i", "j") and link.rest == ("r",)
    reader = plan.steps[1]
    assert fusion.inner_order(reader, link) == ("r",)
    assert "X" not in str(fusion.read_workspace(reader.body, link))


def test_a_reader_that_sums_outside_the_prefix_is_not_fused():
    # out[i,l] = Σ_k T[i,k]·D[k,l] with T[i,k] = Σ_j A[i,j]·B[j,k]: the reader
    # sums k, which is not in T's prefix (i): a GEMM, left to BLAS
    A, D = ep.tensor("A", 2, format="csr"), ep.tensor("D", 2)
    e = ep.sum(k, ep.sum(j, A[i, j] * B[j, k]) * D[k, l])
    plan = make_plan(e, keep_factored=True)
    assert len(plan.steps) == 2 and fusion.chains(plan) == []


def test_a_dense_driver_keeps_its_temporary():
    Xd = ep.tensor("Xd", 3)
    e = ep.sum(j, B[j, r] * ep.sum(k, C[k, r] * Xd[i, j, k]))
    assert fusion.chains(make_plan(e, keep_factored=True)) == []


def test_a_temporary_read_in_one_term_of_a_sum_is_a_whole_link():
    # T·B + B: where T is zero the reader still adds B, so it must run at every
    # point of (i, j): a whole link, fused only where the driver visits each
    e = ep.sum(j, ep.sum(k, C[k, r] * X[i, j, k]) * B[j, r] + B[j, r])
    plan = make_plan(e, keep_factored=True)
    (chain,) = fusion.chains(plan)
    assert [ln.whole for ln in chain.links] == [True]
    (link,) = fusion.chains(make_plan(leveled, keep_factored=True))[0].links
    assert not link.whole


def test_a_temporary_under_a_map_or_read_twice_is_a_whole_link():
    T = ep.sum(k, C[k, r] * X[i, j, k])
    for e in (ep.sum(j, ep.exp(T) * B[j, r]), ep.sum(j, T * T * B[j, r])):
        (chain,) = fusion.chains(make_plan(e, keep_factored=True))
        assert [ln.whole for ln in chain.links] == [True]


def test_the_cost_model_prices_a_fused_chain_below_its_dense_temporary():
    plan = make_plan(leveled, keep_factored=True)
    stats = dict(dims={"i": 200, "j": 200, "k": 200, "r": 16}, nnz={"X": 10_000})
    fused = plan_cost(plan, Stats(**stats))
    dense = plan_cost(plan, Stats(**stats, tuning=Tuning(fused_temporaries=False)))
    # the dense temporary over (i, j, r) alone is 640 000 cells at temp_weight 4
    assert fused < dense and dense - fused > 4 * 200 * 200 * 16 * 0.5
    assert math.isfinite(fused)


def test_a_compiled_chain_says_it_is_one_nest():
    sk = ep.sketch
    levels = {"sketch": sk.sum("j", sk.mul("B", sk.sum("k", sk.mul("C", "X"))))}
    flat = ep.sum((j, k), X[i, j, k] * B[j, r] * C[k, r])
    kern = ep.compile(flat, optimizer_options=levels, tuning={"rewrite_margin": math.inf})
    text = kern.explain()
    assert "one nest" in text and "a workspace over (r) per (i, j)" in text
    off = ep.compile(flat, optimizer_options=levels,
                     tuning={"rewrite_margin": math.inf, "fused_temporaries": False})
    assert "one nest" not in off.explain()


def test_a_chain_on_threads_gives_each_thread_its_workspaces():
    sk = ep.sketch
    levels = {"sketch": sk.sum("j", sk.mul("B", sk.sum("k", sk.mul("C", "X"))))}
    flat = ep.sum((j, k), X[i, j, k] * B[j, r] * C[k, r])
    kern = ep.compile(flat, optimizer_options=levels, threads=2,
                      tuning={"rewrite_margin": math.inf})
    assert "one nest" in kern.explain() and "each with its own workspaces" in kern.c_source


def test_a_chain_whose_target_lacks_the_outer_index_is_not_fused_on_threads():
    # out[r] sums i too: threads splitting i would add into the same cells
    import numpy as np
    from etchpy.testing import check_backends
    sk = ep.sketch
    sketch = {"sketch": sk.sum("i j", sk.mul("B", sk.sum("k", sk.mul("C", "X"))))}
    e = ep.sum((i, j, k), X[i, j, k] * B[j, r] * C[k, r])
    opts = dict(optimizer_options=sketch, tuning={"rewrite_margin": math.inf})
    assert "one nest" in ep.compile(e, **opts).explain()
    assert "one nest" not in ep.compile(e, threads=2, **opts).explain()
    rng = np.random.default_rng(0)
    coords = np.array([[0, 0, 1, 2], [1, 2, 0, 2], [0, 1, 1, 0]])
    ins = {"X": ep.Tensor.from_coords(coords, rng.random(4), (3, 3, 2), "csf", name="X"),
           "B": rng.random((3, 4)), "C": rng.random((2, 4))}
    for threads in (1, 2):
        check_backends(e, ins, backends=("c",), threads=threads, **opts)

"""Saturation under limits (optimizer.saturate) and extraction (optimizer.extract):
the limits come from tuning.Saturation, early stopping, exact extraction."""
import math

import pytest

import etchpy as ep
from etchpy.optimizer.optimize import equivalent, optimize, saturation_limits
from etchpy.tuning import Saturation

i, j, k, r, rp = ep.indices("i j k r rp")

SQ_DIMS = {"i": 10_000, "j": 10_000}
SQ_NNZ = {"X": 100_000}
# The stop reasons below must not depend on the machine's load: every search gets
# a time limit it never reaches.
PATIENT = 120.0
LARGE = ep.Tuning(saturation=Saturation(saturate_below=0, seconds=PATIENT))



def test_exact_extraction_is_never_worse_than_greedy():
    A, B, C = ep.tensor("A", 2), ep.tensor("B", 2), ep.tensor("C", 2)
    e = ep.sum((i, j, k), A[i, j] * (B[j, k] + C[j, k]))
    greedy, exact = optimize(e), optimize(e, exact=True)
    assert equivalent(exact.expr, e)
    assert exact.cost_after <= greedy.cost_after


def test_limits_and_stats():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    opt = optimize(e, limits=dict(iterations=2, seconds=PATIENT))
    assert opt.stats["iterations"] <= 2 and opt.stats["stop"] == "iteration limit"
    opt = optimize(e, limits=dict(nodes=50, seconds=PATIENT))
    assert opt.stats["stop"] == "node limit"
    assert equivalent(opt.expr, e)
    text = opt.explain()
    assert "before" in text and "after" in text and "cost" in text


def test_saturation_stops_when_the_best_cost_stops_improving():
    """Early stopping, for a graph over saturate_below e-nodes (0 here: every graph)."""
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    opt = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, tuning=LARGE)
    assert opt.stats["stop"] == "no improvement"
    assert opt.stats["iterations"] < 30
    costs = [c for _, c in opt.stats["root costs"]]
    assert costs == sorted(costs, reverse=True)          # the best cost never grows
    patience = ep.tuning.Saturation().patience
    assert len(costs) >= patience + 1
    assert all(c >= costs[-1] * (1 - 1e-3) for c in costs[-patience - 1:])
    full = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, tuning=LARGE, limits=dict(patience=0))
    assert full.stats["stop"] != "no improvement" and not full.stats["root costs"]
    assert opt.cost_after <= full.cost_after * (1 + 1e-3)
    # a short patience stops before the expansion pays off (it takes 3 iterations)
    short = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, tuning=LARGE, limits=dict(patience=1))
    assert short.stats["stop"] == "no improvement" and short.stats["iterations"] == 1
    assert equivalent(short.expr, e)
    # checking every 2 iterations still stops, on a multiple of 2
    every2 = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, tuning=LARGE,
                      limits=dict(check_every=2))
    assert every2.stats["stop"] == "no improvement"
    assert all(it % 2 == 0 for it, _ in every2.stats["root costs"])


def test_limits_come_from_the_tuning_and_limits_overrides_them():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    tight = ep.Tuning(saturation=Saturation(iterations=2, patience=0, seconds=PATIENT))
    opt = optimize(e, tuning=tight)
    assert opt.stats["iterations"] == 2 and opt.stats["stop"] == "iteration limit"
    assert saturation_limits(tight, {"nodes": 50}) == Saturation(iterations=2, patience=0,
                                                                seconds=PATIENT, nodes=50)
    one = optimize(e, tuning=tight, limits={"iterations": 1}).stats   # patience 0 kept
    assert one["iterations"] == 1 and not one["root costs"]
    assert optimize(e, tuning=tight, limits=Saturation(seconds=PATIENT)).stats["iterations"] > 2
    assert saturation_limits() == ep.tuning.DEFAULT.saturation == Saturation()


def test_a_small_graph_runs_to_saturation_and_finds_the_als_factorisation():
    """Σ_k (Σ_r U[i,r]·V[k,r] − X[i,k])·V[k,c] needs six iterations; a graph below
    saturate_below e-nodes is not stopped early, even under a short patience."""
    c = ep.Index("c")
    U, V, X = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("X", 2, "csr")
    als = ep.sum(k, (ep.sum(r, U[i, r] * V[k, r]) - X[i, k]) * V[k, c])
    dims, nnz = {"i": 4000, "k": 4000, "r": 8, "c": 8}, {"X": 160_000}
    opt = optimize(als, dims=dims, nnz=nnz, limits=dict(patience=1, seconds=PATIENT))
    assert opt.stats["stop"] == "saturated"
    assert opt.stats["nodes"] < Saturation().saturate_below
    assert opt.cost_after * 50 < opt.cost_before and equivalent(opt.expr, als)
    early = optimize(als, dims=dims, nnz=nnz,
                     limits=dict(patience=1, saturate_below=0, seconds=PATIENT))
    assert early.stats["stop"] == "no improvement" and early.cost_after == early.cost_before


def test_a_large_graph_still_stops_when_it_stops_improving():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    opt = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, limits=dict(seconds=PATIENT, idle=0))
    assert opt.stats["stop"] == "no improvement"
    assert opt.stats["nodes"] >= Saturation().saturate_below


def test_a_small_graph_stops_after_idle_iterations_without_a_cheaper_root():
    """Below saturate_below, a graph that keeps growing without a cheaper root stops
    after `idle` iterations (the squared loss's best term comes at iteration 5, its
    graph passes 1000 e-nodes near iteration 20), with the same term."""
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    idle = Saturation().idle
    opt = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, limits=dict(seconds=PATIENT))
    best, best_at = math.inf, 0          # the last iteration that cut the cost by min_gain
    for it, c in opt.stats["root costs"]:
        if c < best * (1 - Saturation().min_gain):
            best, best_at = c, it
    assert opt.stats["stop"] == "no improvement" and opt.stats["iterations"] == best_at + idle
    assert opt.stats["nodes"] < Saturation().saturate_below
    full = optimize(e, dims=SQ_DIMS, nnz=SQ_NNZ, limits=dict(seconds=PATIENT, idle=0))
    assert full.expr == opt.expr and full.cost_after == opt.cost_after


def test_units_are_not_kept_in_products_or_sums():
    """mul_of/add_of leave out operands that are the literal 1 (0 in a sum): no
    product node of the saturated graph holds a unit beside another factor."""
    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.rules import rules_for
    from etchpy.optimizer.saturate import saturate
    from etchpy.plan.cost import Stats
    from etchpy.semiring import semirings
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2)
    for sr in ("real", "min_plus", "integer"):
        eg = EGraph(semirings.get(sr), Stats(None, None))
        root = eg.add_expr(A[i, j] * B[i, j] + A[i, j] + 1.0 * A[i, j])
        saturate(eg, rules_for(eg.sr), Saturation(seconds=PATIENT), root=root)
        for nodes in eg.classes.values():
            for op, _, kids in nodes:
                unit = eg.one if op == "mul" else eg.zero if op == "add" else None
                if unit is not None and len(kids) > 1:
                    assert all(eg.info(k).const != unit for k in kids), (sr, op, kids)


def test_small_sums_of_repeats_saturate():
    """x + x and a·b + a (factor reads a as a·1) saturate in a few iterations; with
    the units kept they grew a·1·1·… until the time limit."""
    A, B, C = ep.tensor("A", 2, "csr"), ep.tensor("B", 2), ep.tensor("C", 2)
    for e in (C[i, j] + C[i, j], A[i, j] * B[i, j] + A[i, j],
              ep.sum(j, A[i, j] + A[i, j] * C[i, j])):
        for sr in ("real", "max_times", "integer", "boolean"):
            opt = optimize(e, semiring=sr, limits=dict(seconds=PATIENT))
            assert opt.stats["stop"] == "saturated", (str(e), sr, opt.stats)
            assert opt.stats["iterations"] <= 8, (str(e), sr, opt.stats)


def test_the_time_limit_counts_the_searching_threads_cpu_not_wall_time():
    """`Saturation.seconds` is the saturating thread's CPU time: rules whose
    appliers wait (a loaded machine, a descheduled worker: wall time passes, no
    CPU is spent) do not cut the search short, and the rewrite is still found."""
    import dataclasses
    import time

    from etchpy.optimizer.egraph import EGraph
    from etchpy.optimizer.rules import rules_for
    from etchpy.optimizer.saturate import saturate
    from etchpy.plan.cost import Stats

    waits = [60]                    # the first 60 matches wait 25 ms each

    def waiting(rule):
        def applier(eg, n, b):
            if waits[0] > 0:
                waits[0] -= 1
                time.sleep(0.025)
            return rule.applier(eg, n, b)
        return dataclasses.replace(rule, applier=applier)

    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    e = ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)
    eg = EGraph(ep.semirings.real, Stats({"i": 300, "j": 300}, {"X": 1800}))
    root = eg.add_expr(e)
    start, cpu = time.perf_counter(), time.thread_time()
    stats = saturate(eg, [waiting(r) for r in rules_for(eg.sr)],
                     Saturation(seconds=1.0), root=root)
    wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
    assert wall > 1.0                              # the wall clock passed the limit ...
    if cpu > 0.9:   # a host whose thread clock counts sleeps, or a search slowed 13x
        pytest.skip(f"the search's thread spent {cpu:.2f} s of CPU on this host")
    assert stats.stop != "time limit"              # ... and it did not count
    assert stats.costs[-1][1] < stats.costs[0][1]  # the squared loss was factored

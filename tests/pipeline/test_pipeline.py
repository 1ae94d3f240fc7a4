"""etchpy.pipeline: the compiler's stages in order, each with its debug dump, and a
Kernel that only holds and runs their result."""
import ast
import math
import pathlib
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import pipeline, tuning
from etchpy.runtime.kernel import Kernel, make_request

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_stages_run_top_to_bottom_with_a_dump_after_each(monkeypatch, capsys):
    monkeypatch.setenv("ETCHPY_DEBUG", "1")
    compiled = pipeline.compile_request(make_request(SPMV))
    err = capsys.readouterr().err
    heads = [ln for ln in err.splitlines() if ln.startswith("---- etchpy ")]
    assert heads == [f"---- etchpy {s} ----" for s in
                     ("optimizer", "plan", "streams", "imp", "c")]
    assert compiled.plan.explain() in err and "etchpy_kernel(" in err
    monkeypatch.delenv("ETCHPY_DEBUG")
    pipeline.compile_request(make_request(SPMV))
    assert capsys.readouterr().err == ""


def test_without_the_optimizer_there_is_no_optimizer_stage(monkeypatch, capsys):
    monkeypatch.setenv("ETCHPY_DEBUG", "1")
    req = make_request(SPMV, optimize=False)
    assert pipeline.run_optimizer(req) is None
    compiled = pipeline.compile_request(req)
    assert "---- etchpy optimizer ----" not in capsys.readouterr().err
    assert compiled.optimized is None and compiled.costs is None
    assert compiled.expr == SPMV


def test_each_stage_is_a_function_of_the_request():
    req = make_request(SPMV, tuning="force")
    optimized = pipeline.run_optimizer(req)
    plan, costs, _, _ = pipeline.choose_plan(req, optimized)
    program = pipeline.lower_program(req, plan)
    compiled = pipeline.compile_request(req)
    assert compiled.plan == plan and compiled.costs == costs
    assert compiled.program.params == program.params
    src = pipeline.render_c(compiled, "int32_t", include_header=True)
    assert "typedef int32_t ep_idx_t;" in src.c and src.header
    assert "tuning:     force:" in src.c


def test_choose_plan_compiles_a_rewrite_only_within_the_margin():
    a, b = ep.tensor("a", 2, format="csr"), ep.tensor("b", 2, format="csr")
    e = ep.sum((i, j, k), a[i, j] * b[j, k])        # colSums · rowSums
    req = make_request(e)
    optimized = pipeline.run_optimizer(req)
    assert optimized.expr != e
    _, (written, rewritten, used), _, _ = pipeline.choose_plan(req, optimized)
    assert used and rewritten <= req.tuning.rewrite_margin * written
    never = replace(req, tuning=req.tuning.with_(rewrite_margin=0.0))
    plan, (_, _, used), _, _ = pipeline.choose_plan(never, optimized)
    assert not used and len(plan.steps) == 1       # the written expression, fused
    always = replace(req, tuning=req.tuning.with_(rewrite_margin=math.inf))
    assert pipeline.choose_plan(always, optimized)[1][2]


def test_a_rewrite_never_makes_two_separately_summed_indices_one_size():
    """Σ_j A·B + Σ_j C·D lets the two j differ in size; the optimizer's Σ_j (A·B + C·D)
    does not, so it is never compiled, whatever the margin; the sum stays right."""
    from etchpy.expr.walk import keeps_sizes
    P, Q, R, S = (ep.tensor(n, 2) for n in "PQRS")
    e = ep.sum(j, P[i, j] * Q[j, k]) + ep.sum(j, R[i, j] * S[j, k])
    merged = ep.sum(j, P[i, j] * Q[j, k] + R[i, j] * S[j, k])
    assert not keeps_sizes(merged, e) and keeps_sizes(e, merged)
    rng = np.random.default_rng(2)
    ins = {"P": rng.random((4, 5)), "Q": rng.random((5, 3)),
           "R": rng.random((4, 6)), "S": rng.random((6, 3))}
    for margin in (0.5, math.inf):
        kern = ep.compile(e, optimizer_options={"rewrite_margin": margin})
        np.testing.assert_allclose(kern(**ins), ins["P"] @ ins["Q"] + ins["R"] @ ins["S"])


def test_a_kernel_holds_the_compiled_request_and_runs_it():
    req = make_request(SPMV, tuning="noopt")
    kern = Kernel.of_request(req)
    assert kern.request is req and kern.tuning is tuning.NOOPT
    assert kern.program is kern.compiled.program and kern.plan is kern.compiled.plan
    assert kern.banner() == pipeline.banner(kern.compiled)
    M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    np.testing.assert_array_equal(kern(A=M, x=np.arange(3.0)), M @ np.arange(3.0))


def test_requests_are_normalised():
    req = make_request(SPMV, order=(i, j), threads=2, optimizer_options={"rewrite_margin": 1})
    assert req.order == ("i", "j") and req.threads == 2
    assert not req.optimize                     # a fixed order turns the optimizer off
    assert req.options == {} and req.tuning.rewrite_margin == 1
    assert make_request(A[i, j], output="csr").out_format == ep.Format.named("csr", 2)
    assert make_request(SPMV).out_format is None and make_request(SPMV).optimize
    with pytest.raises(ep.EtchpyError, match="threads must be at least 1"):
        make_request(SPMV, threads=0)


def test_tuning_changes_lists_what_differs_from_the_default():
    from etchpy import host_facts       # the host's fields (-1 in DEFAULT) are named resolved
    host = [f"check_first_from={host_facts.check_first_from()}",
            f"walk_chain_count={host_facts.walk_chain_count()}",
            f"row_checks={host_facts.row_checks()}",
            f"sum_lanes={host_facts.sum_lanes()}", f"short_mean={host_facts.short_mean()}",
            f"gather_from={host_facts.gather_from()}",
            f"gather_ragged_from={host_facts.gather_ragged_from()}",
            f"gather_from_far={host_facts.gather_from_far()}",
            f"hash_probe_lanes={host_facts.hash_probe_lanes()}",
            f"prefetch_values_from={host_facts.prefetch_values_from()}",
            f"row_stream_count={host_facts.row_stream_count()}",
            f"prefetch_block_from={host_facts.prefetch_block_from()}",
            f"run_min_entries={host_facts.run_min_entries()}",
            f"run_mean_below={host_facts.run_mean_below()}", f"mesh_runs={host_facts.mesh_runs()}",
            f"rank_loads={host_facts.rank_loads()}"]
    assert pipeline.tuning_changes(tuning.DEFAULT) == host
    assert pipeline.tuning_changes(tuning.Tuning(seek_linear=2)) == host[:3] + ["seek_linear=2"] + host[3:]
    assert pipeline.tuning_changes(tuning.FORCE_HASH)[0] == "force_hash:"


def test_the_pipeline_imports_nothing_of_runtime_or_above():
    """Layering: … < lower < c < pipeline < runtime < api. runtime.kernel builds
    Requests and calls the pipeline, so the pipeline must not import runtime."""
    path = pathlib.Path(pipeline.__file__)
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            imported.add((node.module or "") + ":" + ",".join(a.name for a in node.names))
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    above = ("runtime", "api", "testing", "cli")
    assert not [m for m in imported if any(part in m for part in above)], imported


@pytest.mark.parametrize("names", [("T0", "T1", "T2"), ("u", "A", "v"), ("x", "M", "y"),
                                   ("pos", "row", "n"), ("c", "b", "a")])
def test_the_plan_chosen_does_not_depend_on_the_tensors_names(names):
    """A quadratic form Σ_ij u[i]·A[i,j]·v[j] is cheaper with Σ_j pushed under u[i] (one
    multiply less an entry, and a row's sum is its own chain). The optimizer's term
    lists its factors in the names' order, so under some names it is the written term
    itself; its alternatives are priced then too, and every naming plans alike."""
    u, M, v = ep.tensor(names[0], 1), ep.tensor(names[1], 2, format="csr"), ep.tensor(names[2], 1)
    e = ep.sum((i, j), u[i] * M[i, j] * v[j])
    sizes = {"dims": {"i": 10_000, "j": 10_000}, "nnz": {names[1]: 50_000},
             "rewrite_margin": 1.0}      # (a constant factor: the margin of measured sizes)
    req = make_request(e, optimizer_options=sizes)
    plan, (written, rewritten, used), _, _ = pipeline.choose_plan(req, pipeline.run_optimizer(req))
    assert used and rewritten < written and len(plan.steps) == 2, (written, rewritten)
    rng = np.random.default_rng(5)
    Ms = sp.random_array((30, 20), density=0.2, format="csr", random_state=rng)
    us, vs = rng.random(30), rng.random(20)
    kern = ep.compile(e)
    np.testing.assert_allclose(kern(**dict(zip(names, (us, Ms, vs)))), us @ (Ms @ vs))

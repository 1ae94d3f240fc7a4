"""The Tuning end to end: presets, `tuning.of`, cache keys, and every backend
agreeing with the reference under the default and each preset."""
import math
from dataclasses import fields

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import host_facts, tuning
from etchpy.expr.nodes import free_indices
from etchpy.plan.cost import Stats, plan_cost
from etchpy.plan.plan import make_plan
from etchpy.runtime.kernel import request_key, make_request
from etchpy.testing import check_backends, formats_for, imp_evaluate, problems

i, j, k, r = ep.indices("i j k r")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)

pytestmark = pytest.mark.usefixtures("shared_cache")


# ------------------------------------------------------------------ the value


def test_presets_are_hashable_and_distinct():
    presets = list(tuning.PRESETS.values())
    assert len(set(presets)) == len(presets) == 5
    assert len({p.key() for p in presets}) == 5
    assert tuning.PRESETS["default"] is tuning.DEFAULT == tuning.Tuning()
    assert {tuning.of(name) for name in tuning.PRESETS} == set(presets)


def test_a_tunings_hash_is_its_fields_hash_worked_out_once():
    import pickle
    t = tuning.Tuning(prefetch=False)
    assert hash(t) == hash(tuning.Tuning(prefetch=False)) == hash(t)
    assert hash(t) == hash(tuple(getattr(t, f.name) for f in fields(t)))
    assert hash(t.with_(prefetch=True)) == hash(tuning.DEFAULT) != hash(t)
    back = pickle.loads(pickle.dumps(t))     # another process hashes it afresh
    assert "_hash" not in back.__dict__ and back == t and hash(back) == hash(t)


def test_of_accepts_a_tuning_a_preset_name_or_a_dict():
    t = tuning.Tuning(gallop_ratio=3)
    assert tuning.of(None) is tuning.DEFAULT
    assert tuning.of(t) is t
    assert tuning.of("noopt") is tuning.NOOPT
    assert tuning.of({"gallop_ratio": 3}) == t


def test_of_errors_are_clear():
    with pytest.raises(ValueError, match="unknown tuning preset 'fast'; presets are "
                                         "default, noopt, force, force_hash"):
        tuning.of("fast")
    with pytest.raises(TypeError, match="tuning must be a Tuning, a preset name or a dict, "
                                        "not int"):
        tuning.of(3)
    with pytest.raises(TypeError, match="gallop_ratiio"):
        tuning.of({"gallop_ratiio": 3})
    for backend in ep.api.BACKENDS:          # every backend checks its tuning
        with pytest.raises(ValueError, match="unknown tuning preset"):
            ep.evaluate(A[i, j], backend=backend, tuning="fast", A=sp.csr_array(np.eye(2)))


def test_noopt_turns_off_every_switch_and_nothing_else():
    for f in fields(tuning.Tuning):
        value = getattr(tuning.NOOPT, f.name)
        assert value == (False if f.type in ("bool", bool) else getattr(tuning.DEFAULT, f.name))


# ------------------------------------------------------------------ cache keys


def test_knobs_are_part_of_the_kernel_cache_key():
    """Two compiles that differ only in their Tuning are two kernels (in process and
    on disk); the same Tuning spelled three ways is one kernel."""
    e = ep.sum(j, A[i, j] * B[i, j])
    before = ep.compile(e)
    after = ep.compile(e, tuning=tuning.Tuning(gallop_ratio=3))
    assert after is not before and after._request != before._request
    # the kernel keeps the Tuning it was given (host facts resolved where read)
    assert before.tuning is tuning.DEFAULT and after.tuning.gallop_ratio == 3
    assert ep.compile(e, tuning={"gallop_ratio": 3}) is after
    assert ep.compile(e, tuning=tuning.Tuning(gallop_ratio=3)) is after
    assert ep.compile(e, tuning="noopt") is ep.compile(e, tuning=tuning.NOOPT)
    keys = {request_key(make_request(e, tuning=t)) for t in tuning.PRESETS.values()}
    assert len(keys) == 5


def test_a_manifest_is_restored_only_under_its_own_tuning(tmp_path, monkeypatch):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path))
    e = ep.sum(j, A[i, j] * x[j])
    M, v = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]])), np.arange(3.0)
    first = ep.Kernel(e, tuning="force")
    first(A=M, x=v)                                    # builds, and writes the manifest
    assert not first.from_manifest
    again = ep.Kernel(e, tuning=tuning.FORCE)
    assert again.from_manifest and again.tuning is tuning.FORCE
    np.testing.assert_array_equal(again(A=M, x=v), M @ v)
    assert not ep.Kernel(e, tuning="force_hash").from_manifest
    assert not ep.Kernel(e).from_manifest


def test_explain_shows_the_fields_that_differ_from_the_default():
    e = ep.sum(j, A[i, j] * x[j])
    # the default shows only the host's facts (etchpy.host_facts), resolved at compile time
    facts = repr(host_facts.resolved(tuning.DEFAULT))[len("Tuning("):-1]
    assert facts and {f.split("=")[0] for f in facts.split(", ")} <= {name for name, _ in host_facts.FIELDS}
    def fields(kernel):                             # the banner wraps its lines at 76
        flat = " ".join(kernel.explain().split())
        return set(flat.split("tuning: ")[1].split(" loop order:")[0].split(", "))
    assert fields(ep.compile(e)) == set(facts.split(", "))
    assert fields(ep.compile(e, tuning={"gallop_ratio": 3, "prefetch": False})) == (
        set(facts.split(", ")) | {"prefetch=False", "gallop_ratio=3"})
    noopt = ep.compile(e, tuning="noopt")
    assert "tuning:     noopt: markers=False," in noopt.explain()
    assert "tuning:     noopt:" in noopt.c_source        # the C text says how it was made


# ------------------------------------------------------------------ planning knobs


def test_planning_guesses_come_from_the_tuning():
    small = tuning.DEFAULT.with_(default_dim=7, sparse_density=0.5, temp_weight=100.0)
    assert Stats().dim("i") == 1000 and Stats(tuning=small).dim("i") == 7
    assert Stats(tuning=small).with_origin({}).dim("i") == 7
    acc = A[i, j]
    assert Stats().tensor_nnz(acc) == 1e4 and Stats(tuning=small).tensor_nnz(acc) == 24.5
    e = ep.sum(j, ep.sum(k, A[i, k] * B[k, j]) + x[j])      # one dense temporary
    plan = make_plan(e)
    assert plan.temps
    light, heavy = plan_cost(plan, Stats()), plan_cost(plan, Stats(tuning=small))
    assert heavy != light


def test_rewrite_margin_decides_which_plan_is_compiled():
    """colSums·rowSums: the factored form is asymptotically cheaper. A margin of 0
    never compiles a rewrite; the optimizer option of that name sets the field."""
    a, b = ep.tensor("a", 2, format="csr"), ep.tensor("b", 2, format="csr")
    e = ep.sum((i, j, k), a[i, j] * b[j, k])
    used = ep.compile(e)
    never = ep.compile(e, tuning={"rewrite_margin": 0.0})
    assert used.plan_costs[2] and not never.plan_costs[2]
    assert len(used.plan.steps) > len(never.plan.steps)
    forced = ep.compile(e, optimizer_options={"rewrite_margin": math.inf})
    assert forced.tuning.rewrite_margin == math.inf
    M = sp.random(30, 30, density=0.2, format="csr", random_state=3)
    for kern in (used, never, forced):
        assert kern(a=M, b=M) == pytest.approx((M @ M).sum())


# ------------------------------------------------------------------ every preset


@st.composite
def problems_with_outputs(draw):
    """A problem and an output format for its free indices (dense, or sparse); a
    small index space, for the Imp interpreter."""
    p = draw(problems(max_indices=3, max_cells=64))
    out = free_indices(p.expr)
    if len(out) == 2:
        fmt = draw(st.sampled_from(["dense", "csr", "csc", "dcsr", "coo"]))
    elif out:
        fmt = draw(st.one_of(st.just("dense"), formats_for(len(out))))
    else:
        fmt = "dense"
    return p, fmt


@pytest.mark.parametrize("preset", list(tuning.PRESETS))
@settings(max_examples=20)
@given(problems_with_outputs())
def test_backends_agree_under_each_preset(preset, case):
    """Under the default and each preset: compiled C, the stream interpreter and the
    compiled Imp program on the Imp interpreter all equal the reference."""
    p, fmt = case
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c", "imp"),
                   output=fmt, tuning=preset)


@pytest.mark.parametrize("output", ["dense", "csr", "csc", "dcsr", "coo"])
def test_noopt_kernels_are_correct(output):
    """Plain loops (every switch off) for each output kind: SpGEMM (a workspace),
    a transposed copy (a counting sort), a union (appends), SpMV on its own."""
    rng = np.random.default_rng(4)
    M = sp.random(40, 30, density=0.15, format="csr", random_state=rng)
    N = sp.random(30, 40, density=0.15, format="csr", random_state=rng)
    cases = [(ep.sum(j, A[i, j] * B[j, k]), {"A": M, "B": N}),
             (A[i, j], {"A": M}),
             (A[i, j] + B[j, i], {"A": M, "B": N})]
    for e, inputs in cases:
        check_backends(e, inputs, backends=("c", "imp"), output=output, tuning="noopt")
    check_backends(ep.sum(j, A[i, j] * x[j]), {"A": M, "x": rng.random(30)},
                   backends=("c", "imp"), tuning=tuning.NOOPT)


def test_imp_evaluate_follows_the_tuning():
    """The Imp interpreter runs the program lowered under the tuning asked for."""
    M = sp.random(20, 20, density=0.3, format="csr", random_state=5)
    e = ep.sum(j, A[i, j] * B[j, k])
    for t in tuning.PRESETS.values():
        got = imp_evaluate(e, {"A": M, "B": M}, output="csr", tuning=t)
        np.testing.assert_allclose(got.toarray(), (M @ M).toarray(), rtol=1e-12)

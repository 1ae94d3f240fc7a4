"""etchpy.collector: planning, lowering and rendering run with the cyclic collector
paused, which each leaves as it found it (enabled, disabled, after an error)."""
import gc

import pytest

import etchpy as ep
from etchpy import collector, pipeline
from etchpy.runtime import jsondata
from etchpy.runtime.kernel import make_request

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)
CHAIN = ep.sum(j, A[i, j] * ep.sum(k, B[j, k] * x[k]))


@pytest.fixture
def collections():
    """The collections the collector starts while the test runs (its list)."""
    seen = []

    def note(phase, info):
        if phase == "start":
            seen.append(info["generation"])
    gc.collect()
    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)


def test_the_stages_set_off_a_collection_only_as_each_ends(collections):
    """A pause's allocations count towards the collector's next run, which may
    start as it ends: at most one run per stage (plan, lower, render, encode,
    decode), where the same stages unpaused set off many."""
    req = make_request(CHAIN)
    collections.clear()
    pipeline.lower_planned.__wrapped__(req, pipeline.plan_request.__wrapped__(req))
    unpaused = len(collections)
    collections.clear()
    compiled = pipeline.compile_request(req)
    text = pipeline.render_c(compiled).c
    manifest = jsondata.loads(jsondata.dumps(compiled.program))
    assert "etchpy_kernel(" in text and manifest == compiled.program
    assert len(collections) <= 5 < unpaused and gc.isenabled()


def test_a_stage_that_raises_leaves_it_enabled():
    with pytest.raises(ep.OrderError):
        pipeline.compile_request(make_request(CHAIN, order=("k", "i", "j", "z")))
    assert gc.isenabled()


def test_a_pause_restores_what_it_found():
    gc.disable()
    try:
        with collector.paused():
            assert not gc.isenabled()
            with collector.paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert not gc.isenabled()                   # disabled by the caller: kept so
    finally:
        gc.enable()
    with pytest.raises(KeyError):
        with collector.paused():
            with collector.paused():
                raise KeyError("x")
    assert gc.isenabled()
    assert collector.pausing(lambda a, b=1: (a, b, gc.isenabled()))(2, b=3) == (2, 3, False)

"""etchpy.collector: planning, lowering and rendering run with the cyclic collector
paused, which each leaves as it found it (enabled, disabled, after an error)."""
import gc
import sys

import pytest

import etchpy as ep
from etchpy import collector, pipeline
from etchpy.c import render
from etchpy.runtime import jsondata
from etchpy.runtime.kernel import make_request

i, j, k = ep.indices("i j k")
# names no other test uses: nothing of this chain's compile is in a memo of the worker
A, B = ep.tensor("Acollected", 2, format="csr"), ep.tensor("Bcollected", 2, format="csr")
x = ep.tensor("xcollected", 1)
CHAIN = ep.sum(j, A[i, j] * ep.sum(k, B[j, k] * x[k]))


def enabled_in(codes, run):
    """{code's name: [gc.isenabled() at each call of it]} while run() runs."""
    seen = {c.co_name: [] for c in codes}

    def note(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            seen[frame.f_code.co_name].append(gc.isenabled())
    sys.setprofile(note)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def test_the_stages_run_with_it_paused_and_leave_it_enabled():
    req = make_request(CHAIN)
    inner = (pipeline.run_optimizer, pipeline.choose_plan, pipeline.lower_program,
             render.render, jsondata._encode, jsondata._loads)

    def stages():
        compiled = pipeline.compile_request(req)
        assert "etchpy_kernel(" in pipeline.render_c(compiled).c
        assert jsondata.loads(jsondata.dumps(compiled.program)) == compiled.program
    seen = enabled_in({f.__code__ for f in inner}, stages)
    assert all(seen.values()) and not any(any(v) for v in seen.values()), seen
    assert gc.isenabled()


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

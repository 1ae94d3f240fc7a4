"""The compiled C backend: C == streams == reference, programs on the Imp
interpreter, outputs of every kind, the disk cache, and bad input."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import api, lower, plan as planning
from etchpy.expression import free_indices, tensors
from etchpy.testing import assert_same, check_backends, problems

i, j, k, l, r = ep.indices("i j k l r")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ETCHPY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@settings(max_examples=40)
@given(problems())
def test_c_equals_streams_equals_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"))


@settings(max_examples=25)
@given(problems(max_indices=3), st.sampled_from(["csr", "csc", "dcsr", "coo", "csf"]))
def test_sparse_outputs_match_reference(p, fmt):
    out = free_indices(p.expr)
    if len(out) != 2 and fmt != "csf" and fmt != "coo":
        fmt = "csf"
    if not out:
        return
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"),
                   output=fmt)


@settings(max_examples=25)
@given(problems())
def test_imp_program_on_interpreter_equals_reference(p):
    """The whole lowered program (output writes included) run on the Imp interpreter."""
    sr = p.semiring
    e = p.expr
    bound = api.bind_inputs(tensors(e), p.inputs, sr)
    pl = planning.make_plan(e)
    sizes = api.index_sizes(pl, bound)
    prog = lower.lower_plan(pl, sr, tensors(e), None)
    env = api.imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    shape = tuple(sizes[v] for v in pl.out)
    env["out"] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    final = lower.run_program(prog, sr, env)
    want = ep.evaluate(e, semiring=sr, backend="reference", **p.inputs)
    assert_same(final["out"].reshape(shape), want, sr, what=str(e))

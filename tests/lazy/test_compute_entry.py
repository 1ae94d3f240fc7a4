"""ep.compute's C entry (the binder's lazy_compute, etchpy.lazy.c_nodes): while the C
operators are installed, compute(a) of one lazy array (its keywords, if any,
the defaults spelled out: optimize=True, threads=1) is the lookup of its
program without the Python function's frame; every other call (other keywords,
several results, a program met first, a sparse leaf, an error) is the Python
compute's, so the answers and errors are the same; ep.compute keeps that
function's docstring and signature."""
import inspect
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lazy import c_nodes, program
from etchpy.runtime import binder

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no C binder here")]


def test_it_reads_as_the_python_compute():
    assert ep.compute.__doc__ == program.compute.__doc__
    assert inspect.signature(ep.compute) == inspect.signature(program.compute)
    assert ep.compute.__wrapped__ is program.compute


def test_it_is_installed_with_the_c_operators_and_removed_with_them():
    a = ep.lazy(np.ones((3, 3)))
    ep.compute(a @ a)
    assert c_nodes.INSTALLED[0] is True
    assert type(ep.compute).__call__ is not program.compute
    ep.compute(a @ a, tuning=ep.Tuning(lazy_c_nodes=False))
    assert type(ep.compute).__call__ is program.compute
    ep.compute(a @ a)
    assert type(ep.compute).__call__ is not program.compute


def test_its_answers_are_the_python_computes():
    rng = np.random.default_rng(0)
    X, w, y = rng.random((30, 20)), rng.random(20), rng.random(30)
    S = sp.random_array((30, 20), density=0.2, format="csr", random_state=1)
    progs = [lambda X: X.T @ (ep.exp(X @ ep.lazy(w)) - ep.lazy(y)),
             lambda X: (X @ ep.lazy(w)).sum(),
             lambda X: ep.maximum(X @ ep.lazy(w), 0) * 2.0]
    for prog in progs:
        for M in (X, S):
            for _ in range(3):      # first met, then replayed
                got = ep.compute(prog(ep.lazy(M)))
                want = program.compute(prog(ep.lazy(M)))
                np.testing.assert_array_equal(got, want)
                assert type(got) is type(want)
            two = ep.compute(prog(ep.lazy(M)), ep.lazy(y).sum())
            assert isinstance(two, tuple) and len(two) == 2
            np.testing.assert_allclose(ep.compute(prog(ep.lazy(M)), optimize=False), want, rtol=1e-12)
    np.testing.assert_array_equal(ep.compute(X), X)         # an array: wrapped
    with pytest.raises(InputError):
        ep.compute()
    with pytest.raises(InputError):
        ep.compute("not an array")


def test_the_defaults_spelled_out_take_the_lookup_and_others_python():
    rng = np.random.default_rng(1)
    X, w = rng.random((30, 20)), rng.random(20)

    def prog():
        a = ep.lazy(X)
        return a.T @ (a @ ep.lazy(w))
    want = program.compute(prog())
    ep.compute(prog())
    ep.compute(prog())                  # met, then replayed
    framed = []

    def spy(frame, event, arg):
        if event == "call" and frame.f_code is program.compute.__code__:
            framed.append(frame.f_locals.get("optimize"))

    def run(**kw):
        sys.setprofile(spy)
        try:
            return ep.compute(prog(), **kw)
        finally:
            sys.setprofile(None)
    for kw in ({}, {"optimize": True}, {"threads": 1}, {"optimize": True, "threads": 1}):
        np.testing.assert_array_equal(run(**kw), want)
    assert framed == []
    for kw in ({"optimize": False}, {"threads": np.int64(1)}, {"optimize": 1}):
        np.testing.assert_allclose(run(**kw), want, rtol=1e-12)
    assert len(framed) == 3

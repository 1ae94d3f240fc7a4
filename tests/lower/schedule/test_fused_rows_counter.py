"""Fused rows' lockstep counters (lower.schedule.fused_rows `_same_counter`): steps of a
dense output walked in lockstep whose free levels are plain counted loops from the
same start share the first one's counter, so a sparse row opens at pos[c], pos[c + 1]
of the loop's own counter and its fused checks run a block of rows ahead as in a step
of its own (segment_checks). `y = b + A·x` and `y = c + A·x` agree with the dense
reference for every index name, malformed inputs are still refused, and the nest
steps one counter."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")

NAMES = [("i", "j"), ("pos", "row"), ("out", "n")]


def _forms(a, b):
    i, j = ep.indices(f"{a} {b}")
    A, x, v, c = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("v", 1), \
        ep.tensor("c", 0)
    walk = ep.sum(j, A[i, j] * x[j])
    return {"c + A x": c[()] + walk, "v + A x": v[i] + walk, "A x + v + c": walk + v[i] + c[()]}


def _inputs(seed, n=1500, m=900):
    A = sp.random_array((n, m), density=0.01, format="csr", random_state=seed)
    rng = np.random.default_rng(seed)
    return {"A": A, "x": rng.standard_normal(m), "v": rng.standard_normal(n), "c": 0.75}


@pytest.mark.parametrize("names, form", list(zip(NAMES, ["c + A x", "v + A x", "A x + v + c"])))
def test_lockstep_steps_agree_with_the_reference_and_refuse_bad_rows(names, form):
    data = _inputs(len(names[0]))
    e = _forms(*names)[form]
    kern = ep.compile(e, threads=1)
    used = {k: v for k, v in data.items() if k in kern.tensors}
    want = ep.evaluate(e, backend="reference", **used)
    np.testing.assert_allclose(kern(**used), want, rtol=1e-12, atol=1e-12, err_msg=form)
    T = ep.Tensor.from_scipy(data["A"])
    np.testing.assert_allclose(kern(**{**used, "A": T}), want, rtol=1e-12, atol=1e-12)
    for bad in ("index", "pointer"):
        B = data["A"].copy()
        if bad == "index":
            B.indices[B.indptr[1200]] = 900            # past the last column
        else:
            B.indptr[700] = B.indptr[702]              # pointers decrease at 701
        with pytest.raises(InputError, match="A"):
            kern(**{**used, "A": B})


def test_the_nest_steps_one_counter_and_checks_rows_a_block_ahead():
    for form, e in _forms("i", "j").items():
        src = ep.compile(e, threads=1).c_source
        nest = src[src.index("steps in lockstep"):]
        nest = nest[:nest.index("out[i_] = cell")]
        assert not re.search(r"i_c_\d+ = 0;", nest), form        # no second counter
        assert "A_pos1[i_c]" in nest and "i_c_block" in nest, form  # pos[c]: blocks ahead
        off = ep.compile(e, threads=1, tuning={"fused_rows": False}).c_source
        assert "steps in lockstep" not in off

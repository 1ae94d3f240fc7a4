"""Plans the optimizer factors, written into sparse outputs: a masked chain
M ∘ (X1 ··· Xn) with dense and csr factors, whose rewrite is always compiled
(rewrite_margin = inf), maybe under a sketch that multiplies the chain from
one end with every partial product materialised, so its temporaries are
computed by their own steps, some of them GEMM-shaped and some keeping
presence flags. Every output format
agrees with the reference, with BLAS on and off and with no optimisation."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import INDEX_NAMES, check_backends


@st.composite
def masked_chains(draw):
    n = draw(st.integers(3, 4))
    names = draw(st.lists(st.sampled_from(INDEX_NAMES), min_size=n + 1, max_size=n + 1,
                          unique=True))
    ix = ep.indices(" ".join(names))
    sizes = [draw(st.integers(1, 7)) for _ in range(n + 1)]
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    body, ins = None, {}
    for k in range(n):
        shape = (sizes[k], sizes[k + 1])
        if draw(st.booleans()):
            ins[f"X{k}"] = sp.random(*shape, density=draw(st.sampled_from([0.0, 0.3, 0.7])),
                                     format="csr", random_state=seed + k)
            t = ep.tensor(f"X{k}", 2, format="csr")
        else:
            ins[f"X{k}"] = rng.random(shape)
            t = ep.tensor(f"X{k}", 2)
        f = t[ix[k], ix[k + 1]]
        body = f if body is None else body * f
    ins["M"] = sp.random(sizes[0], sizes[n], density=draw(st.sampled_from([0.3, 1.0])),
                         format="csr", random_state=seed + 99)
    M = ep.tensor("M", 2, format="csr")
    expr = ep.sum(tuple(ix[1:n]), M[ix[0], ix[n]] * body)
    # the sizes the optimizer plans with need not be the inputs': any factoring is legal
    plan_dims = dict(zip(names, sizes))
    if draw(st.booleans()):
        plan_dims = {v: draw(st.sampled_from([2, 50, 1000])) for v in names}
    # maybe a sketch: the chain multiplied from one end, each partial product
    # computed on its own (a temporary per step, as a sketched chain's plan has)
    sketch = None
    how = draw(st.sampled_from(["right", "left", None]))
    sk = ep.sketch
    if how == "right":
        part = f"X{n - 1}"
        for t in range(n - 2, -1, -1):
            part = sk.sum(names[t + 1], sk.mul(f"X{t}", part if t == n - 2
                                               else sk.materialised(part)))
        sketch = sk.mul("M", part)
    elif how == "left":
        part = "X0"
        for t in range(1, n):
            part = sk.sum(names[t], sk.mul(part if t == 1 else sk.materialised(part),
                                           f"X{t}"))
        sketch = sk.mul("M", part)
    return expr, ins, {"dims": plan_dims, "sketch": sketch}


@settings(max_examples=16, deadline=None)
@given(masked_chains(), st.sampled_from(["csr", "dcsr", "coo", "dense"]),
       st.sampled_from([{}, {}, {"blas": False}, "noopt"]))
@pytest.mark.heavy
def test_factored_masked_chains_into_every_output(chain, out, extra):
    expr, ins, options = chain
    tuning = extra if extra == "noopt" else {"rewrite_margin": math.inf, **extra}
    check_backends(expr, ins, backends=("c",), output=out, tuning=tuning,
                   optimizer_options=options)

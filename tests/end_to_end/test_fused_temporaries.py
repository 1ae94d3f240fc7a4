"""Temporaries fused into their readers (plan.fusion, lower.schedule.fuse_temps):
MTTKRP-shaped contractions of a sparse tensor of order 3 or 4 with dense factor
matrices (maybe plus a dense term, so that another step into the output sits
between the chain's steps), factorised one level of the tensor at a time by a sketch, so that
each temporary is read by the next step as a factor. With fusion on, off, with
BLAS off and with no optimisation, on every semiring, into dense and sparse
outputs, on one thread and on two (each thread with its own workspaces) and
with index names from the project's pool (the names the generated code uses
among them), the C backend and the Imp interpreter agree with the
reference."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import INDEX_NAMES, check_backends

SEMIRINGS = ["real", "min_plus", "max_plus", "max_times", "boolean", "integer"]


@st.composite
def leveled(draw):
    semiring = draw(st.sampled_from(SEMIRINGS))
    top = 2 if semiring == "boolean" else 4          # booleans hold 0 and 1 only
    order = draw(st.integers(3, 4))
    names = draw(st.lists(st.sampled_from(INDEX_NAMES), min_size=order + 1,
                          max_size=order + 1, unique=True))
    ix = ep.indices(" ".join(names))
    modes, r = ix[:order], ix[order]
    shape = tuple(draw(st.integers(1, 5)) for _ in range(order))
    rank = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    cells = math.prod(shape)
    keys = np.unique(rng.integers(0, cells, draw(st.integers(0, 2 * cells))))
    coords = np.stack(np.unravel_index(keys, shape)) if len(keys) else np.zeros((order, 0), int)
    X = ep.tensor("X", order, format="csf")
    ins = {"X": ep.Tensor.from_coords(coords, rng.integers(1, top, len(keys)).astype(float),
                                      shape, "csf", name="X")}
    body = X[tuple(modes)]
    factors = [f"F{d}" for d in range(1, order)]
    for d, f in enumerate(factors, start=1):
        body = body * ep.tensor(f, 2)[modes[d], r]
        ins[f] = rng.integers(0, top, (shape[d], rank)).astype(float)
    expr = ep.sum(tuple(modes[1:]), body)
    sk = ep.sketch
    # innermost first: Σ_last F_last·X, then each level out: Σ_d F_d·(...)
    part = sk.sum(names[order - 1], sk.mul(factors[-1], "X"))
    for d in range(order - 2, 0, -1):
        part = sk.sum(names[d], sk.mul(factors[d - 1], part))
    if draw(st.booleans()):          # a sum of terms: the chain's reader is not next
        expr = expr + ep.tensor("G", 2)[modes[0], r]
        ins["G"] = rng.integers(0, top, (shape[0], rank)).astype(float)
        part = sk.add(part, "G")
    dims = {v: draw(st.sampled_from([2, 30])) for v in names}
    return expr, ins, {"dims": dims, "sketch": part}, semiring


@settings(max_examples=24, deadline=None)
@given(leveled(), st.sampled_from(["dense", "dense", "csr"]),
       st.sampled_from([{}, {}, {"fused_temporaries": False}, {"blas": False}, "noopt"]),
       st.sampled_from([1, 1, 2]))
@pytest.mark.heavy
def test_level_by_level_chains_agree_with_the_reference(case, out, extra, threads):
    expr, ins, options, semiring = case
    tuning = extra if extra == "noopt" else {"rewrite_margin": math.inf, **extra}
    check_backends(expr, ins, semiring=semiring, backends=("c",), output=out,
                   tuning=tuning, optimizer_options=options, threads=threads)


@settings(max_examples=8, deadline=None)
@given(leveled())
def test_level_by_level_chains_on_the_imp_interpreter(case):
    expr, ins, options, semiring = case
    check_backends(expr, ins, semiring=semiring, backends=("imp",),
                   tuning={"rewrite_margin": math.inf}, optimizer_options=options)


@st.composite
def tucker(draw):
    """Σ X[i,j,k]·U[i,a]·V[j,b]·W[k,c] written nested in one of the six orders of
    contracting i, j and k: a middle reader sums a workspace axis (a wide reader,
    plan.fusion.widen) in some of them."""
    semiring = draw(st.sampled_from(SEMIRINGS))
    top = 2 if semiring == "boolean" else 4
    names = draw(st.lists(st.sampled_from(INDEX_NAMES), min_size=6, max_size=6, unique=True))
    i, j, k, a, b, c = ep.indices(" ".join(names))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(3))
    rank = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    cells = math.prod(shape)
    keys = np.unique(rng.integers(0, cells, draw(st.integers(1, 2 * cells))))
    X = ep.tensor("X", 3, format="csf")
    ins = {"X": ep.Tensor.from_coords(np.stack(np.unravel_index(keys, shape)),
                                      rng.integers(1, top, len(keys)).astype(float),
                                      shape, "csf", name="X")}
    factor = {}
    for m, (ix, r, n) in zip("UVW", [(i, a, shape[0]), (j, b, shape[1]), (k, c, shape[2])]):
        factor[ix] = ep.tensor(m, 2)[ix, r]
        ins[m] = rng.integers(0, top, (n, rank)).astype(float)
    expr = X[i, j, k]
    for ix in draw(st.permutations([i, j, k])):        # innermost first
        expr = ep.sum(ix, expr * factor[ix])
    return expr, ins, semiring


@settings(max_examples=6, deadline=None)
@given(tucker(), st.sampled_from([{}, {}, {"fused_temporaries": False}, "noopt"]),
       st.sampled_from([1, 1, 2]))
@pytest.mark.heavy
def test_tucker_nestings_with_wide_readers_agree_with_the_reference(case, extra, threads):
    expr, ins, semiring = case
    check_backends(expr, ins, semiring=semiring, backends=("c", "imp"), tuning=extra,
                   threads=threads)


def test_a_tucker_middle_reader_is_wide_and_fused():
    """Σ_k W[k,c]·T[i,k,b] after the sparse walk over i runs at each i when W
    stays in cache (it is read again at every i), and apart when it does not;
    chains kept whole (blas_cut off: with it, this one ends for BLAS)."""
    i, j, k, a, b, c = ep.indices("i j k a b c")
    X = ep.tensor("X", 3, format="csf")
    U, V, W = (ep.tensor(m, 2) for m in "UVW")
    expr = ep.sum(i, U[i, a] * ep.sum(k, W[k, c] * ep.sum(j, X[i, j, k] * V[j, b])))

    def planned(rank_c, tuning=ep.Tuning(blas_cut=False)):
        dims = {"i": 120, "j": 120, "k": 120, "a": 16, "b": 16, "c": rank_c}
        return ep.compile(expr, out_indices=(b, c, a), optimize=False, tuning=tuning,
                          optimizer_options={"dims": dims, "nnz": {"X": 180_000}})
    wide, narrow = planned(16), planned(64)
    assert planned(16, None).plan.cut == {"tmp"}
    assert wide.plan.wide == {"tmp"} and "tmp → tmp_1" in wide.explain()
    assert not narrow.plan.wide and "tmp → tmp_1" not in narrow.explain()

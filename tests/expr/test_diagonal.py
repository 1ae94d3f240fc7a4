"""Diagonal accesses (an index repeated within one access), on every backend.

The law (proofs_notes/diagonal.md): A[.., i, .., i, ..] is Σ_i' A[.., i, .., i', ..]·δ[i, i']
with δ the identity of the semiring. The oracle here does not use δ: it takes
the diagonal out of the dense input with numpy and evaluates the same
expression over that diagonal as a tensor of its own.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import OrderError
from etchpy.expr.nodes import IdentityVar
from etchpy.expr.walk import accesses
from etchpy.plan.plan import make_plan
from etchpy.testing import assert_same, formats_for, max_min, sparse_arrays

pytestmark = pytest.mark.usefixtures("shared_cache")

SEMIRINGS = [ep.semirings.real, ep.semirings.min_plus, ep.semirings.boolean,
             ep.semirings.integer, max_min]


def diagonal_of(arr: np.ndarray, idx: tuple[str, ...], sizes: dict) -> tuple[np.ndarray, tuple]:
    """arr[idx] over the distinct names of idx (in order of first appearance)."""
    names = tuple(dict.fromkeys(idx))
    grids = np.indices(tuple(sizes[n] for n in names), sparse=True) if names else ()
    at = {n: g for n, g in zip(names, grids)}
    return (arr[tuple(at[n] for n in idx)] if idx else arr), names


def walkable(build, fmts: dict):
    """build(fmts) with sparse formats made dense, other operand first, until some
    loop order walks every input."""
    for name in ("x", "A", None):
        e = build(fmts)
        try:
            make_plan(e)
            return e, fmts
        except OrderError:
            if name is None:
                raise
            fmts = {**fmts, name: ep.Format.named("dense", fmts[name].order)}


@st.composite
def diagonal_problems(draw):
    sr = draw(st.sampled_from(SEMIRINGS))
    order = draw(st.integers(2, 3))
    idx = tuple(draw(st.lists(st.sampled_from("ij"), min_size=order, max_size=order)
                     .filter(lambda l: len(set(l)) < len(l))))
    sizes = {"i": draw(st.integers(1, 3)), "j": draw(st.integers(1, 3))}
    other = draw(st.sampled_from([(), ("i",), ("j",), ("j", "i"), ("i", "j")]))
    fmts = {"A": draw(formats_for(order)), "x": draw(formats_for(len(other)))}
    summed = draw(st.sets(st.sampled_from(sorted(set(idx) | set(other)))))
    ix = {n: ep.indices(n)[0] for n in "ij"}

    def build(f):
        A, x = ep.tensor("A", order, f["A"]), ep.tensor("x", len(other), f["x"])
        e = A[tuple(ix[n] for n in idx)] * (x[tuple(ix[n] for n in other)] if other else x)
        return ep.sum(tuple(ix[n] for n in sorted(summed)), e) if summed else e

    e, fmts = walkable(build, fmts)
    inputs = {"A": draw(sparse_arrays(tuple(sizes[n] for n in idx), sr)),
              "x": draw(sparse_arrays(tuple(sizes[n] for n in other), sr))}
    return sr, e, inputs, (idx, other, sorted(summed), sizes)


def oracle(sr, inputs, shape):
    """The reference value of D[distinct idx] * x[other], summed, with D the diagonal."""
    idx, other, summed, sizes = shape
    d, names = diagonal_of(inputs["A"], idx, sizes)
    ix = {n: ep.indices(n)[0] for n in "ij"}
    D, x = ep.tensor("D", len(names)), ep.tensor("x", len(other))
    e = D[tuple(ix[n] for n in names)] * (x[tuple(ix[n] for n in other)] if other else x)
    e = ep.sum(tuple(ix[n] for n in summed), e) if summed else e
    return e, ep.evaluate(e, semiring=sr, backend="reference", D=d, x=inputs["x"])


@settings(max_examples=24)
@given(diagonal_problems())
def test_diagonal_on_every_backend(p):
    sr, e, inputs, shape = p
    assert any(isinstance(a.tensor, IdentityVar) for a in accesses(e))
    plain, want = oracle(sr, inputs, shape)
    out = tuple(plain.free)
    for backend in ("reference", "streams", "c"):
        got = ep.evaluate(e, semiring=sr, backend=backend, out_indices=out, **inputs)
        assert_same(got, want, sr, what=f"{backend} on {e}")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
@pytest.mark.parametrize("sr", ["real", "min_plus", "boolean"])
def test_trace_and_diagonal_of_scipy_inputs(fmt, sr):
    sr = ep.semirings.get(sr)
    rng = np.random.default_rng(1)
    dense = np.where(rng.random((5, 5)) < 0.5, sr.zero, rng.integers(1, 4, (5, 5))).astype(sr.dtype)
    M = sp.coo_array(np.where(dense == sr.zero, 0, dense)).asformat(fmt) if fmt != "dense" \
        else dense
    i, = ep.indices("i")
    A = ep.tensor("A", 2, fmt)
    diag = dense.diagonal()
    want_trace = sr.add.reduce(diag) if hasattr(sr.add, "reduce") else None
    got = ep.evaluate(A[i, i], semiring=sr, A=M)
    assert np.array_equal(got, diag)
    trace = ep.evaluate(ep.sum(i, A[i, i]), semiring=sr, A=M)
    if want_trace is not None:
        assert trace == want_trace


def test_string_front_end_and_compiled_kernel():
    kern = ep.compile("y[i] = A[i,i] * x[i]", formats={"A": "csr"})
    M = sp.random(6, 6, density=0.5, format="csr", random_state=3)
    x = np.arange(6.0)
    assert np.allclose(kern(A=M, x=x), M.diagonal() * x)
    assert np.allclose(ep.evaluate("s = A[i,i]", A=M.toarray()), M.diagonal().sum())


def test_diagonal_sizes_must_agree():
    i, = ep.indices("i")
    A = ep.tensor("A", 2)
    for backend in ("c", "streams", "reference"):
        with pytest.raises(ep.InputError, match="modes 0 and 1.*sizes 2 and 3"):
            ep.evaluate(A[i, i], backend=backend, A=np.ones((2, 3)))
    with pytest.raises(ep.InputError, match="sizes 2 and 3"):
        ep.einsum("ii->i", np.ones((2, 3)))


def test_missing_input_is_named_not_its_identity():
    i, = ep.indices("i")
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    with pytest.raises(ep.InputError, match="missing input for tensor A"):
        ep.evaluate(A[i, i] * x[i], x=np.ones(2))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense", "dcsr"])
def test_delta_stores_nothing_and_its_kernel_reads_only_the_diagonal(fmt):
    """δ reaches the kernel as its two sizes, no array (it stores nothing: the
    equality of its indices); the diagonal of rows with entries before, at,
    after and without the diagonal, and of infinite entries off it, is exact."""
    i = ep.indices("i")[0]
    A = ep.tensor("A", 2, fmt)
    kern = ep.compile(A[i, i])
    d = np.array([[1.0, np.inf, 0, 0, 0], [2.0, 3.0, 0, -np.inf, 0], [0, 0, 0, 0, 0],
                  [5.0, 0, 6.0, 0, 7.0], [0, 0, 0, 0, 8.0]])
    M = {"dense": d}.get(fmt, sp.csr_array(d))
    got = kern(A=M if fmt in ("csr", "dense") else ep.Tensor.from_dense(d, fmt))
    np.testing.assert_array_equal(got, np.diagonal(d))
    c = kern.source().c
    assert "eq_A_0_1_dim0" in c and "eq_A_0_1_vals" not in c and "eq_A_0_1_pos" not in c
    assert set(kern.tensors["eq_A_0_1"].format.levels) <= {ep.Format.named("dense", 2).levels[0]}

"""Wrong code once caused by a context keyed by index names and by strings
("pos", "row") alike, and a property test whose index names are drawn from a
pool that includes the names generated code uses."""
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.nodes import free_indices
from etchpy.testing import assert_same, formats_for, problems
from tuned import run_lowered

FIBERS = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])


def test_an_index_named_pos_in_ttm_into_compressed_fibers():
    """The dense tail's index `pos` once replaced the appended position."""
    i, j, k, pos = ep.indices("i j k pos")
    T, M = ep.tensor("T", 3, "csf"), ep.tensor("M", 2)
    rng = np.random.default_rng(1)
    Tv = ep.Tensor.from_coords(rng.integers(0, 6, size=(3, 40)), rng.random(40), (6, 6, 6),
                               "csf")
    Mv = rng.random((6, 3))
    e = ep.sum(k, T[i, j, k] * M[k, pos])
    want = np.einsum("ijk,kr->ijr", Tv.to_dense(), Mv)
    got = ep.evaluate(e, output=FIBERS, T=Tv, M=Mv)
    np.testing.assert_allclose(got.to_dense(), want, rtol=1e-12)
    on_imp, _ = run_lowered(e, ep.semirings.get("real"), FIBERS, {"T": Tv, "M": Mv})
    np.testing.assert_allclose(on_imp, want, rtol=1e-12)


def test_an_index_named_row_with_threads():
    """A column index `row` once replaced the row of a threaded pass (and its
    stream's state `row_q` met the pass's own), so the C failed to compile or
    read out of bounds."""
    i, row = ep.indices("i row")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    Av = sp.random_array((30, 30), density=0.2, format="csr", random_state=1)
    Bv = sp.random_array((30, 30), density=0.2, format="csr", random_state=2)
    for e, want in ((A[i, row] + B[i, row], Av + Bv), (A[i, row] * B[i, row], Av.multiply(Bv))):
        for fmt in ("csr", "dcsr"):
            got = ep.compile(e, output=fmt, threads=2)(A=Av, B=Bv)
            got = got.toarray() if hasattr(got, "toarray") else got.to_dense()
            np.testing.assert_allclose(got, want.toarray(), rtol=1e-12)
            on_imp, _ = run_lowered(e, ep.semirings.get("real"), ep.Format.named(fmt, 2),
                                    {"A": Av, "B": Bv}, threads=2)
            np.testing.assert_allclose(on_imp, want.toarray(), rtol=1e-12)


@settings(max_examples=40)
@given(problems(max_indices=3), st.data())
def test_any_index_names_on_the_interpreter(p, data):
    """testing.problems draws index names from a pool with the names generated
    code uses (pos, row, out, n, q, acc)."""
    e = p.expr
    out = free_indices(e)
    fmt = data.draw(st.one_of(st.none(), formats_for(len(out)))) if out else None
    want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **p.inputs)
    got, _ = run_lowered(e, p.semiring, fmt, p.inputs, data.draw(st.sampled_from([1, 2])))
    assert_same(got, want, p.semiring, what=f"{e} into {fmt}")


@settings(max_examples=15)
@given(problems(max_indices=3), st.data())
def test_any_index_names_in_c(p, data):
    e = p.expr
    out = free_indices(e)
    fmt = data.draw(st.one_of(st.none(), formats_for(len(out)))) if out else None
    want = ep.evaluate(p.expr, semiring=p.semiring, backend="reference", **p.inputs)
    got = ep.evaluate(e, semiring=p.semiring, output=fmt or "dense",
                      threads=data.draw(st.sampled_from([1, 2])), **p.inputs)
    assert_same(got, want, p.semiring, what=f"{e} into {fmt}")

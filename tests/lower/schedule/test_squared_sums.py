"""A product of an access with itself (`A[i,j] * A[i,j]`: a Frobenius norm's square,
row norms) is one walk of A reading each value twice (streams.from_expr), not A
intersected with itself; its sum of squares takes the gathered sums' lanes with
each value squared (imp.GatherSum.square: ep_gather_sum's bit 2), real sums only.
It answers as the plain loop and numpy for csr and csc, scipy and ep.Tensor inputs,
min_plus too (A ⊗ A = 2A there), and a spoiled scipy input is refused by name."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, pipeline
from etchpy.errors import InputError

OFF = ep.Tuning(gather_sums=False)


def _compiled(kern):
    return kern.compiled.full() if hasattr(kern.compiled, "full") else kern.compiled


def _walks(kern) -> str:
    """How kern's loops find their indices (explain()'s stream lines)."""
    return " ".join(line for line in kern.explain().splitlines()
                    if line.strip().startswith(("out:", "y:")))


def _squares(kern) -> list:
    return [n for n in imp.statements(_compiled(kern).program.body)
            if isinstance(n, imp.GatherSum) and n.square]


def test_an_access_times_itself_is_one_walk_with_squared_lanes():
    for text in ("s = A[i, j] * A[i, j]", "y[row] = A[row, n] * A[row, n]"):
        kern = ep.compile(text, formats={"A": "csr"})
        assert _squares(kern), text
        assert "merge" not in _walks(kern) and "linear" in _walks(kern), text   # one walk
        src = pipeline.render_c(_compiled(kern), "int32_t").c
        assert "A_crd1, NULL, 3, A_dim1" in src or "A_crd1, NULL, 2, -1" in src, text
        assert not _squares(ep.compile(text, formats={"A": "csr"}, tuning=OFF))
        assert not _squares(ep.compile(text, formats={"A": "csr"}, semiring="min_plus"))
    assert "merge" in _walks(ep.compile("s = A[i, j] * B[i, j]",
                                        formats={"A": "csr", "B": "csr"}))   # two tensors: met


def matrices(fmt):
    rng = np.random.default_rng(9)
    yield "ragged", sp.random_array((200, 150), density=0.05, random_state=rng, format=fmt)
    yield "long rows", sp.random_array((20, 300), density=0.5, random_state=rng, format=fmt)
    yield "rows of 1", sp.csr_array((rng.standard_normal(60), rng.integers(0, 9, 60),
                                     np.arange(61)), shape=(60, 9)).asformat(fmt)
    yield "no entries", sp.csr_array((5, 7)).asformat(fmt)


@pytest.mark.parametrize("semiring", ["real", "real32", "min_plus"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_squares_answer_as_the_loop_and_numpy(semiring, fmt):
    texts = ("s = A[i, j] * A[i, j]", "y[i] = A[i, j] * A[i, j]", "y[j] = A[i, j] * A[i, j]")
    dtype = np.float32 if semiring == "real32" else np.float64
    for text in texts:
        kerns = [ep.compile(text, formats={"A": fmt}, semiring=semiring, tuning=t)
                 for t in (None, OFF)]
        for name, A in matrices(fmt):
            A = A.astype(dtype)
            C = sp.coo_array(A)
            v = C.data.astype(np.float64)
            if semiring == "min_plus":
                terms, red, empty = 2 * v, np.minimum, np.inf
            else:
                terms, red, empty = v * v, np.add, 0.0
            if text.startswith("s"):
                want = red.reduce(terms, initial=empty)
            else:
                at = C.row if text.startswith("y[i]") else C.col
                want = np.full(A.shape[0 if text.startswith("y[i]") else 1], empty)
                red.at(want, at, terms)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            for kern in kerns:
                for given in (A, ep.Tensor.from_scipy(A, fmt)):
                    got = np.asarray(kern(A=given), dtype=np.float64)
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                               err_msg=f"{name} {text}")


@pytest.mark.parametrize("text", ["s = A[i, j] * A[i, j]", "y[i] = A[i, j] * A[i, j]"])
def test_a_spoiled_input_is_refused_by_name(text):
    A = sp.random_array((100, 300), density=0.3, random_state=4, format="csr")
    kern = ep.compile(text, formats={"A": "csr"})
    for where in (0, 9, 40):                    # a first chunk, a later one, past 32
        for bad in (-1, 300):
            B = A.copy()
            B.indices[B.indptr[3] + where] = bad
            with pytest.raises(InputError, match="'A'"):
                kern(A=B)

"""Flat walks (lower/schedule/flat_walks.py, Tuning flat_walks): a Σ over every row
of a compressed level, reading nothing of the row, walks pos[first] .. pos[end] as one
segment (the sum of all entries, 1ᵀAx). It answers as the row-by-row loop and
numpy, for csr and csc, several semirings, index names the C uses, the Imp
interpreter; with fused checks, rows out of order, coordinates out of range and
an end past the arrays are refused by name, never read."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp, pipeline
from etchpy.errors import InputError
from tuned import on_interpreter

OFF = ep.Tuning(flat_walks=False)


def texts(fmt):
    """A total, 1ᵀAx with x along the walked level (csr: columns; csc: rows), 2·total."""
    x = "A[pos, n] * x[n]" if fmt == "csr" else "x[pos] * A[pos, n]"
    return ("s = A[i, j]", f"s = {x}", "s = 2 * A[row, out]")


def _compiled(kern):
    """kern's pipeline.Compiled (decoded where kern keeps it encoded)."""
    return kern.compiled.full() if hasattr(kern.compiled, "full") else kern.compiled


def _flat_loops(kern, checked=True):
    """The loops of kern's build that walk a flat segment: noted so (Walk.rows)
    without checks; with them, each after its rows' order test."""
    prog = _compiled(kern).build(checked)
    if checked:
        return [n for n in imp.statements(prog.body)
                if isinstance(n, imp.Decl) and n.name.endswith("_disorder")]
    return [n for n in imp.statements(prog.body)
            if isinstance(n, imp.While) and n.walk is not None and n.walk.rows is not None]


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_sum_of_every_row_walks_one_segment_where_switched_on(fmt):
    for text in texts(fmt):
        assert _flat_loops(ep.compile(text, formats={"A": fmt}), checked=False), text
        assert _flat_loops(ep.compile(text, formats={"A": fmt})), text
        assert not _flat_loops(ep.compile(text, formats={"A": fmt}, tuning=OFF))
        assert not _flat_loops(ep.compile(text, formats={"A": fmt}, tuning="noopt"))
    outer = "s = y[i] * A[i, j]" if fmt == "csr" else "s = A[i, j] * y[j]"
    for text in ("y[i] = A[i, j]", "y[j] = A[i, j]", outer):
        assert not _flat_loops(ep.compile(text, formats={"A": fmt})), text   # reads the row


def test_the_checked_build_tests_the_rows_order_first():
    src = pipeline.render_c(_compiled(ep.compile("s = A[i, j]", formats={"A": "csr"})),
                            "int32_t").c
    assert "_disorder | (A_pos1[" in src and "ep_gather_pick(A_pos1, A_dim0, -1, 0)" in src


def matrices(fmt):
    rng = np.random.default_rng(5)
    yield "ragged", sp.random_array((300, 200), density=0.02, random_state=rng, format=fmt)
    yield "rows of 1", sp.csr_array((rng.random(90) + 1, rng.integers(0, 50, 90),
                                     np.arange(91)), shape=(90, 50)).asformat(fmt)
    lil = sp.random_array((40, 70), density=0.4, random_state=rng, format="lil")
    lil[5:15, :] = 0
    lil[:, 30:] = 0
    yield "empty rows and columns", lil.asformat(fmt)
    yield "no entries", sp.csr_array((6, 4)).asformat(fmt)
    yield "one long row", sp.csr_array(np.vstack([np.zeros((3, 500)), rng.random((1, 500)),
                                                  np.zeros((2, 500))])).asformat(fmt)


def _reference(text, A, x, semiring):
    """Dense numpy over the stored entries only (a min or max sees no fill)."""
    C = sp.coo_array(A)
    v = C.data * (x[C.col] if "x[n]" in text else x[C.row] if "x[" in text else 1)
    v = 2 * v if text.startswith("s = 2") else v
    return {"real": np.sum, "min_plus": np.min, "max_times": np.max}[semiring](
        v, initial=None if v.size else {"real": 0.0, "min_plus": np.inf, "max_times": 0.0}[
            semiring])


@pytest.mark.parametrize("semiring", ["real", "min_plus", "max_times"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_flat_walks_answer_as_the_rows_and_numpy(semiring, fmt):
    for text in texts(fmt) if semiring != "min_plus" else texts(fmt)[:1]:
        kerns = [ep.compile(text, formats={"A": fmt}, semiring=semiring, tuning=t)
                 for t in (None, OFF)]          # (noopt: test_a_sum_of_every_row_walks_...)
        for name, A in matrices(fmt):
            A = A.copy()
            A.data = np.abs(A.data) + 0.5
            x = np.linspace(0.5, 2.0, A.shape[1 if "x[n]" in text else 0])
            want = _reference(text, A, x, semiring)
            for idx in (np.int32, np.int64) if semiring == "real" else (np.int32,):
                A.indices, A.indptr = A.indices.astype(idx), A.indptr.astype(idx)
                for kern in kerns:
                    for given in (A, ep.Tensor.from_scipy(A, fmt)):     # checked and not
                        got = kern(A=given, x=x) if "x[" in text else kern(A=given)
                        np.testing.assert_allclose(float(got), want, rtol=1e-12,
                                                   err_msg=f"{name} {text} {idx}")


def test_real32_sums_in_float32():
    A = sp.random_array((200, 90), density=0.05, random_state=3, format="csr",
                        dtype=np.float32)
    got = ep.compile("s = A[i, j]", formats={"A": "csr"}, semiring="real32")(A=A)
    np.testing.assert_allclose(float(got), float(A.astype(np.float64).sum()), rtol=1e-5)


def _spoiled(A, how):
    A = A.copy()
    if how == "rows out of order":
        A.indptr[5], A.indptr[6] = A.indptr[6], A.indptr[5]
    elif how == "first row's start past its end":
        A.indptr[0] = A.indptr[1] + 1
    elif how == "negative start":
        A.indptr[0] = -3
    elif how in ("coordinate past the dimension", "negative coordinate"):
        A.indices[A.nnz // 2] = A.shape[1] + 4 if how.startswith("coordinate") else -1
    return A


@pytest.mark.parametrize("how", ["rows out of order", "first row's start past its end",
                                 "negative start", "coordinate past the dimension",
                                 "negative coordinate"])
@pytest.mark.parametrize("text", texts("csr")[:2])
def test_a_spoiled_scipy_input_is_refused_by_name(how, text):
    A = sp.random_array((300, 200), density=0.03, random_state=1, format="csr")
    kern = ep.compile(text, formats={"A": "csr"})
    x = np.ones(200)
    call = (lambda M: kern(A=M, x=x)) if "x[" in text else (lambda M: kern(A=M))
    assert np.isclose(float(call(A)), A.sum() if "x[" not in text else (A @ x).sum())
    with pytest.raises(InputError, match="'A'"):
        call(_spoiled(A, how))
    A.indptr[7], A.indptr[8] = A.indptr[8], A.indptr[7]      # written in place between calls
    with pytest.raises(InputError, match="'A'"):
        call(A)


def test_the_interpreter_runs_a_flat_walk():
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format="csr")
    M = sp.random_array((25, 40), density=0.3, random_state=2, format="csr")
    final, prog, _ = on_interpreter(ep.sum(i, ep.sum(j, A[i, j])), ep.semirings.real, None,
                                    {"A": ep.Tensor.from_scipy(M, "csr")})
    assert any(isinstance(n, imp.While) and n.walk is not None and n.walk.rows is not None
               for n in imp.statements(prog.body))
    np.testing.assert_allclose(final["out"], M.sum(), rtol=1e-12)



@pytest.mark.parametrize("levels", [["dense", "compressed"], ["compressed", "compressed"],
                                    ["compressed"], ["dense", "dense", "compressed"], "coo"])
def test_one_segment_names_the_formats_whose_total_is_one_walk(levels):
    """formats.positions.one_segment (what runtime.shared leaves to lowering) holds
    where a total of every stored entry is a flat walk (Walk.rows) under one dense
    level; not for one compressed level alone (one segment, walked entry by entry)."""
    from etchpy.formats.positions import one_segment
    form = ep.Format.named("coo", 2) if levels == "coo" else ep.Format(levels)
    ix = ep.indices("i j k")[:form.order]
    kern = ep.compile(ep.sum(ix, ep.tensor("A", form.order, format=form)[ix]))
    loops = [n for n in imp.statements(_compiled(kern).build(False).body)
             if isinstance(n, imp.While)]
    rows = [n for n in loops if getattr(n.walk, "rows", None) is not None]
    assert one_segment(form) == bool(rows), (levels, len(loops))

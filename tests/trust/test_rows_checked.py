"""A full serial loop of scalar walks checks its input's segments as each row
opens (Tuning.check_rows, lower.schedule.row_checks; proofs_notes/validation.md,
"Segments checked as each row opens"): one rare test a row, leaving the loop
(imp.Break) on the first bad one, in place of the pass over indptr. Rows of
five (a 2-D stencil: the near scalar loop): good inputs give scipy's result;
indptr past nnz, decreasing or negative, a coordinate outside [0, dim) and a
matrix of no columns are refused (an InputError naming A) or answered, never
read past; arrays changed in place between calls too. (Under ASan and UBSan:
test_segment_checks.py's property, which holds two check_rows kernels.)"""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import pipeline
from etchpy.errors import InputError

SPMV = "y[i] = A[i, j] * x[j]"
ON = ep.Tuning(check_rows=True)
OFF = ep.Tuning(check_rows=False, row_checks=0)
HOST = ep.Tuning(row_checks=1)          # the host fact's way in (Intel's default)


def stencil(side, idx, fmt="csr"):
    """The 5-point Laplacian on a side² grid, csr (or csc: the same arrays, the
    matrix symmetric) with `idx` index arrays."""
    one = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(side, side))
    A = sp.csr_array(sp.kronsum(one, one, format="csr"))
    A.sort_indices()
    kind = sp.csr_array if fmt == "csr" else sp.csc_array
    return kind((A.data, A.indices.astype(idx), A.indptr.astype(idx)), shape=A.shape)


def test_the_switch_tests_rows_in_the_scalar_loop_only():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON)
    src = pipeline.render_c(kern.compiled, "int32_t").c
    assert src.count("if (EP_RARE(") == 1 and "break;" in src    # the near scalar loop
    assert "ep_gather_clamped(acc" in src                         # lanes keep their blocks
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning=OFF)
    assert "EP_RARE" not in pipeline.render_c(off.compiled, "int32_t").c
    host = ep.compile(SPMV, formats={"A": "csr"}, tuning=HOST)
    body = src[src.rindex("int etchpy_kernel("):]                     # the banner aside
    assert pipeline.render_c(host.compiled, "int32_t").c.endswith(body)
    two = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON, threads=2)
    assert "EP_RARE" not in pipeline.render_c(two.compiled, "int32_t").c


def test_the_host_default_tests_a_csc_scatters_columns_as_each_opens():
    """The host's row_checks takes scattered sums (a csc SpMV's columns,
    checks_first.scattered) as it takes gathered ones; off, the block pass."""
    src = pipeline.render_c(ep.compile(SPMV, formats={"A": "csc"}, tuning=HOST).compiled,
                            "int32_t").c
    assert src.count("if (EP_RARE(") == 1 and "break;" in src and "_c_block" not in src
    off = pipeline.render_c(ep.compile(SPMV, formats={"A": "csc"}, tuning=OFF).compiled,
                            "int32_t").c
    assert "EP_RARE" not in off and "j_c_block" in off


def test_a_scatter_is_told_from_other_walks():
    """checks_first.scattered: `i := crd[q]; out[i] ⊕= ...vals[q]...; q := q + 1`
    over q < e, the output another array; not a walk that writes crd's or vals'
    array, reads no vals[q], or does more."""
    from etchpy.imp import Accum, Assign, Const, Decl, Load, Ring, Var, While, incr, lt, seq
    from etchpy.lower.schedule.checks_first import scattered
    q = Var("q")

    def walk(out="y", value=Ring("mul", Load("V", q), Load("x", Var("j"))), *more):
        return While(lt(q, Var("e")), seq(Decl("i", "index", Load("C", q)),
                                          Accum(out, Var("i"), value), *more, incr("q")))
    assert scattered(walk(), "C", "V") == ("q", "e", "y")
    assert scattered(walk(), "D", "V") is None                          # another level's
    assert scattered(walk("V"), "C", "V") is None                       # into vals
    assert scattered(walk("y", Load("x", Var("j"))), "C", "V") is None  # no vals[q]
    assert scattered(walk("y", Load("V", q), Assign("s", Const(1))), "C", "V") is None


def test_the_rows_start_is_carried_by_the_walk():
    """Each row's walk starts where the last one ended (a variable, not a load
    of pos[c]), and the row's test compares pos[c+1] with it
    (proofs_notes/validation.md, "The row's start carried")."""
    src = pipeline.render_c(ep.compile(SPMV, formats={"A": "csr"}, tuning=ON).compiled,
                            "int32_t").c
    at = src[src.index("int64_t i_c_at = "):]
    assert "int64_t i_c_at = A_pos1[i_c];" in src
    assert "(A_pos1[(i_c + 1)] < i_c_at)" in at and "j_q = i_c_at;" in at
    assert "i_c_at = j_q;" in at and "j_q = A_pos1[i_c];" not in at[:at.index("i_c_at = j_q;")]


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("tuning", [ON, OFF, HOST], ids=["check_rows", "off", "row_checks"])
def test_bad_segments_and_coordinates_are_refused(idx, tuning, fmt):
    A = stencil(30, idx, fmt)
    n, nnz = A.shape[0], A.nnz
    x = np.random.default_rng(5).random(n)
    kern = ep.compile(SPMV, formats={"A": fmt}, tuning=tuning)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)

    def spoiled(where, at, value):
        B = A.copy()
        getattr(B, where)[at] = value
        return B
    bad = [("indptr", 7, nnz + 3), ("indptr", 400, A.indptr[398]),       # past nnz, decreasing
           ("indptr", n - 1, A.indptr[n - 2] - 1),                        # the last row's start
           ("indptr", 200, -5), ("indptr", n - 1, nnz + 1),                # negative, the last row
           ("indices", 0, n), ("indices", 3 * nnz // 4, -1), ("indices", nnz - 1, 2**31 - 1)]
    for where, at, value in bad:
        with pytest.raises(InputError, match="A"):
            kern(A=spoiled(where, at, value), x=x)
    for at in (1, 300, n - 1):                  # an empty row (its entries the next row's):
        B = spoiled("indptr", at, A.indptr[at - 1])                     # still a matrix
        np.testing.assert_allclose(kern(A=B, x=x), B @ x, rtol=1e-12)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)     # good again after


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_arrays_changed_in_place_between_calls(fmt):
    A = stencil(20, np.int32, fmt)
    x = np.ones(A.shape[0])
    kern = ep.compile(SPMV, formats={"A": fmt}, tuning=ON if fmt == "csr" else HOST)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x)
    keep = A.indptr[50]
    A.indptr[50] = A.indptr[49] - 1                 # a segment that runs backwards
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)
    A.indptr[50] = keep
    A.indices[17] = 10**6
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)
    A.indices[17] = 0 if A.indices[16] != 0 else 1
    A.sort_indices()
    A.sum_duplicates()
    np.testing.assert_allclose(kern(A=A, x=x), A @ x)


def test_no_columns():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON)
    A = sp.csr_array((40, 0))
    np.testing.assert_array_equal(kern(A=A, x=np.zeros(0)), np.zeros(40))


def test_only_a_full_walk_carries_its_start():
    """row_starts.carried: `q := pos[c]; e := pos[c+1]; while (q < e) {...; q
    := q + 1}` carries; a walk that can leave early (a break) or moves q or e
    elsewhere does not (its q at the end need not be pos[c+1])."""
    from etchpy.imp import Assign, Bin, Break, Const, If, Load, Var, While, incr, lt, seq
    from etchpy.lower.schedule.row_starts import carried
    c = Var("c")
    head = [Assign("q", Load("P", c)), Assign("e", Load("P", Bin("+", c, Const(1))))]
    step = Assign("s", Bin("+", Var("s"), Load("V", Var("q"))))

    def row(*walk_body, after=()):
        return seq(*head, While(lt(Var("q"), Var("e")), seq(*walk_body)), *after)
    assert carried(row(step, incr("q")), "P", c) == ("q", 0, 2)
    assert carried(row(step, incr("q")), "R", c) is None                 # another array's
    assert carried(row(If(Var("s"), Break()), step, incr("q")), "P", c) is None
    assert carried(row(step, Assign("q", Var("e")), incr("q")), "P", c) is None
    assert carried(row(step, Assign("e", Var("q")), incr("q")), "P", c) is None
    assert carried(row(step, incr("q"), after=[incr("q")]), "P", c) is None
    assert carried(row(incr("q"), step), "P", c) is None       # not the last step

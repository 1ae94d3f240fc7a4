"""Threads: the outer loop of a dense output split across threads, each block of
rows run by a function of its own, and full reductions with one accumulator per
block."""
import re

import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from tuned import random_csr

i, j, k = ep.indices("i j k")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_threads_split_the_outer_loop_of_dense_outputs():
    B = ep.tensor("B", 2)
    kern = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), threads=2)
    assert "omp parallel for" in kern.c_source and "threads:    2" in kern.explain()
    rng = np.random.default_rng(1)
    M = random_csr(3000, 200, 20000, 3)
    X = rng.random((200, 16))
    np.testing.assert_allclose(kern(A=M, B=X), M @ X, rtol=1e-12)
    # a coordinates output (sorted afterwards) stays serial
    assert "omp parallel" not in ep.compile(A_csr[i, j] * A_csr[i, j], output="coo",
                                            threads=2).c_source
    with pytest.raises(ep.EtchpyError):
        ep.compile(SPMV, threads=0)


def test_a_threaded_loops_body_is_a_function_of_its_own():
    """Each loop split across threads runs its blocks of rows through a static
    function whose parameters are the names the body reads from outside: the
    arrays it writes as plain restrict pointers, the rest const; scalars by value.
    Serial kernels have no such function."""
    B = ep.tensor("B", 2)
    src = ep.compile(ep.sum(j, A_csr[i, j] * B[j, k]), threads=2).c_source
    m = re.search(r"static EP_NOINLINE void (ep_rows_0)\(([^)]*)\)", src)
    assert m, src
    params = {p.split()[-1]: p for p in (q.strip() for q in m.group(2).split(","))}
    assert params["out"] == "ep_val_t *restrict out"
    assert params["A_vals"] == "const ep_val_t *restrict A_vals"
    assert params["A_pos1"] == "const ep_idx_t *restrict A_pos1"
    assert params["lo"] == "int64_t lo" and params["hi"] == "int64_t hi"
    kernel = src[src.index("int etchpy_kernel("):]
    assert re.search(r"ep_rows_0\(\w+_lo, \w+_hi,", kernel) and "A_vals[" not in kernel
    assert "ep_rows" not in ep.compile(ep.sum(j, A_csr[i, j] * B[j, k])).c_source
    # the analysis it rests on
    body = imp.seq(imp.Decl("t", "value", imp.Load("x", imp.Var("q"))),
                   imp.Assign("t", imp.Var("u")),
                   imp.Accum("y", imp.Var("q"), imp.Var("t")),
                   imp.Seek("p", imp.Var("e"), "crd", imp.Var("q"), imp.Const(True, "bool")))
    assert imp.declared_in(body) == {"t"}
    assert imp.scalars_assigned(body) == {"t", "p"}
    assert imp.arrays_written(body) == {"y"}


@pytest.mark.parametrize("semiring", ["real", "min_plus", "integer", "boolean"])
def test_threads_split_full_reductions_with_one_accumulator_per_block(semiring):
    """Σ_{i,j} A[i,j]·x[j]: every level contracted, so the rows are cut into fixed
    blocks that threads take dynamically, each block adding into its own partial;
    the partials are added in block order."""
    x = ep.tensor("x", 1)
    e = ep.sum((i, j), A_csr[i, j] * x[j])
    kern = ep.compile(e, threads=2, semiring=semiring)
    src = kern.c_source
    assert "schedule(dynamic, 1) num_threads(2)" in src and "acc_part[32]" in src
    assert "one accumulator per block" in src
    sr = ep.semirings.get(semiring)
    M = random_csr(700, 90, 4000, 5)
    M.data = np.random.default_rng(0).integers(1, 5, M.nnz).astype(M.data.dtype)
    xv = np.random.default_rng(1).integers(0, 4, 90).astype(float)
    M, xv = M.astype(sr.dtype), xv.astype(sr.dtype)
    want = ep.evaluate(e, semiring=semiring, backend="reference", A=M, x=xv)
    got = kern(A=M, x=xv)
    assert got == pytest.approx(want, rel=1e-12)
    assert kern(A=M, x=xv) == got                       # the same partition every call
    serial = ep.compile(e, threads=1, semiring=semiring)
    assert not re.search(r"\bomp\b", "\n".join(ln for ln in serial.c_source.splitlines()
                                              if not ln.startswith("#")))

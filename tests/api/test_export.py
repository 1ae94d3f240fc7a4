"""Standalone C export: a C main built with sanitizers calls the kernel, no Python."""
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.tuning import DEFAULT
from tuned import export_tuned

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
SAN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
       "-fno-sanitize-recover=all"]


def c_array(ctype, name, values):
    body = ", ".join(repr(float(v)) if ctype == "double" else str(int(v)) for v in values)
    return f"static const {ctype} {name}[] = {{{body}{'' if len(values) else '0'}}};"


def build_and_run(tmp_path, name, main_src):
    (tmp_path / "main.c").write_text(main_src)
    exe = tmp_path / "main"
    cmd = ["gcc", *SAN, "-o", str(exe), str(tmp_path / "main.c"), str(tmp_path / f"{name}.c"),
           "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    res = subprocess.run([str(exe)], check=True, capture_output=True, text=True)
    return res.stdout.split()


def test_exported_spmv_runs_without_python(tmp_path):
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    c_path, h_path = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    assert "int64_t A_dim0" in h_path.read_text() and "Returns 0" in h_path.read_text()
    M = sp.random(30, 20, density=0.2, format="csr", random_state=3)
    xv = np.linspace(-1, 1, 20)
    main = f"""
#include <stdio.h>
#include "spmv.h"
{c_array("int64_t", "pos", M.indptr)}
{c_array("int64_t", "crd", M.indices)}
{c_array("double", "vals", M.data)}
{c_array("double", "x", xv)}
int main(void) {{
    double y[30];
    int rc = spmv(30, 20, pos, crd, vals, 20, x, y);
    if (rc) return 10 + rc;
    for (int i = 0; i < 30; i++) printf("%.17g\\n", y[i]);
    return 0;
}}
"""
    out = build_and_run(tmp_path, "spmv", main)
    np.testing.assert_allclose(np.array(out, dtype=float), M @ xv, rtol=1e-14)


def run_csr_product(tmp_path, name, M, N, out_cols, csc=False):
    """Call an exported kernel f(A, B) -> csr (or csc) from a C main; return its output."""
    rows = out_cols if csc else M.shape[0]
    main = f"""
#include <stdio.h>
#include "{name}.h"
{c_array("int64_t", "ap", M.indptr)}
{c_array("int64_t", "ac", M.indices)}
{c_array("double", "av", M.data)}
{c_array("int64_t", "bp", N.indptr)}
{c_array("int64_t", "bc", N.indices)}
{c_array("double", "bv", N.data)}
int main(void) {{
    int64_t *pos, *crd; double *vals; int64_t nnz;
    int rc = {name}({M.shape[0]}, {M.shape[1]}, ap, ac, av, {N.shape[0]}, {N.shape[1]},
                    bp, bc, bv, &pos, &crd, &vals, &nnz);
    if (rc) return 10 + rc;
    for (int i = 0; i <= {rows}; i++) printf("%lld\\n", (long long)pos[i]);
    for (int64_t q = 0; q < nnz; q++) printf("%lld %.17g\\n", (long long)crd[q], vals[q]);
    {name}_free(pos); {name}_free(crd); {name}_free(vals);
    return 0;
}}
"""
    out = build_and_run(tmp_path, name, main)
    pos = np.array(out[:rows + 1], dtype=np.int64)
    crd = np.array(out[rows + 1::2], dtype=np.int64)
    vals = np.array(out[rows + 2::2], dtype=float)
    return (sp.csc_array if csc else sp.csr_array)((vals, crd, pos),
                                                   shape=(M.shape[0], out_cols))


def test_exported_dense_output_fills_unless_told_it_is_zeroed(tmp_path):
    """A dense output that loops add into (SpMM, row by row) takes `out_zeroed`:
    with 0 the kernel fills the buffer first, whatever it held; with 1 it trusts
    the caller's zeros. From Python, etchpy passes np.zeros and 1 when the
    semiring's zero is all-zero bits (real), np.empty and 0 otherwise (min_plus)."""
    i, j, k = ep.indices("i j k")
    A, X = ep.tensor("A", 2, format="csr"), ep.tensor("X", 2)
    e = ep.sum(j, A[i, j] * X[j, k])
    c_path, h_path = ep.export_c(e, "spmm", tmp_path)
    assert "int out_zeroed" in h_path.read_text()
    M = sp.random(6, 5, density=0.4, format="csr", random_state=2)
    Xv = np.arange(15.0).reshape(5, 3)
    main = f"""
#include <stdio.h>
#include "spmm.h"
{c_array("int64_t", "pos", M.indptr)}
{c_array("int64_t", "crd", M.indices)}
{c_array("double", "vals", M.data)}
{c_array("double", "x", Xv.ravel())}
int main(void) {{
    double y[18], z[18];
    for (int t = 0; t < 18; t++) {{ y[t] = 7.0; z[t] = 0.0; }}
    int rc = spmm(6, 5, pos, crd, vals, 5, 3, x, y, 0);
    if (rc) return 10 + rc;
    rc = spmm(6, 5, pos, crd, vals, 5, 3, x, z, 1);
    if (rc) return 20 + rc;
    for (int t = 0; t < 18; t++) printf("%.17g %.17g\\n", y[t], z[t]);
    return 0;
}}
"""
    out = np.array(build_and_run(tmp_path, "spmm", main), dtype=float).reshape(18, 2)
    want = (M @ Xv).ravel()
    np.testing.assert_allclose(out[:, 0], want, rtol=1e-14)
    np.testing.assert_allclose(out[:, 1], want, rtol=1e-14)
    real, tropical = ep.compile(e), ep.compile(e, semiring="min_plus")
    assert real._calloc_zero and not tropical._calloc_zero
    assert "if (!out_zeroed)" in real.c_source
    W = sp.random(40, 30, density=0.2, format="csr", random_state=4)
    Wx = np.random.default_rng(0).random((30, 4))
    np.testing.assert_allclose(real(A=W, X=Wx), W @ Wx)
    want_t = ep.evaluate(e, semiring="min_plus", backend="reference", A=W, X=Wx)
    np.testing.assert_array_equal(tropical(A=W, X=Wx), want_t)


def test_exported_sparse_output_kernel(tmp_path):
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    ep.export_c(ep.sum(j, A[i, j] * B[k, j]), "abt", tmp_path, output="csr")
    M = sp.random(12, 9, density=0.3, format="csr", random_state=4)
    N = sp.random(7, 9, density=0.3, format="csr", random_state=5)
    got = run_csr_product(tmp_path, "abt", M, N, 7)
    np.testing.assert_allclose(got.toarray(), (M @ N.T).toarray(), rtol=1e-14)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_exported_union_and_intersection_reserve_each_row_under_sanitizers(
        tmp_path, op):
    """csr A+B and A∘B reserve room for a whole row before its loop (the union's
    rows together, the intersection's shorter row) and append without a test.
    With the first capacity forced to 4 entries the arrays grow row by row;
    ASan checks that no append writes past them."""
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    e = A[i, j] + B[i, j] if op == "add" else A[i, j] * B[i, j]
    export_tuned(e, "ew", tmp_path, DEFAULT.with_(first_capacity_limit=4), output="csr")
    src = (tmp_path / "ew.c").read_text()
    assert "(out_count1 + 1) > out_crd1_cap" not in src
    M = sp.random(40, 30, density=0.4, format="csr", random_state=6)
    N = sp.random(40, 30, density=0.4, format="csr", random_state=7)
    got = run_csr_product(tmp_path, "ew", M, N, 30)
    want = M + N if op == "add" else M.multiply(N)
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-14)


def test_exported_size_mismatch_returns_2(tmp_path):
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    ep.export_c(ep.sum(j, A[i, j] * x[j]), "mv", tmp_path, index_type="int32_t")
    main = """
#include <stdio.h>
#include "mv.h"
int main(void) {
    double a[6] = {1, 2, 3, 4, 5, 6}, x[2] = {1, 1}, y[2];
    printf("%d\\n", mv(2, 3, a, 2, x, y));
    return 0;
}
"""
    assert build_and_run(tmp_path, "mv", main) == ["2"]


def test_export_name_must_be_identifier(tmp_path):
    i, = ep.indices("i")
    with pytest.raises(ep.EtchpyError):
        ep.export_c(ep.tensor("x", 1)[i], "not a name", tmp_path)


@pytest.mark.parametrize("hashed", [False, True])
def test_exported_workspace_kernel_under_sanitizers(tmp_path, hashed):
    """Gustavson SpGEMM (workspace: dense with the bitset sort, or a hash table that
    grows) through the C ABI with ASan/UBSan."""
    tuning = DEFAULT.with_(hash_workspace_dim=0, hash_initial=4) if hashed else DEFAULT
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    export_tuned(ep.sum(j, A[i, j] * B[j, k]), "gus", tmp_path, tuning, output="csr")
    rng = np.random.default_rng(9)
    M = sp.csr_array((rng.random(60), (rng.integers(0, 6, 60), rng.integers(0, 10, 60))),
                     shape=(6, 10))
    N = sp.csr_array((rng.random(400), (rng.integers(0, 10, 400), rng.integers(0, 200, 400))),
                     shape=(10, 200))
    got = run_csr_product(tmp_path, "gus", M, N, 200)
    for r in range(6):
        assert np.all(np.diff(got.indices[got.indptr[r]:got.indptr[r + 1]]) > 0)
    np.testing.assert_allclose(got.toarray(), (M @ N).toarray(), rtol=1e-13)
    # full rows: every word of marks full, the last one holding two indices
    full = sp.csr_array(np.arange(1.0, 1941.0).reshape(10, 194))
    got = run_csr_product(tmp_path, "gus", M, full, 194)
    assert np.all(np.diff(got.indptr) == 194)
    np.testing.assert_allclose(got.toarray(), (M @ full).toarray(), rtol=1e-13)
    # rows spread over several summary words, touching the first and last column
    cols = np.concatenate([rng.integers(0, 9001, 400), np.arange(10) * 0, np.full(10, 9000)])
    wide = sp.csr_array((rng.random(420), (np.concatenate([rng.integers(0, 10, 400),
                                                           np.arange(10), np.arange(10)]),
                                           cols)), shape=(10, 9001))
    got = run_csr_product(tmp_path, "gus", M, wide, 9001)
    for r in range(6):
        assert np.all(np.diff(got.indices[got.indptr[r]:got.indptr[r + 1]]) > 0)
    np.testing.assert_allclose(got.toarray(), (M @ wide).toarray(), rtol=1e-13)


@pytest.mark.parametrize("same_pattern", [True, False])
def test_exported_threaded_rows_under_sanitizers(tmp_path, same_pattern):
    """A∘B into csr with threads=2 (its rows filled within bounds; built without
    OpenMP here, so the passes run serially) with ASan/UBSan, empty rows
    included. B with A's pattern meets every row's bound, so the scratch arrays
    are moved into the output; another B is copied row by row."""
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    ep.export_c(A[i, j] * B[i, j], "emul", tmp_path, output="csr", threads=2)
    text = (tmp_path / "emul.c").read_text()
    assert "then moved into place" in text and "bd_coords = NULL" in text
    rng = np.random.default_rng(11)
    M = sp.csr_array((rng.random(80), (rng.integers(0, 9, 80) * (rng.random(80) < 0.8),
                                       rng.integers(0, 30, 80))), shape=(12, 30))
    N = M * 3.0 if same_pattern else sp.csr_array(
        (rng.random(90), (rng.integers(0, 12, 90), rng.integers(0, 30, 90))), shape=(12, 30))
    got = run_csr_product(tmp_path, "emul", M, N, 30)
    want = sp.csr_array(M.multiply(N))
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-13)


@pytest.mark.parametrize("threads", [1, 2])
def test_exported_bucket_kernel_under_sanitizers(tmp_path, threads):
    """Gustavson SpGEMM into csc (a counting sort whose loops sum over j before
    the row index k) through the C ABI with ASan/UBSan, with empty rows and
    columns, and with repeats: every entry's row j hit by several i. With
    threads=2 the blocked passes run (serially: built without OpenMP here)."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    ep.export_c(ep.sum(j, A[i, j] * B[j, k]), "gus_csc", tmp_path, output="csc",
                threads=threads)
    text = (tmp_path / "gus_csc.c").read_text()
    assert "bk_last" in text and ("count each block" in text) == (threads > 1)
    rng = np.random.default_rng(10)
    M = sp.csr_array((rng.random(60), (rng.integers(0, 6, 60), rng.integers(0, 10, 60))),
                     shape=(8, 10))
    N = sp.csr_array((rng.random(80), (rng.integers(0, 9, 80), rng.integers(0, 30, 80))),
                     shape=(10, 40))
    got = run_csr_product(tmp_path, "gus_csc", M, N, 40, csc=True)
    for c in range(40):
        assert np.all(np.diff(got.indices[got.indptr[c]:got.indptr[c + 1]]) > 0)
    want = sp.csc_array(M @ N)
    want.sum_duplicates()
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-13)


@pytest.mark.parametrize("threads", [1, 2])
def test_exported_kernels_compile_without_warnings(tmp_path, threads):
    """Exported C builds warning-free under -Wall -Wextra -Werror, with and without
    OpenMP: a threaded kernel built without it runs serially, and nothing it
    declares is left unused (the chunk size, a counting pass's index, a
    dimension no loop reads)."""
    i, j, k, r = ep.indices("i j k r")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    T, M, x = ep.tensor("T", 3, format="csf"), ep.tensor("M", 2), ep.tensor("x", 1)
    fibers = ep.Format([ep.Compressed(), ep.Compressed(), ep.Dense()])
    kernels = {"spmv": (ep.sum(j, A[i, j] * x[j]), {}),
               "gus": (ep.sum(j, A[i, j] * B[j, k]), {"output": "csr"}),
               "add": (A[i, j] + B[i, j], {"output": "csr"}),
               "ttm": (ep.sum(k, T[i, j, k] * M[k, r]), {"output": fibers}),
               "transpose": (A[i, j], {"output": "csc"}),
               "gus_csc": (ep.sum(j, A[i, j] * B[j, k]), {"output": "csc"}),
               "total": (ep.sum((i, j), A[i, j] * x[j]), {})}
    for name, (e, kw) in kernels.items():
        ep.export_c(e, name, tmp_path, threads=threads, **kw)
        for omp in ([], ["-fopenmp"]):
            subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", *omp, "-c",
                            str(tmp_path / f"{name}.c"), "-o", str(tmp_path / f"{name}.o")],
                           check=True, capture_output=True, text=True)

"""export_c and dense products: fused loops by default (no library needed), or
CBLAS when asked, and the header's first line says which."""
import shutil
import subprocess

import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import EtchpyError

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
SAN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
       "-fno-sanitize-recover=all"]

# A stand-in CBLAS (the declarations and a naive row-major gemm), so the test
# needs no CBLAS installed: it checks the arguments etchpy passes.
FAKE_CBLAS_H = """
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };
void cblas_dgemm(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int,
                 double, const double *, int, const double *, int, double, double *, int);
void cblas_sgemm(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int,
                 float, const float *, int, const float *, int, float, float *, int);
void cblas_dgemv(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, int, int, double, const double *, int,
                 const double *, int, double, double *, int);
void cblas_sgemv(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, int, int, float, const float *, int,
                 const float *, int, float, float *, int);
extern int fake_cblas_calls;
"""
FAKE_CBLAS_C = """
#include "cblas.h"
int fake_cblas_calls = 0;
void cblas_dgemm(enum CBLAS_ORDER o, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m,
                 int n, int k, double al, const double *a, int lda, const double *b, int ldb,
                 double be, double *c, int ldc)
{
    fake_cblas_calls++;
    if (o != CblasRowMajor) return;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += (ta == CblasTrans ? a[l * lda + i] : a[i * lda + l])
                     * (tb == CblasTrans ? b[j * ldb + l] : b[l * ldb + j]);
            c[i * ldc + j] = al * s + (be == 0 ? 0 : be * c[i * ldc + j]);
        }
}
void cblas_dgemv(enum CBLAS_ORDER o, enum CBLAS_TRANSPOSE t, int m, int n, double al,
                 const double *a, int lda, const double *x, int incx, double be, double *y,
                 int incy)
{
    fake_cblas_calls += 100;
    if (o != CblasRowMajor) return;
    for (int i = 0; i < (t == CblasTrans ? n : m); i++) {
        double s = 0;
        for (int l = 0; l < (t == CblasTrans ? m : n); l++)
            s += (t == CblasTrans ? a[l * lda + i] : a[i * lda + l]) * x[l * incx];
        y[i * incy] = al * s + (be == 0 ? 0 : be * y[i * incy]);
    }
}
void cblas_sgemv(enum CBLAS_ORDER o, enum CBLAS_TRANSPOSE t, int m, int n, float al,
                 const float *a, int lda, const float *x, int incx, float be, float *y,
                 int incy)
{
    (void)o; (void)t; (void)m; (void)n; (void)al; (void)a; (void)lda; (void)x; (void)incx;
    (void)be; (void)y; (void)incy;
}
void cblas_sgemm(enum CBLAS_ORDER o, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m,
                 int n, int k, float al, const float *a, int lda, const float *b, int ldb,
                 float be, float *c, int ldc)
{
    (void)o; (void)ta; (void)tb; (void)m; (void)n; (void)k; (void)al; (void)a; (void)lda;
    (void)b; (void)ldb; (void)be; (void)c; (void)ldc;
}
"""


def _main(a, b):
    vals = lambda name, x: (f"static const double {name}[] = {{"
                            + ", ".join(repr(float(v)) for v in x.ravel()) + "};")
    return f"""
#include <stdio.h>
#include "mm.h"
{vals("a", a)}
{vals("b", b)}
int main(void) {{
    double out[{a.shape[0] * b.shape[0]}];
    int rc = mm({a.shape[0]}, {a.shape[1]}, a, {b.shape[0]}, {b.shape[1]}, b, out);
    if (rc) return 10 + rc;
    for (int i = 0; i < {a.shape[0] * b.shape[0]}; i++) printf("%.17g\\n", out[i]);
    CALLS
    return 0;
}}
"""


def _export_and_run(tmp_path, blas, extra=()):
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2), ep.tensor("B", 2)
    c_path, h_path = ep.export_c(ep.sum(j, A[i, j] * B[k, j]), "mm", tmp_path, blas=blas)
    rng = np.random.default_rng(1)
    a, b = rng.random((5, 7)), rng.random((4, 7))
    calls = ('{ extern int fake_cblas_calls; printf("calls %d\\n", fake_cblas_calls); }'
             if blas else "")
    (tmp_path / "main.c").write_text(_main(a, b).replace("CALLS", calls))
    exe = tmp_path / "main"
    subprocess.run(["gcc", *SAN, "-I", str(tmp_path), "-o", str(exe), str(tmp_path / "main.c"),
                    str(c_path), *extra, "-lm"], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    return np.array(out[:20], dtype=float).reshape(5, 4), out[20:], a @ b.T, h_path, c_path


def test_exported_dense_product_keeps_fused_loops(tmp_path):
    got, _, want, h_path, c_path = _export_and_run(tmp_path, None)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert h_path.read_text().startswith("/* BLAS: none.")
    text = c_path.read_text()
    assert "#define EP_BLAS 0" in text and "etchpy_blas_bind" in text   # under EP_BLAS == 1


def test_exported_dense_product_links_cblas_when_asked(tmp_path):
    (tmp_path / "cblas.h").write_text(FAKE_CBLAS_H)
    (tmp_path / "cblas.c").write_text(FAKE_CBLAS_C)
    got, calls, want, h_path, c_path = _export_and_run(tmp_path, "cblas",
                                                       [str(tmp_path / "cblas.c")])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert calls == ["calls", "1"]
    assert "link a CBLAS library" in h_path.read_text().splitlines()[0]
    assert "#define EP_BLAS 2" in c_path.read_text()


def test_export_blas_choice_is_checked_and_sparse_kernels_are_unchanged(tmp_path):
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    with pytest.raises(EtchpyError, match="blas"):
        ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path, blas="mkl")
    _, h_path = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    assert "BLAS" not in h_path.read_text()


@pytest.mark.parametrize("which", ["mv", "mtv", "vm", "vmt"])
def test_exported_matrix_vector_products_call_cblas_gemv(tmp_path, which):
    """One row or one column of output: gemv, each transposition."""
    (tmp_path / "cblas.h").write_text(FAKE_CBLAS_H)
    (tmp_path / "cblas.c").write_text(FAKE_CBLAS_C)
    i, j = ep.indices("i j")
    M, x = ep.tensor("M", 2), ep.tensor("x", 1)
    e = {"mv": M[i, j] * x[j], "mtv": M[j, i] * x[j], "vm": x[j] * M[j, i],
         "vmt": x[j] * M[i, j]}[which]
    ep.export_c(ep.sum(j, e), which, tmp_path, blas="cblas")
    rng = np.random.default_rng(4)
    m, xv = rng.random((5, 5)), rng.random(5)
    want = {"mv": m @ xv, "mtv": m.T @ xv, "vm": xv @ m, "vmt": m @ xv}[which]
    # a loop order that adds into `out` (contiguous reads of M) asks whether it is zeroed
    zeroed = ", 0" if "out_zeroed" in (tmp_path / f"{which}.h").read_text() else ""
    vals = lambda name, v: (f"static const double {name}[] = {{"
                            + ", ".join(repr(float(t)) for t in v.ravel()) + "};")
    (tmp_path / "main.c").write_text(f"""
#include <stdio.h>
#include "{which}.h"
extern int fake_cblas_calls;
{vals("m", m)}
{vals("x", xv)}
int main(void) {{
    double out[5];
    int rc = {which}(5, 5, m, 5, x, out{zeroed});
    if (rc) return 10 + rc;
    for (int i = 0; i < 5; i++) printf("%.17g\\n", out[i]);
    printf("%d\\n", fake_cblas_calls);
    return 0;
}}
""")
    exe = tmp_path / "main"
    subprocess.run(["gcc", *SAN, "-I", str(tmp_path), "-o", str(exe), str(tmp_path / "main.c"),
                    str(tmp_path / f"{which}.c"), str(tmp_path / "cblas.c"), "-lm"],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    np.testing.assert_allclose(np.array(out[:5], dtype=float), want, rtol=1e-14)
    assert out[5] == "100"

"""An `imp.Gemm` as C: a call of BLAS's gemm, or its fallback loops.

Which BLAS is the C preprocessor's choice, by `EP_BLAS`:

    1 (the default)  through a pointer to a Fortran-convention gemm (dgemm or
                     sgemm, as the value type; int or ILP64 int64_t extents) that
                     etchpy's runtime binds when it loads the library
                     (`etchpy_blas_bind`, runtime.blas); until it is bound the
                     loops run
    2                CBLAS (`cblas_dgemm` or `cblas_sgemm`): link a CBLAS library
    0                no BLAS: the loops only

`ep.export_c` writes C that defines EP_BLAS 0 unless asked for CBLAS. Extents
below 1 or above INT_MAX (BLAS takes int) run the loops as well.
"""
from __future__ import annotations

HELPER = """\
/* Dense products (imp.Gemm) call BLAS's gemm as chosen by EP_BLAS (1: a pointer
 * bound by etchpy's runtime through etchpy_blas_bind; 2: CBLAS; 0: none, the
 * loops run). Row-major C = A.B is the column-major product C' = B'.A'. */
#ifndef EP_BLAS
#define EP_BLAS 1
#endif
static int ep_gemm_fits(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                        int64_t ldc)
{
    const int64_t most = 2147483647;    /* BLAS takes int extents */
    return m >= 1 && n >= 1 && k >= 1 && m <= most && n <= most && k <= most
        && lda >= 1 && ldb >= 1 && ldc >= 1 && lda <= most && ldb <= most && ldc <= most;
}
#if EP_BLAS == 1
/* The Fortran gemm and gemv bound, taking int extents, or ILP64 ones (int64_t,
 * as numpy's own OpenBLAS: ep_blas_wide_ints). */
typedef void (*ep_blas_fn)(void);
static ep_blas_fn ep_gemm_fn = 0, ep_gemv_fn = 0;
static int ep_blas_wide_ints = 0;
/* Called once by etchpy's runtime when it loads this library. */
void etchpy_blas_bind(void *dgemm, void *sgemm, void *dgemv, void *sgemv, int wide_ints)
{
    const int wide = sizeof(ep_val_t) == sizeof(double);
    ep_gemm_fn = (ep_blas_fn)(wide ? dgemm : sgemm);
    ep_gemv_fn = (ep_blas_fn)(wide ? dgemv : sgemv);
    ep_blas_wide_ints = wide_ints;
}
static int ep_gemm_ready(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                         int64_t ldc)
{
    return ep_gemm_fn != 0 && ep_gemv_fn != 0 && ep_gemm_fits(m, n, k, lda, ldb, ldc);
}
/* A product with one row or one column is a matrix-vector product: gemv
 * (gemm does not always forward it, and runs it many times slower). */
#define EP_GEMM_BODY(I)                                                                  \
    typedef void (*gemm_t)(const char *, const char *, const I *, const I *, const I *,  \
                           const ep_val_t *, const ep_val_t *, const I *,                \
                           const ep_val_t *, const I *, const ep_val_t *, ep_val_t *,    \
                           const I *);                                                   \
    typedef void (*gemv_t)(const char *, const I *, const I *, const ep_val_t *,         \
                           const ep_val_t *, const I *, const ep_val_t *, const I *,     \
                           const ep_val_t *, ep_val_t *, const I *);                     \
    const gemm_t gemm = (gemm_t)ep_gemm_fn;                                              \
    const gemv_t gemv = (gemv_t)ep_gemv_fn;                                              \
    const I cm = (I)n, cn = (I)m, ck = (I)k, la = (I)ldb, lb = (I)lda, lc = (I)ldc,       \
            unit = 1;                                                                    \
    const ep_val_t one = 1, beta = overwrite ? 0 : 1;                                    \
    if (m == 1) {            /* c[0, :] = op(B)' . A[0, :] */                            \
        const I inc = ta ? lb : 1;                                                       \
        if (tb)                                                                          \
            gemv("T", &ck, &cm, &one, b, &la, a, &inc, &beta, c, &unit);                 \
        else                                                                             \
            gemv("N", &cm, &ck, &one, b, &la, a, &inc, &beta, c, &unit);                 \
    } else if (n == 1) {     /* c[:, 0] = op(A) . B[:, 0] */                             \
        const I inc = tb ? 1 : la;                                                       \
        if (ta)                                                                          \
            gemv("N", &cn, &ck, &one, a, &lb, b, &inc, &beta, c, &lc);                   \
        else                                                                             \
            gemv("T", &ck, &cn, &one, a, &lb, b, &inc, &beta, c, &lc);                   \
    } else {                                                                             \
        gemm(tb ? "T" : "N", ta ? "T" : "N", &cm, &cn, &ck, &one, b, &la, a, &lb,        \
             &beta, c, &lc);                                                             \
    }
static void ep_gemm_int(int ta, int tb, int64_t m, int64_t n, int64_t k, const ep_val_t *a,
                        int64_t lda, const ep_val_t *b, int64_t ldb, ep_val_t *c,
                        int64_t ldc, int overwrite)
{
    EP_GEMM_BODY(int)
}
static void ep_gemm_int64(int ta, int tb, int64_t m, int64_t n, int64_t k,
                          const ep_val_t *a, int64_t lda, const ep_val_t *b, int64_t ldb,
                          ep_val_t *c, int64_t ldc, int overwrite)
{
    EP_GEMM_BODY(int64_t)
}
static void ep_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const ep_val_t *a,
                    int64_t lda, const ep_val_t *b, int64_t ldb, ep_val_t *c, int64_t ldc,
                    int overwrite)
{
    if (ep_blas_wide_ints)
        ep_gemm_int64(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, overwrite);
    else
        ep_gemm_int(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, overwrite);
}
#elif EP_BLAS == 2
#include <cblas.h>
static int ep_gemm_ready(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                         int64_t ldc)
{
    return ep_gemm_fits(m, n, k, lda, ldb, ldc);
}
/* One row or one column: gemv (c[0, :] = op(B)' . A[0, :], c[:, 0] = op(A) . B[:, 0]). */
static void ep_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const ep_val_t *a,
                    int64_t lda, const ep_val_t *b, int64_t ldb, ep_val_t *c, int64_t ldc,
                    int overwrite)
{
    const enum CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans;
    const int im = (int)m, in = (int)n, ik = (int)k, la = (int)lda, lb = (int)ldb,
              lc = (int)ldc, wide = sizeof(ep_val_t) == sizeof(double);
    const ep_val_t beta = overwrite ? 0 : 1;
    if (m == 1 || n == 1) {
        const int row = m == 1, rows = row ? (tb ? in : ik) : (ta ? ik : im),
                  cols = row ? (tb ? ik : in) : (ta ? im : ik),
                  inc = row ? (ta ? la : 1) : (tb ? 1 : lb), ld = row ? lb : la,
                  incy = row ? 1 : lc;
        const enum CBLAS_TRANSPOSE op = row ? (tb ? N : T) : (ta ? T : N);
        const ep_val_t *mat = row ? b : a, *vec = row ? a : b;
        if (wide)
            cblas_dgemv(CblasRowMajor, op, rows, cols, 1.0, (const double *)mat, ld,
                        (const double *)vec, inc, beta, (double *)c, incy);
        else
            cblas_sgemv(CblasRowMajor, op, rows, cols, 1.0f, (const float *)mat, ld,
                        (const float *)vec, inc, (float)beta, (float *)c, incy);
    } else if (wide) {
        cblas_dgemm(CblasRowMajor, ta ? T : N, tb ? T : N, im, in, ik, 1.0, (const double *)a,
                    la, (const double *)b, lb, beta, (double *)c, lc);
    } else {
        cblas_sgemm(CblasRowMajor, ta ? T : N, tb ? T : N, im, in, ik, 1.0f, (const float *)a,
                    la, (const float *)b, lb, (float)beta, (float *)c, lc);
    }
}
#else
static int ep_gemm_ready(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                         int64_t ldc)
{
    (void)m; (void)n; (void)k; (void)lda; (void)ldb; (void)ldc; (void)ep_gemm_fits;
    return 0;
}
#define ep_gemm(...) ((void)0)
#endif"""

BIND_SYMBOL = "etchpy_blas_bind"

EXPORT_CHOICES = {
    None: (0, "BLAS: none. Dense products run as fused loops (EP_BLAS 0)."),
    "cblas": (2, "BLAS: dense products call CBLAS (cblas_dgemm/cblas_sgemm, EP_BLAS 2); "
                 "compile with a CBLAS header and link a CBLAS library (-lcblas or "
                 "-lopenblas)."),
}


def for_export(c_text: str, header: str, blas: str | None) -> tuple[str, str]:
    """The C text and header of an exported kernel with BLAS chosen by `blas`
    (None: fused loops, needing no library; "cblas": link CBLAS), the choice
    stated at the top of both. Unchanged when the kernel has no dense product."""
    if blas not in EXPORT_CHOICES:
        raise ValueError(f"blas is None or 'cblas', not {blas!r}")
    if "ep_gemm_ready" not in c_text:
        return c_text, header
    level, note = EXPORT_CHOICES[blas]
    return f"/* {note} */\n#define EP_BLAS {level}\n{c_text}", f"/* {note} */\n{header}"


def gemm(fb, g, depth: int) -> str:
    """Gemm g as C lines at `depth`: when BLAS is ready for its extents, the batch
    loops around one gemm call; else its fallback loops."""
    if HELPER not in fb.helpers:
        fb.helpers.insert(0, HELPER)
    pad, e = "    " * depth, fb.expr
    extents = ", ".join(e(x) for x in (g.m, g.n, g.k, g.lda, g.ldb, g.ldc))
    counters = [fb.local(f"{g.c_array}_b{t}", g) for t in range(len(g.batch))]
    lines, offsets = [f"{pad}if (ep_gemm_ready({extents})) {{"], ["", "", ""]
    for t, (count, *steps) in zip(counters, g.batch):
        lines.append(f"{pad}{'    ' * len(lines)}for (int64_t {t} = 0; {t} < {e(count)}; "
                     f"{t}++)")
        offsets = [f"{o} + {t} * {e(s)}" for o, s in zip(offsets, steps)]
    inner = pad + "    " * len(lines)
    a, b, c = (f"{arr}{o}" for arr, o in zip((g.a_array, g.b_array, g.c_array), offsets))
    lines.append(f"{inner}ep_gemm({int(g.a_trans)}, {int(g.b_trans)}, {e(g.m)}, {e(g.n)}, "
                 f"{e(g.k)}, {a}, {e(g.lda)}, {b}, {e(g.ldb)}, {c}, {e(g.ldc)}, "
                 f"{int(g.overwrite)});")
    return "\n".join(lines) + f"\n{pad}}} else {{\n{fb.stmt(g.fallback, depth + 1)}\n{pad}}}"

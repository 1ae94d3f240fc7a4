"""An `imp.Gemm` as C: a call of BLAS's gemm, or its fallback loops.

Which BLAS is the C preprocessor's choice, by `EP_BLAS`:

    1 (the default)  through a pointer to a Fortran-convention gemm (dgemm or
                     sgemm, as the value type) that etchpy's runtime binds when it
                     loads the library (`etchpy_blas_bind`, runtime.blas); until it
                     is bound the loops run
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
#include <limits.h>
#ifndef EP_BLAS
#define EP_BLAS 1
#endif
static int ep_gemm_fits(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                        int64_t ldc)
{
    return m >= 1 && n >= 1 && k >= 1 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX
        && lda >= 1 && ldb >= 1 && ldc >= 1 && lda <= INT_MAX && ldb <= INT_MAX
        && ldc <= INT_MAX;
}
#if EP_BLAS == 1
typedef void (*ep_gemm_t)(const char *, const char *, const int *, const int *,
                          const int *, const ep_val_t *, const ep_val_t *, const int *,
                          const ep_val_t *, const int *, const ep_val_t *, ep_val_t *,
                          const int *);
static ep_gemm_t ep_gemm_fn = 0;
/* Called once by etchpy's runtime when it loads this library. */
void etchpy_blas_bind(void *dgemm, void *sgemm)
{
    ep_gemm_fn = (ep_gemm_t)(sizeof(ep_val_t) == sizeof(double) ? dgemm : sgemm);
}
static int ep_gemm_ready(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                         int64_t ldc)
{
    return ep_gemm_fn != 0 && ep_gemm_fits(m, n, k, lda, ldb, ldc);
}
static void ep_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const ep_val_t *a,
                    int64_t lda, const ep_val_t *b, int64_t ldb, ep_val_t *c, int64_t ldc,
                    int overwrite)
{
    const int cm = (int)n, cn = (int)m, ck = (int)k, la = (int)ldb, lb = (int)lda,
              lc = (int)ldc;
    const ep_val_t one = 1, beta = overwrite ? 0 : 1;
    ep_gemm_fn(tb ? "T" : "N", ta ? "T" : "N", &cm, &cn, &ck, &one, b, &la, a, &lb, &beta,
               c, &lc);
}
#elif EP_BLAS == 2
#include <cblas.h>
static int ep_gemm_ready(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                         int64_t ldc)
{
    return ep_gemm_fits(m, n, k, lda, ldb, ldc);
}
static void ep_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const ep_val_t *a,
                    int64_t lda, const ep_val_t *b, int64_t ldb, ep_val_t *c, int64_t ldc,
                    int overwrite)
{
    const enum CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans,
                               ob = tb ? CblasTrans : CblasNoTrans;
    if (sizeof(ep_val_t) == sizeof(double))
        cblas_dgemm(CblasRowMajor, oa, ob, (int)m, (int)n, (int)k, 1.0, (const double *)a,
                    (int)lda, (const double *)b, (int)ldb, overwrite ? 0.0 : 1.0,
                    (double *)c, (int)ldc);
    else
        cblas_sgemm(CblasRowMajor, oa, ob, (int)m, (int)n, (int)k, 1.0f, (const float *)a,
                    (int)lda, (const float *)b, (int)ldb, overwrite ? 0.0f : 1.0f,
                    (float *)c, (int)ldc);
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

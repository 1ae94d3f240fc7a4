"""C text of PageRank's whole power iteration (codegen_templates/rank.c.j2): the
step of etchpy.graph.pagerank's compiled kernel, x'[i] = c + Σ_j A[j, i]·w[j]
pulled through A in csc, with the step's vector work (w = s·x, the dangling
sum that makes c, the difference norm Σ|x' − x|) fused into its two passes
over the vertices and every step in one C call.

    c_text, cdef = rank_source("int32_t", values=False, name="f")

`values=False` reads no stored values (an unweighted graph: every weight 1).
"""
from __future__ import annotations

from ..errors import SemiringError
from .render import templates

CDEF = ("int64_t {name}(int64_t n, const {idx} *cpos, const {idx} *ccrd, const double *val, "
        "const double *inv, const {idx} *dangling, int64_t nd, double alpha, double tol, "
        "int64_t max_iter, double *x, double *y, double *w);")


def rank_source(idx_type: str, *, values: bool, name: str,
                version: str = "") -> tuple[str, str]:
    """(C source, cffi cdef) of the function `name` (signature: CDEF) with index
    arrays of C type idx_type ("int32_t" or "int64_t"). It runs at most
    max_iter steps from x, leaves the ranks in x and returns the number of
    steps (-1: not converged). y and w are n-long scratch arrays.
    Raises SemiringError for another idx_type."""
    if idx_type not in ("int32_t", "int64_t"):
        raise SemiringError(f"index arrays are int32_t or int64_t, not {idx_type}")
    c = templates().get_template("rank.c.j2").render(
        version=version, name=name, idx_type=idx_type, values=values)
    return c, CDEF.format(name=name, idx=idx_type)

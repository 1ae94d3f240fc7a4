"""C text of the graph algorithms that read a scipy csr matrix's own arrays
(codegen_templates/direct_graph.c.j2): BFS levels, weakly connected components
(union-find), the weight statistics of
Bellman-Ford's buckets and a coo or csc matrix's rows (coo_rows, csc_rows:
for a BFS or Bellman-Ford's buckets),
each checking every row and index it reads, so that
nothing is converted or validated in Python first.

    c_text, cdef = direct_source("int32_t", name="f")   # f_bfs, f_components,
                                                         # f_weights, f_check, f_coo_rows,
                                                         # f_csc_rows

Codes the functions return (besides -2, out of memory): CODES.
"""
from __future__ import annotations

from ..errors import SemiringError
from .render import templates

CDEF = """\
int64_t {name}_bfs(int64_t n, int64_t nnz, const {idx} *pos, const {idx} *crd,
                   const {idx} *cpos, const {idx} *ccrd, int64_t s, double alpha, double beta,
                   int64_t max_degree, int64_t checked, int64_t first, int64_t warm,
                   int64_t measured, int64_t *level, int32_t *narrow, {idx} *queue,
                   int64_t *where);
int64_t {name}_check(int64_t n, int64_t nnz, const {idx} *pos, const {idx} *crd,
                     int64_t *where);
int64_t {name}_coo_rows(int64_t n, int64_t nnz, const {idx} *row, const {idx} *col,
                        const double *val, {idx} *pos, {idx} *crd, double *rval,
                        int64_t *where);
int64_t {name}_csc_rows(int64_t n, int64_t nnz, const {idx} *cpos, const {idx} *ccrd,
                        const double *val, {idx} *pos, {idx} *crd, double *rval,
                        int64_t *where);
int64_t {name}_components(int64_t n, int64_t nnz, const {idx} *pos, const {idx} *crd,
                          int64_t *label, int64_t *where);
int64_t {name}_weights(int64_t n, int64_t nnz, const {idx} *pos, const {idx} *crd,
                       const double *val, double *stats, int64_t *where);"""

# the C's return codes: a malformed array (the caller names it and *where)
CODES = {"indptr": -3, "indices": -4, "data": -5}


def direct_source(idx_type: str, *, name: str, version: str = "") -> tuple[str, str]:
    """(C source, cffi cdef) of `name`_bfs, `name`_components and the rest of CDEF
    over index arrays of C type idx_type ("int32_t" or "int64_t").
    Raises SemiringError for another idx_type."""
    if idx_type not in ("int32_t", "int64_t"):
        raise SemiringError(f"index arrays are int32_t or int64_t, not {idx_type}")
    c = templates().get_template("direct_graph.c.j2").render(
        version=version, name=name, idx_type=idx_type)
    return c, CDEF.format(name=name, idx=idx_type)

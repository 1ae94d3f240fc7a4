"""The C text of a plain SpMV kernel (csr A, dense x, int32 indices), which holds
the template's helpers, loaded with a test's own wrapper around them: how
tests/c calls a helper of kernel.c.j2 directly."""
import etchpy as ep
from etchpy import pipeline
from etchpy.runtime import build


def spmv_source() -> str:
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    return pipeline.render_c(ep.compile(ep.sum(j, A[i, j] * x[j])).compiled, "int32_t").c


def with_wrapper(wrapper: str, cdef: str, name: str, src: str | None = None):
    """The library of `src` (spmv_source's by default) and `wrapper`, declared by `cdef`."""
    return build.load((src or spmv_source()) + wrapper, cdef, name=name)

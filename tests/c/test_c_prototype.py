"""One Prototype gives the kernel's definition, its header and its cffi cdef."""
import cffi
import pytest

import etchpy as ep
from etchpy.c import render as c

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)

KERNELS = {
    "spmv": dict(expr=ep.sum(j, A[i, j] * x[j])),
    "spgemm": dict(expr=ep.sum(j, A[i, j] * B[j, k]), output="csr"),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("idx", ["int32_t", "int64_t"])
def test_definition_header_and_cdef_agree(name, idx):
    case = dict(KERNELS[name])
    kern = ep.Kernel(case.pop("expr"), name=name, **case)
    src = kern.source(idx, include_header=True)
    proto = src.prototype
    assert proto == c.prototype(kern.program, name)
    assert proto.render("ep_idx_t", "ep_val_t") + "\n{" in src.c and f'#include "{name}.h"' in src.c
    assert proto.render(f"{name}_idx_t", f"{name}_val_t", f"{name}_restrict") + ";" in src.header
    assert f"typedef {idx} {name}_idx_t;" in src.header
    assert proto.render() + ";" in src.cdef
    for p in proto.params:                         # the header documents every parameter
        assert f" {p.name}: {p.doc}" in src.header
    ffi = cffi.FFI()
    ffi.cdef(src.cdef)                              # cffi parses the cdef
    assert len(proto.params) == len(kern.program.params)


def test_parameter_kinds_map_to_c_types():
    kern = ep.Kernel(ep.sum(j, A[i, j] * B[j, k]), output="csr")
    kinds = {p.name: p.kind for p in kern.program.params}
    for p in kern.source().prototype.params:
        base = p.name.removesuffix("_ret")
        kind = kinds[base if base in kinds else p.name]
        assert (p.name.endswith("_ret")) == (kind in ("out_grown", "out_count"))
        if kind == "in_array":
            assert p.ctype.startswith("const ") and p.ctype.endswith("*restrict")
        if kind == "dim":
            assert p.ctype == "int64_t"

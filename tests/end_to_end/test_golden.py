"""Golden C: codegen changes show up as diffs of these files.

Regenerate after an intended change with
    ETCHPY_REGEN_GOLDEN=1 python -m pytest tests/end_to_end/test_golden.py
and review the diff before committing.
"""
import os
import pathlib

import pytest

import etchpy as ep
from etchpy.runtime.kernel import Kernel

GOLDEN = pathlib.Path(__file__).parent / "golden"
i, j, k, r = ep.indices("i j k r")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)
T = ep.tensor("T", 3, format="csf")
C, D = ep.tensor("C", 2), ep.tensor("D", 2)
W = ep.tensor("W", 2, format="csc")
u, v = ep.indices("u v")

CASES = {
    "spmv": dict(expr=ep.sum(j, A[i, j] * x[j])),
    "spgemm_inner": dict(expr=ep.sum(j, A[i, j] * B[k, j]), output="csr"),
    "spgemm_rows": dict(expr=ep.sum(j, A[i, j] * B[j, k]), output="csr"),
    "add_csr": dict(expr=A[i, j] + B[i, j], output="csr"),
    "mttkrp": dict(expr=ep.sum((j, k), T[i, j, k] * C[j, r] * D[k, r])),
    "min_plus_relax": dict(expr=ep.sum(u, x[u] * W[u, v]) + x[v], semiring="min_plus"),
    # on threads: rows counted then filled (scratch arrays per thread), and a full
    # reduction with one partial per block of rows
    "spgemm_rows_threads": dict(expr=ep.sum(j, A[i, j] * B[j, k]), output="csr", threads=2),
    "reduction_threads": dict(expr=ep.sum((i, j), A[i, j] * x[j]), threads=2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_c(name):
    case = dict(CASES[name])
    src = Kernel(case.pop("expr"), name=name, **case).c_source
    path = GOLDEN / f"{name}.c"
    if os.environ.get("ETCHPY_REGEN_GOLDEN"):
        path.write_text(src)
    assert path.exists(), f"missing golden file {path}; regenerate with ETCHPY_REGEN_GOLDEN=1"
    assert src == path.read_text(), f"generated C for {name} changed; review and regenerate"

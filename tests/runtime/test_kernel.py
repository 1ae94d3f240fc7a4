"""A Kernel's face: its C source, signature and explanation, deterministic and
cached in process."""
import pytest

import etchpy as ep

i, j = ep.indices("i j")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_kernel_exposes_source_signature_explain():
    kern = ep.compile(SPMV)
    assert "int etchpy_kernel(" in kern.c_source and "Σ_j A[i,j]·x[j]" in kern.c_source
    assert kern.signature.startswith("int etchpy_kernel(")
    text = kern.explain()
    assert "loop order" in text and "csr" in text
    assert ep.compile(SPMV) is kern                   # in-process cache


def test_c_source_is_deterministic():
    a = ep.Kernel(SPMV).c_source
    b = ep.Kernel(ep.sum(j, A_csr[i, j] * x_vec[j])).c_source
    assert a == b

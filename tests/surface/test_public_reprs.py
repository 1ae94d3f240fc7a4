"""Reprs say what a thing is (issue 21, Docs): semirings, Semiring, Format, Tensor,
Kernel (name, expression, semiring, output, builds), Tuning (changed fields only),
Index, TensorVar."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.tuning import Saturation, Tuning

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)


def test_semirings_and_semiring():
    assert repr(ep.semirings).startswith("ep.semirings: real, real32")
    assert "min_plus" in repr(ep.semirings)
    assert repr(ep.semirings.min_plus) == "Semiring(min_plus, float64)"


def test_format_shows_levels_mode_order_and_name():
    assert repr(ep.Format.named("csr", 2)) == "Format(['dense', 'compressed'], name='csr')"
    assert repr(ep.Format.named("csc", 2)) == \
        "Format(['dense', 'compressed'], mode_order=(1, 0), name='csc')"
    f = ep.Format(["compressed", "compressed"], (1, 0))
    assert repr(f) == "Format(['compressed', 'compressed'], mode_order=(1, 0))"
    assert eval(repr(f), {"Format": ep.Format}) == f
    assert str(ep.Format.named("csr", 2)) == "csr"


def test_index_tensorvar_and_expression():
    assert repr(i) == "Index('i')" and str(i) == "i"
    assert repr(A) == "tensor('A', 2, format='csr')"
    assert repr(A[i, j] * x[j]) == "A[i,j]·x[j]"


def test_tensor_repr():
    t = ep.Tensor.from_coords(np.array([[0, 1], [1, 2]]), np.array([1.0, 2.0]), (2, 3),
                              "coo", semiring=ep.semirings.min_plus)
    r = repr(t)
    assert r.startswith("Tensor('tensor', shape=(2, 3), format=coo, nnz=2, dtype=float64")
    assert "fill=" in r and "inf" in r


def test_tuning_shows_only_changed_fields():
    assert repr(Tuning()) == "Tuning()"
    assert repr(Tuning(prefetch=False, saturation=Saturation(nodes=5))) == \
        "Tuning(prefetch=False, saturation=Saturation(nodes=5))"
    assert eval(repr(Tuning(gallop_ratio=3)), {"Tuning": Tuning}) == Tuning(gallop_ratio=3)
    # the cache key still spells out every field
    assert "markers=True" in Tuning().key() and "min_gain=0.001" in Tuning().key()


def test_kernel_repr_names_what_was_built(shared_cache):
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), name="repr_kernel")
    r = repr(kern)
    assert r.startswith("Kernel('repr_kernel': Σ_j A[i,j]·x[j], semiring from the inputs'")
    assert "output dense over (i)" in r and "built: none yet" in r
    M = sp.random(4, 5, density=0.5, format="csr", random_state=0)
    kern(A=M, x=np.ones(5))
    kern(A=M.astype(np.float32), x=np.ones(5, np.float32))
    idx = "int32_t" if M.indices.dtype == np.int32 else "int64_t"
    assert f"built: real/{idx}, real32/{idx}" in repr(kern)
    fixed = ep.compile(ep.sum(j, A[i, j] * x[j]), semiring="min_plus", name="repr_kernel")
    assert "semiring min_plus," in repr(fixed)

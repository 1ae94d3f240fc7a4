"""plan.unfuse (Tuning.blas_cut): a chain of fused temporaries ends where its
readers run cheaper as BLAS, the nestings are priced as they will run, and a
sparse walk that writes a row at each record is priced a scatter
(plan.scatter): a Tucker contraction of a csf tensor, written with any index
summed first or flat, plans the same steps, and every form agrees with numpy,
in C and on the Imp interpreter, with the switch on and off."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.plan import unfuse
from etchpy.plan.cost import Stats
from etchpy.plan.plan import make_plan
from etchpy.testing import imp_evaluate

pytestmark = pytest.mark.usefixtures("shared_cache")

S = ep.sum
i, j, k, a, b, c = ep.indices("i j k a b c")
X = ep.tensor("X", 3, "csf")
U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
OFF = ep.Tuning(blas_cut=False)
FACTOR = {"i": (i, a, U), "j": (j, b, V), "k": (k, c, W)}


def _nested(first):
    """Σ over `first` innermost, then the other two in storage order."""
    rest = [v for v in "ijk" if v != first][::-1]
    x, r, F = FACTOR[first]
    e = S(x, X[i, j, k] * F[x, r])
    for v in rest:
        x, r, F = FACTOR[v]
        e = S(x, F[x, r] * e)
    return e


FLAT = S((i, j, k), X[i, j, k] * U[i, a] * V[j, b] * W[k, c])


def _inputs(shape, ranks, nnz, seed):
    rng = np.random.default_rng(seed)
    coords = np.unique(np.stack([rng.integers(0, n, nnz) for n in shape]), axis=1)
    t = ep.Tensor.from_coords(coords, rng.random(coords.shape[1]), shape, "csf")
    fs = {name: rng.random((n, r)) for name, n, r in zip("UVW", shape, ranks)}
    want = np.einsum("ijk,ia,jb,kc->cba", t.to_dense(), fs["U"], fs["V"], fs["W"])
    return {"X": t, **fs}, want


def test_a_tucker_chain_ends_where_its_readers_are_gemms():
    """At 30³, rank 16, 3000 entries, the chain's first temporary is made whole
    and its readers run as BLAS; off, the three steps stay one fused nest."""
    ins, want = _inputs((30, 30, 30), (16, 16, 16), 3000, 0)
    for e in (_nested("k"), FLAT):
        kern = ep.compile(e, out_indices=(c, b, a))
        np.testing.assert_allclose(kern(**ins), want, rtol=1e-12)
        assert kern.plan.cut and "a BLAS gemm" in kern.explain()
        off = ep.compile(e, out_indices=(c, b, a), tuning=OFF)
        np.testing.assert_allclose(off(**ins), want, rtol=1e-12)
        assert not off.plan.cut


def test_every_written_nesting_plans_the_flat_steps():
    """The nestings are priced as they run (cut and scatters): whichever index
    the user sums first, the plan contracts the innermost stored index first,
    summing into a row it keeps, as the flat form's does."""
    ins, want = _inputs((30, 30, 30), (16, 16, 16), 3000, 1)
    flat = ep.compile(FLAT, out_indices=(c, b, a))
    flat(**ins)
    for first in "ijk":
        kern = ep.compile(_nested(first), out_indices=(c, b, a))
        np.testing.assert_allclose(kern(**ins), want, rtol=1e-12)
        assert kern.plan.steps[0].bound == ("k",)
        assert [s.bound for s in kern.plan.steps] == [s.bound for s in flat.plan.steps]


@pytest.mark.parametrize("shape, ranks, nnz", [
    ((7, 5, 6), (3, 2, 4), 60), ((1, 6, 5), (2, 3, 1), 12), ((5, 6, 1), (4, 2, 3), 9),
    ((9, 8, 7), (5, 5, 5), 1)])
@pytest.mark.parametrize("first", ["i", "j", "k", None])
def test_cut_plans_run_on_the_imp_interpreter(shape, ranks, nnz, first):
    """Sizes stated so that the chain is cut (and not, off): the Imp
    interpreter gives numpy's values, size-1 extents and one entry included."""
    ins, want = _inputs(shape, ranks, nnz, sum(shape) + nnz)
    e = FLAT if first is None else _nested(first)
    sizes = {"i": 30, "j": 30, "k": 30, "a": 16, "b": 16, "c": 16}
    options = {"dims": sizes, "nnz": {"X": 3000}}
    for tuning in (None, OFF):
        got = imp_evaluate(e, ins, out_indices=(c, b, a), tuning=tuning,
                           optimizer_options=options)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, ranks, nnz", [
    ((30, 25, 20), (16, 8, 12), 2500), ((24, 24, 24), (1, 16, 16), 3000)])
@pytest.mark.parametrize("first", ["i", "j", "k", None])
def test_cut_plans_agree_in_c(shape, ranks, nnz, first):
    """Kernels planned from the inputs cut their chain (not off) and give
    numpy's values."""
    ins, want = _inputs(shape, ranks, nnz, sum(shape) + nnz)
    e = FLAT if first is None else _nested(first)
    for tuning in (None, OFF):
        kern = ep.compile(e, out_indices=(c, b, a), tuning=tuning)
        np.testing.assert_allclose(kern(**ins), want, rtol=1e-12)
        assert bool(kern.plan.cut) == (tuning is None)


def test_a_semiring_without_blas_keeps_its_chains():
    """Min-plus has no BLAS: nothing is cut, and the fused nest gives the dense
    reference's values."""
    ins, _ = _inputs((6, 5, 4), (3, 2, 2), 40, 5)
    plan = make_plan(_nested("k"), (c, b, a), keep_factored=True)
    sizes = Stats({"i": 30, "j": 30, "k": 30, "a": 16, "b": 16, "c": 16}, {"X": 3000})
    assert unfuse.cut(plan, ep.semirings.min_plus, sizes) is plan
    assert unfuse.cut(plan, ep.semirings.real, sizes).cut
    kern = ep.compile(_nested("k"), out_indices=(c, b, a), semiring="min_plus")
    want = ep.evaluate(_nested("k"), semiring="min_plus", out_indices=(c, b, a),
                       backend="reference", **ins)
    np.testing.assert_allclose(kern(**ins), want)
    assert not kern.plan.cut

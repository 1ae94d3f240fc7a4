"""A kernel whose calls may run one walk lowers its written form on first need
(runtime.deferred, Tuning.defer_written): a call on columns of one structure runs
the fused kernel and leaves the written form unlowered, in this process and in a
kernel made again from the disk cache; anything that needs the written form (a
call on columns apart, explain(), c_source, the program) lowers it then, and the
answers are those of the kernel lowered when made."""
import numpy as np

import etchpy as ep
from etchpy.runtime.deferred import LOWERED

o, n = ep.indices("o n")
ROWS = [(0, 0, 1.0, 2.0, 0.0), (0, 1, 3.0, 1.0, 2.0), (2, 1, 2.0, 5.0, 4.0),
        (3, 3, 2.0, 2.0, 1.0)]


def relation():
    cols = {k: np.array([r[m] for r in ROWS]) for m, k in enumerate("onabc")}
    keys = ep.Keys(np.arange(5), name="k")
    return ep.relation(cols, ["o", "n"], values=["a", "b", "c"],
                       levels=["dense", "compressed"], coding={"o": keys, "n": keys}, name="L")


def expression(rel):
    A, B, C = (rel[c].var(c.upper()) for c in "abc")
    return ep.sum(n, A[o, n] * B[o, n] * (C[o, n] < "t"))


def apart(rel) -> dict:
    """Each column as a Tensor of its own arrays (equal, not the same objects)."""
    out = {}
    for c in "abc":
        t = rel[c].tensor
        coords, vals = t.to_coords()
        out[c.upper()] = ep.Tensor.from_coords(coords, vals.copy(), t.shape, t.format)
    return out


WANT = np.array([1.0 * 2.0, 0.0, 0.0, 2.0 * 2.0, 0.0])     # Σ_n a·b where c < 2


def test_a_walked_call_leaves_the_written_form_unlowered_till_needed():
    rel = relation()
    kern = ep.Kernel(expression(rel), name="deferred_a")
    assert not kern.lowered and not LOWERED & set(vars(kern))
    one = {c.upper(): rel[c].tensor for c in "abc"}
    assert np.allclose(kern(t=2, **one), WANT)
    assert kern._walked is not None and not kern.lowered       # ran the fused kernel only
    text = kern.explain()                                       # needs the written form
    assert kern.lowered and LOWERED <= set(vars(kern)) and "one walk" in text and "cmp_C_lt_p_t" in kern.c_source
    assert np.allclose(kern(t=2, **one), WANT)


def test_a_call_on_columns_apart_lowers_the_written_form():
    rel = relation()
    kern = ep.Kernel(expression(rel), name="deferred_b")
    assert np.allclose(kern(t=2, **apart(rel)), WANT)
    assert kern.lowered and kern._walked is None
    assert np.allclose(kern(t=2, **{c.upper(): rel[c].tensor for c in "abc"}), WANT)


def test_a_kernel_made_again_restores_the_kernel_it_ran_and_lowers_nothing():
    rel = relation()
    one = {c.upper(): rel[c].tensor for c in "abc"}
    first = ep.Kernel(expression(rel), name="deferred_c")
    first(t=2, **one)
    again = ep.Kernel(expression(rel), name="deferred_c")      # as a later process would
    assert np.allclose(again(t=2, **one), WANT)
    assert not again.lowered
    fused = next(k for k in again._walk_kernels.values() if k is not None)[0]
    assert fused.from_manifest


def test_off_lowers_when_made_and_a_kernel_with_no_walk_does_too():
    rel = relation()
    eager = ep.Kernel(expression(rel), name="deferred_d", tuning={"defer_written": False})
    assert eager.lowered and "compiled" in vars(eager)
    assert np.allclose(eager(t=2, **{c.upper(): rel[c].tensor for c in "abc"}), WANT)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    assert ep.Kernel(ep.sum(n, A[o, n] * x[n]), name="deferred_e").lowered


def test_build_on_columns_of_one_structure_builds_the_fused_kernel_only():
    rel = relation()
    one = {c.upper(): rel[c].tensor for c in "abc"}
    kern = ep.Kernel(expression(rel), name="deferred_f").build(t=2, **one)
    fused = next(k for k in kern._walk_kernels.values() if k is not None)[0]
    assert not kern.lowered and not kern._libs
    assert any(k._libs for k in (fused, *[r for _, r in fused._planned.values()]))
    assert np.allclose(kern(t=2, **one), WANT)

"""Counted sums in lanes (lower/schedule/counted_sums.py, Tuning counted_lanes): a
dense level's Σ of a float or complex carrier adds its terms counted_sum_lanes at a time
into as many accumulators, then a quarter as many, the rest one by one. It
answers as the plain loop (off, noopt) and numpy on every length around the
stages' widths, for real, real32, min_plus, max_plus and complex sums, dense
vectors, row sums, totals and min-plus matvecs, index names the C uses; it
leaves integer carriers and walks of stored entries alone."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import host_facts, imp, pipeline
from tuned import on_interpreter

OFF = ep.Tuning(counted_lanes=False)
LENGTHS = [0, 1, 3, 4, 5, 15, 16, 17, 20, 33, 100]


def _lanes(kern) -> int:
    """How many lane accumulators kern's program declares."""
    c = kern.compiled.full() if hasattr(kern.compiled, "full") else kern.compiled
    return sum(1 for n in imp.statements(c.program.body)
               if isinstance(n, imp.Decl) and "_lane" in n.name)


def test_a_dense_sum_takes_the_lanes_only_where_switched_on():
    zen = ep.Tuning(sum_lanes=host_facts.sum_lanes(("AuthenticAMD", 25)))   # (4: short runs')
    for text in ("s = x[pos]", "y[row] = M[row, n]", "s = M[i, j]"):
        assert _lanes(ep.compile(text)) == 20, text          # 16, then 4, on every host
        assert _lanes(ep.compile(text, tuning=zen)) == 20, text
        assert _lanes(ep.compile(text, tuning=ep.Tuning(counted_sum_lanes=8))) == 10
        assert _lanes(ep.compile(text, tuning=ep.Tuning(counted_sum_lanes=1))) == 0
        assert _lanes(ep.compile(text, tuning=OFF)) == 0
        assert _lanes(ep.compile(text, tuning="noopt")) == 0
    assert _lanes(ep.compile("y[i] = M[i, j] * x[j]", semiring="min_plus")) == 20
    assert _lanes(ep.compile("s = x[i]", semiring="integer")) == 0      # the compiler's own
    assert _lanes(ep.compile("s = A[i, j]", formats={"A": "csr"})) == 0  # gathered sums' own


def _reference(text, sr, M, x):
    add = {"min_plus": np.min, "max_plus": np.max}.get(sr, np.sum)
    if text == "s = x[pos]":
        return add(x, initial={"min_plus": np.inf, "max_plus": -np.inf}.get(sr, 0))
    if text == "y[row] = M[row, n]":
        return add(M, axis=1, initial={"min_plus": np.inf, "max_plus": -np.inf}.get(sr, 0))
    return (M + x).min(axis=1, initial=np.inf)      # the min-plus matvec


CASES = [(sr, text) for sr in ("real", "real32", "min_plus", "max_plus", "complex")
         for text in ("s = x[pos]", "y[row] = M[row, n]")] + [
    ("min_plus", "y[out] = M[out, j] * x[j]")]       # (a real matvec is BLAS's)


@pytest.mark.parametrize("sr,text", CASES)
def test_lanes_answer_as_the_loop_and_numpy(sr, text):
    dtype = {"real32": np.float32, "complex": np.complex128}.get(sr, np.float64)
    kerns = [ep.compile(text, semiring=sr, tuning=t) for t in (None, OFF, "noopt")]
    rng = np.random.default_rng(len(text))
    for n in LENGTHS:
        M = (rng.standard_normal((3, n)) + (1j * rng.standard_normal((3, n))
                                            if sr == "complex" else 0)).astype(dtype)
        x = M[0].copy()
        want = _reference(text, sr, M, x)
        tol = 1e-5 if sr == "real32" else 1e-12
        for kern in kerns:
            got = kern(x=x) if text == "s = x[pos]" else kern(M=M, **(
                {"x": x} if "x[" in text else {}))
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, n),
                                       err_msg=f"n={n}")
        if sr in ("min_plus", "max_plus"):                   # min and max: exactly
            np.testing.assert_array_equal(kerns[0](x=x) if text == "s = x[pos]" else
                                          kerns[0](M=M, **({"x": x} if "x[" in text else {})),
                                          want)


def test_the_interpreter_runs_the_lanes():
    i, = ep.indices("i")
    x = ep.tensor("x", 1)
    v = np.arange(37, dtype=float)
    final, prog, _ = on_interpreter(ep.sum(i, x[i]), ep.semirings.real, None, {"x": v})
    assert any(isinstance(n, imp.Decl) and "_lane" in n.name for n in imp.statements(prog.body))
    assert final["out"] == v.sum()


def test_the_c_adds_lanes_in_a_balanced_tree():
    c = ep.compile("s = x[i]").compiled
    src = pipeline.render_c(c.full() if hasattr(c, "full") else c).c
    assert "acc_lane_15 = (acc_lane_15 + x_vals[(i_c + 15)]);" in src
    assert "((acc_lane + acc_lane_1) + (acc_lane_2 + acc_lane_3))" in src

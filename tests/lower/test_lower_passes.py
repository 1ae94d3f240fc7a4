"""Each schedule pass and strategy choice, on and off: its Tuning switch turns
it off, and the program gives the same result either way (on the Imp
interpreter, which also checks every index a prefetch forms)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.expr.walk import tensors
from etchpy.tuning import DEFAULT, FORCE, NOOPT
from tuned import run_lowered

i, j, k, r = ep.indices("i j k r")
A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
T, C, D = ep.tensor("T", 3, "csf"), ep.tensor("C", 2), ep.tensor("D", 2)
x = ep.tensor("x", 1)
U = ep.tensor("U", 2, "csr")
G, H = ep.tensor("G", 2, "blocks"), ep.tensor("H", 2, "banded")
V = ep.tensor("V", 2, "uniform_band")
a, b, c = ep.indices("a b c")
rng = np.random.default_rng(3)


def _csr(m, n, density, seed):
    return sp.random_array((m, n), density=density, format="csr",
                           rng=np.random.default_rng(seed))


INPUTS = {"A": _csr(12, 10, 0.4, 1), "B": _csr(12, 10, 0.4, 2), "x": rng.random(10),
          "C": rng.random((6, 16)), "D": rng.random((5, 16)), "U": _csr(10, 10, 0.4, 4),
          "T": ep.Tensor.from_coords(rng.integers(0, 5, (3, 30)), rng.random(30),
                                     (5, 6, 5), "csf"),
          "G": ep.Tensor.from_dense(np.kron(np.eye(4)[::-1], np.ones((3, 3))) + np.eye(12),
                                    "blocks"),
          "H": ep.Tensor.from_dense(np.triu(np.tril(rng.random((12, 10)), 4), -3), "banded"),
          "V": ep.Tensor.from_dense(np.triu(np.tril(rng.random((12, 10)), 1), -1), "uniform_band")}
B_rows = _csr(10, 9, 0.4, 5)


def has(kind, names=""):
    """A detector: the program has a statement of this Imp class (whose name
    holds `names`)."""
    def found(prog):
        return any(isinstance(u, kind) and names in str(u) for u in imp.statements(prog.body))
    return found


def loops(prog) -> int:
    return sum(isinstance(u, imp.While) for u in imp.statements(prog.body))


def mode(m):
    return lambda prog: prog.output.mode == m


# switch, expression, output, threads, inputs, a detector of the pass
CASES = [
    ("threads", ep.sum(j, A[i, j] * x[j]), None, 2, {}, has(imp.ParallelFor)),
    ("threads", A[i, j] + B[i, j], "csr", 2, {}, has(imp.ParallelFor)),
    ("register_blocks", ep.sum((j, k), T[i, j, k] * C[j, r] * D[k, r]), None, 1, {},
     has(imp.LocalArray)),
    ("prefetch", ep.sum(j, A[i, j] * x[j]), None, 1, {}, has(imp.Prefetch)),
    ("prefetch", ep.sum(j, A[i, j] * B[j, k]), "csr", 1, {"B": B_rows}, has(imp.Prefetch)),
    ("phases", A[i, j] + B[i, j], "csr", 1, {}, lambda p: loops(p) > 3),
    ("unswitch", A[i, j] * B[i, j], "csr", 1, {}, has(imp.ShortIntersect)),
    ("short_intersect", A[i, j] * B[i, j], "csr", 1, {}, has(imp.ShortIntersect)),
    ("merge_or_gallop", A[i, j] * B[i, j], "csr", 1, {}, lambda p: "j_gallop" in imp.show(p.body)),
    ("step_fronts", A[i, j] + B[i, j], "csr", 1, {}, lambda p: "j_fa" in imp.show(p.body)),
    ("match_step", A[i, j] * B[i, j], "csr", 1, {},
     lambda p: "j_q_2 = (j_q_2 + 1)" in imp.show(p.body)),
    ("hide_segment_counters", ep.sum(j, A[i, j] * x[j]), None, 1, {}, has(imp.Opaque)),
    ("markers", ep.sum((a, b, c), U[a, b] * U[b, c] * U[a, c]), None, 1, {},
     lambda p: "_mark" in imp.show(p.body)),
    ("workspaces", ep.sum(j, A[i, j] * B[j, k]), "csr", 1, {"B": B_rows}, mode("workspace")),
    ("counting_sort", A[i, j], "csc", 1, {}, mode("bucket")),
    ("pieces", ep.sum(j, G[i, j] * x[j]), None, 1, {"x": rng.random(12)},
     lambda p: "_lane" in imp.show(p.body)),
    ("pieces", ep.sum(j, H[i, j] * x[j]), None, 1, {}, lambda p: "_lane" in imp.show(p.body)),
    ("row_streams", ep.sum(j, H[i, j] * x[j]), None, 1, {}, has(imp.Comment, "interleaved")),
    ("row_blocks", ep.sum(j, H[i, j] * x[j]), None, 1, {}, has(imp.Comment, "rows in blocks")),
    ("band_rows", ep.sum(j, V[i, j] * x[j]), None, 1, {}, has(imp.Comment, "straight-line")),
]


@pytest.mark.parametrize("base", [DEFAULT, FORCE], ids=["default", "force"])
@pytest.mark.parametrize("switch, expr, out, threads, extra, fired", CASES,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(CASES)])
def test_each_pass_on_and_off_gives_the_same_result(base, switch, expr, out, threads, extra,
                                                    fired):
    sr = ep.semirings.get("real")
    names = set(tensors(expr))
    inputs = {n: v for n, v in {**INPUTS, **extra}.items() if n in names}
    fmt = None if out is None else ep.Format.named(out, 2)
    want = ep.evaluate(expr, semiring=sr, backend="reference", **inputs)
    if switch == "row_streams":         # the default count is the host's (1 on AMD Zen: none)
        base = base.with_(row_stream_count=4)
    on, prog_on = run_lowered(expr, sr, fmt, inputs, threads, base)
    off, prog_off = run_lowered(expr, sr, fmt, inputs, threads, base.with_(**{switch: False}))
    assert fired(prog_on) and not fired(prog_off)
    np.testing.assert_allclose(on, want, rtol=1e-12)
    np.testing.assert_allclose(off, want, rtol=1e-12)


def test_noopt_is_plain_loops():
    """With every switch off: no threads, prefetches, register blocks, opaque
    counters, short intersections or markers, and no workspace or counting sort."""
    sr = ep.semirings.get("real")
    for expr, out, extra in [(ep.sum(j, A[i, j] * B[j, k]), "csr", {"B": B_rows}),
                             (A[i, j], "csc", {}), (A[i, j] * B[i, j], "csr", {}),
                             (ep.sum((j, k), T[i, j, k] * C[j, r] * D[k, r]), None, {}),
                             (ep.sum((a, b, c), U[a, b] * U[b, c] * U[a, c]), None, {})]:
        names = set(tensors(expr))
        inputs = {n: v for n, v in {**INPUTS, **extra}.items() if n in names}
        fmt = None if out is None else ep.Format.named(out, 2)
        got, prog = run_lowered(expr, sr, fmt, inputs, 2, NOOPT)
        for kind in (imp.ParallelFor, imp.Prefetch, imp.LocalArray, imp.Opaque,
                     imp.ShortIntersect):
            assert not has(kind)(prog), (expr, kind)
        assert "_mark" not in imp.show(prog.body)
        assert prog.output.mode in ("dense", "append", "coords")
        want = ep.evaluate(expr, semiring=sr, backend="reference", **inputs)
        np.testing.assert_allclose(got, want, rtol=1e-12)

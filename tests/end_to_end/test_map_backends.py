"""Maps on every backend: the reference, the stream interpreter, the lowered
program on the Imp interpreter and the compiled C agree with numpy on dense
copies, for every registered map, over dense, csr, csc and coo inputs; maps
with f(0) ≠ 0 over sparse inputs are dense; maps over sums read a temporary;
maps compose, and sit inside products and sums (proofs_notes/map.md)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import maps
from etchpy.expr.walk import accesses, tensors
from etchpy.testing import assert_same, check_backends, imp_evaluate, problems

pytestmark = pytest.mark.usefixtures("shared_cache")

BACKENDS = ("streams", "imp", "c")
pos, row, n = ep.indices("pos row n")
ARGS = {"maximum": 0.5, "minimum": -0.25}


def matrix(fmt, seed=0, shape=(4, 5), positive=False):
    """A 4x5 matrix with some zeros, as numpy (dense) or scipy (csr, csc, coo)."""
    rng = np.random.default_rng(seed)
    m = np.round(rng.uniform(0.5 if positive else -2, 2, shape), 2)
    m[rng.uniform(size=shape) < 0.5] = 0.0
    return m if fmt == "dense" else sp.coo_array(m).asformat(fmt)


def dense(x):
    return x.toarray() if hasattr(x, "toarray") else np.asarray(x)


def all_backends(e, want, **inputs):
    """Every backend's value of e equals `want` (numpy on dense copies)."""
    sr = ep.semirings.real
    assert_same(ep.evaluate(e, backend="reference", **inputs), want, sr, f"reference {e}")
    for b in BACKENDS:
        got = (imp_evaluate(e, inputs) if b == "imp"
               else ep.evaluate(e, backend=b, **inputs))
        assert_same(got, want, sr, f"backend {b} on {e}")


@pytest.mark.parametrize("fn", sorted(maps.MAPS))
@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo"])
def test_every_map_over_every_format_equals_numpy(fn, fmt):
    A = ep.tensor("A", 2, format=fmt)
    M = matrix(fmt, seed=len(fn), positive=fn in ("log", "sqrt"))
    arg = ARGS.get(fn)
    want = maps.apply(fn, dense(M), arg)
    all_backends(ep.map(fn, A[pos, row], arg), want, A=M)


@pytest.mark.parametrize("fn", ["log", "sqrt", "recip"])
def test_bad_values_give_numpys_nan_and_inf(fn):
    """log and sqrt of a negative entry are nan, log(0) is -inf, 1/0 is inf: as numpy."""
    A = ep.tensor("A", 2, format="csr")
    M = matrix("csr", seed=3)
    with np.errstate(all="ignore"):
        want = {"log": np.log, "sqrt": np.sqrt, "recip": np.reciprocal}[fn](M.toarray())
    assert np.isnan(want).any() or np.isinf(want).any()
    all_backends(ep.map(fn, A[pos, row]), want, A=M)


def test_a_map_with_f0_nonzero_over_a_sparse_input_is_dense():
    A = ep.tensor("A", 2, format="csr")
    M = matrix("csr", seed=1)
    got = ep.evaluate(ep.map("exp", A[pos, row]), A=M)
    assert isinstance(got, np.ndarray) and got.shape == (4, 5)
    np.testing.assert_allclose(got, np.exp(M.toarray()))
    # summed over its whole dense domain: absent entries add exp(0) = 1
    all_backends(ep.sum(row, ep.map("exp", A[pos, row])), np.exp(M.toarray()).sum(1), A=M)


def test_a_map_over_a_sum_reads_a_temporary():
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    M, v = matrix("csr", seed=2), np.linspace(-1, 1, 5)
    e = ep.map("exp", ep.sum(row, A[pos, row] * x[row]))
    all_backends(e, np.exp(M.toarray() @ v), A=M, x=v)
    plan = ep.compile(e).plan
    assert len(plan.steps) == 2 and plan.steps[0].target in plan.temps
    relu = ep.map("maximum", ep.sum(row, A[pos, row] * x[row]), 0.0)
    all_backends(relu, np.maximum(M.toarray() @ v, 0.0), A=M, x=v)


def test_maps_inside_products_and_sums_and_nested():
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csc")
    x = ep.tensor("x", 1)
    M, N, v = matrix("csr", 4), matrix("csc", 5), np.linspace(0.5, 2, 5)
    Md, Nd = M.toarray(), N.toarray()
    cases = [
        (ep.map("exp", A[pos, row]) * B[pos, row], np.exp(Md) * Nd),
        (ep.map("abs", A[pos, row]) + B[pos, row], np.abs(Md) + Nd),
        (ep.map("exp", A[pos, row] * B[pos, row]), np.exp(Md * Nd)),
        (ep.map("log", ep.map("exp", A[pos, row])), Md),
        (A[pos, row] * ep.map("neg", ep.map("sqrt", x[row])), -np.sqrt(v) * Md),
        (ep.sum(row, ep.map("recip", x[row]) * A[pos, row]), Md @ (1 / v)),
        (ep.map("minimum", ep.map("exp", A[pos, row]) + 1.0, 2.0),
         np.minimum(np.exp(Md) + 1, 2.0)),
        (ep.sum((pos, row), ep.map("exp", ep.sum(n, A[pos, n] * B[row, n]))),
         np.exp(Md @ Nd.T).sum()),
        (ep.map("exp", ep.sum(row, A[pos, row])) + ep.sum(row, ep.map("exp", A[pos, row])),
         np.exp(Md.sum(1)) + np.exp(Md).sum(1)),
    ]
    values = {"A": M, "B": N, "x": v}
    for e, want in cases:
        all_backends(e, want, **{name: values[name] for name in tensors(e)})


def test_a_map_of_an_integer_operand_computes_as_numpy_does():
    A = ep.tensor("A", 2)
    M = np.array([[0, 1, -2], [3, 0, 4]], dtype=np.int64)
    got = ep.evaluate(ep.map("exp", A[pos, row]), A=M)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.exp(M))
    got = ep.evaluate(ep.map("abs", A[pos, row]), A=M)
    assert got.dtype == np.int64 and (got == np.abs(M)).all()
    got = ep.evaluate(ep.map("maximum", A[pos, row], 0.5), A=M)
    assert got.dtype == np.float64 and (got == np.maximum(M, 0.5)).all()
    got = ep.evaluate(ep.map("exp", A[pos, row]), A=M.astype(np.float32))
    assert got.dtype == np.float32


def test_a_sparse_output_of_a_zero_keeping_map_has_its_operands_pattern():
    A = ep.tensor("A", 2, format="csr")
    M = matrix("csr", seed=6)
    got = ep.evaluate(ep.map("abs", A[pos, row]), A=M, output="csr")
    np.testing.assert_allclose(got.toarray(), np.abs(M.toarray()))
    assert got.nnz <= M.nnz
    got = ep.evaluate(ep.map("exp", A[pos, row]), A=M, output="csr")
    np.testing.assert_allclose(got.toarray(), np.exp(M.toarray()))


def test_export_c_of_a_map_kernel_compiles(tmp_path):
    import shutil
    import subprocess
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    e = ep.map("exp", ep.sum(row, A[pos, row] * x[row])) + ep.map("maximum", x[pos], 0.0)
    c_path, h_path = ep.export_c(e, "mapk", tmp_path)
    text = c_path.read_text()
    assert "exp(" in text
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    subprocess.run([cc, "-O2", "-c", str(c_path), "-o", str(tmp_path / "mapk.o")],
                   check=True, capture_output=True)


FNS = ["exp", "abs", "neg", "maximum", "minimum"]      # finite on small inputs


@st.composite
def mapped_problems(draw):
    """A random problem with maps wrapped around it, inside a product or a sum,
    and summed (the index names of the project's pool, etchpy.testing)."""
    p = draw(problems(max_indices=3, max_occurrences=3, semiring=ep.semirings.real))
    fn = draw(st.sampled_from(FNS))
    e = ep.map(fn, p.expr, ARGS.get(fn))
    shape = draw(st.sampled_from(["map", "nested", "times", "plus", "sum"]))
    if shape == "nested":
        outer = draw(st.sampled_from(FNS))
        e = ep.map(outer, e, ARGS.get(outer))
    elif shape in ("times", "plus") and list(accesses(p.expr)):    # none: a literal
        other = draw(st.sampled_from(list(accesses(p.expr))))
        e = e * other if shape == "times" else e + other
    elif shape == "sum" and e.free:
        e = ep.sum(draw(st.sampled_from(e.free)), e)
    return e, p


@settings(max_examples=30)
@given(mapped_problems())
def test_random_map_expressions_agree_on_every_backend(case):
    e, p = case
    check_backends(e, p.inputs, semiring=p.semiring, backends=("streams", "c"))


@pytest.mark.parametrize("tuning", ["noopt", "force", "force_hash"])
@pytest.mark.parametrize("output", ["dense", "csr"])
def test_maps_under_every_tuning_preset_and_output(tuning, output):
    A, C = ep.tensor("A", 2, format="csr"), ep.tensor("C", 2, format="csr")
    x = ep.tensor("x", 1)
    inputs = {"A": matrix("csr", 7, (6, 6)), "C": matrix("csr", 8, (6, 6)),
              "x": np.linspace(-1, 1, 6)}
    cases = [ep.map("exp", A[pos, row]) * C[pos, row],
             ep.map("abs", ep.sum(n, A[pos, n] * C[n, row])),
             ep.map("maximum", ep.sum(n, A[pos, n] * C[n, row]), 0.0) + A[pos, row],
             ep.sum(n, A[pos, n] * ep.map("exp", C[n, row])),
             A[pos, row] * ep.map("recip", ep.map("exp", x[row]))]
    for e in cases:
        used = {name: inputs[name] for name in tensors(e)}
        check_backends(e, used, backends=("imp", "c"), tuning=tuning, output=output)
        if output == "csr":     # rows filled by threads (dense ones: the backend property)
            check_backends(e, used, backends=("c",), tuning=tuning, output=output, threads=2)


@pytest.mark.parametrize("fn, arg", [("maximum", 1), ("minimum", -1), ("abs", None),
                                     ("neg", None)])
def test_integer_maps_compute_in_integers_on_every_backend(fn, arg):
    A = ep.tensor("A", 2, format="csr")
    M = sp.csr_array(np.array([[0, -3, 2], [5, 0, -1]], dtype=np.int64))
    want = maps.apply(fn, M.toarray(), arg)
    e = ep.map(fn, A[pos, row], arg)
    for b in ("reference", "streams", "c"):
        got = ep.evaluate(e, backend=b, A=M)
        assert got.dtype == np.int64 and (got == want).all(), b
    assert (imp_evaluate(e, {"A": M}, semiring="integer") == want).all()

"""The public API end to end: strings, einsum, outputs, semirings, debug dumps."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.testing import check_backends, dense_value

i, j, k = ep.indices("i j k")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_string_front_end_compiles():
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"})
    A = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    np.testing.assert_array_equal(kern(A=A, x=np.array([1.0, 2.0, 3.0])), [7.0, 6.0])


def test_string_front_end_sparse_output_and_semiring():
    kern = ep.compile("C[i,k] = A[i,j] * B[j,k]", formats={"A": "csr", "B": "csr", "C": "csr"},
                      semiring="min_plus")
    # scipy does not store the zeros, so they are missing edges (+inf) in min-plus
    W = sp.csr_array(np.array([[0.0, 3.0], [1.0, 0.0]]))
    C = kern(A=W, B=W)
    assert isinstance(C, ep.Tensor) and C.fill == np.inf    # scipy would read 0 there
    inf = np.inf
    np.testing.assert_array_equal(dense_value(C, ep.semirings.min_plus), [[4.0, inf], [inf, 4.0]])


def test_string_errors_point_at_token():
    with pytest.raises(ep.ExpressionTypeError, match="column"):
        ep.compile("y[i] = A[i,j]) * x[j]")


def test_einsum_over_semirings():
    A = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ep.einsum("ij,j->i", A, x), A @ x)
    np.testing.assert_array_equal(ep.einsum("ij,j->i", A, x, semiring="max_times"), [6.0, 6.0])
    assert ep.einsum("ij,ij->", A, A) == 14.0


def test_outputs_dense_scalar_scipy_and_tensor():
    A = ep.tensor("A", 2, format="csr")
    T = ep.tensor("T", 3, format="csf")
    M = sp.csr_array(np.array([[1.0, 0], [2.0, 3.0]]))
    s = ep.evaluate(ep.sum((i, j), A[i, j]), A=M)
    assert isinstance(s, np.floating) and s == 6.0
    csc = ep.evaluate(A[i, j] * A[i, j], A=M, output="csc")
    assert isinstance(csc, sp.csc_array)
    np.testing.assert_array_equal(csc.toarray(), M.toarray() ** 2)
    for backend in ("c", "streams", "reference"):       # other 2-d formats stay Tensors
        for name in ("dcsr", "coo"):
            t = ep.evaluate(A[i, j] * A[i, j], A=M, output=name, backend=backend)
            assert isinstance(t, ep.Tensor) and t.format == ep.Format.named(name, 2)
            np.testing.assert_array_equal(t.to_dense(), M.toarray() ** 2)
    dense3 = np.zeros((2, 2, 2))
    dense3[0, 1, 1] = 5.0
    out = ep.evaluate(T[i, j, k] * T[i, j, k], T=ep.Tensor.from_dense(dense3, "csf"),
                      output="csf")
    assert isinstance(out, ep.Tensor)
    np.testing.assert_array_equal(out.to_dense(), dense3 ** 2)


def test_out_indices_transpose():
    A = ep.tensor("A", 2)
    M = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ep.evaluate(A[i, j], A=M, out_indices=(j, i)), M.T)


def test_out_indices_with_a_statement_string_is_refused():
    """A statement's left-hand side fixes the output; out_indices= is not ignored."""
    X = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ep.EtchpyError, match="left-hand side"):
        ep.evaluate("y[i,j] = A[i,j]", A=X, out_indices=ep.indices("j i"))
    with pytest.raises(ep.EtchpyError, match="left-hand side"):
        ep.compile("y[i,j] = A[i,j]", out_indices=ep.indices("j"))


@pytest.mark.parametrize("name", ["order", "tuning", "semiring", "threads", "check"])
def test_a_tensor_named_like_an_option_of_evaluate_is_explained(name):
    """evaluate's options share the keyword space with inputs: an input that lands
    in an option is an EtchpyError naming it (not numpy's or hashing's error);
    the kernel itself takes it (only its instance is positional)."""
    X, v = np.ones((2, 3)), np.ones(3)
    e = f"y[i] = {name}[i,j] * v[j]"
    with pytest.raises(ep.EtchpyError, match=f"option {name}= got an array"):
        ep.evaluate(e, v=v, **{name: X})
    assert np.array_equal(ep.compile(e)(v=v, **{name: X}), [3.0, 3.0])
    for positional in ("self", "e"):
        kern = ep.compile(f"y[i] = {positional}[i,j] * v[j]")
        assert np.array_equal(kern.build(v=v, **{positional: X})(v=v, **{positional: X}),
                              [3.0, 3.0])
    assert np.array_equal(ep.evaluate("y[i] = e[i,j] * v[j]", e=X, v=v), [3.0, 3.0])


def test_subtraction_needs_negation():
    A = ep.tensor("A", 2, format="csr")
    M = sp.csr_array(np.eye(2))
    np.testing.assert_array_equal(ep.evaluate(A[i, j] - 2 * A[i, j], A=M), -np.eye(2))
    with pytest.raises(ep.SemiringError, match="negation"):
        ep.evaluate(A[i, j] - A[i, j], A=M, semiring="min_plus")


def test_user_defined_semiring_compiles():
    bottleneck = ep.Semiring("bottleneck", np.float64, 0.0, np.inf,
                             ("({a} > {b} ? {a} : {b})", np.maximum),
                             ("({a} < {b} ? {a} : {b})", np.minimum))
    A = ep.tensor("A", 2, format="csr")
    x = ep.tensor("x", 1)
    cap = sp.csr_array(np.array([[0, 5.0, 2.0], [0, 0, 4.0], [0, 0, 0]]))
    check_backends(ep.sum(j, A[i, j] * x[j]), {"A": cap, "x": np.array([1.0, 3.0, 9.0])},
                   semiring=bottleneck)


def test_float32_and_integer_semirings():
    A = ep.tensor("A", 2, format="csr")
    x = ep.tensor("x", 1)
    M = sp.csr_array(np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int64))
    y = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=M, x=np.array([1, 2, 3]), semiring="integer")
    assert y.dtype == np.int64 and y.tolist() == [7, 6]
    y32 = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=M.astype(np.float32),
                      x=np.ones(3, np.float32), semiring="real32")
    assert y32.dtype == np.float32 and y32.tolist() == [3.0, 3.0]


def test_debug_dump_prints_every_stage(monkeypatch, capsys):
    monkeypatch.setenv("ETCHPY_DEBUG", "1")
    ep.Kernel(ep.sum(j, ep.tensor("A", 2, format="csr")[i, j] * ep.tensor("x", 1)[j]))
    err = capsys.readouterr().err
    for stage in ("plan", "streams", "imp", "c"):
        assert f"---- etchpy {stage} ----" in err


def test_int32_and_int64_index_variants_agree():
    A = ep.tensor("A", 2, format="csr")
    x = ep.tensor("x", 1)
    M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    M64 = sp.csr_array((M.data, M.indices.astype(np.int64), M.indptr.astype(np.int64)),
                       shape=M.shape)
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(kern(A=M, x=xv), kern(A=M64, x=xv))
    ran = {kern, *(runner for _, runner in kern._planned.values())}   # per size class
    assert set().union(*(k._libs for k in ran)) >= {"int32_t", "int64_t"}


@pytest.mark.parametrize("threads", [1, 2])
def test_dense_output_written_into_out(threads):
    """out= receives the result (overwriting whatever it held, for the real and the
    min-plus zero alike) and is returned; the answer equals a fresh output's. Over
    csc the kernel adds into out (columns outer), so out must be cleared first."""
    rng = np.random.default_rng(5)
    A = sp.random(300, 200, density=0.05, format="csr", random_state=rng)
    x = rng.random(200)
    v = ep.tensor("x", 1)
    for semiring, fmt in (("real", "csr"), ("min_plus", "csr"), ("real", "csc"),
                          ("min_plus", "csc")):
        a = ep.tensor("A", 2, fmt)
        kern = ep.compile(ep.sum(j, a[i, j] * v[j]), semiring=semiring, threads=threads)
        want = kern(A=A, x=x)
        out = np.full(300, 7.5)
        got = kern(A=A, x=x, out=out)
        assert got is out
        np.testing.assert_array_equal(out, want)
        got = kern(A=A, x=2 * x, out=out)        # reused: nothing of the last call stays
        np.testing.assert_array_equal(out, kern(A=A, x=2 * x))
        for backend in ("streams", "reference"):           # evaluate takes out= too
            small = sp.csr_array(A[:40])
            cell = np.full(40, -1.0)
            got = ep.evaluate(ep.sum(j, a[i, j] * v[j]), semiring=semiring, backend=backend,
                              A=small, x=x, out=cell)
            assert got is cell
            np.testing.assert_allclose(cell, kern(A=small, x=x), rtol=1e-12)
    total = ep.compile(ep.sum((i, j), ep.tensor("A", 2, "csr")[i, j] * v[j]))
    cell = np.full((), 3.0)
    assert total(A=A, x=x, out=cell) is cell and cell[()] == pytest.approx(A @ x @ np.ones(300))


def test_out_that_cannot_hold_the_result_is_refused():
    a, v = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, a[i, j] * v[j]))
    A = sp.random(4, 4, density=0.5, format="csr", random_state=1)
    x = np.ones(4)
    bad = {"shape": np.zeros(5), "dtype": np.zeros(4, np.float32),
           "C-contiguous": np.zeros(8)[::2], "a numpy array": [0.0] * 4}
    for words, out in bad.items():
        with pytest.raises(ep.InputError, match=words):
            kern(A=A, x=x, out=out)
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    with pytest.raises(ep.InputError, match="writeable"):
        kern(A=A, x=x, out=frozen)
    with pytest.raises(ep.InputError, match="shares memory"):
        kern(A=A, x=x, out=x)                      # would overwrite what it reads
    sparse = ep.compile(a[i, j] + a[i, j], output="csr")
    with pytest.raises(ep.InputError, match="dense output"):
        sparse(A=A, out=np.zeros((4, 4)))
    for backend in ("c", "streams", "reference"):
        with pytest.raises(ep.InputError, match="dense output"):
            ep.evaluate(a[i, j] + a[i, j], output="csr", backend=backend, A=A,
                        out=np.zeros((4, 4)))
        with pytest.raises(ep.InputError, match="shares memory"):
            ep.evaluate(ep.sum(j, a[i, j] * v[j]), backend=backend, A=A, x=x, out=x)


def test_every_entry_point_takes_a_tuning(tmp_path):
    """compile, Kernel, evaluate (every backend), einsum and export_c take `tuning`:
    a Tuning, a preset name or a dict of fields."""
    A = ep.tensor("A", 2, format="csr")
    x = ep.tensor("x", 1)
    e = ep.sum(j, A[i, j] * x[j])
    M, v = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]])), np.array([1.0, 2.0, 3.0])
    assert ep.Tuning is ep.tuning.Tuning
    for t in (ep.Tuning(seek_linear=2), "noopt", {"prefetch": False}):
        assert ep.compile(e, tuning=t).tuning == ep.tuning.of(t)
        assert ep.Kernel(e, tuning=t).tuning == ep.tuning.of(t)
        for backend in ("c", "streams", "reference"):
            np.testing.assert_array_equal(ep.evaluate(e, backend=backend, tuning=t, A=M, x=v),
                                          M @ v)
        np.testing.assert_array_equal(ep.einsum("ij,j->i", M, v, tuning=t), M @ v)
    c_path, _ = ep.export_c(e, "spmv_noopt", tmp_path, tuning="noopt")
    assert "tuning:     noopt:" in c_path.read_text()

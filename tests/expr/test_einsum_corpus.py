"""ep.einsum against np.einsum on a corpus of subscript strings and shapes.

tests/expr/einsum_specs.json lists [spec, operand shapes, does np.einsum accept
it] for the subscripts that numpy's and opt_einsum's own test suites call einsum
with (recorded from their calls, shapes shrunk so that equal sizes stay equal
and sizes 0 and 1 are kept): repeated indices, ellipsis anywhere, size-1
broadcasting, implicit output, 0-d operands, many operands. Every accepted case
must give numpy's value on real, complex, integer and bool operands, dense and
with each 2-d operand a scipy sparse matrix; every case numpy refuses is refused.

The default run compiles slices: a third of the cases on dense real operands,
a sixth of those with a 2-d operand on sparse integer and bool operands, and a
disjoint quarter of them on sparse float64 operands, a ninth of the cases on
dense complex128 operands (half of those with a 2-d operand also sparse), and
complex64 and complex mixed with real operands beside; `--runslow` compiles
the whole corpus on every dtype, dense and sparse.
"""
import json
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

CASES = json.loads((pathlib.Path(__file__).parent / "einsum_specs.json").read_text())
VALID = [(s, [tuple(x) for x in sh]) for s, sh, ok in CASES if ok]
INVALID = [(s, [tuple(x) for x in sh]) for s, sh, ok in CASES if not ok]
DTYPES = ("float64", "int64", "bool", "complex128")
SPARSE = ("csr", "csc", "coo")


def operands(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return [rng.random(s) < 0.5 for s in shapes]
    if dtype == "int64":
        return [rng.integers(-2, 4, size=s) for s in shapes]
    if dtype.startswith("complex"):
        return [(rng.integers(-2, 4, size=s) + rng.random(s)
                 + 1j * (rng.integers(-2, 4, size=s) + rng.random(s))).astype(dtype)
                for s in shapes]
    return [rng.integers(-2, 4, size=s) + rng.random(s) for s in shapes]


def sparse(ops, k):
    """Each 2-d operand as a scipy sparse array (csr, csc or coo by k)."""
    fmt = SPARSE[k % 3]
    return [sp.coo_array(x).asformat(fmt) if np.ndim(x) == 2 else x for x in ops]


def agrees(got, want):
    """Same shape and value; a count stands for an `or` on bool operands."""
    got = np.asarray(got)
    if got.shape != want.shape:
        return False
    if want.dtype == bool:
        return np.array_equal(got.astype(bool), want)
    return np.allclose(got, want)


def check(spec, ops, backend="c"):
    want = np.einsum(spec, *[x.toarray() if sp.issparse(x) else x for x in ops])
    got = ep.einsum(spec, *ops, backend=backend)
    if sp.issparse(got):
        got = got.toarray()
    assert agrees(got, np.asarray(want)), (spec, [np.shape(x) for x in ops], got, want)


def has_2d(shapes):
    return any(len(s) == 2 for s in shapes)


DENSE_SAMPLE = VALID[::10]          # all of VALID: the reference (below), --runslow


@pytest.mark.parametrize("spec, shapes", DENSE_SAMPLE, ids=[repr(s) for s, _ in DENSE_SAMPLE])
def test_corpus_compiled_dense_sample(spec, shapes):
    """A fifth of the cases, compiled on dense real operands (the whole corpus,
    every dtype and sparse operands: the slow test below; a C compile per case)."""
    check(spec, operands(shapes, "float64"))


@pytest.mark.parametrize("spec, shapes", VALID, ids=[repr(s) for s, _ in VALID])
def test_corpus_every_dtype_and_sparse_operands(spec, shapes):
    """All three dtypes, dense and sparse, through the front end and the dense
    reference (the compiled backend: the slow test below)."""
    for k, dtype in enumerate(DTYPES):
        ops = operands(shapes, dtype, seed=k)
        check(spec, ops, backend="reference")
        if has_2d(shapes):
            check(spec, sparse(ops, k), backend="reference")


@pytest.mark.slow
@pytest.mark.parametrize("spec, shapes", VALID, ids=[repr(s) for s, _ in VALID])
def test_corpus_compiled_every_dtype_and_sparse_operands(spec, shapes):
    for k, dtype in enumerate(DTYPES):
        ops = operands(shapes, dtype, seed=k)
        check(spec, ops)
        if has_2d(shapes):
            check(spec, sparse(ops, k))


SPARSE_SAMPLE = [(s, sh) for s, sh in VALID if has_2d(sh)][1::12]


@pytest.mark.parametrize("spec, shapes", SPARSE_SAMPLE, ids=[repr(s) for s, _ in SPARSE_SAMPLE])
def test_corpus_compiled_sparse_sample(spec, shapes):
    """A twelfth of the cases with a 2-d operand, compiled with sparse operands
    on integer and bool values (the whole corpus: the slow test above)."""
    k = VALID.index((spec, shapes))
    for dtype in ("int64", "bool"):
        check(spec, sparse(operands(shapes, dtype, seed=k), k))


FLOAT_SPARSE_SAMPLE = [(s, sh) for s, sh in VALID if has_2d(sh)][0::16]


@pytest.mark.parametrize("spec, shapes", FLOAT_SPARSE_SAMPLE,
                         ids=[repr(s) for s, _ in FLOAT_SPARSE_SAMPLE])
def test_corpus_compiled_float_sparse_sample(spec, shapes):
    """An eighth of the cases with a 2-d operand (none of the sample above),
    compiled with float64 values and each 2-d operand a scipy csr, csc or coo
    array (the whole corpus: the slow test above)."""
    k = VALID.index((spec, shapes))
    check(spec, sparse(operands(shapes, "float64", seed=k), k))


@pytest.mark.parametrize("spec, shapes", INVALID, ids=[repr(s) for s, _ in INVALID])
def test_corpus_refused(spec, shapes):
    """What numpy refuses is refused, with etchpy's own clear error."""
    with pytest.raises(ep.EtchpyError) as info:
        ep.einsum(spec, *[np.ones(s) for s in shapes])
    assert str(info.value)


COMPLEX_SAMPLE = VALID[1::18]


@pytest.mark.parametrize("spec, shapes", COMPLEX_SAMPLE, ids=[repr(s) for s, _ in COMPLEX_SAMPLE])
def test_corpus_compiled_complex_sample(spec, shapes):
    """A ninth of the cases compiled on dense complex128 operands (the complex
    ring, chosen by the dtype), and the same with a 2-d operand sparse."""
    k = VALID.index((spec, shapes))
    ops = operands(shapes, "complex128", seed=k)
    check(spec, ops)
    if has_2d(shapes) and k % 2:
        check(spec, sparse(ops, k))


@pytest.mark.parametrize("spec", ["ij,jk->ik", "i,i->", "ij,j->i", "ii->i", "ij->ji", "i,j->ij"])
def test_complex_mixed_with_real_and_complex64(spec):
    """numpy's patterns of test_einsum on complex operands: complex with real
    operands promotes to complex128 as numpy does; complex64 stays complex64;
    a conjugated operand (np.conj before the call) gives the vdot shape."""
    shapes = {"ij,jk->ik": [(3, 4), (4, 2)], "i,i->": [(5,), (5,)], "ij,j->i": [(3, 4), (4,)],
              "ii->i": [(3, 3)], "ij->ji": [(2, 3)], "i,j->ij": [(2,), (3,)]}[spec]
    z = operands(shapes, "complex128", seed=1)
    r = operands(shapes, "float64", seed=2)
    mixed = [z[0], *r[1:]] if len(z) > 1 else z
    for ops in (mixed, [np.conj(x) for x in z], [x.astype(np.complex64) for x in z]):
        want = np.einsum(spec, *ops)
        got = ep.einsum(spec, *ops)
        assert np.asarray(got).dtype == want.dtype, (spec, got, want)
        assert np.allclose(got, want, rtol=1e-5), (spec, got, want)


@pytest.mark.parametrize("value", [np.array([1, "a"], dtype=object),
                                   np.array(["a", "b", "c"])])
def test_other_dtypes_get_a_clear_error(value):
    with pytest.raises(ep.InputError,
                       match=r"real, complex, integer or bool operands; operand 1"):
        ep.einsum("i,i->", np.ones(3), value)

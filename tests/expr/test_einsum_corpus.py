"""ep.einsum against np.einsum on a corpus of subscript strings and shapes.

tests/expr/einsum_specs.json lists [spec, operand shapes, does np.einsum accept
it] for the subscripts that numpy's and opt_einsum's own test suites call einsum
with (recorded from their calls, shapes shrunk so that equal sizes stay equal
and sizes 0 and 1 are kept): repeated indices, ellipsis anywhere, size-1
broadcasting, implicit output, 0-d operands, many operands. Every accepted case
must give numpy's value on real, integer and bool operands, dense and with each
2-d operand a scipy sparse matrix; every case numpy refuses is refused.

The default run compiles slices: a third of the cases on dense real operands,
a sixth of those with a 2-d operand on sparse integer and bool operands, and a
disjoint quarter of them on sparse float64 operands; `--runslow` compiles the
whole corpus on every dtype, dense and sparse.
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
DTYPES = ("float64", "int64", "bool")
SPARSE = ("csr", "csc", "coo")


def operands(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return [rng.random(s) < 0.5 for s in shapes]
    if dtype == "int64":
        return [rng.integers(-2, 4, size=s) for s in shapes]
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


DENSE_SAMPLE = VALID[::3]


@pytest.mark.parametrize("spec, shapes", DENSE_SAMPLE, ids=[repr(s) for s, _ in DENSE_SAMPLE])
def test_corpus_compiled_dense_sample(spec, shapes):
    """A third of the cases, compiled on dense real operands (the whole corpus,
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


SPARSE_SAMPLE = [(s, sh) for s, sh in VALID if has_2d(sh)][1::6]


@pytest.mark.parametrize("spec, shapes", SPARSE_SAMPLE, ids=[repr(s) for s, _ in SPARSE_SAMPLE])
def test_corpus_compiled_sparse_sample(spec, shapes):
    """A sixth of the cases with a 2-d operand, compiled with sparse operands
    on integer and bool values (the whole corpus: the slow test above)."""
    k = VALID.index((spec, shapes))
    for dtype in DTYPES[1:]:
        check(spec, sparse(operands(shapes, dtype, seed=k), k))


FLOAT_SPARSE_SAMPLE = [(s, sh) for s, sh in VALID if has_2d(sh)][0::4]


@pytest.mark.parametrize("spec, shapes", FLOAT_SPARSE_SAMPLE,
                         ids=[repr(s) for s, _ in FLOAT_SPARSE_SAMPLE])
def test_corpus_compiled_float_sparse_sample(spec, shapes):
    """A quarter of the cases with a 2-d operand (none of the sample above),
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


@pytest.mark.parametrize("value", [np.ones(3, dtype=complex), np.array([1, "a"], dtype=object),
                                   sp.csr_array(np.eye(3, dtype=complex))])
def test_other_dtypes_get_a_clear_error(value):
    with pytest.raises(ep.InputError, match=r"real, integer or bool operands; operand 1"):
        ep.einsum("i,i->", np.ones(3), value)

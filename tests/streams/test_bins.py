"""Histograms as expressions (expr.bins, proofs_notes/bins.md): `ep.onehot(b,
A[i, j], n)` reads A's values as the coordinates of a level below A's; a Σ
over a run adds the run's length to its bin once. Every backend agrees with
the dense reference on every semiring, on run-length, dense and compressed
inputs, with the run passes on and off."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import ExpressionTypeError, SemiringError
from etchpy.expr.walk import tensors
from etchpy.testing import check_backends
from pairing import paired

i, j, b = ep.indices("i j b")
SEMIRINGS = [s for s in ep.semirings.all() if np.dtype(s.dtype).kind != "c"]
NO_REPEAT = ep.Semiring("real_no_repeat", np.float64, 0.0, 1.0, ("{a} + {b}", np.add),
                        ("{a} * {b}", np.multiply))
BINS = 5


def image(sr, shape=(5, 23), seed=0):
    """Runs (lengths 1..7) of bins 0..4, of values in no bin (-1, 2.5, 7) and of
    the semiring's zero, in its carrier."""
    rng = np.random.default_rng(seed)
    values = [0, 1, 2, 3, 4, -1, 2.5, 7] if np.dtype(sr.dtype).kind == "f" else [0, 1, 2, 3, 4]
    values = [v for v in values if np.dtype(sr.dtype).kind != "b" or v in (0, 1)] + [sr.zero]
    rows = []
    for _ in range(shape[0]):
        row = []
        while len(row) < shape[1]:
            row += [values[rng.integers(len(values))]] * int(rng.integers(1, 8))
        rows.append(row[:shape[1]])
    return np.array(rows, dtype=sr.dtype)


def hist(fmt, mask=None):
    A = ep.tensor("A", 2, format=fmt)
    h = ep.onehot(b, A[i, j], BINS)
    return h if mask is None else h * ep.tensor("M", 2, format=mask)[i, j]


CASES = {
    "histogram": lambda f: ep.sum((i, j), hist(f)),
    "row histograms": lambda f: ep.sum(j, hist(f)),
    "masked by runs": lambda f: ep.sum((i, j), hist(f, "rle")),
    "weighted by dense": lambda f: ep.sum((i, j), hist(f, "dense")),
    "onehot": lambda f: hist(f),
}


@pytest.mark.parametrize("case, sr", paired(sorted(CASES), SEMIRINGS + [NO_REPEAT],
                                            always=("real", NO_REPEAT.name)))
@pytest.mark.parametrize("fmt", ["rle", "dense", "csr"])
def test_histograms_equal_the_reference(sr, case, fmt):
    expr = CASES[case](fmt)
    inputs = {"A": image(sr), "M": image(sr, seed=1)}
    inputs = {n: v for n, v in inputs.items() if n in set(tensors(expr)) | {"A"}}
    for runs in (True, False):
        check_backends(expr, inputs, semiring=sr, backends=("streams", "c"),
                       tuning={"runs": runs})


def test_a_run_adds_its_length_to_its_bin_once():
    """The law's lowering: below a run the bin is read once and the length added
    (the real semiring's repeat); the counts are np.bincount's."""
    k = ep.compile(CASES["histogram"]("rle"))
    assert "(double)(" in k.c_source and "ep_bin(" in k.c_source
    img = np.kron(np.arange(12).reshape(3, 4) % BINS, np.ones((2, 8)))
    got = k(A=ep.Tensor.from_dense(img, "rle"))
    assert np.array_equal(got, np.bincount(img.astype(int).ravel(), minlength=BINS))


def test_onehot_refuses_what_names_no_bins():
    A = ep.tensor("A", 2)
    with pytest.raises(ExpressionTypeError, match="new one"):
        ep.onehot(i, A[i, j], 4)
    with pytest.raises(ExpressionTypeError, match="positive int"):
        ep.onehot(b, A[i, j], 0)
    with pytest.raises(ExpressionTypeError, match="tensor accessed"):
        ep.onehot(b, A[i, j] * A[i, j], 4)
    with pytest.raises(SemiringError, match="complex"):
        ep.evaluate(ep.sum((i, j), ep.onehot(b, A[i, j], 4)), A=np.ones((2, 2), complex))


def test_a_last_call_on_the_same_tensor_is_kept_and_reads_its_values():
    """A onehot is bound over its source's own arrays, so a call on the same
    Tensor reuses the last binding and sees values written in place; a numpy
    input or a Tensor in another format (converted to the declared rle per call,
    its unstored cells then runs of the zero) is bound afresh each time."""
    k = ep.compile(CASES["histogram"]("rle"))
    img = np.kron(np.arange(12).reshape(3, 4) % BINS, np.ones((2, 8)))
    t = ep.Tensor.from_dense(img, "rle")
    want = np.bincount(img.astype(int).ravel(), minlength=BINS)
    assert np.array_equal(k(A=t), want) and np.array_equal(k(A=t), want)
    assert k._kept.hits == 1
    t.vals[:] = 0.0
    assert np.array_equal(k(A=t), [img.size] + [0] * (BINS - 1)) and k._kept.hits == 2
    for other in (img, ep.Tensor.from_dense(img, "csr")):
        k(A=other)
        hits = k._kept.hits
        other_vals = other if isinstance(other, np.ndarray) else other.vals
        other_vals[...] = 1.0
        dense = other if isinstance(other, np.ndarray) else other.to_dense()
        assert np.array_equal(k(A=other), np.bincount(dense.astype(int).ravel(), minlength=BINS))
        assert k._kept.hits == hits

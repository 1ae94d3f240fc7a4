"""The run-length level and its read shape (proofs_notes/runs.md): a Σ over a
run of a body constant on it, taken once per run as Semiring.repeat, is the
sum of the run's cells; a product of two run lists is one piece per overlap;
a product with a dense operand walks the run's cells. Every backend agrees
with the dense reference, with the run passes on and off, on every semiring."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import InputError
from etchpy.expr.walk import tensors
from etchpy.testing import check_backends, stored_values
from pairing import paired

i, j = ep.indices("i j")
SEMIRINGS = ep.semirings.all()
NO_REPEAT = ep.Semiring("real_no_repeat", np.float64, 0.0, 1.0, ("{a} + {b}", np.add),
                        ("{a} * {b}", np.multiply))


def image(sr, shape=(5, 23), seed=0):
    """An image of runs (lengths 1..7) of the semiring's sample values."""
    rng = np.random.default_rng(seed)
    values = stored_values(sr) + [sr.zero]
    rows = []
    for _ in range(shape[0]):
        row = []
        while len(row) < shape[1]:
            row += [values[rng.integers(len(values))]] * int(rng.integers(1, 8))
        rows.append(row[:shape[1]])
    return np.array(rows, dtype=sr.dtype)


def rle(name):
    return ep.tensor(name, 2, format="rle")


CASES = {
    "row sums": lambda: ep.sum(j, rle("A")[i, j]),
    "total": lambda: ep.sum((i, j), rle("A")[i, j]),
    "runs x runs": lambda: ep.sum(j, rle("A")[i, j] * rle("B")[i, j]),
    "runs x dense": lambda: ep.sum((i, j), rle("A")[i, j] * ep.tensor("B", 2)[i, j]),
    "blend": lambda: rle("A")[i, j] * rle("B")[i, j] + rle("A")[i, j],
    "summed blend": lambda: ep.sum(j, rle("A")[i, j] + rle("B")[i, j]),
}


@pytest.mark.parametrize("case, sr", paired(sorted(CASES), SEMIRINGS + [NO_REPEAT],
                                            always=("real", NO_REPEAT.name)))
@pytest.mark.parametrize("runs", [True, False], ids=["runs", "cells"])
def test_run_reads_equal_the_reference(sr, case, runs):
    expr = CASES[case]()
    inputs = {"A": image(sr), "B": image(sr, seed=1)}
    inputs = {n: v for n, v in inputs.items() if n in set(tensors(expr))}
    check_backends(expr, inputs, semiring=sr, backends=("streams", "c"),
                   tuning={"runs": runs})


def test_a_sum_over_runs_is_taken_once_per_run():
    """The law's lowering: the row sum multiplies each run's value by its length
    (the real semiring's repeat), min-plus takes the value itself, and a
    semiring without repeat adds cell by cell; a product of two run lists is
    one piece per overlap."""
    real = ep.compile(CASES["row sums"]()).c_source
    assert "(double)(" in real
    for case in ("runs x runs", "summed blend"):
        both = ep.compile(CASES[case]()).c_source
        assert "one piece per overlap" in both and "(double)(" in both
    cells = ep.compile(CASES["row sums"](), semiring=NO_REPEAT).c_source
    assert "(double)(" not in cells


@pytest.mark.parametrize("sr", SEMIRINGS, ids=lambda s: s.name)
def test_repeat_is_the_n_fold_sum(sr):
    for v in stored_values(sr) + [sr.zero, sr.one]:
        total = v
        for n in range(1, 6):
            assert np.isclose(sr.repeat(v, np.int64(n)), total, equal_nan=True), (v, n)
            total = sr.add(total, v)


def test_packing_merges_equal_neighbours():
    img = np.array([[0, 0, 3, 3, 3, 0], [2, 2, 2, 2, 2, 2]], dtype=float)
    t = ep.Tensor.from_dense(img, "rle")
    assert list(t.levels[1]["rseg"]) == [0, 3, 4]
    assert list(t.levels[1]["rend"]) == [2, 5, 6, 6]
    assert list(t.vals) == [0, 3, 0, 2]
    coo = ep.Tensor.from_coords([[0, 0, 1], [2, 3, 5]], [3.0, 3.0, 1.0], (2, 6), "rle")
    assert list(coo.levels[1]["rend"]) == [2, 4, 6, 5, 6]
    assert np.array_equal(coo.to_dense(), [[0, 0, 3, 3, 0, 0], [0, 0, 0, 0, 0, 1]])


@pytest.mark.parametrize("rend, message", [([2, 2, 6], "strictly increase"),
                                           ([2, 5], "must end at the size"),
                                           ([0, 6], "strictly increase")])
def test_malformed_runs_are_refused_naming_the_array(rend, message):
    fmt = ep.Format(["dense", "runs"])
    levels = ({}, {"rseg": np.array([0, len(rend)]), "rend": np.array(rend)})
    with pytest.raises(InputError, match=message) as err:
        ep.Tensor((1, 6), fmt, levels, np.zeros(len(rend)), name="img")
    assert "img" in str(err.value)


def test_a_run_level_is_the_last_level():
    with pytest.raises(ep.FormatError, match="last level"):
        ep.Format(["runs", "dense"])


@pytest.mark.parametrize("shape", [(3, 7), (1, 1), (4, 0), (0, 5), (2, 3, 6), (9,), (0,)])
def test_packing_from_dense_rows_is_packing_from_coordinates(shape):
    """from_dense reads runs straight off the rows (Runs.pack_rows); the arrays
    are those of packing the coordinates and merging."""
    a = np.random.default_rng(len(shape)).integers(0, 2, shape).astype(float)
    rows = ep.Tensor.from_dense(a, "rle")
    nz = np.nonzero(a)
    coords = ep.Tensor.from_coords(np.array(nz).reshape(len(shape), -1), a[nz], shape, "rle")
    for role in ("rseg", "rend"):
        assert list(rows.levels[-1][role]) == list(coords.levels[-1][role])
    assert list(rows.vals) == list(coords.vals)
    assert np.array_equal(rows.to_dense(), a)


@pytest.mark.parametrize("case", ["runs + runs", "runs + sparse runs", "runs * sparse runs",
                                  "runs * dense"])
@pytest.mark.parametrize("runs", [True, False], ids=["runs", "cells"])
def test_a_covering_run_stream_writes_every_cell_without_a_fill(case, runs):
    """A dense output whose free levels are run streams covering their fibres
    (streams.Covers: a dense run list, or a sum with one) is written once per
    cell, so the kernel neither fills it nor takes a zeroed flag (runs.md, "A
    covering run stream writes every cell"); a product with a sparse run list
    or a dense operand (no Covers) still fills it. Checked through `out=`
    holding other values, against the reference."""
    S = ep.tensor("S", 2, format="sparse_rle")
    D = ep.tensor("D", 2)
    e = {"runs + runs": rle("A")[i, j] + rle("B")[i, j],
         "runs + sparse runs": rle("A")[i, j] + S[i, j],
         "runs * sparse runs": rle("A")[i, j] * S[i, j],
         "runs * dense": rle("A")[i, j] * D[i, j]}[case]
    sr = ep.semirings.real
    inputs = {n: image(sr, seed=k) for k, n in enumerate(("A", "B", "S", "D"))}
    inputs = {n: inputs[n] for n in tensors(e)}
    kern = ep.compile(e, tuning={"runs": runs})
    assert ("out_zeroed" not in kern.c_source) == (runs and "+" in case)
    out = np.full(inputs["A"].shape, 7.5)
    got = kern(out=out, **inputs)
    np.testing.assert_array_equal(got, ep.evaluate(e, backend="reference", **inputs))


RUN_FORMATS = {"rle": "rle", "sparse_rle": ep.Format(["dense", "sparse_runs"]),
               "runs_permuted": ep.Format(["compressed", "runs"], (1, 0)),
               "blocks_permuted": ep.Format(["blocks", "compressed"], (1, 0)),
               "dense_blocks": ep.Format(["dense", "blocks"]),
               "banded": ep.Format(["dense", "banded"]), "hash": ep.Format(["dense", "hash"])}


@pytest.mark.parametrize("fmt", RUN_FORMATS.values(), ids=list(RUN_FORMATS))
def test_a_value_predicate_reads_each_entry_at_its_position(fmt):
    """A value comparison of a tensor stored with runs, blocks or bands, and B·B
    over one structure (the one walk fuses it into a value predicate,
    runtime.shared), compile and agree with the reference: lowering notes the
    coordinate of a position where the level's read shape gives one
    (formats.level.coordinate_at: a run's position holds many, a block's needs
    its block) and the position always (it raised AttributeError, 'RunList' or
    'Blocks' has no crd, and a band read a crd it has not; session 51, seeds
    5102/5103, B·B on Tensors in the central property)."""
    M = np.array([[1, 0, 0, 0, -2, 0], [-1, 0, 0, 0, 1, 0], [0, 3, 3, 0, 0, -1]])
    B = ep.tensor("B", 2, format=fmt)
    T = ep.Tensor.from_dense(M, fmt, semiring="integer")
    for e in ((B[i, j] > 0) * B[i, j], B[i, j] * B[i, j], ep.sum(j, (B[i, j] > 0) * B[i, j])):
        want = ep.evaluate(e, semiring="integer", backend="reference", B=M)
        kern = ep.compile(e, semiring="integer")
        for given in (M, T, T):
            assert np.array_equal(kern(B=given), want), (str(e), type(given))

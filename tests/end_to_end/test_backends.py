"""The central property on random problems: the compiled C equals the stream
interpreter and the dense reference, on one thread and on two, for dense and
sparse outputs (with index comparisons `A[i,j] * (i < j)` and windows
`A[i[lo:hi:s], j]` among the factors); and the whole lowered program, output
writes included, run on the Imp interpreter equals the reference.

The central property runs once per semiring (tests/central.py), from random
problems and from chosen ones (csc, coo of order 2 and 3, a permuted order-3
format) on every semiring; tests/project/test_strategies_reach.py records its
draws and fails when they stop reaching what they should."""
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import etchpy as ep
from etchpy.expr.nodes import free_indices
from etchpy.expr.walk import accesses
from etchpy.testing import (INPUT_KINDS, Problem, assert_same, check_backends, formats_for, problems,
                            stored_values)
from central import EXAMPLES_PER_SEMIRING, SEMIRINGS, central_problems
from tuned import on_interpreter


pytestmark = pytest.mark.usefixtures("shared_cache", "full_flags")
i, j, k = ep.indices("i j k")


@dataclass(frozen=True)
class Chosen:
    """A chosen problem: an expression and its tensors' shapes, built on any semiring."""
    expr: ep.Expr
    shapes: dict

    def on(self, sr) -> Problem:
        """The problem over `sr`: inputs with every third entry stored (values in turn)."""
        values = stored_values(sr)
        inputs = {}
        for t, (name, shape) in enumerate(self.shapes.items()):
            flat = np.full(int(np.prod(shape)), sr.zero, dtype=sr.dtype)
            for c in range(t % 3, flat.size, 3):
                flat[c] = values[(c + t) % len(values)]
            inputs[name] = flat.reshape(shape)
        fmts = {a.tensor.name: a.tensor.format for a in accesses(self.expr)}
        return Problem(self.expr, inputs, sr, fmts)


def _t(name, order, fmt):
    return ep.tensor(name, order, format=fmt)


CSC = Chosen(ep.sum(j, _t("A", 2, "csc")[i, j] * _t("x", 1, "csf")[j]) + _t("y", 1, "csf")[i],
             {"A": (5, 4), "x": (4,), "y": (5,)})
COO = Chosen(ep.sum(j, _t("C", 2, "coo")[i, j] * _t("D", 2, "csr")[j, k]),
             {"C": (4, 6), "D": (6, 3)})
ORDER3 = Chosen(ep.sum(k, _t("T", 3, "coo")[i, j, k] * _t("U", 3, ep.Format(
    ["dense", "compressed", "compressed"], (2, 0, 1)))[i, j, k] * _t("v", 1, "dense")[k]),
    {"T": (3, 4, 5), "U": (3, 4, 5), "v": (5,)})


@pytest.mark.parametrize("m", range(len(SEMIRINGS)), ids=[sr.name for sr in SEMIRINGS])
@settings(max_examples=EXAMPLES_PER_SEMIRING)
@given(case=st.data(), kind=st.sampled_from(INPUT_KINDS))
@example(case=CSC, kind="scipy")
@example(case=COO, kind="shared")
@example(case=ORDER3, kind="tensor")
def test_c_equals_streams_equals_reference(m, case, kind):
    """Random problems over the m-th semiring (5 each, 50 in all: complex and complex64
    among them) and the chosen ones; the compiled kernel is also called on the inputs
    as numpy arrays, ep.Tensors (some over one structure) or scipy arrays (`kind`),
    twice, on others with other values and after a write in place (kinds.check_calls)."""
    p = case.on(SEMIRINGS[m]) if isinstance(case, Chosen) else \
        case.draw(central_problems(m), label="problem")
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"),
                   input_kind=kind)


@settings(max_examples=min(20, settings.default.max_examples))   # fewer in a smaller profile
@given(problems(max_indices=3, allow_compare=True, min_free=1),
       st.sampled_from(["csr", "csc", "dcsr", "coo", "csf"]),
       st.data(), st.sampled_from(INPUT_KINDS))
def test_sparse_outputs_match_reference(p, fmt, data, kind):
    """Sparse outputs: the named formats, and half the time any format of the
    output's order formats_for draws (every level kind that can be written:
    hash, bytemap, run-length, banded and block-list levels, permuted); the
    kernel also called on the inputs as `kind`, as in the central property."""
    out = free_indices(p.expr)
    if (len(out) != 2 and fmt != "csf" and fmt != "coo"
            or data.draw(st.booleans(), label="any format of the order")):
        fmt = data.draw(formats_for(len(out)))     # any mix of level kinds
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"),
                   output=fmt, input_kind=kind)


@settings(max_examples=12)
@given(problems())
def test_imp_program_on_interpreter_equals_reference(p):
    """The whole lowered program (output writes included) run on the Imp interpreter."""
    sr = p.semiring
    e = p.expr
    final, _, shape = on_interpreter(e, sr, None, p.inputs)
    want = ep.evaluate(e, semiring=sr, backend="reference", **p.inputs)
    assert_same(final["out"].reshape(shape), want, sr, what=str(e))


@settings(max_examples=20)
@given(problems(allow_compare=True, allow_windows=True))
def test_two_threads_equal_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), threads=2)


@settings(max_examples=20)
@given(problems(max_indices=3, allow_compare=True, min_free=2),
       st.sampled_from(["csr", "csc", "dcsr", "csf"]), st.data())
@pytest.mark.heavy
def test_two_threads_sparse_outputs_equal_reference(p, fmt, data):
    """Sparse outputs on two threads: csr/csc, doubly compressed, and for three
    output indices any mix of dense and compressed levels (fibers with a dense
    tail among them)."""
    out = free_indices(p.expr)
    if len(out) != 2 and fmt != "csf":
        fmt = data.draw(formats_for(len(out)))
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), threads=2,
                   output=fmt)

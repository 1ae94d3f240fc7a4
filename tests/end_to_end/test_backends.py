"""The central property on random problems: the compiled C equals the stream
interpreter and the dense reference, on one thread and on two, for dense and
sparse outputs (with index comparisons `A[i,j] * (i < j)` among the factors); and the whole lowered program, output writes included, run on
the Imp interpreter equals the reference."""
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.nodes import free_indices
from etchpy.testing import assert_same, check_backends, formats_for, problems
from tuned import on_interpreter


pytestmark = pytest.mark.usefixtures("shared_cache")


@settings(max_examples=40)
@given(problems(allow_compare=True))
def test_c_equals_streams_equals_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"))


@settings(max_examples=20)
@given(problems(max_indices=3, allow_compare=True),
       st.sampled_from(["csr", "csc", "dcsr", "coo", "csf"]),
       st.data())
def test_sparse_outputs_match_reference(p, fmt, data):
    out = free_indices(p.expr)
    if not out:
        return
    if len(out) != 2 and fmt != "csf" and fmt != "coo":
        fmt = data.draw(formats_for(len(out)))     # any mix of dense and compressed
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("streams", "c"),
                   output=fmt)


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
@given(problems(allow_compare=True))
def test_two_threads_equal_reference(p):
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), threads=2)


@settings(max_examples=30)
@given(problems(max_indices=3, allow_compare=True),
       st.sampled_from(["csr", "csc", "dcsr", "csf"]), st.data())
def test_two_threads_sparse_outputs_equal_reference(p, fmt, data):
    """Sparse outputs on two threads: csr/csc, doubly compressed, and for three
    output indices any mix of dense and compressed levels (fibers with a dense
    tail among them)."""
    out = free_indices(p.expr)
    if len(out) < 2:
        return
    if len(out) != 2 and fmt != "csf":
        fmt = data.draw(formats_for(len(out)))
    check_backends(p.expr, p.inputs, semiring=p.semiring, backends=("c",), threads=2,
                   output=fmt)

"""The oracles of etchpy's property tests (re-exported by etchpy.testing).

`check_backends(expr, inputs, ..., tuning=None)` evaluates on every backend
and asserts that they agree with the dense reference semantics; besides the
backends of `ep.evaluate` it knows "imp": the compiled Imp program run on the
Imp interpreter (`imp_evaluate`). `assert_same` compares two results over a
semiring; `run_plan_imp` runs a plan's lowered program on the Imp interpreter.
"""
from __future__ import annotations

import numpy as np

from .. import pipeline
from ..api import compile as compile_kernel, evaluate, imp_env
from ..expr.walk import tensors as tensors_of
from ..lower import lower_plan, run_program
from ..plan.convert import kernel_tensors
from ..plan.plan import make_plan
from ..runtime.outputs import read_output
from ..runtime.inputs import bind_inputs, index_sizes, make_output
from ..runtime.kernel import make_request
from ..runtime.planned import with_conversions
from ..semiring import Semiring, semirings
from ..tuning import of as tuning_of
from .kinds import check_calls


def assert_same(actual, expected, sr: Semiring, what: str = "") -> None:
    """Assert that results `actual` and `expected` (numpy arrays or scalars, scipy
    arrays, ep.Tensors) hold the same values over semiring `sr`: a sparse result's missing entries
    read as sr.zero; floats (and complex numbers) agree to rtol 1e-6. `what` heads the failure message.

        >>> assert_same(ep.evaluate(e, **inputs), expected, ep.semirings.real, "spmv")
    """
    a = dense_value(actual, sr)
    b = dense_value(expected, sr)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if sr.dtype.kind in "fc":
        close = np.isclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)
        ok = bool(np.all((a == b) | close))
    else:
        ok = bool(np.array_equal(a, b))
    assert ok, f"{what}: backends disagree\n{a}\nvs reference\n{b}"


def dense_value(x, sr: Semiring):
    """Any backend result as a dense array; a scipy result's implicit entries are sr.zero."""
    if hasattr(x, "tocoo"):
        coo = x.tocoo()
        out = np.full(coo.shape, sr.zero, dtype=sr.dtype)
        out[coo.row, coo.col] = coo.data
        return out
    if hasattr(x, "to_dense"):
        return np.asarray(x.to_dense())
    return np.asarray(x)


def check_backends(expr, inputs, semiring=None, backends=("streams", "c"), order=None,
                   output="dense", tuning=None, input_kind=None, **kw):
    """Evaluate `expr` on `inputs` ({name: array}) with the reference semantics and
    on each of `backends` ("c", "streams", "imp"); assert they all agree with the
    reference (`assert_same`). `semiring`, `order`, `output` and `tuning` (a
    Tuning, a preset name or a dict) are as for ep.evaluate; `kw` goes to every
    backend. With `threads` > 1 in `kw`, split loops run on threads whatever
    the inputs' size (tuning.thread_min_work 0). With `input_kind` (one of
    kinds.INPUT_KINDS: "numpy", "tensor", "shared", "scipy") the "c" backend's kernel
    is also called on the inputs as that kind, twice, on others of that kind with
    other values, and after a write in place (kinds.check_calls). Returns the
    reference value.

        >>> check_backends(ep.sum(j, A[i, j] * x[j]), {"A": M, "x": v},
        ...                semiring="min_plus", backends=("c",))
    """
    sr = semirings.get(semiring or semirings.real)
    if (kw.get("threads") or 1) > 1:      # (threads=None: the default, one)
        tuning = tuning_of(tuning).with_(thread_min_work=0)
    want = evaluate(expr, semiring=sr, backend="reference", output="dense", **inputs)
    for b in backends:
        if b == "imp":
            got = imp_evaluate(expr, inputs, semiring=sr, order=order, output=output,
                               tuning=tuning, **kw)
        else:
            got = evaluate(expr, semiring=sr, backend=b, order=order, output=output,
                           check=(b == "streams"), tuning=tuning, **inputs, **kw)
        assert_same(got, want, sr, what=f"backend {b} on {expr}")
    if input_kind is not None and "c" in backends:
        kern = compile_kernel(expr, semiring=sr, order=order, output=output, tuning=tuning,
                              **kw)
        check_calls(kern, expr, inputs, sr, input_kind,
                    lambda values: evaluate(expr, semiring=sr, backend="reference",
                                            output="dense", **{
                                                n: dense_value(v, sr) for n, v in
                                                values.items()}),
                    lambda got, ref, what: assert_same(got, ref, sr, f"{what} on {expr}"))
    return want


def imp_evaluate(expr, inputs, semiring=None, order=None, output="dense", tuning=None,
                 **kw):
    """`expr` compiled as for the C backend (`kw`: Kernel's other arguments), its Imp
    program run on the Imp interpreter (lower.run_program); the result as
    `ep.evaluate` gives it. Slow: for small test inputs."""
    req = make_request(expr, semiring=semiring, output=output, order=order,
                       every_size=True, tuning=tuning, **kw)
    compiled = pipeline.compile_request(req)
    sr, program = req.semiring, compiled.program
    bound = with_conversions(compiled.plan, bind_inputs(req.tensors, inputs, sr))
    sizes = index_sizes(compiled.plan, bound)
    shape = tuple(sizes[ix.name] for ix in req.out_indices)
    env = imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    dense = [p.name for p in program.params if p.kind == "out_dense"]
    zeroed = [p.name for p in program.params if p.kind == "out_zeroed"]
    for name in dense:
        env[name] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    for name in zeroed:
        env[name] = 0                # the program clears the output itself
    final = run_program(program, sr, env)
    if dense:
        return make_output(final[dense[0]].reshape(shape), shape, output, sr)
    out = program.output
    counts = {role: int(final[var]) for role, var in out.counts.items()}
    return read_output(out, req.out_format, sr,
                       lambda role, n, dtype: np.asarray(final[out.arrays[role]][:n],
                                                         dtype=dtype),
                       counts, shape, np.dtype(np.int64))


def run_plan_imp(expr, inputs, sr: Semiring, plan=None, **lower_options):
    """`expr`'s plan (default: make_plan(expr)) lowered with `lower_options` (lower_plan's
    keywords, such as tuning= or algorithms=) and run on the Imp interpreter into a
    zeroed dense output. Returns (output array, plan, bound inputs, index sizes).
    Slow: for small test inputs."""
    plan = make_plan(expr) if plan is None else plan
    bound = with_conversions(plan, bind_inputs(tensors_of(expr), inputs, sr))
    sizes = index_sizes(plan, bound)
    prog = lower_plan(plan, sr, kernel_tensors(plan, tensors_of(expr)), None,
                      **lower_options)
    env = imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    shape = tuple(sizes[v] for v in plan.out)
    env["out"] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    return run_program(prog, sr, env)["out"].reshape(shape), plan, bound, sizes

"""The public entry points `evaluate` and `einsum`, and the stream backend's driver.

    evaluate(e, semiring=..., backend="c"|"streams"|"reference", output="dense",
             order=None, **inputs)

The three backends share the input binding and the output marshalling of
`runtime.inputs`; "c" compiles a kernel (runtime.kernel), "streams" runs the
plan's steps in the indexed-stream interpreter, "reference" evaluates the dense
specification.
"""
from __future__ import annotations

import numpy as np

from .errors import InputError
from .expr import reference
from .expr.nodes import as_expr, free_indices, tensors
from . import imp
from .plan import plan as planning
from .runtime.inputs import (bind_inputs, check_out_indices, checked_out, index_sizes,
                             make_output, prepare_semiring)
from .runtime.kernel import compile as compile_kernel
from .runtime.tensor import Tensor
from . import streams

BACKENDS = ("c", "streams", "reference")


def evaluate(e, *, semiring=None, backend="c", output="dense", order=None,
             out_indices=None, check=False, threads=None, optimize=None,
             optimizer_options=None, out=None, **inputs):
    """Evaluate `e` on named inputs with one of the backends (see module docstring).

    "c" compiles (or reuses) a kernel; "streams" runs the indexed-stream
    interpreter (slow, faithful; `check=True` verifies the stream invariants at
    every step); "reference" is the dense specification. A dense result may be
    written into `out` (as for a compiled kernel: see `checked_out`).
    """
    if backend == "c":
        kern = compile_kernel(e, semiring=semiring, output=output, order=order,
                              out_indices=out_indices, threads=threads, optimize=optimize,
                              optimizer_options=optimizer_options)
        return kern(out=out, **inputs)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
    if out is not None and output not in (None, "dense"):
        raise InputError(f"out= needs a dense output, not {output!r}")
    e = as_expr(e)
    sr = prepare_semiring(e, semiring)
    out_ix = tuple(out_indices) if out_indices is not None else free_indices(e)
    check_out_indices(e, out_ix)
    bound = bind_inputs(tensors(e), inputs, sr)
    # the reference semantics has no loop order: any expression is evaluated
    plan = planning.make_plan(e, out_ix, order, walk=backend != "reference")
    sizes = index_sizes(plan, bound)
    shape = tuple(sizes[ix.name] for ix in out_ix)
    if out is not None:
        checked_out(out, shape, sr, [a for t in bound.values()
                                     for a in (t.vals, *(x for lv in t.levels
                                                         for x in lv.values()))])
    if backend == "reference":
        dense_in = {name: t.to_dense() for name, t in bound.items()}
        result = make_output(reference.evaluate(e, sr, dense_in, out_ix), shape, output, sr)
    else:
        values = run_plan_streams(plan, bound, sizes, sr, check=check)
        result = make_output(values, shape, output, sr)
    if out is None:
        return result
    np.copyto(out, result)
    return out


def einsum(spec: str, *operands, semiring=None, output="dense", backend="c"):
    """numpy-style `ep.einsum("ij,j->i", A, x)` over any semiring.

    Indices missing from the output are summed; scipy csr/csc/coo operands keep
    their sparse format, everything else is dense.
    """
    from .expr.einsum import einsum_expr
    expr, out, inputs = einsum_expr(spec, list(operands))
    return evaluate(expr, semiring=semiring, output=output, backend=backend,
                    out_indices=out, **inputs)


# ------------------------------------------------------------------------ inputs


# ------------------------------------------------------------------- streams


def imp_env(bound: dict[str, Tensor], sizes: dict[str, int]) -> dict:
    """The Imp environment: index sizes as dim_<index>, tensor arrays by their names."""
    env = {f"dim_{v}": n for v, n in sizes.items()}
    for name, t in bound.items():
        b = streams.array_names(name, t.format)
        env[b.vals] = t.vals
        for arrays, names in zip(t.levels, b.levels):
            for key, arr_name in names.items():
                env[arr_name] = arrays[key]
    return env


def run_plan_streams(plan: planning.Plan, bound, sizes, sr, check=False) -> dict:
    """Run every step of the plan with the stream interpreter; the output as a dict."""
    tensors_now = dict(bound)
    machine = imp.Machine(sr, imp_env(bound, sizes))
    result: dict = {}
    for step in plan.steps:
        bindings = {name: streams.array_names(name, t.format)
                    for name, t in tensors_now.items()}
        s = streams.lower_step(sr, bindings, step.body, step.order, step.bound)
        target = result if step.target == "out" else {}
        perm = _level_to_axis(step)
        values: dict = {}
        streams.run_stream(s, machine, values, check=check)
        for key, v in values.items():
            coord = tuple(key[p] for p in perm)
            target[coord] = sr.add(target[coord], v) if coord in target else v
        if step.target != "out":
            shape = tuple(sizes[v] for v in step.out)
            dense = np.full(shape, sr.zero, dtype=sr.dtype)
            for coord, v in target.items():
                dense[coord] = v
            t = Tensor.from_dense(dense, None, semiring=sr, name=step.target)
            tensors_now[step.target] = t
            b = streams.array_names(step.target, t.format)
            machine.env[b.vals] = t.vals
    return result


def _level_to_axis(step: planning.Step) -> list[int]:
    """Positions, within a stream key (free indices in loop order), of each output axis."""
    free_in_order = [v for v in step.order if v not in step.bound]
    return [free_in_order.index(v) for v in step.out]

# ------------------------------------------------------------------- outputs



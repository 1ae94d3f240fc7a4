"""The implementations the benchmark kernels share (bench/kernels.py): etchpy on
prebuilt and on raw inputs, GraphBLAS's spmv, and tensora on any assignment."""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from . import exprs
from .cases import Impl


# ------------------------------------------------------------------ etchpy impls

def prebuild(kernel, inputs):
    """Inputs converted once to ep.Tensor in the declared formats (not timed)."""
    out = {}
    for name, tv in kernel.tensors.items():
        v = inputs[name]
        if isinstance(v, ep.Tensor):
            out[name] = v
        elif sp.issparse(v):
            out[name] = ep.Tensor.from_scipy(v, tv.format, semiring=kernel.semiring, name=name)
        else:
            out[name] = ep.Tensor.from_dense(np.asarray(v), tv.format,
                                             semiring=kernel.semiring, name=name)
    return out


def etchpy_impls(expr_name, inputs, info, norm=None):
    """etchpy on prebuilt ep.Tensor inputs, and (when some input is scipy) on the raw
    scipy/numpy inputs, which the kernel converts and validates on every call."""
    expr, kw = exprs.get(expr_name)

    def build():
        k = ep.compile(expr, **kw)
        info["expression"] = str(k.expr)
        info["semiring"] = k.semiring.name
        info["loop order"] = "; ".join(f"{s.target} over ({', '.join(s.order)})"
                                       for s in k.plan.steps)
        tin = prebuild(k, inputs)
        return (lambda: k(**tin)), norm

    impls = [Impl("etchpy", build, role="etchpy",
                  note="compiled kernel, inputs prebuilt as ep.Tensor")]
    if any(sp.issparse(v) for v in inputs.values()):
        def build_raw():
            k = ep.compile(expr, **kw)
            return (lambda: k(**inputs)), norm
        impls.append(Impl("etchpy[scipy in]", build_raw, role="etchpy-raw",
                          note="same kernel fed scipy/numpy inputs (converted + validated "
                               "per call)"))
    return impls


# ------------------------------------------------------------------ peer helpers

def _gb(ctx):
    return ctx.peers.get("graphblas")


def gb_impl(ctx, operands, expr, answer, note):
    """A GraphBLAS side: `operands(gb)` converts the inputs once, outside the timing;
    each timed call evaluates `expr(gb, *ops)` (a lazy GraphBLAS expression) with
    `.new()` and waits for it; `answer(gb, result)` gives what the check compares."""
    gb = _gb(ctx)

    def build():
        ops = operands(gb)

        def f():
            r = expr(gb, *ops).new()
            r.wait()                  # finishes pending work (incl. sorting jumbled rows)
            return r
        return f, lambda r: answer(gb, r)
    return Impl("GraphBLAS", build, note=note)


def gb_spmv_impl(ctx, A, x):
    return gb_impl(ctx, lambda gb: (gb.io.from_scipy_sparse(A), gb.Vector.from_dense(x)),
                   lambda gb, Ag, xg: Ag.mxv(xg, gb.semiring.plus_times),
                   lambda gb, y: y.to_dense(fill_value=0.0),
                   "A.mxv(x, plus_times), 1 thread")


def tensora_impl(ctx, assignment, out_format, inputs, note=""):
    """tensora (cffi backend) on `inputs`: name -> (tensora format, array). A dense
    format takes a numpy array; a sparse one a scipy matrix or a 3-tensor (.i .j .k
    .vals .dims). It runs in this process or in tensora's own venv (bench/peers.py)."""
    peer = ctx.peers["tensora"]
    output = re.match(r"\s*(\w+)", assignment).group(1)

    def external(ctx):
        arrays, formats = {}, {}
        for name, (fmt, data) in inputs.items():
            formats[name] = fmt
            if isinstance(data, np.ndarray):
                arrays[name] = data
            elif sp.issparse(data):
                coo = data.tocoo()
                arrays[name + ".coords"] = np.vstack([coo.row, coo.col]).astype(np.int64)
                arrays[name + ".vals"], arrays[name + ".dims"] = coo.data, np.array(coo.shape)
            else:
                arrays[name + ".coords"] = np.vstack([data.i, data.j, data.k]).astype(np.int64)
                arrays[name + ".vals"], arrays[name + ".dims"] = data.vals, np.array(data.dims)
        spec = {"assignment": assignment, "formats": formats, "output": output,
                "output_format": out_format, "repeat": ctx.repeat, "budget": ctx.budget,
                "impl_budget": ctx.impl_budget}
        return peer.run(spec, arrays)
    where = "own venv" if peer.python else "in process"
    return Impl("tensora", None, external=external,
                note=note or f"tensor_method({assignment!r}), cffi backend, {where}")

"""Inputs and outputs of a kernel call: binding user values to declared tensors.

Inputs are bound by tensor name and turned into `Tensor`s of the declared
format (validated, canonicalised, cast to the semiring's dtype). Index sizes are
read off the inputs and must agree across every access. A dense result may be
written into a caller's `out` buffer; other results become a numpy array (a
numpy scalar for no free indices), a scipy sparse array for a 2-d sparse
output, or an `ep.Tensor` for an n-d sparse output.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..expr.nodes import Expr, Index, accesses, free_indices, uses_negation
from ..formats import Format
from ..plan import plan as planning
from ..semiring import Semiring, semirings
from .tensor import Tensor, truth_values

def checked_out(out, shape, sr, inputs) -> np.ndarray:
    """`out` when a dense result of `shape` may be written there: a C-contiguous,
    writeable numpy array of the semiring's dtype sharing no memory with any of
    the `inputs` arrays (a kernel clears out before reading them). Else
    InputError."""
    if not isinstance(out, np.ndarray):
        raise InputError(f"out must be a numpy array, not {type(out).__name__}")
    if out.shape != shape or out.dtype != sr.dtype:
        raise InputError(f"out must have shape {shape} and dtype {np.dtype(sr.dtype)} "
                         f"(semiring {sr.name}); got shape {out.shape}, dtype {out.dtype}")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise InputError("out must be C-contiguous and writeable")
    if any(np.may_share_memory(out, arr) for arr in inputs):
        raise InputError("out shares memory with an input; the kernel would overwrite "
                         "what it reads")
    return out


def prepare_semiring(e: Expr, semiring) -> Semiring:
    sr = semirings.get(semiring if semiring is not None else semirings.real)
    if uses_negation(e):
        sr.require("negation")
    return sr


def check_out_indices(e: Expr, out):
    free = set(free_indices(e))
    if set(out) != free or len(out) != len(free):
        raise InputError(f"output indices {tuple(out)} must be a permutation of the free "
                         f"indices {free_indices(e)}")


def bind_inputs(declared: dict, inputs: dict, sr: Semiring) -> dict[str, Tensor]:
    missing = sorted(set(declared) - set(inputs))
    if missing:
        raise InputError(f"missing input for tensor {', '.join(missing)}")
    extra = sorted(set(inputs) - set(declared))
    if extra:
        raise InputError(f"input {', '.join(extra)} is not a tensor of the expression "
                         f"(tensors: {', '.join(sorted(declared))})")
    return {name: as_tensor(inputs[name], tv, sr) for name, tv in declared.items()}


def as_tensor(value, tvar, sr: Semiring) -> Tensor:
    """`value` as a validated Tensor in exactly the format `tvar` declares.

    Every backend lowers with the declared format, so the bound tensor must have
    it: a matching layout is taken as it is, anything else is converted.
    """
    fmt: Format = tvar.format
    name = tvar.name
    if isinstance(value, Tensor):
        t = value
    elif _is_scipy_sparse(value):     # validated before any of scipy's own code reads it
        t = Tensor.from_scipy(value, fmt, semiring=sr, name=name)
    else:
        arr = np.asarray(value)
        if arr.dtype == object:
            raise InputError(f"input {name} is not a numeric array")
        if arr.ndim != tvar.order:
            raise InputError(f"input {name} has {arr.ndim} dimensions but {name} is "
                             f"declared with order {tvar.order}")
        arr = sr.cast(arr, what=f"input {name}")
        return Tensor.from_dense(arr, fmt, semiring=sr, name=name)
    if t.order != tvar.order:
        raise InputError(f"input {name} has {t.order} dimensions but {name} is declared "
                         f"with order {tvar.order}")
    if t.format != fmt:
        t = t.convert(fmt)
    if t.vals.dtype != sr.dtype or t.fill != sr.zero or truth_values(t.vals) is not t.vals:
        vals = truth_values(sr.cast(t.vals, what=f"input {name}"))
        t = Tensor(t.shape, t.format, t.levels, vals, sr.zero, validate=False, name=name)
    return t


def _is_scipy_sparse(x) -> bool:
    mod = type(x).__module__
    return mod.startswith("scipy.sparse")


def index_sizes(plan: planning.Plan, bound: dict[str, Tensor]) -> dict[str, int]:
    """The size of every index, read off the inputs; disagreement is an InputError."""
    sizes: dict[str, int] = {}
    where: dict[str, str] = {}
    for step in plan.steps:
        for acc in accesses(step.body):
            t = bound.get(acc.tensor.name)
            if t is None:      # a temporary: sized by its own step
                continue
            for mode, ix in enumerate(acc.indices):
                n = int(t.shape[mode])
                here = f"{acc.tensor.name} (mode {mode}, size {n})"
                if ix.name in sizes and sizes[ix.name] != n:
                    user = plan.origin.get(ix.name, ix.name)
                    raise InputError(f"index {user} has size {sizes[ix.name]} in "
                                     f"{where[ix.name]} but size {n} in {here}")
                sizes.setdefault(ix.name, n)
                where.setdefault(ix.name, here)
    return sizes


def make_output(values, shape, output, sr: Semiring):
    """Dense array / numpy scalar / scipy sparse / Tensor, from a dense array or a dict."""
    if isinstance(values, dict):
        dense = np.full(shape, sr.zero, dtype=sr.dtype)
        for coord, v in values.items():
            dense[coord] = v
    else:
        dense = np.asarray(values, dtype=sr.dtype).reshape(shape)
    if output in (None, "dense"):
        return dense[()] if dense.ndim == 0 else dense
    fmt = Format.parse(output, len(shape)) if not isinstance(output, Format) else output
    if isinstance(values, dict):
        coords = np.array(list(values.keys()), dtype=np.int64).reshape(-1, len(shape)).T
        vals = np.array(list(values.values()), dtype=sr.dtype)
        t = Tensor.from_coords(coords, vals, shape, fmt, semiring=sr, name="output")
    else:
        t = Tensor.from_dense(dense, fmt, semiring=sr, name="output")
    return t.to_scipy(keep_fill=True) if fmt in scipy_layouts() else t


def scipy_layouts() -> tuple[Format, Format]:
    """The output formats returned as scipy arrays (csr, csc); others are Tensors."""
    return Format.named("csr", 2), Format.named("csc", 2)


def output_indices(e, out_indices) -> tuple[Index, ...]:
    return tuple(out_indices) if out_indices is not None else free_indices(e)

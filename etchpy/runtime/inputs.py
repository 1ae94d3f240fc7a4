"""Inputs and outputs of a kernel call: binding user values to declared tensors.

Inputs are bound by tensor name and turned into `Tensor`s of the declared
format (validated, canonicalised, cast to the semiring's dtype). numpy arrays,
scipy.sparse arrays and matrices, `ep.Tensor`s, and pydata `sparse` and
python-graphblas arrays (runtime.foreign) are accepted. Index sizes are read off
the inputs and must agree across every access.

With no semiring given, the semiring follows the inputs' common dtype (numpy's
promotion of the inputs and the expression's literals): `infer_semiring`.

A dense result may be written into a caller's `out` buffer; other results become
a numpy array (a numpy scalar for no free indices), a scipy sparse array for a
2-d csr/csc output whose semiring's zero is 0, or an `ep.Tensor`, which carries
its fill value, for every other sparse output (`returns_scipy`).
"""
from __future__ import annotations

import difflib
import math
import os

import numpy as np

from . import foreign
from ..errors import InputError
from ..expr.compare import refuse_unordered
from ..expr.maps import check_semiring, promoting_literals
from ..expr.nodes import Expr, Index, Lit, free_indices
from ..expr.walk import accesses, subexprs, uses_negation
from ..expr.windows import label
from ..formats import Format
from ..plan import plan as planning
from ..semiring import Semiring, semirings
from .tensor import Tensor, frozen, truth_values
from .windows import WindowInput, bound_tensor

def prepare_semiring(e: Expr, semiring, inputs=None) -> Semiring:
    """The semiring of one evaluation: `semiring` (a Semiring or a built-in name),
    else the one the `inputs` (a dict by tensor name) call for (`infer_semiring`),
    else `complex` when a literal is complex, else `real`. SemiringError when
    the expression subtracts and it has no negation."""
    if semiring is not None:
        sr = semirings.get(semiring)
    elif inputs is not None:
        sr = infer_semiring([value_dtype(v) for v in inputs.values()], literal_values(e),
                            uses_negation(e), names=list(inputs))
    elif any(isinstance(v, complex) for v in literal_values(e)):
        sr = semirings.complex         # a complex literal needs the complex field
    else:
        sr = semirings.real
    if uses_negation(e):
        sr.require("negation")
    check_semiring(e, sr)
    refuse_unordered(accesses(e), sr)
    return sr


def infer_semiring(dtypes, literals=(), negation=False, names=()) -> Semiring:
    """The built-in semiring for the common dtype of the inputs' `dtypes` and the
    expression's `literals` (Python numbers, which take part as numpy's weak
    scalars do): see `semirings.for_dtype`. Neither gives `real`. An input whose
    dtype holds no numbers (object, strings, datetimes) is an InputError naming
    it (`names`, the inputs' names in the order of `dtypes`)."""
    for name, dt in zip(names, dtypes):
        if dt.kind not in "biufc":
            raise InputError(f"tensor {name!r} has dtype {dt}, which no built-in semiring "
                             f"computes in; convert it or pass semiring=")
    if not dtypes and not literals:
        return semirings.real
    return semirings.for_dtype(np.result_type(*dtypes, *literals), negation=negation)


def literal_values(e: Expr) -> tuple:
    """The literals of `e` as Python numbers, without the -1 that `a - b` writes,
    and the numbers by which its maps promote dtypes (expr.maps.promoting_literals)."""
    out = []
    for x in subexprs(e):
        if isinstance(x, Lit) and not x.negation:
            v = x.value.item() if isinstance(x.value, np.generic) else x.value
            out.append(v if isinstance(v, (bool, int, float, complex)) else float(v))
    return tuple(out) + promoting_literals(e)


def value_dtype(value) -> np.dtype:
    """The dtype of an input value: its `dtype` (graphblas: its numpy type), else
    numpy's reading of it."""
    dt = getattr(value, "dtype", None)
    if isinstance(dt, np.dtype):
        return dt
    np_type = getattr(dt, "np_type", None)          # a graphblas DataType
    if np_type is not None:
        return np.dtype(np_type)
    return np.asarray(value).dtype


def check_out_indices(e: Expr, out):
    free = set(free_indices(e))
    if set(out) != free or len(out) != len(free):
        raise InputError(f"output indices {tuple(out)} must be a permutation of the free "
                         f"indices {free_indices(e)}")


def bind_inputs(declared: dict, inputs: dict, sr: Semiring) -> dict[str, Tensor]:
    """Every declared tensor's input, as a Tensor of its declared format. The names
    must be exactly the declared ones (`check_names`); an iso one must store only
    the semiring's one (`check_iso`)."""
    check_names(declared, inputs)
    out = {name: bound_tensor(inputs[name], tv, lambda v, t: as_tensor(v, t, sr))
           if type(inputs[name]) is WindowInput else as_tensor(inputs[name], tv, sr)
           for name, tv in declared.items()}
    for name, tv in declared.items():
        if tv.iso:
            check_iso(inputs[name], out[name].vals, name, sr, out[name]._levels[-1].get("hsrt"))
    return out


def check_iso(value, vals: np.ndarray, name: str, sr: Semiring, slots=None) -> None:
    """Nothing when every stored value `vals` of the input `value` bound to the iso
    tensor `name` (ep.tensor(..., iso=True)) is the semiring's one (only those at
    `slots`, a hash level's entries: its empty slots hold the zero); else an
    InputError naming it. A Tensor whose values nothing can write
    (Tensor.pattern) is checked once, then remembered."""
    memo = None
    if type(value) is Tensor and vals is value.vals and frozen(vals):
        memo = value.__dict__.setdefault("_etchpy_iso", {})
        if memo.get(repr(sr.one)) is vals:
            return
    if slots is not None:
        vals = vals[slots]
    if vals.size and not np.all(vals == sr.one):
        raise InputError(f"input {name} is declared iso (every stored value the "
                         f"semiring's one, {sr.one}) but stores other values; pass "
                         f"its pattern (ep.Tensor.pattern) or declare it without iso")
    if memo is not None:
        memo[repr(sr.one)] = vals


def check_names(declared, given):
    """Nothing when the names `given` are exactly those `declared`; else an
    InputError naming each unknown name (with the closest declared name) and
    each missing one (a tensor, or a parameter of a comparison, a window or a
    onehot), and listing the expression's tensors."""
    unknown = [n for n in given if n not in declared]
    missing = [n for n in declared if n not in given]
    if not unknown and not missing:
        return
    parts = []
    for n in unknown:
        close = _closest(n, missing or list(declared))
        hint = f" (did you mean {close}?)" if close else ""
        parts.append(f"unknown input {n}{hint}: {n} is not a tensor of the expression")
    param = {n for n in declared if getattr(declared[n], "name", n) != n}  # not a tensor
    if gone := [n for n in missing if n not in param]:
        parts.append(f"missing input for tensor {', '.join(gone)}")
    if gone := [n for n in missing if n in param]:
        parts.append(f"missing parameter {', '.join(gone)}")
    raise InputError("; ".join(parts) + "; the expression's tensors are "
                     + ", ".join(n for n in declared if n not in param)
                     + (f" and its parameters {', '.join(sorted(param))}" if param else ""))


def _closest(name, candidates):
    same_case = [c for c in candidates if c.lower() == name.lower()]
    if same_case:
        return same_case[0]
    close = difflib.get_close_matches(name, candidates, n=1)
    return close[0] if close else None


def positional_error(declared, what="a kernel") -> TypeError:
    """The TypeError for inputs passed by position: they go by tensor name."""
    names = list(declared)
    example = ", ".join(f"{n}=..." for n in names) or "no inputs"
    return TypeError(f"{what} takes its inputs by tensor name, not by position: "
                     f"({example}); its tensors are {', '.join(names) or 'none'}")


def as_tensor(value, tvar, sr: Semiring) -> Tensor:
    """`value` as a validated Tensor in exactly the format `tvar` declares.

    Every backend lowers with the declared format, so the bound tensor must have
    it: a matching layout is taken as it is, anything else is converted. A value
    of the wrong order is an InputError naming the input and what it is.
    """
    fmt: Format = tvar.format
    name = tvar.name
    check_order(value, tvar)
    value = foreign.adapt(value, tvar, sr)
    if fmt.is_dense and not isinstance(value, np.ndarray) and getattr(value, "format", 0) != fmt:
        _check_dense_fits(value, tvar, sr)          # a conversion to dense is coming
    try:
        if isinstance(value, Tensor):
            t = value
        elif is_scipy_sparse(value):  # validated before any of scipy's own code reads it
            t = Tensor.from_scipy(value, fmt, semiring=sr, name=name)
        else:
            arr = np.asarray(value)
            if arr.dtype == object:
                raise InputError(f"input {name} is not a numeric array")
            arr = sr.cast(arr, what=f"input {name}")
            return Tensor.from_dense(arr, fmt, semiring=sr, name=name)
        if t.format != fmt:
            t = t.convert(fmt)
    except MemoryError as err:
        raise _too_big(value, tvar) from err
    t.check_layout()          # as `vals` would; a read of _vals is not a hand-out (its mark)
    if t._vals.dtype != sr.dtype or t.fill != sr.zero or truth_values(t._vals) is not t._vals:
        t = _recast(t, sr, name)
    return t


def _recast(t: Tensor, sr: Semiring, name: str) -> Tensor:
    """Tensor `t` over `sr`'s carrier and zero: its index arrays shared, its values as
    `sr.cast` makes them. The copy is kept on `t` per semiring and its values cast into
    it afresh on every call (a write into t's values is read; t's index arrays, never
    rebound, were validated once), so a Tensor passed again is not validated again."""
    kept, vals = t.__dict__.setdefault("_etchpy_recast", {}), t._vals
    hit = kept.get(id(sr))
    if hit is not None and hit[0] is sr:
        made, copied = hit[1], hit[2]      # copied: its values a buffer of its own
        if copied and sr.holds_exactly(vals.dtype):
            np.copyto(made._vals, vals, casting="unsafe")      # astype's values, in place
        elif copied:
            made._vals[...] = truth_values(sr.cast(vals, what=f"input {name}"))
        return made
    made = Tensor(t.shape, t.format, t._levels, truth_values(sr.cast(vals, what=f"input {name}")),
                  sr.zero, validate=False, name=name)
    if len(kept) >= 4:
        kept.clear()
    kept[id(sr)] = (sr, made, not np.may_share_memory(made._vals, vals))
    return made


def _check_dense_fits(value, tvar, sr):
    """InputError unless `value` made dense (as `tvar` declares it) fits in the
    machine's physical memory: a larger dense copy is never what the caller meant."""
    shape = getattr(value, "shape", None)
    if shape is None:
        return
    need = math.prod(int(n) for n in shape) * np.dtype(sr.dtype).itemsize
    pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    if pages > 0 and page > 0 and need > pages * page:
        raise _too_big(value, tvar)


def _too_big(value, tvar) -> InputError:
    """The InputError for an input whose conversion to `tvar`'s format cannot be
    allocated (a large sparse matrix bound to a tensor declared dense, say)."""
    hint = ""
    if tvar.format.is_dense and is_scipy_sparse(value):
        own = getattr(value, "format", "csr")
        hint = (f"; {tvar.name} is declared dense (the default): declare the input's "
                f"own format, ep.tensor({tvar.name!r}, {tvar.order}, format={own!r}) "
                f"or formats={{{tvar.name!r}: {own!r}}} with a statement string")
    return InputError(f"input {tvar.name} ({describe(value)}) cannot be converted to "
                      f"format {tvar.format}: not enough memory{hint}")


def check_order(value, tvar):
    """InputError unless `value` has as many dimensions as `tvar` has indices."""
    shape = getattr(value, "shape", None)
    if shape is None:
        shape = np.shape(value)
    if len(shape) != tvar.order:
        raise InputError(f"input {tvar.name} is {describe(value)} ({len(shape)} "
                         f"dimensions), but {tvar.name} is declared with order "
                         f"{tvar.order} (format {tvar.format})")


def describe(value) -> str:
    """A few words naming what an input value is, for messages."""
    if isinstance(value, Tensor):
        return f"an ep.Tensor of shape {value.shape}, format {value.format}"
    if is_scipy_sparse(value):
        return f"a scipy {type(value).__name__} ({value.format}) of shape {value.shape}"
    if foreign.kind(value):
        return foreign.describe(value)
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape}"
    return f"a {type(value).__name__} of shape {np.shape(value)}"


def conversion_note(value, tvar) -> str | None:
    """What a call does to bind `value` to `tvar` when its layout is not the
    declared format's (a conversion repeated on every call), with the way to
    convert once; None when the layout matches."""
    fmt, name = tvar.format, tvar.name
    if isinstance(value, Tensor) and value.__dict__.get("_etchpy_filter"):
        return None     # a key's filter: a vector over its codes (relational.filters)
    if isinstance(value, Tensor):
        have, fix = value.format, f"{name}.convert({str(fmt)!r})"
    elif is_scipy_sparse(value):
        have = value.format
        fix = (f"{name}.toarray()" if fmt.is_dense
               else f"ep.Tensor.from_scipy({name}, {str(fmt)!r})")
    elif foreign.kind(value):
        have = foreign.layout(value)
        fix = (f"{name}.todense()" if fmt.is_dense and foreign.kind(value) == "pydata"
               else f"ep.Tensor.from_coords(...) in format {str(fmt)!r}")
    else:
        have = "dense"
        fix = f"ep.Tensor.from_dense({name}, {str(fmt)!r})"
    if have == fmt or str(have) == str(fmt):    # (a Format: equal whatever its name)
        return None
    if not fmt.name:
        fix = fix.replace(repr(str(fmt)), "<the declared ep.Format>")
    return (f"input {name} is {describe(value)} but {name} is declared {fmt}: it is "
            f"converted on every call. Convert it once and pass the result instead, "
            f"e.g. {fix}")


def is_scipy_sparse(x) -> bool:
    """Is x a scipy.sparse array or matrix (told by its module, without importing scipy)?"""
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
                here = f"{label(acc.tensor)} (mode {mode}, size {n})"
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
        t = Tensor.from_coords(*records_kept(fmt, coords, vals, sr), shape, fmt, semiring=sr,
                               name="output")
    else:
        t = Tensor.from_dense(dense, fmt, semiring=sr, name="output")
    return t.to_scipy() if returns_scipy(fmt, sr) else t


def records_kept(fmt: Format, coords, vals, sr: Semiring) -> tuple:
    """An output's coordinate records (coords (order, n), vals (n,)) that its format
    stores: all of them, but those of the fill left out where the format drops the
    fill (Format.drops_fill, as the runs writer does; a NaN is kept)."""
    if not fmt.drops_fill:
        return coords, vals
    keep = vals != sr.zero
    return coords[:, keep], vals[keep]


def scipy_layouts() -> tuple[Format, Format]:
    """The output formats that scipy can hold (csr, csc)."""
    return Format.named("csr", 2), Format.named("csc", 2)


def returns_scipy(fmt: Format, sr: Semiring) -> bool:
    """Whether a sparse result of format `fmt` over `sr` is returned as a scipy
    array: csr or csc, and the semiring's zero is 0, which is what scipy reads
    where nothing is stored. Every other sparse result is an `ep.Tensor`, whose
    `fill` says what its missing entries are (+inf for min_plus)."""
    return fmt.order == 2 and sr.zero == 0 and fmt in scipy_layouts()


def output_indices(e, out_indices) -> tuple[Index, ...]:
    return tuple(out_indices) if out_indices is not None else free_indices(e)

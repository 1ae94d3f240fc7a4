"""The public entry points `compile`, `export_c`, `evaluate` and `einsum` (the stream
backend's driver: runtime.stream_run).

    compile(e, semiring=..., output="dense", order=None, tuning=None) -> Kernel
    export_c(e, name, directory, ...)        -> (name.c, name.h)
    evaluate(e, semiring=..., backend="c"|"streams"|"reference", output="dense",
             order=None, tuning=None, **inputs)

The three backends share the input binding and the output marshalling of
`runtime.inputs`; "c" compiles a kernel (runtime.kernel, through the stages of
etchpy.pipeline), "streams" runs the plan's steps in the indexed-stream
interpreter, "reference" evaluates the dense specification. `tuning` (an
etchpy.tuning.Tuning, a preset name or a dict of fields) sets the compiler's
knobs; only the "c" backend's code depends on them.
"""
from __future__ import annotations

import inspect
import pathlib
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Union

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse

from . import tuning as tuning_
from .c import gemm
from .c.export_names import check_export_name
from .errors import EtchpyError, InputError
from .expr import reference
from .expr.nodes import Expr, as_expr, free_indices
from .expr.walk import literal_bits, tensors
from .formats import Format
from .semiring import Semiring
from .expr.einsum import einsum_parts
from .plan import plan as planning
from .runtime.identity import user_tensors, with_identities
from .runtime.predicates import dense_value, parameter_names
from .runtime.planned import with_conversions
from .runtime.given_out import checked_out
from .runtime.inputs import (bind_inputs, check_names, check_out_indices, index_sizes,
                             is_scipy_sparse, make_output, positional_error, prepare_semiring)
from .runtime import einsum_calls, einsum_orders, foreign, statements
from .runtime.call_plans import MISS
from .runtime.kernel import Kernel
from .runtime.kernel_cache import KERNELS
from .runtime.tensor import Tensor
from .runtime.stream_run import imp_env, run_plan_streams  # noqa: F401 (api.imp_env: tests)

BACKENDS = ("c", "streams", "reference")

# what evaluate and einsum return: a dense array or scalar, a scipy.sparse array
# (sparse output, zero 0) or an ep.Tensor (sparse output whose zero is not 0)
Result = Union[np.ndarray, np.generic, "scipy.sparse.sparray", Tensor]

_einsum_calls = einsum_calls.Calls()       # ep.einsum's prepared calls (runtime.einsum_calls)
_calls = _einsum_calls.calls               # its table, looked up in one step (None: no key)
_dots = _einsum_calls.dots                 # its matmul.Dot calls by spec, dtypes and axes
_NDARRAY = np.ndarray                       # (the two-numpy-operand key, built inline)


def compile(expr: Expr | str, *, semiring: Semiring | str | None = None,  # noqa: A001
            output: str | Format = "dense", order=None, out_indices=None,
            formats: dict | None = None, name: str = "etchpy_kernel",
            threads: int | None = None, optimize: bool | None = None,
            optimizer_options: dict | None = None, tuning=None) -> Kernel:
    """Compile an expression (or an "y[i] = A[i,j] * x[j]" string) into a Kernel.

    Kernels are kept in process (runtime.kernel_cache) by every argument, the Tuning's key
    and the build environment. The expression becomes an Imp program now; its C is built
    on each input signature's first call, or ahead of time by `Kernel.build(**inputs)`.

    Parameters:
        expr: an expression, or a statement string (einsum convention: indices
            only on the right are summed).
        semiring: a Semiring or a built-in name; None (default) follows the
            inputs' common dtype on each call: float32 -> real32, float64 ->
            real, integers -> integer (int64), bool -> boolean, complex -> complex.
        output: "dense" (default), a named sparse format or an ep.Format. order: a
            fixed loop order (outermost first); out_indices: the output's.
        formats: {tensor name: format}, for the string front end only.
        name: the C function's name. threads: OpenMP threads (default
            ETCHPY_NUM_THREADS, else 1). optimize: run the optimizer (default:
            unless `order` is given), with `optimizer_options`. tuning: an
            ep.Tuning, a preset name or a dict of fields.
    Returns: a Kernel, called with the inputs by tensor name (`kern.explain()`).
    Raises: ExpressionTypeError, FormatError, SemiringError, OrderError.

        >>> kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
        >>> y = kern(A=scipy_csr, x=numpy_vector)
    """
    last = statements.last_args(expr, formats, output, semiring, name, threads, optimize,
                                order, out_indices, tuning, optimizer_options)
    if (kern := statements.last_kernel(last)) is not None:      # None for args None
        return kern
    options = statements.options_key(semiring, order, name, threads, optimize,
                                     optimizer_options, tuned := tuning_.of(tuning))
    text_key = statements.statement_key(expr, formats, out_indices, output, options)
    kern = None if text_key is None else KERNELS.get(("compile", text_key))
    if kern is None:
        expr, out_indices, output = _front_end(expr, formats, out_indices, output)
        key = (expr, literal_bits(expr), str(output),
               None if out_indices is None else tuple(out_indices), *options)
        kern = KERNELS.made(("compile", key), lambda: Kernel(
            expr, semiring=semiring, output=output, order=order, out_indices=out_indices,
            name=name, threads=threads, optimize=optimize, optimizer_options=optimizer_options,
            tuning=tuned))
        if text_key is not None:        # (an expression's: kept by `made` alone)
            KERNELS.put(("compile", text_key), kern)
    statements.remember(last, kern)
    return kern


def export_c(expr: Expr | str, name: str, directory: str | pathlib.Path, *,
             formats: dict | None = None, semiring: Semiring | str | None = None,
             output: str | Format = "dense", order=None, out_indices=None,
             index_type: str = "int64_t", threads: int | None = None,
             tuning=None, blas: str | None = None) -> tuple[pathlib.Path, pathlib.Path]:
    """Write `name.c` and `name.h`: a standalone kernel needing neither Python nor etchpy.

    The header documents the ABI (every parameter, how sparse outputs are returned
    and freed, the return codes).

    Parameters: expr, an expression or a statement string (`formats`,
    {tensor name: format}, for strings only); name, the C function's name (a C
    identifier; also the files'); directory, where to write them (created if
    missing); semiring (default real: a C kernel has one value type), output,
    order, out_indices, tuning: as for `compile`; index_type, "int64_t" or
    "int32_t"; threads, with threads > 1 (default: 1, or ETCHPY_NUM_THREADS) the
    kernel uses OpenMP when built with it (-fopenmp) and runs serially otherwise;
    blas, None (default: dense products stay fused loops, the files need no
    library) or "cblas" (they call cblas_dgemm/sgemm: link a CBLAS library). The
    header's first line says which.
    Returns: the paths of name.c and name.h.
    Raises: EtchpyError for a bad name, index_type or blas; as `compile` otherwise.

        >>> c_path, h_path = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", "out/")
        >>> # cc -O3 -c out/spmv.c; #include "spmv.h" from C or C++
    """
    check_export_name(name)
    if index_type not in ("int32_t", "int64_t"):
        raise EtchpyError("index_type is 'int32_t' or 'int64_t'")
    if blas not in gemm.EXPORT_CHOICES:
        raise EtchpyError(f"blas is None or 'cblas', not {blas!r}")
    expr, out_indices, output = _front_end(expr, formats, out_indices, output,
                                           strict=False)
    kern = Kernel(expr, semiring=semiring, output=output, order=order,
                  out_indices=out_indices, name=name, threads=threads, every_size=True,
                  tuning=replace(tuning_.of(tuning), conversions=False, keyed_ranges=False))
    src = kern.source(index_type, include_header=True)
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    c_path, h_path = out / f"{name}.c", out / f"{name}.h"
    c_text, header = gemm.for_export(src.c, src.header, blas)
    c_path.write_text(c_text)
    h_path.write_text(header)
    return c_path, h_path


def _front_end(expr, formats, out_indices, output, strict=True):
    """(expression, output indices, output) of a string statement or an expression;
    `formats` is for strings only (refused otherwise when `strict`)."""
    if isinstance(expr, str):
        if out_indices is not None:
            raise EtchpyError("out_indices= is for expressions; a statement's left-hand "
                              "side (y[i, j] = ...) gives the output's indices and order")
        parsed, indices, out_format = statements.parsed(expr, formats)
        if output == "dense" and out_format is not None:
            output = out_format
        return parsed, indices, output
    if formats and strict:
        raise EtchpyError("formats= is for the string front end; declare formats with "
                          "ep.tensor(name, order, format=...)")
    return as_expr(expr), out_indices, output


def evaluate(e: Expr | str, /, *args, **inputs) -> Result:
    """Evaluate `e` on inputs given by tensor name, with one of three backends.

    Parameters:
        e: an expression, or a statement string ("c" backend; statements.input_formats).
        semiring, output, order, out_indices, threads, optimize,
            optimizer_options, tuning: as for `compile`. With no semiring the
            result's dtype follows the inputs' (float32 in, float32 out).
        backend: "c" compiles (or reuses) a kernel; "streams" runs the
            indexed-stream interpreter (slow, faithful; `check=True` verifies the
            stream invariants at every step); "reference" is the dense
            specification.
        out: a dense result may be written there (see `Kernel.__call__`).
        inputs: numpy arrays, scipy.sparse arrays, ep.Tensors, pydata sparse or
            python-graphblas arrays, by tensor name.
    Returns: a numpy array or scalar; for a sparse output a scipy csr/csc array
        when the semiring's zero is 0, else an ep.Tensor carrying its fill.
    Raises: TypeError for positional inputs; InputError for bad inputs;
        ValueError for an unknown backend.

        >>> y = ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=scipy_csr, x=numpy_vector)
    """
    if not args and _OPTIONS.isdisjoint(inputs):     # no option: the call most loops make
        formats = statements.input_formats(e, inputs) if type(e) is str else None
        if (res := statements.last_call(e, formats, inputs)) is not MISS:
            return res                              # (compile's last: its call skipped)
    return _evaluate(e, *args, **inputs)


def _evaluate(e: Expr | str, /, *args, semiring: Semiring | str | None = None,
              backend: str = "c", output: str | Format = "dense", order=None,
              out_indices=None, check: bool = False, threads: int | None = None,
              optimize: bool | None = None, optimizer_options: dict | None = None,
              tuning=None, out: np.ndarray | None = None, **inputs) -> Result:
    """ep.evaluate with its options bound (its signature: `evaluate.__signature__`)."""
    if args:
        raise positional_error(tensors(_front_end(e, None, None, output)[0]), "ep.evaluate")
    if not (plain := semiring is None and order is None and out_indices is None
            and threads is None and optimize is None and tuning is None
            and optimizer_options is None and type(backend) is str and type(output) is str
            and type(check) is bool):
        _refuse_inputs_as_options(semiring=semiring, backend=backend, output=output,
                                  order=order, out_indices=out_indices, check=check,
                                  threads=threads, optimize=optimize, tuning=tuning,
                                  optimizer_options=optimizer_options)
    if backend == "c":     # a statement's sparse inputs declared as given (None: an Expr)
        formats = statements.input_formats(e, inputs, tuning) if type(e) is str else None
        if plain and (kern := statements.last_default(e, formats, output)) is not None:
            return kern(out=out, **inputs)          # (compile's last: its call skipped)
        return compile(e, semiring=semiring, output=output, order=order, formats=formats,
                       out_indices=out_indices, threads=threads, optimize=optimize,
                       optimizer_options=optimizer_options, tuning=tuning)(out=out, **inputs)
    return _interpret(e, backend, semiring, output, order, out_indices, check, out, tuning,
                      inputs)


_PLAIN = frozenset({str, bool, int, float, tuple, list, dict})     # never an array
_OPTIONS = frozenset(inspect.signature(_evaluate).parameters) - {"e", "args", "inputs"}
evaluate.__signature__ = inspect.signature(_evaluate)      # (help, inspect: the options)


def _refuse_inputs_as_options(**options):
    """An EtchpyError when an option of evaluate holds an array: the input of a
    tensor named like the option (`order`, `tuning`, ...) lands there."""
    for name, value in options.items():
        if value is None or type(value) in _PLAIN:
            continue
        if isinstance(value, (np.ndarray, Tensor)) or foreign.kind(value) or \
                is_scipy_sparse(value):
            raise EtchpyError(f"ep.evaluate's option {name}= got an array: a tensor named "
                              f"{name!r} cannot take its input through ep.evaluate, whose "
                              f"keyword it is; rename the tensor, or call "
                              f"ep.compile(...)({name}=...)")


def _interpret(e, backend, semiring, output, order, out_indices, check, out, tuning, inputs):
    """The value of e on the "streams" or "reference" backend (see evaluate)."""
    tuning_.of(tuning)                  # (a bad tuning= is refused on every backend)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
    if out is not None and output not in (None, "dense"):
        raise InputError(f"out= needs a dense output, not {output!r}")
    e = as_expr(e)
    check_names(user_tensors(tensors(e)), inputs)
    params = parameter_names(tensors(e))
    sr = prepare_semiring(e, semiring, {k: v for k, v in inputs.items() if k not in params})
    out_ix = tuple(out_indices) if out_indices is not None else free_indices(e)
    check_out_indices(e, out_ix)
    bound = bind_inputs(tensors(e), with_identities(tensors(e), inputs, sr, e), sr)
    # the reference semantics has no loop order: any expression is evaluated
    plan = planning.make_plan(e, out_ix, order, walk=backend != "reference")
    bound = with_conversions(plan, bound)       # inputs the plan reads converted
    sizes = index_sizes(plan, bound)
    shape = tuple(sizes[ix.name] for ix in out_ix)
    if out is not None:
        checked_out(out, shape, sr, [a for t in bound.values()
                                     for a in (t.vals, *(x for lv in t.levels
                                                         for x in lv.values()))])
    if backend == "reference":
        decl = tensors(e)
        dense_in = {name: dense_value(decl.get(name), t, sr, bound)
                    for name, t in bound.items()}
        result = make_output(reference.evaluate(e, sr, dense_in, out_ix), shape, output, sr)
    else:
        values = run_plan_streams(plan, bound, sizes, sr, check=check)
        result = make_output(values, shape, output, sr)
    if out is not None:
        np.copyto(out, result)
    return result if out is None else out


def einsum(spec: str, *operands, semiring: Semiring | str | None = None,
           output: str | Format | None = None, backend: str = "c", tuning=None) -> Result:
    """numpy-style `ep.einsum("ij,j->i", A, x)` over any semiring.

    Parameters:
        spec: numpy's einsum subscripts; indices missing from the output are summed.
        operands: numpy arrays (dense), scipy.sparse arrays (csr/csc/coo keep their
            format), 2-d pydata sparse and python-graphblas arrays (read as scipy's in
            their own layout), other pydata arrays of fill 0 (coo), others (dense).
        semiring: None (default) follows the operands' dtype, as numpy does.
        output, backend, tuning: as for `evaluate`; output None (default): csr for a
            matrix out of sparse operands (einsum_calls.default_output), else dense.
    Returns: as `evaluate` (dense: in its largest numpy operand's storage order, as
    numpy's; runtime.einsum_orders). Raises: FrontendError for a bad spec, InputError for
    shapes that disagree. A call is prepared once per spec, options and operands' types,
    dtypes and shapes, then found in one step (runtime.einsum_calls): one dense float or
    complex matrix product is numpy's matmul (`Tuning.blas`, `blas_casts`); one numpy
    operand under the default semiring is numpy's einsum, views included (`numpy_einsum`).

        >>> ep.einsum("ij,j->i", np.eye(2, dtype=np.float32), np.ones(2, np.float32))
        array([1., 1.], dtype=float32)
    """
    dot_key = None
    if semiring is None and tuning is None and output is None and backend == "c":
        if len(operands) == 2 and type(spec) is str:    # two numpy operands: the key inline
            a, b = operands
            if type(a) is _NDARRAY and type(b) is _NDARRAY:
                dot_key = (spec, a.dtype, b.dtype, a.ndim, b.ndim)
                dot = _dots.get(dot_key)
                if dot is not None:
                    try:        # ndarray.dot on fresh (no bases), small or contiguous arrays
                        if (a.base is None is b.base or a.nbytes <= dot.args[0] >= b.nbytes or (
                                a.base is None or a.flags.forc) and (b.base is None or b.flags.forc)):
                            return _NDARRAY.dot(a, b)
                        return dot(a, b)        # else the Dot (a view's flags read last: 35 ns)
                    except ValueError:      # sizes that disagree: named on the path below
                        pass
                call = _calls.get((spec, a.dtype, a.shape, b.dtype, b.shape))
                if call is not None:
                    return call(a, b)
        elif len(operands) == 1 and type(spec) is str and type(a := operands[0]) is _NDARRAY:
            if (call := _calls.get((spec, a.dtype, a.shape))) is not None:  # the key inline
                return call(a)
        key = einsum_calls.plain_key(spec, operands)    # the default options, in few steps
    else:
        key = einsum_calls.einsum_key(spec, operands, semiring, output, backend, tuning)
    call = _calls.get(key)
    if call is not None:
        return call(*operands)
    return _einsum_new(spec, operands, key, dot_key, semiring, output, backend, tuning)


def _einsum_new(spec, operands, key, dot_key, semiring, output, backend, tuning):
    """einsum of a call not prepared before: prepared and kept under `key` (and
    `dot_key`: see einsum_calls.Calls), or evaluated once where key is None."""
    if key is None:
        parts = einsum_parts(spec, [foreign.as_scipy(x) for x in operands])
        if output is None:
            output = einsum_calls.default_output(parts)
        return evaluate(parts.expr, semiring=semiring, output=output, backend=backend,
                        out_indices=parts.out, tuning=tuning, **parts.tensors)
    return _einsum_call(spec, operands, key, semiring, output, backend, tuning, dot_key)(*operands)


def _einsum_call(spec, operands, key, semiring, output, backend, tuning, dot_key=None):
    """The prepared call of einsum `spec` on operands like `operands` under its
    options: the one kept under `key` (None: einsum_calls.einsum_key's), else made
    and kept there (and under `dot_key`; not kept where that key is None too)."""
    if key is None:
        key = einsum_calls.einsum_key(spec, operands, semiring, output, backend, tuning)
    if (call := _calls.get(key)) is not None:
        return call
    parts = einsum_parts(spec, [foreign.as_scipy(x) for x in operands])
    out = output if output is not None else einsum_calls.default_output(parts)
    kernel = partial(einsum_calls.KernelCall, partial(
        compile, parts.expr, semiring=semiring, output=out, out_indices=parts.out,
        tuning=tuning), parts.at)
    call = einsum_calls.numpy_call(spec, parts, operands, semiring, out, tuning) or \
        einsum_calls.matmul_call(parts, operands, semiring, out, tuning, kernel) or kernel()
    call = einsum_orders.reordering(call, parts, operands, out, tuning, partial(
        _einsum_call, key=None, semiring=semiring, output=output, backend=backend,
        tuning=tuning))
    if key is not None:
        _einsum_calls.put(key, call, semiring, out, tuning, dot_key=dot_key)
    return call

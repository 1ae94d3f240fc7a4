"""The compile cache's keys and the statement strings behind them.

    parsed(text, formats)        (expression, output indices, output Format or None),
                                 parsed once per text and formats
    input_formats(text, inputs)  the formats ep.evaluate declares a statement's
                                 tensors in: their inputs' own (Tuning.input_formats)
    options_key(...)             the part of a compile key every front end shares
    statement_key(...)           a statement's key by its text (one lookup per call)
    last_args(...), last_kernel(args), remember(args, kern), last_default(...)
                                 compile's last statement (or expression object) with
                                 plain options, found again by comparing its arguments
    last_call(expr, formats, inputs)   ep.evaluate(expr, **inputs) with no option by that
                                 kernel, or MISS

Options are keyed by value, but a Semiring by its id (hashing one hashes its
callables): the cached kernel holds it, so the id is not reused while the entry
lives. A semiring's name is keyed by value: a name built at run time and freed
could hand its id to another name.
"""
from __future__ import annotations

from numpy import ndarray

from .. import tuning as tuning_
from ..expr.nodes import Expr
from ..expr.parse import parse
from ..expr.walk import tensors
from .inputs import is_scipy_sparse
from .tensor import Tensor
from .build import ENV_NAMES, env_reader
from .call_plans import MISS
from .kernel_cache import KERNELS
from .request import THREADS_VARIABLE, default_threads

__all__ = ["input_formats", "last_args", "last_call", "last_default", "last_kernel",
           "options_key", "parsed",
           "remember", "statement_key"]

_statements: dict = {}      # (text, formats) -> (expr, output indices, output format)
_orders: dict = {}          # text -> {tensor name: order}, for input_formats
# compile's last statement, one tuple (read at once): (its text or expression object, its
# options with the environment that selects a build and KERNELS' generation, its kernel):
# a cheaper key into KERNELS while nothing left it
_last: list = [(None, None, None)]
# the build environment (build.environment's names) and ETCHPY_NUM_THREADS, read at once
# as the environment holds them (a thread count read equal parses as it did)
_environment_now = env_reader(ENV_NAMES + (THREADS_VARIABLE,))


def parsed(text: str, formats: dict | None) -> tuple:
    """(expression, output indices, output Format or None) of a statement string,
    parsed once per text and `formats` (a statement's parse depends on nothing else)."""
    try:
        key = (text, tuple(sorted(formats.items())) if formats else ())
        hit = _statements.get(key)
    except TypeError:           # a format that does not hash: parse every time
        key = hit = None
    if hit is None:
        st = parse(text, formats)
        hit = (st.expr, st.indices, st.output_format)
        if key is not None:
            if len(_statements) >= 256:
                _statements.clear()
            _statements[key] = hit
    return hit


def input_formats(text, inputs: dict, tuning=None) -> dict | None:
    """{tensor name: format} for the inputs of statement `text` stored sparse: a 2-d
    scipy csr, csc or coo matrix or array of a 2-d tensor by its layout, an ep.Tensor
    of the tensor's order by its format (each then bound as it is, not converted);
    None when there is none (every tensor dense, as `formats=None` declares it), for
    an expression, or with `tuning`'s input_formats off (ep.evaluate's "c" backend).
    Inputs named nowhere in the statement are left to the kernel's checks."""
    if type(text) is not str or not tuning_.of(tuning).input_formats:
        return None
    orders = _orders.get(text)
    if orders is None:          # (the walk once per text, not per call)
        orders = {name: t.order for name, t in tensors(parsed(text, None)[0]).items()}
        if len(_orders) >= 256:
            _orders.clear()
        _orders[text] = orders
    out = {}
    for name, value in inputs.items():
        order = orders.get(name)
        if order is None or type(value) is ndarray:
            continue
        if type(value) is Tensor:
            if len(value.shape) == order:
                out[name] = value.format
        elif (order == 2 and is_scipy_sparse(value) and getattr(value, "ndim", 0) == 2
              and (fmt := getattr(value, "format", None)) in ("csr", "csc", "coo")):
            out[name] = fmt
    return out or None


def options_key(semiring, order, name, threads, optimize, optimizer_options, tuned) -> tuple:
    """ep.compile's options as a key (threads None reads ETCHPY_NUM_THREADS now)."""
    return (semiring if semiring is None or isinstance(semiring, str) else id(semiring),
            None if order is None else tuple(getattr(o, "name", o) for o in order), name,
            default_threads() if threads is None else threads, optimize,
            None if optimizer_options is None else repr(sorted(optimizer_options.items())),
            tuned.key())


def statement_key(expr, formats, out_indices, output, options):
    """compile's cache key for a statement string, by its text (one lookup, no parse
    nor walk of the expression); None for an expression or unhashable formats."""
    if type(expr) is not str or out_indices is not None:
        return None
    try:
        fmts = tuple(sorted(formats.items())) if formats else ()
        hash(fmts)
    except TypeError:
        return None
    return ("statement", expr, fmts, str(output), *options)


def last_args(expr, formats, output, semiring, name, threads, optimize, order, out_indices,
              tuning, optimizer_options):
    """ep.compile's arguments as the key of its last statement (`last_kernel`): (the
    statement string or the expression, the options with the build environment
    (runtime.build.environment), ETCHPY_NUM_THREADS and KERNELS' generation now), or None
    unless `expr` is a statement string or an expression and every option is None or
    plain (str, int, bool; `formats` a dict). An expression is found again only as the
    same object (equal expressions may differ in their literals' types; the syntax
    gives a rebuilt expression as the same object: expr.interned)."""
    if not (order is None and out_indices is None and tuning is None
            and optimizer_options is None and type(output) is str and type(name) is str
            and (semiring is None or type(semiring) is str)
            and (threads is None or type(threads) is int)
            and (optimize is None or type(optimize) is bool)
            and (formats is None or type(formats) is dict)
            and (type(expr) is str or isinstance(expr, Expr))):
        return None
    return expr, (formats and tuple(formats.items()), output, semiring, name, threads,
                  optimize, _environment_now(), KERNELS.generation)


def last_kernel(args):
    """The kernel of the last statement compiled when `args` are its arguments (the
    same expression object or an equal text, equal options, the same environment,
    nothing cleared from or evicted by KERNELS since), else None (always for None)."""
    if args is None:
        return None
    e, options, kern = _last[0]
    expr = args[0]
    return kern if (e is expr or type(e) is str and e == expr) and options == args[1] \
        else None


def last_default(expr, formats, output: str):
    """last_kernel(last_args(...)) of `expr` with `formats` and `output` and every other
    option compile's default (ep.evaluate's call), without the call of compile."""
    e, options, kern = _last[0]
    return kern if (e is expr or type(e) is str and e == expr) and options == (
        formats and tuple(formats.items()), output, None, "etchpy_kernel", None, None,
        _environment_now(), KERNELS.generation) else None


def last_call(expr, formats, inputs: dict):
    """ep.evaluate(expr, **inputs) with every option its default, by compile's last kernel
    when last_default(expr, formats, "dense") is that kernel: the plan its keyword call
    tries first (Kernel._use), else that call (the same result, checks and errors); MISS
    when the last kernel is not expr's (ep.evaluate then compiles)."""
    e, options, kern = _last[0]
    if (e is expr or type(e) is str and e == expr) and options == (
            formats and tuple(formats.items()), "dense", None, "etchpy_kernel", None, None,
            _environment_now(), KERNELS.generation):
        if (first := kern._first) is None or (res := first(inputs)) is MISS:
            return kern(**inputs)
        return res
    return MISS


def remember(args, kern) -> None:
    """`kern` is compile's answer to `args` (last_args; None: nothing kept),
    kept in KERNELS."""
    if args is not None:
        _last[0] = (args[0], args[1][:-1] + (KERNELS.generation,), kern)

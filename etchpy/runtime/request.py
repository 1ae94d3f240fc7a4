"""A compile request from a kernel's arguments: `make_request` checks and
normalises them into a `pipeline.Request`; `request_key` is its stable key (the
name of its manifest on disk); `default_threads` reads ETCHPY_NUM_THREADS.
"""
from __future__ import annotations

import hashlib
import os

from .. import pipeline
from ..version import __version__
from .. import host_facts, tuning as tuning_
from . import build
from . import inputs as io_
from ..errors import EtchpyError
from ..expr import keyed
from ..expr.same_inputs import same_inputs
from ..expr.nodes import as_expr
from ..formats import Format
from ..semiring import semirings


def make_request(expr, *, semiring=None, output="dense", order=None, out_indices=None,
                 name="etchpy_kernel", threads=None, optimize=None, optimizer_options=None,
                 every_size=False, tuning=None) -> pipeline.Request:
    """A compile request from Kernel's arguments, checked and normalised (a keyed
    column's comparisons made ranges, one input's factors of a product joined:
    expr.same_inputs, under Tuning.one_walk). The optimizer option
    `rewrite_margin` sets the Tuning field of that name."""
    tuned = tuning_.of(tuning)          # as given: its host fields (-1) resolved where read
    expr = as_expr(expr)
    if tuned.keyed_ranges:              # a keyed column's comparisons: ranges of codes
        expr = keyed.ranges(expr)
    if tuned.one_walk:                  # one input's factors of a product: walked once
        expr = same_inputs(expr)
    sr = io_.prepare_semiring(expr, semiring)
    out_ix = io_.output_indices(expr, out_indices)
    io_.check_out_indices(expr, out_ix)
    out_format = None if output in (None, "dense") else (
        output if isinstance(output, Format) else Format.parse(output, len(out_ix)))
    n_threads = default_threads() if threads is None else int(threads)
    if n_threads < 1:
        raise EtchpyError(f"threads must be at least 1, got {threads}")
    options = dict(optimizer_options or {})
    if "rewrite_margin" in options:
        tuned = tuned.with_(rewrite_margin=options.pop("rewrite_margin"))
    return pipeline.Request(
        expr, sr, out_ix, out_format,
        None if order is None else tuple(getattr(o, "name", o) for o in order),
        name, n_threads, (order is None) if optimize is None else bool(optimize),
        options, bool(every_size), tuned)


def request_key(req: pipeline.Request) -> str | None:
    """A stable key of one compile request (for the manifest on disk), or None when
    some part of it has no stable text (a semiring defined at run time)."""
    if getattr(semirings, req.semiring.name, None) is not req.semiring:
        return None
    fmts = sorted((n, repr(tv.format), tv.order, tv.iso) for n, tv in req.tensors.items())
    parts = (__version__, build.compiler_fingerprint(), host_facts.resolved(req.tuning).key(),
             str(req.expr),
             repr(req.expr), fmts, req.semiring.name, repr(req.out_format), req.order,
             [ix.name for ix in req.out_indices], req.name, req.threads, req.optimize,
             repr(sorted(req.options.items())), req.every_size)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


THREADS_VARIABLE = "ETCHPY_NUM_THREADS"
_threads_env = build.env_reader((THREADS_VARIABLE,))
_threads_seen: list = [None, 1]     # the last value read and its thread count


def default_threads() -> int:
    """ETCHPY_NUM_THREADS, else 1 (single-threaded unless asked); read on every
    call (a fast read of the live environment), parsed when it changed."""
    raw, = _threads_env()
    if raw is _threads_seen[0]:
        return _threads_seen[1]
    value = "1" if raw is None else os.fsdecode(raw) if isinstance(raw, bytes) else raw
    try:
        n = max(1, int(value))
    except ValueError:
        raise EtchpyError(f"ETCHPY_NUM_THREADS must be an integer, got {value!r}") from None
    _threads_seen[:] = [raw, n]
    return n

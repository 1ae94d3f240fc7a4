"""The implicit identity tensors of diagonal accesses, bound at call time.

An access that repeats an index, `A[i, i]`, is built as Σ_i' A[i, i'] · δ[i, i']
(expr.diagonal), where δ is an `IdentityVar`: a tensor of the expression
that no caller passes. `with_identities` adds each missing one to a call's
inputs: its n×n shape, n read off the shape of the source input, whose two
repeated modes must have one size; it stores nothing (a kernel reads it as the
equality of its two indices; predicates.dense_value gives its values).
proofs_notes/diagonal.md.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..expr.compare import CompareVar
from ..expr.nodes import IdentityVar
from ..semiring import Semiring
from ..expr.windows import WindowVar
from .predicates import caller_inputs, index_pairs, with_predicates
from .tensor import Tensor
from . import windows


def user_tensors(declared: dict) -> dict:
    """What a caller passes for the tensors `declared` (every one but the implicit
    identities and comparisons, plus the comparisons' sources and parameters:
    runtime.predicates): the names to check a call's inputs against before
    `with_identities`."""
    own = {name: tv for name, tv in declared.items()
           if not isinstance(tv, (IdentityVar, CompareVar, WindowVar))}
    return {**own, **caller_inputs(declared), **windows.caller_inputs(declared)}


def has_implicit(declared: dict) -> bool:
    """Does `declared` hold a tensor that no caller passes (an identity, a comparison,
    a window)?"""
    return any(isinstance(tv, (IdentityVar, CompareVar, WindowVar))
               for tv in declared.values())


def with_identities(declared: dict, inputs: dict, sr: Semiring, expr=None,
                    reuse: bool = True) -> dict:
    """`inputs` plus the identity of every IdentityVar in `declared` that it lacks
    (one whose source input is missing is left out, for bind_inputs to name), and,
    given the expression `expr`, its comparisons' tensors (runtime.predicates,
    `reuse` its alignments); and each window's input (runtime.windows)."""
    extra = {name: identity(tv, inputs[tv.source], sr) for name, tv in declared.items()
             if type(tv) is IdentityVar and name not in inputs and tv.source in inputs}
    compares = expr is not None and any(isinstance(tv, CompareVar) for tv in declared.values())
    inputs = windows.with_windows(declared, {**inputs, **extra} if extra else inputs,
                                  keep=compares)
    return with_predicates(expr, inputs, sr, reuse) if compares else inputs


def identity(tv: IdentityVar, source, sr: Semiring) -> Tensor:
    """δ for a diagonal of `source` over modes tv.modes (their sizes must agree): its
    n×n shape, nothing stored (its stream is the equality of its indices)."""
    shape = getattr(source, "shape", None)
    shape = np.shape(source) if shape is None else tuple(shape)
    m0, m1 = tv.modes
    if len(shape) <= max(m0, m1):
        return index_pairs(tv, (0, 0), sr)        # a wrong order: bind_inputs names it
    if shape[m0] != shape[m1]:
        raise InputError(f"{tv.source} repeats an index at modes {m0} and {m1} (a "
                         f"diagonal), so they must have one size; they have sizes "
                         f"{shape[m0]} and {shape[m1]}")
    return index_pairs(tv, (int(shape[m0]),) * 2, sr)

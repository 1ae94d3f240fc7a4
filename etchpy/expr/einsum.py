"""numpy-style einsum specs ("ij,j->i") as etchpy expressions over the given operands.

A spec names one operand per comma-separated term, one letter (a-z, A-Z) per
dimension; an optional '->' names the output. Each operand becomes the tensor
`T<k>`, stored as csr / csc / coo when it is a scipy.sparse matrix in that layout,
else dense. Every error is a `FrontendError` with a caret under the offending
character.
"""
from __future__ import annotations

from collections import Counter

from . import nodes as ex
from ..errors import ExpressionTypeError, FormatError
from .lexer import FrontendError, FrontendFormatError
from .nodes import Expr, Index, TensorVar

__all__ = ["einsum_expr"]

_SPARSE_FORMATS = {"csr": "csr", "csc": "csc", "coo": "coo"}

Letters = list[tuple[str, int]]   # (letter, position in the spec)


def einsum_expr(spec: str, operands: list) -> tuple[Expr, tuple[Index, ...], dict[str, object]]:
    """Expression, output indices and {"T0": operand0, ...} for a numpy einsum spec.

    The expression is the product T0[...] * T1[...] * ... (left to right) under
    one Σ over the indices not in the output (in order of first appearance).
    Without '->' the output is every index that occurs exactly once, sorted.
    """
    if not isinstance(spec, str):
        raise ExpressionTypeError(f"an einsum spec is a string, got {type(spec).__name__}")
    operands = list(operands)
    arrow = spec.find("->")
    if arrow >= 0 and spec.find("->", arrow + 2) >= 0:
        raise FrontendError("an einsum spec has at most one '->'", spec,
                            spec.find("->", arrow + 2))
    terms, starts = _terms(spec, arrow if arrow >= 0 else len(spec))
    if len(terms) != len(operands):
        raise FrontendError(f"the einsum spec has {len(terms)} operand"
                            f"{'' if len(terms) == 1 else 's'} but {len(operands)} "
                            f"{'was' if len(operands) == 1 else 'were'} given", spec, None)
    counts = _letter_counts(spec, terms)
    if arrow >= 0:
        out_names = _output_letters(spec, arrow, counts)
    else:
        out_names = sorted(c for c, n in counts.items() if n == 1)
    product, tensors = _product(spec, terms, starts, operands)
    order = list(dict.fromkeys(c for term in terms for c, _ in term))
    summed = tuple(Index(c) for c in order if c not in out_names)
    expr = ex.sum(summed, product) if summed else product
    return expr, tuple(Index(c) for c in out_names), tensors


def _terms(spec: str, lhs_end: int) -> tuple[list[Letters], list[int]]:
    """The letters of each comma-separated term before `lhs_end`, and where each starts."""
    terms: list[Letters] = []
    starts: list[int] = []
    start = 0
    while True:
        comma = spec.find(",", start, lhs_end)
        stop = lhs_end if comma < 0 else comma
        terms.append(_letters(spec, start, stop))
        starts.append(start)
        if comma < 0:
            return terms, starts
        start = comma + 1


def _letters(spec: str, start: int, stop: int) -> Letters:
    out = []
    for pos in range(start, stop):
        c = spec[pos]
        if c.isspace():
            continue
        if c == ".":
            raise FrontendError("ellipsis '...' is not supported in einsum specs", spec, pos)
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise FrontendError(f"unknown character {c!r} in einsum spec (subscripts are "
                                f"letters a-z, A-Z)", spec, pos)
        out.append((c, pos))
    return out


def _letter_counts(spec: str, terms: list[Letters]) -> Counter:
    """How many operands use each letter; a letter repeated within one operand is refused."""
    counts: Counter = Counter()
    for term in terms:
        seen = set()
        for c, pos in term:
            if c in seen:
                raise FrontendError(f"index {c} repeats within one operand (a diagonal), "
                                    f"which is not supported", spec, pos)
            seen.add(c)
            counts[c] += 1
    return counts


def _output_letters(spec: str, arrow: int, counts: Counter) -> list[str]:
    """The letters after '->': distinct, and each used by some operand."""
    out: list[str] = []
    for c, pos in _letters(spec, arrow + 2, len(spec)):
        if c in out:
            raise FrontendError(f"output index {c} appears twice", spec, pos)
        if c not in counts:
            raise FrontendError(f"output index {c} does not occur in any operand", spec, pos)
        out.append(c)
    return out


def _product(spec: str, terms: list[Letters], starts: list[int],
             operands: list) -> tuple[Expr, dict[str, object]]:
    """T0[...] * T1[...] * ..., and the operands by tensor name."""
    tensors: dict[str, object] = {}
    product: Expr | None = None
    for k, (term, operand) in enumerate(zip(terms, operands)):
        name = f"T{k}"
        shape = getattr(operand, "shape", None)
        if shape is not None and len(shape) != len(term):
            pos = term[0][1] if term else starts[k]
            raise FrontendError(f"operand {k} has {len(shape)} dimensions but the spec gives "
                                f"it {len(term)} ind{'ex' if len(term) == 1 else 'ices'}",
                                spec, pos)
        try:
            tv = TensorVar(name, len(term), _infer_format(operand))
        except FormatError as e:
            raise FrontendFormatError(f"operand {k} ({e})", spec,
                                      term[0][1] if term else None) from e
        acc = tv[tuple(Index(c) for c, _ in term)]
        product = acc if product is None else product * acc
        tensors[name] = operand
    if product is None:
        raise FrontendError("einsum needs at least one operand", spec, None)
    return product, tensors


def _infer_format(operand) -> str:
    if type(operand).__module__.startswith("scipy"):
        import scipy.sparse   # lazily: scipy.sparse is heavy to import
        if scipy.sparse.issparse(operand):
            return _SPARSE_FORMATS.get(operand.format, "dense")
    return "dense"

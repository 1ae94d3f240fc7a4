"""Checks and positions over the text front end's parse tree (expr.parse): where each
index first occurs, the output's format, and which indices are summed where.

Each function reads parse-tree nodes (`kind`, `pos`, `kids`, `data`; an access's data is
(TensorVar, [(index name, pos)], windows)) and raises the parser's FrontendError, with a
caret under the offending token, for a statement that breaks the einsum convention.
"""
from __future__ import annotations

from collections import Counter

from ..errors import FormatError
from .lexer import FrontendFormatError
from .nodes import TensorVar

__all__ = ["first_positions", "output_format", "check_summed"]


def first_positions(node, out: dict[str, int]) -> dict[str, int]:
    """Position of the first free-or-bound occurrence of each index, in text order."""
    if node.kind == "access":
        for name, pos in node.data[1]:
            out[name] = min(pos, out.get(name, pos))
    for kid in node.kids:
        first_positions(kid, out)
    return out


def output_format(p, out: str, out_order: int, out_pos: int):
    """The output's Format from `formats` (None if not given); the output tensor used on
    the right (y[i] = y[i] + ...) must have the order of the left-hand side."""
    if out in p.orders and p.orders[out][0] != out_order:
        order, pos = p.orders[out]
        raise p.error(f"tensor {out} has order {out_order} on the left-hand side but is used "
                      f"here with {order} ind{'ex' if order == 1 else 'ices'}", pos)
    if out not in p.formats:
        return None
    try:
        return TensorVar(out, out_order, p.formats[out]).format
    except FormatError as e:
        raise FrontendFormatError(f"tensor {out} ({e})", p.text, out_pos) from e


def check_summed(p, lhs, rhs, total: Counter) -> None:
    """Each output index is free on the right; an index bound by sum(...) is used nowhere
    else (neither on the left nor outside its sum)."""
    for name, pos in lhs:
        if name in p.bound:
            raise p.error(f"cannot sum over index {name}, which is on the left-hand side",
                          p.bound[name])
        if total[name] == 0:
            raise p.error(f"index {name} on the left-hand side does not occur free on the "
                          f"right-hand side", pos)
    for name, pos in p.bound.items():
        if total[name]:
            use = min(pos2 for n, pos2 in free_positions(rhs) if n == name)
            raise p.error(f"index {name} is bound by the sum(...) from column {pos + 1} and "
                          f"also used outside it", use)


def free_positions(node, bound: frozenset = frozenset()):
    """(name, pos) of every index occurrence not bound by an enclosing sum."""
    if node.kind == "access":
        for name, pos in node.data[1]:
            if name not in bound:
                yield name, pos
    if node.kind == "sum":
        bound = bound | {n for n, _ in node.data}
    for kid in node.kids:
        yield from free_positions(kid, bound)

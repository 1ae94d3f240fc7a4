"""Maps in expressions: the `ep.map` builder and what the layers above ask of
the maps an expression holds (the registry of named maps is etchpy.maps).

⟦map f e⟧ = f applied to each entry of the completed dense value of e, after
e's sums: f(0) where e is absent. proofs_notes/map.md says how each backend
computes it.
"""
from __future__ import annotations

from .. import maps
from .interned import NODES, literal_key
from .nodes import Expr, Map, as_expr
from .walk import subexprs


def map(fn: str, e, arg: float | None = None) -> Expr:  # noqa: A001 - public name ep.map
    """fn applied to each entry of e's value, after e's sums and also where e
    is absent (so exp of a sparse operand is dense). fn: "exp", "log", "sqrt",
    "abs", "recip" (1/x), "neg", "conj", "real", "imag", or "maximum" /
    "minimum" with the scalar `arg`. The free indices are e's. Needs a numeric
    semiring (real, real32, integer, complex or complex64; exp, log, sqrt and
    recip: a float or complex one; maximum and minimum: not complex), see
    etchpy.maps; log and sqrt of a negative real give nan, as numpy's do.

    Returns: a Map expression (one node per fn, e and arg: expr.interned).
    Raises: MapError (a TypeError and a ValueError) naming fn, for an unknown fn
    or a missing or extra arg.

        >>> relu = ep.map("maximum", ep.sum(j, A[i, j] * x[j]), 0.0)
        >>> ex = ep.map("exp", A[i, j])            # dense, even for A csr
    """
    a = as_expr(e)
    if type(fn) is not str or (arg is not None and (bits := literal_key(arg, False)) is None):
        return Map(fn, a, arg)              # (kept only for a name and a plain arg)
    return NODES.made(("map", fn, id(a), arg if arg is None else bits), Map, fn, a, arg)


def maps_of(e: Expr) -> list[Map]:
    """Every map in e, outermost first."""
    return [x for x in subexprs(e) if isinstance(x, Map)]


def check_semiring(e: Expr, sr) -> None:
    """SemiringError naming the first map of e that semiring sr cannot compute
    (etchpy.maps.check_semiring)."""
    for m in maps_of(e):
        maps.check_semiring(m.fn, sr, m.arg)


def promoting_literals(e: Expr) -> tuple:
    """Python numbers that, taken with the inputs' dtypes as numpy's weak
    scalars, give the dtype numpy's maps would: 1.0 for a real valued map
    (exp of an integer array is float64; of a float32 one, float32), else 0
    (a bool operand computes in integers: no map is boolean), and each map's
    arg."""
    out: list = []
    for m in maps_of(e):
        out.append(1.0 if maps.MAPS[m.fn].real else 0)
        if m.arg is not None:
            out.append(float(m.arg) if not float(m.arg).is_integer() else int(m.arg))
    return tuple(out)

"""A product of boolean factors rendered as the unsigned minimum of their bytes.

The boolean semiring's ⊗ is `((a != 0) & (b != 0))` on a one-byte carrier (any
nonzero byte is true). A chain of n factors rendered one ⊗ at a time is n tests
and n - 1 ands (in AVX-512, a byte compare into a mask register per factor and
mask ands); for unsigned bytes, all of them are nonzero exactly when their
minimum is, so the chain is n - 1 `vpminub` and one test (proofs_notes/
bool_product.md). A 3×3 erosion's nine shifted windows are nine such factors.

A factor is taken as its byte where it is a load of a value array (ep_val_t) or
a value scalar without a view; any other factor (a nested sum, a map, a narrow
view) enters as its own test, `(x != 0)`, so no wider value is cut to a byte.
Switch: `Tuning.bool_product_min`.
"""
from __future__ import annotations

import numpy as np

from ..imp import Load, Ring, Var, subterms

BOOL_AND = "(({a} != 0) & ({b} != 0))"


def applies(semiring, tuning) -> bool:
    """Does a product over `semiring` render as a minimum of bytes? (The built-in
    boolean ⊗ spelled as above, on a one-byte carrier, with the knob on.)"""
    dt = np.dtype(semiring.dtype)
    return (tuning.bool_product_min and semiring.mul.c == BOOL_AND
            and dt.itemsize == 1 and dt.kind in "bu")


def factors(x) -> list:
    """The factors of a chain of Ring("mul") nodes, left to right."""
    match x:
        case Ring("mul", a, b):
            return factors(a) + factors(b)
    return [x]


def render(fb, x, e) -> str:
    """C text of the product x (a Ring("mul")) in FunctionBody fb, each factor
    rendered by e: `(ep_and_min(...(ep_and_min(f1, f2), ...), fn) != 0)`."""
    out = None
    for f in factors(x):
        text = e(f) if _is_byte(fb, f) else f"({e(f)} != 0)"
        out = text if out is None else f"ep_and_min({out}, {text})"
    return f"({out} != 0)"


def uses(semiring, tuning, body) -> bool:
    """Does the program render any product this way (the helper is then needed)?"""
    return applies(semiring, tuning) and any(
        isinstance(x, Ring) and x.op == "mul" for x in subterms(body))


def _is_byte(fb, f) -> bool:
    match f:
        case Load(arr, _, _, view) if not view:
            return fb.arrays.get(arr) == "ep_val_t"
        case Var(name):
            return fb.scalars.get(name) == "ep_val_t"
    return False

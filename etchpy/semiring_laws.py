"""The commutative-semiring laws checked on sample values (`ep.check_axioms`):
a user-defined Semiring's test before it is trusted."""
from __future__ import annotations

import itertools

import numpy as np

from .semiring import Semiring

__all__ = ["check_axioms"]


def check_axioms(semiring: Semiring, values, *, rtol: float = 1e-9) -> list[tuple]:
    """Check the commutative-semiring laws on every triple of sample `values`.

    Parameters: semiring, the Semiring to check; values, sample carrier values
    (zero and one are added); rtol, the relative tolerance floating carriers are
    compared with.
    Returns: a list of (law, a, b, c) failures; empty means all laws held.

        >>> ep.check_axioms(ep.semirings.min_plus, [0.0, 1.0, 2.5, np.inf])
        []
    """
    sr = semiring
    vals = [sr.dtype.type(v) for v in values] + [sr.zero, sr.one]
    add, mul = sr.add, sr.mul

    def eq(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if sr.dtype.kind in "fc":
            return bool(np.isclose(x, y, rtol=rtol, atol=0, equal_nan=True) or x == y)
        return bool(x == y)

    failures = []
    for a, b, c in itertools.product(vals, repeat=3):
        laws = {
            "add associative": (add(add(a, b), c), add(a, add(b, c))),
            "mul associative": (mul(mul(a, b), c), mul(a, mul(b, c))),
            "distributive": (mul(a, add(b, c)), add(mul(a, b), mul(a, c))),
        }
        for law, (x, y) in laws.items():
            if not eq(x, y):
                failures.append((law, a, b, c))
    for a, b in itertools.product(vals, repeat=2):
        if not eq(add(a, b), add(b, a)):
            failures.append(("add commutative", a, b, None))
        if not eq(mul(a, b), mul(b, a)):
            failures.append(("mul commutative", a, b, None))
    for a in vals:
        if not eq(add(a, sr.zero), a):
            failures.append(("zero is additive identity", a, None, None))
        if not eq(mul(a, sr.one), a):
            failures.append(("one is multiplicative identity", a, None, None))
        if not eq(mul(a, sr.zero), sr.zero):
            failures.append(("zero annihilates", a, None, None))
        if sr.idempotent and not eq(add(a, a), a):
            failures.append(("add idempotent", a, None, None))
        if sr.repeat is not None and not eq(sr.repeat(a, np.int64(3)), add(add(a, a), a)):
            failures.append(("repeat is the n-fold sum", a, None, None))
    return failures

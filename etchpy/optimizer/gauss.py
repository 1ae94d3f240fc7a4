"""Exact Gaussian rationals p + q·i (p, q Fractions): the coefficients of the
canonical form (optimizer.ra, numeric mode) under a complex semiring, so that
2j·3j and −6 are one coefficient.

`exact(z)` is a Fraction when z is real and a `GaussQ` otherwise; every
result of + and · is normalised the same way, so equal values are equal
objects (a GaussQ never has q = 0)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


def exact(z):
    """The number z (int, float or complex) exactly: a Fraction when its
    imaginary part is 0, else a GaussQ."""
    if isinstance(z, complex):
        return _normal(Fraction(z.real), Fraction(z.imag))
    return Fraction(z)


def _normal(re: Fraction, im: Fraction):
    return re if im == 0 else GaussQ(re, im)


def _parts(x) -> tuple[Fraction, Fraction]:
    return (x.re, x.im) if isinstance(x, GaussQ) else (Fraction(x), Fraction(0))


@dataclass(frozen=True)
class GaussQ:
    """p + q·i with q ≠ 0 (use `exact`); adds and multiplies with Fractions."""
    re: Fraction
    im: Fraction

    def __add__(self, other):
        (a, b), (c, d) = _parts(self), _parts(other)
        return _normal(a + c, b + d)

    __radd__ = __add__

    def __mul__(self, other):
        (a, b), (c, d) = _parts(self), _parts(other)
        return _normal(a * c - b * d, a * d + b * c)

    __rmul__ = __mul__

    def __repr__(self):
        return f"({self.re}+{self.im}j)"

"""The named element-wise maps of `ep.map`: each spelled in C and in numpy.

    name      f(x)                    arg          f(0)   integer semiring
    exp       e^x                     -            1      no (real valued)
    log       ln x (nan below 0)      -            -inf   no
    sqrt      √x (nan below 0)        -            0      no
    abs       |x|                     -            0      yes
    recip     1/x (inf at 0)          -            inf    no
    neg       -x                      -            0      yes
    maximum   max(x, arg)             the scalar   max(0, arg)  yes, integral arg
    minimum   min(x, arg)             the scalar   min(0, arg)  yes, integral arg
    conj      x̄ (complex conjugate)   -            0      yes
    real      Re x                    -            0      yes
    imag      Im x (0 for a real x)   -            0      yes

Under a complex semiring (complex, complex64) each map has a complex C form
(C99 complex.h: cexp, clog, csqrt, cabs, conj, creal, cimag, with an f suffix
for complex64) and numpy's complex meaning (principal branches); maximum and
minimum compare, and complex numbers have no order, so they are refused. An
expression computes in one carrier: real, imag and abs of a complex value are
complex numbers with imaginary part 0, and a complex kernel's output stays
complex (take `.real` of it for a float array).

A map is a function of one carrier value, applied to a completed value (after
its operand's sums); its meaning is the numpy form, and the C form must agree
with it, NaN included (maximum and minimum propagate NaN as numpy does).
Maps need a numeric semiring: + and ×, zero 0 and one 1, over a float or
integer carrier (real, real32, integer) or a complex one (complex,
complex64); under any other semiring, or a real
valued map (exp, log, sqrt, recip) under an integer carrier, `check_semiring`
raises SemiringError naming the map. Inferring the semiring from the inputs,
a real valued map makes an integer or bool operand float64, as numpy does.

In Imp a map is `Ring(name, x, Const(arg))` (Const(0) when it takes no arg):
the interpreter applies the numpy form, C renders the C form.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import MapError, SemiringError


@dataclass(frozen=True)
class MapFn:
    """One named map: C templates over `{x}` (and `{a}`, the scalar arg) for a
    float and for an integer carrier (None: real valued, floats only), and the
    numpy callable f(x, arg) that defines it.

    What the lazy arrays (etchpy.lazy) read of it besides: `numpy_name`, numpy's
    ufunc that stands for the map on a lazy array (np.exp(a) builds the map
    exp; None: none does); `keeps_finite`, whether every finite x (and finite
    arg) gives a finite f(x) (its domain is every number; exp overflows, log(0)
    is -inf, so they do not); `writes_out`, whether py also takes `out=`, an
    array of x's shape and f's result dtype that it fills and returns (one
    temporary for a chain of element-wise work). Whether f keeps zero is
    computed from py (keeps_zero). `c_complex`: the C template for a complex
    carrier, `{f}` the suffix of complex64's functions (None: not defined on
    complex numbers, refused under a complex semiring). `c_libm`: the C form is
    a libm call the compiler does not vectorise (exp, log): a kernel computes it
    one entry at a time, numpy's loop in SIMD (the lazy fusion plan prices it,
    Tuning.lazy_libm_cost). `ufunc`: (u, first) when py is the one call u(x[, arg])
    (u(first, x) when first is not None), so that a lazy numpy region calls u
    itself, without py's frame (etchpy.lazy.region_code); None: it is not."""

    name: str
    c_float: str
    c_int: str | None
    py: Callable = field(compare=False)
    takes_arg: bool = False
    numpy_name: str | None = None
    keeps_finite: bool = False
    writes_out: bool = False
    c_complex: str | None = None
    c_libm: bool = False
    ufunc: tuple | None = field(default=None, compare=False)

    @property
    def real(self) -> bool:
        """Does an integer operand give a float (as numpy's exp(1) does)?"""
        return self.c_int is None


def _max(x, a, out=None):
    return np.maximum(x, a, out=out)


def _min(x, a, out=None):
    return np.minimum(x, a, out=out)


def _imag(x, a):
    """numpy's imag, except that a real NaN's is NaN (as 0 * NaN in C)."""
    x = np.asarray(x)
    return np.imag(x) if x.dtype.kind == "c" else x * 0


_NAN_FIRST = "(({x}) != ({x}) || ({x}) {op} ({a}) ? ({x}) : ({a}))"
MAPS: dict[str, MapFn] = {m.name: m for m in (
    MapFn("exp", "exp({x})", None, lambda x, a, out=None: np.exp(x, out=out),
          numpy_name="exp", writes_out=True, ufunc=(np.exp, None),
          c_complex="cexp{f}({x})", c_libm=True),
    MapFn("log", "log({x})", None, lambda x, a, out=None: np.log(x, out=out),
          numpy_name="log", writes_out=True, ufunc=(np.log, None),
          c_complex="clog{f}({x})", c_libm=True),
    MapFn("sqrt", "sqrt({x})", None, lambda x, a, out=None: np.sqrt(x, out=out),
          numpy_name="sqrt", writes_out=True, ufunc=(np.sqrt, None),
          c_complex="csqrt{f}({x})"),
    MapFn("recip", "(1.0 / ({x}))", None,
          lambda x, a, out=None: np.true_divide(1, x, out=out),
          numpy_name="reciprocal", writes_out=True, ufunc=(np.true_divide, 1),
          c_complex="(1.0{f} / ({x}))"),
    MapFn("abs", "fabs({x})", "(({x}) < 0 ? -({x}) : ({x}))",
          lambda x, a, out=None: np.abs(x, out=out),
          numpy_name="absolute", keeps_finite=True, writes_out=True, ufunc=(np.absolute, None),
          c_complex="cabs{f}({x})"),
    MapFn("neg", "(-({x}))", "(-({x}))", lambda x, a, out=None: np.negative(x, out=out),
          numpy_name="negative", keeps_finite=True, writes_out=True, ufunc=(np.negative, None),
          c_complex="(-({x}))"),
    MapFn("maximum", _NAN_FIRST.replace("{op}", ">"), "(({x}) > ({a}) ? ({x}) : ({a}))",
          _max, takes_arg=True, numpy_name="maximum", keeps_finite=True, writes_out=True,
          ufunc=(np.maximum, None)),
    MapFn("minimum", _NAN_FIRST.replace("{op}", "<"), "(({x}) < ({a}) ? ({x}) : ({a}))",
          _min, takes_arg=True, numpy_name="minimum", keeps_finite=True, writes_out=True,
          ufunc=(np.minimum, None)),
    MapFn("conj", "({x})", "({x})", lambda x, a, out=None: np.conjugate(x, out=out),
          numpy_name="conjugate", keeps_finite=True, writes_out=True, ufunc=(np.conjugate, None),
          c_complex="conj{f}({x})"),
    MapFn("real", "({x})", "({x})", lambda x, a: np.real(x), keeps_finite=True,
          c_complex="creal{f}({x})"),
    MapFn("imag", "(0 * ({x}))", "(0 * ({x}))", _imag, keeps_finite=True,
          c_complex="cimag{f}({x})"),
)}


def register(m: MapFn) -> MapFn:
    """Add the map m (its name new) to MAPS: every layer (ep.map, the
    optimizer, C, the lazy arrays) reads it from there. Raises MapError for a
    name taken."""
    if m.name in MAPS:
        raise MapError(f"a map named {m.name!r} exists")
    MAPS[m.name] = m
    return m


def unregister(name: str) -> None:
    """Remove the map `name` added by register (kernels built with it stay cached)."""
    MAPS.pop(name, None)


def lookup(fn: str, arg=None) -> MapFn:
    """The map named `fn`, checked against `arg` (a number for maximum and
    minimum, None for the others). Raises MapError (an ExpressionTypeError,
    also a ValueError) naming the map: an unknown name, a missing or extra arg."""
    m = MAPS.get(fn) if isinstance(fn, str) else None
    if m is None:
        raise MapError(f"unknown map {fn!r}; ep.map knows "
                                  + ", ".join(sorted(MAPS)))
    if m.takes_arg and (arg is None or isinstance(arg, bool)
                        or not isinstance(arg, (int, float, np.integer, np.floating))):
        raise MapError(f"map {fn!r} needs a number as its scalar argument, "
                                  f"e.g. ep.map({fn!r}, e, 0.0); got {arg!r}")
    if not m.takes_arg and arg is not None:
        raise MapError(f"map {fn!r} takes no scalar argument, got {arg!r}")
    return m


def is_map(op: str) -> bool:
    """Is the Imp `Ring` op a map (not the semiring's add or mul)?"""
    return op in MAPS


def apply(fn: str, x, arg=None):
    """The numpy form of map `fn` on x (any float errors are quiet: log(-1) is nan)."""
    with np.errstate(all="ignore"):
        return MAPS[fn].py(x, 0 if arg is None else arg)


def at_zero(fn: str, arg=None) -> float:
    """f(0), computed by the numpy form (in float64)."""
    return float(apply(fn, np.float64(0.0), arg))


def keeps_zero(fn: str, arg=None) -> bool:
    """Does f(0) = 0 (so the map of an absent entry is absent)?"""
    return at_zero(fn, arg) == 0.0


def render(fn: str, x: str, a: str, dtype) -> str:
    """The C text of map `fn` on the C expression x, with a the arg's C text."""
    m, dt = MAPS[fn], np.dtype(dtype)
    if dt.kind == "c":
        return m.c_complex.format(x=x, a=a, f="f" if dt == np.complex64 else "")
    template = m.c_float if dt.kind == "f" or m.c_int is None else m.c_int
    return template.format(x=x, a=a)


def check_semiring(fn: str, sr, arg=None) -> None:
    """SemiringError naming the map unless `sr` is numeric (+, ×, 0, 1 over a
    float, integer or complex carrier) and, for an integer carrier, the map is
    not real valued and its arg is integral; for a complex carrier, the map has
    a complex form (maximum and minimum compare: complex numbers have no order)."""
    kind = np.dtype(sr.dtype).kind
    numeric = (kind in "fic" and sr.add.render("a", "b") == "a + b"
               and sr.mul.render("a", "b") == "a * b"
               and sr.zero == 0 and sr.one == 1)
    if not numeric:
        raise SemiringError(f"map {fn!r} needs a numeric semiring (real, real32 or "
                            f"integer), not {sr.name}: a map applies a number function "
                            f"to completed values")
    if kind == "i" and (MAPS[fn].real or (arg is not None and not float(arg).is_integer())):
        raise SemiringError(f"map {fn!r}{'' if arg is None else f' with {arg!r}'} gives "
                            f"non-integer values; the {sr.name} semiring cannot hold "
                            f"them (use real, or let the inputs choose)")
    if kind == "c" and MAPS[fn].c_complex is None:
        raise SemiringError(f"map {fn!r} is not defined on complex numbers (semiring "
                            f"{sr.name}): complex numbers have no order")


"""Semirings: the carrier dtype, zero, one, add and mul, in C and in numpy.

A semiring (S, +, ·, 0, 1) gives every operator of an expression its meaning:
`+` is `add`, `*` is `mul`, Σ folds `add` starting from `zero`, and the
implicit entries of a sparse tensor are `zero`.

Each operation is an `Op`: a C expression template over `{a}` and `{b}`
(rendered by the C backend) and a numpy callable (used by the reference
semantics and the interpreters). Both spellings must denote the same function.

`check_axioms(semiring, values)` tests the semiring laws on sample values; the
Hypothesis strategies in `etchpy.testing` use it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import InputError, SemiringError


def _may_round(src: np.dtype, dst: np.dtype) -> bool:
    """Can a cast numpy calls safe still round (int64 or uint64 to float64 or
    complex128: integers past 2**53 have no exact double)?"""
    return (src.kind in "iu" and dst.kind in "fc"
            and 8 * src.itemsize - (src.kind == "i") > np.finfo(dst).nmant + 1)


def exact_cast(src, dst) -> bool:
    """Whether numpy dtype `dst` holds every value of another dtype `src` exactly: numbers
    numpy casts safely that cannot round (not int64 to float64), booleans as 0 and 1.

        >>> exact_cast(np.dtype(np.float32), np.dtype(np.complex128))
        True
    """
    src, dst = np.dtype(src), np.dtype(dst)
    return (src != dst and src.kind in "biufc" and (src.kind != "c" or dst.kind == "c")
            and np.can_cast(src, dst, casting="safe") and not _may_round(src, dst))


def _in_range(a: np.ndarray, dst: np.dtype) -> bool:
    """Do the integers of `a` all lie in integer dtype `dst`'s range? (A round trip
    through int64 and back to uint64 hides a wrap; floats are checked by the trip.)"""
    if not (a.size and a.dtype.kind in "iu" and dst.kind in "iu"):
        return True
    info = np.iinfo(dst)
    return info.min <= int(a.min()) and int(a.max()) <= info.max


@dataclass(frozen=True)
class Op:
    """A binary operation spelled twice: as C (`{a}`, `{b}` holes) and as numpy.

    Parameters: c, a C expression template over `{a}` and `{b}`; py, a numpy
    callable of two arrays computing the same function elementwise.
    Calling the Op applies `py`.

        >>> ep.Op("({a} < {b} ? {a} : {b})", np.minimum)(2.0, 3.0)
        2.0
    """

    c: str
    py: Callable = field(compare=False)

    def __call__(self, a, b):
        return self.py(a, b)

    def render(self, a: str, b: str) -> str:
        """The C text of the operation on C expressions `a` and `b`.

            >>> ep.Op("{a} + {b}", np.add).render("x", "y")
            'x + y'
        """
        return self.c.format(a=a, b=b)


def _complex_hint(dtype: np.dtype, sr) -> str:
    """The reason a complex input cannot enter the non-complex semiring `sr`."""
    if dtype.kind != "c":
        return ""
    if sr.idempotent:
        return (f" (complex numbers have no order, so {sr.name}'s min or max is not "
                f"defined on them)")
    return " (pass semiring=ep.semirings.complex, or take .real explicitly)"


def _refuse_ordered_complex(name: str, dt: np.dtype, add: "Op", mul: "Op",
                            idempotent: bool) -> None:
    """SemiringError for a complex carrier with an ordered (min/max) operation."""
    ordered = any(ch in op.c for op in (add, mul) for ch in "<>")
    if dt.kind == "c" and (idempotent or ordered):
        raise SemiringError(f"semiring {name} over {dt} compares values (min or max), "
                            f"and complex numbers have no order; a complex carrier "
                            f"takes + and * only (ep.semirings.complex)")


def _as_op(op) -> Op:
    if isinstance(op, Op):
        return op
    if isinstance(op, tuple) and len(op) == 2:
        c, py = op
        if isinstance(c, str) and callable(py):
            return Op(c, py)
    raise TypeError("a semiring operation is ep.Op(c_template, callable) or a pair "
                    "(c_template, callable), e.g. ('{a} + {b}', numpy.add)")


@dataclass(frozen=True)
class Semiring:
    """A commutative semiring over one numpy dtype.

    Parameters:
        name: an identifier, shown in reprs, explain() and C banners.
        dtype: the carrier, anything numpy.dtype accepts (float64, float32, int64,
            int32, bool, complex128, complex64; a complex carrier takes no
            min or max).
        zero, one: the additive and multiplicative identities (zero is also the
            value of every entry a sparse tensor does not store).
        add, mul: each an ep.Op or a pair (C template over {a} and {b}, numpy
            callable), which must denote the same function.
        negation: every element has an additive inverse (a ring), which is what
            `a - b` needs. idempotent: a + a = a. allows_nan: NaN is an acceptable
            input value (only for plain IEEE arithmetic).
        repeat: the n-fold sum a ⊕ … ⊕ a (n ≥ 1 copies) in closed form, an ep.Op
            over `{a}` (a value) and `{b}` (the count, an int64), e.g.
            ("{a} * (double)({b})", lambda a, n: a * n) in the reals. An
            idempotent semiring has it without asking (it is `a`); None means
            no closed form, and a Σ over a run of equal values then adds cell by
            cell (formats.runs).
    Check a new semiring's laws with `ep.check_axioms`.

        >>> max_min = ep.Semiring("max_min", np.float64, -np.inf, np.inf,
        ...                       ("({a} > {b} ? {a} : {b})", np.maximum),
        ...                       ("({a} < {b} ? {a} : {b})", np.minimum), idempotent=True)
        >>> ep.check_axioms(max_min, [0.0, 1.5, 3.0])
        []
    """

    name: str
    dtype: np.dtype
    zero: object
    one: object
    add: Op
    mul: Op
    negation: bool = False
    idempotent: bool = False
    allows_nan: bool = False
    repeat: Op | None = None

    def __init__(self, name, dtype, zero, one, add, mul, *, negation=False,
                 idempotent=False, allows_nan=False, repeat=None):
        dt = np.dtype(dtype)
        set_ = object.__setattr__
        set_(self, "name", str(name))
        set_(self, "dtype", dt)
        set_(self, "zero", dt.type(zero))
        set_(self, "one", dt.type(one))
        set_(self, "add", _as_op(add))
        set_(self, "mul", _as_op(mul))
        _refuse_ordered_complex(self.name, dt, self.add, self.mul, idempotent)
        set_(self, "negation", bool(negation))
        set_(self, "idempotent", bool(idempotent))
        set_(self, "allows_nan", bool(allows_nan))
        if repeat is None and idempotent:
            repeat = Op("{a}", _first)
        set_(self, "repeat", None if repeat is None else _as_op(repeat))

    def __repr__(self):
        return f"Semiring({self.name}, {self.dtype})"

    # -- values -------------------------------------------------------------
    def literal(self, value):
        """The carrier element written as the literal `value` in an expression;
        SemiringError when `value` is not one.

            >>> ep.semirings.integer.literal(2.0)
            np.int64(2)
        """
        try:
            return self.dtype.type(self.cast(np.asarray(value), what="literal")[()])
        except InputError as err:
            raise SemiringError(f"literal {value!r} is not a value of semiring "
                                f"{self.name} ({self.dtype}): {err}") from None

    def holds_exactly(self, dtype) -> bool:
        """Whether every value of numpy `dtype`, another dtype than the carrier's, has
        one exact carrier value: numbers numpy casts safely that cannot round (not
        int64 to float64). `cast` copies such arrays with `astype`, checking nothing.

            >>> ep.semirings.real.holds_exactly(np.dtype(np.float32))
            True
        """
        return exact_cast(dtype, self.dtype)

    def cast(self, array, what="input"):
        """Cast `array` to the carrier dtype, refusing anything that changes a value.

        A cast is accepted when numpy calls it safe, or when every value survives
        the round trip unchanged (so 0/1 floats make booleans, integral floats
        make integers). NaN is refused unless the semiring allows it. `what`
        names the array in the InputError raised otherwise.

            >>> ep.semirings.integer.cast(np.array([1.0, 2.0]), what="input x")
            array([1, 2])
        """
        a = np.asarray(array)
        if a.dtype == self.dtype:
            out = a
        elif a.dtype.kind not in ("biufc" if self.dtype.kind == "c" else "biuf"):
            raise InputError(f"{what} has dtype {a.dtype}; semiring {self.name} "
                             f"needs numbers castable to {self.dtype}"
                             + _complex_hint(a.dtype, self))
        elif self.holds_exactly(a.dtype):
            out = a.astype(self.dtype)
        else:
            if a.dtype.kind == "f" and np.isnan(a).any():
                raise InputError(f"{what} contains NaN, which semiring {self.name} "
                                 f"does not allow")
            with np.errstate(all="ignore"):
                out = a.astype(self.dtype)
                back = (out.real if a.dtype.kind != "c" else out).astype(a.dtype)
            if not (np.all(back == a) and _in_range(a, self.dtype)):
                raise InputError(f"{what} has dtype {a.dtype} with values that do not "
                                 f"survive a cast to {self.dtype} (semiring "
                                 f"{self.name}); convert it explicitly")
        if not self.allows_nan and out.dtype.kind in "fc" and out.size and np.isnan(out).any():
            raise InputError(f"{what} contains NaN, which semiring {self.name} does "
                             f"not allow")
        return out

    @property
    def zero_bytes(self) -> bool:
        """Whether the zero (the ⊕ identity) is the carrier value of all-zero bytes
        (0, 0.0, false; not the tropical ∞): zeroed memory then holds it."""
        zero = np.asarray(self.zero, dtype=self.dtype)
        return not zero.tobytes().strip(b"\0")

    def c_type(self) -> str:
        """The C type of the carrier.

            >>> ep.semirings.real32.c_type()
            'float'
        """
        return _C_TYPES[self.dtype]

    def require(self, law: str):
        """Raise a SemiringError unless this semiring has the named `law`
        ("negation", "idempotent" or "allows_nan").

            >>> ep.semirings.min_plus.require("negation")   # raises SemiringError
        """
        if not getattr(self, law):
            raise SemiringError(f"semiring {self.name} has no {law}; the expression "
                                f"needs it (e.g. `a - b` needs negation)")


_C_TYPES = {
    np.dtype(np.float64): "double",
    np.dtype(np.float32): "float",
    np.dtype(np.int64): "int64_t",
    np.dtype(np.int32): "int32_t",
    np.dtype(np.bool_): "uint8_t",
    np.dtype(np.complex128): "double _Complex",   # C99; C++ headers: std::complex
    np.dtype(np.complex64): "float _Complex",
}


def _first(a, n):
    return a


def _times(a, n):
    return a * n


def _min(a, b):
    return np.minimum(a, b)


def _max(a, b):
    return np.maximum(a, b)


class _Builtins:
    """The built-in semirings, reachable as `ep.semirings.<name>` (or by name,
    `semiring="min_plus"`): real (float64), real32 (float32), integer (int64),
    boolean (or, and), min_plus (tropical: shortest paths), max_plus (longest
    paths), max_times (most reliable paths), complex (complex128) and
    complex64 (the complex field). `etchpy.testing.max_min` (bottleneck
    paths) shows how to define another.

        >>> ep.semirings.min_plus.zero
        np.float64(inf)
        >>> ep.evaluate(e, semiring=ep.semirings.min_plus, A=M, x=v)
    """

    real = Semiring("real", np.float64, 0.0, 1.0, ("{a} + {b}", np.add),
                    ("{a} * {b}", np.multiply), negation=True, allows_nan=True,
                    repeat=("({a} * (double)({b}))", _times))
    real32 = Semiring("real32", np.float32, 0.0, 1.0, ("{a} + {b}", np.add),
                      ("{a} * {b}", np.multiply), negation=True, allows_nan=True,
                      repeat=("({a} * (float)({b}))", _times))
    integer = Semiring("integer", np.int64, 0, 1, ("{a} + {b}", np.add),
                       ("{a} * {b}", np.multiply), negation=True,
                       repeat=("({a} * (int64_t)({b}))", _times))
    # any nonzero byte is true, as in C; results are 0 or 1
    boolean = Semiring("boolean", np.bool_, False, True, ("(({a} | {b}) != 0)", np.logical_or),
                       ("(({a} != 0) & ({b} != 0))", np.logical_and), idempotent=True)
    min_plus = Semiring("min_plus", np.float64, np.inf, 0.0,
                        ("({a} < {b} ? {a} : {b})", _min), ("{a} + {b}", np.add),
                        idempotent=True)
    max_plus = Semiring("max_plus", np.float64, -np.inf, 0.0,
                        ("({a} > {b} ? {a} : {b})", _max), ("{a} + {b}", np.add),
                        idempotent=True)
    max_times = Semiring("max_times", np.float64, 0.0, 1.0,
                         ("({a} > {b} ? {a} : {b})", _max), ("{a} * {b}", np.multiply),
                         idempotent=True)
    # the field of complex numbers (a commutative ring): C99 _Complex arithmetic
    complex = Semiring("complex", np.complex128, 0, 1, ("{a} + {b}", np.add),
                       ("{a} * {b}", np.multiply), negation=True, allows_nan=True, repeat=real.repeat)
    complex64 = Semiring("complex64", np.complex64, 0, 1, ("{a} + {b}", np.add),
                         ("{a} * {b}", np.multiply), negation=True, allows_nan=True,
                         repeat=real32.repeat)

    def __repr__(self):
        return "ep.semirings: " + ", ".join(s.name for s in self.all())

    def all(self):
        """Every built-in semiring, in a fixed order."""
        return [self.real, self.real32, self.integer, self.boolean, self.min_plus,
                self.max_plus, self.max_times, self.complex, self.complex64]

    def for_dtype(self, dtype, *, negation=False) -> Semiring:
        """The built-in semiring that computes in `dtype` like numpy would.

        This is the choice made when no semiring is given: float32 (and float16)
        gives `real32`, other floats `real`, signed and unsigned integers
        `integer` (int64), bool `boolean`, or `integer` when the expression
        subtracts (`a - b` needs negation); complex64 gives `complex64`, other
        complex dtypes `complex` (complex128).

        Parameters: dtype, anything numpy.dtype accepts; negation, whether the
        expression needs additive inverses.
        Returns: a Semiring of `ep.semirings`.
        Raises: InputError for other dtypes (object, strings, datetimes).

            >>> ep.semirings.for_dtype(np.float32).name
            'real32'
        """
        dt = np.dtype(dtype)
        if dt.kind == "b":
            return self.integer if negation else self.boolean
        if dt.kind in "iu":
            return self.integer
        if dt.kind == "f":
            return self.real32 if dt.itemsize <= 4 else self.real
        if dt.kind == "c":
            return self.complex64 if dt.itemsize <= 8 else self.complex
        raise InputError(f"no built-in semiring computes in {dt} (real, real32, integer, "
                         f"boolean, complex and complex64 hold float64, float32, int64, "
                         f"bool, complex128 and complex64); convert the inputs or pass "
                         f"semiring=")

    def get(self, name_or_semiring) -> Semiring:
        """The semiring itself, or the built-in one of that name (else SemiringError)."""
        if isinstance(name_or_semiring, Semiring):
            return name_or_semiring
        for s in self.all():
            if s.name == name_or_semiring:
                return s
        raise SemiringError(f"unknown semiring {name_or_semiring!r}; built in: "
                            + ", ".join(s.name for s in self.all()))


semirings = _Builtins()

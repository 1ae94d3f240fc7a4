"""Windows: an operand read through a window of an index, `A[i[lo:hi:s], j]`.

`i[lo:hi:s]` (s > 0, default 1; lo default 0; hi default the operand's size)
is a `Window` of the index i. Accessed through it, mode m of A is read at the
operand coordinate lo + w·s for the window coordinate w = 0, 1, ..., n-1, n =
ceil((hi - lo) / s): the window's coordinates start at 0 (the shift), and
outside the operand (lo + w·s < 0 or ≥ its size) it reads the fill value, the
semiring's zero (so shifted windows make stencils with a zero border). The
index i then has size n wherever it appears.

Each bound is an int, the name of a parameter passed at call time (as
comparison bounds are, expr.compare), or a parameter plus or minus an integer
constant, `i["lo+1":"hi-1"]`; one kernel serves every value of a parameter. The access is of a `WindowVar`: an implicit tensor over the
operand's own arrays (the runtime binds it to the operand's input, never a
copy: runtime.windows), whose stream is the operand's level stream through the
window combinator (streams.window). proofs_notes/windows.md.
"""
from __future__ import annotations

import functools
import numbers
import re
from dataclasses import dataclass

from ..errors import ExpressionTypeError
from ..formats import Format
from .compare import token
from .nodes import Access, Index, TensorVar

WINDOW_PREFIX = "win_"


@dataclass(frozen=True)
class Window:
    """`index[lo:hi:step]`: each bound an int, a parameter name, or None (lo:
    0, hi: the operand's size, step: 1)."""

    index: Index
    lo: object = None
    hi: object = None
    step: object = None

    def spec(self) -> tuple:
        """(lo, hi, step) with lo and step filled in (hi may stay None)."""
        return (0 if self.lo is None else self.lo, self.hi,
                1 if self.step is None else self.step)


def window(ix: Index, s) -> Window:
    """`ix[s]` (Index.window_of): the slice s = lo:hi:step of index ix as a
    Window; ExpressionTypeError for anything but a slice of ints and parameter
    names, or a step that is not positive.

        >>> i[2:10:2]
        Window(index=Index('i'), lo=2, hi=10, step=2)
    """
    if not isinstance(s, slice):
        raise ExpressionTypeError(f"an index takes a window {ix}[lo:hi] or {ix}[lo:hi:step], "
                                  f"got {ix}[{s!r}]")
    bounds = [_checked_bound(ix, what, b)
              for what, b in (("lo", s.start), ("hi", s.stop), ("step", s.step))]
    if isinstance(s.step, numbers.Integral) and s.step <= 0:
        raise ExpressionTypeError(f"window {ix}[{s.start}:{s.stop}:{s.step}]: the step must "
                                  f"be positive")
    return Window(ix, *bounds)


_BOUND = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*(?:([+-])\s*([0-9]+))?\s*")


def split_bound(b: str) -> tuple[str, int]:
    """A parameter bound as (parameter name, constant offset): "lo" -> ("lo", 0),
    "hi-1" -> ("hi", -1); ValueError for anything else.

        >>> split_bound("lo+2")
        ('lo', 2)
    """
    m = _BOUND.fullmatch(b)
    if m is None or not m.group(1).isidentifier():
        raise ValueError(f"not a parameter bound: {b!r}")
    offset = int(m.group(3) or 0)
    return m.group(1), -offset if m.group(2) == "-" else offset


def _checked_bound(ix, what, b):
    """Bound `b` as a Window keeps it: a parameter with an offset in one spelling
    ("lo+1", "hi-2"; "lo+0" is "lo"); ExpressionTypeError for anything but an
    int, a parameter name or one plus or minus an integer."""
    if b is None:
        return b
    if isinstance(b, str):
        try:
            name, offset = split_bound(b)
        except ValueError:
            name = None
        if name is not None:
            return name if offset == 0 else f"{name}{offset:+d}"
    elif not isinstance(b, bool) and isinstance(b, numbers.Integral):
        return b
    raise ExpressionTypeError(f"window of {ix}: {what} must be an int, a parameter name or "
                              f"a parameter plus or minus an integer (\"lo+1\"), got {b!r}")


@dataclass(frozen=True)
class WindowVar(TensorVar):
    """The implicit tensor of `source` read through `windows` (per mode, None or
    (lo, hi, step) as Window.spec gives it). Its sizes, as the kernel reads
    them (runtime.windows.extended_shape): modes 0..n-1 the window lengths,
    n..2n-1 the operand's own sizes, 2n..3n-1 each lo, 3n..4n-1 each step."""

    source: str = ""
    windows: tuple = ()

    def __post_init__(self):   # its reserved name is made here, never by a user
        object.__setattr__(self, "format", Format.parse(self.format, self.order))

    @functools.cached_property
    def params(self) -> tuple[str, ...]:
        """The parameters its bounds read at call time, in order, once each."""
        names = [split_bound(b)[0] for w in self.windows if w for b in w
                 if isinstance(b, str)]
        return tuple(dict.fromkeys(names))

    @functools.cached_property
    def source_var(self) -> TensorVar:
        """The operand as a caller passes it: its name, order, format."""
        return TensorVar(self.source, self.order, self.format, self.iso)

    def bound(self, m: int, k: int):
        """Bound k (0 lo, 1 hi, 2 step) of mode m's window: an int, a parameter
        name, or None."""
        w = self.windows[m]
        return None if w is None else w[k]


def label(tv) -> str:
    """How an error names tensor variable tv: a window as its operand's name."""
    return f"{tv.source} (read through a window)" if isinstance(tv, WindowVar) else tv.name


def windowed_access(t: TensorVar, idx: tuple) -> Access:
    """t[idx] where some entries of idx are Windows: an access of t's WindowVar
    at the windows' indices."""
    if isinstance(t, WindowVar):
        raise ExpressionTypeError(f"{t.source} is already read through a window")
    plain = tuple(x.index if isinstance(x, Window) else x for x in idx)
    for x in plain:
        if not isinstance(x, Index):
            raise ExpressionTypeError(f"{t.name}[...] takes indices made by ep.indices or "
                                      f"their windows i[lo:hi:step], got {x!r}")
    if len(plain) != t.order:
        raise ExpressionTypeError(f"tensor {t.name} has order {t.order} but is indexed "
                                  f"with {len(plain)} indices")
    if len(set(plain)) < len(plain):
        raise ExpressionTypeError(f"{t.name}: a windowed access repeats an index; "
                                  f"take the diagonal and the window in two steps")
    specs = tuple(x.spec() if isinstance(x, Window) else None for x in idx)
    words = "_".join("a" if s is None else "_".join(
        "x" if b is None else _word(b) for b in s) for s in specs)
    var = WindowVar(f"{WINDOW_PREFIX}{t.name}_{words}", t.order, t.format, t.iso,
                    source=t.name, windows=specs)
    return Access(var, plain)


def _word(b) -> str:
    """A bound as part of the WindowVar's name: expr.compare.token's, and for a
    parameter with an offset q<length of the name><name><the offset's token>
    (no parameter's token starts with q, and the length ends the name)."""
    if isinstance(b, str):
        name, offset = split_bound(b)
        if offset:
            return f"q{len(name)}{name}{token(offset)}"
        return token(name)
    return token(b)


def rewindowed(tv: WindowVar, idx: tuple, fmt) -> Access:
    """The access of WindowVar tv at indices idx, its operand declared in format
    `fmt` instead."""
    t = TensorVar(tv.source, tv.order, fmt, tv.iso)
    return windowed_access(t, tuple(ix if w is None else Window(ix, *w)
                                    for ix, w in zip(idx, tv.windows)))


def as_access(t: TensorVar, idx: tuple):
    """`t[idx]` (TensorVar.windowed): the access of tensor t through the windows
    among the entries of idx, or None when idx holds no Window.

        >>> A[i[1:4], j]
        win_A_1_4_1_a[i,j]
    """
    if not any(isinstance(x, Window) for x in idx):
        return None
    return windowed_access(t, idx)


Index.window_of = staticmethod(window)
TensorVar.windowed = staticmethod(as_access)

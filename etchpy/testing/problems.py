"""The `problems` strategy: random well-typed expressions with formats, a
semiring and inputs (re-exported by etchpy.testing).

A problem has up to 4 indices named from `INDEX_NAMES` (names the generated C
uses among them), sizes 1..8 with a bounded index space, 1 to 4 tensor
occurrences (the same tensor possibly twice, orders 0 to 3), nested *, + and
Σ, literals and index comparisons (a op b + d: expr.offsets), a format per
tensor from `formats_for`, a semiring and inputs from `sparse_arrays`. Draws are
shaped, not filtered: parameters ask for free indices or occurrences and the
draw provides them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, OrderError
from ..expr.bins import bins_count, is_bins, onehot
from ..expr.compare import compare, stores_nothing
from ..expr.logic import eq
from ..expr.walk import map_operands
from ..expr.windows import Window, WindowVar, rewindowed
from ..expr.nodes import Access, Expr, Index, Lit, TensorVar, free_indices
from ..expr.nodes import sum as ep_sum
from ..formats import Format
from ..plan.plan import make_plan
from ..semiring import Semiring
from .strategies import (formats_for, semiring_values, semirings_st, sparse_arrays,
                         stored_values)

from hypothesis import strategies as st


@dataclass
class Problem:
    """One drawn problem: an expression, its inputs ({name: dense array}), the
    semiring and the format of each tensor ({name: Format}).

        >>> Problem(ep.sum(j, A[i, j] * x[j]), {"A": M, "x": v}, ep.semirings.real,
        ...         {"A": A.format, "x": x.format})
    """
    expr: Expr
    inputs: dict
    semiring: Semiring
    formats: dict

    def __repr__(self):
        fm = ", ".join(f"{k}:{v}" for k, v in self.formats.items())
        return f"Problem({self.expr} | {fm} | {self.semiring.name})"


# The names of user indices: the usual ones and names the generated C uses for
# its own variables (n, out, acc, q, p, s, v, lo, hi, size, len, at), which a
# user may also choose: every generated name must come from the name supply and
# so never collide with them (tests/project/test_strategies_reach.py checks that
# the generated code still uses several of them). pos and row were used once.
INDEX_NAMES = ("i", "j", "k", "l", "pos", "row", "out", "n", "q", "acc", "p", "s", "v",
               "lo", "hi", "size", "len", "at")
# Index sizes, numbers of indices and of tensor occurrences, the simplest draw
# first (a problem with something to get wrong), then the rest.
INDEX_SIZES = (3, 2, 1, 4, 5, 6, 7, 8)
INDEX_COUNTS = (2, 3, 1, 4)
OCCURRENCES = (2, 3, 1, 4)
# Offsets of an index comparison's right side (a op b + d), past the sizes' ends too.
OFFSETS = (0, 1, -1, 2, -3, 9, -9)


@dataclass(frozen=True)
class _Options:
    """What a draw may use (the switches of `problems`)."""
    allow_add: bool
    allow_literals: bool
    allow_compare: bool
    simplest: int
    allow_windows: bool = False
    allow_onehot: bool = False


@st.composite
def problems(draw, max_indices=4, max_occurrences=4, semiring=None, allow_add=True,
             allow_literals=True, index_names=INDEX_NAMES, allow_compare=False,
             min_free=0, min_occurrences=1, max_size=8, max_cells=256, simplest=0,
             allow_windows=False, allow_onehot=False):
    """A strategy of random problems: a well-typed expression with a format per
    tensor, a semiring and inputs, as a `Problem` (expr, inputs, semiring).

    Parameters: max_indices, at most this many indices (named from
    `index_names`, default INDEX_NAMES); max_occurrences and min_occurrences,
    at most and at least this many tensor occurrences (one tensor may occur
    twice; min_occurrences ≥ 2 makes the top node a * or +); min_free, at least
    this many free indices in the result (≤ 3; a factor over missing indices is
    multiplied in when the drawn expression has fewer); max_size, each index's
    size is 1..max_size, and max_cells bounds the product of all sizes (the
    largest sizes shrink until it holds); semiring, a fixed Semiring (default:
    drawn by `semirings_st`); allow_add and allow_literals, whether `+` and
    literals may appear; allow_compare, whether an access may come multiplied by
    an index comparison of two of its indices (`A[i,j] * (i < j)`, a 0/1 factor
    that stores no array: only `evaluate` and compiled kernels bind comparisons,
    not the lower-level harnesses); allow_windows, whether a new tensor may be
    read through windows of its indices (`A[i[lo:hi:s], j]`, expr.windows:
    shifts past either end and steps 1..3; evaluate and compiled kernels bind
    them, not the lower-level harnesses); allow_onehot, whether an access of a
    tensor may be read as the bins of its values over another drawn index
    (`ep.onehot(b, A[i, j], |b|)`, expr.bins, |b| written or a parameter
    among the inputs; its tensor then holds integers
    from -1 to |b| where it stores entries; not for complex semirings; evaluate
    and compiled kernels bind it); simplest, which simplest problem (the one
    Hypothesis tries first): its number of indices and its tensors' formats
    start `simplest` places further along INDEX_COUNTS and FORMATS_BY_ORDER, so
    that a test parametrized over simplest=0, 1, ... starts from different
    problems. The whole expression is never a literal or a scalar tensor alone.

        @given(problems(max_indices=3, min_free=1))
        def test_mine(p):
            check_backends(p.expr, p.inputs, semiring=p.semiring)
    """
    sr = semiring or draw(semirings_st())
    idx, size = _indices(draw, index_names, max(1, min_free), max(max_indices, min_free),
                         max_size, max_cells, simplest)
    budget = draw(st.sampled_from(_preferred(OCCURRENCES, min_occurrences,
                                             max(max_occurrences, min_occurrences))))
    drawing = _Drawing(draw, sr, idx, size, budget,
                       _Options(allow_add, allow_literals, allow_compare, simplest,
                                allow_windows, allow_onehot))
    e = drawing.widen(drawing.expr(3, top=True, needed=min_occurrences >= 2), min_free)
    e = make_walkable(e, drawing.fmts)
    inputs = {name: draw(sparse_arrays(shape, sr)) for name, shape in drawing.shapes.items()}
    _binned_values(draw, inputs, drawing.binned, sr)
    return Problem(e, {**inputs, **drawing.params}, sr, drawing.fmts)


def _binned_values(draw, inputs, binned, sr) -> None:
    """Each input read as bins (`binned`: name -> number of bins) gets integer values
    from -1 (0 where the semiring's values are not negative: max_times) to that
    number where it stores entries: values that fall in bins, and some not."""
    low = 0 if all(np.real(v) >= 0 for v in stored_values(sr)) else -1
    for name, n in binned.items():
        a = inputs[name]
        bins = np.random.default_rng(draw(st.integers(0, 2 ** 16))).integers(low, n + 1, a.shape)
        inputs[name] = a if a.dtype == np.bool_ else np.where(a != sr.zero, bins, a).astype(
            sr.dtype)


def _rotated(seq, m):
    """`seq` starting at its m-th element (modulo its length)."""
    m %= len(seq)
    return tuple(seq[m:]) + tuple(seq[:m])


def _preferred(order, low, high):
    """The values of `order` within low..high, in that order; beyond it (a caller's
    larger bound) the values up to `high`."""
    return [n for n in order if low <= n <= high] + [n for n in range(max(order) + 1, high + 1)
                                                     if n >= low]


def _indices(draw, names, low, high, max_size, max_cells, simplest):
    """low..high indices named from `names`, with a size each (from INDEX_SIZES up
    to max_size), the largest lowered until their product is at most max_cells."""
    count = draw(st.sampled_from(_preferred(_rotated(INDEX_COUNTS, simplest), low, high)))
    idx = [Index(n) for n in draw(st.permutations(list(names)))[:count]]
    sizes = [draw(st.sampled_from([n for n in INDEX_SIZES if n <= max_size])) for _ in idx]
    while int(np.prod(sizes)) > max_cells:
        sizes[sizes.index(max(sizes))] -= 1
    return idx, dict(zip(idx, sizes))


# One leaf in eight is a literal, one access with two indices or more in six is
# multiplied by an index comparison, one subexpression in three is summed, one
# access in three (where a tensor was drawn before) reuses a tensor; the simplest
# draw is the other way.
LITERAL = (False,) * 7 + (True,)
COMPARED = (False,) * 5 + (True,)
BINNED = (False,) * 3 + (True,)    # one access in four read as bins (allow_onehot)
# a onehot's count is a number or, two times in three, one of these parameters
# (names the generated C uses), an input of the problem (a numpy int64)
BIN_PARAMETERS = ("n", "pos")
SUMMED = (False, False, True)
REUSED = (False, False, True)
# A new tensor's order (kept to the number of indices drawn): 2 the most likely,
# a scalar tensor one time in eight. The simplest draw of the k-th new tensor is
# the k-th (so the simplest problem mixes orders).
ORDERS = (2, 3, 2, 1, 3, 2, 1, 0)


# One new tensor in three is read through windows (each of its modes one time in two).
WINDOWED = (False, False, True)
WINDOW_SIZES = (4, 2, 6, 1, 3, 5, 7, 8)


@dataclass(frozen=True)
class _Windowed:
    window: Window
    hi_size: int        # the size of the operand's mode


class _Drawing:
    """The state of drawing one problem's expression: the tensors drawn so far
    (their shapes and formats) and the budget of tensor occurrences left."""

    def __init__(self, draw, sr, idx, size, budget, options: _Options):
        self.draw, self.sr, self.idx, self.size = draw, sr, idx, size
        self.budget, self.options = budget, options
        self.shapes: dict[str, tuple] = {}
        self.fmts: dict[str, Format] = {}
        self.binned: dict[str, int] = {}      # a onehot's tensor: its number of bins
        self.params: dict[str, np.int64] = {}   # a onehot's count given at call time

    def reused(self):
        """An access to a tensor drawn before (same shape, distinct indices of its
        sizes), or None when there is none or it cannot be placed."""
        draw, shapes = self.draw, self.shapes
        reuse = [t for t in shapes if shapes[t]]
        if not reuse or not draw(st.sampled_from(REUSED)):
            return None
        name = draw(st.sampled_from(reuse))
        picks = []
        for n in shapes[name]:
            options = [ix for ix in self.idx if self.size[ix] == n and ix not in picks]
            if not options:
                return None
            picks.append(draw(st.sampled_from(options)))
        return TensorVar(name, len(picks), self.fmts[name])[tuple(picks)]

    def new_tensor(self, picks):
        """An access to a new tensor over the indices `picks`, its format drawn,
        perhaps through windows (allow_windows)."""
        name = "ABCDEFGH"[len(self.shapes)]
        first = len(self.shapes) + self.options.simplest
        self.fmts[name] = self.draw(formats_for(len(picks), first=first))
        windowed = self.options.allow_windows and self.draw(st.sampled_from(WINDOWED))
        read = [self.window(ix) if windowed and self.draw(st.booleans()) else ix
                for ix in picks]
        self.shapes[name] = tuple(self.size[ix] if isinstance(r, Index) else r.hi_size
                                  for ix, r in zip(picks, read))
        return TensorVar(name, len(picks), self.fmts[name])[
            tuple(r if isinstance(r, Index) else r.window for r in read)]

    def window(self, ix):
        """A window of ix (its length ix's size) over a mode of size 1..8: lo from
        -2 to past the end, step 1..3, hi any that gives the length."""
        draw, n = self.draw, self.size[ix]
        size = draw(st.sampled_from(WINDOW_SIZES))
        step = draw(st.sampled_from((1, 2, 3)))
        lo = draw(st.integers(-2, size))
        hi = lo + (n - 1) * step + 1 + draw(st.integers(0, step - 1))
        return _Windowed(Window(ix, lo, hi, None if step == 1 else step), size)

    def access(self, scalar_ok=True):
        """An access to a tensor drawn before, or to a new one (not of order 0
        unless `scalar_ok`)."""
        acc = self.reused()
        if acc is not None:
            return acc
        orders = [o for o in _rotated(ORDERS, len(self.shapes))
                  if o <= len(self.idx) and (o or scalar_ok)]
        order = self.draw(st.sampled_from(orders))
        return self.new_tensor(self.draw(st.permutations(self.idx))[:order])

    def leaf(self, alone=False):
        """A literal (one leaf in eight) or an access, perhaps compared; `alone`
        (the whole expression): an access of order 1 or more."""
        if self.options.allow_literals and not alone and self.draw(st.sampled_from(LITERAL)):
            sr = self.sr
            return Lit(self.draw(semiring_values(sr)) if sr.dtype != np.bool_ else True)
        self.budget -= 1
        acc = self.binned_access(self.access(scalar_ok=not alone))
        if self.options.allow_compare and len(acc.indices) > 1 and self.draw(st.sampled_from(COMPARED)):
            a, b = self.draw(st.permutations(acc.indices))[:2]   # sizes from acc
            d = self.draw(st.sampled_from(OFFSETS))              # b + d: expr.offsets
            op = self.draw(st.sampled_from(["<", "<=", ">", ">="] + ["=="] * bool(d)))
            acc = acc * (eq(a, b + d) if op == "==" else compare(a, op, b + d))
        return acc

    def binned_access(self, acc):
        """`acc`, or (allow_onehot, one time in four) the onehot of its values
        over a drawn index it lacks, of that index's size; one onehot per problem
        (two could ask each for the other's index first: onehot(j, A[i]) and
        onehot(i, B[j]) have no loop order)."""
        others = [ix for ix in self.idx if ix not in acc.indices]
        if not (self.options.allow_onehot and others and type(acc.tensor) is TensorVar
                and not self.binned
                and np.dtype(self.sr.dtype).kind != "c" and self.draw(st.sampled_from(BINNED))):
            return acc
        b = self.draw(st.sampled_from(others))
        self.binned[acc.tensor.name] = self.size[b]
        count = self.draw(st.sampled_from((self.size[b], *BIN_PARAMETERS)))
        if isinstance(count, str):                 # given at call time (an input)
            self.params[count] = np.int64(self.size[b])
        return onehot(b, acc, count)

    def expr(self, depth, top=False, needed=False):
        """A subexpression of at most `depth` levels. At the `top`: never a
        literal alone, and a * or + when two occurrences are `needed`."""
        draw = self.draw
        if depth == 0 or (self.budget <= 1 and not needed):
            e = self.leaf(alone=top)
        else:
            ops = ["mul", "add"] if self.options.allow_add else ["mul"]
            op = draw(st.sampled_from(ops if needed else ops + ["leaf"]))
            if op == "leaf":
                e = self.leaf(alone=top)
            else:
                a = self.expr(depth - 1)
                b = self.expr(depth - 1) if self.budget > 0 else self.leaf()
                e = a * b if op == "mul" else a + b
        free = free_indices(e)
        if free and draw(st.sampled_from(SUMMED)):
            e = ep_sum(draw(st.sampled_from(free)), e)
        return e

    def widen(self, e, min_free):
        """`e`, times a new tensor over indices it lacks when it has fewer than
        `min_free` free indices."""
        free = free_indices(e)
        if len(free) >= min_free:
            return e
        missing = [ix for ix in self.draw(st.permutations(self.idx)) if ix not in free]
        return e * self.new_tensor(missing[:min_free - len(free)])


def make_walkable(e: Expr, fmts: dict) -> Expr:
    """Turn sparse tensors dense (last name first) until some loop order walks them all
    (a onehot's operand, never converted, among them: FormatError)."""
    while True:
        try:
            make_plan(e)
            return e
        except (OrderError, FormatError):
            name = max(n for n, f in fmts.items() if not f.is_dense)
            fmts[name] = Format.named("dense", fmts[name].order)
            e = with_formats(e, fmts)


def with_formats(e: Expr, fmts: dict) -> Expr:
    """`e` with every tensor re-declared in the format `fmts` ({name: format})
    gives it (the others keep theirs).

        >>> with_formats(A[i, j] * x[j], {"A": "csr"})
    """
    match e:
        case Access(WindowVar() as t, idx):
            return rewindowed(t, idx, fmts.get(t.source, t.format))
        case Access(t, idx) if is_bins(t):
            src = TensorVar(t.source, t.order - 1, fmts.get(t.source, t.columns[0][1]))
            return onehot(idx[-1], src[idx[:-1]] if len(idx) > 1 else Access(src, ()),
                          bins_count(t))
        case Access(t, idx) if not stores_nothing(t):
            return TensorVar(t.name, t.order, fmts.get(t.name, t.format))[idx] if idx \
                else Access(TensorVar(t.name, t.order, fmts.get(t.name, t.format)), ())
    return map_operands(e, lambda x: with_formats(x, fmts))

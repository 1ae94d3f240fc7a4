"""Hypothesis strategies for etchpy's property tests (re-exported by etchpy.testing).

- `semiring_values(sr)`: carrier values that keep every backend exact (small
  integers for the float semirings, so reordered sums agree bit for bit);
- `sparse_arrays(shape, sr)`: dense arrays with a random share of implicit zeros
  (empty, all-zero, single-nonzero cases included);
- `formats_for(order)`: every named format of that order and random level formats;
- `semirings_st()`: the built-in semirings and user-defined ones;
- `problems()`: a well-typed random expression (up to 4 indices named from
  `INDEX_NAMES`, 1 to 4 tensor occurrences, the same tensor possibly twice,
  nested *, + and Σ), a format for each tensor, a semiring and inputs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OrderError
from ..expr.compare import compare, stores_nothing
from ..expr.nodes import (Access, Add, Expr, Index, Lit, Map, Mul, Sum, TensorVar,
                          free_indices)
from ..expr.nodes import sum as ep_sum
from ..formats import Format
from ..plan.plan import make_plan
from ..semiring import Semiring, semirings

try:
    from hypothesis import strategies as st
except ImportError as err:  # pragma: no cover - hypothesis is a test extra
    raise ImportError("etchpy.testing needs hypothesis: pip install 'etchpy[test]'") from err


# A user-defined semiring, to keep the machinery honest about non-built-ins:
# (max, min) over the extended reals, the "bottleneck" or capacity semiring.
max_min = Semiring("max_min", np.float64, -np.inf, np.inf,
                   ("({a} > {b} ? {a} : {b})", np.maximum),
                   ("({a} < {b} ? {a} : {b})", np.minimum), idempotent=True)


def semirings_st() -> st.SearchStrategy[Semiring]:
    """A strategy of semirings: every built-in one and `max_min`, a user-defined
    (max, min) "bottleneck" semiring that keeps the machinery honest about
    semirings it does not know.

        @given(semirings_st())
        def test_laws(sr):
            assert ep.check_axioms(sr, [0, 1, 2]) == []
    """
    return st.sampled_from(semirings.all() + [max_min])


def semiring_values(sr: Semiring):
    """Values of the carrier on which every backend computes exactly."""
    if sr.dtype == np.bool_:
        return st.booleans()
    if sr.dtype.kind in "iu":
        return st.integers(-3, 3)
    if sr.name in ("max_times",):
        return st.integers(0, 3).map(float)
    return st.integers(-3, 3).map(float)


@st.composite
def sparse_arrays(draw, shape, sr: Semiring):
    """A strategy of dense numpy arrays of `shape` over the carrier of semiring `sr`:
    each entry is the semiring's zero with some chance (empty, all-zero and
    single-nonzero arrays included), other values exact on every backend.
    Turn them sparse with scipy or ep.Tensor.from_dense.

        @given(sparse_arrays((4, 5), ep.semirings.min_plus))
        def test_mine(M): ...
    """
    size = int(np.prod(shape, dtype=np.int64))
    kind = draw(st.sampled_from(["random", "random", "random", "empty", "single"]))
    arr = np.full(size, sr.zero, dtype=sr.dtype)
    if size and kind == "single":
        arr[draw(st.integers(0, size - 1))] = draw(semiring_values(sr))
    elif size and kind == "random":
        density = draw(st.sampled_from([0.2, 0.5, 1.0]))
        for k in range(size):
            if draw(st.floats(0, 1)) < density:
                arr[k] = draw(semiring_values(sr))
    return arr.reshape(shape)


def random_formats(order: int) -> st.SearchStrategy[Format]:
    """A strategy of level formats of `order` levels beyond the named ones: any
    dense/compressed level kinds, any mode order.

        @given(random_formats(3))
        def test_mine(fmt): ...
    """
    if order == 0:
        return st.just(Format([]))
    kinds = st.lists(st.sampled_from(["dense", "compressed"]), min_size=order, max_size=order)
    perms = st.permutations(list(range(order)))
    return st.builds(Format, kinds, perms)        # levels named as in Format's spec


def formats_for(order: int) -> st.SearchStrategy[Format]:
    """A strategy of formats for a tensor of `order` modes: every named format of
    that order (dense, csf, coo, and csr, csc, dcsr for order 2) and random level
    formats (`random_formats`).

        @given(formats_for(2))
        def test_mine(fmt):
            A = ep.tensor("A", 2, format=fmt)
    """
    named = ["dense", "csf", "coo"] + (["csr", "csc", "dcsr"] if order == 2 else [])
    return st.one_of(st.sampled_from([Format.named(n, order) for n in named]),
                     random_formats(order))


@dataclass
class Problem:
    expr: Expr
    inputs: dict
    semiring: Semiring
    formats: dict

    def __repr__(self):
        fm = ", ".join(f"{k}:{v}" for k, v in self.formats.items())
        return f"Problem({self.expr} | {fm} | {self.semiring.name})"


# The names of user indices: the usual ones and the names generated code uses
# for its own variables, which a user may also choose (every generated name
# must come from the name supply and so never collide with them).
INDEX_NAMES = ("i", "j", "k", "l", "pos", "row", "out", "n", "q", "acc")


@st.composite
def problems(draw, max_indices=4, max_occurrences=4, semiring=None, allow_add=True,
             allow_literals=True, index_names=INDEX_NAMES, allow_compare=False):
    """A strategy of random problems: a well-typed expression with a format per
    tensor, a semiring and inputs, as a `Problem` (expr, inputs, semiring).

    Parameters: max_indices, at most this many indices (named from
    `index_names`, default INDEX_NAMES); max_occurrences, at most this many
    tensor occurrences (one tensor may occur twice); semiring, a fixed Semiring
    (default: drawn by `semirings_st`); allow_add and allow_literals, whether `+`
    and literals may appear; allow_compare, whether an access may come
    multiplied by an index comparison of two of its indices (`A[i,j] * (i < j)`,
    a 0/1 factor that stores no array: only `evaluate` and compiled kernels bind
    comparisons, not the lower-level harnesses).

        @given(problems(max_indices=3))
        def test_mine(p):
            check_backends(p.expr, p.inputs, semiring=p.semiring)
    """
    sr = semiring or draw(semirings_st())
    n_indices = draw(st.integers(1, max_indices))
    names = draw(st.permutations(list(index_names)))[:n_indices]
    idx = [Index(n) for n in names]
    size = {ix: draw(st.integers(1, 3)) for ix in idx}
    drawing = _Drawing(draw, sr, idx, size, draw(st.integers(1, max_occurrences)),
                       allow_add, allow_literals, allow_compare)
    e = make_walkable(drawing.expr(3), drawing.fmts)
    inputs = {name: draw(sparse_arrays(shape, sr)) for name, shape in drawing.shapes.items()}
    return Problem(e, inputs, sr, drawing.fmts)


class _Drawing:
    """The state of drawing one problem's expression: the tensors drawn so far
    (their shapes and formats) and the budget of tensor occurrences left."""

    def __init__(self, draw, sr, idx, size, budget, allow_add, allow_literals,
                 allow_compare):
        self.draw, self.sr, self.idx, self.size = draw, sr, idx, size
        self.budget, self.allow_add, self.allow_literals = budget, allow_add, allow_literals
        self.allow_compare = allow_compare
        self.shapes: dict[str, tuple] = {}
        self.fmts: dict[str, Format] = {}

    def access(self):
        """An access to a tensor drawn before (same shape), or to a new one."""
        draw, shapes = self.draw, self.shapes
        reuse = [t for t in shapes if shapes[t]]
        if reuse and draw(st.booleans()):
            name = draw(st.sampled_from(reuse))
            picks = []
            for n in shapes[name]:
                options = [ix for ix in self.idx if self.size[ix] == n and ix not in picks]
                if not options:
                    break
                picks.append(draw(st.sampled_from(options)))
            if len(picks) == len(shapes[name]):
                return TensorVar(name, len(picks), self.fmts[name])[tuple(picks)]
        name = "ABCDEFGH"[len(shapes)]
        order = draw(st.integers(0, min(3, len(self.idx))))
        picks = draw(st.permutations(self.idx))[:order]
        shapes[name] = tuple(self.size[ix] for ix in picks)
        self.fmts[name] = draw(formats_for(order))
        return TensorVar(name, order, self.fmts[name])[tuple(picks)]

    def leaf(self):
        if self.allow_literals and self.draw(st.integers(0, 7)) == 0:
            sr = self.sr
            return Lit(self.draw(semiring_values(sr)) if sr.dtype != np.bool_ else True)
        self.budget -= 1
        acc = self.access()
        if self.allow_compare and len(acc.indices) > 1 and self.draw(st.integers(0, 5)) == 0:
            a, b = self.draw(st.permutations(acc.indices))[:2]   # sizes from acc
            acc = acc * compare(a, self.draw(st.sampled_from(["<", "<=", ">", ">="])), b)
        return acc

    def expr(self, depth):
        draw = self.draw
        if depth == 0 or self.budget <= 1:
            e = self.leaf()
        else:
            ops = ["mul", "add", "leaf"] if self.allow_add else ["mul", "leaf"]
            op = draw(st.sampled_from(ops))
            if op == "leaf":
                e = self.leaf()
            else:
                a = self.expr(depth - 1)
                b = self.expr(depth - 1) if self.budget > 0 else self.leaf()
                e = a * b if op == "mul" else a + b
        free = free_indices(e)
        if free and draw(st.integers(0, 2)) == 0:
            e = ep_sum(draw(st.sampled_from(free)), e)
        return e


def make_walkable(e: Expr, fmts: dict) -> Expr:
    """Turn sparse tensors dense (last name first) until some loop order walks them all."""
    while True:
        try:
            make_plan(e)
            return e
        except OrderError:
            name = max(n for n, f in fmts.items() if not f.is_dense)
            fmts[name] = Format.named("dense", fmts[name].order)
            e = with_formats(e, fmts)


def with_formats(e: Expr, fmts: dict) -> Expr:
    """`e` with every tensor re-declared in the format `fmts` ({name: format})
    gives it (the others keep theirs).

        >>> with_formats(A[i, j] * x[j], {"A": "csr"})
    """
    match e:
        case Access(t, idx) if not stores_nothing(t):
            return TensorVar(t.name, t.order, fmts.get(t.name, t.format))[idx] if idx \
                else Access(TensorVar(t.name, t.order, fmts.get(t.name, t.format)), ())
        case Mul(a, b):
            return Mul(with_formats(a, fmts), with_formats(b, fmts))
        case Add(a, b):
            return Add(with_formats(a, fmts), with_formats(b, fmts))
        case Sum(i, body):
            return Sum(i, with_formats(body, fmts))
        case Map(fn, a, arg):
            return Map(fn, with_formats(a, fmts), arg)
    return e

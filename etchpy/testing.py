"""Property-testing support, exported for users: Hypothesis strategies and oracles.

    from etchpy.testing import problems, check_backends
    @given(problems())
    def test_mine(p):
        check_backends(p.expr, p.inputs, semiring=p.semiring)

Strategies
- `semiring_values(sr)`: carrier values that keep every backend exact (small
  integers for the float semirings, so reordered sums agree bit for bit);
- `sparse_arrays(shape, sr)`: dense arrays with a random share of implicit zeros
  (empty, all-zero, single-nonzero cases included);
- `formats_for(order)`: every named format of that order and random level formats;
- `semirings_st()`: the built-in semirings and user-defined ones;
- `problems()`: a well-typed random expression (up to 4 indices, 1 to 4 tensor
  occurrences, the same tensor possibly twice, nested *, + and Σ), a format
  for each tensor, a semiring and inputs.

`check_backends(expr, inputs, ...)` evaluates on every backend and asserts
that they agree with the dense reference semantics.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .expr.nodes import Expr, Index, Lit, TensorVar, free_indices
from .expr.nodes import sum as ep_sum
from .formats import Compressed, Dense, Format, Singleton
from .semiring import Semiring, semirings

try:
    from hypothesis import strategies as st
except ImportError as err:  # pragma: no cover - hypothesis is a test extra
    raise ImportError("etchpy.testing needs hypothesis: pip install 'etchpy[test]'") from err


# A user-defined semiring, to keep the machinery honest about non-built-ins:
# (max, min) over the extended reals, the "bottleneck" or capacity semiring.
max_min = Semiring("max_min", np.float64, -np.inf, np.inf,
                   ("({a} > {b} ? {a} : {b})", np.maximum),
                   ("({a} < {b} ? {a} : {b})", np.minimum), idempotent=True)


def semirings_st():
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
    """A dense array of carrier values; each entry is the semiring zero with some chance."""
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


def random_formats(order: int):
    """Level formats beyond the named ones: any level kinds, any mode order."""
    if order == 0:
        return st.just(Format([]))
    kinds = st.lists(st.sampled_from(["dense", "compressed"]), min_size=order, max_size=order)
    perms = st.permutations(list(range(order)))
    return st.builds(lambda ks, p: Format([Dense() if k == "dense" else Compressed()
                                           for k in ks], p), kinds, perms)


def formats_for(order: int):
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


@st.composite
def problems(draw, max_indices=4, max_occurrences=4, semiring=None, allow_add=True,
             allow_literals=True):
    """A random well-typed expression with formats, a semiring and inputs."""
    sr = semiring or draw(semirings_st())
    names = ["i", "j", "k", "l"][:draw(st.integers(1, max_indices))]
    idx = [Index(n) for n in names]
    size = {ix: draw(st.integers(1, 3)) for ix in idx}
    shapes: dict[str, tuple] = {}
    fmts: dict[str, Format] = {}
    budget = [draw(st.integers(1, max_occurrences))]

    def access():
        reuse = [t for t in shapes if shapes[t]]
        if reuse and draw(st.booleans()):
            name = draw(st.sampled_from(reuse))
            picks = []
            for n in shapes[name]:
                options = [ix for ix in idx if size[ix] == n and ix not in picks]
                if not options:
                    break
                picks.append(draw(st.sampled_from(options)))
            if len(picks) == len(shapes[name]):
                return TensorVar(name, len(picks), fmts[name])[tuple(picks)]
        name = "ABCDEFGH"[len(shapes)]
        order = draw(st.integers(0, min(3, len(idx))))
        picks = draw(st.permutations(idx))[:order]
        shapes[name] = tuple(size[ix] for ix in picks)
        fmts[name] = draw(formats_for(order))
        return TensorVar(name, order, fmts[name])[tuple(picks)]

    def leaf():
        if allow_literals and draw(st.integers(0, 7)) == 0:
            return Lit(draw(semiring_values(sr)) if sr.dtype != np.bool_ else True)
        budget[0] -= 1
        return access()

    def expr(depth):
        if depth == 0 or budget[0] <= 1:
            e = leaf()
        else:
            op = draw(st.sampled_from(["mul", "add", "leaf"] if allow_add else ["mul", "leaf"]))
            if op == "leaf":
                e = leaf()
            else:
                a = expr(depth - 1)
                b = expr(depth - 1) if budget[0] > 0 else leaf()
                e = a * b if op == "mul" else a + b
        free = free_indices(e)
        if free and draw(st.integers(0, 2)) == 0:
            e = ep_sum(draw(st.sampled_from(free)), e)
        return e

    e = make_walkable(expr(3), fmts)
    inputs = {name: draw(sparse_arrays(shape, sr)) for name, shape in shapes.items()}
    return Problem(e, inputs, sr, fmts)


def make_walkable(e: Expr, fmts: dict) -> Expr:
    """Turn sparse tensors dense (last name first) until some loop order walks them all."""
    from .errors import OrderError
    from .plan.plan import make_plan
    while True:
        try:
            make_plan(e)
            return e
        except OrderError:
            name = max(n for n, f in fmts.items() if not f.is_dense)
            fmts[name] = Format.named("dense", fmts[name].order)
            e = with_formats(e, fmts)


def with_formats(e: Expr, fmts: dict) -> Expr:
    """e with every tensor re-declared in the format `fmts` gives it."""
    from .expr.nodes import Access, Add, Mul, Sum
    match e:
        case Access(t, idx):
            return TensorVar(t.name, t.order, fmts.get(t.name, t.format))[idx] if idx \
                else Access(TensorVar(t.name, t.order, fmts.get(t.name, t.format)), ())
        case Mul(a, b):
            return Mul(with_formats(a, fmts), with_formats(b, fmts))
        case Add(a, b):
            return Add(with_formats(a, fmts), with_formats(b, fmts))
        case Sum(i, body):
            return Sum(i, with_formats(body, fmts))
    return e


def assert_same(actual, expected, sr: Semiring, what=""):
    a = dense_value(actual, sr)
    b = dense_value(expected, sr)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if sr.dtype.kind == "f":
        close = np.isclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)
        ok = bool(np.all((a == b) | close))
    else:
        ok = bool(np.array_equal(a, b))
    assert ok, f"{what}: backends disagree\n{a}\nvs reference\n{b}"


def dense_value(x, sr: Semiring):
    """Any backend result as a dense array; a scipy result's implicit entries are sr.zero."""
    if hasattr(x, "tocoo"):
        coo = x.tocoo()
        out = np.full(coo.shape, sr.zero, dtype=sr.dtype)
        out[coo.row, coo.col] = coo.data
        return out
    if hasattr(x, "to_dense"):
        return np.asarray(x.to_dense())
    return np.asarray(x)


def check_backends(expr, inputs, semiring=None, backends=("streams", "c"), order=None,
                   output="dense", **kw):
    """Evaluate on the reference and on `backends`; assert they all agree. Returns the value."""
    from .api import evaluate
    sr = semirings.get(semiring or semirings.real)
    want = evaluate(expr, semiring=sr, backend="reference", output="dense", **inputs)
    for b in backends:
        got = evaluate(expr, semiring=sr, backend=b, order=order, output=output,
                       check=(b == "streams"), **inputs, **kw)
        assert_same(got, want, sr, what=f"backend {b} on {expr}")
    return want

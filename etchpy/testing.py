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
- `problems()`: a well-typed random expression (up to 4 indices named from
  `INDEX_NAMES`, 1 to 4 tensor occurrences, the same tensor possibly twice,
  nested *, + and Σ), a format for each tensor, a semiring and inputs.

`check_backends(expr, inputs, ..., tuning=None)` evaluates on every backend
and asserts that they agree with the dense reference semantics; besides the
backends of `ep.evaluate` it knows "imp": the compiled Imp program run on the
Imp interpreter (`imp_evaluate`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import pipeline
from .api import evaluate, imp_env
from .errors import OrderError
from .expr.nodes import (Access, Add, Expr, Index, Lit, Map, Mul, Sum, TensorVar,
                         free_indices)
from .expr.compare import compare, stores_nothing
from .expr.nodes import sum as ep_sum
from .formats import Format
from .expr.walk import tensors as tensors_of
from .lower import lower_plan, run_program
from .plan.convert import kernel_tensors
from .plan.plan import make_plan
from .runtime.calling import read_output
from .runtime.inputs import bind_inputs, index_sizes, make_output
from .runtime.kernel import make_request
from .runtime.planned import with_conversions
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


def assert_same(actual, expected, sr: Semiring, what: str = "") -> None:
    """Assert that results `actual` and `expected` (numpy arrays or scalars, scipy
    arrays, ep.Tensors) hold the same values over semiring `sr`: a sparse result's missing entries
    read as sr.zero; floats agree to rtol 1e-6. `what` heads the failure message.

        >>> assert_same(ep.evaluate(e, **inputs), expected, ep.semirings.real, "spmv")
    """
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
                   output="dense", tuning=None, **kw):
    """Evaluate `expr` on `inputs` ({name: array}) with the reference semantics and
    on each of `backends` ("c", "streams", "imp"); assert they all agree with the
    reference (`assert_same`). `semiring`, `order`, `output` and `tuning` (a
    Tuning, a preset name or a dict) are as for ep.evaluate; `kw` goes to every
    backend. Returns the reference value.

        >>> check_backends(ep.sum(j, A[i, j] * x[j]), {"A": M, "x": v},
        ...                semiring="min_plus", backends=("c",))
    """
    sr = semirings.get(semiring or semirings.real)
    want = evaluate(expr, semiring=sr, backend="reference", output="dense", **inputs)
    for b in backends:
        if b == "imp":
            got = imp_evaluate(expr, inputs, semiring=sr, order=order, output=output,
                               tuning=tuning, **kw)
        else:
            got = evaluate(expr, semiring=sr, backend=b, order=order, output=output,
                           check=(b == "streams"), tuning=tuning, **inputs, **kw)
        assert_same(got, want, sr, what=f"backend {b} on {expr}")
    return want


def imp_evaluate(expr, inputs, semiring=None, order=None, output="dense", tuning=None,
                 **kw):
    """`expr` compiled as for the C backend (`kw`: Kernel's other arguments), its Imp
    program run on the Imp interpreter (lower.run_program); the result as
    `ep.evaluate` gives it. Slow: for small test inputs."""
    req = make_request(expr, semiring=semiring, output=output, order=order,
                       every_size=True, tuning=tuning, **kw)
    compiled = pipeline.compile_request(req)
    sr, program = req.semiring, compiled.program
    bound = with_conversions(compiled.plan, bind_inputs(req.tensors, inputs, sr))
    sizes = index_sizes(compiled.plan, bound)
    shape = tuple(sizes[ix.name] for ix in req.out_indices)
    env = imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    dense = [p.name for p in program.params if p.kind == "out_dense"]
    zeroed = [p.name for p in program.params if p.kind == "out_zeroed"]
    for name in dense:
        env[name] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    for name in zeroed:
        env[name] = 0                # the program clears the output itself
    final = run_program(program, sr, env)
    if dense:
        return make_output(final[dense[0]].reshape(shape), shape, output, sr)
    out = program.output
    counts = {role: int(final[var]) for role, var in out.counts.items()}
    return read_output(out.mode, req.out_format, sr,
                       lambda role, n, dtype: np.asarray(final[out.arrays[role]][:n],
                                                         dtype=dtype),
                       counts, shape, np.dtype(np.int64))


def run_plan_imp(expr, inputs, sr: Semiring, plan=None, **lower_options):
    """`expr`'s plan (default: make_plan(expr)) lowered with `lower_options` (lower_plan's
    keywords, such as tuning= or algorithms=) and run on the Imp interpreter into a
    zeroed dense output. Returns (output array, plan, bound inputs, index sizes).
    Slow: for small test inputs."""
    plan = make_plan(expr) if plan is None else plan
    bound = with_conversions(plan, bind_inputs(tensors_of(expr), inputs, sr))
    sizes = index_sizes(plan, bound)
    prog = lower_plan(plan, sr, kernel_tensors(plan, tensors_of(expr)), None,
                      **lower_options)
    env = imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    shape = tuple(sizes[v] for v in plan.out)
    env["out"] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    return run_program(prog, sr, env)["out"].reshape(shape), plan, bound, sizes

"""From an expression to a plan: a short sequence of fused loop nests.

Each `Step` is one loop nest computing Σ_bound body into a target, where body
has no Σ inside, and `order` is its loop order (free and bound indices).

The planner
1. renames bound indices apart, so no Σ captures or shadows another index;
2. pulls Σ out of products: (Σ_j a)·b = Σ_j (a·b) when j is not free in b
   (distributivity, valid in every semiring);
3. materialises a Σ that sits under `+` or under a map (which applies to
   completed values) into a dense temporary computed by an earlier step
   (pulling it out would change its multiplicity); a top-level sum
   of terms instead becomes one step per term, all adding into the output (and
   so does a union no loop order can walk, A[i,j] + A[j,i] with A csr, with Σ
   distributed over its terms);
   a Σ that occurs twice (equal up to the names of its bound indices) is
   computed once and its temporary read twice;
4. picks a loop order per step in which every sparse input is walked in its
   storage order (dense inputs locate any coordinate and never constrain it).
   With `stats` (a plan.cost.Stats, given when the optimizer is on; it carries
   the Tuning whose guesses it prices with) the legal orders are priced by
   `plan.cost.nest_cost` and the cheapest is taken;
   the heuristic order wins ties and anything within 10% of it;
5. without a user order, reads an input converted to another format when no
   loop order walks it as declared, or when that is much cheaper (plan.convert:
   the conversions are part of the plan, priced by the cost model); a sum of
   terms then is one loop nest or one per term, whichever costs less. With a
   user order that cannot walk the inputs, OrderError.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .convert import Converter
from . import layout
from .cost import Stats, plan_cost, sort_work, support
from .orders import cheapest_order, choose_order
from .reserved import reserved_tensor
from ..errors import OrderError
from ..expr.nodes import Access, Add, Expr, Index, Lit, Map, Mul, Sum, TensorVar, free_indices
from ..expr.walk import map_operands
from ..imp import Names


@dataclass(frozen=True)
class Step:
    target: str                  # "out" or a temporary's name
    out: tuple[str, ...]         # the target's axes
    bound: tuple[str, ...]       # contracted indices
    body: Expr                   # Σ-free
    order: tuple[str, ...]       # loop order over out + bound


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    out: tuple[str, ...]                        # output axes
    temps: dict = field(default_factory=dict)   # name -> TensorVar (dense)
    origin: dict = field(default_factory=dict)  # renamed index -> user's index name
    conversions: tuple = ()                     # plan.convert.Conversion, made first
    wide: frozenset = frozenset()               # temporaries whose fused reader may sum
                                                # more than the prefix (plan.fusion.widen)
    cut: frozenset = frozenset()                # temporaries no chain fuses: their readers
                                                # run whole, as BLAS (plan.unfuse)

    def explain(self) -> str:
        lines = [f"convert {c.explain()}" for c in self.conversions]
        for s in self.steps:
            sig = f"{s.target}[{','.join(s.out)}]"
            bound = f"Σ_{{{','.join(s.bound)}}} " if s.bound else ""
            lines.append(f"{sig} ⊕= {bound}{s.body}    loop order ({', '.join(s.order)})")
        return "\n".join(lines)


def make_plan(e: Expr, out: tuple[Index, ...] | None = None, order=None,
              keep_factored=False, stats=None, walk=True, out_format=None) -> Plan:
    """The plan for `e`; `order` optionally lists index names, outermost first.

    `keep_factored=True` computes a Σ that is a factor of a product in its own
    loop nest (a temporary) instead of fusing it into the product's loops: the
    nesting as written, or the optimizer's factorisation. It may also be a
    frozenset of paths (plan.nesting.factor_points): only the products at those
    paths keep their Σ factors apart, the others are flattened.
    `walk=False` skips choosing loop orders (each step keeps out + bound as its
    order), for callers that need only the steps' accesses, such as the index
    sizes of the reference semantics, which no storage order constrains.
    `out_format` (None: dense) prices a sparse output written by several steps.
    """
    out = tuple(free_indices(e)) if out is None else tuple(out)
    names = Names()
    for ix in out:
        names.fresh(ix.name)
    origin: dict[str, str] = {ix.name: ix.name for ix in out}
    e = _rename_apart(e, {ix: ix for ix in out}, names, origin)
    out_names = tuple(ix.name for ix in out)
    written_out = None       # a sparse output's axes in storage order
    if out_format is not None and not out_format.is_dense and walk:
        written_out = tuple(out_names[m] for m in out_format.mode_order)
    args = (names, origin, order, keep_factored, stats, walk, written_out)
    try:
        fused, err = _fused(e, out_names, _Builder(*args)), None
    except OrderError as exc:            # only under a user order
        fused, err = None, exc
    terms = list(_summed_terms(e))
    if len(terms) == 1 or (fused is not None and not fused[1]):
        if fused is None:
            raise err
        return fused[0]
    # no order walks the fused union as declared (A[i,j] + A[j,i] with A csr):
    # one step per term, with Σ distributed over + (any semiring), each its own
    # order, unless converting for the fused nest is cheaper
    try:
        split = _split(terms, out_names, _Builder(*args))
    except OrderError:
        if fused is None:
            raise
        return fused[0]
    if fused is None:
        return split
    priced = (stats or Stats()).with_origin(origin)
    if total_cost(fused[0], priced, out_format) <= total_cost(split, priced, out_format):
        return fused[0]
    return split


def _fused(e, out_names, builder) -> tuple[Plan, bool]:
    """(the plan with the top-level terms in one step, whether some input had to
    be converted for lack of a loop order walking it)"""
    pulled = [builder.pull(t, path) for path, t in _top_terms(e)]
    if len(pulled) > 1 and any(bound for bound, _ in pulled):
        for bound, body in pulled:
            builder.step("out", out_names, bound, body)
    else:
        body = pulled[0][1]
        for _, b in pulled[1:]:
            body = Add(body, b)
        builder.step("out", out_names, pulled[0][0], body)
    return builder.plan(out_names), builder.forced


def _split(terms, out_names, builder) -> Plan:
    for bound, t, path in terms:
        inner, body = builder.pull(t, path)
        builder.step("out", out_names, bound + inner, body)
    return builder.plan(out_names)


def total_cost(plan: Plan, stats: Stats, out_format=None) -> float:
    """plan_cost, plus, for a sparse output written by several steps, collecting
    and sorting their records (`temp_weight` twice per record)."""
    total = plan_cost(plan, stats)
    outs = [s for s in plan.steps if s.target == "out"]
    if out_format is not None and not out_format.is_dense and len(outs) > 1:
        for s in outs:
            total += sort_work(support(s.body, frozenset(s.order), stats), stats.tuning)
    return total


def _top_terms(e: Expr, path=()):
    """(path, term) for the terms of a top-level sum."""
    if isinstance(e, Add):
        yield from _top_terms(e.a, path + (0,))
        yield from _top_terms(e.b, path + (1,))
    else:
        yield path, e


def _summed_terms(e: Expr, bound=(), path=()):
    """e as a sum of terms Σ_bound t, with Σ distributed over +: Σ_i (a + b)
    gives (i, a) and (i, b), also when b does not mention i (it is then added
    once per value of i, as in the union); each as (bound, t, t's path)."""
    match e:
        case Add(a, b):
            yield from _summed_terms(a, bound, path + (0,))
            yield from _summed_terms(b, bound, path + (1,))
        case Sum(i, body):
            yield from _summed_terms(body, bound + (i.name,), path + ("s",))
        case _:
            yield bound, e, path


def _rename_apart(e: Expr, env: dict, names: Names, origin: dict) -> Expr:
    match e:
        case Access(t, idx):
            return Access(t, tuple(env.get(ix, ix) for ix in idx))
        case Lit():
            return e
        case Mul() | Add() | Map():
            return map_operands(e, lambda x: _rename_apart(x, env, names, origin))
        case Sum(i, body):
            new = Index(names.fresh(i.name))
            origin[new.name] = i.name
            return Sum(new, _rename_apart(body, {**env, i: new}, names, origin))
    raise TypeError(f"not an expression: {e!r}")


class _Builder:
    def __init__(self, names: Names, origin: dict, order, keep_factored=False, stats=None,
                 walk=True, written_out=None):
        self.keep_factored = keep_factored
        self.walk = walk
        self.stats = stats
        self.names = names
        self.origin = origin
        self.user_order = None if order is None else [getattr(o, "name", o) for o in order]
        self.steps: list[Step] = []
        self.temps: dict[str, TensorVar] = {}
        self.shared: dict = {}                 # alpha_key of a Σ -> its temporary
        self.converter = Converter(names, stats, optional=True)
        self.written_out = written_out         # sparse output's axes in storage order
        self.conversions: list = []
        self.forced = False                    # some step converted for lack of an order

    def plan(self, out_names) -> Plan:
        made = Plan(tuple(self.steps), tuple(out_names), self.temps, self.origin,
                    tuple(self.conversions))
        if self.walk and self.stats is not None and self.user_order is None \
                and self.stats.tuning.access_order:
            made = layout.for_readers(made, self.stats.with_origin(self.origin),
                                      keep_out=self.written_out is not None)
        return made

    def keeps(self, path) -> bool:
        """Whether the product at `path` keeps its Σ factors in their own steps."""
        kf = self.keep_factored
        return kf if isinstance(kf, bool) else path in kf

    def pull(self, e: Expr, path=()) -> tuple[tuple[str, ...], Expr]:
        """(bound, body) with e = Σ_bound body and body free of Σ; `path` is e's
        place in the expression (0/1: a binary node's operand, 's': a Σ's body)."""
        match e:
            case Access() | Lit():
                return (), e
            case Sum(i, body):
                bound, inner = self.pull(body, path + ("s",))
                return (i.name,) + bound, inner
            case Mul(a, b) if self.keeps(path):
                return (), Mul(self.sum_free(a, path + (0,)), self.sum_free(b, path + (1,)))
            case Mul(a, b):
                ba, ea = self.pull(a, path + (0,))
                bb, eb = self.pull(b, path + (1,))
                return ba + bb, Mul(ea, eb)
            case Add(a, b):
                return (), Add(self.sum_free(a, path + (0,)), self.sum_free(b, path + (1,)))
            case Map(fn, a, arg):      # a map applies to completed values
                return (), Map(fn, self.sum_free(a, path + (0,)), arg)
        raise TypeError(f"not an expression: {e!r}")

    def sum_free(self, e: Expr, path=()) -> Expr:
        """e itself if it pulls to no Σ, else an access to a temporary holding it."""
        key = alpha_key(e)
        if key in self.shared:
            return self.shared[key]
        bound, body = self.pull(e, path)
        if not bound:
            return body
        free = tuple(ix.name for ix in free_indices(e))
        name = self.names.fresh("tmp")
        tvar = reserved_tensor(name, len(free))   # temporaries use the reserved prefix
        self.temps[name] = tvar
        self.step(name, free, bound, body)
        # a dense temporary is laid out in the order its loop nest writes it
        last = self.steps[-1]
        free = tuple(v for v in last.order if v in free)
        self.steps[-1] = Step(last.target, free, last.bound, last.body, last.order)
        self.shared[key] = Access(tvar, tuple(Index(v) for v in free))
        return self.shared[key]

    def step(self, target, out, bound, body):
        if not self.walk:
            self.steps.append(Step(target, tuple(out), tuple(bound), body,
                                   tuple(out) + tuple(bound)))
            return
        variables = tuple(out) + tuple(bound)
        if self.user_order is not None:
            order = choose_order(body, variables, self.origin, self.user_order)
        else:
            body, order = self.walkable(body, variables,
                                        self.written_out if target == "out" else None,
                                        tuple(out))
        self.steps.append(Step(target, tuple(out), tuple(bound), body, order))

    def walkable(self, body, variables, written_out=None, out=None):
        """(body, loop order), the body reading converted inputs where the
        converter chose them (plan.convert); `written_out`: the sparse output's
        axes in storage order, which a loop order should follow; `out`: the
        target's axes (the cost model prices writes against their order)."""
        try:
            order = choose_order(body, variables, self.origin)
        except OrderError:
            order = None
        if order is not None and self.stats is not None:
            loose = frozenset(self.temps) if self.stats.tuning.access_order else frozenset()
            order = cheapest_order(body, variables, order, self.stats.with_origin(self.origin),
                                   loose=loose, out=written_out or out)  # storage order
        self.forced = self.forced or order is None
        body, order, made = self.converter.walk(body, variables, self.origin, order,
                                                written_out)
        self.conversions += made
        return body, order


def alpha_key(e: Expr, env=None, depth=0):
    """A hashable key of e equal for expressions that differ only in bound names."""
    env = env or {}
    match e:
        case Access(t, idx):
            return ("acc", t, tuple(env.get(ix.name, ix.name) for ix in idx))
        case Lit():
            return ("lit", e)
        case Mul(a, b) | Add(a, b):
            return (type(e).__name__, alpha_key(a, env, depth), alpha_key(b, env, depth))
        case Map(fn, a, arg):
            return ("map", fn, arg, alpha_key(a, env, depth))
        case Sum(i, body):
            return ("sum", alpha_key(body, {**env, i.name: ("bound", depth)}, depth + 1))
    raise TypeError(f"not an expression: {e!r}")

"""The nestings of an expression as written: which nested Σ runs as its own step.

A Σ that is a factor of a product, `a · (Σ_k b)`, is either flattened into the
product's loop nest (Σ_k (a·b), distributivity) or computed first into a
temporary that the product reads, the way the user wrote it: "do this first".
Both are the same value in every semiring; their work differs, from equal to
asymptotically apart (Σ_j P·(Σ_k Q·(Σ_l R·x)) flattened is one O(n⁴) nest,
kept it is three O(n²) steps).

Each product with a Σ among its factors (through products and Σ only: below a
`+` or a map a Σ is a temporary either way) is a *factor point*, named by its
path in the expression (plan.plan's paths: 0/1 a binary node's operand, 's' a
Σ's body). A nesting is the set of points that keep their factors apart;
`best` prices the nestings with the plan cost model (every one for up to
`tuning.nesting_exhaustive` points, else the two extremes and then single flips while one is
cheaper) and returns the cheapest with the prices of the written nesting (every
point kept) and of the flat nest (none kept). Ties go to the flat nest, then to
fewer kept points: one loop nest is the simpler program.

    factor_points(e)                      the points, in the order of the expression
    best(e, out, order, stats, out_format) a Nesting: plan, its price, the prices
                                          of the written and flat nestings
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from . import unfuse
from .plan import Plan, make_plan, total_cost
from ..errors import FormatError, OrderError
from ..expr.nodes import Add, Expr, Map, Mul, Sum



@dataclass(frozen=True)
class Nesting:
    """The nesting chosen for an expression: `plan` and its `price`, `kept` the
    points kept apart; `written` and `flat` the prices of every point kept and of
    none kept (math.inf where no loop order walks that nesting)."""

    plan: Plan
    price: float
    kept: frozenset
    points: tuple
    written: float
    flat: float

    def lines(self) -> list[str]:
        """explain() text: the written form's price beside the chosen one."""
        if not self.points:
            return []
        if math.isnan(self.written):
            return [f"nesting: {len(self.points)} Σ nested in products, flattened "
                    f"{_num(self.flat)} (Tuning.written_nesting off: not priced kept)"]
        shown = "flattened" if not self.kept else (
            "as written" if len(self.kept) == len(self.points)
            else f"{len(self.kept)} of {len(self.points)} nested Σ as steps")
        return [f"nesting: {len(self.points)} Σ nested in products; written nesting "
                f"{_num(self.written)}, flattened {_num(self.flat)}; chosen: {shown} "
                f"{_num(self.price)}"]


def _num(x: float) -> str:
    if math.isnan(x):
        return "(not priced)"
    return "(no loop order)" if x == math.inf else f"{x:.4g}"


def factor_points(e: Expr, path=()) -> tuple:
    """Paths of the products in e with a Σ among their factors."""
    match e:
        case Mul(a, b):
            own = (path,) if _pulls_sum(a) or _pulls_sum(b) else ()
            return own + factor_points(a, path + (0,)) + factor_points(b, path + (1,))
        case Add(a, b):
            return factor_points(a, path + (0,)) + factor_points(b, path + (1,))
        case Sum(_, body):
            return factor_points(body, path + ("s",))
        case Map(_, a, _):
            return factor_points(a, path + (0,))
    return ()


def _pulls_sum(e: Expr) -> bool:
    """Whether flattening would pull a Σ out of e (through products and Σ)."""
    match e:
        case Sum():
            return True
        case Mul(a, b):
            return _pulls_sum(a) or _pulls_sum(b)
    return False


def best(e: Expr, out, order, stats, out_format=None, plan_stats=True,
         only_written=False, sr=None) -> Nesting:
    """The cheapest nesting of e (see the module docstring), priced under `stats` (a
    plan.cost.Stats; its tuning's `written_nesting` off: the flat nest, as plain
    loops). `plan_stats=False` plans each nesting's steps without the cost model
    (heuristic loop orders, as without the optimizer); `only_written=True` prices
    the written nesting alone (every point kept). A nesting no loop order walks
    (an OrderError, or the FormatError of a onehot, comparison or window read in
    no order) is priced ∞. Raises the flat nest's error when no nesting is
    walkable, and OrderError when `only_written` and the written one is not.
    With a semiring `sr`, each price is less what ending its chains saves where
    its readers then run as BLAS (plan.unfuse.gain): as the plan will run."""
    points = factor_points(e)
    given = stats if plan_stats else None
    priced: dict[frozenset, tuple[float, Plan | None]] = {}

    def price(kept: frozenset) -> float:
        if kept not in priced:
            try:
                plan = make_plan(e, out, order, keep_factored=kept, stats=given,
                                 out_format=out_format)
                priced[kept] = (_price(plan, stats, out_format, sr), plan)
            except (OrderError, FormatError):   # this nesting walks no order; another may
                priced[kept] = (math.inf, None)
        return priced[kept][0]

    flat, written = frozenset(), frozenset(points)
    if not points or not stats.tuning.written_nesting:
        plan = make_plan(e, out, order, stats=given, out_format=out_format)
        cost = _price(plan, stats, out_format, sr)
        return Nesting(plan, cost, flat, points, math.nan if points else cost, cost)
    most = stats.tuning.nesting_exhaustive
    for kept in [written] if only_written else _candidates(points, price, most):
        price(kept)
    ok = {k: v for k, v in priced.items() if v[1] is not None}
    if not ok:     # the flat nest's error; with only_written, the flat nest may walk
        make_plan(e, out, order, stats=given, out_format=out_format)
        raise OrderError("no loop order walks the nesting as written")
    chosen = min(ok, key=lambda k: (ok[k][0], len(k), sorted(map(str, k))))
    return Nesting(ok[chosen][1], ok[chosen][0], chosen, points, price(written),
                   math.nan if only_written else price(flat))


def _price(plan: Plan, stats, out_format, sr) -> float:
    """total_cost of `plan`, less plan.unfuse.gain under a semiring `sr`."""
    stats = stats.with_origin(plan.origin)
    cost = total_cost(plan, stats, out_format)
    if sr is None:
        return cost
    return cost - unfuse.gain(plan, sr, stats, out_format is None or out_format.is_dense)


def _candidates(points: tuple, price, exhaustive: int):
    """The nestings to price: all for at most `exhaustive` points, else a descent
    by single flips."""
    if len(points) <= exhaustive:
        for n in range(len(points) + 1):
            yield from map(frozenset, itertools.combinations(points, n))
        return
    here = min((frozenset(), frozenset(points)), key=price)
    yield here
    better = True
    while better:
        better = False
        for p in points:
            flip = here ^ {p}
            yield flip
            if price(flip) < price(here):
                here, better = flip, True

"""Per-level algorithms chosen by cost from the inputs' fibre statistics.

For every step of a plan, before it is lowered, this module decides

* per intersected level (an index v where a product meets two walked
  segments): a plain two-finger **merge** (no per-segment branch) when the
  fibres are comparable, **gallop** (the leapfrog) when one side is much
  sparser, or the **per pair** choice at run time (today's default) when the
  statistics are mixed (a longest fibre far above its mean) or only estimated;
* per reused compressed level (a last level walked again for every
  coordinate of loop levels its tensor does not index, which the Lowerer may
  scatter into a **marker**): marker or not, comparing the marker's fill
  (its O(dim) scratch, a scatter per parent) and O(1) probes with the merges
  it replaces, repeated once per coordinate of the loops between; or a
  **keyed** marker (streams.markers: a cell per parent position and
  coordinate, each parent's fibre scattered once per call) when its parents
  were measured, its cells fit Tuning.keyed_marker_cells and it is priced
  below both.

Every choice is among strategies that are each correct on any input (the
laws of proofs_notes/mul.md and marker.md), so a plan made for one size class
stays correct when a later call of that class has other fibres: the choice is
about speed only. Decisions are data handed to the stream builder
(`StepAlgorithms`, per step), shown by `Algorithms.lines()` in explain();
without them (`Tuning(algorithm_choice=False)`, or a caller that passes none)
the builder does what it did before.

    choose(plan, stats, fibers, tuning)   an Algorithms for the plan
    forced(plan, intersect, marker)       every decision fixed (tests, benchmarks)
    Algorithms.for_step(step)             that step's StepAlgorithms (or None)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..expr.nodes import Access, Add, Expr, Lit, Mul
from ..expr.walk import subexprs
from ..tuning import Tuning
from .cost import Stats, support

MERGE, GALLOP, PER_PAIR = "merge", "gallop", "per pair"
LOCATES, UNKNOWN = "locates", "unknown"     # a side that is located / walked, unmeasured
KEYED = "keyed"       # a marker decision: one cell per (parent, coordinate), streams.markers


@dataclass(frozen=True)
class Fibre:
    """A walked side's fibres at one level: mean and longest length (longest None
    when only estimated), measured or estimated from sizes."""

    mean: float
    longest: float | None
    measured: bool


@dataclass(frozen=True)
class Decision:
    """One choice: `where` in words, `pick`, and why (`reason`)."""

    step: int
    where: str
    pick: str
    reason: str

    def line(self) -> str:
        return f"step {self.step}: {self.where}: {self.pick}: {self.reason}"


@dataclass(frozen=True)
class StepAlgorithms:
    """The decisions of one step, as the stream builder reads them:
    `intersect` ((Mul node, index, pick), ...) and `markers` ((tensor, storage
    level, marker or not or KEYED), ...; when one tensor has two reused accesses in a
    step, the first one's decision holds for both). Absent entries keep the
    builder's default."""

    intersect: tuple = ()
    markers: tuple = ()

    def intersections(self, node: Expr) -> dict:
        """{index: pick} for the product `node` (empty when nothing was decided)."""
        return {v: pick for m, v, pick in self.intersect if m == node}

    def marker(self, tensor: str, level: int) -> bool | str | None:
        """Whether tensor's storage level gets a marker (KEYED: a keyed one);
        None: not decided."""
        for t, k, on in self.markers:
            if (t, k) == (tensor, level):
                return on
        return None


@dataclass(frozen=True)
class Algorithms:
    """The decisions for a whole plan: per step (keyed by the Step value) and
    every decision in words, for explain()."""

    steps: tuple = ()          # ((Step, StepAlgorithms), ...)
    decisions: tuple = ()      # Decision, ...

    def for_step(self, step) -> StepAlgorithms | None:
        for s, algos in self.steps:
            if s == step:
                return algos
        return None

    def lines(self) -> list[str]:
        return [d.line() for d in self.decisions]


NONE = Algorithms()


def choose(plan, stats: Stats, fibers: tuple = (), tuning: Tuning | None = None
           ) -> Algorithms:
    """The decisions for every step of `plan`. `stats` gives sizes (given,
    measured or guessed: plan.cost.Stats, with the plan's origin); `fibers` the
    measured (tensor, level, fibers, non-empty, longest, mean) rows
    (pipeline.Measured.fibers), empty before any input is seen."""
    tuning = tuning or stats.tuning
    if not tuning.algorithm_choice:
        return NONE
    stats = stats.with_origin(plan.origin)
    table = {(t, k): (fibres, longest, mean) for t, k, fibres, _, longest, mean in fibers}
    steps, decisions = [], []
    for n, step in enumerate(plan.steps):
        chooser = _StepChooser(n, step, stats, table, tuning)
        steps.append((step, chooser.run()))
        decisions += chooser.decisions
    return Algorithms(tuple(steps), tuple(decisions))


def forced(plan, intersect: str | None = None, marker: bool | None = None) -> Algorithms:
    """Every decision of `plan` fixed, whatever the data: each product at each
    index of its step intersects by `intersect` (MERGE, GALLOP, PER_PAIR or None:
    undecided) and each reused level gets a marker or not (`marker`, None:
    undecided). For tests and benchmarks: each way is correct on any input."""
    steps = []
    for step in plan.steps:
        muls = dict.fromkeys(x for x in subexprs(step.body) if isinstance(x, Mul))
        inter = () if intersect is None else tuple(
            (m, v, intersect) for m in muls for v in step.order)
        marks = () if marker is None else tuple(
            (acc.tensor.name, lev, marker)
            for acc, lev, _ in marker_candidates(step.body, step.order))
        steps.append((step, StepAlgorithms(inter, marks)))
    return Algorithms(tuple(steps))


class _StepChooser:
    """The decisions of one step: markers first (a marked level is located, so
    it is no longer intersected), then the intersections."""

    def __init__(self, n, step, stats: Stats, table: dict, tuning: Tuning):
        self.n, self.step, self.stats, self.table, self.tuning = n, step, stats, table, tuning
        self.decisions: list[Decision] = []
        self.marked: set = set()

    def run(self) -> StepAlgorithms:
        markers = []
        for acc, lev, reused in marker_candidates(self.step.body, self.step.order):
            on = self.marker(acc, lev, reused)
            markers.append((acc.tensor.name, lev, on))
            if on:
                self.marked.add((acc.tensor.name, lev))
        intersect = []
        if self.tuning.merge_or_gallop:
            for node in dict.fromkeys(x for x in subexprs(self.step.body) if isinstance(x, Mul)):
                for v in self.step.order:
                    pick = self.intersection(node, v)
                    if pick is not None:
                        intersect.append((node, v, pick))
        return StepAlgorithms(tuple(intersect), tuple(markers))

    def note(self, where: str, pick: str, reason: str) -> None:
        self.decisions.append(Decision(self.n, where, pick, reason))

    # -- the fibres of one side at one index ---------------------------------

    def fibre(self, acc: Access, v: str):
        """LOCATES, UNKNOWN or the Fibre of access `acc` at index v."""
        fmt = acc.tensor.format
        names = [ix.name for ix in acc.indices]
        if fmt.is_dense or v not in names:
            return LOCATES
        storage = [names[m] for m in fmt.mode_order]
        lev = storage.index(v)
        level = fmt.levels[lev]
        if level.located or getattr(level, "locates", False):    # formats.level
            return LOCATES
        if level.segment_roles is None:       # one child per position under a unique
            return Fibre(1.0, 1.0, True) if lev and level.one_per_parent and \
                fmt.levels[lev - 1].unique else UNKNOWN      # level: fibres of one
        if (acc.tensor.name, lev) in self.marked:
            return LOCATES
        row = self.table.get((acc.tensor.name, lev))
        if row is not None and _fits(row, fmt, storage[:lev], self.stats):
            return Fibre(float(row[2]), float(row[1]), True)
        nnz = self.stats.tensor_nnz(acc)
        parents = min(nnz, self.stats.full(storage[:lev]))
        return Fibre(nnz / max(1.0, parents), None, False)

    def side(self, e: Expr, v: str):
        """What walks at index v in the stream of e: LOCATES (a range or a marked
        level: the other side is walked and this one probed), UNKNOWN, or a Fibre
        (a product is at most its shortest walked side, a union the sum)."""
        match e:
            case Access():
                return self.fibre(e, v)
            case Lit():
                return LOCATES
            case Mul(a, b):
                sa, sb = self.side(a, v), self.side(b, v)
                if sa == LOCATES or sb == UNKNOWN:
                    return sb if sa == LOCATES else sa
                if sb == LOCATES or sa == UNKNOWN:
                    return sa if sb == LOCATES else sb
                return min((sa, sb), key=lambda f: f.mean)
            case Add(a, b):
                sa, sb = self.side(a, v), self.side(b, v)
                if sa == LOCATES and sb == LOCATES:
                    return LOCATES
                if isinstance(sa, Fibre) and isinstance(sb, Fibre):
                    return Fibre(sa.mean + sb.mean, _sum(sa.longest, sb.longest),
                                 sa.measured and sb.measured)
                return UNKNOWN
        return UNKNOWN

    # -- intersections --------------------------------------------------------

    def intersection(self, node: Mul, v: str) -> str | None:
        sa, sb = self.side(node.a, v), self.side(node.b, v)
        if not (isinstance(sa, Fibre) and isinstance(sb, Fibre)):
            return None
        pick, reason = intersect_rule(sa, sb, self.tuning)
        self.note(f"{v} in {node}", pick, reason)
        return pick

    # -- markers --------------------------------------------------------------

    def marker(self, acc: Access, lev: int, reused: tuple) -> bool | str:
        """Marker (KEYED: a keyed one) or merge for acc's last storage level
        `lev`, reused for every coordinate of the loop levels `reused`."""
        names = [ix.name for ix in acc.indices]
        w = names[acc.tensor.format.mode_order[lev]]
        where = f"{acc.tensor.name} level {lev} ({w}), walked again for each {','.join(reused)}"
        mine = self.fibre(acc, w)
        other = self.sibling(acc, w)
        if other == LOCATES:
            self.note(where, "no marker", "nothing walks its level against it (never probed)")
            return False
        if not (isinstance(mine, Fibre) and isinstance(other, Fibre)):
            self.note(where, "marker", "the other side's fibres are not known")
            return True
        order = self.step.order
        first = order.index(reused[0])
        fills = support(self.step.body, frozenset(order[:first]), self.stats)
        pairs = support(self.step.body, frozenset(order[:order.index(reused[-1]) + 1]),
                        self.stats)
        dim = self.stats.dim(w)
        marker = 2 * dim + fills * 2 * mine.mean + pairs * other.mean * self.tuning.marker_probe
        merge = pairs * intersect_cost(mine.mean, other.mean, self.tuning)
        on = marker < merge
        sizes = (f"|{w}| {dim:.3g}, {fills:.3g} fills, {pairs:.3g} probes of fibres "
                 f"{mine.mean:.3g} vs {other.mean:.3g} ({_source(mine, other)})")
        keyed = self.keyed(acc, lev, dim, fills, pairs, mine, other)
        if keyed is not None and keyed < min(marker, merge):
            self.note(where, "keyed marker", f"keyed {keyed:.3g} (< marker {marker:.3g}, "
                      f"merges {merge:.3g}): {sizes}")
            return KEYED
        self.note(where, "marker" if on else "no marker",
                  f"marker {marker:.3g} ({'<' if on else '>='} merges {merge:.3g}): {sizes}")
        return on

    def keyed(self, acc: Access, lev: int, dim, fills, pairs, mine: Fibre, other: Fibre):
        """The cost of a keyed marker (streams.markers: a cell per parent position
        and coordinate, each parent's fibre scattered once per call), or None when
        it is off, the level has no parent level, its parents were not measured
        or its cells exceed Tuning.keyed_marker_cells."""
        row = self.table.get((acc.tensor.name, lev))
        if not (self.tuning.markers and self.tuning.keyed_markers and lev >= 1
                and row is not None and mine.measured):
            return None
        parents = float(row[0])
        cells = parents * dim
        if cells > self.tuning.keyed_marker_cells:
            return None
        return (2 * cells + fills + 2 * min(fills, parents) * mine.mean
                + pairs * other.mean * self.tuning.marker_probe)

    def sibling(self, acc: Access, v: str):
        """What the marked level would be probed by: the other side of the
        innermost product holding acc whose other side walks (a product with a
        side that locates still locates, so the probe moves up); LOCATES when
        acc sits under a sum, which walks it, or when nothing walks against it."""
        path = _path(self.step.body, acc) or []
        for parent, child in reversed(path):
            if isinstance(parent, Add):
                return LOCATES
            other = self.side(parent.b if child is parent.a else parent.a, v)
            if other != LOCATES:
                return other
        return LOCATES


def intersect_rule(a: Fibre, b: Fibre, tuning: Tuning) -> tuple[str, str]:
    """(pick, reason) for an intersection of sides with fibres a and b."""
    if not (a.measured and b.measured):
        return PER_PAIR, (f"fibres estimated (mean {a.mean:.3g} and {b.mean:.3g}), not "
                          "measured: chosen per segment pair at run time")
    spread = max(a.longest / max(a.mean, 1.0), b.longest / max(b.mean, 1.0))
    if spread > tuning.fibre_spread:
        return PER_PAIR, (f"mixed: longest {a.longest:.0f} and {b.longest:.0f} against "
                          f"means {a.mean:.3g} and {b.mean:.3g}")
    lo, hi = sorted((a.mean, b.mean))
    if tuning.short_intersect and hi <= tuning.short_segment:
        return PER_PAIR, (f"short: mean fibres {a.mean:.3g} and {b.mean:.3g}, intersected "
                          "at once per pair")
    if hi >= tuning.gallop_ratio * max(lo, 1.0):
        return GALLOP, f"mean fibres {a.mean:.3g} vs {b.mean:.3g}"
    return MERGE, f"mean fibres {a.mean:.3g} and {b.mean:.3g}"


def intersect_cost(m: float, o: float, tuning: Tuning) -> float:
    """Steps of intersecting fibres of lengths m and o: merged when comparable,
    else the shorter gallops into the longer (about 2 log2 of the ratio each)."""
    lo, hi = sorted((max(m, 1.0), max(o, 1.0)))
    if hi < tuning.gallop_ratio * lo:
        return m + o
    return lo * 2 * (1 + math.log2(hi / lo))


def marker_candidates(body: Expr, order: tuple) -> list:
    """(access, storage level, reused loop levels) for every sparse access whose
    last storage level is compressed and unique and sits below loop levels the
    access does not index (what Lowerer._marked_segment may scatter)."""
    out = []
    for acc in dict.fromkeys(x for x in subexprs(body) if isinstance(x, Access)):
        fmt = acc.tensor.format
        if fmt.is_dense or not fmt.levels:
            continue
        names = [ix.name for ix in acc.indices]
        storage = [names[m] for m in fmt.mode_order]
        lev = len(storage) - 1
        level = fmt.levels[lev]
        if level.segment_roles is None or not level.unique:
            continue
        if not all(v in order for v in storage):
            continue
        start = order.index(storage[lev - 1]) + 1 if lev else 0
        reused = tuple(v for v in order[start:order.index(storage[lev])] if v not in names)
        if reused:
            out.append((acc, lev, reused))
    return out


def _path(e: Expr, target: Access) -> list:
    """(parent, child) pairs from e down to the first occurrence of target."""
    if e == target:
        return []
    if isinstance(e, (Mul, Add)):
        for child in (e.a, e.b):
            sub = _path(child, target)
            if sub is not None:
                return [(e, child)] + sub
    return None


def _fits(row, fmt, above, stats: Stats) -> bool:
    """Whether a measured row can be the fibres of this level in this format:
    below dense levels only, there is one fibre per coordinate above (a row
    measured on an input read converted to another layout is not)."""
    if not all(lv.located for lv in fmt.levels[:len(above)]):
        return True
    return row[0] == round(stats.full(above))


def _sum(x, y):
    return None if x is None or y is None else x + y


def _source(a: Fibre, b: Fibre) -> str:
    return "measured" if a.measured and b.measured else "estimated"

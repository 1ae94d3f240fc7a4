"""Expressions to streams: the stream of a sum-free body over an order of levels.

`lower_step(sr, bindings, body, order, bound)` is the stream of Σ_bound body with its
levels in `order`; `Lowerer` builds it: an access becomes the level streams of its
tensor (replicated over the levels it does not depend on), a literal a replicated
constant, `*` mul and `+` add, a map `map_leaf` of its operand's stream, first made
dense (a union with zeros over every level) when f(0) ≠ 0 (proofs_notes/map.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import imp, maps
from ..formats import level as shapes
from ..expr import offsets
from ..expr.compare import CompareVar, stores_nothing
from ..expr.nodes import Access, Add, IdentityVar, Lit, Map, Mul
from ..expr.windows import WindowVar
from ..imp import ONE, ZERO, Bin, Const, Load, Ring, Var, lt, select, seq
from ..tuning import DEFAULT, Tuning
from ..plan.algorithms import KEYED, StepAlgorithms
from . import markers, window_level as window
from .combinators import (add, bounded_range, contract, guard, map_leaf, mul, range_stream,
                          replicate)
from .facts import Block, Blocks, Locate, Prelude
from .levels import input_facts, level_stream
from .row_test import level_arrays, row_value
from .shift_rows import Rings
from .stream import Stream, Value


@dataclass
class Binding:
    """What lowering needs to know about one tensor: format and Imp array names."""

    format: object
    vals: str
    levels: tuple            # per storage level: {role: Imp array name} (level.roles)
    name: str = ""           # the tensor's name (its dims are <name>_dim<mode>)
    iso: bool = False        # every stored value is the semiring's one: never read
    test: Callable | None = None     # a value predicate's value(position, coordinates)
    coords: dict | None = None       # index name -> coordinate, of the levels entered
    window: tuple = ()       # a WindowVar's: per mode None or (lo, step) (streams.window)
    source: str = ""         # a WindowVar's operand name (streams.shift_runs)

    def value(self, sr, at: imp.Expr, coords: dict | None = None) -> imp.Expr:
        """The stored value at position `at`: the semiring's one for an iso tensor (its
        values are not read), `test`'s for a value predicate (streams.row_test: its formula
        tested at `coords` or the coordinates entered; its weights' product where it holds)."""
        if self.test is not None:
            return self.test(at, coords if coords is not None else self.coords or {})
        return Const(sr.one, "value") if self.iso else Load(self.vals, at)

    def positions(self, k: int) -> imp.Expr:
        """The number of positions at storage level k (the length of its crd, and
        of vals at the last level), read from the level arrays at run time."""
        n: imp.Expr = ONE
        for lev, level in enumerate(self.format.levels[:k + 1]):
            _, n = level.children(ZERO, n, self.dim(lev), self.levels[lev])
        return n

    def dim(self, lev: int) -> imp.Expr:
        """The size of storage level lev, as the tensor's dimension parameter."""
        return self.size(self.format.mode_order[lev], None)

    def size(self, m: int, var: str | None) -> imp.Expr:
        """The operand's size of mode m (at index `var`: its size unless windowed)."""
        return Var(f"{self.name}_dim{m + len(self.window)}") if self.window or var is None \
            else dim_var(var)


def array_names(tensor_name: str, fmt, iso: bool = False) -> Binding:
    """The Imp names of a tensor's arrays: level k's array of role r is <name>_<r><k>.
    `iso`: its stored values are all the semiring's one (Binding.value)."""
    levels = tuple({role: f"{tensor_name}_{role}{k}" for role in lv.roles}
                   for k, lv in enumerate(fmt.levels))
    return Binding(fmt, f"{tensor_name}_vals", levels, tensor_name, iso)


def dim_var(var: str) -> imp.Expr:
    return Var(f"dim_{var}")


def hidden(q: str, tuning: Tuning) -> imp.Stmt:
    """imp.Opaque(q) at the top of a loop over a segment's positions q, so that C runs
    it as scalar code (imp.Opaque); nothing when Tuning.hide_segment_counters is off."""
    return imp.Opaque(q) if tuning.hide_segment_counters else imp.SKIP


class Lowerer:
    """Lowers a sum-free expression body over an ordered list of index levels.

    `markers=True` says the caller allocates the arrays listed in `scratch`
    (name, type, size, fill); then, when `tuning.markers` is on, a last
    compressed level that sits below levels its tensor does not depend on (so
    it would be walked again for each of their coordinates) is scattered once
    per parent into a marker: `mark[c]` holds a stamp of the parent position
    and `wv[c]` the value. The level then also locates in O(1), so an
    intersection walks the other side and probes.

    `algorithms` (a plan.algorithms.StepAlgorithms, the planner's choices for
    this step) may turn a marker off per (tensor, storage level) and fix the
    way each product intersects per index; None keeps the defaults above.

    `keep_rows` (default: `markers`): the caller also allocates `rings.arrays`
    (streams.shift_rows, Tuning.shift_rows); else `rings` is None.

    `fixed` maps index names bound outside the levels (a step run inside
    another's loops, plan.fusion) to their Imp coordinates; only dense
    accesses may use them.
    """

    def __init__(self, semiring, bindings: dict[str, Binding], names: imp.Names,
                 markers: bool = False, *, tuning: Tuning = DEFAULT,
                 algorithms: StepAlgorithms | None = None, fixed: dict | None = None,
                 keep_rows: bool | None = None):
        self.sr = semiring
        self.fixed = dict(fixed or {})
        self.bindings, self.names = bindings, names
        self.markers = markers and tuning.markers
        self.tuning = tuning     # gap: what a windowed run list may pass as a gap
        self.gap = Const(semiring.zero, "value") if tuning.runs else None
        self.algorithms = algorithms
        self.scratch: list[tuple] = []
        keep = markers if keep_rows is None else keep_rows     # rows kept: shift_rows
        self.rings = Rings([]) if keep and tuning.shift_rows else None

    def lower(self, e, levels: tuple[str, ...]) -> Value:
        match e:
            case Access():
                return self.access(e, levels)
            case Lit(v, _):
                return self.replicate_over(levels, Const(self.sr.literal(v), "value"))
            case Mul(a, b) if a == b and isinstance(a, Access):     # x ⊗ x: one walk
                return map_leaf(lambda x: Ring("mul", x, x), self.lower(a, levels))
            case Mul(a, b):
                choices = self.algorithms.intersections(e) if self.algorithms else None
                return mul(self.names, self.sr, self.tuning, self.lower(a, levels),
                           self.lower(b, levels), choices, self.rings)
            case Add(a, b):
                return add(self.names, self.sr, self.tuning, self.lower(a, levels),
                           self.lower(b, levels))
            case Map(fn, a, arg):
                return self.map(fn, a, arg, levels)
        raise TypeError(f"cannot lower {e!r} (sums must be pulled out first)")

    def map(self, fn: str, a, arg, levels) -> Value:
        """The stream of fn(a), a Σ-free: map_leaf over a's stream, which, when
        f(0) ≠ 0, is first united with zeros at every coordinate of `levels`
        (so the map sees, and writes, a's whole dense domain)."""
        maps.check_semiring(fn, self.sr, arg)
        s = self.lower(a, levels)
        if not maps.keeps_zero(fn, arg):
            zeros = self.replicate_over(levels, Const(self.sr.zero, "value"))
            s = add(self.names, self.sr, self.tuning, s, zeros)
        c = Const(self.sr.literal(0 if arg is None else arg), "value")
        return map_leaf(lambda x: Ring(fn, x, c), s)

    def guard(self, cond, x: Value) -> Value:   # x where cond holds, else nothing
        return guard(self.names, self.sr, cond, x)
    def replicate_over(self, levels, leaf: imp.Expr) -> Value:
        out: Value = leaf
        for v in reversed(levels):
            out = replicate(self.names, v, dim_var(v), out)
        return out

    def access(self, acc: Access, levels) -> Value:
        b = self.bindings[acc.tensor.name]
        if isinstance(acc.tensor, WindowVar):
            b = Binding(b.format, b.vals, b.levels, b.name, b.iso,
                        window=window.binding_window(acc.tensor, b.name),
                        source=acc.tensor.source)
        if isinstance(acc.tensor, CompareVar) and acc.tensor.kind == "range":
            return self.range_access(b, acc.indices[0].name, levels)
        if stores_nothing(acc.tensor):     # i op j + d, or a diagonal's δ: i = i'
            return self.index_compare(acc, levels)
        if isinstance(acc.tensor, CompareVar) and acc.tensor.kind == "value":
            names = [ix.name for ix in acc.indices]
            b = Binding(b.format, b.vals, level_arrays(acc.tensor, b.levels, b.vals), b.name,
                        False, row_value(acc.tensor, b.vals, names, self.sr), {})
        if isinstance(acc.tensor, CompareVar) and acc.tensor.kind == "bins":   # formats.bins
            b = Binding(b.format, b.vals, (*b.levels[:-1], {"src": b.vals}), b.name, True)
        names = [ix.name for ix in acc.indices]
        if b.format.is_dense:
            return self.dense_access(b, names, levels)
        storage = [names[m] for m in b.format.mode_order]
        return self.sparse_access(b, storage, levels, 0, 0, (ZERO, ONE))

    def range_access(self, b: Binding, var: str, levels) -> Value:
        """A range comparison's tensor (expr.compare), bound as the consecutive
        codes lo..hi-1 (runtime.predicates): a bounded range over `var` from its
        first to its last code, one there, replicated over the other levels; it
        reads two codes, not the range."""
        starts, coords = (b.levels[0][r] for r in b.format.levels[0].segment_roles)
        first, end = Load(starts, ZERO), Load(starts, ONE)
        some = lt(first, end)
        lo = select(some, Load(coords, first), ZERO)
        hi = select(some, imp.add(Load(coords, Bin("-", end, ONE)), ONE), ZERO)

        def build(k) -> Value:
            if k == len(levels):
                return Const(self.sr.one, "value")
            if levels[k] != var:
                return replicate(self.names, levels[k], dim_var(levels[k]), build(k + 1))
            return bounded_range(self.names, var, lo, hi, build(k + 1))
        return build(0)

    def index_compare(self, acc: Access, levels) -> Value:
        """An index comparison a op b + d (expr.compare, kind "index"; d an integer,
        expr.offsets) or a diagonal's δ (a = b), which stores nothing: the first of a, b
        in `levels` is every coordinate c (it locates), the other a bounded range whose
        ends are read off c, d folded in and clamped to [0, dim) (a < b with a outer: b
        in c+1..dim_b-1), one there; the other levels replicate. O(1) memory, and a
        product walks only the range."""
        (a, b), tv = [ix.name for ix in acc.indices], acc.tensor
        op, d = ("==", 0) if type(tv) is IdentityVar else (tv.tests[0][0], offsets.offset_of(tv))
        outer, inner = (a, b) if levels.index(a) < levels.index(b) else (b, a)
        if outer == a:                 # c op x + d as x op' c - d
            op, d = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}[op], -d

        def ends(c):                   # the x with x op c + d
            t = c if not d else imp.add(c, Const(d)) if d > 0 else Bin("-", c, Const(-d))
            return offsets.bounds(op, t, dim_var(inner), imp, plain=not d)

        def build(k, c) -> Value:
            if k == len(levels):
                return Const(self.sr.one, "value")
            v = levels[k]
            if v == outer:
                return range_stream(self.names, v, dim_var(v), lambda x: build(k + 1, x))
            if v == inner:
                return bounded_range(self.names, v, *ends(c), build(k + 1, c))
            return replicate(self.names, v, dim_var(v), build(k + 1, c))
        return build(0, None)

    def dense_access(self, b: Binding, names, levels) -> Value:
        """A dense tensor locates any coordinate, so it follows any loop order."""
        strides = {}
        stride: imp.Expr = ONE
        order = [names[m] for m in b.format.mode_order]
        for m in reversed(b.format.mode_order):
            strides[names[m]] = stride
            stride = imp.mul(stride, b.size(m, names[m]))

        def build(k, coords):
            if k == len(levels):
                flat: imp.Expr = ZERO
                for v, s in strides.items():
                    flat = imp.add(flat, imp.mul(coords[v], s))
                return b.value(self.sr, flat, coords)
            v = levels[k]
            if v not in strides:
                return replicate(self.names, v, dim_var(v), build(k + 1, coords))
            if b.window and (w := b.window[names.index(v)]):     # streams.window
                return window.window_range(self.names, v, w[0], dim_var(v), w[1], b.size(
                    names.index(v), v), lambda c: build(k + 1, {**coords, v: c}), self.guard)
            row = range_stream(self.names, v, dim_var(v),
                               lambda c: build(k + 1, {**coords, v: c}))
            outer = order[:order.index(v)]
            if not all(u in coords for u in outer) or b.iso or b.test is not None:
                return row
            # every mode before v is fixed: the values under v = t are one run
            base: imp.Expr = ZERO
            for u in outer:
                base = imp.add(base, imp.mul(coords[u], strides[u]))
            return row.derive(row.facts.add(Blocks((Block(
                b.vals, lambda t: imp.add(base, imp.mul(t, strides[v])),
                lambda t: strides[v], imp.mul(dim_var(v), strides[v])),))))

        return build(0, {v: self.fixed[v] for v in names if v in self.fixed})

    def sparse_access(self, b: Binding, storage, levels, k, lev, parent, marker=None) -> Value:
        if k == len(levels):
            assert lev == len(storage), f"levels {levels} do not cover {storage}"
            return b.value(self.sr, parent[0])
        v = levels[k]
        if lev < len(storage) and storage[lev] == v:
            return self.stored_level(b, storage, levels, k, lev, parent, marker)
        assert v not in storage[lev:], f"order {levels} breaks storage order {storage}"
        fill = imp.SKIP
        seg = None
        if marker is None and lev < len(storage) and not b.window:
            seg = self._marked_segment(b, storage, lev, parent)
        if seg is not None:
            marker, fill, state = self._marker(b, storage, seg, lev, parent)
        rep = replicate(self.names, v, dim_var(v),
                        self.sparse_access(b, storage, levels, k + 1, lev, parent, marker))
        if fill == imp.SKIP:
            return rep
        return rep.derive(rep.facts.add(Prelude(fill)), state=rep.state + state,
                          init=seq(fill, rep.init))

    def stored_level(self, b: Binding, storage, levels, k, lev, parent, marker) -> Stream:
        """Level lev's read stream (over levels[k]), probed via a marker filled above."""
        v, m = levels[k], b.format.mode_order[lev]

        def child(pos):
            return self.sparse_access(self._entered(b, lev, v, parent, pos), storage, levels,
                                      k + 1, lev + 1, pos)
        if b.window and b.window[m]:
            s = window.window_level(self.names, b.format.levels[lev], v, dim_var(v),
                                    b.size(m, v), b.levels[lev], parent, child,
                                    b.positions(lev), b.window[m], self.guard, self.gap,
                                    (b.source, m, lev, parent) if b.source else None,
                                    self.tuning.window_walk_long if self.tuning.window_walk
                                    else None)
        else:
            s = level_stream(self.names, b.format.levels[lev], v, dim_var(v), b.levels[lev],
                             parent, child, b.positions(lev) if b.name else None,
                             Const(self.sr.zero, "value"))
        blocks = self._row_blocks(b, storage, levels, k, lev, parent)
        s = s.derive(s.facts.add(Blocks(blocks) if blocks else None, *input_facts(s, b, lev)))
        if marker is None:
            return s
        rest = levels[k + 1:]      # only replicated levels remain below

        def probe(c):
            return self.replicate_over(rest, marker.probe(c, self.sr.zero))
        return s.derive(s.facts.add(Locate(probe)), search=s.search + ", probed via a marker")

    @staticmethod
    def _entered(b: Binding, lev, v, parent, child) -> Binding:
        """b with level lev's position and coordinate (over v, where one is known) noted."""
        if b.test is None:
            return b
        here = b.format.levels[lev].read(parent[0], parent[1], dim_var(v), b.levels[lev])
        c = shapes.coordinate_at(here, child[0])    # (None: a run's or a block's position)
        at = {f"@{lev}": child[0], **({v: c} if c is not None else {})}   # (row_test)
        return Binding(b.format, b.vals, b.levels, b.name, b.iso, b.test, {**b.coords, **at})

    @staticmethod
    def _row_blocks(b: Binding, storage, levels, k, lev, parent) -> tuple:
        """A level over v that holds every coordinate (a Range) whose child, the
        last level, is a segment read at its parent position and walked next
        (csr's rows, located by the coordinate of a sparse operand in
        Gustavson's product): the row under t is one range of positions, in crd
        and in vals, from the segment's start."""
        if not (b.name and b.test is None and not b.window and lev + 2 == len(storage)
                and k + 1 < len(levels) and levels[k + 1] == storage[lev + 1]):
            return ()
        here = b.format.levels[lev].read(parent[0], parent[1], dim_var(storage[lev]),
                                         b.levels[lev])
        if not isinstance(here, shapes.Range):
            return ()
        below, arrays = b.format.levels[lev + 1], b.levels[lev + 1]
        size = dim_var(storage[lev + 1])

        def at(t):
            return imp.add(here.first, t)

        def row(t) -> shapes.Segment:
            return below.read(at(t), imp.add(at(t), ONE), size, arrays)

        probe = row(ZERO)
        if not (isinstance(probe, shapes.Segment) and probe.bounds is not None):
            return ()

        def start(t):
            return row(t).start

        def length(t):
            seg = row(t)
            return Bin("-", seg.end, seg.start)

        total = b.positions(lev + 1)
        return tuple(Block(arr, start, length, total, via=(probe.bounds, at))
                     for arr in (probe.crd, *(() if b.iso else (b.vals,))))

    def _marked_segment(self, b, storage, lev, parent) -> shapes.Segment | None:
        """The segment a marker is filled from, when markers are on and level lev
        is the last level and reads as a unique segment named by its parent
        position alone (its bounds are read there): None otherwise."""
        if not (self.markers and lev == len(storage) - 1) or b.test is not None:
            return None
        if self.algorithms is not None and self.algorithms.marker(b.name, lev) is False:
            return None
        seg = b.format.levels[lev].read(parent[0], parent[1], dim_var(storage[lev]),
                                        b.levels[lev])
        if isinstance(seg, shapes.Segment) and seg.unique and seg.bounds is not None:
            return seg
        return None

    def _marker(self, b, storage, seg: shapes.Segment, lev, parent):
        """The marker of level lev (streams.markers): keyed where the planner
        chose it, else per parent."""
        keyed = self.algorithms is not None and self.algorithms.marker(b.name, lev) == KEYED
        return markers.make(self.names, self.sr, self.tuning, self.scratch, b, storage, seg,
                            lev, parent, keyed)


def lower_step(semiring, bindings, body, order: tuple[str, ...], bound, names=None,
               lowerer=None, tuning: Tuning = DEFAULT) -> Value:
    """The stream of Σ_bound body, with levels in `order` (free and bound indices).
    Without a `lowerer`, one is made with no markers and this `tuning`."""
    low = lowerer or Lowerer(semiring, bindings, names or imp.Names(), tuning=tuning)
    s = low.lower(body, tuple(order))
    for v in bound:
        s = contract(s, v)
    return s

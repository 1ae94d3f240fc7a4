"""The read streams of storage levels.

A level stream walks one storage level of a tensor below a parent position
range (lo, hi); hi is lo + 1 below a unique level. `child((lo', hi'))` builds
the value at a position range of this level: the next level's stream, or the
leaf value. The level says how it is walked (`level.read`: a formats.level
Range, Segment, Blocks, Band, RunList, Lookup, Hashed or Spike, stream shapes rather than
level kinds);
this module
builds the stream of each shape. proofs_notes/levels.md.
"""
from __future__ import annotations

from .. import imp
from ..formats import level as shapes
from ..imp import (ONE, TRUE, ZERO, Assign, Bin, If, Load, Var, While, and_, eq, incr, le, lt,
                   max_, or_, select, seq)
from .combinators import map_leaf, range_stream
from .facts import (Ahead, Counter, Entries, Extent, Facts, Locate, Most, Pieces, Runs, Scatter,
                    Segment, Walk, WindowWalk)
from .runs import runs_level
from .stream import Stream, is_stream


def range_level(names, var, size, first: imp.Expr, child) -> Stream:
    """Every coordinate c in 0..size-1 at position first + c (a formats.level.Range)."""
    return range_stream(names, var, size,
                        lambda c: child((imp.add(first, c), imp.add(imp.add(first, c), ONE))))


def dense_level(names, var, size, parent, child) -> Stream:
    """Every coordinate c of var below position lo: position lo·size + c."""
    return range_level(names, var, size, imp.mul(parent[0], size), child)


def segment_level(names, var, crd: str, start: imp.Expr, end: imp.Expr, unique: bool,
                  child, crd_len: imp.Expr | None = None, in_order: bool = False) -> Stream:
    """Positions start..end-1 with coordinates crd[q] (a formats.level.Segment).

    A non-unique level groups each run of equal coordinates into one state and
    hands the whole run [q, q_run) to its child. `in_order`: the parent's
    positions are visited in order, so successive segments follow one another.
    """
    if unique:
        return unique_segment(names, var, crd, start, end, child, crd_len, in_order)
    q, e, run = (names.fresh(f"{var}_{x}") for x in ("q", "end", "run"))
    qv, ev, rv = Var(q), Var(e), Var(run)
    crd_q = Load(crd, qv)

    def behind(t, r):      # (crd[q], true) ≤ (t, r)
        return or_(lt(crd_q, t), and_(eq(crd_q, t), r))

    scan = While(and_(lt(rv, ev), eq(Load(crd, rv), crd_q)), incr(run))
    find_run = seq(Assign(run, imp.add(qv, ONE)), scan)
    state = ((q, "index"), (e, "index"), (run, "index"))
    return Stream(var=var, state=state, init=seq(Assign(q, start), Assign(e, end), find_run),
                  valid=lt(qv, ev), index=crd_q, ready=TRUE, value=child((qv, rv)),
                  next=seq(Assign(q, rv), find_run),
                  skip=lambda t, r: seq(While(and_(lt(qv, ev), behind(t, r)), incr(q)),
                                        find_run),
                  search="linear", facts=Facts.of(Most(Bin("-", ev, qv)), Entries(q, run, scan)))


def unique_segment(names, var, crd: str, start, end, child, crd_len, in_order) -> Stream:
    """A segment whose coordinates strictly increase: one position per state."""
    q, e = names.fresh(f"{var}_q"), names.fresh(f"{var}_end")
    qv, ev = Var(q), Var(e)
    value = child((qv, imp.add(qv, ONE)))
    runs = None
    if in_order and crd_len is not None:
        read = imp.arrays_loaded_at(value.init if is_stream(value) else value, qv)
        runs = Runs((crd, *[a for a in read if a != crd]), crd_len)
    known = crd_len is not None
    facts = Facts.of(Counter(q, start, end), Extent(Bin("-", ev, qv)), Most(Bin("-", ev, qv)),
                     Ahead(crd, crd_len) if known else None,
                     Segment(q, e, crd, crd_len) if known else None, runs)
    return Stream(var=var, state=((q, "index"), (e, "index")),
                  init=seq(Assign(q, start), Assign(e, end)), valid=lt(qv, ev),
                  index=Load(crd, qv), ready=TRUE, value=value, next=incr(q),
                  skip=lambda t, r: imp.Seek(q, ev, crd, t, r),
                  search="linear, then gallop", facts=facts)


def input_facts(s: Stream, b, lev: int) -> tuple:
    """The facts of s, the read stream of storage level lev of the input bound
    as b (from_expr.Binding), that name the input's arrays: its Walk, and its
    Entries carrying a Scatter (None where they do not hold)."""
    return walk_fact(s, b, lev), entries_fact(s, b, lev)


def walk_fact(s: Stream, b, lev: int) -> Walk | None:
    """The Walk fact of s, the read stream of storage level lev of the input
    bound as b (from_expr.Binding); None unless all of: s has Segment (a unique
    segment level), lev is b's last storage level, b is a named input and not a
    window (or a window walk of it: WindowWalk, its narrowing noted), and the level's length reads pos[parents] for a C variable
    `parents` (one located level above it, whose size is that variable: csr's
    and csc's second level; not under a compressed level, as dcsr's and csf's
    last, nor under two located levels, whose positions are a product)."""
    seg, walk = s.facts.get(Segment), s.facts.get(WindowWalk)
    if b.window and walk is not None:       # a window walk: its level's own segment,
        seg = walk.segment                  # walked whole but for its narrowing
    elif b.window:
        return None
    if seg is None or not b.name or lev + 1 != len(b.format.levels):
        return None
    match seg.crd_len:
        case Load(pos, Var(parents)):
            return Walk(b.name, seg.q, seg.end, seg.crd, b.vals, pos, parents, b.dim(lev).name,
                        None if walk is None else walk.narrow)
    return None


def entries_fact(s: Stream, b, lev: int) -> Entries | None:
    """s's Entries fact carrying its Scatter when s, the read stream of storage
    level lev of the input bound as b (from_expr.Binding), is a non-unique
    segment at the top of b's storage (not a window's), read from pos[0] ..
    pos[1] of an array `pos`, and every level below it has one child per
    parent position and reads as a segment of its own crd; else None."""
    got = s.facts.get(Entries)
    if got is None or lev != 0 or b.window or not b.name:
        return None
    reads = [lv.read(ZERO, ONE, b.dim(k), b.levels[k]) for k, lv in enumerate(b.format.levels)]
    if not all(isinstance(r, shapes.Segment) for r in reads) or reads[0].bounds is None \
            or not all(lv.one_per_parent for lv in b.format.levels[1:]):
        return None
    match s.valid:
        case Bin("<", Var(q), Var(end)) if q == got.q:
            dims = tuple(b.dim(k).name for k in range(len(reads)))
            return Entries(q, got.run, got.scan, Scatter(
                b.name, q, end, tuple(r.crd for r in reads), b.vals, dims, reads[0].bounds))
    return None


def level_stream(names, level, var, size, arrays, parent, child, crd_len=None,
                 zero=None) -> Stream:
    """The read stream of one storage level (arrays: its array names by role;
    crd_len: the length of its crd array, if known; zero: the semiring's, as
    an Imp value, for a level that may be probed where nothing is stored)."""
    lo, hi = parent
    in_order = not imp.arrays_loaded_at(lo, None)     # a counter, not a gathered coordinate
    match level.read(lo, hi, size, arrays):
        case shapes.Range(first):
            return range_level(names, var, size, first, child)
        case shapes.Segment(crd, start, end, unique):
            return segment_level(names, var, crd, start, end, unique, child, crd_len,
                                 in_order)
        case shapes.Blocks(first, pos, start, end, tiles):
            return blocks_level(names, var, first, pos, start, end, child,
                                crd_len if in_order and pos else None, tiles)
        case shapes.Band(lo_c, hi_c, at, fixed):
            return band_level(names, var, lo_c, hi_c, at, child, crd_len if in_order else None,
                              None if fixed is None else (lo, fixed))
        case shapes.RunList(ends, start, end, starts):
            return runs_level(names, var, size, ends, start, end, child, starts)
        case shapes.Lookup(crd, start, end, first, present):
            return lookup_level(names, var, crd, start, end, first, present, child, zero)
        case shapes.Spike(coord, at):
            return spike_level(names, var, coord, at, child)
        case shapes.Hashed(crd, slots, start, end, table, cap):
            return hashed_level(names, var, crd, slots, start, end, child,
                                (table, cap) if zero is not None else None, zero)
    raise TypeError(f"level {level!r} reads as none of Range, Segment, Blocks, Band, "
                    f"RunList, Lookup, Hashed and Spike")


def spike_level(names, var, coord: imp.Expr, at: imp.Expr, child) -> Stream:
    """One coordinate or none (a formats.level.Spike): `coord` where it is >= 0,
    at the position `at`. State k: the coordinate, -1 once passed."""
    k = names.fresh(f"{var}_k")
    kv, gone = Var(k), Assign(k, imp.Const(-1))
    return Stream(var=var, state=((k, "index"),), init=Assign(k, coord), valid=le(ZERO, kv),
                  index=kv, ready=TRUE, value=child((at, imp.add(at, ONE))), next=gone,
                  skip=lambda t, r: If(select(r, le(kv, t), lt(kv, t)), gone),
                  search="one coordinate, computed", facts=Facts.of(Most(ONE)))


def hashed_level(names, var, crd: str, slots: str, start: imp.Expr, end: imp.Expr,
                 child, table=None, zero=None) -> Stream:
    """The slots slots[start..end-1], in increasing order of their coordinates
    crd[slots[q]] (a formats.level.Hashed): walked as a unique segment through
    the listing, the child at position slots[q]; skip steps linearly (no
    gallop through the indirection). With the parent's `table` (its first
    slot, its size) and the semiring's `zero` (a last level), also located at
    any t, reading no state of its own: the slot P where a probe for t stops
    (imp.Probe), crd[P] == t ? child(P) : zero at each leaf.
    proofs_notes/hashed.md."""
    q, e = names.fresh(f"{var}_q"), names.fresh(f"{var}_end")
    qv, ev = Var(q), Var(e)
    slot = Load(slots, qv)
    crd_q = Load(crd, slot)

    def probe(t):      # the leaves of t's child (replicated levels may lie between)
        at = imp.Probe(crd, table[0], Bin("-", table[1], ONE), t)
        hit = eq(Load(crd, at), t)
        return map_leaf(lambda x: select(hit, x, zero), child((at, imp.add(at, ONE))))

    def skip(t, r):       # past every coordinate before t (and t itself when r)
        return While(and_(lt(qv, ev), or_(lt(crd_q, t), and_(eq(crd_q, t), r))), incr(q))

    left = Bin("-", ev, qv)
    return Stream(var=var, state=((q, "index"), (e, "index")),
                  init=seq(Assign(q, start), Assign(e, end)), valid=lt(qv, ev),
                  index=crd_q, ready=TRUE, value=child((slot, imp.add(slot, ONE))),
                  next=incr(q), skip=skip,
                  search="linear, through the listing in order; probe by hash",
                  facts=Facts.of(Locate(probe) if table is not None else None, Most(left),
                                 Extent(left)))


def lookup_level(names, var, crd: str, start: imp.Expr, end: imp.Expr, first: imp.Expr,
                 present: str, child, zero: imp.Expr | None) -> Stream:
    """The listed coordinates crd[start..end-1], coordinate c at position
    first + c (a formats.level.Lookup): walked as a unique segment whose child
    is at first + crd[q]; with the semiring's `zero` (a last level: its child
    is a leaf value, maybe under replicated levels) also located at any t,
    reading no state of its own: present[first + t] == 1 ? child(first + t) :
    zero at each leaf (a probe, which lower.produced reads as the located
    operand's hit). proofs_notes/lookup.md."""
    q, e = names.fresh(f"{var}_q"), names.fresh(f"{var}_end")
    qv, ev = Var(q), Var(e)

    def at(c):
        p = imp.add(first, c)
        return child((p, imp.add(p, ONE)))

    def probe(t):      # the leaves of t's child (replicated levels may lie between)
        hit = eq(Load(present, imp.add(first, t)), ONE)
        return map_leaf(lambda x: select(hit, x, zero), at(t))

    left = Bin("-", ev, qv)
    return Stream(var=var, state=((q, "index"), (e, "index")),
                  init=seq(Assign(q, start), Assign(e, end)), valid=lt(qv, ev),
                  index=Load(crd, qv), ready=TRUE, value=at(Load(crd, qv)), next=incr(q),
                  skip=lambda t, r: imp.Seek(q, ev, crd, t, r),
                  search="linear, then gallop; probe by position",
                  facts=Facts.of(Locate(probe) if zero is not None else None, Most(left),
                                 Extent(left)))


def blocks_level(names, var, first: str, pos: str | None, start: imp.Expr, end: imp.Expr,
                 child, n: imp.Expr | None = None, tiles: tuple | None = None) -> Stream:
    """The blocks start..end-1, block b the coordinates first[b] + i at positions
    pos[b] + i, i < pos[b+1] - pos[b] (a formats.level.Blocks): a segment of
    counted loops (the Pieces fact), no coordinate loaded inside a block; skip
    jumps, to the block holding the target, then to the target in it. `n`: the
    level's positions, given when its parents are visited in order: a parent's
    blocks, and successive parents, follow one another in memory (the Runs
    hint, as band_level's). `tiles` (width, step, at), with `pos` None: block b
    the coordinates first[b]·width + i at positions at + b·step + i, i < width."""
    b, be, c, e, d = (names.fresh(f"{var}_{x}") for x in ("b", "bend", "c", "end", "shift"))
    bv, bev, cv, ev, dv = (Var(x) for x in (b, be, c, e, d))
    if tiles is None:
        lead, length, at0 = Load(first, bv), _length(pos, bv), Load(pos, bv)
        left = Bin("-", Load(pos, bev), Load(pos, bv))
    else:                       # the parent's base, computed once (state a)
        width, step, base = tiles
        a = names.fresh(f"{var}_base")
        lead, length = imp.mul(Load(first, bv), width), width
        at0 = imp.add(Var(a), imp.mul(bv, step))
        left = imp.mul(Bin("-", bev, bv), width)
    enter = If(lt(bv, bev), seq(Assign(c, lead), Assign(e, imp.add(cv, length)),
                                Assign(d, Bin("-", at0, cv))))
    advance = seq(incr(b), enter)

    def skip(t, r):
        target = select(r, imp.add(t, ONE), t)
        return seq(While(and_(lt(cv, ev), le(ev, target)), seq(Assign(c, ev), advance)),
                   Assign(c, max_(cv, target)))

    at = imp.add(cv, dv)
    value = child((at, imp.add(at, ONE)))
    read = imp.arrays_loaded_at(value.init if is_stream(value) else value, at)
    runs = Runs(tuple(read), n, at) if n is not None and read else None
    init = seq(*([Assign(a, base)] if tiles else []), Assign(b, start), Assign(be, end),
               Assign(c, ZERO), Assign(e, ZERO), Assign(d, ZERO), enter)
    state = (b, be, c, e, d, a) if tiles else (b, be, c, e, d)
    return Stream(var=var, state=tuple((x, "index") for x in state), init=init,
                  valid=lt(cv, ev), index=cv, ready=TRUE, value=value,
                  next=seq(incr(c), If(le(ev, cv), advance)), skip=skip,
                  search="blocks: jump to the block, then within it",
                  facts=Facts.of(Most(left), Extent(left), Pieces(c, e, advance, _sizes(n)),
                                 runs))


def band_level(names, var, lo: imp.Expr, hi: imp.Expr, at: imp.Expr, child,
               n: imp.Expr | None = None, fixed: tuple | None = None) -> Stream:
    """The coordinates lo .. hi - 1 at positions at + c (a formats.level.Band: a
    band): a counted loop (state c, end) whose value reads the counter alone (the
    shift `at` is recomputed, loop-invariant, so Counter holds), one piece (its
    advance does nothing); skip jumps. `n`: the level's positions, given when
    its parents are visited in order, so that successive bands follow one
    another in memory (the Runs hint, for prefetching). `fixed`: (the parent
    position, a formats.level.Fixed), kept in the Counter fact."""
    c, e = (names.fresh(f"{var}_{x}") for x in ("c", "end"))
    cv, ev = Var(c), Var(e)
    p = imp.add(at, cv)
    value = child((p, imp.add(p, ONE)))
    read = imp.arrays_loaded_at(value.init if is_stream(value) else value, p)
    runs = Runs(tuple(read), n, p) if n is not None and read else None

    def skip(t, r):
        return Assign(c, select(r, max_(cv, imp.add(t, ONE)), max_(cv, t)))

    return Stream(var=var, state=((c, "index"), (e, "index")),
                  init=seq(Assign(c, lo), Assign(e, hi)), valid=lt(cv, ev),
                  index=cv, ready=TRUE, value=value, next=incr(c),
                  skip=skip, search="jump (a band)",
                  facts=Facts.of(Counter(c, lo, hi, fixed), Most(Bin("-", ev, cv)),
                                 Extent(Bin("-", ev, cv)), Pieces(c, e, imp.SKIP), runs))


def _sizes(n: imp.Expr | None) -> tuple:
    """Pieces.sizes of a block list of n positions: (n, its blocks), n read as
    pos[seg[parents]] and its blocks seg[parents]; () where n is unknown."""
    match n:
        case Load(_, Load() as count):
            return (n, count)
    return ()


def _length(pos: str, b: imp.Expr) -> imp.Expr:
    """The length of block b: pos[b+1] - pos[b]."""
    return Bin("-", Load(pos, imp.add(b, ONE)), Load(pos, b))

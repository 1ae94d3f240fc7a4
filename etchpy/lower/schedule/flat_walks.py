"""Flat walks, switched by tuning.flat_walks: a contracted counted loop over
consecutive parent positions c = first..end-1 (streams.Counter, every state
ready) whose one child is a contracted walk of a compressed level (its
streams.Walk: parent c's segment is pos[c] .. pos[c+1]) reading nothing else of
c runs as one walk over pos[first] .. pos[end]:

    for c in [first, end): for q in [pos[c], pos[c+1]): acc ⊕= f(q)
        =  for q in [pos[first], pos[end]): acc ⊕= f(q)

when pos is nondecreasing over first..end (the level's layout: a trusted input
keeps it; the build with fused checks tests it before the walk, Walk.rows,
lower.schedule.checked_walks.rows_in_order). The sum of every entry of a csr or
csc matrix (`A.sum()`) and 1ᵀAx then pay no row's pointers and no row's lanes
reduction: one segment, in lanes where the gathered sums take it. ⊕ is added in
the same order, entry by entry (proofs_notes/flat_walks.md). The formats whose
total this makes one walk: formats.positions.one_segment (runtime.shared reads
no such access flat itself)."""
from __future__ import annotations

from dataclasses import replace

from ... import imp, streams
from ...imp import ONE, Assign, Load, Var
from ...streams import Counter, Segment, Walk, is_stream


def run(em, s, ctx) -> imp.Stmt | None:
    """The level pass (schedule.PASSES): s's child walked flat (`flat`), or None."""
    flat = flattened(s)
    return None if flat is None else em.emit(flat, ctx, blocks=False)


def flattened(s) -> streams.Stream | None:
    """s's child walking the segments of all of s's parents as one, or None
    where the module docstring's form does not hold."""
    counter = s.facts.get(Counter)
    child = s.value
    if (counter is None or counter.fixed is not None or not s.contracted
            or s.ready != imp.TRUE or streams.Prelude in s.facts or not is_stream(child)):
        return None
    walk, seg = child.facts.get(Walk), child.facts.get(Segment)
    if walk is None or seg is None or walk.rows is not None or walk.narrow is not None or not all(
            lv.contracted for lv in streams.levels_of(child)):
        return None
    c = Var(counter.name)
    opens = (Assign(walk.q, Load(walk.pos, c)), Assign(walk.end, Load(walk.pos, imp.add(c, ONE))))
    stmts = imp.spliced(child.init)
    if not all(a in stmts for a in opens):
        return None
    rows = (counter.first, counter.end)
    init = imp.seq(*[Assign(walk.q, Load(walk.pos, rows[0])) if u == opens[0] else
                     Assign(walk.end, Load(walk.pos, rows[1])) if u == opens[1] else u
                     for u in stmts])
    mine = {counter.name, *(name for name, _ in s.state)}
    if mine & imp.names_used(init) or mine & _names_read(child):
        return None
    count = child.facts.get(Counter)      # its bounds as init's, else dropped
    ends = {opens[1].value: Load(walk.pos, rows[1]), Var(walk.end): Var(walk.end)}
    count = None if count is None or count.first != opens[0].value or count.end not in ends \
        else Counter(count.name, Load(walk.pos, rows[0]), ends[count.end])
    keep = child.facts.keep(Segment, streams.Most, streams.Extent, streams.Ahead)
    return child.derive(keep.add(replace(walk, rows=rows), count), init=init)



def _names_read(child) -> set[str]:
    """The names read by child's fields other than its init, its value's levels' too."""
    out: set[str] = set()
    for lv in streams.levels_of(child):
        for part in (lv.valid, lv.index, lv.ready, lv.next):
            out |= imp.names_used(part)
        if not is_stream(lv.value):
            out |= imp.names_used(lv.value)
        if lv is not child:
            out |= imp.names_used(lv.init)
    return out

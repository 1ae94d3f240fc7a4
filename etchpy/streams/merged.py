"""The segments a union walks to their ends (proofs_notes/validation.md,
"Checks inside a union merge").

A union by stepping fronts (combinators.union_by_stepping_fronts) advances
exactly the operands at its front by one each step and runs while either
operand is valid: it stops only when both have reached their ends. An operand
with a Walk fact (a unique segment level read at q only, q := q + 1 its next)
is thus read at every position of its segment crd[q..end), in order, each
once, and nowhere else; an operand that is itself such a union passes on the
walks of its own operands. The union records those walks as a `Merged` fact,
and the lowering notes it after the union's init (imp.Comment.walk,
lower.driver): a kernel may check each walked segment there, as it is opened
(lower.schedule.merge_checks), when the input was bound without its full check.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import imp
from .facts import Fact, Walk
from .stream import Stream


@dataclass(frozen=True)
class Merged(Fact):
    """The Walk facts of the operand segments a union reads whole: each
    segment is opened by the union's init (its q and end set from pos) and
    read at its q only, while q < end, q stepping by 0 or 1 until it reaches
    end (module docstring). A window walk's narrowing (Walk.narrow) reads its
    segment by searches first: such walks are left out."""
    walks: tuple


@dataclass(frozen=True)
class Stepped:
    """A note on a loop of a union by stepping fronts with a Merged fact
    (imp.While.walk, set by lower.schedule.phases): each run of its body is
    one step of the union, ready, at coordinate `index`, and the loops so
    noted after one merge note (imp.Comment.walk == merged) make all its steps,
    in order. The union's coordinates are then strictly increasing over its
    steps exactly when every walked segment's are, and each walked coordinate
    is one of them (proofs_notes/validation.md, "Checks in a union's steps")."""
    index: imp.Expr
    merged: Merged


@dataclass(frozen=True)
class Met(Fact):
    """The Walk facts of the operand segments an intersection reads in part
    (combinators.intersect_by_leapfrog and the merges built on it): each
    segment is opened by the intersection's init (its q and end set from pos)
    and read only inside it, at its q while q < end, q moved forward to at
    most end (a step of 0 or 1, a seek over crd[q..end), a short intersection
    whose reads past end are masked); the intersection may stop before either
    end, so a kernel may check these segments only whole, ahead of the rows
    that open them, each row of the level once (proofs_notes/validation.md,
    "Checks ahead of an intersection")."""
    walks: tuple


def met_walks(s: Stream) -> tuple:
    """The segments of operand s an intersection reads in part: its own Walk,
    or those its Met fact lists (an intersection reads its operands' segments
    no further than they do)."""
    w, m = s.facts.get(Walk), s.facts.get(Met)
    if w is not None:
        return (w,) if w.narrow is None else ()
    return m.walks if m is not None else ()


def met(a: Stream, b: Stream) -> Met | None:
    """The Met fact of an intersection of a and b (its operands read only inside
    their segments), None when neither has a segment so read."""
    walks = met_walks(a) + met_walks(b)
    return Met(walks) if walks else None


def walks_of(s: Stream) -> tuple:
    """The whole walks of operand s: its own Walk, or those its Merged fact lists."""
    w, m = s.facts.get(Walk), s.facts.get(Merged)
    if w is not None:
        return (w,) if w.narrow is None else ()
    return m.walks if m is not None else ()


def merged(a: Stream, b: Stream) -> Merged | None:
    """The Merged fact of a union by stepping fronts of a and b, None when
    neither operand is walked whole."""
    walks = walks_of(a) + walks_of(b)
    return Merged(walks) if walks else None


def note(s: Stream):
    """The statement noting s's Merged (or Met) fact where its init has opened
    the segments (imp.Comment.walk), SKIP when s has neither."""
    m = s.facts.get(Merged) or s.facts.get(Met)
    if m is None:
        return imp.SKIP
    names = ", ".join(sorted({w.tensor for w in m.walks}))
    how = "walked to their ends" if isinstance(m, Merged) else "read in part"
    return imp.Comment(f"segments of {names} {how}", walk=m)

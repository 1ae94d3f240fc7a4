"""The indexed stream record, after Etch (Kovach & Kjolstad), staged into Imp.

A stream ranges over one index variable and is a record of staged fields:

    state         the Imp variables it owns, with types (declared on entry)
    init          Imp statement: set up the state (assignments only)
    valid         Imp bool:  not yet exhausted
    index         Imp index: the current coordinate (read only while valid)
    ready         Imp bool:  the current state carries a value
    value         Imp value expression (innermost level) or a nested Stream
    next          Imp statement: advance past the current (index, ready)
    skip(t, r)    Imp statement: advance to the first state whose (index, ready)
                  is lexicographically > (t, r), with False < True; so skip(t, False)
                  reaches index ≥ t and skip(t, True) reaches index > t
    contracted    True once Σ has made the level unit-indexed

and two fields that carry no meaning of their own:

    search        how the stream moves, in words (describe, comments in the C)
    facts         what lowering may assume beyond the fields (facts.py)

A nested value is entered afresh each time its parent is ready: its state is
declared and its init run then, reading the parent's state.

A stream is never copied with some fields changed and the rest inherited:
`derive` takes the new facts explicitly, so a fact the caller does not name is
dropped (proofs_notes/facts.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Callable, Union

from .. import imp
from .facts import NO_FACTS, Counter, Facts, Most, Prefetch, Scatter, Walk


@dataclass(frozen=True, eq=False)
class Stream:
    var: str
    state: tuple            # ((name, type), ...)
    init: imp.Stmt
    valid: imp.Expr
    index: imp.Expr
    ready: imp.Expr
    value: "Value"
    next: imp.Stmt
    skip: Callable[[imp.Expr, imp.Expr], imp.Stmt] = field(repr=False)
    contracted: bool = False
    search: str = "linear"   # how skip moves: locate | jump | linear | merge | ...
    facts: Facts = field(default=NO_FACTS, repr=False)

    def derive(self, facts: Facts, **changes) -> "Stream":
        """This stream with some fields changed and exactly `facts` as its facts."""
        assert "facts" not in changes
        now = {f.name: getattr(self, f.name) for f in fields(self)}
        return Stream(**{**now, **changes, "facts": facts})


Value = Union[Stream, imp.Expr]


def is_stream(x) -> bool:
    return isinstance(x, Stream)


def built(s: Stream) -> tuple:
    """What a fact valid only on the stream it was made for records of it: its
    init, valid, value, next and skip, compared by identity (`unchanged`)."""
    return s.init, s.valid, s.value, s.next, s.skip


def unchanged(recorded: tuple, s: Stream) -> bool:
    """Whether s's fields are, object for object, those `built` recorded: no
    combinator has changed its init, test, value, step or skip since."""
    return all(x is y for x, y in zip(recorded, built(s)))


def levels_of(s: Value) -> list[Stream]:
    """The levels of s, outermost first (s, s.value, ... while they are streams)."""
    out = []
    while is_stream(s):
        out.append(s)
        s = s.value
    return out


def counter_range(s: Stream) -> tuple:
    """(counter name, first, end) of the Counter fact of s (which must hold it)."""
    c = s.facts.get(Counter)
    return c.name, c.first, c.end


def most_bound(s: Stream) -> imp.Expr | None:
    """The bound of the Most fact of s, or None."""
    m = s.facts.get(Most)
    return None if m is None else m.bound


def blocks_of(s: Stream, kind) -> tuple:
    """The blocks of the hint `kind` (Blocks or Prefetch) of s; () without it."""
    hint = s.facts.get(kind)
    return () if hint is None else hint.blocks


def with_prefetch(s: Stream, blocks: tuple) -> Stream:
    """s with `blocks` added to the blocks its loop prefetches (a hint)."""
    both = blocks_of(s, Prefetch) + tuple(blocks)
    return s.derive(s.facts.add(Prefetch(both) if both else None))


def walk_of(s: Stream, nxt: imp.Stmt) -> Walk | Scatter | None:
    """The Walk or Scatter fact of s for a loop over s whose step is `nxt`
    (imp.While.walk): s's own `next` only, else None."""
    if nxt != s.next:
        return None
    return s.facts.get(Walk) or s.facts.get(Scatter)

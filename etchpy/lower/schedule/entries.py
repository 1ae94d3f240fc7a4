"""Entries, switched by tuning.entries: a non-unique level (coo's first, and
any level above a singleton) read one stored entry at a time.

A non-unique segment groups each run of equal coordinates into one state: its
`find` loop reads crd again at every entry to find where the run ends. Where the
step's output is a dense array that every write ⊕-accumulates into, the runs
need not be found at all: `split` drops the search, leaving run = q + 1 (streams.Entries),
so each entry is a state of its own and the loop is a plain scatter,
`out[crd0[q]] ⊕= value of entry q`, scipy's coo loop. The sum over a run is
the ⊕ of its entries' values (⊗ distributes over ⊕), so the result is the
same, and it stays the same for entries in any order or repeated: a coo input
then needs no order check before the call, only its coordinates' bounds
(lower.schedule.coo_checks). The split level carries streams.Repeats, so the
target adds into each cell (never a store: writes_each_cell_at_most_once) and
the levels below are not `fresh`. proofs_notes/entries.md.

Not split: a level merged with another sparse operand (its facts drop
Entries), a sparse output or one that keeps flags (an append needs each
coordinate once, in order).
"""
from __future__ import annotations

from ... import imp
from ...imp import ONE, Assign, Var, seq
from ... import streams
from ...streams import Entries, Repeats, is_stream


def wanted(target, tuning) -> bool:
    """May the levels of a step into `target` be split into entries?"""
    return (tuning.entries and target.dense_axes is not None and not target.sparse_writes
            and not target.keeps_flags)


def split(s, target, tuning):
    """`s` with every level that carries Entries read one entry at a time, when
    `wanted`; else s unchanged."""
    if not is_stream(s) or not wanted(target, tuning):
        return s
    return _split_all(s)


def _split_all(s):
    if not is_stream(s):
        return s
    got = s.facts.get(Entries)
    if got is None:
        return s.derive(s.facts, value=_split_all(s.value))
    return _split_all(_entries(s, got))


def _entries(s, e: Entries):
    """The level s with run := q + 1 in place of its run search, and every read
    of run below it replaced by q + 1 (which it holds throughout). When nothing
    reads run any more (a fact of a level below might), run is dropped: no
    state, no assignment (exported C compiles with -Werror)."""
    one = imp.add(Var(e.q), ONE)

    def fix(node):
        return imp.substitute(_replace(node, e.scan, imp.SKIP), e.run, one)

    facts = s.facts.keep(*[k for k in streams.RUN_FACTS if k not in (Entries, streams.Locate)])
    value = _fix_value(s.value, fix, HINTS)
    keep = Var(e.run) in imp.subterms(_fields(value))
    nxt, set_run = fix(s.next), Assign(e.run, one)
    if nxt == seq(imp.incr(e.q), set_run):     # the step last (a walk loop's form)
        nxt = seq(Assign(e.run, imp.add(one, ONE)) if keep else imp.SKIP, imp.incr(e.q))
        facts = facts.add(e.scatter)            # a whole walk of the input's entries

    def final(node):
        return fix(node) if keep else _replace(fix(node), set_run, imp.SKIP)
    state = s.state if keep else tuple(x for x in s.state if x[0] != e.run)
    return s.derive(facts.add(Repeats()), state=state, init=final(s.init),
                    valid=fix(s.valid), index=fix(s.index), ready=fix(s.ready), next=nxt,
                    value=value, skip=lambda t, r: final(s.skip(t, r)),
                    search=f"{s.search}; each entry on its own (a scatter)")


def _fields(v) -> tuple:
    """Every field of value v and of the streams nested in it, their facts
    included (what a pass below may emit)."""
    if not is_stream(v):
        return (v,)
    return (v.init, v.valid, v.index, v.ready, v.next, v.facts.items, *_fields(v.value))


# Facts and hints of a long segment, dropped from the level right below a split one: its
# segment is the one entry at q (the singleton level under a non-unique one).
HINTS = (streams.Segment, streams.Walk, streams.Runs, streams.Extent, streams.Ahead)


def _fix_value(v, fix, drop=()):
    """The value v (a leaf, or a nested stream, whose fields and facts are fixed
    in turn; its facts of the kinds `drop` dropped)."""
    if not is_stream(v):
        return fix(v)
    facts = fix(streams.Facts(tuple(f for f in v.facts.items if not isinstance(f, drop))))
    return v.derive(facts, init=fix(v.init), valid=fix(v.valid), index=fix(v.index),
                    ready=fix(v.ready), next=fix(v.next), value=_fix_value(v.value, fix))


def _replace(node, old, new):
    """node with every occurrence of the subtree `old` replaced by `new`."""
    if node == old:
        return new
    if isinstance(node, imp.Seq):           # flattened, SKIPs dropped
        return seq(*[_replace(x, old, new) for x in node.stmts])
    if is_stream(node):
        return node
    return imp.map_parts(node, lambda x: _replace(x, old, new), notes=True)



"""Segment checks made a block of parents at a time, ahead of the loop that
opens them (proofs_notes/validation.md, "Segments checked a block ahead").

A fused level (lower.schedule.fused_checks) checks each segment as a walk
opens it: `0 <= q <= e <= nnz`, a test and a branch per segment. Where every
walk of the level opens its segment at pos[c] .. pos[c+1] for the counter c
of a full loop over the parents,

    c := 0; while (c < parents) { ...; c := c + 1 }     (c assigned nowhere else)

the kernel already runs once per parent, and the same test is cheaper as a
flat pass: the loop runs a block of `block` parents at a time, first testing
that pos does not decrease over the block, pos[r] <= pos[r+1] for every r of
it, in a loop with no branch and one comparison a parent (it vectorises), and
that the block's last end is inside crd, pos[end] <= nnz (once a block), then
the block's iterations without the per-segment guard (a level of dimension 0
fails every block: fused_checks reads a bad coordinate of such a level's walks
as coordinate 0):

    while (c < parents) {
        end := min(c + block, parents); bad := [dim = 0] | [nnz <u pos[end]]
        for r in [c, end): bad |= pos[r+1] < pos[r]
        if (bad) { error := 4; end := c; c := parents }
        while (c < end) { ...; c := c + 1 }
    }

Every segment the loop opens is pos[r] .. pos[r+1] for an r of a block
already passed: pos[r+1] <= pos[end] <= nnz down the block's chain, and
pos[r] >= 0 by induction down the chain pos[0] <= ... <= pos[r] (0 <= pos[0]
<= nnz is an O(1) fact the runtime checks before every call, as is nnz <=
len(crd); each block's chain starts at the last end of the block before). So
0 <= q <= e <= nnz, what the per-segment guard establishes. A failed block
leaves its rows and all later ones unrun; the kernel returns the error code
and the runtime checks that input in full (the output is not used). The bound
is tested once a block, not once a parent: the pass is half as long (what it
cost: docs/performance.md, "Fused input checks").

A loop split across threads over all parents (imp.ParallelFor over [0,
parents)) is a full loop too: it becomes one over blocks, each testing its own
first start as well, since blocks run in any order (`_parallel_blocks`;
proofs_notes/validation.md, "Checks inside a loop split across threads").
"""
from __future__ import annotations

from ...imp import (Assign, Bin, Comment, Const, Decl, If, Load, Not, ParallelFor, Seek, Select,
                    Seq, ShortIntersect, Var, While, and_, lt, max_, min_, seq)
from ...imp.analysis import children, scalars_assigned, seq_parts, statements
from ...streams import Merged, Met, Walk
from .checks_first import range_scan
from .met_checks import lanes_scan, next_block


def plan(prog, levels) -> list:
    """[(a loop of prog.body, the levels checked ahead of its blocks, the
    offset of its rows)]: each of `levels` (fused_checks.Level values) all of
    whose walks open their segments at pos[c], pos[c+1] inside a full loop over
    its parents with counter c (`_full`, `_loops_opening`; offset None), or at
    pos[o + c], pos[o + c + 1] as statements of the body of a loop over c of a
    window's rows (`_window`; offset o), is listed with each such loop."""
    out, offsets = {}, {}
    for lv in levels:
        for loop, off in _loops_opening(prog.body, lv, parent_names(prog, lv.parents)) or ():
            out.setdefault(loop, []).append(lv)
            offsets[loop] = off
    return [(loop, lvs, offsets[loop]) for loop, lvs in out.items()]


def parent_names(prog, parents: str) -> set[str]:
    """The C names equal to the size `parents` in the kernel: itself and the
    dim_{var} of each index it sizes (the prologue checks they agree)."""
    return {parents} | {f"dim_{var}" for var, tensor, mode in prog.dims
                        if f"{tensor}_dim{mode}" == parents}


def _full(before, loop):
    """(counter, bound) when `before; loop` is a full loop, else None."""
    match before, loop:
        case (Assign(c, Const(0)) | Decl(c, _, Const(0)), While(Bin("<", Var(c2), Var(n)), body)) \
                if c == c2 and steps_once(body, c):
            return c, n
    return None


def _full_arms(before, stmt, bounds: set[str]) -> list | None:
    """[(loop, counter)] when `before; stmt` is a full loop over one of `bounds`,
    or `before; if (t) A else B` with each arm a full loop after `before` or
    itself such an if (`_arms`: lower.schedule.size_switch switches a loop apart
    from its counter's start, and value_prefetch switches the large way again
    on its far pick; tests assign nothing, so each arm starts at 0 too); else
    None."""
    got = [(a, _full(before, a)) for a in _arms(stmt)]
    if all(g and g[1] in bounds for _, g in got):
        return [(a, g[0]) for a, g in got]
    return None


def _arms(stmt) -> list:
    """The leaves of stmt read as a tree of ifs with both arms (a Seq of one
    read as its statement), in order; [stmt] when it is no such if."""
    stmt = stmt.stmts[0] if isinstance(stmt, Seq) and len(stmt.stmts) == 1 else stmt
    if isinstance(stmt, If) and stmt.else_ is not None:
        return _arms(stmt.then) + _arms(stmt.else_)
    return [stmt]


def _window(loop, pos: str):
    """[(loop, counter)] and the offset o when `loop` is `while (c < n) {...;
    c := c + 1}` whose body opens, as statements of its own (run at every c,
    never skipped), a segment at pos[o + c] and pos[o + c + 1] for one o: a
    window's rows, which the loop reads whatever c starts at, so a block's scan
    reads only pos entries the loop reads; else None."""
    match loop:
        case While(Bin("<", Var(c), Var(_)), body) if steps_once(body, c):
            pass
        case _:
            return None
    stmts = seq_parts(body)
    opened = {False: set(), True: set()}
    for st in stmts:
        for end in (False, True):
            got = _opening(_value(st), pos, end) if isinstance(st, (Assign, Decl)) else None
            if got is not None and got[0] == c and got[1] is not None:
                opened[end].add(got[1])
    offs = opened[False]
    if len(offs) == 1 and offs == opened[True] and \
            next(iter(offs)).name not in scalars_assigned(body):
        return [(loop, c)], next(iter(offs))
    return None


def _value(st):
    return st.value if isinstance(st, Assign) else st.init


def steps_once(body, c: str) -> bool:
    """Whether a loop's body steps its counter c by one as its last statement
    and assigns it nowhere else (its rows run c, c + 1, ..., none skipped)."""
    stmts = seq_parts(body)
    return (bool(stmts) and stmts[-1] == Assign(c, Bin("+", Var(c), Const(1)))
            and c not in scalars_assigned(Seq(stmts[:-1])))


def _loops_opening(body, lv, bounds: set[str]) -> list | None:
    """The full loops (bound among `bounds`) whose counters c open lv's walks
    at pos[c] (q) and pos[c + 1] (end) from inside them, in the order the body
    holds them (the names their blocks declare are drawn in it, so the C is the
    same in every process), when every value
    given to a walk's q or end is such an opening, q + 1 or end (q), or 0 (a
    declaration); else None."""
    walks = _walks(body, lv.crd)
    qs, ends = {w.q for w in walks}, {w.end for w in walks}
    spans = {(w.q, Var(w.end), w.crd) for w in walks}
    steps = {v for q in qs for v in (Bin("+", Var(q), Const(1)), *(Var(e) for e in ends))}
    steps |= {Bin("+", Var(q), Var(f)) for q in qs for f in _flags(body) if lv.merged}
    used, ok = {}, True      # loops in the order visited (names are drawn in it)

    def visit(node, active: dict):
        nonlocal ok
        match node:
            case Seq(stmts):
                for k, s in enumerate(stmts):
                    arms = _full_arms(stmts[k - 1], s, bounds) if k else None
                    off, window = None, None if arms else _window(s, lv.pos)
                    if window:
                        arms, off = window
                    if arms:                         # full loops: their counter opens rows
                        for loop, c in arms:
                            visit(loop.body, {**active, c: (loop, off)})
                    else:
                        visit(s, active)
                return
            case ParallelFor(c, Const(0), Var(n), loop_body) if n in bounds:
                visit(loop_body, {**active, c: (node, None)})     # its rows, in any order
                return
            case Assign(name, value) | Decl(name, _, value) if name in qs | ends:
                c, off = _opening(value, lv.pos, name in ends) or (None, None)
                if c in active and active[c][1] == off:
                    used[active[c][0]] = off
                elif not (isinstance(node, Decl) and value == Const(0)) and not (
                        name in qs and value in steps):
                    ok = False
                return
            case Seek() | ShortIntersect() if not _moves_inside(node, lv, qs | ends, spans):
                ok = False
        for child in children(node):
            visit(child, active)

    visit(body, {})
    return list(used.items()) if ok and used else None


def _moves_inside(node, lv, names: set, spans: set) -> bool:
    """Whether the seek or short intersection `node` moves none of the walks' q
    (among `names`), or, for an intersection's level (lv.met, met_checks), moves
    each q it names inside its segment, one of the `spans` (q, Var(end), crd):
    forward to at most end (imp.Seek, imp.ShortIntersect)."""
    if isinstance(node, Seek):
        sides = ((node.q, node.end, node.crd),)
    else:
        sides = ((node.qa, Var(node.ea), node.crd_a), (node.qb, Var(node.eb), node.crd_b))
    touched = [(q, e, c) for q, e, c in sides if q in names]
    return not touched or (lv.met and all(side in spans for side in touched))


def _flags(body) -> set[str]:
    """The variables body declares bool (a union's step flags, 0 or 1)."""
    return {d.name for d in statements(body) if isinstance(d, Decl) and d.type == "bool"}


def _walks(body, crd: str) -> list:
    """The walks over `crd` in body: loops', union merges' (q += its flag) and
    intersections' (streams.Met: q += its flag, seeks, short intersections)."""
    return [s.walk for s in statements(body) if isinstance(s, While)
            and isinstance(s.walk, Walk) and s.walk.crd == crd] + [
        w for s in statements(body) if isinstance(s, Comment)
        and isinstance(s.walk, (Merged, Met))
        for w in s.walk.walks if w.crd == crd]


def _opening(value, pos: str, end: bool) -> tuple | None:
    """(c, o) when value is pos[o + c] (pos[o + c + 1] for an `end`), o None
    for pos[c]; else None."""
    match value:
        case Load(a, Var(c)) if a == pos and not end:
            return c, None
        case Load(a, Bin("+", Var(c), Const(1))) if a == pos and end:
            return c, None
        case Load(a, Bin("+", Var() as o, Var(c))) if a == pos and not end:
            return c, o
        case Load(a, Bin("+", Bin("+", Var() as o, Var(c)), Const(1))) if a == pos and end:
            return c, o
    return None


def block_loop(loop, levels, err: str, error_code: int, block: int, names,
               split: int = 1, off=None, ahead: bool = False):
    """The full loop `loop` run `block` parents at a time, the segments of
    `levels` (fused_checks.Level values over its parents) checked ahead of each
    block (module docstring); a failed block sets `err` to `error_code`. A
    parallel loop (`_parallel_blocks`) is cut into at most `split` blocks. A
    window's rows (offset `off`: row o + c) test their block's first start too,
    pos[o + c] >= 0: their chain does not start at pos[0]. `ahead`: each row of a
    serial loop hints the coordinates of the intersections' levels (`lv.met`)
    one block on (met_checks.next_block)."""
    if isinstance(loop, ParallelFor):
        return _parallel_blocks(loop, levels, err, error_code, block, names, split)
    c, n = loop.cond.a, loop.cond.b
    end = names.fresh(f"{c.name}_block")
    first = Const(0)
    for lv in levels if off is not None else ():
        first = Bin("|", first, Bin("<", Load(lv.pos, Bin("+", off, c)), Const(0)))
    scan, bv = _scan(c, Var(end), levels, names, first, c.name, off)
    stop = If(Bin("!=", bv, Const(0)),
              seq(Assign(err, Const(error_code)), Assign(end, c), Assign(c.name, n)))
    later = [lv for lv in levels if lv.after] if off is not None else []
    start = names.fresh(f"{c.name}_start") if later else None
    after = [_after_scan(Var(start), Var(end), lv, c.name, n, err, error_code, names, off)
             for lv in later]
    fetch = [next_block(lv, c, n, block) for lv in levels if lv.met and ahead]
    return While(loop.cond, seq(Decl(end, "index", min_(Bin("+", c, Const(block)), n)),
                                *([Decl(start, "index", c)] if later else []),
                                scan, stop, While(lt(c, Var(end)), seq(*fetch, loop.body)),
                                *after))


def _after_scan(start, end, lv, c: str, n, err: str, error_code: int, names, off):
    """After a block of a window's rows o + r, r in [start, end), has run: its
    entries' coordinates (pos[o + start] .. pos[o + end], pos passed by the
    block's scan) each inside [0, dim), in one flat pass with no branch taking
    their least and greatest (`coord` scalars: at the arrays' own width, so
    it vectorises in 32-bit lanes for int32 indices); else the error, and no
    later block runs (proofs_notes/validation.md, "Coordinates checked after a
    block")."""
    k, last, least, most = (names.fresh(f"{c}_{part}") for part in ("ck", "clast", "cmin", "cmax"))
    kv, at = Var(k), Load(lv.crd, Var(k))
    return If(lt(start, end), seq(
        Decl(k, "index", Load(lv.pos, Bin("+", off, start))),
        Decl(last, "index", Load(lv.pos, Bin("+", off, end))),
        Decl(least, "coord", Const(0)), Decl(most, "coord", Const(0)),
        While(lt(kv, Var(last)), seq(Assign(least, Select(lt(at, Var(least)), at, Var(least))),
                                     Assign(most, Select(lt(Var(most), at), at, Var(most))),
                                     Assign(k, Bin("+", kv, Const(1))))),
        If(Bin("|", lt(Var(least), Const(0)), Bin("<=", Var(lv.dim), Var(most))),
           seq(Assign(err, Const(error_code)), Assign(c, n)))))


def _scan(c, ev, levels, names, first, base: str, off=None):
    """(the branch-free pass testing the segments of [c, ev) for every level,
    the flag it sets): `first` | [dim = 0] | [nnz <u pos[ev]] | OR pos[r+1] < pos[r]
    (rows o + r with an offset `off`)."""
    r, bad = names.fresh(f"{base}_r"), names.fresh(f"{base}_bad")
    rv, bv = Var(r), Var(bad)
    row = (lambda e: e) if off is None else (lambda e: Bin("+", off, e))
    test = bv
    for lv in levels:                   # dim 0: no coordinate is inside (fused_checks'
        if not lv.stepped:              # clamped loops; a union's steps test dim themselves)
            first = Bin("|", first, Bin("==", Var(lv.dim), Const(0)))
        first = Bin("|", first, Bin("<u", Load(lv.pos, Var(lv.parents)), Load(lv.pos, row(ev))))
        test = Bin("|", test, Bin("<", Load(lv.pos, row(Bin("+", rv, Const(1)))),
                                  Load(lv.pos, row(rv))))
    crds = [(lanes_scan if lv.met else _crd_scan)(c, ev, lv, bad, names, base, row)
            for lv in levels if lv.merged and not lv.stepped]
    crds += [range_scan(c, ev, lv, bad, names, base) for lv in levels if lv.first]
    return seq(Decl(r, "index", c), Decl(bad, "bool", first),
               While(lt(rv, ev), seq(Assign(bad, test), Assign(r, Bin("+", rv, Const(1))))),
               *(If(Not(bv), scan) for scan in crds)), bv


def _crd_scan(c, ev, lv, bad: str, names, base: str, row=lambda e: e):
    """The coordinates of the block's segments (pos[c] .. pos[ev], pos already
    passed): each inside [0, dim), and strictly increasing within each segment.
    One flat pass counts the descents crd[k-1] >= crd[k] over the block's
    entries and tests each coordinate; a pass over its parents takes off the
    descents at the start of each nonempty segment but the first (distinct
    starts): none is left exactly when no segment has one
    (proofs_notes/validation.md, "Checks inside a union merge"). A window's
    parents r are rows `row(r)`."""
    k, d, r = (names.fresh(f"{base}_{part}") for part in ("k", "d", "rr"))
    lo, hi, kv, dv, rv = Load(lv.pos, row(c)), Load(lv.pos, row(ev)), Var(k), Var(d), Var(r)
    crd = lambda i: Load(lv.crd, i)                     # noqa: E731
    desc = lambda i: Not(lt(crd(Bin("-", i, Const(1))), crd(i)))    # noqa: E731
    outside = lambda i: Not(Bin("<u", crd(i), Var(lv.dim)))         # noqa: E731
    start = Load(lv.pos, row(rv))
    inner = and_(lt(lo, start), lt(start, Load(lv.pos, row(Bin("+", rv, Const(1))))))
    return seq(
        Decl(d, "index", Const(0)),
        If(lt(lo, hi), Assign(bad, Bin("|", Var(bad), outside(lo)))),
        Decl(k, "index", Bin("+", lo, Const(1))),
        While(lt(kv, hi), seq(Assign(bad, Bin("|", Var(bad), outside(kv))),
                              Assign(d, Bin("+", dv, desc(kv))), Assign(k, Bin("+", kv, Const(1))))),
        Decl(r, "index", Bin("+", c, Const(1))),
        While(lt(rv, ev), seq(If(and_(inner, desc(start)), Assign(d, Bin("-", dv, Const(1)))),
                              Assign(r, Bin("+", rv, Const(1))))),
        Assign(bad, Bin("|", Var(bad), Bin("!=", dv, Const(0)))))


def _parallel_blocks(loop: ParallelFor, levels, err, error_code, block, names, split):
    """A parallel loop over all parents c in [0, n) as one over blocks of
    `size` = max(1, min(block, ceil(n / split))) parents, so that there are at
    most `split` of them (as many as the C splits the loop into: its threads
    keep their share). Blocks run in any order, so each also tests its first
    segment's start, pos[lo] >= 0 (a serial block has it from the block
    before); a failed block runs none of its parents:

        size := ...; parallel for b in [0, ceil(n / size)) {
            lo := b·size; end := min(lo + size, n); bad := [pos[lo] < 0] | ...
            if (bad) error := 4 else { c := lo; while (c < end) { body; c := c + 1 } } }"""
    c, n = loop.var, loop.end
    size, b, lo, end = (names.fresh(f"{c}_{part}") for part in ("size", "b", "lo", "block"))
    per = Bin("/", Bin("+", n, Const(split - 1)), Const(split))
    first = Const(0)
    for lv in levels:
        first = Bin("|", first, Bin("<", Load(lv.pos, Var(lo)), Const(0)))
    scan, bv = _scan(Var(lo), Var(end), levels, names, first, c)
    rows = seq(Decl(c, "index", Var(lo)),
               While(lt(Var(c), Var(end)), seq(loop.body, Assign(c, Bin("+", Var(c), Const(1))))))
    body = seq(Decl(lo, "index", Bin("*", Var(b), Var(size))),
               Decl(end, "index", min_(Bin("+", Var(lo), Var(size)), n)), scan,
               If(Bin("!=", bv, Const(0)), Assign(err, Const(error_code)), rows))
    count = Bin("/", Bin("+", n, Bin("-", Var(size), Const(1))), Var(size))
    return seq(Decl(size, "index", max_(Const(1), min_(Const(block), per))),
               ParallelFor(b, Const(0), count, body, loop.threads, loop.reduce, loop.private,
                           loop.flag, loop.parallel_if))

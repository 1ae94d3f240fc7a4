"""Entries listed in blocks, then walked (the two-phase form), switched by
tuning.guard_blocks, with tuning.guard_block entries in a block (0: off).

A counted loop `while (i < E) { prefix; S; suffix; i = i + 1 }` whose S
walks, on its straight path (one-position loops, a one-position level's
seek and stop, `if`s), into a region where a child fibre starts (`q =
P[X]; e = P[X + 1]`: an order's lines), or, with tuning.guard_located and
no such fibre further on, where a located row starts (`q = P[X]; e = P[X]
+ 1`: a line's part) is run as

    local L[B];
    while (i < E) {
        top = min(i + B, E);  n = 0;
        for (t = i; t < top; t++) { L[n] = t;  n += T1(t); }      list: branch-free
        m = 0; for (t = 0; t < n; t++) { L[m] = L[t];  m += T2(L[t]); }  n = m;  ...
        for (t = 0; t < n; t++) { prefetch A[P[X(L[t + d])]] ...;  i = L[t];  <body> }
        i = top;
    }

where T1, T2, ... are the tests on the path to the region, in the order the
body makes them (each a function of the counter and of names the loop never
changes), each evaluated only for the entries that passed the ones before
(so it reads only what the body reads), and d is tuning.guard_blocks_ahead
(0: no prefetch), and the arrays the body reads at the listed entry's own
position tuning.guard_blocks_far on (0: off). Where the first tests read
arrays only at the counter, the block is listed through a mask of them
(lower.schedule.guard_mask, tuning.guard_mask). The body itself is
unchanged: each listed entry runs all
of it, tests included. The form is chosen only where an entry whose tests
fail is inert (lower.schedule.guard_inert: its prefix and suffix leave the
loop's state as they found it, S does nothing outside the region but assign
the body's own names); then the listed entries are those that can change
anything, visited in the same order, and every result is the same, for
every semiring (proofs_notes/hoist.md, "Entries listed in blocks").
Measured on TPC-H Q3 and Q4: docs/performance.md, "Entries listed in blocks";
on Q14's lines (a located row, blocks of 4096): "Q14: the lines walked as one loop".
"""
from __future__ import annotations

from dataclasses import replace

from ... import imp
from ...imp import (Assign, Bin, Block, Comment, Const, Decl, If, Load, LocalArray, Not, Opaque,
                    Prefetch, Seek, Select, Seq, Store, Var, While)
from ...imp.analysis import children
from . import guard_inert as inert, guard_mask
from .guard_prefetch import _Fixed, _conjuncts, _one, _reads_at, counted


def run(prog, tuning):
    """`prog` with each counted loop of the shape above split into blocks
    (`prog` itself when guard_block is 0 or none matches)."""
    if tuning.guard_block <= 0:
        return prog
    body = _rewrite(prog, prog.body, (), tuning)
    return prog if body == prog.body else replace(prog, body=body)


def _rewrite(prog, s, before: tuple, tuning):
    """s with its outermost matching loops split (`before`: the statements
    before s in its sequence)."""
    if isinstance(s, While):         # (not inside: a loop over one position is not split)
        new = _split(prog, s, before, tuning)
        return s if new is None else new
    kids = children(s)
    if not kids:
        return s
    if isinstance(s, Seq):
        new = tuple(_rewrite(prog, k, s.stmts[:n], tuning) for n, k in enumerate(s.stmts))
        return s if new == s.stmts else Seq(new)
    new = tuple(_rewrite(prog, k, (), tuning) for k in kids)
    if new == kids:
        return s
    match s:
        case If(c, _, None):
            return If(c, new[0])
        case If(c, _, _):
            return If(c, new[0], new[1])
        case Block():
            return replace(s, body=new[0])
    return s


def _split(prog, loop: While, before: tuple, tuning):
    """The two-phase form of `loop`, or None where its shape or the law's
    conditions do not hold."""
    if (c := counted(loop)) is None or len(c[2]) < 2:
        return None
    i, end, stmts, changed = c
    j = next((k for k, s in enumerate(stmts[:-1])
              if isinstance(s, (While, If)) and not inert.hint(s)), None)
    if j is None:
        return None
    fixed = _Fixed(changed - {i}, imp.arrays_written(loop.body))
    found = _guard(stmts[:j + 1], {i: Var(i)}, fixed, [], None, tuning.guard_located)
    local = imp.declared_in(loop.body)
    if found is None or not found[0] or not _local_only(stmts[j], local, found[1]):
        return None
    if not _inert(prog, stmts[:j], stmts[j], stmts[j + 1:-1], found[1], local, i, before):
        return None
    return _build(loop, i, end, found, tuning, imp.names_used(prog.body))


def _inert(prog, prefix, guarded, suffix, region, local, i, before) -> bool:
    """Whether an entry whose tests fail leaves the loop's state as it was
    (guard_inert), `region` not run."""
    carried = imp.scalars_assigned(Seq((*prefix, guarded, *suffix))) - local - {i}
    every = imp.scalars_assigned(guarded) | imp.declared_in(guarded)
    outside = _assigned_outside(guarded, region)

    def run_full(env):
        env = inert.run(prefix, env, False)
        return inert.run(suffix, {k: v for k, v in env.items() if k not in every}, False)
    inv = inert.invariants(before, carried, run_full)
    env0 = inert.start(carried, inv)
    stores = []
    try:
        env = inert.run(prefix, dict(env0), True, stores)
        env = {k: v for k, v in env.items() if k not in outside}
        env = inert.run(suffix, env, True, stores)
    except inert._Fail:
        return False
    return inert.inert(prog, prefix, carried, env, env0, stores, run_full(env0))


def _assigned_outside(s, region) -> set:
    """The names s assigns or declares outside the statement `region`."""
    if s is region:
        return set()
    match s:
        case Decl(x, _, _) | Assign(x, _) | Seek(x, _, _, _, _):
            return {x}
    return set().union(*(_assigned_outside(k, region) for k in children(s)))


def _local_only(s, local: set, region) -> bool:
    """Whether s, outside the statement `region`, only assigns the body's own names."""
    if s is region:
        return True
    match s:
        case Decl(x, _, _) | Assign(x, _) | Seek(x, _, _, _, _):
            return x in local
        case Comment() | Opaque() | Prefetch():
            return True
        case If() | While() | Seq() | Block():
            return all(_local_only(k, local, region) for k in children(s))
    return False


def _guard(stmts, env: dict, fixed, conj: list, owner, located: bool):
    """(tests, region, fibre) on the straight path through stmts (`owner`: the
    statement whose body they are), or None. The region is the statement
    whose body starts the child fibre; the tests, each a function of the
    counter, are those the path makes before it, in order; the fibre is (P,
    X, the arrays read at its position, the test of the if around its start).
    A located row (`located`) is the region only where the path past it
    reaches no other (with tests of its own: a customer's segment, then the
    order's lines)."""
    seek, row = None, None
    for k, s in enumerate(stmts):
        pair = _pair(stmts[k:], env, fixed, located)
        if pair is not None and not pair[4]:
            return conj, owner, pair[:4]
        row = row or (pair and (conj, owner, pair[:4]))
        if seek is not None and not isinstance(s, While):
            return row
        match s:
            case If(Bin("<", Var(q), Var(e)), Seek(q2, Var(e2), crd, t, r), None) if (
                    (q, e) == (q2, e2) and _one(env.get(q), env.get(e))):
                seek = (q, fixed.value(_passes(Load(crd, env[q]), t, r), env))
                if seek[1] is None:
                    return row
            case Decl(x, _, e) | Assign(x, e):
                env[x] = fixed.value(e, env)
            case Opaque() | Comment() | Prefetch() | Store():   # (stores: _local_only, _inert)
                pass
            case If() if inert.hint(s):
                pass
            case If(c, then, None) if fixed.value(c, env) is not None:
                return _guard(imp.seq_parts(then), env, fixed, _and(conj, [fixed.value(c, env)]), s,
                              located) or row
            case While():
                return _loop(s, env, fixed, conj, seek, located) or row
            case _:
                return row
    return row


def _loop(loop: While, env, fixed, conj, seek, located: bool):
    """_guard inside a loop over one position (`seek`: the q of a seek just
    before it and its test)."""
    parts = _conjuncts(loop.cond)
    at = next((k for k, t in enumerate(parts) if isinstance(t, Bin) and t.op == "<"
               and isinstance(t.a, Var) and isinstance(t.b, Var)), None)
    if at is None:
        return None
    q, e = parts[at].a.name, parts[at].b.name
    body = imp.seq_parts(loop.body)
    if (seek is not None and seek[0] != q) or not _one(env.get(q), env.get(e)) \
            or body[-1] != imp.incr(q) or {q, e} & imp.scalars_assigned(Seq(body[:-1])):
        return None
    tests = [fixed.value(t, env) for t in parts[:at] + parts[at + 1:]]
    if any(t is None for t in tests):
        return None
    tests[at:at] = [seek[1]] if seek else []
    return _guard(body[:-1], env, fixed, _and(conj, tests), loop, located)


def _pair(stmts, env, fixed, located: bool):
    """(P, X, arrays read at the fibre's position, the test guarding its start
    or None, whether it is a located row) where stmts start the fibre P[X] ..
    P[X + 1], or the one position P[X] of a located level (`q = P[X]; e = P[X]
    + 1`: a line's part, its table's row; with `located`: Tuning.guard_located);
    else None."""
    test = None
    match stmts:
        case (If(c, then, None), *rest):
            test, stmts = fixed.value(c, env), imp.seq_parts(then) + tuple(rest)
    match stmts:
        case (Assign(q, Load(p, x) as start), Assign(_, end), *rest) if end == Load(
                p, imp.add(x, imp.ONE)) or located and end == imp.add(start, imp.ONE):
            at = fixed.value(x, env)
            reads = _reads_at(Seq(tuple(rest)), q)
            if at is not None and reads:
                return p, at, reads, test, end != Load(p, imp.add(x, imp.ONE))
    return None


def _passes(at, t, r):
    """Whether a seek to (t, r) stops at a position whose coordinate is `at`."""
    if r in (Const(0), Const(False, "bool"), imp.FALSE):
        return Bin("<=", t, at)
    return Not(Bin("||", Bin("<", at, t), Bin("&&", Bin("==", at, t), r)))


def _and(conj: list, tests) -> list:
    return list(dict.fromkeys([*conj, *tests]))


def _build(loop, i: str, end, found, tuning, taken: set):
    """The block loop (module docstring) for `loop`."""
    tests, _, (pos, at, reads, guarded) = found
    names = {x: f"{i}_{x}" for x in ("list", "top", "n", "t", "m", "mask", "w", "g")}
    if set(names.values()) & taken:
        return None
    lst, top, n, t, m = (names[x] for x in ("list", "top", "n", "t", "m"))
    size, ahead = min(tuning.guard_block, 1 << 13), tuning.guard_blocks_ahead  # (on the stack)
    masked = guard_mask.prefix(tests, i) if tuning.guard_mask > 0 else 0
    one = lambda c: Select(c, imp.ONE, imp.ZERO)
    listed = [Decl(top, "index", imp.min_(imp.add(Var(i), Const(size)), end)),
              Decl(n, "index", imp.ZERO), Decl(t, "index", Var(i))]
    if masked:
        listed += guard_mask.listing(tests[:masked], i, names,
                                     min(tuning.guard_mask, 64))   # (a group is unrolled)
    else:
        listed.append(While(imp.lt(Var(t), Var(top)), imp.seq(
            Store(lst, Var(n), Var(t)),
            Assign(n, imp.add(Var(n), one(imp.substitute(tests[0], i, Var(t))))),
            imp.incr(t))))
    for test in tests[max(masked, 1):]:
        listed += [Assign(m, imp.ZERO), Assign(t, imp.ZERO),
                   While(imp.lt(Var(t), Var(n)), imp.seq(
                       Store(lst, Var(m), Load(lst, Var(t))),
                       Assign(m, imp.add(Var(m), one(imp.substitute(
                           test, i, Load(lst, Var(t)))))),
                       imp.incr(t))),
                   Assign(n, Var(m))]
    fetch = None
    if ahead > 0 and (guarded is None or guarded in tests):
        nxt = imp.add(Var(t), Const(ahead))
        start = Load(pos, imp.substitute(at, i, Load(lst, nxt)))
        fetch = If(imp.lt(nxt, Var(n)), imp.seq(*(Prefetch(a, start) for a in reads)))
    body = imp.seq_parts(loop.body)[:-1]
    while fetch is not None and inert.hint(body[0]):
        body = body[1:]            # (prefetches by the counter: the listed entries' own instead)
    walk = While(imp.lt(Var(t), Var(n)), imp.seq(
        _far(body, i, lst, t, n, tuning.guard_blocks_far if fetch else 0), fetch,
        Assign(i, Load(lst, Var(t))), *body, imp.incr(t)))
    mask = [LocalArray(names["mask"], size, imp.ZERO, "bool"),
            Decl(names["g"], "index", imp.ZERO)] if masked else []
    return Block(imp.seq(
        LocalArray(lst, size, imp.ZERO, "index"), *mask, Decl(m, "index", imp.ZERO),
        While(loop.cond, imp.seq(*listed, Assign(t, imp.ZERO), walk, Assign(i, Var(top))))))


def _far(body, i: str, lst: str, t: str, n: str, far: int):
    """The prefetch of what the listed entry `far` on reads at its own position
    (a line's part code, from which the nearer prefetch finds the part's row:
    its miss then overlaps the walk instead of stalling it), or SKIP."""
    reads = _reads_at(Seq(tuple(body)), i) if far > 0 else []
    if not reads:
        return imp.SKIP
    nxt = imp.add(Var(t), Const(far))
    return If(imp.lt(nxt, Var(n)), imp.seq(*(Prefetch(a, Load(lst, nxt)) for a in reads)))

"""Guarded fibres prefetched ahead, switched by tuning.prefetch_guarded (the
distance d, in entries; 0: off) and tuning.prefetch.

A counted loop `while (i < E) { ...; i = i + 1 }` (a dense level walked, or a
compressed one's positions) whose body reaches, on its straight path (plain
declarations and assignments, and one-position loops `q = X; e = X + 1;
while (q < e)`, a located level), a hoisted guard over a child fibre:

    g = T;  if (g) { q = P[X]; e = P[X + 1]; }  while (g && q < e) <child>

(streams.hoist: a marker probe, a row test) gets at the top of its body

    if (i + d < E && T[i := i + d]) { prefetch A[P[X[i := i + d]]], ... }

for each array A the child reads at its position q (or at a position a
one-position loop below takes from it): the lines the child of entry i + d will
miss on, fetched while entries i .. i + d - 1 run. Where the guard passes
rarely (a sparse filter of the outer entries: TPC-H Q7's orders of two
nations' customers), those lines are cache misses at random places that no
hardware prefetcher foresees (docs/performance.md, "Guarded fibres prefetched").

The ahead test is the guard iteration i + d itself evaluates, its variables
replaced by their values there (each a function of i and of names the loop
body never assigns or writes), so it reads only what iteration i + d reads,
and i + d < E makes that iteration one the loop runs: the pass is as safe as
the loop, and a prefetch changes no result (proofs_notes/hoist.md, "A guard
tested ahead").

A one-position level's seek and stop (`if (q < e) seek; while (q < e &&
crd[q] < hi)`: an order's date in a range) is a range test, not evaluated
ahead (it passes too often to predict: docs/performance.md, "Reads under a
range test"); below it no fibre is prefetched, and the located reads
`A[R[Y]]` whose R is read at a position Y that every entry walks (a
one-position loop entered with no test) are prefetched
tuning.prefetch_guard_reads entries ahead with no test (proofs_notes/hoist.md,
"A read under a range test, prefetched with no test").
"""
from __future__ import annotations

import functools
from dataclasses import replace

from ... import imp
from ...imp.analysis import children
from ...imp import (Assign, Bin, Bit, Comment, Const, Decl, If, Load, Not, Opaque, Prefetch,
                    Seek, Select, Seq, Var, While)

_PURE = (Var, Const, Bin, Not, Load, Bit, Select)
_RANGE = Var("<a one-position seek>")    # in a guard: the range test of a seek (not evaluated)


def run(prog, tuning):
    """`prog` with each counted loop over a guarded fibre prefetching the fibre
    of the entry `prefetch_guarded` on (and the reads under a range test
    `prefetch_guard_reads` on); `prog` itself when off or none matches."""
    d = (tuning.prefetch_guarded, tuning.prefetch_guard_reads)
    if not (tuning.prefetch and max(d) > 0):
        return prog
    body = _rewrite(prog.body, d)
    return prog if body == prog.body else replace(prog, body=body)


def _rewrite(s, d: tuple, ends: frozenset = frozenset()):
    """s with its outermost matching loops given their ahead prefetch. `ends`:
    the names the statements before s assign from a read (a fibre's end,
    `e = P[X + 1]`) or as one past a position (`e = q + 1`): a loop that stops
    at one walks one fibre, a few entries in a relation (an order's lines), or
    one position, so no read d entries on is prefetched there (an entry d on
    is rarely in it: the test of that costs each entry and gains nothing)."""
    if isinstance(s, While):
        fibre = isinstance(s.cond, Bin) and isinstance(s.cond.b, Var) and s.cond.b.name in ends
        ahead = _ahead(s, (d[0], 0) if fibre else d)
        if ahead is not None:
            return replace(s, body=imp.seq(ahead, s.body))
    kids = children(s)
    if not kids:
        return s
    if isinstance(s, Seq):
        new = []
        for k in kids:
            new.append(_rewrite(k, d, ends))
            if isinstance(k, (Decl, Assign)) and _short(k.init if isinstance(k, Decl)
                                                        else k.value):
                ends = ends | {k.name}
        new = tuple(new)
    else:
        new = tuple(_rewrite(k, d, ends) for k in kids)
    if new == kids:
        return s
    match s:
        case Seq():
            return Seq(new)
        case If(c, _, None):
            return If(c, new[0])
        case If(c, _, _):
            return If(c, new[0], new[1])
        case While() | imp.Block():
            return replace(s, body=new[0])
    return s      # other statements' bodies (sorted walks, library calls) left as they are


def _ahead(loop: While, d: tuple):
    """The ahead prefetch of a counted loop over a guarded fibre (d[0] entries
    on) and of the located reads under a range test (d[1] on), or None."""
    if (c := counted(loop)) is None:
        return None
    i, end, stmts, changed = c
    fixed = _Fixed(changed - {i}, imp.arrays_written(loop.body))
    located = {}
    found = _find(stmts[:-1], {i: Var(i)}, fixed, located, ())
    far = [(a, x) for g, places in located.items() if _RANGE in g
           for a, x in places if x.index in fixed.free and i in imp.names_used(x.index)]
    ranged = [g for g in located if _RANGE in g]
    for g in ranged:
        del located[g]
    if found is not None and d[0] > 0 and i in imp.names_used(found[2]):
        test, pos, at, reads = found     # (at without i: the same fibre at every entry)
        located.setdefault(test, []).extend((a, Load(pos, at)) for a in reads)
        near = _prefetch(i, end, d[0], located)
    else:
        near = None
    if not (far and d[1] > 0):
        return near
    return imp.seq(*([near] if near else []), _prefetch(i, end, d[1], {(): far}))


def _prefetch(i: str, end, d: int, located: dict):
    """`if (i + d < end) { if (test) prefetch ...; ... }` for each guard's places."""
    nxt = imp.add(Var(i), Const(d))
    return If(imp.lt(nxt, end), imp.seq(*(
        imp.if_(imp.substitute(_test(g), i, nxt), imp.seq(*(
            Prefetch(a, imp.substitute(x, i, nxt)) for a, x in dict.fromkeys(places))))
        for g, places in located.items())))


class _Fixed:
    """What the body changes: scalars it assigns or declares, arrays it writes;
    `free`: the positions of the one-position loops every entry enters."""

    def __init__(self, scalars, arrays):
        self.scalars, self.arrays, self.free = scalars, arrays, set()

    def value(self, e, env):
        """e with the body's variables replaced by their values (functions of the
        counter and of unchanged names), or None where that is not known."""
        for x in imp.subterms(e):
            if not isinstance(x, _PURE):
                return None
            if isinstance(x, (Load, Bit)) and x.array in self.arrays:
                return None
            if isinstance(x, Var) and x.name in self.scalars and env.get(x.name) is None:
                return None
        for name in imp.names_used(e) & self.scalars:
            e = imp.substitute(e, name, env[name])
        return e


def counted(loop: While):
    """(counter i, end, the body's statements, the scalars the body assigns or
    declares) of a counted loop `while (i < end) { ...; i++; }` in which only the
    final increment moves i and nothing the body assigns changes end; else None."""
    match loop.cond:
        case Bin("<", Var(i), end):
            pass
        case _:
            return None
    stmts = imp.seq_parts(loop.body)
    if not stmts or stmts[-1] != imp.incr(i):
        return None
    changed = imp.scalars_assigned(loop.body) | imp.declared_in(loop.body)
    if i in imp.scalars_assigned(Seq(stmts[:-1])) or imp.names_used(end) & changed:
        return None
    return i, end, stmts, changed


def _find(stmts, env: dict, fixed: _Fixed, located: dict, guard):
    """(guard test, pos array, parent position, arrays read at the child's
    position) of the first fibre on the straight path walked under a guard
    (`guard`: the tests of the ifs around stmts), or None. Adds to
    located[guard] the (array, index) of each read on the path at a place
    read from an array at the counter (a located level's first random read)."""
    seek = None                          # a one-position seek's q, the statement before
    for s in stmts:
        if seek is not None and not isinstance(s, While):
            env[seek] = None
        ranged, seek = seek, None
        match s:
            case If(Bin("<", Var(q), Var(e)), Seek(q2, Var(e2), _, _, _), None) if (
                    (q, e) == (q2, e2) and _one(env.get(q), env.get(e))):
                seek = q                 # q stays env[q] where the loop below runs
                continue
            case Decl(x, _, e) | Assign(x, e):
                _scan(e, env, fixed, located, guard)
                env[x] = fixed.value(e, env)
                env.pop(("if", x), None)
                continue
            case Opaque() | Comment():
                continue
            case If(c, then, None) if fixed.value(c, env) is not None:
                _scan(c, env, fixed, located, guard)
                if _sets(then, env, fixed, located, _and(guard, (fixed.value(c, env),))):
                    continue
                test = _and(guard, (fixed.value(c, env),))
                hit = _find(imp.seq_parts(then), env, fixed, located, test)
                if hit is not None:
                    return hit
            case While(cond, body):
                hit = _walk(cond, body, env, fixed, located, guard, ranged)
                if hit is not None:
                    return hit
        for x in imp.scalars_assigned(s) | imp.declared_in(s):
            env[x] = None
    return None


def _scan(e, env, fixed, located, guard):
    """Add to located[guard] the reads e surely makes (not under a lazy
    operator's second operand) at a place read from an array at the counter."""
    match e:
        case Bin("&&" | "||", a, _) | Select(a, _, _):
            _scan(a, env, fixed, located, guard)
        case Bin(_, a, b):
            _scan(a, env, fixed, located, guard)
            _scan(b, env, fixed, located, guard)
        case Not(a) | Bit(_, a):
            _scan(a, env, fixed, located, guard)
        case Load(_, at):
            _scan(at, env, fixed, located, guard)
            match fixed.value(e, env):
                case Load(a, Load(_, at) as where) if not _reads(at):
                    located.setdefault(guard, []).append((a, where))


def _sets(then, env, fixed, located, guard) -> bool:
    """Whether `then` (an if's branch) starts with assignments (a guarded
    loop's start: `if (g) { q = ...; e = ...; }`): then their values, known
    where the if's test holds, are put in env (with `guard`, the tests under
    which they hold: a loop reading them must test as much) and True returned."""
    parts = imp.seq_parts(then)
    if not isinstance(parts[0], Assign):
        return False
    for s in parts:
        if isinstance(s, Assign):
            _scan(s.value, env, fixed, located, guard)
            env[s.name] = fixed.value(s.value, env)
            env["if", s.name] = guard      # a value only where these tests hold
            continue
        if isinstance(s, If):
            _scan(s.cond, env, fixed, located, guard)
        for x in imp.scalars_assigned(s) | imp.declared_in(s):
            env[x] = None
    return True


def _walk(cond, body, env, fixed, located, guard, ranged=None):
    """At `while (g && ... && q < e) body`: the fibre found inside a loop over
    one position, or this loop's when it walks a fibre P[X] .. P[X + 1] under
    a guard; None otherwise. `ranged`: the q of a one-position seek just
    before (the loop runs where X passes the seek's test: a range test)."""
    parts = _conjuncts(cond)
    at = next((k for k, t in enumerate(parts) if isinstance(t, Bin) and t.op == "<"
               and isinstance(t.a, Var) and isinstance(t.b, Var)), None)
    if at is None:
        return None
    tests, cond, after = parts[:at], parts[at], parts[at + 1:]
    q, e = cond.a.name, cond.b.name
    if ranged is not None and ranged != q:
        return None
    for t in tests[:1] + [cond]:
        _scan(t, env, fixed, located, guard)
    known = [fixed.value(t, env) for t in tests]
    if any(t is None for t in known):
        return None
    test = _and(guard, known + ([_RANGE] if ranged else []))
    if not set(env.get(("if", q), ()) + env.get(("if", e), ())) <= set(test):
        return None                      # bounds set under tests this loop does not make
    q, e = env.get(q), env.get(e)
    if _one(q, e):                       # the entry's own tests guard its body too
        if not test:
            fixed.free.add(q)            # a position every entry walks
        more = [fixed.value(t, env) for t in after]
        if any(t is None for t in more):
            return None
        return _find(imp.seq_parts(body), env, fixed, located, _and(test, more))
    match q, e:
        case Load(pos, at), Load(pos2, at2) if pos == pos2 and at2 == imp.add(at, imp.ONE):
            reads = _reads_at(body, cond.a.name)
            if test and reads and _RANGE not in test:    # (a range test ahead: not kept)
                return test, pos, at, reads
    return None


def _conjuncts(e) -> list:
    """The operands of a chain of `&&`, in the order C evaluates them."""
    if isinstance(e, Bin) and e.op == "&&":
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def _and(guard: tuple, tests) -> tuple:
    """A guard (a tuple of tests, all of which hold) with more tests."""
    return tuple(dict.fromkeys(guard + tuple(tests)))


def _test(guard: tuple):
    return functools.reduce(imp.and_, guard, imp.TRUE)


def _short(e) -> bool:
    """Whether a loop's end assigned e walks one fibre or one position."""
    return _reads(e) or isinstance(e, Bin) and e.op == "+" and e.b == imp.ONE


def _reads(e) -> bool:
    return any(isinstance(x, (Load, Bit)) for x in imp.subterms(e))


def _one(q, e) -> bool:
    """Whether a loop from q while < e runs once: e is q + 1."""
    return q is not None and e == imp.add(q, imp.ONE)


def _reads_at(child, q: str) -> list[str]:
    """The arrays `child` reads at position q or at a copy of it (`v = q`, a
    one-position loop's start below), in order of first read."""
    same, grew = {q}, True
    while grew:
        grew = False
        for s in imp.statements(child):
            match s:
                case Decl(x, _, Var(w)) | Assign(x, Var(w)) if w in same and x not in same:
                    same.add(x)
                    grew = True
    out = []
    for x in imp.subterms(child):
        if isinstance(x, Load) and isinstance(x.index, Var) and x.index.name in same:
            out.append(x.array)
        elif isinstance(x, Seek) and x.q in same:
            out.append(x.crd)
    written = imp.arrays_written(child)
    return [a for a in dict.fromkeys(out) if a not in written]

"""Whether an entry whose guard fails leaves a counted loop's state as it was
(lower.schedule.guard_blocks, proofs_notes/hoist.md "Entries listed in blocks").

The loop's body is `prefix; S; suffix; i = i + 1`, where S holds the guarded
region (the statements run only where every test of the guard holds) and
does nothing outside it but assign the body's own variables. An entry whose
guard fails runs `prefix`, S without its region, and `suffix`. This module
runs that path on symbolic values: a loop-carried scalar v starts as `v`
(or as the constant K it provably holds at every entry's start), the body's
own variables as what the prefix gives them (those the region alone assigns
keep it), and every test on the path must be decided. The path is inert
when each loop-carried scalar ends as it started and its only stores are
appends taken back: `a[n] = ...` in the prefix at the start value of a
loop-carried counter n that the path leaves unchanged, into an array the
program never reads and stores nowhere else, where every entry moves n by
0 or 1 (so the cell a[n] is stored last by the entry that moves n past it:
the same entry in both forms).

Values: ("k", c) a constant, ("s", v, offsets) the start value of v plus one
of the offsets; None: not known.
"""
from __future__ import annotations

from ... import imp
from ...imp import (Assign, Bin, Comment, Const, Decl, If, Not, Opaque, Prefetch, Seq,
                    Store, Var)


class _Fail(Exception):
    """The path cannot be followed (a test not decided, an effect not allowed)."""


def invariants(before, carried: set, run_full) -> dict:
    """The constants K such that v == K at the start of every entry: v's last
    assignment before the loop (in `before`) is K and one entry, from any
    state where the others hold, ends with v == K (`run_full(env)`)."""
    inv = {}
    for s in before:
        for v in imp.scalars_assigned(s) | imp.declared_in(s):
            inv.pop(v, None)
        match s:
            case Decl(v, _, Const(k)) | Assign(v, Const(k)) if v in carried:
                inv[v] = k
    while True:
        env = start(carried, inv)
        try:
            end = run_full(env)
        except _Fail:
            return {}
        kept = {v: k for v, k in inv.items() if end.get(v) == ("k", k)}
        if kept == inv:
            return inv
        inv = kept


def start(carried: set, inv: dict) -> dict:
    return {v: ("k", inv[v]) if v in inv else ("s", v, frozenset({0})) for v in carried}


def value(e, env):
    """e's symbolic value in env, or None."""
    match e:
        case Const(c, _):
            return ("k", int(c) if isinstance(c, bool) else c)
        case Var(x):
            return env.get(x)
        case Not(a):
            a = value(a, env)
            return ("k", int(not a[1])) if a and a[0] == "k" else None
        case Bin(op, a, b):
            return _bin(op, value(a, env), value(b, env))
    return None


def _bin(op, a, b):
    if a is None or b is None:
        return None
    if a[0] == "k" and b[0] == "k":
        ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "==": lambda x, y: x == y,
               "!=": lambda x, y: x != y, "<": lambda x, y: x < y, "<=": lambda x, y: x <= y,
               "&&": lambda x, y: bool(x and y), "||": lambda x, y: bool(x or y)}
        if op not in ops or not all(isinstance(x[1], (int, float)) for x in (a, b)):
            return None
        r = ops[op](a[1], b[1])
        return ("k", int(r) if isinstance(r, bool) else r)
    if op in ("+", "-") and a[0] == "s" and b[0] == "k" and isinstance(b[1], int):
        k = b[1] if op == "+" else -b[1]
        return ("s", a[1], frozenset(x + k for x in a[2]))
    if op in ("==", "!=") and a[0] == b[0] == "s" and a[1] == b[1] and len(a[2]) == len(b[2]) == 1:
        return ("k", int((a[2] == b[2]) == (op == "==")))
    return None


def join(a: dict, b: dict) -> dict:
    out = {}
    for x in a.keys() & b.keys():
        u, w = a[x], b[x]
        if u == w:
            out[x] = u
        elif u and w and u[0] == w[0] == "s" and u[1] == w[1]:
            out[x] = ("s", u[1], u[2] | w[2])
    return out


def run(stmts, env: dict, skip: bool, stores: list | None = None) -> dict:
    """env after stmts. skip: the guard-failed path (every test decided, only
    assignments and stores; stores listed in `stores`); else any path (tests
    not decided take both ways, other statements forget what they assign)."""
    for s in stmts:
        match s:
            case Decl(x, _, e) | Assign(x, e):
                env = {**env, x: value(e, env)}
            case Store(a, i, _) if skip:
                stores.append((a, value(i, env)))
            case Comment() | Opaque() | Prefetch():
                pass
            case If() if hint(s):
                pass
            case If(c, then, els):
                env = _branch(c, then, els, env, skip, stores)
            case _ if skip:
                raise _Fail(s)
            case _:
                env = {k: v for k, v in env.items()
                       if k not in imp.scalars_assigned(s) | imp.declared_in(s)}
    return env


def hint(s) -> bool:
    """Whether s does nothing but prefetch (an `if` around prefetches)."""
    return all(isinstance(u, (If, Seq, Prefetch, Comment)) for u in imp.statements(s))


def _branch(c, then, els, env, skip, stores):
    parts = lambda s: () if s is None else imp.seq_parts(s)
    t = value(c, env)
    if t is not None and t[0] == "k":
        return run(parts(then if t[1] else els), env, skip, stores)
    if skip:
        raise _Fail(c)
    yes = dict(env)
    match c:
        case Bin("==", Var(v), Const(k)):
            yes[v] = ("k", k)
    return join(run(parts(then), yes, False), run(parts(els), env, False))


def inert(prog, prefix, carried: set, env_end: dict, env_start: dict, stores: list,
          moves: dict) -> bool:
    """Whether the guard-failed path (ending in env_end, storing `stores`) leaves
    the loop's state as it was. moves: each loop-carried scalar's value after
    any entry (its offsets: how far an entry may move it)."""
    if any(env_end.get(v) != env_start[v] for v in carried):
        return False
    written = [s for s in imp.statements(prog.body) if isinstance(s, Store)]
    for a, at in stores:
        if at is None or at[0] != "s" or at[2] != frozenset({0}) or at[1] not in carried:
            return False
        n = moves.get(at[1])
        if n is None or n[0] != "s" or not n[2] <= {0, 1}:
            return False
        mine = [s for s in prefix if isinstance(s, Store) and s.array == a]
        if len(mine) != 1 or sum(s.array == a for s in written) != 1 or _read(prog.body, a):
            return False
    return True


def _read(body, a: str) -> bool:
    """Whether the program may read array a (anything but storing into it,
    allocating or growing it; a statement with a body that names it counts)."""
    for s in imp.statements(body):
        match s:
            case Store(x, i, v) if x == a:
                if a in imp.names_used(i) | imp.names_used(v):
                    return True
            case imp.Alloc(array=x) | imp.Reserve(array=x) if x == a:
                pass
            case imp.While(c, _) | If(c, _, _):
                if a in imp.names_used(c):
                    return True
            case Seq() | imp.Block():
                pass
            case _ if a in imp.names_used(s):
                return True
    return False

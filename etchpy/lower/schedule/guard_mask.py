"""The first tests of a block of guard_blocks listed through a mask, switched by
tuning.guard_mask (the group: entries tested for none passing at once; 0: off).

guard_blocks lists a block's entries passing its first test T1 branch-free
(`L[n] = t; n += T1(t)`), then filters the list by each further test. Where T1
reads arrays only at the counter (`A[i]`: a line's ship date), and the tests
after it, T2 ... Tk, read at the counter only what T1 reads there
unconditionally (the other end of the date's range), the block is listed as

    for (t = 0; t < w; t++) M[t] = T1(i + t);                 one pass, vectorised
    g = 0; for (t = 0; t < w; t++) g |= M[t];                 for each of T2 .. Tk:
    if (g) for (t = 0; t < w; t++) M[t] &= T2(i + t);         ... vectorised too
    for (t = 0; t + G <= w; t += G)                           G = tuning.guard_mask
        if (M[t] | ... | M[t + G - 1]) { L[n] = i + t; n += M[t]; ... G times }
    for (; t < w; t++) { L[n] = i + t; n += M[t]; }

and the tests after Tk filter the list as before. The list is the same: the
entries of the block passing T1 .. Tk, in order (proofs_notes/hoist.md, "A
block's first tests as a mask"). Every read stays in bounds: T1 was evaluated
at every entry already; Tj's reads at the counter are T1's; its other reads
do not depend on the entry and the arrays are not written in the loop, so
they are those the original makes at an entry of the block passing T1 ..
Tj-1, and `g` says there is one. Where few entries pass (Q14's month of ship
dates: 1 line in 80) most groups are skipped by one test.
"""
from __future__ import annotations

from ... import imp
from ...imp import Assign, Bin, Const, Decl, If, Load, Not, Select, Store, Var, While

_PLAIN = (Var, Const, Bin, Not, Select, Load)


def prefix(tests: list, i: str) -> int:
    """How many of `tests`, from the first, the mask evaluates (0: none; see the
    module docstring)."""
    first = _at_counter(tests[0], i) if tests else None
    if not first:
        return 0
    sure = _unconditional(tests[0], i)
    k = 1
    for t in tests[1:]:
        reads = _at_counter(t, i)
        if reads is None or not reads <= sure:
            break
        k += 1
    return k


def _at_counter(e, i: str):
    """The arrays e reads at the counter `i`, or None where e reads one at
    another place that depends on i, or holds other than plain expressions."""
    if not isinstance(e, _PLAIN):
        return None
    out = set()
    if isinstance(e, Load) and i in imp.names_used(e.index):
        if e.index != Var(i):
            return None
        out.add(e.array)
    for k in _nodes(e):
        got = _at_counter(k, i)
        if got is None:
            return None
        out |= got
    return out


def _unconditional(e, i: str) -> set:
    """The arrays e reads at the counter wherever it is evaluated (not in a
    select's branches nor right of a short circuit)."""
    match e:
        case Load(a, Var(x)) if x == i:
            return {a}
        case Select(c, _, _):
            return _unconditional(c, i)
        case Bin("&&" | "||", a, _):
            return _unconditional(a, i)
    return set().union(*(_unconditional(k, i) for k in _nodes(e)))


def _nodes(e) -> tuple:
    """The expressions directly inside e (its parts that are nodes)."""
    return tuple(k for k in imp.parts(e) if hasattr(k, "__dataclass_fields__"))


def listing(tests: list, i: str, names: dict, group: int) -> list:
    """The statements listing the block [i, top) through the mask (names: the
    list, mask, width, top, n, t and g variables, all declared by the caller
    but width and top, declared here)."""
    lst, mask, w, top, n, t, g = (names[k] for k in ("list", "mask", "w", "top", "n", "t", "g"))
    one = lambda c: Select(c, imp.ONE, imp.ZERO)
    at = lambda test: imp.substitute(test, i, imp.add(Var(i), Var(t)))
    m = lambda k: Load(mask, imp.add(Var(t), Const(k)) if k else Var(t))
    each = lambda *stmts: [Assign(t, imp.ZERO), While(imp.lt(Var(t), Var(w)),
                                                      imp.seq(*stmts, imp.incr(t)))]
    out = [Decl(w, "index", Bin("-", Var(top), Var(i))),
           *each(Store(mask, Var(t), one(at(tests[0]))))]
    for test in tests[1:]:
        out += [Assign(g, imp.ZERO), *each(Assign(g, Bin("|", Var(g), m(0)))),
                If(Bin("!=", Var(g), imp.ZERO), imp.seq(*each(
                    Store(mask, Var(t), Bin("&", m(0), one(at(test)))))))]
    put = lambda k: [Store(lst, Var(n), imp.add(Var(i), imp.add(Var(t), Const(k)) if k
                                                else Var(t))),
                     Assign(n, imp.add(Var(n), m(k)))]
    any_ = m(0)
    for k in range(1, group):
        any_ = Bin("|", any_, m(k))
    full = imp.lt(imp.add(Var(t), Const(group - 1)), Var(w))
    out += [Assign(t, imp.ZERO),
            While(full, imp.seq(If(Bin("!=", any_, imp.ZERO),
                                   imp.seq(*[s for k in range(group) for s in put(k)])),
                                Assign(t, imp.add(Var(t), Const(group))))),
            While(imp.lt(Var(t), Var(w)), imp.seq(*put(0), imp.incr(t)))]
    return out

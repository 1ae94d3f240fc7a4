"""A flat sum's tests as a byte mask over blocks of entries, with
tuning.guard_blocks on and tuning.flat_mask entries in a block (0, the default: off).

A counted loop that adds a selected value into an accumulator and does nothing
else (a flat walk's sum under value tests: Q6's lines)

    while (i < E) { acc = acc (+) (T(i) ? X(i) : 0); i = i + 1; }

where T and X read arrays only at the counter (or at places that do not depend
on it) is run as

    int8 M[B];
    while (i < E) {
        top = min(i + B, E);  w = top - i;
        for (t = 0; t < w; t++) M[t] = T(i + t);                  one pass, no branch
        for (t = 0; t + 8 <= w; t += 8)                           a group of 8 entries
            if (M[t] | ... | M[t + 7])
                acc = acc (+) (M[t] ? X(i + t) : 0); ... 8 times, in order
        for (; t < w; t++) acc = acc (+) (M[t] ? X(i + t) : 0);
        i = top;
    }

Every addition the loop makes of an entry of a group is made, in the same
order, on the same operands; a group whose entries all fail adds 0 eight times
in the loop as written, and nothing here. That is the same value: the
semiring's + is a plain `+` (real, real32, integer: not complex, which is
refused), and acc (+) 0 is acc for every acc but a float -0.0, which acc never
is: it starts at a constant that is not -0.0 (checked: its last assignment
before the loop) and a round-to-nearest sum is -0.0 only when both operands
are. X is read at fewer entries (only where T holds, as C's `?:` says); T at
the same entries. So the result is the loop's to the last bit
(proofs_notes/flat_mask.md). The tests then run over a block apart from the
sum, in the arrays' own types; measured in docs/performance.md, "Q6:
compared-only columns in a narrow dtype (session 52)".
"""
from __future__ import annotations

import math
from dataclasses import replace

from ... import imp
from ...imp import (Assign, Bin, Block, Const, Decl, If, Load, LocalArray, Not, Ring, Select,
                    Seq, Store, Var, While)


def run(prog, semiring, tuning):
    """`prog` with each loop of the shapes above blocked (`prog` itself when
    tuning.flat_mask is below 8 or none matches)."""
    size = min(tuning.flat_mask, 1 << 13)                  # (on the stack)
    if size < 8:
        return prog
    plain = semiring.add.c == "{a} + {b}" and semiring.dtype.kind in "fiu"
    body = _rewrite(prog.body, (), (size, plain, semiring.dtype.kind == "f"),
                    imp.names_used(prog.body))
    return prog if body == prog.body else replace(prog, body=body)


def _rewrite(s, before: tuple, how: tuple, taken: set):
    """s with its loops of the shapes above blocked (`before`: the statements
    before s in its sequence; how: (block size, plain +, float values))."""
    if isinstance(s, While):
        new = _blocked(s, before, how, taken)
        if new is not None:
            return new
        body = _rewrite(s.body, (), how, taken)
        return s if body == s.body else replace(s, body=body)
    if isinstance(s, Seq):
        new = tuple(_rewrite(k, s.stmts[:n], how, taken) for n, k in enumerate(s.stmts))
        return s if new == s.stmts else Seq(new)
    match s:
        case If(c, then, other):
            a = _rewrite(then, (), how, taken)
            b = None if other is None else _rewrite(other, (), how, taken)
            return s if (a, b) == (then, other) else If(c, a, b)
        case Block(body):
            new = _rewrite(body, (), how, taken)
            return s if new == body else Block(new)
    return s


def _shape(loop: While):
    """(acc, i, E, T, X, zero) of a loop of either shape of the module docstring
    (zero: the constant a selected sum adds where T fails; None for the `if`
    form), or None."""
    match loop:
        case While(Bin("<", Var(i), end), Seq((one, Assign(i2, Bin("+", Var(i3), Const(1)))))):
            if not i == i2 == i3:
                return None
        case _:
            return None
    match one:
        case Assign(acc, Ring("add", Var(a2), Select(test, x, Const() as zero))) if acc == a2:
            if zero.value != 0:
                return None
        case If(test, Assign(acc, Ring("add", Var(a2), x)), None) if acc == a2:
            zero = None
        case _:
            return None
    if acc == i or {i, acc} & imp.names_used(end):
        return None
    if not (_at_counter(test, i) and _at_counter(x, i)) \
            or acc in imp.names_used(test) | imp.names_used(x):
        return None
    return acc, i, end, test, x, zero


def _at_counter(e, i: str) -> bool:
    """Whether e is a plain expression (no probe, no bit test) whose every read
    that depends on the counter `i` is at `i` itself."""
    match e:
        case Var() | Const():
            return True
        case Load(_, index) if i in imp.names_used(index):
            return index == Var(i)
        case Load(_, index):
            return _at_counter(index, i)
        case Bin(_, a, b) | Ring(_, a, b):
            return _at_counter(a, i) and _at_counter(b, i)
        case Not(a):
            return _at_counter(a, i)
        case Select(c, a, b):
            return _at_counter(c, i) and _at_counter(a, i) and _at_counter(b, i)
    return False


def _starts_signed(acc: str, before: tuple) -> bool:
    """Whether acc's value at the loop may be a float -0.0: true unless its last
    assignment among `before` is a constant that is not -0.0 (and nothing after it
    assigns acc)."""
    for s in reversed(before):
        match s:
            case Decl(x, _, Const(v)) | Assign(x, Const(v)) if x == acc:
                return isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0
        if acc in imp.scalars_assigned(s) | imp.declared_in(s):
            return True
    return True


def _blocked(loop: While, before: tuple, how: tuple, taken: set):
    """The blocked form of `loop` (module docstring), or None where its shape or
    the law's conditions do not hold (`before`, `how`: as for _rewrite)."""
    found = _shape(loop)
    if found is None:
        return None
    acc, i, end, test, x, zero = found
    size, plain, floats = how
    if zero is not None and not (plain and not (floats and _starts_signed(acc, before))):
        return None
    group = 8                           # the entries of a group: one 8-byte word of the mask
    mask, top, w, t = (f"{i}_fm_{k}" for k in ("mask", "top", "w", "t"))
    if {mask, top, w, t} & taken:
        return None
    at = lambda e, k: imp.substitute(e, i, imp.add(Var(i), imp.add(Var(t), Const(k))
                                                   if k else Var(t)))
    m = lambda k: Load(mask, imp.add(Var(t), Const(k)) if k else Var(t))
    on = lambda k: Bin("!=", m(k), imp.ZERO)
    add = (lambda k: If(on(k), Assign(acc, Ring("add", Var(acc), at(x, k))))) if zero is None \
        else (lambda k: Assign(acc, Ring("add", Var(acc), Select(on(k), at(x, k), zero))))
    any_ = m(0)
    for k in range(1, group):
        any_ = Bin("|", any_, m(k))
    each = lambda stop, *stmts: While(imp.lt(Var(t), stop), imp.seq(*stmts, imp.incr(t)))
    block = imp.seq(
        Decl(top, "index", imp.min_(imp.add(Var(i), Const(size)), end)),
        Decl(w, "index", Bin("-", Var(top), Var(i))),
        Assign(t, imp.ZERO),
        each(Var(w), Store(mask, Var(t), Select(at(test, 0), imp.ONE, imp.ZERO))),
        Assign(t, imp.ZERO),
        While(imp.lt(imp.add(Var(t), Const(group - 1)), Var(w)), imp.seq(
            If(Bin("!=", any_, imp.ZERO), imp.seq(*(add(k) for k in range(group)))),
            Assign(t, imp.add(Var(t), Const(group))))),
        each(Var(w), add(0)),
        Assign(i, Var(top)))
    return Block(imp.seq(LocalArray(mask, size, imp.ZERO, "byte"), Decl(t, "index", imp.ZERO),
                         While(loop.cond, block)))

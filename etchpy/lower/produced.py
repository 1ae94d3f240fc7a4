"""Which values of a stream nest are products: the law of sparse outputs
(proofs_notes/produced.md).

A sparse output holds an entry exactly where some product was produced (a
produced value equal to the semiring's zero included), as scipy does. Streams
say "absent" in two ways: by having no ready state, and, where an absent
operand is located or is behind a union's front, by a value `select(c, x, 0)`
that is zero unless c. A temporary of a plan is a dense array: where its step
produced nothing it holds zero, so a step that writes it for a sparse output
also keeps a flag array `has` (set where a product was written), and a read of
the temporary's value array is a product only where its flag is set.

`Presence(sr, has)`: `.of(v)` is the condition under which the leaf value v
is a product; `.certain(s)` tells, from the nest's shape alone, that every
state of s produces at least one product (so an output level above it may
append its coordinate on entry with nothing to undo, and a temporary written
by it needs no flags).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import imp, maps
from .. import streams
from ..imp import FALSE, TRUE, Bin, Const, Load, Ring, Select, and_, or_


@dataclass(frozen=True)
class Presence:
    """The presence of values over semiring `sr`; `has` maps a temporary's value
    array to its flag array (a temporary written with flags, see the module)."""

    sr: object
    has: dict = field(default_factory=dict)

    def _absent(self, e) -> bool:
        return e == Const(self.sr.zero, "value")

    def _front_guard(self, e) -> bool:
        """select(c, x, 0) with c a union's front test, not a marker probe
        (mark[c] == stamp, a located operand's hit)."""
        probe = isinstance(e, Select) and isinstance(e.cond, Bin) and e.cond.op == "==" \
            and isinstance(e.cond.a, Load)
        return isinstance(e, Select) and self._absent(e.b) and not probe

    def of(self, e) -> imp.Expr:
        """When the leaf value e is a product (TRUE when it always is).

        * select(c, x, 0): x's presence where c (a located operand's hit, or a
          union's front);
        * a ⊕ b: either; a ⊗ b: both;
        * two front guards added (the value of a union,
          `streams.union_by_skipping`) whose operands are always present:
          present, since at each ready state of a union one operand is at the
          front;
        * a load of a flagged temporary: its flag at the same cell;
        * the semiring's zero as a constant (an absent operand, with its
          front test folded away by schedule.phases): never; but a product
          with it, in a semiring that allows NaN, where its other factor is
          (NaN·0 is NaN, so `A[i,j]·0.0` stores A's entries);
        * a map with f(0) = 0: its operand's presence (one with f(0) ≠ 0
          walks its operand's dense domain: present everywhere);
        * anything else (a stored value, a constant, a map) is present."""
        match e:
            case Ring("add", a, b) if self._front_guard(a) and self._front_guard(b):
                pa, pb = self.of(a.a), self.of(b.a)
                if pa == TRUE and pb == TRUE:
                    return TRUE
                return or_(and_(a.cond, pa), and_(b.cond, pb))
            case Ring("add", a, b):
                return or_(self.of(a), self.of(b))
            case Ring("mul", a, b) if self.sr.allows_nan and self._absent(b):
                return self.of(a)        # NaN·0 is NaN: a written 0 factor makes a value
            case Ring("mul", a, b) if self.sr.allows_nan and self._absent(a):
                return self.of(b)
            case Ring("mul", a, b):
                return and_(self.of(a), self.of(b))
            case Ring("repeat", a, _):   # a ⊕ … ⊕ a: present where a is
                return self.of(a)
            case Ring(op, a, Const(arg)) if maps.is_map(op) and maps.keeps_zero(op, arg):
                return self.of(a)
            case Select(c, x, z) if self._absent(z):
                return and_(c, self.of(x))
            case Load(arr, ix) if arr in self.has:
                return Load(self.has[arr], ix)
            case Const() if self._absent(e):
                return FALSE
        return TRUE

    def certain(self, v) -> bool:
        """Does every state of the nest v produce at least one product? A leaf
        whose presence is TRUE; a level that is ready at every coordinate of its
        whole range (streams.Full, ready ≡ true) over a certain nest. A range is
        taken to have a state: over a dimension of size 0 it has none, an edge
        this law leaves out (see proofs_notes/produced.md)."""
        if not streams.is_stream(v):
            return self.of(v) == TRUE
        return streams.Full in v.facts and v.ready == TRUE and self.certain(v.value)


def note(made: str, here) -> imp.Stmt:
    """made := made or here (the value just written was a product where here)."""
    return imp.Assign(made, imp.or_(imp.Var(made), here))

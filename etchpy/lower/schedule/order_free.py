"""Whether a walk's body is free of its segment's order (part of fused_checks):
a fused input whose every walk is order-free needs no order check, only each
coordinate inside its dimension (proofs_notes/validation.md, "Order-free
walks")."""
from __future__ import annotations

from ... import imp
from ...imp import (Accum, Alloc, Assign, Bin, Const, Decl, ForSorted, If, Load, LocalArray,
                    Move, Prefetch, Reserve, Ring, Seek, Select, SetBit, ShortIntersect, Store,
                    Var)
from .scatter_runs import is_flush


def order_free(body, crd_q: Load, appends: tuple = ()) -> bool:
    """Whether a walk loop's `body` gives the same result for any order of its segment's
    entries, repeats included (their values combined with ⊕): it changes only
    ⊕-accumulators (acc := acc ⊕ v, acc := t ? acc ⊕ v : acc, acc := acc ⊕ keep(t, v),
    out[k] ⊕= v) and uses the coordinate crd[q] (or a name declared from it) only to say
    where to read or accumulate or whether to add (an index, a test: a window walk's
    `(c − lo) <u n`), never as a value added (a name the body declares, one step's own,
    may take any such value: a loop counter). Then ⊕'s commutativity and associativity and
    ⊗'s distributivity give the canonical segment's result (validation.md's note).
    `appends`, (n, wheres, values) from the loop's Walk note: the body may also append
    each state to buffers at n (a where-array may hold the coordinate, a value-array
    not), step n by a test, and a dense output later only ⊕-adds them."""
    derived, local = {crd_q}, set()       # local: names the body declares
    count, wheres, values = appends or (None, (), ())

    def ok(node, where: bool) -> bool:
        if node in derived:
            return where
        if is_flush(node, derived):     # a run's cell changes (scatter_runs): out[k] ⊕= v
            return True
        match node:
            case Store(array, Var(at), value) if at == count and array in wheres + values:
                return ok(value, array in wheres)
            case Assign(name, Bin("+", Var(n), test)) if name == n == count:
                return ok(test, True)
            case Store() | SetBit() | ForSorted() | ShortIntersect() | Seek() | Move() \
                    | Alloc() | Reserve() | LocalArray():
                return False
            case Decl(name, _, init):
                local.add(name)
                if not ok(init, False):         # the coordinate's: read only as one
                    derived.add(Var(name))
                return True
            case Assign(name, value) if name in local and Var(name) not in derived:
                return ok(value, False)
            case Assign(name, value):
                return Var(name) not in derived and _accumulates(name, value, ok)
            case Load(_, index) | Prefetch(_, index):
                return ok(index, True)
            case Accum(_, index, value):
                return ok(index, True) and ok(value, False)
            case Select(cond, a, b):
                return ok(cond, True) and ok(a, where) and ok(b, where)
            case Bin("keep", cond, a):          # a where cond, else the zero bytes
                return ok(cond, True) and ok(a, where)
            case If(cond, then, else_):
                return ok(cond, True) and ok(then, where) and ok(else_, where)
        return all(ok(part, where) for part in imp.parts(node))      # a loop's note is none

    return ok(body, False)


def _accumulates(name: str, value, ok) -> bool:
    """`name := value` steps a counter or ⊕-adds a value that `ok` finds clean,
    under a test at most."""
    match value:
        case Bin("+", Var(n), Const(1)) if n == name:
            return True
        case Ring("add", Var(n), v) if n == name:
            return ok(v, False)
        case Select(cond, Ring("add", Var(n), v), Var(n2)) if n == n2 == name:
            return ok(cond, True) and ok(v, False)
    return False


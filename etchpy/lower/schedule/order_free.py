"""Whether a walk's body is free of its segment's order (part of fused_checks):
a fused input whose every walk is order-free needs no order check, only each
coordinate inside its dimension (proofs_notes/validation.md, "Order-free
walks"). A row workspace's first-touch scatter (formats/bytemap.py's touch: a
cell's byte marked, its coordinate listed, its value stored, later ⊕-added) counts as
an accumulator where its list is drained only in order (`drained_lists`): the
marks, the count and the values it leaves do not depend on the order, and the
drain reads the list in ascending order whatever its order (proofs_notes/
validation.md, "A row workspace's scatter")."""
from __future__ import annotations

from ... import imp
from ...imp import (Accum, Alloc, Assign, Bin, Const, Decl, ForSorted, If, Load, LocalArray,
                    Move, Prefetch, Reserve, Ring, Seek, Select, SetBit, ShortIntersect,
                    Store, Var)
from .scatter_runs import is_flush


def order_free(body, crd_q: Load, appends: tuple = (), drained: frozenset = frozenset()) -> bool:
    """Whether a walk loop's `body` gives the same result for any order of its segment's
    entries, repeats included (combined with ⊕: proofs_notes/validation.md, "Order-free
    form"): it changes only ⊕-accumulators (acc ⊕= v, under a test or kept by one; out[k]
    ⊕= v) and uses crd[q] (or a name declared from it, which may take any such value) only
    to say where to read or add or whether to add, never as a value added. `appends` (n,
    wheres, values; the loop's Walk note): it may also append each state to buffers at n (a
    where-array may hold the coordinate), step n by a test, for a dense output to ⊕-add
    later. `drained`: lists only sorted drains read, where it may touch a workspace's cells."""
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
            case If(Bin("==", Load(_, at), Const(0)), _, again) if (
                    first := _touch(node, drained)) is not None:
                return ok(at, True) and ok(again, where) and _first_ok(first, at, again, ok)
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


def _touch(node: If, drained: frozenset):
    """The statements after the marking of a workspace cell's first touch (`if
    (marks[at] == 0) { marks[at] = 1; list[n] = at; n += 1; first... } else again`)
    whose list is in `drained`, or None when node (an If on `marks[at] == 0`) is no
    such touch."""
    mark = node.cond.a
    match imp.seq_parts(node.then):
        case (Store(marks, at, Const(1)), Store(lst, Var(n), at2),
              Assign(n2, Bin("+", Var(n3), Const(1))), *first) if (
                lst in drained and n == n2 == n3 and marks == mark.array
                and at == at2 == mark.index):
            return first
    return None


def _first_ok(first, at, again, ok) -> bool:
    """Whether each statement of a first touch is a store into cell `at` of the
    array that `again` ⊕-adds into there (the first term onto ⊕'s zero) of a value
    `ok` finds clean, or a statement `ok` finds clean."""
    def clean(st):
        if isinstance(st, Store) and isinstance(again, Accum) and \
                st.index == at == again.index and st.array == again.array:
            return ok(st.value, False)
        return ok(st, False)
    return all(map(clean, first))


def drained_lists(body) -> frozenset:
    """The lists that only sorted drains read in `body` (imp.ForSorted visits them
    in ascending order whatever the list's order): each the list of one, and named
    by no node but those, its allocation and stores (a touch's)."""
    listed = {n.array for n in imp.statements(body) if isinstance(n, ForSorted)}
    if not listed:
        return frozenset()
    nodes = list(imp.subterms(body))
    named = {v for n in nodes if not isinstance(n, (ForSorted, Store, Alloc))
             for v in imp.parts(n) if isinstance(v, str)}
    return frozenset(listed - named)

"""Imp: the small imperative language that streams are staged into.

    types  t ::= index | bool | value          (value = the semiring's carrier)

    expr   e ::= Var(x) | Const(c, t) | Bin(op, e, e) | Not(e) | Load(a, e)
               | Bit(a, e) | Select(e, e, e) | Ring(add|mul, e, e)
           op ::= + - * < <= == != && || max min

    stmt   s ::= Decl(x, t, e) | Assign(x, e) | Store(a, e, e) | Accum(a, e, e)
               | While(e, s) | If(e, s, s) | Seq(s...) | Comment(text)
               | Alloc(a, t, e, e) | Reserve(a, t, e) | Move(a, a) | SetBit(a, e, b)
               | ForSorted(x, a, e, e, a, s) | ShortIntersect(x, x, a, x, x, a, s)
               | Seek(x, e, a, e, e)
               | ParallelFor(x, e, e, s, threads, reduce)

`&&`, `||` and `Select` evaluate lazily (as in C), so guarded loads are safe.
`Ring` is the semiring's add or mul; `Accum(a, i, v)` is a[i] = a[i] ⊕ v.
Variables are named uniquely by `Names`, so one flat environment serves the
interpreter and C block scoping never matters for correctness.

`Machine` is the one interpreter of Imp: the stream interpreter runs staged
stream fields with it, and whole lowered programs run on it as an oracle
between streams and C.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Union

import numpy as np

# --------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    value: object
    type: str = "index"   # index | bool | value


@dataclass(frozen=True)
class Bin:
    op: str
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Not:
    a: "Expr"


@dataclass(frozen=True)
class Load:
    array: str
    index: "Expr"


@dataclass(frozen=True)
class Bit:
    """Bit `index` of a `bits` array (word index/64, bit index%64), as a bool."""
    array: str
    index: "Expr"


@dataclass(frozen=True)
class Select:
    cond: "Expr"
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Ring:
    op: str   # "add" | "mul"
    a: "Expr"
    b: "Expr"


Expr = Union[Var, Const, Bin, Not, Load, Bit, Select, Ring]

TRUE = Const(True, "bool")
FALSE = Const(False, "bool")
ZERO = Const(0)
ONE = Const(1)

# ---------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Decl:
    name: str
    type: str
    init: Expr


@dataclass(frozen=True)
class Assign:
    name: str
    value: Expr


@dataclass(frozen=True)
class Store:
    array: str
    index: Expr
    value: Expr


@dataclass(frozen=True)
class Accum:
    array: str
    index: Expr
    value: Expr


@dataclass(frozen=True)
class While:
    cond: Expr
    body: "Stmt"


@dataclass(frozen=True)
class If:
    cond: Expr
    then: "Stmt"
    else_: "Stmt | None" = None


@dataclass(frozen=True)
class Seq:
    stmts: tuple


@dataclass(frozen=True)
class Block:
    """A scope: what `body` declares is not visible after it (C braces), so the
    same loop nest can be emitted twice in a row."""
    body: "Stmt"


@dataclass(frozen=True)
class Comment:
    text: str


@dataclass(frozen=True)
class Alloc:
    """A fresh array of `size` elements of `type`, every one set to `fill`; with
    fill None its contents are undefined until stored (the interpreter fills it
    with garbage, so that a program reading such a cell goes wrong in tests)."""
    array: str
    type: str
    size: Expr
    fill: Expr | None


@dataclass(frozen=True)
class Reserve:
    """Grow `array` (keeping its contents) so that it holds at least `size` elements.
    The grown part is set to `fill`, or undefined when fill is None."""
    array: str
    type: str
    size: Expr
    fill: Expr | None = None


@dataclass(frozen=True)
class Move:
    """`array` becomes the array `source` was, contents and capacity: array's old
    contents are dropped (freed in C) and source is left empty, not to be read
    again. Both must be heap arrays (Alloc)."""
    array: str
    source: str


@dataclass(frozen=True)
class Prefetch:
    """A hint that array[index] will be read soon. It has no effect on results;
    index must be within the array or one past its end (an address C may form;
    the interpreter checks it). `write`: the hint is that it will be written."""
    array: str
    index: Expr
    write: bool = False


def sort_bits_words(size: Expr) -> Expr:
    """Words of a `bits` array that marks indices < size for `ForSorted`: one bit
    per index (size/64 + 1 words), then one summary bit per word of those
    (size/4096 + 1 words), so that the walk visits only the words that hold
    marks."""
    return add(add(Bin("/", size, Const(64)), Const(1)),
               add(Bin("/", size, Const(4096)), Const(1)))


@dataclass(frozen=True)
class SetBit:
    """Set (on) or clear bit `index` of a `bits` array."""
    array: str
    index: Expr
    on: bool


@dataclass(frozen=True)
class ForSorted:
    """Run `body` once for each of array[0..n-1], a set of distinct indices < size,
    in ascending order, with `var` bound to it.

    With `bits` (an array of `sort_bits_words(size)` words), exactly the listed
    indices are marked in its first size/64 + 1 words and the rest is zero on
    entry; on exit the whole array is zero again, which lets C walk the marks in
    order instead of sorting the list. Without bits, the list is sorted. Either
    way array[0..n-1] is left in an unspecified order; the body must not touch
    array, bits or n.
    """
    var: str
    array: str
    n: Expr
    size: Expr
    bits: str | None
    body: "Stmt"


@dataclass(frozen=True)
class LocalArray:
    """An array of `size` (a constant) values, each set to `fill`, in the scope
    that declares it: in C an automatic array, which the compiler keeps in
    registers when every index into it is a constant after unrolling."""
    array: str
    size: int
    fill: Expr


@dataclass(frozen=True)
class Opaque:
    """No effect. In C, the compiler may no longer assume anything about `var`'s
    value here, so a loop that steps it is not vectorised (a sparse row's loop:
    its gathers and scatters ran slower as vector instructions)."""
    var: str


# Entries a short segment may have for ShortIntersect, and the entries C reads
# from its start (so the array must hold that many from there).
SHORT_SEGMENT = 4


@dataclass(frozen=True)
class ShortIntersect:
    """Intersect two short sorted segments at once: for each coordinate in both
    crd_a[qa..ea) and crd_b[qb..eb) (each strictly increasing), in ascending
    order, set qa and qb to its positions and run `body`; then qa := ea and
    qb := eb. Each segment has at most SHORT_SEGMENT entries, and each array
    holds SHORT_SEGMENT entries from the segment's start (C reads them all and
    masks the ones past the end). `body` must not change qa, qb, ea or eb.
    """
    qa: str
    ea: str
    crd_a: str
    qb: str
    eb: str
    crd_b: str
    body: "Stmt"


# Positions C's Seek steps through one at a time before it gallops.
SEEK_LINEAR = 8


@dataclass(frozen=True)
class Seek:
    """Move q past every position of crd[q..end) that is behind (t, r), that is
    with (crd[p], true) <= (t, r): crd[p] < t, or crd[p] == t when r holds.
    crd[q..end) must be strictly increasing, so those positions are a prefix.

    The interpreter steps through the prefix one position at a time (and checks
    the order it passes); C takes SEEK_LINEAR steps and then gallops: doubles a
    step until it overshoots, then binary-searches the last interval, in one
    out-of-line function (ep_seek), so each skip site costs a call, not three
    loops of code.
    """
    q: str
    end: Expr
    crd: str
    t: Expr
    r: Expr


@dataclass(frozen=True)
class ParallelFor:
    """for var in [start, end): body, where iterations touch disjoint memory.

    The interpreter runs it in order; C may split it across `threads` threads.
    The body must not leave the loop early (no allocation failures inside).
    With `reduce` (a value variable declared before the loop), iterations may
    also add into that variable with the semiring's ⊕: in C the range is cut
    into fixed blocks, each block adds into its own copy starting at zero, and
    the copies are added into the variable in block order after the loop (⊕ is
    associative and commutative, and the blocks depend only on the range and
    the thread count, so results repeat).
    With `private` ((array, type, size, fill), ...), each thread allocates its own
    copy of those scratch arrays (filled) before its first iteration; iterations
    must leave them as they found them. A failed allocation makes the kernel fail
    after the loop.
    """
    var: str
    start: Expr
    end: Expr
    body: "Stmt"
    threads: int
    reduce: str | None = None
    private: tuple = ()


Stmt = Union[Decl, Assign, Store, Accum, While, If, Seq, Block, Comment, Alloc, Reserve,
             Move, SetBit, ForSorted, ShortIntersect, Seek, ParallelFor, Prefetch, Opaque,
             LocalArray]

SKIP = Seq(())

# ------------------------------------------------------------ smart constructors
# They fold constants so that staged code stays readable; they never change meaning.


def seq(*stmts) -> Stmt:
    out = []
    for s in stmts:
        match s:
            case None:
                pass
            case Seq(inner):
                out.extend(inner)
            case _:
                out.append(s)
    return out[0] if len(out) == 1 else Seq(tuple(out))


def if_(cond: Expr, then: "Stmt", else_=None) -> "Stmt":
    if cond == TRUE:
        return then
    if cond == FALSE:
        return else_ if else_ is not None else SKIP
    return If(cond, then, else_)


def and_(a: Expr, b: Expr) -> Expr:
    if a == TRUE:
        return b
    if b == TRUE:
        return a
    if FALSE in (a, b):
        return FALSE
    return Bin("&&", a, b)


def or_(a: Expr, b: Expr) -> Expr:
    if a == FALSE:
        return b
    if b == FALSE:
        return a
    if TRUE in (a, b):
        return TRUE
    return Bin("||", a, b)


def not_(a: Expr) -> Expr:
    match a:
        case Const(v, "bool"):
            return Const(not v, "bool")
        case Not(inner):
            return inner
    return Not(a)


def add(a: Expr, b: Expr) -> Expr:
    if b == ZERO:
        return a
    if a == ZERO:
        return b
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value + b.value)
    return Bin("+", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    if ONE == a:
        return b
    if ONE == b:
        return a
    if ZERO in (a, b):
        return ZERO
    return Bin("*", a, b)


def lt(a, b):
    return Bin("<", a, b)


def le(a, b):
    return Bin("<=", a, b)


def eq(a, b):
    return Bin("==", a, b)


def max_(a, b):
    return a if a == b else Bin("max", a, b)


def min_(a, b):
    return a if a == b else Bin("min", a, b)


def min_bound(a, b):
    """The smaller of two upper bounds, either of which may be unknown (None)."""
    if a is None or b is None:
        return b if a is None else a
    return min_(a, b)


def sum_bound(a, b):
    """The sum of two upper bounds; unknown (None) when either is."""
    return None if a is None or b is None else add(a, b)


def assume(e: Expr, facts: dict) -> Expr:
    """e where each boolean expression in `facts` has the given value, folded.
    Sound wherever those expressions do have those values when e is evaluated."""
    if e in facts:
        return TRUE if facts[e] else FALSE
    match e:
        case Bin("&&", a, b):
            return and_(assume(a, facts), assume(b, facts))
        case Bin("||", a, b):
            return or_(assume(a, facts), assume(b, facts))
        case Bin(op, a, b):
            return Bin(op, assume(a, facts), assume(b, facts))
        case Not(a):
            return not_(assume(a, facts))
        case Select(c, a, b):
            return select(assume(c, facts), assume(a, facts), assume(b, facts))
        case Ring(op, a, b):
            return Ring(op, assume(a, facts), assume(b, facts))
        case Load(array, i):
            return Load(array, assume(i, facts))
    return e


def select(c, a, b):
    if c == TRUE:
        return a
    if c == FALSE:
        return b
    return Select(c, a, b)


def incr(name: str) -> Stmt:
    return Assign(name, Bin("+", Var(name), ONE))


def statements(s):
    """Every statement inside s, s included, outermost first."""
    yield s
    match s:
        case Seq(stmts):
            for u in stmts:
                yield from statements(u)
        case (While(_, body) | ParallelFor(_, _, _, body, _) | Block(body)
              | ForSorted(_, _, _, _, _, body) | ShortIntersect(_, _, _, _, _, _, body)):
            yield from statements(body)
        case If(_, then, else_):
            yield from statements(then)
            if else_ is not None:
                yield from statements(else_)


def substitute(node, name: str, value: Expr):
    """node (a statement or expression) with every read of the variable `name`
    replaced by `value`. Sound where `name` holds `value` throughout node and
    node does not assign it."""
    match node:
        case Var(n) if n == name:
            return value
        case tuple():
            return tuple(substitute(x, name, value) for x in node)
        case _ if hasattr(node, "__dataclass_fields__"):
            return dataclasses.replace(node, **{
                f: substitute(getattr(node, f), name, value)
                for f in node.__dataclass_fields__})
    return node


def arrays_loaded_at(node, index) -> list[str]:
    """The arrays read as array[index] inside an Imp statement or expression, in
    order of first appearance; with index None, every array read."""
    out: list[str] = []

    def walk(x):
        match x:
            case Load(array, at):
                if (index is None or at == index) and array not in out:
                    out.append(array)
                walk(at)
            case tuple() | list():
                for t in x:
                    walk(t)
            case _ if hasattr(x, "__dataclass_fields__"):
                for f in x.__dataclass_fields__:
                    walk(getattr(x, f))

    walk(node)
    return out


def names_used(node) -> set[str]:
    """Every variable or array name read or written inside an Imp statement or expression."""
    out: set[str] = set()

    def walk(x):
        match x:
            case Var(name):
                out.add(name)
            case Decl(name, _, init):
                out.add(name)
                walk(init)
            case Assign(name, v):
                out.add(name)
                walk(v)
            case Seq(stmts):
                for t in stmts:
                    walk(t)
            case Comment():
                pass
            case _ if hasattr(x, "__dataclass_fields__"):
                for f in x.__dataclass_fields__:
                    value = getattr(x, f)
                    if f in ("array", "bits", "var", "qa", "ea", "crd_a", "qb", "eb",
                             "crd_b", "q", "crd", "source") and isinstance(value, str):
                        out.add(value)           # arrays and loop counters are names too
                    else:
                        walk(value)

    walk(node)
    return out


def declared_in(node) -> set[str]:
    """The names a statement introduces for itself: its Decls, local arrays and
    loop variables. They are not visible outside it."""
    out: set[str] = set()
    for s in statements(node):
        match s:
            case Decl(name, _, _) | LocalArray(name, _, _):
                out.add(name)
            case ForSorted(var, _, _, _, _, _) | ParallelFor(var, _, _, _, _):
                out.add(var)
    return out


def scalars_assigned(node) -> set[str]:
    """The scalar variables a statement changes after their declaration."""
    out: set[str] = set()
    for s in statements(node):
        match s:
            case Assign(name, _) | Seek(name, _, _, _, _):
                out.add(name)
            case ShortIntersect(qa, _, _, qb, _, _, _):
                out |= {qa, qb}
    return out


def arrays_written(node) -> set[str]:
    """The arrays a statement stores into, grows, clears or replaces."""
    out: set[str] = set()
    for s in statements(node):
        match s:
            case (Store(arr, _, _) | Accum(arr, _, _) | SetBit(arr, _, _)
                  | Alloc(arr, _, _, _) | Reserve(arr, _, _, _)):
                out.add(arr)
            case Move(arr, src):
                out |= {arr, src}
            case ForSorted(_, arr, _, _, bits, _):
                out |= {arr} | ({bits} if bits else set())
    return out


class Names:
    """Deterministic fresh names: the first request for `q` gets `q`, then `q_1`, …"""

    def __init__(self):
        self.used: dict[str, int] = {}

    def fresh(self, base: str) -> str:
        n = self.used.get(base)
        if n is None:
            self.used[base] = 0
            return base
        while True:
            n += 1
            cand = f"{base}_{n}"
            if cand not in self.used:
                self.used[base] = n
                self.used[cand] = 0
                return cand

# ---------------------------------------------------------------------- interpreter


class ImpRuntimeError(RuntimeError):
    """An Imp program misbehaved (e.g. read out of bounds): a compiler bug."""


_BINOPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "/": lambda a, b: a // b,
    "&": lambda a, b: a & b,
    # a slot in a table of mask + 1 entries (a power of two): Fibonacci hashing,
    # the same bits as ep_hash in the C kernel
    "hash": lambda k, mask: ((int(k) * 0x9E3779B97F4A7C15) % (1 << 64) >> 32) & int(mask),
    "max": max,
    "min": min,
}


class Machine:
    """Runs Imp over an environment of scalars and numpy arrays."""

    def __init__(self, semiring, env: dict | None = None):
        self.semiring = semiring
        self.env: dict = dict(env or {})
        self._cast = semiring.dtype.type

    def eval(self, e: Expr):
        env = self.env
        match e:
            case Var(name):
                return env[name]
            case Const(value, "value"):
                return self._cast(value)
            case Const(value, _):
                return value
            case Bin("&&", a, b):
                return bool(self.eval(a)) and bool(self.eval(b))
            case Bin("||", a, b):
                return bool(self.eval(a)) or bool(self.eval(b))
            case Bin(op, a, b):
                return _BINOPS[op](self.eval(a), self.eval(b))
            case Not(a):
                return not self.eval(a)
            case Load(array, index):
                return self._load(array, self.eval(index))
            case Bit(array, index):
                i = self.eval(index)
                return bool((self._load(array, i // 64) >> (i % 64)) & 1)
            case Select(c, a, b):
                return self.eval(a) if self.eval(c) else self.eval(b)
            case Ring(op, a, b):
                fn = self.semiring.add if op == "add" else self.semiring.mul
                return self._cast(fn(self.eval(a), self.eval(b)))
        raise ImpRuntimeError(f"not an Imp expression: {e!r}")

    def _load(self, array, i):
        arr = self.env[array]
        if not 0 <= i < len(arr):
            raise ImpRuntimeError(f"read {array}[{i}] out of bounds (length {len(arr)})")
        v = arr[i]
        return int(v) if arr.dtype.kind in "iu" else v

    def exec(self, s: Stmt):
        env = self.env
        match s:
            case Decl(name, _, init):
                env[name] = self.eval(init)
            case Assign(name, value):
                env[name] = self.eval(value)
            case Store(array, index, value):
                i = self.eval(index)
                self._check_store(array, i)
                env[array][i] = self.eval(value)
            case Accum(array, index, value):
                i = self.eval(index)
                self._check_store(array, i)
                arr = env[array]
                arr[i] = self.semiring.add(arr[i], self.eval(value))
            case While(cond, body):
                while self.eval(cond):
                    self.exec(body)
            case If(cond, then, else_):
                if self.eval(cond):
                    self.exec(then)
                elif else_ is not None:
                    self.exec(else_)
            case Seq(stmts):
                for t in stmts:
                    self.exec(t)
            case Block(body):
                self.exec(body)
            case Comment():
                pass
            case Alloc(array, typ, size, fill):
                dtype = self._dtype(typ)
                env[array] = np.full(int(self.eval(size)), _garbage(dtype) if fill is None
                                     else self.eval(fill), dtype=dtype)
            case ParallelFor(var, start, end, body, _, _, private):
                saved = {arr: env[arr] for arr, *_ in private if arr in env}
                for arr, typ, size, fill in private:
                    env[arr] = np.full(int(self.eval(size)), self.eval(fill),
                                       dtype=self._dtype(typ))
                stop = self.eval(end)
                env[var] = self.eval(start)
                while env[var] < stop:
                    self.exec(body)
                    env[var] += 1
                env.update(saved)
            case Opaque(_):
                pass
            case LocalArray(array, size, fill):
                env[array] = np.full(size, self.eval(fill), dtype=self._dtype("value"))
            case Prefetch(array, index, _):
                i = int(self.eval(index))
                if not 0 <= i <= len(self.env[array]):
                    raise ImpRuntimeError(f"prefetch {array}[{i}] out of bounds "
                                          f"(length {len(self.env[array])})")
            case SetBit(array, index, on):
                i = self.eval(index)
                self._check_store(array, i // 64)
                bit = np.uint64(1) << np.uint64(i % 64)
                words = env[array]
                words[i // 64] = (words[i // 64] | bit) if on else (words[i // 64] & ~bit)
            case ForSorted(var, array, n, size, bits, body):
                self._for_sorted(var, array, int(self.eval(n)), int(self.eval(size)), bits,
                                 body)
            case ShortIntersect(qa, ea, crd_a, qb, eb, crd_b, body):
                self._short_intersect(qa, ea, crd_a, qb, eb, crd_b, body)
            case Seek(q, end, crd, t, r):
                self._seek(q, int(self.eval(end)), crd, self.eval(t), bool(self.eval(r)))
            case Reserve(array, typ, size, fill):
                need = int(self.eval(size))
                arr = env[array]
                if need > len(arr):       # like C's realloc: the new part is undefined
                    grown = np.full(max(need, 2 * len(arr)), _garbage(arr.dtype)
                                    if fill is None else self.eval(fill), dtype=arr.dtype)
                    grown[:len(arr)] = arr
                    env[array] = grown
            case Move(array, source):
                env[array], env[source] = env[source], env[source][:0]
            case _:
                raise ImpRuntimeError(f"not an Imp statement: {s!r}")

    def _for_sorted(self, var, array, n, size, bits, body):
        env = self.env
        if n > len(env[array]):
            raise ImpRuntimeError(f"sorted walk over {array}[0..{n}] past its end")
        items = sorted(int(x) for x in env[array][:n])
        if len(set(items)) != n or (items and not 0 <= items[0] <= items[-1] < size):
            raise ImpRuntimeError(f"sorted walk over {array}: not distinct indices < {size}")
        if bits is not None:
            words = env[bits]
            if len(words) < int(self.eval(sort_bits_words(Const(size)))):
                raise ImpRuntimeError(f"mark array {bits} is too short")
            marked = [w * 64 + b for w in np.flatnonzero(words) for b in range(64)
                      if (int(words[w]) >> b) & 1]
            if marked != items:
                raise ImpRuntimeError(f"the marks in {bits} are not exactly {array}[0..{n}]")
        env[array][:n] = _garbage(env[array].dtype)     # C leaves it in any order
        for x in items:
            env[var] = x
            self.exec(body)
        if bits is not None:
            env[bits][:] = 0

    def _short_intersect(self, qa, ea, crd_a, qb, eb, crd_b, body):
        env = self.env
        segments = []
        for q, e, crd in ((qa, ea, crd_a), (qb, eb, crd_b)):
            start, end = int(env[q]), int(env[e])
            if not (0 <= start <= end and end - start <= SHORT_SEGMENT
                    and start + SHORT_SEGMENT <= len(env[crd])):
                raise ImpRuntimeError(f"short intersection of {crd}[{start}..{end}) "
                                      f"(length {len(env[crd])}) breaks its precondition")
            segments.append({int(env[crd][p]): p for p in range(start, end)})
        first, second = segments
        for coord in sorted(first.keys() & second.keys()):
            env[qa], env[qb] = first[coord], second[coord]
            self.exec(body)
        env[qa], env[qb] = env[ea], env[eb]

    def _seek(self, q, end, crd, t, r):
        env = self.env
        p, arr = int(env[q]), env[crd]
        if not 0 <= p <= end <= len(arr):
            raise ImpRuntimeError(f"seek in {crd}[{p}..{end}) (length {len(arr)}) out of bounds")
        while p < end and (arr[p] < t or (arr[p] == t and r)):
            if p + 1 < end and not arr[p] < arr[p + 1]:
                raise ImpRuntimeError(f"seek in {crd}[..{end}): not increasing at {p}")
            p += 1
        env[q] = p

    def _dtype(self, typ):
        return {"index": np.int64, "bool": np.bool_, "bits": np.uint64}.get(
            typ, self.semiring.dtype)

    def _check_store(self, array, i):
        n = len(self.env[array])
        if not 0 <= i < n:
            raise ImpRuntimeError(f"write {array}[{i}] out of bounds (length {n})")


def _garbage(dtype):
    """What the interpreter puts in cells that C leaves undefined: values no test
    expects, and indices far out of every array's bounds."""
    kind = np.dtype(dtype).kind
    return {"f": 918273.645, "b": True, "u": 0x5A5A5A5A5A5A5A5A}.get(
        kind, 1 << 40 if np.dtype(dtype) == np.int64 else 918273645)


def show(node, indent: int = 0) -> str:
    """A readable, C-like listing of an Imp statement or expression (for debugging)."""
    pad = "  " * indent
    match node:
        case Var(name):
            return name
        case Const(v, _):
            return repr(v)
        case Bin(op, a, b) if op in ("max", "min"):
            return f"{op}({show(a)}, {show(b)})"
        case Bin(op, a, b):
            return f"({show(a)} {op} {show(b)})"
        case Not(a):
            return f"!{show(a)}"
        case Load(arr, i):
            return f"{arr}[{show(i)}]"
        case Select(c, a, b):
            return f"({show(c)} ? {show(a)} : {show(b)})"
        case Ring(op, a, b):
            return f"{'⊕' if op == 'add' else '⊗'}({show(a)}, {show(b)})"
        case Decl(name, t, init):
            return f"{pad}{t} {name} = {show(init)};"
        case Assign(name, v):
            return f"{pad}{name} = {show(v)};"
        case Store(arr, i, v):
            return f"{pad}{arr}[{show(i)}] = {show(v)};"
        case Accum(arr, i, v):
            return f"{pad}{arr}[{show(i)}] ⊕= {show(v)};"
        case While(c, body):
            return f"{pad}while {show(c)} {{\n{show(body, indent + 1)}\n{pad}}}"
        case If(c, t, e):
            out = f"{pad}if {show(c)} {{\n{show(t, indent + 1)}\n{pad}}}"
            if e is not None:
                out += f" else {{\n{show(e, indent + 1)}\n{pad}}}"
            return out
        case Seq(stmts):
            return "\n".join(show(t, indent) for t in stmts)
        case Block(body):
            return f"{pad}{{\n{show(body, indent + 1)}\n{pad}}}"
        case Comment(text):
            return f"{pad}// {text}"
        case Alloc(arr, t, n, fill):
            return f"{pad}{t} {arr}[{show(n)}]" + ("" if fill is None
                                                    else f" = {{{show(fill)}...}}") + ";"
        case Reserve(arr, t, n, fill):
            return f"{pad}reserve {arr}[{show(n)}]" + ("" if fill is None
                                                        else f" = {{{show(fill)}...}}") + ";"
        case Move(arr, src):
            return f"{pad}{arr} = move {src};"
        case Bit(arr, i):
            return f"bit({arr}, {show(i)})"
        case SetBit(arr, i, on):
            return f"{pad}{'set' if on else 'clear'} bit({arr}, {show(i)});"
        case ForSorted(var, arr, n, _, bits, body):
            marks = f" marked in {bits}" if bits else ""
            return (f"{pad}for {var} in sorted {arr}[0..{show(n)}]{marks} {{\n"
                    f"{show(body, indent + 1)}\n{pad}}}")
        case Opaque(var):
            return f"{pad}opaque {var};"
        case LocalArray(arr, size, fill):
            return f"{pad}local {arr}[{size}] = {show(fill)};"
        case Prefetch(arr, i, write):
            return f"{pad}prefetch{' for writing' if write else ''} {arr}[{show(i)}];"
        case Seek(q, end, crd, t, r):
            return f"{pad}{q} = seek({crd}[{q}..{show(end)}] past ({show(t)}, {show(r)}));"
        case ShortIntersect(qa, ea, crd_a, qb, eb, crd_b, body):
            return (f"{pad}for ({qa}, {qb}) in {crd_a}[{qa}..{ea}) ∩ {crd_b}[{qb}..{eb}) {{\n"
                    f"{show(body, indent + 1)}\n{pad}}}")
        case ParallelFor(var, a, b, body, threads, red, private):
            what = f"parallel({threads}{', reduce ' + red if red else ''}" + "".join(
                f", private {arr}[{show(n)}]" for arr, _, n, _ in private) + ")"
            return (f"{pad}{what} for {var} in [{show(a)}, {show(b)}) {{\n"
                    f"{show(body, indent + 1)}\n{pad}}}")
    return repr(node)

"""Imp's syntax: frozen dataclass nodes, matched with `match`.

    types  t ::= index | bool | value | bits | byte   (value = the semiring's carrier;
                                                 bits = 64-bit words of flags)

    expr   e ::= Var(x) | Const(c, t) | Bin(op, e, e) | Not(e) | Load(a, e)
               | Bit(a, e) | Select(e, e, e) | Ring(add|mul, e, e)
               | Ring(repeat, e, n)   (e ⊕ … ⊕ e, n copies: Semiring.repeat)
           op ::= + - * / & < <= == != && || max min hash bin

    stmt   s ::= Decl(x, t, e) | Assign(x, e) | Store(a, e, e) | Accum(a, e, e)
               | While(e, s) | If(e, s, s?, rare?) | Break | Seq(s...) | Block(s)
               | Comment(text)
               | Alloc(a, t, e, e?, kept?) | Reserve(a, t, e, e?) | Move(a, a)
               | Prefetch(a, e, write) | SetBit(a, e, on) | LocalArray(a, n, e)
               | Opaque(x) | ForSorted(x, a, e, e, a?, s, x?, a?)
               | ShortIntersect(x, x, a, x, x, a, s, width) | Seek(x, e, a, e, e)
               | ParallelFor(x, e, e, s, threads, reduce?, private, flag?, parallel_if?)
               | Gemm(e, e, e, a, trans, e, a, trans, e, a, e, batch, overwrite, s)
               | GatherSum(x, x, x, a, a, a?, s, x, x?, x?) | GatherPick(x, a, x)
               | Fixpoint(x, e, s, ((a, a, e)...), e)

`/` is integer division, `&` bitwise and, `hash k mask` a slot of a hash
table (the same bits in the interpreter and in C), `bin v n` the bin of a value v
among 0..n-1 (v where it is an integer there, else -1: expr.bins). `&&`, `||` and `Select`
evaluate lazily (as in C), so guarded loads are safe. `Ring` is the
semiring's add or mul; `Accum(a, i, v)` is a[i] = a[i] ⊕ v. Variables are
named uniquely by `Names`, so one flat environment serves the interpreter and
C block scoping never matters for correctness.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .. import tuning as _tuning

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
    """array[index]. `hint`: a read whose value only steers prefetching (never a
    result), in bounds by the guard around it without any input check, so
    lower.schedule.fused_checks does not count it as a read of the level.
    `view` ("int8", "int16", "int32", "int64"; "" for none): the array's bytes
    read as that integer type, element `index` of them (a narrow column packed
    into a value array: runtime.narrow; a column's positions: runtime.align)."""
    array: str
    index: "Expr"
    hint: bool = False
    view: str = ""


@dataclass(frozen=True)
class Bit:
    """Bit `index` of a `bits` array (word index/64, bit index%64), as a bool."""
    array: str
    index: "Expr"


@dataclass(frozen=True)
class Probe:
    """The slot where a linear probe for `key` stops in a hash table of `array`:
    of the slots table + (h mod (mask + 1)) for h = ep_hash(key, mask),
    ep_hash(key, mask) + 1, ..., the first that holds key or -1 (empty). The
    table (mask + 1 slots, a power of two) must hold key or an empty slot, so
    the probe ends (formats/hashtable.py)."""
    array: str
    table: "Expr"
    mask: "Expr"
    key: "Expr"


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


Expr = Union[Var, Const, Bin, Not, Load, Bit, Probe, Select, Ring]

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
    """`walk`: None, or the streams.Walk fact of the level this loop walks whole
    (a note for passes over the program: it changes nothing the loop does)."""
    cond: Expr
    body: "Stmt"
    walk: object = None


@dataclass(frozen=True)
class If:
    """`rare`: a hint that `cond` almost never holds (a failed input check): C
    lays the `then` arm out of the hot path (EP_RARE, __builtin_expect).
    `split`: a hint that `cond` reads only the function's parameters and arrays
    no statement writes, so it holds the same value all through a call: C may
    compile the whole program once for each value, as functions of their own,
    and pick one as the call begins (c.arms), so that code one call never runs
    is not laid out with the code it runs. Neither changes what the statement does."""
    cond: Expr
    then: "Stmt"
    else_: "Stmt | None" = None
    rare: bool = False
    split: bool = False


@dataclass(frozen=True)
class Break:
    """Leave the innermost While around it now (C's `break`): its condition is
    not tested again and the statement after the loop runs next. Only If, Seq
    and Block may stand between a Break and its While (`analysis.loose_breaks`
    finds one that does not: in C a ParallelFor, a ForSorted, ... is a loop or
    a call of its own). proofs_notes/imp_break.md."""


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
    """`walk`: None, or a note for passes over the program (streams.Merged
    after a union's init): it changes nothing."""
    text: str
    walk: object = None


@dataclass(frozen=True)
class Alloc:
    """A fresh array of `size` elements of `type`, every one set to `fill`; with
    fill None its contents are undefined until stored (the interpreter fills it
    with garbage, so that a program reading such a cell goes wrong in tests).

    `kept`: a promise that the program, when it ends normally, leaves every
    cell equal to `fill` again (fill a Const). C may then take the array from,
    and give it back to, a pool of such arrays kept between calls, so that
    allocating n cells of which a call touches t costs O(t), not a fill of n.
    The interpreter checks the promise (Machine.check_kept)."""
    array: str
    type: str
    size: Expr
    fill: Expr | None
    kept: bool = False


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
    the interpreter checks it). `write`: the hint is that it will be written.
    `ahead`: the hint is for `ahead` entries past array[index] instead, which
    may lie past the array's end (a row's arrays ahead of it, not clamped): C
    adds them to the address as an integer, never forming a pointer past the
    array, and a prefetch does not fault."""
    array: str
    index: Expr
    write: bool = False
    ahead: int = 0


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

    With `marks` (a `byte` array of `size` cells) and `bits` (an array of
    `sort_bits_words(size)` words): on entry exactly the listed indices are marked
    (nonzero) in marks and every word of bits is zero; on exit both are all zero.
    C may then set the listed indices' bits and walk them in order instead of
    sorting the list; `array` then has room for `size` indices (C may write past n
    there: a short row is sorted in vector lanes and stored back whole). A byte
    per index, not a bit, marks a first touch (formats/bytemap.py): a store to
    its cell alone, where a bit's word is loaded again by the next marking in it.

    `place`, when given, is the counter at which the body writes its one entry
    and which it steps by one (an append): C may then run the body over the
    list unsorted, the counter set to each index's rank from where it stood, and
    leave it n further on (a short row's entries go straight to their places).
    Without bits, the list is sorted. Either way array[0..n-1] is left in an
    unspecified order; the body must not touch array, marks, bits or n."""
    var: str
    array: str
    n: Expr
    size: Expr
    bits: str | None
    body: "Stmt"
    place: str | None = None
    marks: str | None = None

    def __post_init__(self):
        if (self.bits is None) != (self.marks is None):
            raise ValueError("ForSorted takes marks and bits together, or neither")


@dataclass(frozen=True)
class LocalArray:
    """An array of `size` (a constant) values (or indices: `type` "index"), each
    set to `fill`, in the scope that declares it: in C an automatic array, which
    the compiler keeps in registers when every index into it is a constant after
    unrolling."""
    array: str
    size: int
    fill: Expr
    type: str = "value"


@dataclass(frozen=True)
class Opaque:
    """No effect. In C, the compiler may no longer assume anything about `var`'s
    value here, so a loop that steps it is not vectorised."""
    var: str


@dataclass(frozen=True)
class ShortIntersect:
    """Intersect two short sorted segments at once: for each coordinate in both
    crd_a[qa..ea) and crd_b[qb..eb) (each strictly increasing), in ascending
    order, set qa and qb to its positions and run `body`; then qa := ea and
    qb := eb. `body` must not change qa, qb, ea or eb.

    Precondition: each segment has at most `width` entries, and each array holds
    `width` entries from its segment's start (C may read them all and mask the
    ones past the end). The interpreter checks it.
    """
    qa: str
    ea: str
    crd_a: str
    qb: str
    eb: str
    crd_b: str
    body: "Stmt"
    width: int = _tuning.DEFAULT.short_segment


@dataclass(frozen=True)
class Seek:
    """Move q past every position of crd[q..end) that is behind (t, r), that is
    with (crd[p], true) <= (t, r): crd[p] < t, or crd[p] == t when r holds.
    crd[q..end) must be strictly increasing, so those positions are a prefix.

    The interpreter steps through the prefix one position at a time (and checks
    the order it passes); C calls ep_seek_at (codegen_templates/kernel.c.j2),
    which tests two steps in line, then calls ep_seek: `tuning.seek_linear`
    steps, then a gallop (ep_seek alone when seek_linear < 2).
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
    copy of those scratch arrays (filled; fill None: undefined) before its first
    iteration; iterations must leave them as they found them, or read only what
    tags kept in them say an earlier iteration of the same thread wrote (rows
    kept: lower.schedule.kept_rows). A failed allocation makes the kernel fail
    after the loop.
    With `flag` (an index variable declared before the loop), iterations may
    also set that variable, only ever to one nonzero constant: in C each block
    sets its own copy starting at zero, and after the loop the variable takes
    the constant when any copy holds it (a flag raised by any block; the fused
    input checks' error, lower.schedule.fused_checks). Nothing else reads it
    inside the loop but the iterations that set it.
    With `parallel_if` (an index expression of names in scope before the loop),
    C splits the loop only where it is nonzero and otherwise runs the same
    blocks in order on the calling thread (lower.schedule.thread_work).
    """
    var: str
    start: Expr
    end: Expr
    body: "Stmt"
    threads: int
    reduce: str | None = None
    private: tuple = ()
    flag: str | None = None
    parallel_if: Expr | None = None


from .whole import Fixpoint, GatherPick, GatherSum, Gemm  # noqa: E402

Stmt = Union[Decl, Assign, Store, Accum, While, If, Break, Seq, Block, Comment, Alloc, Reserve,
             Move, SetBit, ForSorted, ShortIntersect, Seek, ParallelFor, Prefetch, Opaque,
             LocalArray, Gemm, GatherSum, GatherPick, Fixpoint]

SKIP = Seq(())

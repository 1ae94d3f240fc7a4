"""The one interpreter of Imp.

The stream interpreter runs staged stream fields on it, and whole lowered
programs run on it as an oracle between streams and C. It checks what C
assumes: every read and write in bounds, the preconditions of ForSorted,
ShortIntersect and Seek; a broken one raises ImpRuntimeError (a compiler bug).
"""
from __future__ import annotations

import numpy as np

from .. import maps
from .construct import sort_bits_words
from .nodes import (Accum, Alloc, Assign, Bin, Bit, Block, Break, Comment, Const, Decl, Expr,
                    Fixpoint, ForSorted, GatherPick, GatherSum, Gemm, If, Load, LocalArray, Move,
                    Not, Probe,
                    Opaque, ParallelFor, Prefetch, Reserve, Ring, Seek, Select, Seq, SetBit,
                    ShortIntersect, Stmt, Store, Var, While)


class ImpRuntimeError(RuntimeError):
    """An Imp program misbehaved (e.g. read out of bounds): a compiler bug."""


class _Exit(Exception):
    """An imp.Break on its way to its While."""


_CLOSED = (ParallelFor, ForSorted, ShortIntersect, Gemm, GatherSum, Fixpoint)   # no Break out


BINOPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "<u": lambda a, b: int(a) % (1 << 64) < int(b) % (1 << 64),    # as C's uint64_t
    # the greater as unsigned coordinates (C's ep_umax at the index width: for
    # coordinates inside it, the same order as uint64_t's)
    "umax": lambda a, b: b if int(a) % (1 << 64) < int(b) % (1 << 64) else a,
    "gap": lambda a, b: (int(a) - int(b) - 1 + (1 << 63)) % (1 << 64) - (1 << 63),  # no overflow
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "/": lambda a, b: a // b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,          # both sides evaluated (no short circuit)
    # a slot in a table of mask + 1 entries (a power of two): Fibonacci hashing,
    # the same bits as ep_hash in the C kernel
    "hash": lambda k, mask: ((int(k) * 0x9E3779B97F4A7C15) % (1 << 64) >> 32) & int(mask),
    "max": max,
    "min": min,
    # the bin of value v among 0..n-1: v when it is an integer there, else -1
    "bin": lambda v, n: int(v) if 0 <= v < n and int(v) == v else -1,
    # v where ok, else the value of all-zero bytes (C's ep_keep: no branch)
    "keep": lambda ok, v: v if ok else type(v)(0),
}


class Machine:
    """Runs Imp over `env`, a dict of scalars and numpy arrays (changed in place:
    after `exec`, env holds the program's variables and arrays)."""

    def __init__(self, semiring, env: dict | None = None):
        self.semiring = semiring
        self.env: dict = dict(env or {})
        self.kept: dict = {}          # array -> its fill, for arrays Alloc'ed kept
        self._cast = semiring.dtype.type

    def eval(self, e: Expr):
        match e:
            case Var(name):
                return self.env[name]
            case Const(value, "value"):
                return self._cast(value)
            case Const(value, _):
                return value
            case Bin("&&", a, b):
                return bool(self.eval(a)) and bool(self.eval(b))
            case Bin("||", a, b):
                return bool(self.eval(a)) or bool(self.eval(b))
            case Bin(op, a, b):
                return BINOPS[op](self.eval(a), self.eval(b))
            case Not(a):
                return not self.eval(a)
            case Load(array, index, _, view) if view:
                return int(self.env[array].view(view)[self.eval(index)])
            case Load(array, index):
                return self._load(array, self.eval(index))
            case Bit(array, index):
                i = self.eval(index)
                return bool((self._load(array, i // 64) >> (i % 64)) & 1)
            case Probe(array, table, mask, key):
                return self._probe(array, self.eval(table), self.eval(mask), self.eval(key))
            case Select(c, a, b):
                return self.eval(a) if self.eval(c) else self.eval(b)
            case Ring(op, a, b) if maps.is_map(op):
                return self._cast(maps.apply(op, self.eval(a), self.eval(b)))
            case Ring("repeat", a, n):      # the n-fold ⊕ (Semiring.repeat)
                return self._cast(self.semiring.repeat(self.eval(a), self.eval(n)))
            case Ring(op, a, b):
                fn = self.semiring.add if op == "add" else self.semiring.mul
                return self._cast(fn(self.eval(a), self.eval(b)))
        raise ImpRuntimeError(f"not an Imp expression: {e!r}")

    def exec(self, s: Stmt):
        if not isinstance(s, _CLOSED):
            return self._exec(s)
        try:
            self._exec(s)
        except _Exit:
            raise ImpRuntimeError(f"a Break leaves a {type(s).__name__}, not a While "
                                  "(imp.Break)") from None

    def _exec(self, s: Stmt):
        env = self.env
        match s:
            case Decl(name, _, value) | Assign(name, value):
                env[name] = self.eval(value)
            case Store(array, index, value):
                env[array][self._at(array, self.eval(index))] = self.eval(value)
            case Accum(array, index, value):
                i = self._at(array, self.eval(index))
                env[array][i] = self.semiring.add(env[array][i], self.eval(value))
            case While(cond, body):
                try:
                    while self.eval(cond):
                        self.exec(body)
                except _Exit:
                    pass
            case Break():
                raise _Exit
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
            case Comment() | Opaque():
                pass
            case Alloc(array, typ, size, fill, kept):
                env[array] = self._fresh_array(typ, size, fill)
                if kept:
                    self.kept[array] = self.eval(fill)
            case LocalArray(array, size, fill, typ):
                env[array] = self._fresh_array(typ, Const(size), fill)
            case Reserve(array, _, size, fill):
                self._reserve(array, int(self.eval(size)), fill)
            case Move(array, source):
                env[array], env[source] = env[source], env[source][:0]
            case Prefetch(array, index, _):
                self._prefetch(array, int(self.eval(index)))
            case SetBit(array, index, on):
                self._set_bit(array, self.eval(index), on)
            case ParallelFor(var, start, end, body, _, _, private):
                self._parallel_for(var, start, end, body, private)
            case ForSorted(var, array, n, size, bits, body, _, marks):
                self._for_sorted(var, array, int(self.eval(n)), int(self.eval(size)), bits,
                                 body, marks)
            case ShortIntersect():
                self._short_intersect(s)
            case Seek(q, end, crd, t, r):
                self._seek(q, int(self.eval(end)), crd, self.eval(t), bool(self.eval(r)))
            case Gemm():
                self._gemm(s)
            case GatherSum(_, q, end, _, _, _, fallback, _, _, _):
                self.exec(fallback)         # the loop: C's lanes only reassociate its sum
                env[q] = env[end]
            case GatherPick(var, _, _):
                env[var] = 1
            case Fixpoint():
                self._fixpoint(s)
            case _:
                raise ImpRuntimeError(f"not an Imp statement: {s!r}")

    def check_kept(self):
        """Raise ImpRuntimeError unless every array Alloc'ed kept holds its fill
        in every cell (the promise Alloc.kept makes for a normal end)."""
        for array, fill in self.kept.items():
            left = np.flatnonzero(self.env[array] != fill)
            if len(left):
                raise ImpRuntimeError(f"kept array {array} ends with {len(left)} cells "
                                      f"other than its fill {fill} (first at {left[0]})")

    # ------------------------------------------------------------ arrays
    def _at(self, array, i, what="write") -> int:
        """i, checked to be in bounds of array for a read or a write."""
        n = len(self.env[array])
        if not 0 <= i < n:
            raise ImpRuntimeError(f"{what} {array}[{i}] out of bounds (length {n})")
        return i

    def _probe(self, array, table, mask, key):
        """imp.Probe: the slot where a linear probe for key stops (key or -1)."""
        h = BINOPS["hash"](key, mask)
        while self._load(array, table + h) not in (key, -1):
            h = (h + 1) & mask
        return table + h

    def _load(self, array, i):
        arr = self.env[array]
        v = arr[self._at(array, i, "read")]
        return int(v) if arr.dtype.kind in "iu" else v

    def _dtype(self, typ):
        return {"index": np.int64, "bool": np.bool_, "bits": np.uint64, "byte": np.int8}.get(
            typ, self.semiring.dtype)

    def _fresh_array(self, typ, size: Expr, fill: Expr | None):
        dtype = self._dtype(typ)
        return np.full(int(self.eval(size)),
                       _garbage(dtype) if fill is None else self.eval(fill), dtype=dtype)

    def _reserve(self, array, need: int, fill):
        arr = self.env[array]
        if need > len(arr):       # like C's realloc: the new part is undefined
            grown = np.full(max(need, 2 * len(arr)),
                            _garbage(arr.dtype) if fill is None else self.eval(fill),
                            dtype=arr.dtype)
            grown[:len(arr)] = arr
            self.env[array] = grown

    def _prefetch(self, array, i: int):
        if not 0 <= i <= len(self.env[array]):
            raise ImpRuntimeError(f"prefetch {array}[{i}] out of bounds "
                                  f"(length {len(self.env[array])})")

    def _set_bit(self, array, i: int, on: bool):
        self._at(array, i // 64)
        bit = np.uint64(1) << np.uint64(i % 64)
        words = self.env[array]
        words[i // 64] = (words[i // 64] | bit) if on else (words[i // 64] & ~bit)

    # ------------------------------------------------------------- loops
    def _parallel_for(self, var, start, end, body, private):
        """In order; each private array is fresh for the loop and restored after."""
        env = self.env
        saved = {arr: env[arr] for arr, *_ in private if arr in env}
        for arr, typ, size, fill in private:
            env[arr] = self._fresh_array(typ, size, fill)
        stop = self.eval(end)
        env[var] = self.eval(start)
        while env[var] < stop:
            self.exec(body)
            env[var] += 1
        env.update(saved)

    def _for_sorted(self, var, array, n, size, bits, body, marks=None):
        env = self.env
        if n > len(env[array]):
            raise ImpRuntimeError(f"sorted walk over {array}[0..{n}] past its end")
        items = sorted(int(x) for x in env[array][:n])
        if len(set(items)) != n or (items and not 0 <= items[0] <= items[-1] < size):
            raise ImpRuntimeError(f"sorted walk over {array}: not distinct indices < {size}")
        if marks is not None:
            self._check_marks(marks, bits, array, n, size, items)
        env[array][:n] = _garbage(env[array].dtype)     # C leaves it in any order
        for x in items:
            env[var] = x
            self.exec(body)
        if marks is not None:
            env[marks][:] = 0
            env[bits][:] = 0

    def _check_marks(self, marks, bits, array, n, size, items):
        """ForSorted's entry: exactly the listed cells of `marks` marked, `bits` zero."""
        if len(self.env[marks]) < size:
            raise ImpRuntimeError(f"mark array {marks} is too short")
        if len(self.env[bits]) < int(self.eval(sort_bits_words(Const(size)))):
            raise ImpRuntimeError(f"bit array {bits} is too short")
        if np.flatnonzero(self.env[marks]).tolist() != items:
            raise ImpRuntimeError(f"the marks in {marks} are not exactly {array}[0..{n}]")
        if np.any(self.env[bits]):
            raise ImpRuntimeError(f"bit array {bits} is not zero before a sorted walk")

    def _fixpoint(self, s: Fixpoint):
        """The steps in order, the pairs' names exchanged after each; each state
        array's own storage holds the last state on exit (Fixpoint)."""
        env = self.env
        homes = [(a, b, env[a], env[b]) for a, b, _ in s.pairs]
        env[s.steps], limit, k = -1, int(self.eval(s.limit)), 0
        while k < limit:
            self.exec(s.body)
            k += 1
            for a, b, _ in s.pairs:
                env[a], env[b] = env[b], env[a]
            if self.eval(s.until):
                env[s.steps] = k
                break
        for (a, b, home_a, home_b), (_, _, size) in zip(homes, s.pairs):
            n = 0 if size is None else int(self.eval(size))
            if n and env[a] is not home_a:
                home_a[:self._at(a, n - 1, "copy") + 1] = env[a][:n]
            home_b[:] = _garbage(home_b.dtype)          # unspecified
            if size is None:
                home_a[:] = _garbage(home_a.dtype)
            env[a], env[b] = home_a, home_b

    def _short_intersect(self, s: ShortIntersect):
        env = self.env
        segments = []
        for q, e, crd in ((s.qa, s.ea, s.crd_a), (s.qb, s.eb, s.crd_b)):
            start, end = int(env[q]), int(env[e])
            if not (0 <= start <= end and end - start <= s.width
                    and start + s.width <= len(env[crd])):
                raise ImpRuntimeError(f"short intersection of {crd}[{start}..{end}) "
                                      f"(length {len(env[crd])}, width {s.width}) breaks "
                                      f"its precondition")
            segments.append({int(env[crd][p]): p for p in range(start, end)})
        first, second = segments
        for coord in sorted(first.keys() & second.keys()):
            env[s.qa], env[s.qb] = first[coord], second[coord]
            self.exec(s.body)
        env[s.qa], env[s.qb] = env[s.ea], env[s.eb]

    def _gemm(self, g: Gemm):
        """The product with numpy (not g.fallback), every cell it touches checked."""
        m, n, k = (int(self.eval(x)) for x in (g.m, g.n, g.k))
        lda, ldb, ldc = (int(self.eval(x)) for x in (g.lda, g.ldb, g.ldc))
        batch = [tuple(int(self.eval(x)) for x in b) for b in g.batch]
        rows, cols, inner = np.arange(m)[:, None], np.arange(n)[None, :], np.arange(k)
        a_at = inner[None, :] * lda + rows if g.a_trans else rows * lda + inner[None, :]
        b_at = cols * ldb + inner[:, None] if g.b_trans else inner[:, None] * ldb + cols
        c_at = rows * ldc + cols
        for offsets in _batch_offsets(batch):
            a = self._cells(g.a_array, a_at + offsets[0], "read")
            b = self._cells(g.b_array, b_at + offsets[1], "read")
            cells = c_at + offsets[2]
            c = self._cells(g.c_array, cells, "write")
            total = (a @ b).astype(self.semiring.dtype)
            self.env[g.c_array][cells] = total if g.overwrite else c + total

    def _cells(self, array, at, what):
        """array[at] for an array of positions, each checked to be in bounds."""
        arr = self.env[array]
        if at.size and not (0 <= at.min() and at.max() < len(arr)):
            raise ImpRuntimeError(f"gemm {what}s {array} out of bounds (length {len(arr)})")
        return arr[at]

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


def _batch_offsets(batch):
    """The (a, b, c) offsets of each product of a Gemm's batch, in order."""
    offsets = [(0, 0, 0)]
    for count, sa, sb, sc in batch:
        offsets = [(a + t * sa, b + t * sb, c + t * sc) for a, b, c in offsets
                   for t in range(count)]
    return offsets


def _garbage(dtype):
    """What the interpreter puts in cells that C leaves undefined: values no test
    expects, and indices far out of every array's bounds."""
    kind = np.dtype(dtype).kind
    return {"f": 918273.645, "b": True, "u": 0x5A5A5A5A5A5A5A5A}.get(
        kind, 1 << 40 if np.dtype(dtype) == np.int64 else 918273645)

"""The hash level kind ("hash"): each fibre's stored coordinates in an open-addressing
hash table, plus the table slots listed in coordinate order.

    hpos    one entry per parent position, plus one: parent p's table is the slots
            hpos[p] .. hpos[p+1]-1, its size a power of two larger than its number
            of stored coordinates (so a probe meets an empty slot)
    hcrd    one entry per slot: the coordinate stored there, or -1 (empty). A
            coordinate c of p sits at the first slot reached from
            hpos[p] + hash(c) (the kernels' ep_hash: Fibonacci hashing, masked to
            the table size) stepping by one around p's table, no empty slot between
    spos    one entry per parent position, plus one: parent p's listed slots are
            hsrt[spos[p]] .. hsrt[spos[p+1]-1]
    hsrt    the slots of p's stored coordinates, in increasing coordinate order

A value sits at its slot: the level's positions are the slots. It is read as a
formats.level Hashed (walked in order through hsrt, probed through its parent's
table in O(1) expected: tables are at most half full). It is written by insertion in
any order (`inserts`): the kernel keeps one growable table keyed by the flat cell
(the hash workspace's table, which the workspace of lower/targets/workspace.py
writes through `table`, `place` and `probe` too), and at its end sorts the touched
cells (imp.ForSorted: a quicksort of the n touched, O(n log n)) and moves each into
its fibre's table, so the listing in order is built once, where the level is
written or packed, and a reader walks it without sorting. The storage's last level.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import imp
from ..errors import InputError
from ..formats.compressed import check_pointers, index_array, require_keys
from ..formats.level import Hashed, kind
from ..imp import (ONE, ZERO, Accum, Alloc, Assign, Bin, Block, Const, Decl, ForSorted, If, Load,
                   Reserve, Store, Var, While, eq, incr, lt, not_, or_, seq)

EMPTY = Const(-1)          # an empty slot's coordinate
_PHI = np.uint64(0x9E3779B97F4A7C15)


def slot_hash(keys, mask):
    """ep_hash of the kernels, vectorised: the high half of key·2^64/φ, masked."""
    k = np.asarray(keys, dtype=np.int64).astype(np.uint64)
    return (((k * _PHI) >> np.uint64(32)) & np.asarray(mask).astype(np.uint64)).astype(np.int64)


def table_sizes(counts):
    """Per fibre: the smallest power of two at least twice its count (1 when empty)."""
    counts = np.asarray(counts, dtype=np.int64)
    caps = np.ones(len(counts), dtype=np.int64)
    while (short := caps < 2 * counts).any():
        caps[short] *= 2
    return caps


@kind("hash", named="hash")
@dataclass(frozen=True)
class Hash:
    """A hash level: per parent an open-addressing table of its stored coordinates
    (hpos, hcrd) and their slots in order (spos, hsrt); see the module docstring.
    The last level of its format.

        >>> ep.Format(["dense", "hash"])        # rows inserted in any order
    """

    unique = True
    roles = ("hpos", "hcrd", "spos", "hsrt")
    segment_roles = None     # position q of hsrt is not the child position
    located = False
    appends = False
    one_per_parent = False   # formats.level
    inserts = True           # written in any order under located parents (begin..end)
    last_only = "its values sit at the slots of its tables"
    locates = True           # formats.level (optional): a probe finds a coordinate in O(1)
    scratch_roles = ("n", "list", "cap", "h", "t", "keys", "vals", "slot", "tmp", "w", "g", "p",
                     "e")

    def __str__(self):
        return "hash"

    # -- packing ------------------------------------------------------------
    def pack(self, parent_ids, n_parents, coord, size, split=None):
        """From sorted unique entries: each in its parent's table by linear
        probing, listed in order. Returns (arrays, slots of the entries, slots)."""
        parent_ids = np.asarray(parent_ids, dtype=np.int64)
        coord = np.asarray(coord, dtype=np.int64)
        counts = np.bincount(parent_ids, minlength=n_parents)
        hpos = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(table_sizes(counts), out=hpos[1:])
        spos = np.zeros(n_parents + 1, dtype=np.int64)
        np.cumsum(counts, out=spos[1:])
        hcrd, slots = _place(hpos, parent_ids, coord, int(hpos[-1]))
        return {"hpos": hpos, "hcrd": hcrd, "spos": spos, "hsrt": slots}, slots, int(hpos[-1])

    def unpack(self, arrays, parents, size):
        """The listed children of `parents` in order: (owner, coord, slots), child
        c belonging to parents[owner[c]]."""
        spos = np.asarray(arrays["spos"], dtype=np.int64)
        parents = np.asarray(parents, dtype=np.int64)
        begin = spos[parents]
        counts = spos[parents + 1] - begin
        owner = np.repeat(np.arange(len(parents), dtype=np.int64), counts)
        offset = np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                    counts)
        slots = np.asarray(arrays["hsrt"], dtype=np.int64)[np.repeat(begin, counts) + offset]
        return owner, np.asarray(arrays["hcrd"], dtype=np.int64)[slots], slots

    def check(self, arrays, n_parents, size, where, order=True, parent_runs=None,
              coords_above=None):
        """Validate hpos/hcrd/spos/hsrt under `n_parents` positions (InputError
        naming `where`): every table a power of two with an empty slot, every
        listed slot in its parent's table and reachable by probing from its
        coordinate's hash, the listing strictly increasing and complete. Returns
        the number of slots."""
        require_keys(arrays, self.roles, where)
        a = {r: index_array(arrays[r], f"{where}: {r}", exact=True) for r in self.roles}
        check_pointers(a["hpos"], n_parents, len(a["hcrd"]), where, "hpos", "hcrd")
        check_pointers(a["spos"], n_parents, len(a["hsrt"]), where, "spos", "hsrt")
        _check_tables(a, n_parents, size, where)
        return int(a["hpos"][-1])

    def fibres(self, arrays):
        """Each parent's number of stored coordinates; no runs (formats.level)."""
        return np.diff(np.asarray(arrays["spos"], dtype=np.int64)), None

    def stored(self, arrays) -> int:
        """The number of stored coordinates (formats.level, optional), not the slots."""
        return int(arrays["spos"][-1])

    # -- reading (formats.level) -------------------------------------------
    def children(self, lo, hi, size, arrays):
        """The slots of parents lo..hi-1: hpos[lo] .. hpos[hi] - 1."""
        return Load(arrays["hpos"], lo), Load(arrays["hpos"], hi)

    def read(self, lo, hi, size, arrays) -> Hashed:
        """Parent lo's listed slots hsrt[spos[lo] .. spos[lo+1]-1] in order, in its
        table hpos[lo] .. hpos[lo+1]-1."""
        spos, hpos = arrays["spos"], arrays["hpos"]
        table = Load(hpos, lo)
        return Hashed(arrays["hcrd"], arrays["hsrt"], Load(spos, lo),
                      Load(spos, imp.add(lo, ONE)), table,
                      Bin("-", Load(hpos, imp.add(lo, ONE)), table))

    # -- the growable table (the write path, and the hash workspace's) ------
    def table(self, s, first, zero) -> imp.Stmt:
        """An empty table of `first` slots (a power of two): keys, vals, the
        touched keys in order of touch (list) and their slots (slot)."""
        return seq(Decl(s.n, "index", ZERO), Decl(s.cap, "index", first),
                   Decl(s.h, "index", ZERO), Decl(s.t, "index", ZERO),
                   Alloc(s.list, "index", first, None), Alloc(s.keys, "index", first, EMPTY),
                   Alloc(s.vals, "value", first, None), Alloc(s.slot, "index", first, None),
                   Alloc(s.tmp, "value", ONE, zero))

    def probe(self, s, key, until) -> imp.Stmt:
        """s.h := the slot of `key`: its hash, then linear steps while `until` (a
        condition on keys[s.h]) does not hold."""
        mask = Bin("-", Var(s.cap), ONE)
        return seq(Assign(s.h, Bin("hash", key, mask)),
                   While(not_(until(Load(s.keys, Var(s.h)))),
                         Assign(s.h, Bin("&", imp.add(Var(s.h), ONE), mask))))

    def place(self, s, key, zero) -> imp.Stmt:
        """s.h := the slot of `key`, inserted (value zero, listed) on its first
        touch; the table doubles first when it would pass half full."""
        h, n = Var(s.h), Var(s.n)
        insert = seq(Store(s.keys, h, key), Store(s.vals, h, zero),
                     Reserve(s.list, "index", imp.add(n, ONE)),
                     Reserve(s.slot, "index", imp.add(n, ONE)),
                     Store(s.list, n, key), Store(s.slot, n, h), incr(s.n))
        return seq(If(lt(Var(s.cap), imp.mul(Const(2), imp.add(n, ONE))), self.rehash(s)),
                   self.probe(s, key, lambda at: or_(eq(at, EMPTY), eq(at, key))),
                   If(eq(Load(s.keys, h), EMPTY), insert))

    def rehash(self, s) -> imp.Stmt:
        """Double the table: save the values by touch order, clear, reinsert."""
        t, n, h, cap = Var(s.t), Var(s.n), Var(s.h), Var(s.cap)
        key = Load(s.list, t)

        def each(limit, body):
            return seq(Assign(s.t, ZERO), While(lt(t, limit), seq(body, incr(s.t))))
        return seq(Reserve(s.tmp, "value", n),
                   each(n, Store(s.tmp, t, Load(s.vals, Load(s.slot, t)))),
                   Assign(s.cap, imp.mul(Const(2), cap)),
                   Reserve(s.keys, "index", cap), Reserve(s.vals, "value", cap),
                   each(cap, Store(s.keys, t, EMPTY)),
                   each(n, seq(self.probe(s, key, lambda at: eq(at, EMPTY)),
                               Store(s.keys, h, key), Store(s.vals, h, Load(s.tmp, t)),
                               Store(s.slot, t, h))))

    def clear(self, s) -> imp.Stmt:
        """Empty the table again, in O(touched): each touched slot's key, and n."""
        t = Var(s.t)
        return seq(Assign(s.t, ZERO), While(lt(t, Var(s.n)), seq(
            Store(s.keys, Load(s.slot, t), EMPTY), incr(s.t))), Assign(s.n, ZERO))

    # -- writing by insertion (formats.level) ------------------------------
    def begin(self, s, cells, vals, zero, first) -> imp.Stmt:
        """Before the first insert: an empty table of `first` slots; nothing of
        the `cells` positions is allocated."""
        return self.table(s, first, zero)

    def write_at(self, s, at, vals, zero):
        """(statement, array, position): cell `at` takes its value at the table
        slot s.h of s.vals, placed first."""
        return self.place(s, at, zero), s.vals, Var(s.h)

    def end(self, arrays, s, var, r, count, parents, size, vals, zero) -> imp.Stmt:
        """After the last insert: the touched cells, sorted, are listed in s.slot
        (the table grows no more) while spos counts each parent's, the parent p
        of cell t kept as t passes (p·size <= t < (p + 1)·size, no division: the
        sorted cells' parents do not decrease); hpos sizes their tables; then
        the listed cells move (t − p·size, the value at their slot) into their
        parent's table in that order, hsrt listing the slots."""
        spos, t = arrays["spos"], Var(s.t)
        at = imp.add(Var(s.p), ONE)
        return seq(Decl(count, "index", ZERO), Decl(s.w, "index", ZERO),
                   Decl(s.g, "index", ZERO), Decl(s.p, "index", ZERO), Decl(s.e, "index", size),
                   Alloc(spos, "index", imp.add(parents, ONE), ZERO),
                   Alloc(arrays["hpos"], "index", imp.add(parents, ONE), ZERO),
                   ForSorted(var, s.list, Var(s.n), imp.mul(parents, size), None, seq(
                       self._parent(s, Var(var), size), Store(spos, at, imp.add(Load(spos, at), ONE)),
                       Store(s.slot, Var(count), Var(var)), incr(count))),
                   self._pointers(arrays, s, r, parents),
                   Alloc(arrays["hcrd"], "index", Load(arrays["hpos"], parents), EMPTY),
                   Alloc(vals, "value", Load(arrays["hpos"], parents), zero),
                   Alloc(arrays["hsrt"], "index", imp.max_(Var(s.n), ONE), None),
                   Assign(count, ZERO), Assign(s.p, ZERO), Assign(s.e, size),
                   Assign(s.t, ZERO), While(lt(t, Var(s.n)), seq(Block(seq(
                       Decl(var, "index", Load(s.slot, t)), self._parent(s, Var(var), size),
                       self._move(arrays, s, Var(var), count, size, vals))), incr(s.t))))

    def _parent(self, s, key, size) -> imp.Stmt:
        """s.p := the parent of `key` (s.e = (s.p + 1)·size), stepping up from the
        previous key's (keys ascending)."""
        return While(imp.le(Var(s.e), key), seq(incr(s.p), Assign(s.e, imp.add(Var(s.e), size))))

    def _pointers(self, arrays, s, r, parents) -> imp.Stmt:
        """hpos from spos's counts (each table a power of two, more than twice its
        count), spos made their running sums."""
        hpos, spos = arrays["hpos"], arrays["spos"]
        rv, w = Var(r), Var(s.w)
        nxt = imp.add(rv, ONE)
        grow = seq(Assign(s.w, ONE), While(lt(w, imp.mul(Const(2), Load(spos, nxt))),
                                           Assign(s.w, imp.mul(Const(2), w))))
        return seq(Decl(r, "index", ZERO), While(lt(rv, parents), seq(
            grow, Store(hpos, nxt, imp.add(Load(hpos, rv), w)),
            Store(spos, nxt, imp.add(Load(spos, nxt), Load(spos, rv))), incr(r))))

    def _move(self, arrays, s, t, count, size, vals) -> imp.Stmt:
        hpos, hcrd = arrays["hpos"], arrays["hcrd"]
        parent = Var(s.p)
        base = Load(hpos, parent)
        mask = Bin("-", Bin("-", Load(hpos, imp.add(parent, ONE)), base), ONE)
        c, g = Bin("-", t, Bin("-", Var(s.e), size)), Var(s.g)
        return seq(self.probe(s, t, lambda at: eq(at, t)),
                   Assign(s.g, imp.add(base, Bin("hash", c, mask))),
                   While(not_(eq(Load(hcrd, g), EMPTY)), Assign(s.g, imp.add(base, Bin(
                       "&", imp.add(Bin("-", g, base), ONE), mask)))),
                   Store(hcrd, g, c), Store(vals, g, Load(s.vals, Var(s.h))),
                   Store(arrays["hsrt"], Var(count), g), incr(count))

    def describe(self, k, axis, arrays, parents, size=None, count=None):
        """The header text of level k over `axis` (of dimension `size`, C text;
        default dim_<axis>) below `parents` positions, and its number of
        positions (hpos[parents], the slots); `count`, an output's, counts the stored."""
        hpos, hcrd, spos, hsrt = (arrays[r] for r in self.roles)
        size = size or f"dim_{axis}"
        stored = count or f"{spos}[{parents}]"
        return (f"level {k} (hash, {axis}): {hpos} and {spos} have {parents} + 1 entries, "
                f"nondecreasing from 0; parent position p's table is the slots "
                f"{hpos}[p] .. {hpos}[p+1]-1 (a power of two, more slots than stored "
                f"coordinates); {hcrd} has one entry per slot, the {axis} coordinate "
                f"stored there (in [0, {size})) or -1 for an empty slot, coordinate c "
                f"at the first slot from {hpos}[p] + ep_hash(c, size - 1) stepping by one "
                f"around the table (ep_hash(k, m) = ((uint64)k · 0x9E3779B97F4A7C15 >> 32) "
                f"& m); {hsrt}[{spos}[p] .. {spos}[p+1]-1] are p's stored slots in "
                f"increasing coordinate order; {hsrt} has {stored} entries; a value "
                f"sits at its slot; {hpos}[{parents}] positions."), f"{hpos}[{parents}]"

    def assemble(self, take, k, parents, size, count):
        """hpos, spos (parents + 1 entries), hsrt (count entries) and hcrd (one
        per slot); the slots are the positions. take(key, length) reads the
        output array out_<role><k>."""
        hpos = take(f"hpos{k}", parents + 1)
        slots = int(hpos[-1])
        return {"hpos": hpos, "hcrd": take(f"hcrd{k}", slots),
                "spos": take(f"spos{k}", parents + 1), "hsrt": take(f"hsrt{k}", count)}, slots


def _place(hpos, parent_ids, coord, slots):
    """hcrd with each entry inserted by linear probing in its parent's table (in
    rounds: every pending entry tries its next slot, the first per free slot
    wins), and each entry's slot."""
    hcrd = np.full(slots, -1, dtype=np.int64)
    at = np.zeros(len(coord), dtype=np.int64)
    base = hpos[parent_ids]
    mask = hpos[parent_ids + 1] - base - 1
    home = slot_hash(coord, mask)
    pending, step = np.arange(len(coord)), np.zeros(len(coord), dtype=np.int64)
    while pending.size:
        s = base[pending] + ((home[pending] + step[pending]) & mask[pending])
        free = hcrd[s] == -1
        taken, first = np.unique(s[free], return_index=True)
        won = pending[free][first]
        hcrd[taken], at[won] = coord[won], taken
        left = np.ones(len(pending), dtype=bool)
        left[np.flatnonzero(free)[first]] = False
        pending = pending[left]
        step[pending] += 1
    return hcrd, at


def _check_tables(a, n_parents, size, where):
    """The tables' sizes, the listed slots' places and order, and no slot
    stored but unlisted (formats.level check)."""
    hpos, hcrd, spos, hsrt = (a[r] for r in ("hpos", "hcrd", "spos", "hsrt"))
    caps = np.diff(hpos)
    bad = np.flatnonzero((caps < 1) | (caps & (caps - 1) != 0) | (caps <= np.diff(spos)))
    if bad.size:
        p = int(bad[0])
        raise InputError(f"{where}: parent position {p}'s table has {caps[p]} slots; it "
                         f"must be a power of two larger than its {spos[p + 1] - spos[p]} "
                         f"listed coordinates")
    owner = np.repeat(np.arange(n_parents), np.diff(spos))
    if hsrt.size and np.any((hsrt < hpos[owner]) | (hsrt >= hpos[owner + 1])):
        q = int(np.flatnonzero((hsrt < hpos[owner]) | (hsrt >= hpos[owner + 1]))[0])
        raise InputError(f"{where}: hsrt[{q}] = {hsrt[q]} is not a slot of parent position "
                         f"{owner[q]}'s table {hpos[owner[q]]} .. {hpos[owner[q] + 1] - 1}")
    _check_keys(hpos, hcrd, spos, hsrt, owner, size, where)


def _check_keys(hpos, hcrd, spos, hsrt, owner, size, where):
    """Listed coordinates in range, strictly increasing per parent, every other
    slot empty, each reachable by probing from its hash."""
    empty = hcrd == -1
    bad = np.flatnonzero(~empty & ((hcrd < 0) | (hcrd >= size)))
    if bad.size:
        q = int(bad[0])
        raise InputError(f"{where}: hcrd[{q}] = {hcrd[q]} is neither -1 (empty) nor a "
                         f"coordinate in [0, {size})")
    c = hcrd[hsrt]
    down = np.flatnonzero((c[1:] <= c[:-1]) & (owner[1:] == owner[:-1]))
    if down.size or (c < 0).any():
        q = int(down[0]) + 1 if down.size else int(np.flatnonzero(c < 0)[0])
        raise InputError(f"{where}: the listed coordinates must strictly increase within "
                         f"a parent, each at a stored slot, but hsrt[{q}] = {hsrt[q]} holds "
                         f"{c[q]}")
    if int((~empty).sum()) != len(hsrt):
        raise InputError(f"{where}: hcrd stores {int((~empty).sum())} coordinates but hsrt "
                         f"lists {len(hsrt)}; every stored slot must be listed once")
    _check_reach(hpos, empty, hsrt, owner, c, where)


def _check_reach(hpos, empty, hsrt, owner, c, where):
    """No empty slot between a coordinate's hash slot and its slot (cyclically)."""
    base, cap = hpos[owner], hpos[owner + 1] - hpos[owner]
    home, at = slot_hash(c, cap - 1), hsrt - base
    gaps = np.concatenate([[0], np.cumsum(empty)])

    def empties(lo, hi):            # empty slots in base + [lo, hi)
        return gaps[base + hi] - gaps[base + lo]
    wrap = home > at
    n = np.where(wrap, empties(home, cap) + empties(np.zeros_like(at), at), empties(home, at))
    bad = np.flatnonzero(n > 0)
    if bad.size:
        q = int(bad[0])
        raise InputError(f"{where}: coordinate {c[q]} at slot {hsrt[q]} is not where a "
                         f"probe finds it: an empty slot lies between its hash slot "
                         f"{base[q] + home[q]} and it")

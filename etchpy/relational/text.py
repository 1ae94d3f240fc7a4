"""SQL LIKE over the string values of a dictionary coding (Keys.like).

    TextIndex(values)        what LIKE searches, made once from the distinct
                             values (it depends on nothing else)
    like(values, index, p)   the codes whose value matches pattern p

A TextIndex holds the values as fixed-width ASCII bytes (each padded with at
least one NUL, so no match spans two values) and a word index: the distinct
words (runs of characters other than ASCII whitespace and NUL) and, for each,
the codes of the values that hold it. A literal without whitespace lies inside
one word, so the values that contain it are the values holding a word that
contains it: the literal is looked for among the distinct words only, not in
every value. Any other literal is searched for in the bytes, one search per
matching value. Values that are not ASCII (or hold a NUL) are searched by numpy.
"""
from __future__ import annotations

import re

import numpy as np

SEPARATORS = b" \t\n\r\x0b\x0c\x00"


class TextIndex:
    """The search structures of one array of distinct str values (see above)."""

    def __init__(self, values: np.ndarray):
        self.size = len(values)
        self.width = values.dtype.itemsize // 4 + 1
        self.buf = None
        try:
            raw = values.astype(f"S{self.width}")
        except UnicodeEncodeError:
            return
        grid = raw.view(np.uint8).reshape(self.size, self.width)
        if not ((grid != 0).sum(axis=1) == np.char.str_len(values)).all():
            return                                    # a NUL inside a value
        self.buf = raw.tobytes()
        separator = np.zeros(256, dtype=bool)
        separator[np.frombuffer(SEPARATORS, dtype=np.uint8)] = True
        word = ~separator[grid]
        starts = word.copy()
        starts[:, 1:] &= ~word[:, :-1]
        owner = np.repeat(np.arange(self.size), starts.sum(axis=1))
        words = np.array(self.buf.replace(b"\x00", b" ").split(),
                         dtype="S")
        self.vocab = np.unique(words)           # hashed, then each word searched
        which = np.searchsorted(self.vocab, words)
        small = np.uint16 if len(self.vocab) <= 2**16 else np.int64   # (a radix sort)
        order = np.argsort(which.astype(small), kind="stable")
        self.owners = owner[order]
        self.first = np.searchsorted(which[order], np.arange(len(self.vocab) + 1))

    def containing(self, piece: str, values: np.ndarray) -> np.ndarray:
        """The sorted codes whose value contains `piece` (all for an empty one)."""
        if not piece:
            return np.arange(self.size)
        if self.buf is None:
            return np.flatnonzero(np.char.find(values, piece) >= 0)
        if not piece.isascii():
            return np.zeros(0, dtype=np.int64)
        lit = piece.encode("ascii")
        if not any(c in SEPARATORS for c in lit):
            hits = np.flatnonzero(np.char.find(self.vocab, lit) >= 0)
            hold = np.zeros(self.size, dtype=bool)       # (a value may hold a word twice)
            for w in hits:
                hold[self.owners[self.first[w]:self.first[w + 1]]] = True
            return np.flatnonzero(hold)
        rows, at = [], self.buf.find(lit)
        while at >= 0:              # one search per matching value, then the next
            rows.append(at // self.width)
            at = self.buf.find(lit, (at // self.width + 1) * self.width)
        return np.asarray(rows, dtype=np.int64)


def like(values: np.ndarray, index: TextIndex, pattern: str) -> np.ndarray:
    """A bool per code: its value matches SQL's LIKE `pattern` (`%` any run of
    characters, `_` one character, anything else itself). Only the codes
    holding every literal piece of the pattern (each found through `index`)
    are matched against the whole pattern: a pattern without `_` by a greedy
    search of its pieces left to right on those values, in numpy (the
    leftmost match of each piece after the previous one is the one that
    leaves most room for the rest), else by a regular expression."""
    parts = pattern.split("%")
    pieces = sorted({p for part in parts for p in part.split("_") if p}, key=len,
                    reverse=True)
    hold = np.zeros(len(values), dtype=bool)
    rows = index.containing(pieces[0] if pieces else "", values)
    for piece in pieces[1:]:        # the codes holding every piece
        rows = rows[np.isin(rows, index.containing(piece, values), assume_unique=True)] \
            if len(rows) else rows
    if parts == ["", pieces[0] if pieces else "", ""] and len(pieces) <= 1:
        hold[rows] = True
    elif "_" not in pattern:
        hold[rows] = _greedy(values[rows], parts)
    else:
        rx = re.compile(".*".join(re.escape(p).replace("_", ".") for p in parts), re.DOTALL)
        hold[rows] = [rx.fullmatch(v) is not None for v in values[rows].tolist()]
    return hold


def _greedy(vals: np.ndarray, parts: list) -> np.ndarray:
    """`vals` match the `%`-separated literal `parts` (no `_`): the first part a
    prefix, the last a suffix, the others found in turn, each leftmost after
    the one before."""
    if len(parts) == 1:
        return vals == parts[0]
    ok = np.strings.startswith(vals, parts[0])
    pos = np.full(len(vals), len(parts[0]), dtype=np.int64)
    for piece in parts[1:-1]:
        if piece:
            at = np.strings.find(vals, piece, pos)
            ok &= at >= 0
            pos = np.where(at >= 0, at + len(piece), pos)
    last = parts[-1]
    return ok & np.strings.endswith(vals, last) & \
        (np.strings.str_len(vals) - len(last) >= pos)

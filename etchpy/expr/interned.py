"""Hash-consed expression nodes: the syntax (`A[i, j]`, `a * b`, `a + b`, `a - b`,
`-a`, `a ** n`, ep.sum, ep.map, a Python number as a literal, ep.indices) gives one
node per operation and operands, so that an expression rebuilt in the caller's loop
is the object built before, and what is keyed by an expression finds it by identity
(ep.compile's last arguments: runtime.statements.last_args), its hash kept on it.

    NODES.get(key), NODES.made(key, make, *args), NODES.keep(key, node)
    ids_key(tag, head, items)      (tag, id(head), id of each item): an access's key
    literal_key(value, negation)   a literal's key, None for a literal not kept

A node is kept under a tag of its operation ("*", "+", "-", "Σ", Access, "map") and
its operands' ids; it holds those operands, so while it is kept no other object can
have their ids, and a key found names the very operands the node was built from.
Nodes are immutable, so the kept node is the one a new build would equal, and a
lookup before any check is sound: the checks passed when it was made. An index is
kept by its name; a map also by its function's name and its argument's literal key.
A literal is kept by its type, value and, for a zero, its sign (1, 1.0, True; 0.0 and
-0.0 are apart; a NaN is found only as the same float object), int, float and bool
only. Nodes built otherwise (their classes called, unpickled, rewritten by the
optimizer or parsed from text) are not kept, and compare structurally as before.
Bounded: the table starts over when it holds `Limits.interned_nodes` (0: nothing
kept, every node new). proofs_notes/interned_nodes.md.
"""
from __future__ import annotations

from ..settings import LIMITS


class Nodes:
    """The table of kept nodes: `get` (a dict's), `made`, `keep` (starts over when
    full), `resize`."""

    __slots__ = ("size", "get", "_d")

    def __init__(self, size: int):
        self.size, self._d = size, {}
        self.get = self._d.get

    def keep(self, key, node):
        """node, kept under key (unless the table's size is 0)."""
        d = self._d
        if len(d) >= self.size:
            if not self.size:
                return node
            d.clear()
        d[key] = node
        return node

    def made(self, key, make, *args):
        """The node kept under key, else make(*args), kept under it."""
        if (node := self.get(key)) is None:
            node = self.keep(key, make(*args))
        return node

    def resize(self, size: int) -> None:
        """Keep at most `size` nodes from now on (0: none), starting over."""
        self.size = size
        self._d.clear()

    def clear(self) -> None:
        self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


NODES = Nodes(LIMITS.interned_nodes)


def ids_key(tag, head, items: tuple) -> tuple:
    """(tag, id(head), the id of each of items): orders 1 and 2 spelled out (the key
    is most of an access's cost)."""
    n = len(items)
    return ((tag, id(head), id(items[0])) if n == 1 else
            (tag, id(head), id(items[0]), id(items[1])) if n == 2 else
            (tag, id(head), *map(id, items)))


def literal_key(value, negation: bool):
    """The key of a literal of `value` (its type, value, and for a zero its text, which
    tells -0.0 from 0.0), or None for a value of another type than int, float, bool."""
    t = type(value)
    if t is float or t is int or t is bool:
        return ("lit", t, value if value else repr(value), negation)
    return None


def kept_hash(made):
    """A node's __hash__ from `made` (its fields'), worked out once: nodes are
    immutable, and the planner hashes the same bodies many times (its memo keys)."""
    def __hash__(self):
        if (h := getattr(self, "_hash", None)) is None:     # (no exception raised)
            object.__setattr__(self, "_hash", h := made(self))
        return h
    return __hash__

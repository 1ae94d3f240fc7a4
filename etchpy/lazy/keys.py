"""Keys of lazy nodes, made once as each node is built (etchpy.lazy.array).

Every node carries
  - `skey`, its structure, a small int from one intern table: equal for two
    nodes of the same operation, parameter and dtype over operands of equal
    skeys where the two operands share the same leaves (a leaf's skey is its
    kind: shape, dtype, dense or sparse). Two programs with equal skeys are the
    same tree over their own leaves numbered in order of first use, so one
    recorded run replays for both (etchpy.lazy.replay);
  - `lkeys`, the keys of those leaves in that order (a leaf's key is an int
    standing for the wrapped array object: minus its id, never an interned int);
  - `key`, its identity: (skey, lkeys), a leaf's or a scalar's int. Two nodes
    built separately from the same operations on the same arrays have one key,
    so a program's common subexpressions are one node.
etchpy.lazy.nodes makes them as it builds a node (its leaf, pair and unary
builders). Ints and tuples of ints hash and compare in C, so the maps keyed by
node (the evaluator's memo, use counts, slots) and the replay lookup cost a dict
probe each, never a walk of the program. The table keeps at most
LIMITS.lazy_interned entries: when full it is emptied and numbering goes on
(ints are never reused), so a node built after that is never merged with an
equal one built before: the same results, computed twice.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..expr.walk import float_bits
from ..settings import LIMITS


_TABLE: dict = {}
_NEXT = itertools.count(1)
# tables holding ints of this one (etchpy.lazy.operators' patterns): emptied with it
DERIVED: list = []
# how many nodes Python built (the regression tests count the work of a call:
# built()); COUNTS, the counts of other builders (the C operators': lazy.c_nodes)
BUILT = [0]
COUNTS: list = []


# the int of a tuple already in the table, else None (`known(t) or intern(t)`
# saves a call on the common path; the table is emptied in place, never replaced)
known = _TABLE.get


def built() -> int:
    """How many nodes were built, by Python and by the C operators."""
    return BUILT[0] + sum(count() for count in COUNTS)


def start_over() -> None:
    """Empty the table and the tables derived from it (DERIVED), as a full table
    does: nodes built before are never merged with nodes built after (the same
    results, computed twice); numbering goes on.

    >>> from etchpy.lazy import keys
    >>> keys.start_over(); keys.known(("example",)) is None
    True
    """
    _TABLE.clear()
    for table in DERIVED:
        table.clear()


def intern(t: tuple) -> int:
    """The int standing for the hashable tuple t (the same int while t stays in
    the table)."""
    k = _TABLE.get(t)
    if k is None:
        if len(_TABLE) >= LIMITS.lazy_interned:
            start_over()
        k = _TABLE[t] = next(_NEXT)
    return k


def scalar_key(x):
    """A scalar operand as a key: its type and, for a float, its bit pattern, so
    that scalars == calls equal but numpy tells apart (0.0 and -0.0: 1/x
    differs) are distinct keys, and one NaN is one key (NaN != NaN)."""
    return (type(x), x.tobytes() if isinstance(x, np.floating) else float_bits(x))


def merge(la: tuple, lb: tuple, ka: tuple, kb: tuple):
    """The leaves of a node whose operands' leaves are la and lb (their keys ka
    and kb, in order of first use): (leaves, their keys, the sharing), the
    sharing being None when the operands share no leaf, else the position in la
    of each of lb's leaves (-1: new). The keys within ka (within kb) are
    distinct; a program's few leaves are found by a scan, many by a dict."""
    if not ka:
        return lb, kb, None
    if not kb:
        return la, ka, None
    if len(kb) == 1:
        if kb[0] in ka:
            return la, ka, (ka.index(kb[0]),)
        return la + lb, ka + kb, None
    if ka == kb:                    # the same leaves in the same order (`e / e.sum()`)
        return la, ka, _RANGES[len(ka)] if len(ka) < 16 else tuple(range(len(ka)))
    if len(ka) <= 8:                # one pass, no comprehension (each is a call)
        share, nl, nk = [], [], []
        for leaf, k in zip(lb, kb):
            if k in ka:
                share.append(ka.index(k))
            else:
                share.append(-1)
                nl.append(leaf)
                nk.append(k)
        if not nk:
            return la, ka, tuple(share)
        if len(nk) == len(kb):
            return la + lb, ka + kb, None
        return la + tuple(nl), ka + tuple(nk), tuple(share)
    pos = {k: i for i, k in enumerate(ka)}
    share = tuple([pos.get(k, -1) for k in kb])
    if max(share) < 0:
        return la + lb, ka + kb, None
    if min(share) >= 0:
        return la, ka, share
    new = [i for i, s in enumerate(share) if s < 0]
    return (la + tuple([lb[i] for i in new]), ka + tuple([kb[i] for i in new]), share)


_RANGES = tuple(tuple(range(n)) for n in range(16))

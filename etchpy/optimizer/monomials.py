"""Monomials keyed up to the renaming of their bound indices: a canonical
labelling by colour refinement, then the smallest key over the permutations of
tied indices (used by the canonical forms of optimizer.ra)."""
from __future__ import annotations

import itertools


def monomial_key(bound: frozenset, factors: tuple, max_perms: int = 5040) -> tuple:
    """A key for (bound, factors) invariant under renaming of the bound indices."""
    bound = sorted(bound)
    colour = {b: () for b in bound}
    for _ in range(3):
        colour = {b: _signature(b, factors, colour) for b in bound}
    groups: dict = {}
    for b in bound:
        groups.setdefault(colour[b], []).append(b)
    ordered = [groups[c] for c in sorted(groups, key=repr)]
    best, tried = None, 0
    for perm in itertools.product(*(itertools.permutations(g) for g in ordered)):
        names = [b for grp in perm for b in grp]
        key = _labelled(factors, {b: f"#{k:03d}" for k, b in enumerate(names)})
        if best is None or key < best:
            best = key
        tried += 1
        if tried >= max_perms:
            break
    if best is None:
        best = _labelled(factors, {})
    return (len(bound), best)


def _signature(b, factors, colour):
    sig = []
    for t, ix in factors:
        if b in ix:
            ctx = tuple(repr(colour[x]) if x in colour else "f:" + x for x in ix)
            sig.append((t, ix.index(b), ctx))
    return tuple(sorted(sig))


def _labelled(factors, label) -> tuple:
    return tuple(sorted((t, tuple(label.get(x, "f:" + x) for x in ix)) for t, ix in factors))

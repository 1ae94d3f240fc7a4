"""Diagonals: `A[i, i]`, an access repeating an index, is written with a fresh
index per repeat and the identity δ between them (proofs_notes has its note)."""
from __future__ import annotations

from .nodes import IDENTITY_PREFIX, Access, Expr, IdentityVar, Index, Mul, TensorVar
from .nodes import sum as sum_over


def identity_var(source: TensorVar, m0: int, m1: int) -> IdentityVar:
    return IdentityVar(f"{IDENTITY_PREFIX}{source.name}_{m0}_{m1}", 2, "dense",
                       source=source.name, modes=(m0, m1))


def diagonal(t: TensorVar, idx: tuple["Index", ...]) -> "Expr":
    """t[idx] with repeated indices: Σ over a fresh i' per repeat of i, of
    t[idx with each repeat renamed] times δ[i, i'] (the two in the order t stores
    their modes). δ stores nothing: it reads as the equality of its indices.
    TensorVar.__getitem__ calls it for an access that repeats an index:

        >>> A[i, i]            # Σ_i_1 A[i,i_1]·δ[i,i_1], δ the identity eq_A_0_1
    """
    taken = {ix.name for ix in idx}
    first: dict[Index, int] = {}
    renamed = list(idx)
    fresh: list[Index] = []
    deltas: list[Access] = []
    level = {m: k for k, m in enumerate(t.format.mode_order)}
    for m, ix in enumerate(idx):
        if ix not in first:
            first[ix] = m
            continue
        name = f"{ix.name}_{m}"
        while name in taken:
            name += "_"
        taken.add(name)
        new = Index(name)
        renamed[m], m0 = new, first[ix]
        fresh.append(new)
        pair = (ix, new) if level[m0] < level[m] else (new, ix)
        deltas.append(Access(identity_var(t, m0, m), pair))
    body: Expr = Access(t, tuple(renamed))
    for d in deltas:
        body = Mul(body, d)
    return sum_over(tuple(fresh), body)


TensorVar.diagonal = staticmethod(diagonal)

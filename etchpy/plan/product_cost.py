"""The work of a matrix product as the one cost model prices it (plan.cost), for
the front ends that choose between operands before any kernel exists: the
approximation search weighs a pruned csr weight against its dense original and
its truncated SVD with it (lazy.approx_table).

    product_cost(rows, inner, cols, csr, tuning)
        Y[i,k] = Σ_j A[i,j]·B[j,k], A rows×inner, B inner×cols; `csr` maps "A"
        or "B" to the entries of that operand stored csr (the other dense).
        The least plan.cost.nest_cost over the loop orders that walk each csr
        operand in its storage order; a product of two dense operands runs as
        one BLAS call under tuning.blas, so its loops' cost is divided by
        tuning.blas_gain (what a BLAS multiply-add saves over the loops' own,
        measured by `python -m bench.sparse_weight`).
"""
from __future__ import annotations

from itertools import permutations

from ..expr.nodes import indices, tensor
from .cost import nest_cost
from .stats import Stats


def product_cost(rows: int, inner: int, cols: int, csr: dict, tuning) -> float:
    """Model work of A·B (module docstring). `csr` names at most one operand."""
    i, j, k = indices("i j k")
    a = tensor("A", 2, "csr" if "A" in csr else "dense")
    b = tensor("B", 2, "csr" if "B" in csr else "dense")
    body = a[i, j] * b[j, k]
    stats = Stats({"i": rows, "j": inner, "k": cols}, dict(csr), tuning=tuning)
    best = min(nest_cost(body, order, stats, out=("i", "k"))
               for order in permutations(("i", "j", "k")) if _walks(order, csr))
    if not csr and tuning.blas:
        return best / tuning.blas_gain
    return best


def _walks(order: tuple, csr: dict) -> bool:
    """Does the loop order reach each csr operand's row before its column?"""
    held = {"A": ("i", "j"), "B": ("j", "k")}
    return all(order.index(held[t][0]) < order.index(held[t][1]) for t in csr)

"""Readable text of a lazy program (explain's lines, a lazy array's repr)."""
from __future__ import annotations

import numpy as np

from .nodes import RUN, Binary, Const, LazyArray, Leaf, Map, MatMul, Pow, Sum, Transpose


def show(n: LazyArray, names: dict | None = None) -> str:
    """Readable text of a program, e.g. `sum((X0 + -1·(X1 @ X2.T)) ** 2)`; `names`
    maps a leaf's key to its name (default: its shape)."""
    names = names or {}
    match n:
        case Leaf():
            return names.get(n.key, f"array{n.shape}")
        case Const(value):
            return repr(value.item() if isinstance(value, np.generic) else value)
        case Binary(a, b):
            return f"({show(a, names)} {n.symbol} {show(b, names)})"
        case MatMul(a, b):
            return f"({show(a, names)} @ {show(b, names)})"
        case Transpose(a):
            return f"{show(a, names)}.T"
        case Pow(a, p):
            return f"{show(a, names)} ** {p}"
        case Sum(a, axes, keep):
            ax = "" if len(axes) == a.ndim else f"axis={axes[0] if len(axes) == 1 else axes}"
            kd = ", keepdims=True" if keep else ""
            return f"sum({show(a, names)}{', ' if ax else ''}{ax}{kd})"
        case Map(a, fn, arg):
            return f"{fn}({show(a, names)}{'' if arg is None else f', {arg!r}'})"
    return f"{type(n).__name__.lower()}({', '.join(show(a, names) for a in n.args)})"


RUN["show"] = show

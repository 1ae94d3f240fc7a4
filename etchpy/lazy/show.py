"""Readable text of a lazy program (its nodes duck-typed: op, args, param, shape,
ndim, key), for reprs, explain() and error messages."""
from __future__ import annotations

import numpy as np


def show(node, names: dict | None = None) -> str:
    """Readable text of a program, e.g. `sum((X0 + -1·(X1 @ X2.T)) ** 2)`; `names`
    maps a leaf's key to its name (default: its shape)."""
    names = names or {}
    a = node.args
    match node.op:
        case "leaf":
            return names.get(node.key, f"array{node.shape}")
        case "const":
            return repr(node.param.item() if isinstance(node.param, np.generic)
                        else node.param)
        case "add" | "mul" | "div" | "matmul":
            sym = {"add": "+", "mul": "*", "div": "/", "matmul": "@"}[node.op]
            return f"({show(a[0], names)} {sym} {show(a[1], names)})"
        case "T":
            return f"{show(a[0], names)}.T"
        case "pow":
            return f"{show(a[0], names)} ** {node.param}"
        case "sum":
            axes, keep = node.param
            ax = "" if len(axes) == a[0].ndim else f"axis={axes[0] if len(axes) == 1 else axes}"
            kd = ", keepdims=True" if keep else ""
            return f"sum({show(a[0], names)}{', ' if ax else ''}{ax}{kd})"
        case "map":
            fn, arg = node.param
            return f"{fn}({show(a[0], names)}{'' if arg is None else f', {arg!r}'})"
    return node.op

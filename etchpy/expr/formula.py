"""Boolean formulas of comparisons: the tests of a row predicate (expr.compare).

A formula is a nested tuple (hashable, so a CompareVar holding one is a cache key):

    ("cmp", op, a, b)     a op b, op one of < <= > >=
    ("and", f, g)  ("or", f, g)  ("not", f)
    ("true",)             holds at every entry (TRUE: a row of columns multiplied,
                          no test: expr.shared)

and an operand is ("col", k), the value of the predicate's k-th column at the
entry; ("idx", p), the coordinate of the predicate's p-th index (("idx",): of
a one-index predicate's index); ("scaled", ("col", k), c), that value times the
number c (ordinary arithmetic, written in the expression: `0.5 * B[i]`);
("par", name), a parameter passed at call time; or ("num", x), a number written
in the expression. A column operand is always on the left of a cmp (a bound on the
right). Each ("par") and ("num") operand is one *slot*, numbered in the order
`slots` walks the formula: the value a kernel reads for it at call time.
"""
from __future__ import annotations

import hashlib

import numpy as np

OPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
TRUE = ("true",)
NUMPY = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def walk(f):
    """Every node of f, outermost first, left to right."""
    yield f
    if f[0] in ("and", "or"):
        yield from walk(f[1])
        yield from walk(f[2])
    elif f[0] == "not":
        yield from walk(f[1])


def slots(f) -> tuple:
    """((op, operand), ...): each bound operand of f, in slot order, with the
    operator it is compared by (the column on the left)."""
    return tuple((n[1], n[3]) for n in walk(f) if n[0] == "cmp" and n[3][0] in ("par", "num"))


def params(f) -> tuple[str, ...]:
    """The names of the parameters f reads, once each, in slot order."""
    return tuple(dict.fromkeys(b[1] for _, b in slots(f) if b[0] == "par"))


def negated(f):
    """not f, with a not of a comparison folded into its negated operator."""
    if f[0] == "cmp":
        return ("cmp", NEGATED[f[1]], f[2], f[3])
    if f[0] == "not":
        return f[1]
    return ("not", f)


def evaluate(f, column, index, slot_values) -> np.ndarray:
    """f at every entry: column(k) the k-th column's values there, index(p) the
    coordinates of index p (arrays of one length), slot_values[s] the s-th
    slot's number."""
    counter = iter(range(len(slots(f))))

    def operand(x):
        match x[0]:
            case "col":
                return column(x[1])
            case "idx":
                return index(x[1] if len(x) > 1 else 0)
            case "scaled":
                return x[2] * operand(x[1])
        return slot_values[next(counter)]

    def ev(n):
        match n[0]:
            case "cmp":
                return NUMPY[n[1]](operand(n[2]), operand(n[3]))
            case "and":
                return ev(n[1]) & ev(n[2])
            case "or":
                return ev(n[1]) | ev(n[2])
            case "true":
                return np.True_
        return ~ev(n[1])
    return np.asarray(ev(f), dtype=bool)


def remapped(f, cols: dict, idx: dict):
    """f with operand ("col", k) renamed ("col", cols[k]) and ("idx", p)
    ("idx", idx[p]) (("idx",) is ("idx", 0))."""
    def op(x):
        if x[0] == "col":
            return ("col", cols[x[1]])
        if x[0] == "idx":
            return ("idx", idx[x[1] if len(x) > 1 else 0])
        if x[0] == "scaled":
            return ("scaled", op(x[1]), x[2])
        return x
    if f[0] == "cmp":
        return ("cmp", f[1], op(f[2]), op(f[3]))
    if f == TRUE:
        return f
    return (f[0],) + tuple(remapped(g, cols, idx) for g in f[1:])


def token(f, names, bound_token) -> str:
    """A readable identifier for f: columns by `names`, bounds by `bound_token`;
    a formula beyond one comparison gets a digest (the words alone do not show
    its parentheses)."""
    def word(x):
        return {"col": lambda: names[x[1]], "idx": lambda: "idx" + "".join(map(str, x[1:])),
                "scaled": lambda: f"{bound_token(x[2])}x{word(x[1])}"}.get(
            x[0], lambda: bound_token(x[1]))()

    if f[0] == "cmp":
        return f"{word(f[2])}_{OPS[f[1]]}_{word(f[3])}"
    text = "_".join(f"{word(n[2])}_{OPS[n[1]]}_{word(n[3])}" if n[0] == "cmp" else n[0]
                    for n in walk(f))
    digest = hashlib.sha1(repr(f).encode()).hexdigest()[:8]
    return f"{text[:40]}_{digest}"

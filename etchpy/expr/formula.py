"""Boolean formulas of comparisons: the tests of a row predicate (expr.compare).

A formula is a nested tuple (hashable, so a CompareVar holding one is a cache key):

    ("cmp", op, a, b)     a op b, op one of < <= > >=
    ("and", f, g)  ("or", f, g)  ("not", f)
    ("true",)             holds at every entry (TRUE: a row of columns multiplied,
                          no test: expr.shared)

and an operand is ("col", k), the value of the predicate's k-th column at the
entry; ("idx", p), the coordinate of the predicate's p-th index (("idx",): of
a one-index predicate's index); ("scaled", x, c), operand x times c, a number
written in the expression (`0.5 * B[i]`) or a bound (below: `"a" * B[i]`);
("plus", x, b), operand x plus the bound b (`B[i] + 30`, `j - 2`): ordinary
arithmetic, not the semiring's; ("par", name), a parameter passed at call
time; ("num", x), a number written in the expression; or ("lin", c, ((name,
k), ...)), the number c plus each parameter times its number k (`t - 1`). The
last three are bounds. A column operand is always on the left of a cmp (a
bound, maybe plus, on the right). Each bound is one *slot*, numbered in the
order `slots` walks the formula: the value a kernel reads for it at call time.
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


BOUNDS = ("par", "num", "lin")


def slots(f) -> tuple:
    """((op, bound), ...): each bound of f, in slot order (each cmp's left operand's,
    then its right's, an operand's inner ones first), with the operator it is
    compared by (the column on the left), or "*" for a scale."""
    return tuple(s for n in walk(f) if n[0] == "cmp" for x in n[2:] for s in _slots(x, n[1]))


def _slots(x, op):
    if x[0] in BOUNDS:
        yield op, x
    elif x[0] == "scaled":
        yield from _slots(x[1], op)
        if isinstance(x[2], tuple):
            yield "*", x[2]
    elif x[0] == "plus":
        yield from _slots(x[1], op)
        yield op, x[2]


def params(f) -> tuple[str, ...]:
    """The names of the parameters f reads, once each, in slot order."""
    return tuple(dict.fromkeys(n for _, b in slots(f) for n in bound_params(b)))


def bound_params(b) -> tuple[str, ...]:
    """The parameters bound b reads."""
    return (b[1],) if b[0] == "par" else tuple(n for n, _ in b[2]) if b[0] == "lin" else ()


def coordinate(x):
    """The ("idx", ...) operand that operand x reads (plain or plus a bound), or None."""
    while x[0] in ("plus", "scaled"):
        x = x[1]
    return x if x[0] == "idx" else None


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
                inner = operand(x[1])
                return (slot_values[next(counter)] if isinstance(x[2], tuple) else x[2]) * inner
            case "plus":
                inner = operand(x[1])
                return inner + slot_values[next(counter)]
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
        if x[0] in ("scaled", "plus"):
            return (x[0], op(x[1]), x[2])
        return x
    if f[0] == "cmp":
        return ("cmp", f[1], op(f[2]), op(f[3]))
    if f == TRUE:
        return f
    return (f[0],) + tuple(remapped(g, cols, idx) for g in f[1:])


def operand_word(x, names, bound_token) -> str:
    """Operand x as part of an identifier (`token`)."""
    def w(y):
        return operand_word(y, names, bound_token)
    return {"col": lambda: names[x[1]], "idx": lambda: "idx" + "".join(map(str, x[1:])),
            "scaled": lambda: f"{w(x[2]) if isinstance(x[2], tuple) else bound_token(x[2])}"
                              f"x{w(x[1])}",
            "plus": lambda: f"{w(x[1])}_plus_{w(x[2])}",
            "lin": lambda: "_".join([bound_token(x[1])] + [
                f"{bound_token(k)}x{bound_token(n)}" for n, k in x[2]])}.get(
        x[0], lambda: bound_token(x[1]))()


def token(f, names, bound_token) -> str:
    """A readable identifier for f: columns by `names`, bounds by `bound_token`;
    a formula beyond one comparison gets a digest (the words alone do not show
    its parentheses)."""
    def word(x):
        return operand_word(x, names, bound_token)

    if f[0] == "cmp":
        return f"{word(f[2])}_{OPS[f[1]]}_{word(f[3])}"
    text = "_".join(f"{word(n[2])}_{OPS[n[1]]}_{word(n[3])}" if n[0] == "cmp" else n[0]
                    for n in walk(f))
    digest = hashlib.sha1(repr(f).encode()).hexdigest()[:8]
    return f"{text[:40]}_{digest}"

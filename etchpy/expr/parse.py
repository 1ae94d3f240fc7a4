"""The text front end: statements such as `y[i] = A[i,j] * x[j]` (einsum specs: expr.einsum).

Statements
----------
    statement ::= lhs '=' expr
    lhs       ::= NAME | NAME '[' [NAME (',' NAME)*] ']'
    expr      ::= term (('+' | '-') term)*
    term      ::= unary ('*' unary)*
    unary     ::= ('-' | '+') unary | power
    power     ::= atom ['**' INT]                 INT a positive integer literal
    atom      ::= NUMBER | 'inf' | '(' expr ')'
                | 'sum' '(' (NAME | '(' NAME (',' NAME)* ')') ',' expr ')'
                | MAP '(' expr [',' ['-'] NUMBER] ')'    MAP a name of ep.map
                | NAME | NAME '[' [index (',' index)*] ']'
    index     ::= NAME ['[' [bound] ':' [bound] [':' [bound]] ']']   a window
    bound     ::= ['-'] INT | NAME [('+' | '-') INT]   NAME a parameter

Precedence follows Python: `**` binds tighter than unary minus, which binds
tighter than `*`; `-x**2` is `-(x**2)`. `a - b` and `-a` become the same
nodes as in the Python API (a `-1` literal marked as negation); a unary minus
applied to a numeric literal gives a negative literal (`-inf` is the number
-inf, exactly as `-5` is a number in Python). `sum` only means summation when
followed by `(`; `inf` is always the literal.

Each tensor's order is fixed by its first use (the left-hand side counts as a
use of the output tensor if it also appears on the right). Indices that occur
on the right but not on the left are summed (the einsum convention); the Σ
goes around the smallest subexpression containing every free occurrence of
the index, several Σs at one node nest in order of first appearance. Since
`e ** n` stands for `e * ... * e`, an index free in the base of a power counts
n times, so `s = x[i]**2` is Σ_i x[i]·x[i] (a sum of squares), not (Σ_i x[i])².
An index bound by an explicit `sum(...)` may not also be used outside that sum.
An implicit Σ never enters a map (which applies to completed values): in
`y[i] = exp(A[i,j])` it goes around the map, Σ_j exp(A[i,j]); write
`exp(sum(j, A[i,j]))` for the other reading. `maximum(A[i,j], 0)` takes the
scalar after a comma. `A[i[lo:hi:s], j]` reads A through a window of i, as
`i[lo:hi:s]` does in Python (expr.windows); a named bound is a parameter
passed at call time, `i[lo+1:hi-1]` one with an offset.

Every error is a `FrontendError` showing the text with a caret under the
offending token.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import nodes as ex
from .. import maps
from ..errors import ExpressionTypeError, FormatError
from .lexer import FrontendError, FrontendFormatError, check_brackets, tokenize
from .nodes import Expr, Index, Lit, TensorVar
from .parse_checks import check_summed, first_positions, output_format
from .parse_windows import WindowSyntax
from .walk import tensors

__all__ = ["FrontendError", "Statement", "parse"]


# --------------------------------------------------------------------------- parse tree

@dataclass(eq=False)
class _Node:
    kind: str                 # access, lit, neg, pos, add, sub, mul, pow, sum
    pos: int
    kids: tuple = ()
    data: object = None       # access: (TensorVar, [(name, pos)], windows); lit: value;
                              # pow: n; sum: [(name, pos)]
    free: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class Statement:
    """A parsed `out[i, ...] = expr`.

    `tensors` holds the tensors of the right-hand side by name, in order of first
    appearance. `output_format` is the Format given for the output in `formats`
    (None when not given).
    """

    output: str
    indices: tuple[Index, ...]
    expr: Expr
    tensors: dict[str, TensorVar] = field(hash=False)
    output_format: object = field(default=None, compare=False)


class _Parser(WindowSyntax):
    def __init__(self, text: str, formats: dict):
        toks = tokenize(text)
        check_brackets(text, toks)
        super().__init__(text, toks)
        self.formats = formats
        self.orders: dict[str, tuple[int, int]] = {}   # name -> (order, pos of first use)
        self.tvars: dict[str, TensorVar] = {}
        self.bound: dict[str, int] = {}                # explicitly summed index -> pos

    # -- tensors
    def tensor_var(self, name: str, order: int, pos: int) -> TensorVar:
        seen = self.orders.get(name)
        if seen is None:
            self.orders[name] = (order, pos)
        elif seen[0] != order:
            first, fpos = seen
            raise self.error(
                f"tensor {name} has order {first} (from its first use at column {fpos + 1}) "
                f"but is used here with {order} ind{'ex' if order == 1 else 'ices'}", pos)
        tv = self.tvars.get(name)
        if tv is None:
            try:
                tv = TensorVar(name, order, self.formats.get(name, "dense"))
            except FormatError as e:
                raise FrontendFormatError(f"tensor {name} ({e})", self.text, pos) from e
            self.tvars[name] = tv
        return tv

    def index_list(self, lhs: bool = False, windows: list | None = None
                   ) -> list[tuple[str, int]]:
        """After a '[': NAME (',' NAME)* ']' or an empty ']'. A name repeated on
        the right is a diagonal (expr.diagonal); on the left, an error. On
        the right (`windows` given) a name may take a window, NAME '[' lo ':' hi
        [':' step] ']', appended to `windows` (None for a plain index)."""
        out: list[tuple[str, int]] = []
        if not self.at("]"):
            while True:
                t = self.name("an index name")
                if lhs and any(other == t.text for other, _ in out):
                    raise self.error(f"index {t.text} appears twice on the left-hand side",
                                     t.pos)
                out.append((t.text, t.pos))
                if windows is not None:
                    windows.append(self.window(t) if self.at("[") else None)
                elif self.at("["):
                    raise self.error("a window i[lo:hi] reads an operand; the left-hand "
                                     "side takes plain indices", self.tok.pos)
                if not self.at(","):
                    break
                self.advance()
        self.expect("]", "',' or ']'")
        return out

    # -- grammar
    def statement(self) -> tuple[str, list[tuple[str, int]], int, _Node]:
        has_eq = any(t.kind == "op" and t.text == "=" for t in self.toks)
        try:
            out = self.name("the output tensor name")
            lhs: list[tuple[str, int]] = []
            if self.at("["):
                self.advance()
                lhs = self.index_list(lhs=True)
            where = self.tok.pos
        except FrontendError as e:
            if has_eq:
                raise
            raise self.error("missing '=' (a statement reads `out[i, ...] = expression`)",
                             e.pos) from None
        if not has_eq:
            raise self.error("missing '=' after the output tensor", where)
        if not self.at("="):
            raise self.unexpected("'=' after the output tensor")
        self.advance()
        if self.tok.kind == "end":
            raise self.unexpected("an expression")
        rhs = self.expr()
        if self.tok.kind != "end":
            raise self.unexpected()
        return out.text, lhs, out.pos, rhs

    def expr(self) -> _Node:
        node = self.term()
        while self.at("+") or self.at("-"):
            op = self.advance()
            node = _Node("add" if op.text == "+" else "sub", op.pos, (node, self.term()))
        return node

    def term(self) -> _Node:
        node = self.unary()
        while self.at("*"):
            op = self.advance()
            node = _Node("mul", op.pos, (node, self.unary()))
        return node

    def unary(self) -> _Node:
        if self.at("-") or self.at("+"):
            op = self.advance()
            inner = self.unary()
            if op.text == "+":
                return inner
            if inner.kind == "lit":   # -5, -inf: a negative literal, as in Python
                return _Node("lit", op.pos, (), -inner.data)
            return _Node("neg", op.pos, (inner,))
        return self.power()

    def power(self) -> _Node:
        node = self.atom()
        if self.at("**"):
            op = self.advance()
            t = self.tok
            if t.kind != "number" or not t.text.isdigit() or int(t.text) < 1:
                got = repr(t.text) if t.text else "end of input"
                raise self.error(f"bad exponent {got} ('**' needs a positive integer literal)",
                                 t.pos)
            self.advance()
            node = _Node("pow", op.pos, (node,), int(t.text))
            if self.at("**"):
                raise self.error("chained '**' (ambiguous: add parentheses)", self.tok.pos)
        return node

    def atom(self) -> _Node:
        t = self.tok
        if t.kind == "number":
            self.advance()
            value = float(t.text) if any(c in t.text for c in ".eE") else int(t.text)
            return _Node("lit", t.pos, (), value)
        if t.kind == "name" and t.text == "inf":
            self.advance()
            return _Node("lit", t.pos, (), float("inf"))
        if self.at("("):
            self.advance()
            node = self.expr()
            self.expect(")", "')' or an operator")
            return node
        called = self.peek().kind == "op" and self.peek().text == "("
        if t.kind == "name" and t.text == "sum" and called:
            return self.explicit_sum()
        if t.kind == "name" and called:
            return self.mapped()
        if t.kind == "name":
            self.advance()
            idx: list[tuple[str, int]] = []
            wins: list = []
            if self.at("["):
                self.advance()
                idx = self.index_list(windows=wins)
            tv = self.tensor_var(t.text, len(idx), t.pos)
            return _Node("access", t.pos, (), (tv, idx, tuple(wins)))
        raise self.unexpected("a number, a tensor, 'sum(' or '('")

    def mapped(self) -> _Node:
        """NAME '(' expr [',' number] ')': a map (etchpy.maps) and its scalar."""
        start = self.advance()
        if not maps.is_map(start.text):
            raise self.error(f"unknown function {start.text}; the maps are "
                             + ", ".join(sorted(maps.MAPS)), start.pos)
        self.expect("(")
        body, arg = self.expr(), None
        if self.at(","):
            self.advance()
            scalar = self.unary()
            if scalar.kind != "lit":
                raise self.error(f"{start.text}(..., x) takes a number x", scalar.pos)
            arg = scalar.data
        self.expect(")", f"')' closing {start.text}(...)")
        try:
            maps.lookup(start.text, arg)
        except ExpressionTypeError as err:
            raise self.error(str(err), start.pos) from None
        return _Node("map", start.pos, (body,), (start.text, arg))

    def explicit_sum(self) -> _Node:
        start = self.advance()
        self.expect("(")
        names: list[tuple[str, int]] = []
        if self.at("("):
            self.advance()
            while True:
                t = self.name("an index name")
                names.append((t.text, t.pos))
                if not self.at(","):
                    break
                self.advance()
                if self.at(")"):      # trailing comma: sum((j,), e)
                    break
            self.expect(")", "',' or ')'")
        else:
            t = self.name("an index name or a parenthesized tuple of index names")
            names.append((t.text, t.pos))
        self.expect(",", "',' and the expression to sum")
        body = self.expr()
        self.expect(")", "')' closing sum(...)")
        return _Node("sum", start.pos, (body,), names)

    # -- analysis: free index occurrences of each node
    def annotate(self, node: _Node) -> Counter:
        c: Counter = Counter()
        for kid in node.kids:
            c.update(self.annotate(kid))
        if node.kind == "access":
            c.update(name for name, _ in node.data[1])
        elif node.kind == "pow":   # e ** n is n copies of e multiplied together
            c = Counter({name: n * node.data for name, n in c.items()})
        elif node.kind == "sum":
            for name, pos in node.data:
                if c[name] == 0:
                    raise self.error(f"cannot sum over index {name}, which is not free in the "
                                     f"summed expression", pos)
                del c[name]
                self.bound.setdefault(name, pos)
        node.free = c
        return c

    # -- conversion to etchpy expressions, placing the implicit Σs
    def build(self, node: _Node, pending: dict[str, int], total: Counter,
              first: dict[str, int]) -> Expr:
        inner = {} if node.kind == "map" else pending      # no implicit Σ enters a map
        kids = [self.build(k, inner, total, first) for k in node.kids]
        match node.kind:
            case "access":
                tv, idx, wins = node.data
                e: Expr = tv[tuple(Index(n) if w is None else Index(n)[w]
                                   for (n, _), w in zip(idx, wins))]
            case "lit":
                e = Lit(node.data)
            case "neg":
                e = -kids[0]
            case "add":
                e = kids[0] + kids[1]
            case "sub":
                e = kids[0] - kids[1]
            case "mul":
                e = kids[0] * kids[1]
            case "pow":
                e = kids[0] ** node.data
            case "sum":
                e = ex.sum(tuple(Index(n) for n, _ in node.data), kids[0])
            case "map":
                e = ex.Map(node.data[0], kids[0], node.data[1])
            case _:  # pragma: no cover
                raise AssertionError(node.kind)
        here = [n for n in pending if node.free[n] == total[n]]
        if here:
            here.sort(key=first.__getitem__)
            for n in here:
                del pending[n]
            e = ex.sum(tuple(Index(n) for n in here), e)
        return e


def parse(text: str, formats: dict | None = None) -> Statement:
    """Parse `out[i, ...] = expression` into a Statement (see the module docstring)."""
    if not isinstance(text, str):
        raise ExpressionTypeError(f"parse takes a string, got {type(text).__name__}")
    formats = dict(formats or {})
    p = _Parser(text, formats)
    out, lhs, out_pos, rhs = p.statement()
    out_format = output_format(p, out, len(lhs), out_pos)
    for name in formats:
        if name not in p.tvars and name != out:
            raise p.error(f"formats names tensor {name!r}, which does not occur in the "
                          f"statement", None)
    total = p.annotate(rhs)
    first = first_positions(rhs, {})
    check_summed(p, lhs, rhs, total)
    lhs_names = {name for name, _ in lhs}   # distinct: index_list checked
    pending = {n: first[n] for n in sorted(total, key=first.__getitem__) if n not in lhs_names}
    try:
        expr = p.build(rhs, pending, total, first)
    except FrontendError:
        raise
    except ExpressionTypeError as e:  # pragma: no cover - the checks above should catch all
        raise p.error(str(e), rhs.pos) from e
    return Statement(out, tuple(Index(n) for n, _ in lhs), expr, tensors(expr), out_format)

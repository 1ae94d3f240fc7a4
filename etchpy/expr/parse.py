"""A text front end: `y[i] = A[i,j] * x[j]` and numpy-style einsum specs.

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
                | NAME | NAME '[' [NAME (',' NAME)*] ']'

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

Every error is a `FrontendError` showing the text with a caret under the
offending token.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import nodes as ex
from ..errors import ExpressionTypeError, FormatError
from .nodes import Expr, Index, Lit, TensorVar

__all__ = ["FrontendError", "Statement", "parse", "einsum_expr"]


# --------------------------------------------------------------------------- errors

class FrontendError(ExpressionTypeError):
    """A syntax or typing error in a text statement or einsum spec.

    Attributes: `reason` (the message without location), `text`, `pos` (0-based
    offset into `text`, or None), `line` and `column` (1-based, or None).
    """

    def __init__(self, reason: str, text: str, pos: int | None):
        self.reason = reason
        self.text = text
        self.pos = pos
        if pos is None:
            self.line = self.column = None
            shown = "\n".join("  " + ln for ln in text.splitlines() or [""])
            message = f"{reason}\n{shown}"
        else:
            pos = max(0, min(pos, len(text)))
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            src = text[start:] if end < 0 else text[start:end]
            col0 = pos - start
            self.line = text.count("\n", 0, pos) + 1
            self.column = col0 + 1
            where = (f"at line {self.line}, column {self.column}" if "\n" in text
                     else f"at column {self.column}")
            pad = "".join("\t" if c == "\t" else " " for c in src[:col0])
            message = f"{reason} {where}\n  {src}\n  {pad}^"
        super().__init__(message)


class _FrontendFormatError(FrontendError, FormatError):
    """A format that does not fit the tensor (both a FrontendError and a FormatError)."""


# --------------------------------------------------------------------------- tokens

@dataclass(frozen=True)
class _Tok:
    kind: str   # "name", "number", "op", "end"
    text: str
    pos: int

    def shown(self) -> str:
        return "end of input" if self.kind == "end" else f"token {self.text!r}"


_OPS = ("**", "[", "]", "(", ")", ",", "+", "-", "*", "=")
_CLOSER = {"(": ")", "[": "]"}


def _number_end(text: str, i: int) -> int:
    """End of the numeric literal starting at i (digits[.digits][e[+-]digits])."""
    n = len(text)
    j = i
    while j < n and text[j].isdigit():
        j += 1
    if j < n and text[j] == ".":
        j += 1
        while j < n and text[j].isdigit():
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and text[k].isdigit():
            while k < n and text[k].isdigit():
                k += 1
            j = k
    return j


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isascii() and c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j = _number_end(text, i)
            toks.append(_Tok("number", text[i:j], i))
            i = j
        elif c.isidentifier():
            j = i + 1
            while j < n and text[i:j + 1].isidentifier():
                j += 1
            toks.append(_Tok("name", text[i:j], i))
            i = j
        else:
            for op in _OPS:
                if text.startswith(op, i):
                    toks.append(_Tok("op", op, i))
                    i += len(op)
                    break
            else:
                raise FrontendError(f"unknown character {c!r}", text, i)
    toks.append(_Tok("end", "", n))
    return toks


def _check_brackets(text: str, toks: list[_Tok]) -> None:
    stack: list[_Tok] = []
    for t in toks:
        if t.kind != "op":
            continue
        if t.text in _CLOSER:
            stack.append(t)
        elif t.text in (")", "]"):
            if not stack:
                raise FrontendError(f"unexpected token {t.text!r}", text, t.pos)
            opener = stack.pop()
            if _CLOSER[opener.text] != t.text:
                raise FrontendError(
                    f"mismatched {t.text!r} closing the {opener.text!r} from column "
                    f"{opener.pos + 1}", text, t.pos)
    if stack:
        t = stack[-1]
        raise FrontendError(f"unbalanced {t.text!r} that is never closed", text, t.pos)


# --------------------------------------------------------------------------- parse tree

@dataclass(eq=False)
class _Node:
    kind: str                 # access, lit, neg, pos, add, sub, mul, pow, sum
    pos: int
    kids: tuple = ()
    data: object = None       # access: (TensorVar, [(name, pos)]); lit: value;
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


class _Parser:
    def __init__(self, text: str, formats: dict):
        self.text = text
        self.formats = formats
        self.toks = _tokenize(text)
        _check_brackets(text, self.toks)
        self.k = 0
        self.orders: dict[str, tuple[int, int]] = {}   # name -> (order, pos of first use)
        self.tvars: dict[str, TensorVar] = {}
        self.bound: dict[str, int] = {}                # explicitly summed index -> pos

    # -- helpers
    def error(self, reason: str, pos: int | None):
        return FrontendError(reason, self.text, pos)

    @property
    def tok(self) -> _Tok:
        return self.toks[self.k]

    def peek(self, off: int = 1) -> _Tok:
        return self.toks[min(self.k + off, len(self.toks) - 1)]

    def at(self, op: str) -> bool:
        return self.tok.kind == "op" and self.tok.text == op

    def advance(self) -> _Tok:
        t = self.tok
        self.k += 1
        return t

    def unexpected(self, expecting: str | None = None):
        t = self.tok
        why = f"unexpected {t.shown()}"
        if expecting:
            why += f" (expected {expecting})"
        return self.error(why, t.pos)

    def expect(self, op: str, expecting: str | None = None) -> _Tok:
        if not self.at(op):
            raise self.unexpected(expecting or repr(op))
        return self.advance()

    def name(self, expecting: str) -> _Tok:
        if self.tok.kind != "name":
            raise self.unexpected(expecting)
        return self.advance()

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
                raise _FrontendFormatError(f"tensor {name} ({e})", self.text, pos) from e
            self.tvars[name] = tv
        return tv

    def index_list(self, owner: str, lhs: bool = False) -> list[tuple[str, int]]:
        """After a '[': NAME (',' NAME)* ']' or an empty ']'."""
        out: list[tuple[str, int]] = []
        if not self.at("]"):
            while True:
                t = self.name("an index name")
                if any(other == t.text for other, _ in out):
                    if lhs:
                        raise self.error(f"index {t.text} appears twice on the left-hand side",
                                         t.pos)
                    raise self.error(
                        f"index {t.text} appears twice in {owner}[...] (diagonal access is not "
                        f"supported; multiply by an identity tensor)", t.pos)
                out.append((t.text, t.pos))
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
                lhs = self.index_list(out.text, lhs=True)
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
        if t.kind == "name" and t.text == "sum" and self.peek().kind == "op" \
                and self.peek().text == "(":
            return self.explicit_sum()
        if t.kind == "name":
            self.advance()
            idx: list[tuple[str, int]] = []
            if self.at("["):
                self.advance()
                idx = self.index_list(t.text)
            tv = self.tensor_var(t.text, len(idx), t.pos)
            return _Node("access", t.pos, (), (tv, idx))
        raise self.unexpected("a number, a tensor, 'sum(' or '('")

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
        kids = [self.build(k, pending, total, first) for k in node.kids]
        match node.kind:
            case "access":
                tv, idx = node.data
                e: Expr = tv[tuple(Index(n) for n, _ in idx)]
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
            case _:  # pragma: no cover
                raise AssertionError(node.kind)
        here = [n for n in pending if node.free[n] == total[n]]
        if here:
            here.sort(key=first.__getitem__)
            for n in here:
                del pending[n]
            e = ex.sum(tuple(Index(n) for n in here), e)
        return e


def _first_positions(node: _Node, out: dict[str, int]) -> dict[str, int]:
    """Position of the first free-or-bound occurrence of each index, in text order."""
    if node.kind == "access":
        for name, pos in node.data[1]:
            out[name] = min(pos, out.get(name, pos))
    for kid in node.kids:
        _first_positions(kid, out)
    return out


def parse(text: str, formats: dict | None = None) -> Statement:
    """Parse `out[i, ...] = expression` into a Statement (see the module docstring)."""
    if not isinstance(text, str):
        raise ExpressionTypeError(f"parse takes a string, got {type(text).__name__}")
    formats = dict(formats or {})
    p = _Parser(text, formats)
    out, lhs, out_pos, rhs = p.statement()

    lhs_names = {name for name, _ in lhs}   # distinct: index_list checked

    # The output tensor on the right (y[i] = y[i] + ...) must agree with the left.
    out_order = len(lhs)
    if out in p.orders and p.orders[out][0] != out_order:
        order, pos = p.orders[out]
        raise p.error(f"tensor {out} has order {out_order} on the left-hand side but is used "
                      f"here with {order} ind{'ex' if order == 1 else 'ices'}", pos)
    out_format = None
    if out in formats:
        try:
            out_format = TensorVar(out, out_order, formats[out]).format
        except FormatError as e:
            raise _FrontendFormatError(f"tensor {out} ({e})", text, out_pos) from e

    for name in formats:
        if name not in p.tvars and name != out:
            raise p.error(f"formats names tensor {name!r}, which does not occur in the "
                          f"statement", None)

    total = p.annotate(rhs)
    first = _first_positions(rhs, {})
    for name, pos in lhs:
        if name in p.bound:
            raise p.error(f"cannot sum over index {name}, which is on the left-hand side",
                          p.bound[name])
        if total[name] == 0:
            raise p.error(f"index {name} on the left-hand side does not occur free on the "
                          f"right-hand side", pos)
    for name, pos in p.bound.items():
        if total[name]:
            use = min(pos2 for n, pos2 in _free_positions(rhs) if n == name)
            raise p.error(f"index {name} is bound by the sum(...) from column {pos + 1} and "
                          f"also used outside it", use)

    pending = {n: first[n] for n in sorted(total, key=first.__getitem__) if n not in lhs_names}
    try:
        expr = p.build(rhs, pending, total, first)
    except FrontendError:
        raise
    except ExpressionTypeError as e:  # pragma: no cover - the checks above should catch all
        raise p.error(str(e), rhs.pos) from e
    return Statement(out, tuple(Index(n) for n, _ in lhs), expr, ex.tensors(expr), out_format)


def _free_positions(node: _Node, bound: frozenset = frozenset()):
    """(name, pos) of every index occurrence not bound by an enclosing sum."""
    if node.kind == "access":
        for name, pos in node.data[1]:
            if name not in bound:
                yield name, pos
    if node.kind == "sum":
        bound = bound | {n for n, _ in node.data}
    for kid in node.kids:
        yield from _free_positions(kid, bound)


# --------------------------------------------------------------------------- einsum

_SPARSE_FORMATS = {"csr": "csr", "csc": "csc", "coo": "coo"}


def _infer_format(operand) -> str:
    if type(operand).__module__.startswith("scipy"):
        import scipy.sparse
        if scipy.sparse.issparse(operand):
            return _SPARSE_FORMATS.get(operand.format, "dense")
    return "dense"


def _einsum_letters(spec: str, start: int, stop: int) -> list[tuple[str, int]]:
    out = []
    for pos in range(start, stop):
        c = spec[pos]
        if c.isspace():
            continue
        if c == ".":
            raise FrontendError("ellipsis '...' is not supported in einsum specs", spec, pos)
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise FrontendError(f"unknown character {c!r} in einsum spec (subscripts are "
                                f"letters a-z, A-Z)", spec, pos)
        out.append((c, pos))
    return out


def einsum_expr(spec: str, operands: list) -> tuple[Expr, tuple[Index, ...], dict[str, object]]:
    """Expression, output indices and {"T0": operand0, ...} for a numpy einsum spec.

    The expression is the product T0[...] * T1[...] * ... (left to right) under
    one Σ over the indices not in the output (in order of first appearance).
    Without '->' the output is every index that occurs exactly once, sorted.
    """
    if not isinstance(spec, str):
        raise ExpressionTypeError(f"an einsum spec is a string, got {type(spec).__name__}")
    operands = list(operands)
    arrow = spec.find("->")
    if arrow >= 0 and spec.find("->", arrow + 2) >= 0:
        raise FrontendError("an einsum spec has at most one '->'", spec,
                            spec.find("->", arrow + 2))
    lhs_end = arrow if arrow >= 0 else len(spec)

    terms: list[list[tuple[str, int]]] = []
    starts: list[int] = []
    start = 0
    while True:
        comma = spec.find(",", start, lhs_end)
        stop = lhs_end if comma < 0 else comma
        terms.append(_einsum_letters(spec, start, stop))
        starts.append(start)
        if comma < 0:
            break
        start = comma + 1

    if len(terms) != len(operands):
        raise FrontendError(f"the einsum spec has {len(terms)} operand"
                            f"{'' if len(terms) == 1 else 's'} but {len(operands)} "
                            f"{'was' if len(operands) == 1 else 'were'} given", spec, None)

    counts: Counter = Counter()
    for term in terms:
        seen = set()
        for c, pos in term:
            if c in seen:
                raise FrontendError(f"index {c} repeats within one operand (a diagonal), "
                                    f"which is not supported", spec, pos)
            seen.add(c)
            counts[c] += 1

    if arrow >= 0:
        out_letters = _einsum_letters(spec, arrow + 2, len(spec))
        seen = set()
        for c, pos in out_letters:
            if c in seen:
                raise FrontendError(f"output index {c} appears twice", spec, pos)
            if c not in counts:
                raise FrontendError(f"output index {c} does not occur in any operand",
                                    spec, pos)
            seen.add(c)
        out_names = [c for c, _ in out_letters]
    else:
        out_names = sorted(c for c, n in counts.items() if n == 1)

    tensors: dict[str, object] = {}
    product: Expr | None = None
    for k, (term, operand) in enumerate(zip(terms, operands)):
        name = f"T{k}"
        shape = getattr(operand, "shape", None)
        if shape is not None and len(shape) != len(term):
            pos = term[0][1] if term else starts[k]
            raise FrontendError(f"operand {k} has {len(shape)} dimensions but the spec gives "
                                f"it {len(term)} ind{'ex' if len(term) == 1 else 'ices'}",
                                spec, pos)
        fmt = _infer_format(operand)
        try:
            tv = TensorVar(name, len(term), fmt)
        except FormatError as e:
            raise _FrontendFormatError(f"operand {k} ({e})", spec,
                                       term[0][1] if term else None) from e
        acc = tv[tuple(Index(c) for c, _ in term)]
        product = acc if product is None else product * acc
        tensors[name] = operand

    if product is None:
        raise FrontendError("einsum needs at least one operand", spec, None)
    order = list(dict.fromkeys(c for term in terms for c, _ in term))
    summed = tuple(Index(c) for c in order if c not in out_names)
    expr = ex.sum(summed, product) if summed else product
    return expr, tuple(Index(c) for c in out_names), tensors

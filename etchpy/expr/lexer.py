"""Errors and tokens of the text front ends (statements in expr.parse, einsum specs in
expr.einsum).

`FrontendError` shows the offending text with a caret under the offending token.
`tokenize` splits a statement into names, numbers and operators; `check_brackets`
reports the first unbalanced or mismatched bracket; a `Cursor` walks the tokens.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ExpressionTypeError, FormatError

__all__ = ["FrontendError", "FrontendFormatError", "Tok", "Cursor", "tokenize", "check_brackets"]


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


class FrontendFormatError(FrontendError, FormatError):
    """A format that does not fit the tensor (both a FrontendError and a FormatError)."""


@dataclass(frozen=True)
class Tok:
    """One token: its kind, its text and its 0-based offset in the statement."""

    kind: str   # "name", "number", "op", "end"
    text: str
    pos: int

    def shown(self) -> str:
        return "end of input" if self.kind == "end" else f"token {self.text!r}"


_OPS = ("**", "[", "]", "(", ")", ",", "+", "-", "*", "=", ":")
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


def tokenize(text: str) -> list[Tok]:
    """The tokens of `text`, ending with an "end" token; FrontendError on a stray character."""
    toks: list[Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isascii() and c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j = _number_end(text, i)
            toks.append(Tok("number", text[i:j], i))
            i = j
        elif c.isidentifier():
            j = i + 1
            while j < n and text[i:j + 1].isidentifier():
                j += 1
            toks.append(Tok("name", text[i:j], i))
            i = j
        else:
            for op in _OPS:
                if text.startswith(op, i):
                    toks.append(Tok("op", op, i))
                    i += len(op)
                    break
            else:
                raise FrontendError(f"unknown character {c!r}", text, i)
    toks.append(Tok("end", "", n))
    return toks


def check_brackets(text: str, toks: list[Tok]) -> None:
    """Raise FrontendError at the first unbalanced or mismatched bracket."""
    stack: list[Tok] = []
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


class Cursor:
    """A position in a token list, with the error helpers of a recursive-descent parser."""

    def __init__(self, text: str, toks: list[Tok]):
        self.text = text
        self.toks = toks
        self.k = 0

    def error(self, reason: str, pos: int | None):
        return FrontendError(reason, self.text, pos)

    @property
    def tok(self) -> Tok:
        return self.toks[self.k]

    def peek(self, off: int = 1) -> Tok:
        return self.toks[min(self.k + off, len(self.toks) - 1)]

    def at(self, op: str) -> bool:
        return self.tok.kind == "op" and self.tok.text == op

    def advance(self) -> Tok:
        t = self.tok
        self.k += 1
        return t

    def unexpected(self, expecting: str | None = None):
        t = self.tok
        why = f"unexpected {t.shown()}"
        if expecting:
            why += f" (expected {expecting})"
        return self.error(why, t.pos)

    def expect(self, op: str, expecting: str | None = None) -> Tok:
        if not self.at(op):
            raise self.unexpected(expecting or repr(op))
        return self.advance()

    def name(self, expecting: str) -> Tok:
        if self.tok.kind != "name":
            raise self.unexpected(expecting)
        return self.advance()

"""Window syntax of the text front end: `A[i[lo:hi:s], j]` (expr.parse).

A window after an index name reads its operand through a window of that
index, as `i[lo:hi:s]` does in the Python API (expr.windows): each bound an
integer (negative allowed), a parameter name given at call time, or a
parameter plus or minus an integer, `i[lo+1:hi-1]`; any bound may be left
out (lo 0, hi the operand's size, step 1).
"""
from __future__ import annotations

from ..errors import ExpressionTypeError
from .lexer import Cursor
from .nodes import Index

__all__ = ["WindowSyntax"]


class WindowSyntax(Cursor):
    """The parser's methods for a window; FrontendError (with a caret) for a
    malformed one, or one expr.windows refuses (a step that is not positive)."""

    def window(self, ix) -> slice:
        """After an index name at '[': [bound] ':' [bound] [':' [bound]] ']', each
        bound ['-'] INT or NAME [('+' | '-') INT] (a parameter given at call time)."""
        self.advance()
        parts, where = [self.window_bound()], [self.tok.pos]
        while self.at(":") and len(parts) < 3:
            self.advance()
            where.append(self.tok.pos)
            parts.append(self.window_bound())
        if len(parts) == 1:
            raise self.unexpected(f"':' in the window {ix.text}[lo:hi]")
        self.expect("]", f"']' closing the window of {ix.text}")
        s = slice(*parts) if len(parts) == 3 else slice(parts[0], parts[1])
        try:
            Index(ix.text)[s]
        except ExpressionTypeError as e:
            raise self.error(str(e), where[-1] if len(parts) == 3 else ix.pos) from None
        return s

    def window_bound(self):
        """A window bound, or None where the slice leaves it out."""
        if self.at(":") or self.at("]"):
            return None
        sign = -1 if self.at("-") else 1
        if self.at("-"):
            self.advance()
        t = self.tok
        if t.kind == "number" and t.text.isdigit():
            self.advance()
            return sign * int(t.text)
        if sign == 1 and t.kind == "name":
            self.advance()
            if not (self.at("+") or self.at("-")):
                return t.text
            op = self.advance()
            k = self.tok
            if k.kind != "number" or not k.text.isdigit():
                raise self.unexpected(f"an integer after {t.text}{op.text}")
            self.advance()
            return f"{t.text}{op.text}{int(k.text)}"
        raise self.unexpected("a window bound: an integer, a parameter name, or a "
                              "parameter plus or minus an integer")

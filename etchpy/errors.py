"""Exception types. Every error etchpy raises on purpose is an EtchpyError."""


class EtchpyError(Exception):
    """Base class of etchpy's own exceptions."""


class ExpressionTypeError(EtchpyError, TypeError):
    """An ill-typed expression, raised when the expression is built."""


class InputError(EtchpyError, ValueError):
    """A bad input tensor: wrong shape, dtype, structure or values."""


class FormatError(EtchpyError, ValueError):
    """An unknown or inconsistent level format."""


class OrderError(EtchpyError, ValueError):
    """No index order walks every input in its storage order."""


class SemiringError(EtchpyError, ValueError):
    """The semiring lacks a law the expression needs (e.g. negation)."""


class CompileError(EtchpyError, RuntimeError):
    """The C compiler failed or is missing."""


class PerformanceWarning(UserWarning):
    """A call that works but does avoidable work every time (an input converted on
    every call, say); the message says how to avoid it. Warned once per kernel and
    input."""

"""Exception types. Every error etchpy raises on purpose is an EtchpyError."""
import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# A kernel's return code when one of its fused input checks fails (part of its C
# ABI, docs/c-export.md; lower.schedule.fused_checks writes it): the runtime then
# checks that input in full and words the error (runtime.calling).
CHECK_FAILED = 4


class EtchpyError(Exception):
    """Base class of etchpy's own exceptions.

    Catch it to catch any of them:

        try:
            y = ep.evaluate(e, A=M, x=v)
        except ep.EtchpyError as err:
            print(err)
    """


class ExpressionTypeError(EtchpyError, TypeError):
    """An ill-typed expression, raised when the expression is built (also a TypeError).

        >>> A = ep.tensor("A", 2); i, = ep.indices("i")
        >>> A[i]        # raises: tensor A has order 2 but is indexed with 1 indices
    """


class MapError(ExpressionTypeError, ValueError):
    """An `ep.map` with an unknown function name, or a missing or extra scalar
    argument (also a TypeError and a ValueError).

        >>> ep.map("tanh", A[i, j])   # raises: unknown map 'tanh'; ep.map knows abs, ...
    """


class InputError(EtchpyError, ValueError):
    """A bad input tensor: unknown or missing name, wrong order, shape, dtype,
    structure or values; the message names the input (also a ValueError).

        >>> kern(A=M, X=v)    # raises: unknown input X (the kernel takes A, x)
    """


class FormatError(EtchpyError, ValueError):
    """An unknown or inconsistent level format (also a ValueError).

        >>> ep.tensor("A", 2, format="csx")   # raises: unknown format 'csx'
    """


class OrderError(EtchpyError, ValueError):
    """The loop order the user fixed (`order=`) walks a sparse input against its
    storage order (also a ValueError); store it in another format, or leave the
    order to the planner, which converts inputs as needed (docs/formats.md).

        >>> ep.compile(A_csr[i, j] * B_csr[j, i], order=("i", "j"))   # raises OrderError
    """


class SemiringError(EtchpyError, ValueError):
    """The semiring lacks a law the expression needs (also a ValueError).

        >>> ep.evaluate(A[i] - B[i], semiring="min_plus", A=a, B=b)  # raises: no negation
    """


class SketchError(EtchpyError, ValueError):
    """A malformed sketch, or one that no term reached within the saturation limits
    (also a ValueError); the message names the largest part of the sketch that was
    matched and the part that was not (docs/sketches.md).

        >>> ep.optimize(A[i, j] * x[j], sketch=ep.sketch.tensor("B"))  # raises SketchError
    """


class CompileError(EtchpyError, RuntimeError):
    """The C compiler failed or is missing (also a RuntimeError); the message
    carries the compiler's output and the path of the C file.

        CC=clang python my_script.py    # choose the compiler with CC (flags: CFLAGS)
    """


class PerformanceWarning(UserWarning):
    """A call that works but does avoidable work every time (an input converted on
    every call, say); the message says how to avoid it. Warned once per kernel and
    input. Silence it with the warnings module once the cost is understood.

        warnings.simplefilter("ignore", ep.PerformanceWarning)
    """


def warn_performance(note: str) -> None:
    """Warn `note` as a PerformanceWarning pointing at the first caller outside etchpy."""
    frame, level = sys._getframe(), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(note, PerformanceWarning, stacklevel=level)

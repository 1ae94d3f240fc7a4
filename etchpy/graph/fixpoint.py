"""The fixpoint driver: iterate one step until the state stops changing.

    result = fixpoint(step, x0, converged=equal, max_iter=100)
    result.value, result.iterations

A step is any callable from a state to the next state; `KernelStep` makes one
from a compiled etchpy kernel, compiled once and called every iteration with
its other inputs bound once (pass `ep.Tensor`s, so that they are not
converted again) and its dense output written into one of two buffers it
owns, in turn, so that no iteration allocates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import EtchpyError


class ConvergenceError(EtchpyError, RuntimeError):
    """A fixpoint iteration reached `max_iter` steps without converging (also a
    RuntimeError); the message names the iteration and the limit.

        >>> fixpoint(lambda x: x + 1, 0, max_iter=3)  # raises ConvergenceError
    """


@dataclass(frozen=True)
class Fixpoint:
    """A converged iteration: `value`, the last state; `iterations`, the number of
    steps taken (the last one changed nothing, or changed less than the
    tolerance)."""

    value: object
    iterations: int


def equal(old, new) -> bool:
    """Converged when the new state equals the old one (numpy arrays compared entry
    by entry; the default of `fixpoint`)."""
    return bool(np.array_equal(old, new))


def within(tol: float) -> Callable:
    """Converged when Σ|new - old| < n·tol, n the state's length: the criterion of
    networkx's and graphblas-algorithms' PageRank.

        >>> fixpoint(step, x0, converged=within(1e-6))
    """
    if not tol > 0:
        raise EtchpyError(f"the tolerance is a positive number, not {tol!r}")

    scratch: list = []          # one buffer reused across steps: no allocation per step

    def close(old, new) -> bool:
        if not scratch or scratch[0].shape != np.shape(new):
            scratch[:] = [np.empty(np.shape(new), np.result_type(old, new))]
        diff = np.subtract(new, old, out=scratch[0])
        return float(np.abs(diff, out=diff).sum()) < len(new) * tol
    return close


def fixpoint(step: Callable, state, *, converged: Callable = equal, max_iter: int = 1000,
             name: str = "fixpoint") -> Fixpoint:
    """Iterate `state <- step(state)` until `converged(old, new)`.

    Parameters: step, a callable from a state to the next (it may reuse the
    memory of states two steps old, as `KernelStep` does: `converged` sees the
    last two); state, the first state (not modified by the driver); converged,
    a predicate of (old, new) (default `equal`; `within(tol)` for a tolerance);
    max_iter, the most steps taken; name, what the error calls the iteration.
    Returns: a Fixpoint (value, iterations).
    Raises: ConvergenceError naming `name` after `max_iter` steps without
    convergence; EtchpyError for max_iter < 1.

        >>> fixpoint(lambda x: np.minimum(x, 3), np.arange(6)).value
        array([0, 1, 2, 3, 3, 3])
    """
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise EtchpyError(f"max_iter is a positive integer, not {max_iter!r}")
    for k in range(1, max_iter + 1):
        new = step(state)
        if converged(state, new):
            return Fixpoint(new, k)
        state = new
    raise ConvergenceError(f"{name} did not converge in max_iter={max_iter} steps")


class KernelStep:
    """One step of a fixpoint: a compiled kernel over the state and fixed inputs.

    Parameters: kernel, an `ep.compile`d kernel with a dense output of the
    state's shape; state, the name of the kernel's input that carries the
    state; inputs, its other inputs by name (bound once: pass ep.Tensors).
    Calling the step on a state runs the kernel with out= one of two buffers of
    the output's shape and the kernel's dtype, in turn: a result stays valid
    until two steps later (what `fixpoint` needs), never longer.

        >>> kern = ep.compile(ep.sum(j, A[j, i] * x[j]), semiring="min_plus")
        >>> step = KernelStep(kern, "x", A=ep.Tensor.from_scipy(M, "csc"))
    """

    def __init__(self, kernel, state: str, **inputs):
        self.kernel, self.state, self.inputs = kernel, state, dict(inputs)
        self._buffers: list = []
        self._turn = 0

    def __call__(self, x):
        x = np.asarray(x)
        if not self._buffers or self._buffers[0].shape != x.shape:
            dtype = self.kernel.semiring.dtype
            self._buffers = [np.empty(x.shape, dtype), np.empty(x.shape, dtype)]
        out = self._buffers[self._turn]
        if out is x or np.may_share_memory(out, x):     # a state from two steps ago
            out = self._buffers[1 - self._turn]
        self._turn = 1 - self._turn
        return self.kernel(out=out, **{self.state: x}, **self.inputs)

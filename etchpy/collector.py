"""Python's cyclic garbage collector paused over work that makes many objects
and leaves no garbage cycles: planning, lowering and rendering a kernel (its
frozen Imp nodes are built by the hundred thousand and freed by reference
counts) and decoding a stored manifest. Each allocation of a new object counts
towards the collector's next run, and a run of the oldest generation walks
the whole heap, the caller's objects too; paused, such work sets off none.

The collector is restored as it was: a pause inside a pause, or a pause while
the caller has it disabled, changes nothing. Garbage cycles made while paused
are collected by the first run after it.
"""
from __future__ import annotations

import contextlib
import functools
import gc


@contextlib.contextmanager
def paused():
    """The collector disabled inside the block when it was enabled, enabled
    again when the block ends (however it ends).

    >>> import gc
    >>> with paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def pausing(fn):
    """fn run with the collector paused (see `paused`).

    >>> import gc
    >>> pausing(gc.isenabled)()
    False
    """
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with paused():
            return fn(*args, **kwargs)
    return run

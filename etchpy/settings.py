"""Limits that change no generated C: sizes of in-process stores and the like.

They are read where they are used from `LIMITS`, one frozen value, and are not
part of any kernel's key (code-generation choices are etchpy.tuning's). A
program that wants other limits builds its own store from a `Limits` value
(e.g. `runtime.kernel_cache.KernelCache(Limits(kernel_cache=64).kernel_cache)`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """kernel_cache  compiled kernels and C helpers kept in process
                     (runtime.kernel_cache), the most recently used
    lazy_programs    recorded lazy programs (tapes) kept for replay (lazy.replay)
    lazy_interned    keys interned by lazy arrays before the table starts over
                     (lazy.keys)"""

    kernel_cache: int = 1024
    lazy_programs: int = 64
    lazy_interned: int = 1 << 15


LIMITS = Limits()

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
                     (lazy.keys)
    lazy_kept_matrices  scipy matrices whose leaf ep.lazy keeps for the next
                     wrap of the same matrix (lazy.array; 0: none)
    call_plans_per_key  call plans a kernel keeps for inputs of one kind (names
                     and types) in different size classes (runtime.call_plans)
    dask_retries     re-runs of a block task that raised (a lost worker is
                     Dask's own retry; distributed.tasks)
    dask_losses      times one distributed call sends lost data again before it
                     gives up
    dask_memory_share  the share of a worker's memory limit one block run may
                     use (distributed.resources): Dask's default spilling
                     target, above which a worker starts moving data to disk
    scratch_arrays   workspace arrays of the C helpers kept between calls
                     (runtime.scratch: the graph algorithms' buffers)
    scratch_least    the bytes below which a workspace is made new at each take
                     and not kept (the allocator hands such blocks back from
                     memory it holds, with no page to zero: cheaper than the
                     store's search; 0: every workspace from the store)
    optimized        the optimizer's results kept for compiles of the same
                     expression, options and tuning (optimizer.optimize.remembered)
    interned_nodes   expression nodes the syntax keeps, one per operation and
                     operands, before the table starts over (expr.interned; 0: none)
    aligned_arrays   alignments of compared columns kept by their index arrays,
                     for inputs bound as a new Tensor each call (a scipy
                     matrix's), each with a copy of those arrays that the next
                     call's are compared with (runtime.align; 0: none)
    sorted_inputs    orders of scipy inputs whose segments were out of order,
                     each with a copy of the index arrays it was made from,
                     which a later input's are compared with, kept from a
                     pattern's second sort among the last this many patterns
                     sorted (runtime.segment_sort; 0: none)
    sorted_bytes     the most bytes those orders hold together (a larger one
                     is not kept)
    einsum_layouts   plans an ep.einsum call over operands in other orders keeps,
                     one per combination of their strides (runtime.einsum_orders)"""

    kernel_cache: int = 1024
    lazy_programs: int = 64
    lazy_interned: int = 1 << 15
    lazy_kept_matrices: int = 4
    call_plans_per_key: int = 4
    dask_retries: int = 3
    dask_losses: int = 8
    dask_memory_share: float = 0.6
    scratch_arrays: int = 6
    scratch_least: int = 1 << 16
    optimized: int = 128
    interned_nodes: int = 4096
    aligned_arrays: int = 4
    sorted_inputs: int = 4
    sorted_bytes: int = 1 << 28
    einsum_layouts: int = 64


LIMITS = Limits()

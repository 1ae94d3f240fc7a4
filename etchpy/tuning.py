"""Every knob of the compiler, in one frozen value passed explicitly.

A `Tuning` is given to `ep.compile`, `ep.evaluate` and `ep.export_c` (`tuning=`); nothing reads
a module global. It is part of every kernel cache key (in process and on disk), so a kernel
built under one setting is never returned for another. docs/performance.md has one section per
optimisation: its rule, the field that controls it, what it was measured to gain, its test.
Two kinds of fields: switches (bool: each optimisation, strategy choice or schedule pass can be
turned off; with every switch off lowering still emits correct plain loops, one write path per
output kind) and thresholds and sizes (when an optimisation fires, and how big its pieces are).

Presets:
    DEFAULT      what `tuning=None` means
    NOOPT        every switch off: plain loops
    FORCE        every threshold at its minimum: each optimised path fires on tests
    FORCE_HASH   FORCE with every workspace a hash table (the dense one excluded)
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, fields, replace

from .saturation import Saturation, changed as _changed, full as _full


@dataclass(frozen=True)
class Tuning:
    """The compiler's knobs, one frozen value (docs/performance.md has a section
    per field: its rule, what it gains, its test). Give it as `tuning=` to
    ep.compile, ep.evaluate or ep.export_c, as a Tuning, a preset name ("default",
    "noopt", "force", "force_hash") or a dict of fields; its repr shows those changed.

    Fields (each commented in the class body below; docs/performance.md's knob
    table gives each one's default, rule and measurement), in groups: switches
    (bool, True by default but met_checks: an optimisation, strategy or schedule
    pass each); thresholds and sizes (when an optimisation fires, how big its
    pieces are; -1 in sum_lanes, walk_chain_count, run_min_entries, gather_from, gather_ragged_from, gather_from_far, prefetch_values_from,
    prefetch_block_from, run_mean_below, mesh_runs, check_first_from, row_checks, short_mean, row_stream_count, hash_probe_lanes, rank_loads, bfs_narrow_levels and
    lazy_row_block_l2: the host's value, etchpy.host_facts);
    the C helpers (sorts, huge pages, marks); planning and the optimizer
    (conversions, the cost weights, the sizes guessed when none are given,
    `saturation`: an etchpy.tuning.Saturation); lazy arrays (`lazy_*`: ep.compute's
    fusion plan); graph fixpoints (etchpy.graph's switches and thresholds); calls
    (keep_last_call, call_plans, call_binder and the other ways a call binds its
    inputs: runtime/). Every field, in the class body's order, is listed at the end.

        >>> from etchpy.tuning import Tuning
        >>> t = Tuning(prefetch=False, default_dim=10_000); t
        Tuning(prefetch=False, default_dim=10000)
        >>> kern = ep.compile(e, tuning=t)
    """

    # -- switches: strategy choices and schedule passes -----------------------
    markers: bool = True              # scatter a reused compressed row into a dense marker
    keyed_markers: bool = True        # ... a cell per (parent, coordinate), each parent's fibre scattered once a call, where priced cheaper
    bit_markers: bool = True          # ... a marker filled once per call a bit per cell
    merge_or_gallop: bool = True      # per segment pair: two-finger merge or leapfrog
    match_step: bool = True           # a two-finger merge steps both on a match by a branch
    step_fronts: bool = True          # a union of always-ready operands steps its fronts
    keep_union_index: bool = True     # a union over levels below keeps its index in a variable
    short_intersect: bool = True      # two short segments intersected at once (SIMD)
    hide_segment_counters: bool = True  # segment loops hide their counter from the vectoriser
    unhide_one_entry: bool = True     # ... not a one-position loop (C folds it away)
    unswitch: bool = True             # one loop per way of a per-segment choice
    phases: bool = True               # a union runs in phases (both valid, one, none)
    pieces: bool = True               # a level read as dense runs (a band, blocks) loops per run
    band_rows: bool = True            # ... a band of one width per call (uniform): rows unclipped
    row_blocks: bool = True           # a dense output's rows, each a Σ over a band, a block of rows at a time over their shared columns
    row_streams: bool = True          # a dense output's rows over counted runs (bands, blocks) in interleaved chunks
    runs_reserve: bool = True         # a run output's row reserves its cells of runs once, pushes unchecked
    runs_last: bool = True            # ... a push compares with the last run's value kept in a variable
    runs: bool = True                 # a Σ over a run once per run; runs × runs per overlap
    constant_sums: bool = True        # a Σ of a value no state of a counted loop changes (an iso operand's): once, n-fold
    fixed_coordinates: bool = True    # a counted loop's terms each pinned to k = c (ep.eq): once, at c
    saturated_sums: bool = True       # a Σ whose ⊕ one absorbs (boolean) stops once it is one
    flat_walks: bool = True           # a Σ over every parent's segment in turn walked as one segment
    counted_lanes: bool = True        # a dense level's float Σ over counted_sum_lanes accumulators (reassociated)
    shift_runs: bool = True           # a run list's windows at shifts filling an interval met as one (⊗ idempotent)
    shift_rows: bool = True           # ... and each row's once, kept in a ring for the rows
    register_blocks: bool = True      # a dense output's last axis in registers
    prefetch: bool = True             # prefetch gathered rows and consecutive rows
    prefetch_row_end: bool = True     # ... a gathered compressed row's last line too
    prefetch_past: bool = True        # ... a row's arrays ahead unclamped (imp.Prefetch.ahead)
    prefetch_read: bool = True        # ... a run's arrays only those its loop reads
    threads: bool = True              # honour threads > 1 (OpenMP row blocks)
    bounded_rows: bool = True         # threaded sparse rows filled in per-row bounds (not counted)
    counting_sort: bool = True        # a transposed sparse output by a counting sort
    workspaces: bool = True           # a scattered sparse output through a workspace
    first_store: bool = True          # a dense workspace's first touch stores (0 ⊕ v = v)
    kept_workspaces: bool = True      # a dense workspace's arrays (zero after its flush) kept
    empty_rows_back: bool = True      # a flush that moves nothing takes back its parent position
    zero_on_append: bool = True       # a sparse output's dense-tail value blocks taken unzeroed, each zeroed as its position is appended
    conversions: bool = True          # also convert an input when priced cheaper (C inputs change); one no order walks as declared is too
    fused_checks: bool = True         # a scipy csr/csc input walked linearly: checked by its reads
    check_count_once: bool = True     # ... bad coordinates counted once, tested after the loops
    check_lanes_once: bool = True     # ... and SIMD lanes' clamped, their maximum tested after
    check_windows: bool = True        # ... a window's rows too checked ahead (check_block)
    check_after: bool = True          # ... and their coordinates after each block (no count)
    check_first: bool = True          # ... a full loop's: before each block (read unclamped)
    check_first_near: bool = False    # ... near rows' and SIMD lanes' too, not only far rows'
    check_first_gathers: int = 2      # ... near scalar rows' too that gather this many arrays at a coordinate, a value test one (0: off)
    check_first_from: int = -1        # ... near scalar rows' too where entries/rows >= this (0: off; -1: the host's)
    walk_chains: bool = True          # ... their walks' float Σ into walk_chain_count accumulators (schedule.walk_chains)
    walk_chain_count: int = -1        # ... that many (< 2: one; -1: the host's)
    check_rows: bool = False          # ... a full loop's segments as each row opens (no pass)
    row_checks: int = -1              # ... check_rows for a scalar loop where this is 1 (0: off; -1: the host's)
    check_twins_once: bool = True     # ... not one sharing a checked input's index arrays; nor twice (A ⊙ B)
    merge_steps: bool = True          # ... a union's by its steps (no pass over coordinates)
    merge_bounds_ahead: bool = False  # ... its segments' bounds a block of rows ahead (check_block), not per row
    met_checks: bool = False          # ... an intersection's whole, a block of rows ahead
    met_prefetch: int = 0             # an intersection's rows hint the row this many on (0: off)
    entries: bool = True              # a non-unique level (coo's first) read one entry at a time (a scatter) where the output ⊕-accumulates
    entry_chains: bool = True         # ... its walk's one float Σ into entry_chain_count accumulators (schedule.entry_chains)
    entry_chain_count: int = 8        # ... that many (< 2: one)
    scatter_runs: bool = True         # ... adding each run of one output cell in a register
    gather_sums: bool = True          # a segment's dot with a dense vector (SpMV rows) in SIMD lanes
    plain_sum_lanes: bool = True      # ... and a plain sum of its values (row sums; with gather_sums)
    plain_sum_from: int = 5           # ... in lanes where rows of one length are this long (ragged ones: all)
    carry_row_start: bool = True      # a serial row loop's walk starts where the last row's ended (a register, not a load of pos[c]: schedule.row_starts)
    carry_checked_start: bool = False  # ... in the build with fused checks too (after a block's pass)
    fp_contract: bool = True          # a float kernel's multiply-adds contracted into FMA where the target has them (a pragma heading its C)
    size_switch: bool = True          # a walked level's size test (prefetch?) made before loops
    blas: bool = True                 # a dense real GEMM-shaped step calls BLAS; a three-factor one may be Khatri-Rao + GEMM
    khatri_rao: bool = True           # ... only when its temporary is no larger than the factor it multiplies (real sizes), else the fused step
    blas_operands: bool = True        # ... Σ A·f, f element-wise: f a temporary, then a GEMM
    blas_broadcast: bool = True       # ... a GEMM batched along an M or N index, the other operand read again (plan.dense.blas_roles)
    blas_cut: bool = True             # ... a chain of fused temporaries (plan.fusion) ended where its readers then run as BLAS, priced lower (plan.unfuse)
    algorithm_choice: bool = True     # per intersected level and reused row: merge, gallop or per pair, marker or not, from the fibre statistics
    map_temps: bool = True            # a libm map of dense inputs a step reaches >= map_temp_ratio times its cells: a temporary (plan.map_temps)
    map_temp_ratio: float = 2.0
    stacked_rows: bool = True         # a dense Σ over a leading axis into a vector: stacked_row_count rows a pass over it (schedule.stacked_rows)
    stacked_row_count: int = 4        # ... that many (< 2: one; ⊕ regrouped)
    stacked_row_from: int = 128       # ... where a row (the vector) is this long (0: any)
    hoist_invariants: bool = True     # a value a loop does not change (a row's factor) computed before it (schedule.invariants)
    hoist_probes: bool = True         # a located factor that is zero unless a test holds (a marker probe) tests once above the loops below
    hoist_row_tests: bool = True      # ... joined by `&` with the walked operand's own test
                                      # at that level (a row test of its entry): one branch
    guard_leaves: bool = True         # ... at a leaf level too (a failing entry adds nothing)
    guard_blocks: bool = True         # a loop's entries passing its tests listed in blocks first
    guard_located: bool = True        # ... tests that guard a located row (a line's part) too
    clip_ranges: bool = True          # a range test's other operand walked from lo (no leapfrog)
    keyed_ranges: bool = True         # a column compared in an order keyed by it: a code range
    fused_rows: bool = True           # the steps of a dense output each writing every cell once
                                      # share one loop, each cell stored once from a register;
                                      # one step writing each cell at most once stores
    fill_gaps: bool = True            # ... a box's cells stored once (a stencil's inside): the rest filled
    window_walk: bool = True          # a compressed level read through a step-1 window walked
                                      # whole, the window a test per coordinate (streams.window)
    window_keep: bool = True          # ... its far rows' terms kept by their bytes, no branch
    window_fill_lanes: bool = True    # ... window_blocks' fill in AVX-512 lanes, hits compressed
    bool_product_min: bool = True     # a boolean product of n factors as the bytes' unsigned minimum, one test
    overlap_tail: bool = True         # a dense store loop of bytes in blocks of overlap_values, its last
    overlap_values: int = 32          # block overlapping the one before (lower.schedule.overlap_tail)
    fused_temporaries: bool = True    # a temporary a sparse walk makes and the next step reads as a factor: a workspace in its maker's loops (plan.fusion)
    access_order: bool = True         # loop orders priced with their strided dense reads; a
                                      # temporary laid out in its reader's order where it can be
    written_nesting: bool = True      # a Σ nested in a product as written may run as its own step where priced cheaper than flattened (plan.nesting)
    keep_last_call: bool = True       # the last call's arrays or Tensors: its binding reused
    call_plans: bool = True           # a call on inputs of a kind already run runs its plan
    plan_casts: bool = True           # ... numpy inputs it casts or copies contiguous too
    scipy_transpose: bool = True      # csr given for csc (or back): scipy's transposition
    adopt_layouts: bool = True        # ... or a kernel planned declaring it so (runtime.adopt)
    dense_orders: bool = True         # ... a numpy array in Fortran (any permuted) order too (runtime.dense_orders)
    input_formats: bool = True        # ep.evaluate of a statement: the inputs' own formats
    call_binder: bool = True          # ... made in C where its inputs allow (runtime.binder)
    binder_casts: bool = True         # ... its copy or cast of a strided / other-dtype array too
    sparse_plans: bool = True         # ... for sparse outputs too (arrays the kernel grows)
    numpy_einsum: bool = True         # ep.einsum of one numpy operand under (+, ×) is numpy's
    blas_casts: bool = True           # ... of a real product of other dtypes: cast, then matmul
    one_walk: bool = True             # factors over the same index arrays walked once
    walk_plans: bool = True           # ... a call on the last call's Tensors by a call plan
    apart_first: bool = True          # ... ep.Tensor calls apart: the plan before the walk
    apart_in_c: bool = True           # ... its guard made in C with the binder's plan
    blas_numpy_first: bool = True     # BLAS kernels call numpy's OpenBLAS, even with scipy's cython_blas imported (runtime.blas)
    sink_located: bool = True         # ... a located table's one-child levels read last
    dense_runs: bool = True           # ... a run of summed levels from a dense first level
    defer_written: bool = True        # ... the written form lowered on first need (runtime.deferred)
    narrow_compared: int = 0          # ... compared-only columns read narrow, flat_mask blocks (0: off)
    aligned_once: bool = True         # compared columns of other structures: alignment kept (runtime.align)
    aligned_in_kernel: bool = True    # ... read through kept positions, not gathered (expr.through)
    # -- thresholds and sizes -------------------------------------------------
    seek_linear: int = 8              # single steps of a skip before it gallops
    one_walk_from: int = 4096         # ... its ep.Tensors of fewer entries run as written (0: any)
    one_walk_terms: int = 64          # a sum over one structure walked once: at most this
                                      # many products multiplied out (0: no sum; expr.sums)
    gallop_ratio: int = 16            # gallop when one segment is this many times longer
    fibre_spread: float = 8.0         # longest fibre / mean from this: per-pair choice kept
    marker_probe: float = 0.6         # a marker probe's cost against one merge step
    filter_sparse_below: float = 0.125  # Keys.mask/like: stored sparse when at most this share of codes pass
    keyed_marker_cells: int = 1 << 21  # a keyed marker's largest scratch (parents x dim)
    unswitch_limit: int = 100         # bodies up to this many statements unswitched (size_switch's)
    sum_lanes: int = -1               # a run's sum (band, block) over this many accumulators, then a quarter (floats reassociate; 1: one; -1: the host's)
    counted_sum_lanes: int = 16       # counted_lanes' accumulators, then a quarter (1: one; every host: its loops are long)
    short_pieces: int = 3             # ... a run of exactly this many added straight-line (0: off)
    short_mean: int = -1              # ... a block list of a shorter mean block (positions / blocks) walked flat, its rows prefetched once (0: off; -1: the host's)
    saturated_block: int = 256        # saturated_sums' terms between its tests (< 1: off)
    band_widths: tuple = (3, 5, 7, 9)  # band_rows' widths fixed as constants, straight-line rows
    row_block: int = 12               # rows in a block of row_blocks (< 2: off)
    row_block_lanes: int = 4          # ... accumulators a row over the shared columns
    row_block_min: int = 512          # ... only where the rows' mean run and a block's shared columns are this long
    band_row_streams: int = 4         # band_rows' fixed-width rows in this many interleaved streams (< 2: off)
    run_lanes: int = 2                # a full Σ over a zip of two run lists a row: chunks of rows in this many lockstep lanes (< 2: off)
    run_lanes_below: int = 48         # ... where the list of fewer runs has a mean run below this many cells (0: any)
    short_segment: int = 4            # entries of a short segment (the SIMD width)
    gather_from: int = -1             # ... real sums' rows of one length >= this (-1: the host's, host_facts)
    gather_ragged_from: int = -1      # ... ragged rows of a mean >= this (0: half of gather_from; -1: the host's)
    gather_from_far: int = -1         # ... gather_from where the far pick holds (0: gather_from; -1: the host's)
    gather_ragged_far: int = 28       # ... gather_ragged_from where far_rows' pick holds, if below it (0: off)
    gather_mild_far: int = 18         # ... and far ragged rows of a mean >= this (0: off) ...
    gather_mild_spread: int = 4       # ... whose lengths' sd is <= their mean / this
    window_walk_long: int = 32        # window walks' longer segments narrowed by two searches
    window_walk_stop: int = 8         # longer segments of its sum search and stop (0: never)
    window_prefetch: int = 128        # ... its far gathers prefetched this many states ahead
    window_prefetch_rows: int = 16    # ... a strided window's: the entries this many rows on
    window_rows_ahead: int = 16       # ... its near rows: crd and values this many rows on
    window_rows_span: int = 32        # ... their lines of this many entries (0: off)
    window_blocks: int = 1024         # ... far rows' hits (x small) kept, gathered in blocks
    window_blocks_ahead: int = 48     # ... x of the hit this many on prefetched; x large too
    window_blocks_share: int = 3      # ... where the window keeps <= 1/this of the columns
    window_blocks_wide: int = 1 << 21  # ... or x holds this many bytes or more (0: never)
    check_block: int = 1024           # parents a fused check's flat pass tests ahead (0: none)
    check_first_block: int = 64       # ... a block's where check_first tests its coordinates too
    hash_workspace_dim: int = 1 << 22  # workspaces over larger dimensions are hash tables
    hash_initial: int = 256           # a hash workspace's first table size (a power of two)
    hash_output_initial: int = 8192   # a hash output's first table (slots, rounded up to a power of two; 0: hash_initial)
    hash_probe_lanes: int = -1        # a hash probe's first slots compared at once: 8 (AVX-512), 4 (AVX2) (< 2: off; -1: the host's)
    initial_capacity: int = 1024      # first allocation of a sparse output's arrays
    first_capacity_limit: int = 1 << 24  # a larger bound is not trusted for the first allocation
    prefetch_distance: int = 16       # states ahead a gathered row is prefetched
    prefetch_span: int = 64           # values of each gathered row prefetched
    prefetch_values: int = 64         # states ahead a gathered value (x[j]) is prefetched (0: off)
    prefetch_values_from: int = -1    # ... when its operand has this many bytes (0: prefetch_min_bytes; -1: the host's)
    row_stream_count: int = -1        # row_streams' chunks, memory streams of rows (< 2: off; -1: the host's)
    prefetch_guarded: int = 64        # entries ahead a guarded fibre is prefetched (0: off)
    prefetch_guard_reads: int = 32    # ... a located read under a range test (0: off)
    guard_block: int = 4096           # ... guard_blocks' block of entries (0: off)
    guard_blocks_ahead: int = 8       # ... a listed entry's fibre prefetched this many on (0: off)
    guard_blocks_far: int = 16        # ... its own reads (a line's part code) this many on (0: off)
    guard_mask: int = 8               # ... its first tests a mask over the block, listed by groups of this many entries, none-passing skipped (0: off)
    flat_mask: int = 0                # ... a flat sum's tests a byte mask over blocks of this many (0: off)
    prefetch_min_bytes: int = 1 << 20  # smaller operands are not prefetched
    prefetch_index_bytes: int = 4     # ... a compressed row's entry counted with its index
    prefetch_near_share: int = 8      # nor a segment's spanning <= 1/this of its dim (0: off)
    prefetch_block_from: int = -1     # nor a register block's rows of under 4 lines from a smaller operand (0: prefetch_min_bytes; -1: the host's)
    run_ahead: int = 256              # entries ahead of a segment's start prefetched
    run_short: int = 0                # shorter segments prefetch nothing (0: no test)
    run_long: int = 32                # longer segments prefetch at every step
    run_min_entries: int = -1         # levels with fewer entries prefetch nothing (-1: the host's)
    run_mean_below: int = -1          # ... nor those of a mean segment this long (0: any; -1: the host's)
    mesh_runs: int = -1               # ... nor, where this is 1, far rows of near steps (a mesh's; 0: off; -1: the host's)
    run_far_bytes: int = 1 << 15      # far gathers from more: a row's values not prefetched
    run_lines: int = 32               # lines a counted run (band, row of blocks) prefetches
    piece_ahead: int = 512            # ... from this many entries past its start
    piece_short: int = 8              # ... when it has this many entries (a line of doubles)
    block_sizes: tuple = (1, 2, 3, 4, 6, 8, 16, 32)  # extents of an output's last axis in registers
    block_strips: tuple = (4, 8, 16, 32)  # other extents: strips of the widest <= it, the last overlapping
    unit_arms: bool = True            # an output's last index of extent 1 run by the kernel with it dropped
    keep_call_bytes: int = 1 << 20    # a kept call's inputs hold at most this many bytes
    chunks_per_thread: int = 16       # blocks of rows per thread, taken dynamically
    thread_min_work: int = 1 << 16    # loop iterations below which threads stay asleep (0: off)
    # -- the C kernel's helpers (codegen_templates/kernel.c.j2) ---------------
    huge_page_bytes: int = 4 << 20    # heap arrays this large ask for huge pages, grow anew
    map_bytes: int = 128 << 10        # heap arrays this large mmapped, kept when freed (0: none)
    spare_age: int = 8                # ... a kept one untaken this many releases: any freed one replaces it (0: only a larger)
    kept_pages_below: int = 1 << 20   # ... one smaller keeps its pages (no MADV_FREE; 0: none)
    sort_run: int = 16                # ep_sort_idx insertion-sorts runs this short (>= 2), and nearly sorted ones before a rank sort
    sort_near_places: int = 2         # ... nearly: no index more than this many places late
    sort_near_share: int = 8          # ... tried when its ends are <= 1/this of the dimension apart
    rank_sort_max: int = 128          # ... and sorts runs this short by rank (no branch on the data; 0: off)
    rank_loads: int = -1              # ... a rank block of 16 read by one masked load where 1, not lane by lane (-1: the host's)
    sort_net: int = 16                # ... those of <= this (16, 32; 0: off) by a network
    sort_place: bool = True           # ... those it would rank written to their ranked places
    marks_walk_min: int = 41          # fewer touched indices are sorted, not walked by marks
    marks_walk_spread: int = 4        # marks are walked when their range spans this many summary words a touched index
    # -- planning and the optimizer ------------------------------------------
    rewrite_margin: float = 0.5       # compile a rewrite when it costs at most this share
    measured_relief: float = 1.8      # ... times this for sizes measured on the inputs (no guess)
    default_dim: int = 1000           # an index size guessed when none is known
    sparse_density: float = 0.01      # a sparse input's density guessed when none is known
    temp_weight: float = 4.0          # cost of a materialised entry against a visited one
    stride_weight: float = 1.0        # cost of a strided read against a visited record
    contiguous_weight: float = 0.5    # cost of a record of a unit-stride dense inner loop
    scatter_weight: float = 1.0       # ... of a dense temporary's record a sparse walk placed (0: none)
    blas_gain: float = 7.0            # dense loops' multiply-add over BLAS's (product_cost)
    blas_call: float = 2e3            # ... and a BLAS call's fixed cost (plan.dense.operand_temps)
    strided_copy_bytes: int = 1 << 20  # ep.einsum: a strided matrix copied for BLAS up to this
    einsum_orders: int = 1 << 12     # ep.einsum: operands in another order from these cells give theirs to the output (0: off)
    cache_cells: int = 1 << 12        # cells a loop may leave and revisit in cache (more: strided)
    orders_tried: int = 120           # loop orders priced a step (up to this many; plan.convert)
    conversion_choices: int = 16      # combinations of input conversions per loop order
    dense_conversion_elements: int = 1 << 16  # a conversion to dense is priced up to this
    dense_conversion_share: float = 0.25      # many elements, or from this density
    nesting_exhaustive: int = 4       # every keep/flatten priced up to this many factor points
    layout_slack: float = 1.1         # a temporary in its reader's order if its work grows <= this
    saturation: Saturation = Saturation()
    # -- lazy arrays' fusion plan (etchpy.lazy.fusion; docs/lazy.md) ----------
    lazy_step_cost: float = 2e4       # cost units of one kernel step beyond its work
    lazy_library_step: float = 5e3    # ... of a scipy product step (etchpy.lazy.steps)
    lazy_library_work: float = 0.8    # a scipy product's work against a kernel's (no checks)
    lazy_matvec_library_work: float = 1.0   # ... of a sparse input times a vector (SpMV)
    lazy_libm_cost: float = 20.0      # per entry of a libm map fused in a kernel (maps.c_libm)
    lazy_row_block_bytes: int = 2 << 20   # Xᵀ·f(X·W), X dense of at least lazy_row_block_min
    lazy_row_block_min: int = 16 << 20    # bytes: by row blocks of X this size (0: never; lazy.rows)
    lazy_row_block_l2: int = -1       # ... or X > a host L2 of at least this, by its halves (0: no; -1: the host's)
    lazy_exhaustive: int = 6          # candidates searched exhaustively; more greedily
    lazy_fast_replay: bool = True     # a replay as one written-out function (lazy.fast_replay)
    lazy_c_nodes: bool = True         # operators in C for arrays built after (lazy.c_nodes)
    lazy_c_memo: bool = True          # ... finding a pattern by its operands' identity first
    lazy_node_bytes: int = 1 << 18    # ... same nodes for the same arrays ≤ these bytes, scipy leaves (0: off)
    lazy_node_large: int = 4 << 20    # ... and for one larger array of ≤ these (0: none; binder_nodes)
    lazy_c_blas: bool = True          # a replay's dense products by BLAS from the binder
    lazy_blas_tall: int = 1 << 20     # ... thin results over ≥ these bytes, M long (0: never)
    lazy_blas_epilogue: bool = True   # ... with the one operation of a region reading it alone
    lazy_dense_products: bool = True  # a product of dense values materialised by BLAS (@)
    lazy_region_scalars: bool = True  # a numpy region's scalars as 0-d arrays of their dtype
    lazy_region_direct: bool = True   # ... its maps as their ufunc's call, out positional
    lazy_region_c: bool = True        # ... replayed by numpy's loops from the binder
    lazy_c_tape: bool = True          # a replay whose every step the binder makes run by it
    lazy_spmm_columns: int = 16       # sparse input @ dense of ≥ these columns (0: never)
    lazy_spmm_work: int = 1 << 17     # ... and nnz·columns: a kernel, not scipy (lazy.spmm)
    lazy_thin_loop: bool = True       # else ≤ 16 columns: a checked C loop, not scipy's (lazy.thin)
    lazy_seconds: float = 0.1         # e-graph seconds per lazy kernel (tuning=None only)
    # -- graph fixpoints (etchpy.graph, c/frontier.py; docs/graphs.md) --------
    pull_rounds: bool = True          # a boolean round may pull in-edges (Beamer et al.)
    distance_buckets: bool = True     # Bellman-Ford without negative weights by buckets
    bfs_check_first: bool = True      # a scipy input's BFS checks every index before its walk
    bfs_warm_bytes: int = 2 << 20     # ... a Graph's too when they take at most this many bytes
    bfs_narrow_levels: int = -1       # BFS walks int32 levels, widened into its int64 output (-1: the host's)
    graph_binder: bool = True         # a small graph's BFS called in C (graph.binder)
    rows_in_c: bool = True            # coo/csc read in C: BFS, Bellman-Ford, PageRank rows
    pull_measured: bool = True        # pulls priced by the in-edge share one reads (sampled)
    pull_alpha: float = 4.0           # pull when F's out-edges > unreached in-edges / this
    pull_beta: float = 24.0           # push again when |F| < n / this
    rounds_above: int = 64            # rounds before buckets while F's out-edges double or are >= nnz/this (0: none)
    bucket_count: int = 64            # a bucket is >= 1/this of the largest weight
    dense_rounds: int = 16            # a round with >= n/this out-edges scans all n (0: never)
    scan_below: int = 1 << 18         # driver="python": smaller graphs scan every vertex

    def key(self) -> str:
        """A stable text of every field (nested ones too), for cache keys:
        >>> Tuning().key()    # 'Tuning(markers=True, merge_or_gallop=True, ...)'"""
        if (key := self.__dict__.get("_key")) is None:  # once: a frozen Tuning's fields stay
            key = _full(self)
            object.__setattr__(self, "_key", key)
        return key

    def __hash__(self):
        """The fields' hash, worked out once (a compute hashes its Tuning thrice a call)."""
        if (h := self.__dict__.get("_hash")) is None:
            h = hash(tuple([getattr(self, f.name) for f in fields(self)]))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self):         # a pickle's process works the hash out afresh
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self):
        """The fields that differ from the defaults: `Tuning(prefetch=False)`."""
        return f"Tuning({', '.join(_changed(self, Tuning()))})"

    def with_(self, **changes) -> "Tuning":
        """A copy with some fields changed by name:
        >>> tuning.NOOPT.with_(prefetch=True)"""
        return replace(self, **changes)


if Tuning.__doc__:                          # None under python -OO
    Tuning.__doc__ += "\n    Every field: " + textwrap.fill(
        ", ".join(f.name for f in fields(Tuning)), 88, subsequent_indent="        ") + ".\n"

DEFAULT = Tuning()
NOOPT = Tuning(**{f.name: False for f in fields(Tuning) if f.type in ("bool", bool)})

FORCE = Tuning(
    unswitch_limit=10**9, hash_initial=2, hash_output_initial=2, initial_capacity=1, first_capacity_limit=1,
    prefetch_min_bytes=0, run_ahead=1, run_short=0, run_long=1, run_min_entries=0, mesh_runs=0,
    piece_ahead=1, piece_short=1, row_block_min=0, window_walk_long=1,
    block_sizes=(1, 2, 3, 4), chunks_per_thread=1, thread_min_work=0, hash_workspace_dim=1 << 62,
    pull_alpha=1e9, pull_beta=1.0, rounds_above=1, bucket_count=1, map_temp_ratio=0.0, scan_below=0, pull_measured=False,
    flat_mask=16, row_stream_count=4, hash_probe_lanes=8)
FORCE_HASH = FORCE.with_(hash_workspace_dim=0)
FIXPOINT = DEFAULT.with_(run_ahead=128, run_short=1, run_long=1 << 62, run_min_entries=0, mesh_runs=0)  # pagerank's C loop

PRESETS = dict(default=DEFAULT, noopt=NOOPT, force=FORCE, force_hash=FORCE_HASH, fixpoint=FIXPOINT)


def of(x) -> Tuning:
    """A Tuning from None (DEFAULT), a preset name, a dict of fields, or a Tuning."""
    if x is None:
        return DEFAULT
    if isinstance(x, Tuning):
        return x
    if isinstance(x, str):
        try:
            return PRESETS[x]
        except KeyError:
            raise ValueError(f"unknown tuning preset {x!r}; presets are "
                             f"{', '.join(PRESETS)}") from None
    if isinstance(x, dict):
        return Tuning(**x)
    raise TypeError(f"tuning must be a Tuning, a preset name or a dict, not {type(x).__name__}")

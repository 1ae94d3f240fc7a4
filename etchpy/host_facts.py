"""Facts of the host, read once per process and turned into Tuning values at
compile time: a Tuning field whose default is -1 (the host's) is resolved here, by
`resolved`, where it is read: by the passes that use it, in the kernel's key on disk
(runtime.request.request_key) and in its banner (explain()), so the value the
kernel was compiled with is named there; a kernel keeps the Tuning it was given
(its `tuning`), and an explicit value always wins.

The facts so far: `gather_from`, the row length from which a real SpMV's rows
of one length run in ep_gather_sum's AVX-512 gather lanes instead of the scalar
loop (lower/schedule/gather_sums.py, ep_gather_pick), `gather_ragged_from`, the
mean row length from which ragged rows do (0: half of the pick's gather_from),
and `gather_from_far`, the same as gather_from where the rows gather from a far x
(lower/schedule/value_prefetch.py; 0: gather_from). `run_mean_below`: the mean
row length (entries over rows, exact, tested once a call with the level's size)
from which consecutive rows' arrays are not prefetched (lower/schedule/prefetch.py,
runs_wanted; 0: no limit, Intel's C unchanged; 16 on AMD Zen 4, session 57:
docs/performance.md, "Long rows left to the hardware prefetcher on AMD Zen"). They are a table of CPU facts
(/proc/cpuinfo's vendor and family), not a calibration: the kernels compile on
hosts loaded by other work, where a few-millisecond timing of lanes against the
scalar loop would flip between processes, and with it the C, its cache key and
golden files; the vendor and family do not. The values were measured
(docs/performance.md, "The SpMV row arm from the host", session 55): on Intel
(sessions 35-54) the lanes win from rows of 6 (5 far), ragged ones from half
that; on AMD Zen 3/4 (family 25) from rows of about 24, far or not, and ragged
ones (scikit-fem meshes' rows) from a mean of about 36 (session 56).

`check_first_from`, the mean row length (entries over rows, exact, tested once
a call) from which a checked SpMV's near scalar rows are tested a block at a
time before their walks instead of clamped (lower/schedule/checks_first.py,
long_rows): 0 (off, Intel's C unchanged) on Intel; 20 on AMD Zen 4, where
tetP2's rows of 25 ran 7-8% faster so and rows of 5-12 slower
(docs/performance.md, sessions 58 and 59).

`run_min_entries`, the entries from which a level's consecutive rows (and far
rows' gathered values) are prefetched (lower/schedule/prefetch.py, large_runs):
2¹⁹ on Intel (the C as before); 1.375 · 2²⁰ on AMD Zen, whose 32 MiB L3 holds a
matrix of a million entries that its hardware prefetchers then follow better
than the rows' prefetches (session 71, the whole call of an SpMV on a scipy
input against scipy: 2-D Poisson 400² 1.12 -> 0.87, 3-D 50³ 1.00 -> 0.82,
scikit-fem's triP2 r7 1.04 -> 0.90); from about 1.45e6 entries the prefetches win
again (2-D 550² 0.75-0.80 with them, 0.92 without; 3-D 60³ 0.72-0.76 / 0.91).
Session 72 moved the line from 1.25 · 2²⁰ (1.31e6), which scikit-fem's P1
Laplacian of 1.314e6 entries passed: 1.03 -> 0.91 (2-D 520², 1.35e6: 1.05 ->
0.93); at 1.40e6-1.49e6 both read alike (docs/performance.md, session 72).

`walk_chain_count`, the accumulators into which a checked SpMV's long rows (those
tested before their block: check_first_from) add their terms
(lower/schedule/walk_chains.py): 2 on AMD Zen 4, where a row's one chain of adds
bounds the walk (session 71: rows of 25-40 entries 0.78-0.86 of the one-chain loop
in two, no faster in four), and so where that arm holds the call's lanes are not
picked; 1 (one chain; Intel's C unchanged, its check_first_from is 0) elsewhere.

`mesh_runs`, 1 where a level whose rows are far (ep_far_pick: most span more
than an eighth of the columns) and near (ep_near_pick: half their steps within 8
columns), a mesh's rows as a finite-element code numbers them, takes none of
the prefetched sizes' code (lower/schedule/mesh_runs.py): 1 on AMD Zen 4, where
scikit-fem's matrices of 1.6e6-5.2e6 entries ran their SpMV 1.03-1.24x scipy with
it and 0.90-0.95x without (session 75); 0 elsewhere (Intel's C unchanged).

`row_checks`, 1 where a checked kernel's serial loop of scalar walks (an SpMV's
near rows below the prefetched sizes, a csc SpMV's scattered columns) tests each row's segment as it opens, its
start carried by the walk, instead of a pass over pos a block ahead
(Tuning.check_rows' form, lower/schedule/row_checks.py): 1 on every host, Intel
(session 62: rows of 5 at 1.01-1.02 of the unchecked build, from 1.10-1.12) and
AMD Zen 4 (session 70: 2-D Poisson at 1e5 entries 1.23 -> 1.08 of the unchecked
build; it was 0 there from session 55, when the rows' test, before its start was
carried, lost to the pass). Kept a fact so that a host where the pass wins can
say so again; docs/performance.md, "Rows tested as each opens on AMD Zen too".

`row_stream_count`, the interleaved streams in which a dense output's rows over
bands or block lists run (lower/schedule/row_streams.py; band_rows' fixed-width
rows take Tuning.band_row_streams, 4 on every host): 4 on Intel (session 53);
1 (one stream, rows in order) on AMD Zen 4, where four streams made block lists
1.5-2x and bands of 15 to 255 1.05-2x slower than one (docs/performance.md,
"Row streams on AMD Zen: one", session 57).

`hash_probe_lanes`, the slots a hash level's probe (ep_probe: a probed hash
operand, a hash output's and a hash workspace's table) compares at once before
stepping by one: 0 (one slot a step, Intel's C unchanged) on Intel; 8 on AMD
Zen (AVX-512 lanes, or AVX2's 4 where the build has no AVX-512), where the
one-by-one loop's exit, taken or not by how full the table is, cost a probed
vector 2-3x (docs/performance.md, "Hash probes in lanes on AMD Zen", session 58).

`rank_loads`, 1 where the rank sort of a short touched row (ep_ranks: a
workspace's flush, SpGEMM's rows) reads each block of 16 indices by one masked
AVX-512 load, 0 where it puts the block together lane by lane from scalar
loads: 0 on Intel (session 37: a vector load of indices just stored one at a
time waited for those stores to leave the store buffer, 57% of the sort's
samples); 1 on AMD Zen 4, where the masked load took up to 15% off scipy-input
SpGEMM with rows of 13-25 out (3-D Poisson A·A 1.17 -> 1.00x scipy), longer rows
within noise (docs/performance.md, "SpGEMM: each build frees what it made; rank
blocks by one load on AMD Zen", session 83).

`sum_lanes`, the accumulators of a band's or a block's run sum
(lower/schedule/pieces.py: that many, then a quarter as many): 16 on Intel;
4 on AMD Zen 4, where gcc leaves the 4-lane stage that follows a 16-lane one
scalar, and the runs of 4 to 15 entries of block lists (d = 2..5) and bands of
15 are summed there (docs/performance.md, "Sums of runs in four lanes on AMD
Zen", session 58).

`prefetch_block_from`, the bytes of a gathered operand from which the rows a
register block sums (SpMM's X[j,:] in an arm of a few columns) are prefetched
when under 4 lines (lower/schedule/prefetch.py, _gather): 0 (prefetch_min_bytes,
1 MiB; Intel's C unchanged) on Intel; 32 MiB on AMD Zen 4, where its L3 serves
them faster than the prefetches and their tests; rows of 4 lines and more and
the gathers outside register blocks (SDDMM's, SpGEMM's) keep theirs
(docs/performance.md, "Checked SpMM walks order-free", session 73).

`bfs_narrow_levels` (a BFS's walk over int32 levels widened into its int64
output, or over the int64 output itself) is read by etchpy.graph where a BFS
runs (`narrow_levels`), not by a kernel's passes, so it is in no kernel's key:
on Intel (session 45) the int32 walk won; on AMD Zen 4 (session 56,
docs/performance.md "BFS levels on an AMD host") the int64 walk, with no
widening pass after it, is 0-25% faster.
`lazy_row_block_l2` (a lazy program's Xᵀ·f(X·w) by row blocks of half the L2
when a dense X exceeds it, etchpy.lazy.rows) is a host fact read by the lazy
plan only (no kernel reads it: it is resolved where read, by `row_block_l2`,
not in a kernel's key or banner): on AMD Zen 3/4 the blocks lose at every size
measured (docs/performance.md, "ep.lazy's row blocks by the L2 off on AMD
Zen", session 56: its L3 feeds a core's gemv about as fast as the L2 saves,
less than a block's calls cost), so 0 (off) there, 1 MiB elsewhere.
"""
from __future__ import annotations

import functools

from .errors import InputError

@functools.cache
def cpu() -> tuple[str, int]:
    """(vendor_id, cpu family) of the first processor in /proc/cpuinfo, or
    ("", 0) where it cannot be read (another OS: the Intel values apply)."""
    vendor, family = "", 0
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "vendor_id" and not vendor:
                    vendor = value
                elif key == "cpu family" and not family and value.isdigit():
                    family = int(value)
                if vendor and family:
                    break
    except OSError:
        pass
    return vendor, family


def zen(facts: tuple[str, int] | None = None) -> bool:
    """Whether the CPU (facts: (vendor, family), this host's by default) is an AMD
    Zen 3 or later (family 25 and on)."""
    vendor, family = cpu() if facts is None else facts
    return vendor == "AuthenticAMD" and family >= 25


def gather_from(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.gather_from."""
    return 24 if zen(facts) else 6


def gather_ragged_from(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.gather_ragged_from (0: half of the pick's gather_from)."""
    return 36 if zen(facts) else 0


def gather_from_far(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.gather_from_far (0: gather_from's)."""
    return 0 if zen(facts) else 5


def prefetch_values_from(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.prefetch_values_from (0: prefetch_min_bytes): 4 MiB on AMD
    Zen, whose L3 serves a gathered x of a few MiB faster than its prefetches do."""
    return 4 << 20 if zen(facts) else 0


def prefetch_block_from(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.prefetch_block_from (0: prefetch_min_bytes): 32 MiB on AMD
    Zen, whose L3 serves a register block's gathered rows of under 4 lines faster
    than their prefetches do (the block's chain of adds bounds the walk)."""
    return 32 << 20 if zen(facts) else 0


def run_mean_below(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.run_mean_below (0: rows of any mean length prefetch their
    arrays): 16 on AMD Zen, whose hardware prefetcher follows rows of 16 entries
    and more at least as well as one prefetch a row does."""
    return 16 if zen(facts) else 0


def check_first_from(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.check_first_from (0: off): 20 on AMD Zen, whose scalar
    walks of rows of about 25 entries run 7-8% faster tested before their block
    than clamped, where rows of 5-12 run slower (session 58 and 59)."""
    return 20 if zen(facts) else 0


def run_min_entries(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.run_min_entries: 1.375 · 2²⁰ on AMD Zen, 2¹⁹ elsewhere."""
    return 11 << 17 if zen(facts) else 1 << 19


def walk_chain_count(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.walk_chain_count (< 2: one chain): 2 on AMD Zen, 1 elsewhere."""
    return 2 if zen(facts) else 1


def row_checks(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.row_checks (0: off): 1 on every host read so far. On
    Intel a checked SpMV's scalar rows of 5 ran 1.10-1.12 of the unchecked build
    with the pass over pos and 1.01-1.02 tested as each opens, its start carried
    (session 62); on AMD Zen 4 1.23 against 1.08 (session 70). A csc SpMV's
    scattered columns take it too (docs/performance.md, "A csc SpMV's columns
    tested as each opens")."""
    return 1


def mesh_runs(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.mesh_runs (0: off): 1 on AMD Zen, 0 elsewhere."""
    return 1 if zen(facts) else 0


def short_mean(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.short_mean (0: off): 8 on AMD Zen, where block lists of
    blocks of 6 walked flat ran 1.31 -> 1.00 of csr (session 59); 3 elsewhere,
    where blocks of 3 and 4 in rows of 27-36 entries ran 1.6x slower flat than
    split (and blocks of 1 and 2 twice as fast flat; session 61, Intel Xeon)."""
    return 8 if zen(facts) else 3


def row_stream_count(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.row_stream_count (< 2: rows one by one): 1 on AMD Zen,
    whose prefetchers follow one stream of band or block rows faster than four."""
    return 1 if zen(facts) else 4


def hash_probe_lanes(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.hash_probe_lanes (< 2: one slot a step): 8 on AMD Zen."""
    return 8 if zen(facts) else 0


def rank_loads(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.rank_loads (0: a rank block put together lane by lane):
    1 on AMD Zen, where one masked load of the block ran the sort of a touched
    row faster; 0 elsewhere, where that load waited on the list's stores."""
    return 1 if zen(facts) else 0


def sum_lanes(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.sum_lanes: 16 (four 4-wide vectors, then a quarter as
    many); 4 on AMD Zen, where gcc, given a 16-lane stage first, leaves the
    4-lane stage after it scalar, and runs of 4 to 15 entries (block lists of
    d = 2..5, bands of 5 to 15) are summed by that stage."""
    return 4 if zen(facts) else 16


FIELDS = (("sum_lanes", sum_lanes), ("gather_from", gather_from), ("gather_ragged_from", gather_ragged_from),
          ("gather_from_far", gather_from_far), ("prefetch_values_from", prefetch_values_from),
          ("prefetch_block_from", prefetch_block_from),
          ("run_mean_below", run_mean_below), ("mesh_runs", mesh_runs),
          ("check_first_from", check_first_from),
          ("walk_chain_count", walk_chain_count), ("run_min_entries", run_min_entries),
          ("row_checks", row_checks), ("short_mean", short_mean), ("row_stream_count", row_stream_count), ("hash_probe_lanes", hash_probe_lanes),
          ("rank_loads", rank_loads))


def bfs_narrow_levels(facts: tuple[str, int] | None = None) -> bool:
    """The host's Tuning.bfs_narrow_levels: not on AMD Zen 3 and later."""
    return not zen(facts)


def narrow_levels(tuning) -> bool:
    """tuning.bfs_narrow_levels, the host's where it is -1."""
    v = tuning.bfs_narrow_levels
    return bfs_narrow_levels() if v == -1 else bool(v)


def lazy_row_block_l2(facts: tuple[str, int] | None = None) -> int:
    """The host's Tuning.lazy_row_block_l2 (0: the L2 rule off)."""
    return 0 if zen(facts) else 1 << 20


def row_block_l2(tuning) -> int:
    """tuning's lazy_row_block_l2, the host's value where it is -1."""
    value = tuning.lazy_row_block_l2
    return lazy_row_block_l2() if value == -1 else value


def resolved(tuning):
    """tuning with each field at -1 set to the host's value (tuning itself when none
    is); a field that is not an int of -1 or more is refused (InputError), since
    it is written into the C."""
    for name, _ in FIELDS:
        value = getattr(tuning, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < -1:
            raise InputError(f"Tuning.{name} must be an int >= 0, or -1 for the host's "
                             f"value; got {value!r}")
    changes = {name: value() for name, value in FIELDS if getattr(tuning, name) == -1}
    return tuning.with_(**changes) if changes else tuning

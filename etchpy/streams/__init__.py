"""Indexed streams (after Etch). Other layers import them from this face.

    stream       the record (the Etch fields, a search label, typed facts)
    facts        each fact and hint, with its contract
    combinators  range, replicate, mul, add, guard, contract, map_leaf
    levels       the read stream of a stored level
    runs         the read stream of a run list, and the product of two
    from_expr    expressions to streams (Lowerer, lower_step)
    eval         the evaluation ⟦s⟧ on the Imp interpreter
"""
from .combinators import (add, contract, guard, intersect_by_leapfrog,
                          intersect_by_merge_or_leapfrog, iterate_locate, map_leaf, mul,
                          order_le, prelude, range_stream, replicate, union_by_skipping,
                          union_by_stepping_fronts)
from .eval import StreamInvariantError, declare, describe, run_stream
from .facts import (NO_FACTS, RUN_FACTS, Ahead, Block, Blocks, Choice, Counter, Covers, Entries,
                    Full, Extent, Fact, Facts, Flat, Span, Hint, Locate, Most, Pieces, Prefetch, Prelude,
                    Repeats, Runs, Scatter, Segment, Short, Split, Walk)
from .from_expr import Binding, Lowerer, array_names, dim_var, hidden, lower_step
from .merged import Merged, Met, Stepped, note as merged_note
from .levels import blocks_level, dense_level, level_stream, segment_level, band_level
from .runs import has_runs, is_runs, join_runs, meet_runs, runs_product, zip_runs, runs_level
from .stream import (Stream, Value, blocks_of, counter_range, is_stream, levels_of,
                     most_bound, walk_of, with_prefetch)

__all__ = [
    "Stream", "Value", "is_stream", "levels_of", "counter_range", "most_bound", "blocks_of",
    "with_prefetch", "walk_of",
    "Fact", "Hint", "Facts", "NO_FACTS", "RUN_FACTS", "Locate", "Prelude", "Most", "Full",
    "Counter", "Choice", "Split", "Segment", "Short", "Extent", "Blocks", "Ahead",
    "Prefetch", "Runs", "Block", "Pieces", "Flat", "Covers", "Span", "Entries", "Repeats",
    "Walk", "Scatter", "Merged", "Met", "Stepped", "merged_note",
    "range_stream", "replicate", "mul", "add", "guard", "contract", "map_leaf", "order_le",
    "prelude", "iterate_locate", "intersect_by_leapfrog", "intersect_by_merge_or_leapfrog",
    "union_by_skipping", "union_by_stepping_fronts",
    "dense_level", "segment_level", "blocks_level", "band_level", "level_stream", "runs_level",
    "is_runs", "zip_runs", "has_runs", "meet_runs", "join_runs", "runs_product",
    "Binding", "array_names", "dim_var", "hidden", "Lowerer", "lower_step",
    "run_stream", "declare", "describe", "StreamInvariantError",
]

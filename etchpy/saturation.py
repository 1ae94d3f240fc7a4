"""The limits of one equality-saturation run (a field of `etchpy.tuning.Tuning`).

`Saturation` bounds optimizer.egraph's saturation and the extraction of a sketch's
term (optimizer.sketch.search); `tuning.Tuning.saturation` holds the limits a
compile uses, and `optimizer.optimize.optimize(..., limits=...)` overrides some.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Saturation", "changed"]


@dataclass(frozen=True)
class Saturation:
    """Limits of one equality-saturation run (optimizer.egraph) and of the
    extraction of a sketch's term (optimizer.sketch.search)."""

    nodes: int = 10_000
    iterations: int = 30
    seconds: float = 1.0         # CPU seconds of the saturating thread (not wall time)
    match_limit: int = 100       # matches per rule and iteration before backoff
    ban_length: int = 2          # iterations a rule sits out (doubles each ban)
    patience: int = 3            # stop after this many iterations without a cheaper
                                 # root (0 or None turns early stopping off) ...
    saturate_below: int = 1000   # ... but only once the graph has this many e-nodes:
                                 # a smaller graph runs to saturation ...
    idle: int = 8                # ... or until its best cost is idle this long (0: no limit)
    check_every: int = 1         # extract the root's best cost every k iterations
    min_gain: float = 1e-3       # a relative decrease below this is no improvement
    goal_step: int = 1           # merges between two checks of a search's goal
    exact_branches: int = 20_000  # a sketch's exact extraction: branches before it
                                  # falls back to the heuristic (optimizer.sketch.exact)
    share_rounds: int = 3        # the heuristic's re-extractions (guided.shared_extract)
    flatten_depth: int = 16      # Σ and product nodes sum-push-to reads through

    def __repr__(self):
        """The limits that differ from the defaults: `Saturation(nodes=500)`."""
        return f"Saturation({', '.join(changed(self, Saturation()))})"


def changed(value, default) -> list[str]:
    """`field=value` for each field of the dataclass `value` that differs from `default`'s
    (the reprs of Saturation and Tuning)."""
    return [f"{f.name}={getattr(value, f.name)!r}" for f in fields(value)
            if getattr(value, f.name) != getattr(default, f.name)]


def full_text(value) -> str:
    """Every field, nested dataclasses included (the dataclass's own repr form: the
    cache keys of Tuning, etchpy.tuning.Tuning.key)."""
    parts = [f"{f.name}={full_text(v) if hasattr(v, '__dataclass_fields__') else repr(v)}"
             for f in fields(value) for v in [getattr(value, f.name)]]
    return f"{type(value).__name__}({', '.join(parts)})"

"""Sketch-guided optimization: the sketch language (`ep.sketch`), matching a
sketch against the e-graph, and the searches that grow the graph until a term
satisfies it, then extract the cheapest such term.

Modules, lower to higher:
    language  the sketch language: hole, tensor, mul, add, sum, materialised,
              contains, either, of; `satisfies` on expressions
    match     SketchMatch: which e-class terms satisfy which sketch nodes, and
              the cheapest satisfying term by tree cost (optimizer.extract's
              node cost and term builder)
    demand    the Σ a sketch still needs, per class: where rewrites are aimed
    rules     sum-push-to / sum-pull-to, the rewrites aimed by the demand
    exact     the least DAG cost satisfying term, by branch and bound
    search    the guided searches (`guided_search`) and the extraction with
              its heuristic fallback

`ep.sketch` is this package: the language's names are re-exported here.
"""
from .language import *  # noqa: F401,F403 - the sketch language is the package's surface
from .language import __all__, satisfies, walk  # noqa: F401

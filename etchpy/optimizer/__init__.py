"""The optimizer: expressions rewritten to cheaper equivalent ones (SPORES-style).

Modules, lower to higher:
    ra        relational algebra and canonical forms (`equivalent`)
    egraph    the e-graph: union-find, hash-consing, class analysis
    rules     the rewrite rules, one table of data
    extract   node cost, greedy and exact extraction, back to expressions
    saturate  equality saturation under `tuning.Saturation` limits
    sketch/   sketch-guided optimization, a sub-package: the language (ep.sketch),
              matching, demand, aimed rules, exact extraction, the searches
    optimize  the driver: `optimize`, `equivalent`, `proves`, `cost`
"""

"""Property-testing support, exported for users: Hypothesis strategies and oracles.

    from etchpy.testing import problems, check_backends
    @given(problems())
    def test_mine(p):
        check_backends(p.expr, p.inputs, semiring=p.semiring)

Strategies (`etchpy.testing.strategies`)
- `semiring_values(sr)`: carrier values that keep every backend exact (small
  integers for the float semirings, so reordered sums agree bit for bit);
- `sparse_arrays(shape, sr)`: dense arrays with a random share of implicit zeros
  (empty, all-zero, single-nonzero cases included);
- `formats_for(order)`: every named format of that order and random level formats;
- `semirings_st()`: the built-in semirings and user-defined ones;
- `problems()`: a well-typed random expression (up to 4 indices named from
  `INDEX_NAMES`, 1 to 4 tensor occurrences, the same tensor possibly twice,
  nested *, + and Σ), a format for each tensor, a semiring and inputs.

Oracles (`etchpy.testing.oracles`)
`check_backends(expr, inputs, ..., tuning=None)` evaluates on every backend
and asserts that they agree with the dense reference semantics; besides the
backends of `ep.evaluate` it knows "imp": the compiled Imp program run on the
Imp interpreter (`imp_evaluate`).
"""
from .oracles import (assert_same, check_backends, dense_value, imp_evaluate,
                      run_plan_imp)
from .strategies import (INDEX_NAMES, Problem, formats_for, make_walkable, max_min,
                         problems, random_formats, semiring_values, semirings_st,
                         sparse_arrays, with_formats)

__all__ = ["INDEX_NAMES", "Problem", "assert_same", "check_backends", "dense_value",
           "formats_for", "imp_evaluate", "make_walkable", "max_min", "problems",
           "random_formats", "run_plan_imp", "semiring_values", "semirings_st",
           "sparse_arrays", "with_formats"]

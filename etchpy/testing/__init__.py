"""Property-testing support, exported for users: Hypothesis strategies and oracles.

    from etchpy.testing import problems, check_backends
    @given(problems())
    def test_mine(p):
        check_backends(p.expr, p.inputs, semiring=p.semiring)

Strategies (`etchpy.testing.strategies`, `etchpy.testing.problems`)
- `semiring_values(sr)`: carrier values that keep every backend exact (small
  integers for the float semirings, so reordered sums agree bit for bit);
  `stored_values(sr)`: those that are not the semiring's zero;
- `sparse_arrays(shape, sr)`: dense arrays whose implicit entries are the zero,
  mostly a random share stored (at least one), sometimes one entry or none;
- `formats_for(order)`: every named format of that order and random level
  formats (`random_formats`: coo-style runs and permuted mode orders among them);
- `semirings_st()`: the built-in semirings and user-defined ones;
- `problems()`: a well-typed random expression (up to 4 indices of sizes up
  to 8 named from `INDEX_NAMES`, 1 to 4 tensor occurrences of order up to 3,
  the same tensor possibly twice, nested *, + and Σ), a format for each
  tensor, a semiring and inputs. Draws are shaped to what a test needs
  (`min_free`, `min_occurrences`), never filtered by an early return.

Oracles (`etchpy.testing.oracles`)
`check_backends(expr, inputs, ..., tuning=None)` evaluates on every backend
and asserts that they agree with the dense reference semantics; besides the
backends of `ep.evaluate` it knows "imp": the compiled Imp program run on the
Imp interpreter (`imp_evaluate`); with `input_kind=` (one of `INPUT_KINDS`,
etchpy.testing.kinds) it also calls the kernel on the inputs as ep.Tensors
(some over one structure) or scipy arrays, twice, on others with other values,
and after a write in place.
"""
from .kinds import INPUT_KINDS
from .oracles import (assert_same, check_backends, dense_value, imp_evaluate,
                      run_plan_imp)
from .problems import INDEX_NAMES, Problem, make_walkable, problems, with_formats
from .strategies import (formats_for, max_min, random_formats, semiring_values,
                         semirings_st, sparse_arrays, stored_values)

__all__ = ["INDEX_NAMES", "INPUT_KINDS", "Problem", "assert_same", "check_backends", "dense_value",
           "formats_for", "imp_evaluate", "make_walkable", "max_min", "problems",
           "random_formats", "run_plan_imp", "semiring_values", "semirings_st",
           "sparse_arrays", "stored_values", "with_formats"]

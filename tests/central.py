"""The draws of the central property (tests/end_to_end/test_backends.py), shared
with the test that records them (tests/project/test_strategies_reach.py).

The property runs once per semiring (SEMIRINGS: every built-in one and the
user-defined max_min), EXAMPLES_PER_SEMIRING examples each, 50 in all under the
ci profile (fewer under a profile of fewer examples, as the sanitizer's; more
under dev); the m-th semiring's run starts from the m-th simplest problem, so
that the first examples of the ten runs differ in formats and orders.
"""
from hypothesis import settings

import etchpy as ep
from etchpy.testing import max_min, problems

SEMIRINGS = ep.semirings.all() + [max_min]
# 5 under the ci profile (fewer under a profile of fewer examples); under dev (300
# examples a property, random seeds) 37 a semiring, so that a dev run searches
# further (session 48: a 900 s run of 40 a semiring found two bugs the ci draws
# never reach)
_MAX = settings.default.max_examples
EXAMPLES_PER_SEMIRING = min(5, _MAX) if _MAX <= 40 else _MAX // 8


def central_problems(m: int):
    """The strategy the central property draws from for the m-th of SEMIRINGS."""
    return problems(allow_compare=True, allow_windows=True, allow_onehot=True,
                    semiring=SEMIRINGS[m], simplest=m)

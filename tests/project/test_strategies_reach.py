"""The property tests reach what they claim (issue 44).

The central property's CI examples are drawn again here, without compiling
anything: the same strategies (tests/central.py) under the ci profile's
settings (derandomised, EXAMPLES_PER_SEMIRING per semiring, 50 in all), each
semiring's run with its own seed as the pytest plugin gives each parametrized
case. The draws must keep the shares stated below; a change to etchpy.testing
that makes them fall (more all-zero inputs, a format never drawn) fails here.
Shaped draws (`min_free`, `min_occurrences`) must always deliver, and the pool
of index names must keep names the generated C uses.
"""
import functools
import re

import numpy as np
from hypothesis import given, settings

import etchpy as ep
from etchpy.expr.nodes import Add, Mul, Sum, free_indices
from etchpy.expr.walk import accesses
from etchpy.formats import Format
from etchpy.testing import INDEX_NAMES, problems
from central import EXAMPLES_PER_SEMIRING, SEMIRINGS, central_problems

CENTRAL = "tests/end_to_end/test_backends.py::test_c_equals_streams_equals_reference"
NON_EMPTY_TENSOR = 0.8      # a tensor operand of order ≥ 1 that stores an entry
NON_EMPTY_SPARSE = 0.5      # ... in a format with a compressed or singleton level
DISTINCT = 0.9
FAMILIES = ("dense", "csr", "csc", "dcsr", "coo", "csf", "permuted", "order 3")
NAMED = ("dense", "csr", "csc", "dcsr", "coo", "csf")


def family(fmt: Format) -> str | None:
    """The family of a format: a named one (coo of order ≥ 2, csf of order ≥ 3:
    below that they are other formats), "permuted" for any other format with a
    non-identity mode order, else "vector" or "custom"; None for order 0."""
    o = fmt.order
    if o == 0:
        return None
    for name in NAMED:
        if (o == 2 or name not in ("csr", "csc", "dcsr")) and (name != "coo" or o >= 2) \
                and (name != "csf" or o >= 3) and fmt == Format.named(name, o):
            return name
    if fmt.mode_order != tuple(range(o)):
        return "permuted"
    return "vector" if o == 1 else "custom"


def families(p) -> set:
    found = {family(f) for f in p.formats.values()} - {None}
    return found | ({"order 3"} if any(f.order == 3 for f in p.formats.values()) else set())


def stores_something(p, sparse_only=False) -> bool:
    return any(np.ndim(a) >= 1 and np.any(a != p.semiring.zero)
               and not (sparse_only and p.formats[name].is_dense)
               for name, a in p.inputs.items())


def record(strategy, examples, key):
    """The problems `strategy` draws under the ci profile's settings, with the
    seed pytest would give the test `key` (its node id)."""
    draws = []

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None)
    @given(strategy)
    def draw(p):
        draws.append(p)
    # What the Hypothesis pytest plugin does for each parametrized case: mix the
    # node id into the derandomised seed.
    draw.hypothesis.inner_test._hypothesis_internal_add_digest = key.encode()
    draw()
    return draws


@functools.lru_cache(maxsize=1)
def central_draws() -> tuple:
    return tuple(p for m, sr in enumerate(SEMIRINGS)
                 for p in record(central_problems(m), EXAMPLES_PER_SEMIRING,
                                 f"{CENTRAL}[{sr.name}]"))


def share(pred) -> float:
    draws = central_draws()
    return sum(map(pred, draws)) / len(draws)


def test_central_draws_are_fifty():
    assert len(central_draws()) == 50     # five on each of ten semirings


def test_central_draws_mostly_store_something():
    assert share(stores_something) >= NON_EMPTY_TENSOR
    assert share(lambda p: stores_something(p, sparse_only=True)) >= NON_EMPTY_SPARSE


def test_central_draws_are_mostly_distinct():
    assert len({repr((p, sorted((n, a.tobytes()) for n, a in p.inputs.items())))
                for p in central_draws()}) >= DISTINCT * len(central_draws())


def test_central_draws_reach_every_format_family_and_semiring():
    reached = set().union(*map(families, central_draws()))
    assert set(FAMILIES) <= reached, sorted(set(FAMILIES) - reached)
    names = {p.semiring.name for p in central_draws()}
    assert {sr.name for sr in ep.semirings.all()} <= names


def test_central_draws_reach_larger_sizes_and_the_name_pool():
    sizes = [n for p in central_draws() for a in p.inputs.values() for n in np.shape(a)]
    assert max(sizes) == 8 and sum(n >= 5 for n in sizes) >= 10
    used = {ix.name for p in central_draws() for ix in _indices(p.expr)}
    assert len(used - {"i", "j", "k", "l"}) >= 8


def _indices(e):
    return [ix for acc in accesses(e) for ix in acc.indices]


def test_shaped_draws_deliver():
    """min_free and min_occurrences hold on every draw (no early returns needed)."""
    for p in record(problems(max_indices=3, min_free=2), 40, "min_free"):
        assert len(free_indices(p.expr)) >= 2, p
    for p in record(problems(max_occurrences=3, min_occurrences=2), 40, "min_occurrences"):
        top = p.expr
        while isinstance(top, Sum):
            top = top.body
        assert isinstance(top, (Mul, Add)), p


def test_index_name_pool_holds_names_the_generated_c_uses():
    """INDEX_NAMES holds names the generated code declares for itself, so that
    the property tests catch a generated name that collides with a user's index."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    x = ep.tensor("x", 1)
    sources = [ep.compile(ep.sum(j, A[i, j] * x[j])).c_source,
               ep.compile(ep.sum(j, A[i, j] * B[j, k]), output="csr").c_source,
               ep.compile(ep.sum(j, A[i, j] * x[j]), threads=2).c_source]
    used = set().union(*map(_c_identifiers, sources))
    assert len((used & set(INDEX_NAMES)) - {"i", "j", "k", "l"}) >= 6, used & set(INDEX_NAMES)


def _c_identifiers(src: str) -> set:
    """The identifiers of C text outside comments, strings and preprocessor lines."""
    src = re.sub(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\])*\"", " ", src, flags=re.S)
    src = re.sub(r"^\s*#.*$", " ", src, flags=re.M)
    return set(re.findall(r"\b[A-Za-z_]\w*\b", src))


def test_central_draws_reach_the_structured_level_kinds():
    """Banded, uniform band and block-list levels (issue 40), ELLPACK levels
    (issue 41) and tile levels (bsr) are among the central strategy's draws: all
    within four times the CI's examples (200 draws, no compiling); the CI's 50
    reach three of them (the five share the three structured level draws there,
    so a new kind takes one kind's turn: blocks since ELLPACK joined)."""
    structured = {"banded", "uniform_band", "blocks", "ellpack", "tiles"}
    drawn = {str(lv) for m, sr in enumerate(SEMIRINGS)
             for p in record(central_problems(m), 4 * EXAMPLES_PER_SEMIRING,
                             f"{CENTRAL}[{sr.name}]")
             for f in p.formats.values() for lv in f.levels}
    assert structured <= drawn, sorted(drawn)
    kinds = {str(lv) for p in central_draws() for f in p.formats.values() for lv in f.levels}
    assert len(structured & kinds) >= 3, sorted(kinds)


def test_central_draws_reach_the_run_length_kind():
    """Run-length levels (issue 40) are among the central draws."""
    kinds = {str(lv) for p in central_draws() for f in p.formats.values() for lv in f.levels}
    assert "runs" in kinds, kinds


def test_central_draws_reach_the_sparse_run_length_kind():
    """The central property draws a sparse run list (formats.sparse_runs)."""
    kinds = {str(lv) for p in central_draws() for f in p.formats.values() for lv in f.levels}
    assert "sparse_runs" in kinds, kinds


def test_central_draws_reach_the_bytemap_kind():
    """Bytemap levels (issue 40) are among the central draws."""
    kinds = {str(lv) for p in central_draws() for f in p.formats.values() for lv in f.levels}
    assert "bytemap" in kinds, kinds


def test_central_draws_reach_the_hash_kind():
    """Hash levels (issue 40) are among the central draws."""
    kinds = {str(lv) for p in central_draws() for f in p.formats.values() for lv in f.levels}
    assert "hash" in kinds, kinds


def test_central_draws_reach_histograms():
    """Onehots (a histogram's bins read off values, issue 40) are among the
    central draws."""
    from etchpy.expr.bins import is_bins
    from etchpy.expr.walk import accesses
    assert any(is_bins(a.tensor) for p in central_draws() for a in accesses(p.expr))


def test_random_formats_reach_every_kind_at_every_position_and_order():
    """The level formats the central strategy draws (etchpy.testing's
    random_formats, its "custom" formats) hold every level kind at every level it
    may take: the kinds that may sit anywhere (ANY_LEVEL: compressed, dense, the
    band, block-list, tile and ELLPACK kinds) at each of two and three levels, the
    last-only kinds (run lists, bytemap, hash) last, each in the identity mode
    order and in a permuted one (1,500 derandomised draws of two levels, 3,000 of three:
    six kinds may sit anywhere; no compiling; the CI's
    50 central examples sample them, tests/end_to_end/test_kinds_every_position.py
    pins each)."""
    from etchpy.formats import _LEVEL_NAMES
    from etchpy.testing.strategies import ANY_LEVEL, random_formats
    last = [n for n, kind in _LEVEL_NAMES.items() if getattr(kind, "last_only", None)]
    for order in (2, 3):
        seen = {(str(lv), k, f.mode_order == tuple(range(order)))
                for f in record(random_formats(order), 1500 * (order - 1), f"formats {order}")
                for k, lv in enumerate(f.levels)}
        want = {(kind, k, ident) for kind in ANY_LEVEL for k in range(order)
                for ident in (True, False)}
        want |= {(kind, order - 1, ident) for kind in last for ident in (True, False)}
        assert want <= seen, sorted(want - seen)

"""Facts: typed, immutable, and propagated opt-in.

Every combinator builds its result's facts from the classes it names; a fact
class it does not know (Dummy) is dropped from every level it builds, whatever
kind of stream it was on. Also the shape rules of the stream package: the
record's size, no copy-with-inheritance, short combinators, short modules.
"""
import ast
import dataclasses
import pathlib

import pytest

import etchpy as ep
from etchpy import imp, streams
from etchpy.imp import ONE, ZERO, Const, Load, Var
from etchpy.streams import combinators
from etchpy.tuning import DEFAULT, NOOPT

PACKAGE = pathlib.Path(streams.__file__).parent
NOTES = pathlib.Path(__file__).parents[2] / "proofs_notes" / "facts.md"
SR = ep.semirings.get("real")
FACT_CLASSES = (streams.Locate, streams.Prelude, streams.Most, streams.Full,
                streams.Counter, streams.Choice, streams.Split, streams.Segment,
                streams.Short, streams.Pieces)
HINT_CLASSES = (streams.Extent, streams.Blocks, streams.Ahead, streams.Prefetch,
                streams.Runs)


@dataclasses.dataclass(frozen=True)
class Dummy(streams.Fact):
    """A fact no combinator knows: it must never be inherited."""


def tagged(s):
    """s with Dummy added at every level."""
    if not streams.is_stream(s):
        return s
    return s.derive(s.facts.add(Dummy()), value=tagged(s.value))


def untagged_levels(s) -> bool:
    return all(Dummy not in lv.facts for lv in streams.levels_of(s))

# ------------------------------------------------------ every kind of stream


def _j_segment(names, parent):
    lo = parent[0]
    return streams.segment_level(names, "j", "B_crd1", Load("B_pos1", lo),
                                 Load("B_pos1", imp.add(lo, ONE)), True,
                                 lambda p: Load("B_vals", p[0]), Var("n1"), in_order=True)


def _j_range(names, parent):
    return streams.dense_level(names, "j", Var("dim_j"), parent,
                               lambda p: Load("D_vals", p[0]))


def _segment(names, unique=True, crd="A_crd0"):
    return streams.segment_level(names, "i", crd, ZERO, Var("n0"), unique,
                                 lambda p: _j_segment(names, p), Var("n0"), in_order=True)


def _marker_replicate(names):
    """↑ over i of a compressed B[j] scattered into a marker (Prelude, probed Locate)."""
    b = ep.tensor("B", 1, format="csf")
    j = ep.indices("j")[0]
    low = streams.Lowerer(SR, {"B": streams.array_names("B", b.format)}, names, markers=True)
    return low.lower(b[j], ("i", "j"))


def _dense_rows(names):
    """A dense matrix's rows (a range whose level below carries Blocks)."""
    d = ep.tensor("D", 2)
    i, j = ep.indices("i j")
    low = streams.Lowerer(SR, {"D": streams.array_names("D", d.format)}, names)
    return low.lower(d[i, j], ("i", "j"))


KINDS = {
    "range": lambda n: streams.dense_level(n, "i", Var("dim_i"), (ZERO, ONE),
                                           lambda p: _j_range(n, p)),
    "replicate": lambda n: streams.replicate(n, "i", Var("dim_i"), _j_segment(n, (ZERO, ONE))),
    "unique segment": lambda n: _segment(n),
    "non-unique segment": lambda n: _segment(n, unique=False),
    "leapfrog product": lambda n: streams.mul(n, SR, NOOPT, _segment(n), _segment(n, crd="C")),
    "merge product": lambda n: streams.mul(n, SR, DEFAULT, _segment(n), _segment(n, crd="C")),
    "located product": lambda n: streams.mul(n, SR, DEFAULT, _segment(n), KINDS["range"](n)),
    "skipping union": lambda n: streams.add(n, SR, NOOPT, _segment(n), _segment(n, False)),
    "stepping union": lambda n: streams.add(n, SR, DEFAULT, _segment(n), _segment(n, False)),
    "guarded": lambda n: streams.guard(n, SR, Var("g0"), _segment(n)),
    "contracted": lambda n: streams.contract(_segment(n), "j"),
    "marker": _marker_replicate,
    "dense rows": _dense_rows,
    "gathering product": lambda n: streams.mul(n, SR, DEFAULT, _segment(n), _dense_rows(n)),
    "band": lambda n: streams.band_level(n, "i", imp.Load("A_bfirst0", ZERO),
                                         imp.Load("A_bfirst0", ONE), imp.Load("A_bpos0", ZERO),
                                         lambda p: _j_segment(n, p)),
    "blocks": lambda n: streams.blocks_level(n, "i", "A_bfirst0", "A_bpos0", ZERO, Var("nb"),
                                             lambda p: _j_range(n, p)),
}


def test_the_kinds_carry_every_known_fact():
    """The kinds above between them carry every fact and hint class, so the
    tests below see each one on some operand."""
    names = imp.Names()
    seen = {type(f) for make in KINDS.values() for lv in streams.levels_of(make(names))
            for f in lv.facts.items}
    assert seen >= set(FACT_CLASSES + HINT_CLASSES)


TUNINGS = pytest.mark.parametrize("tuning", [DEFAULT, NOOPT], ids=["default", "noopt"])


@TUNINGS
@pytest.mark.parametrize("a", sorted(KINDS))
@pytest.mark.parametrize("b", sorted(KINDS))
def test_mul_and_add_drop_an_unknown_fact(tuning, a, b):
    names = imp.Names()
    x, y = tagged(KINDS[a](names)), tagged(KINDS[b](names))
    for op in (streams.mul, streams.add):
        out = op(names, SR, tuning, x, y)
        assert untagged_levels(out), f"{op.__name__}({a}, {b}) kept an unknown fact"
        at = out.facts.get(streams.Locate)
        if at is not None:
            assert untagged_levels(at.at(Const(0)))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_guard_contract_and_map_leaf_drop_an_unknown_fact(kind):
    names = imp.Names()
    s = tagged(KINDS[kind](names))
    assert Dummy not in streams.guard(names, SR, Var("g"), s).facts
    # Σ rebuilds the levels down to the one it contracts; those below stay as they are
    assert Dummy not in streams.contract(s, "i").facts
    assert untagged_levels(streams.contract(s, "j"))
    mapped = streams.map_leaf(lambda e: imp.Ring("mul", e, e), s)
    assert untagged_levels(mapped)
    at = mapped.facts.get(streams.Locate)
    if at is not None:
        assert untagged_levels(at.at(Const(0)))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_new_levels_over_a_tagged_value_carry_no_unknown_fact(kind):
    """range_stream, replicate and the level streams build their own level; the
    tagged stream below stays as it is (it is the same stream)."""
    names = imp.Names()
    inner = tagged(KINDS[kind](names))
    for level in (streams.replicate(names, "k", Var("dim_k"), inner),
                  streams.range_stream(names, "k", Var("dim_k"), lambda c: inner),
                  streams.segment_level(names, "k", "crd", ZERO, Var("n"), True,
                                        lambda p: inner, Var("n"), in_order=True),
                  streams.segment_level(names, "k", "crd", ZERO, Var("n"), False,
                                        lambda p: inner)):
        assert Dummy not in level.facts and level.value is inner

# ------------------------------------------------------------ the Facts value


def test_facts_value():
    c = streams.Counter("q", ZERO, Var("n"))
    f = streams.Facts.of(c, None, streams.Full())
    assert f.get(streams.Counter) is c and streams.Full in f and f.get(streams.Most) is None
    assert f.keep(streams.Full).items == (streams.Full(),)
    c2 = streams.Counter("r", ZERO, Var("n"))
    assert f.add(c2).get(streams.Counter) is c2 and len(f.add(c2).items) == 2
    assert streams.Facts.of(Dummy(), c).keep(*streams.RUN_FACTS).items == (c,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.items = ()
    assert streams.Prelude.of(imp.SKIP) is None


def test_fact_classes_are_frozen_typed_and_documented():
    text = NOTES.read_text()
    for cls in FACT_CLASSES + HINT_CLASSES:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        assert issubclass(cls, streams.Fact) and cls.__doc__
        assert issubclass(cls, streams.Hint) == (cls in HINT_CLASSES)
        assert cls in streams.RUN_FACTS
        assert f"## {cls.__name__}" in text, f"proofs_notes/facts.md lacks {cls.__name__}"

# ---------------------------------------------------------- the package's shape


def test_the_record_has_at_most_twelve_fields():
    assert len(dataclasses.fields(streams.Stream)) <= 12


def _functions(path):
    tree = ast.parse(path.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_stream_is_copied_with_inherited_fields():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "replace":
                assert False, f"{path.name}:{node.lineno} uses replace"
            if isinstance(node, ast.ImportFrom) and node.module == "dataclasses":
                assert "replace" not in [a.name for a in node.names], path.name


def test_combinators_are_short_and_modules_small():
    for fn in _functions(pathlib.Path(combinators.__file__)):
        assert fn.end_lineno - fn.lineno + 1 <= 30, f"{fn.name} is over 30 lines"
    for path in PACKAGE.glob("*.py"):
        assert len(path.read_text().splitlines()) <= 400, path.name
        for fn in _functions(path):
            assert fn.end_lineno - fn.lineno + 1 <= 50, f"{path.name}: {fn.name}"

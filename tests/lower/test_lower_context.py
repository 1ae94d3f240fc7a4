"""The frozen Context that targets receive: index coordinates and the facts
targets add live apart, so an index may be called pos, row, fresh, ..."""
import dataclasses

import pytest

from etchpy import imp
from etchpy.lower.target import Context


def test_context_is_frozen_and_bind_returns_a_new_one():
    ctx = Context()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.pos = imp.ONE
    bound = ctx.bind("i", imp.Var("i_"), pos=imp.Var("p"))
    assert ctx.coords == () and ctx.pos == imp.ZERO
    assert bound.coord("i") == imp.Var("i_") and bound.pos == imp.Var("p")
    with pytest.raises(KeyError):
        ctx.coord("i")


def test_index_names_never_shadow_facts():
    ctx = Context().bind("pos", imp.Var("c1")).bind("row", imp.Var("c2"), row=imp.Var("r"))
    ctx = ctx.bind("fresh", imp.Var("c3"), fresh=True)
    assert ctx.pos == imp.ZERO                   # the index `pos` is a coordinate only
    assert ctx.coord("pos") == imp.Var("c1")
    assert ctx.row == imp.Var("r") and ctx.coord("row") == imp.Var("c2")
    assert ctx.fresh is True and ctx.coord("fresh") == imp.Var("c3")
    assert ctx.with_(fresh=False).coord("pos") == imp.Var("c1")


def test_reserved_levels_are_a_set_of_index_names():
    ctx = Context().with_(reserved=frozenset({"j"}))
    assert "j" in ctx.reserved and "reserved" not in ctx.reserved

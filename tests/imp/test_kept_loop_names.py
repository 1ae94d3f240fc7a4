"""imp.names_used keeps a loop's names beside the loop node (once per node, while
it lives): the answer is the walk's, a nest read from the inside out reads each
loop once, and nothing of it reaches the node's stored or pickled form."""
import gc
import pickle

from etchpy import imp
from etchpy.imp import Const, Load, Var
from etchpy.imp import analysis
from etchpy.runtime import jsondata


def _nest(depth: int):
    """depth While loops, each around the next, each with its own names."""
    body = imp.Store("out", Var("i0"), Load("x", Var(f"i{depth}")))
    for d in reversed(range(depth)):
        body = imp.While(imp.lt(Var(f"i{d}"), Var(f"n{d}")),
                         imp.seq(imp.Decl(f"t{d}", "index", Var(f"i{d}")), body, imp.incr(f"i{d}")))
    return body


def test_kept_names_are_the_walks_at_every_level():
    loop = _nest(6)
    levels = [s for s in imp.statements(loop) if isinstance(s, imp.While)]
    for s in reversed(levels):                          # inside out, as lowering asks
        assert imp.names_used(s) == imp.names_used(s, kept=False)
    whole = imp.seq(imp.Decl("z", "index", Const(0)), loop)
    assert imp.names_used(whole) == imp.names_used(whole, kept=False)
    assert {"out", "x", "i6", "t0", "n5", "z"} <= imp.names_used(whole)


def test_each_loop_is_kept_once_and_forgotten_when_it_dies():
    loop = _nest(5)
    levels = [s for s in imp.statements(loop) if isinstance(s, imp.While)]
    imp.names_used(imp.seq(imp.Comment("whole"), loop))       # one walk keeps every level
    for s in levels:
        names, = [v for k, (ref, v) in analysis._KEPT.items() if ref() is s]
        assert names == imp.names_used(s, kept=False)
    got = imp.names_used(loop)
    got.add("mine")                                     # a new set: the kept one unchanged
    assert "mine" not in imp.names_used(loop)
    keys = {id(s) for s in levels}
    del loop, levels, got, s
    gc.collect()
    assert not keys & set(analysis._KEPT)


def test_kept_names_reach_no_stored_or_pickled_form():
    loop = _nest(3)
    before, pickled = jsondata.dumps(loop), pickle.dumps(loop)
    imp.names_used(loop)
    assert jsondata.dumps(loop) == before and pickle.dumps(loop) == pickled
    assert jsondata.loads(before) == loop

"""Fused input checks are keyed on the streams.Walk fact (issue 41): the stream
lowering records it on a unique segment level under a located level, the driver
notes it on the loop it builds from that stream (imp.While.walk), and
lower.schedule.fused_checks fuses checks into exactly the loops so noted; it
asks no format, role or array name and matches no loop shape. A scatter walk
(a non-unique top level over one-child levels, read one entry at a time) is
noted with streams.Scatter, which lower.schedule.coo_checks keys on alike."""
from dataclasses import replace

import etchpy as ep
from etchpy import imp, streams
from etchpy.lower.schedule import fused_checks


def _walk_notes(body) -> list:
    return [n.walk for n in imp.subterms(body) if isinstance(n, imp.While) and n.walk]


def _without_notes(node):
    """node with every loop's Walk note dropped (the loops themselves unchanged)."""
    if isinstance(node, tuple):
        return tuple(_without_notes(x) for x in node)
    if isinstance(node, imp.While):
        return imp.While(_without_notes(node.cond), _without_notes(node.body))
    if hasattr(node, "__dataclass_fields__") and not isinstance(node, streams.Walk):
        return replace(node, **{f: _without_notes(getattr(node, f))
                                for f in node.__dataclass_fields__})
    return node


def test_a_walked_level_is_noted_with_its_arrays_and_sizes():
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csc"})
    (walk,) = set(_walk_notes(kern.compiled.program.body))
    assert isinstance(walk, streams.Walk) and walk.tensor == "A"
    params = {p.name for p in kern.compiled.program.params}
    assert {walk.crd, walk.pos, walk.vals, walk.dim, walk.parents} <= params
    assert kern.compiled.checked.fused == {"A"}


def test_checks_follow_the_note_not_the_loop_shape():
    """The same program with its notes dropped gets no fused checks, though its
    loops are the walks they were."""
    prog = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"},
                      tuning={"gather_sums": False}).compiled.program
    assert fused_checks.fuse(prog) is not None
    bare = replace(prog, body=_without_notes(prog.body))
    assert not _walk_notes(bare.body) and fused_checks.fuse(bare) is None


def test_a_merge_is_not_noted():
    """A merge may stop early, so it is no whole walk: no note, no fused check."""
    merge = ep.compile("y[i] = A[i,j] * B[i,j]", formats={"A": "csr", "B": "csr"})
    assert not _walk_notes(merge.compiled.program.body)
    assert merge.compiled.checked is None


def test_notes_change_no_c_and_are_not_names_the_loop_uses():
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "csr"},
                      tuning={"fused_checks": False})
    prog = kern.compiled.program
    assert _walk_notes(prog.body)
    assert imp.names_used(prog.body) == imp.names_used(_without_notes(prog.body))


def test_a_scatter_walk_is_noted_with_every_level_s_arrays():
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "coo"})
    (walk,) = set(_walk_notes(kern.compiled.program.body))
    assert isinstance(walk, streams.Scatter) and walk.tensor == "A" and len(walk.crds) == 2
    params = {p.name for p in kern.compiled.program.params}
    assert {*walk.crds, *walk.dims, walk.vals, walk.pos} <= params
    assert kern.compiled.checked.fused == {"A"}


def test_a_scatter_of_an_unnamed_format_is_checked_in_its_storage_order():
    """Column-major coo is no registered name: its walk is noted and checked all
    the same, each storage level's coordinate against that level's size."""
    fmt = ep.Format([ep.Compressed(unique=False), ep.Singleton()], (1, 0))
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": fmt})
    (walk,) = set(_walk_notes(kern.compiled.program.body))
    assert isinstance(walk, streams.Scatter) and walk.dims == ("A_dim1", "A_dim0")
    assert kern.compiled.checked.fused == {"A"}


def test_scatter_checks_follow_the_note():
    prog = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "coo"}).compiled.program
    assert fused_checks.fuse(prog) is not None
    bare = replace(prog, body=_without_notes(prog.body))
    assert not _walk_notes(bare.body) and fused_checks.fuse(bare) is None


def test_walk_is_noted_only_where_walk_fact_says():
    """streams.levels.walk_fact: the last level, a unique segment, of a named
    input whose level length is pos[a C variable] (one located level above)."""
    def kinds(text, fmt):
        body = ep.compile(text, formats={"A": fmt}).compiled.program.body
        return {type(w).__name__ for w in _walk_notes(body)}
    spmv, three = "y[i] = A[i,j] * x[j]", "y[i] = A[i,j,k] * x[k]"
    assert kinds(spmv, "csr") == kinds(spmv, "csc") == {"Walk"}
    assert kinds(spmv, "dcsr") == kinds(three, "csf") == set()
    assert kinds(three, ep.Format(["dense", "dense", "compressed"])) == set()
    assert kinds(three, ep.Format(["dense", "compressed", "dense"])) == set()

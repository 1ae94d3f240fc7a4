"""A mesh's rows run the code of the unprefetched sizes, where the host's
Tuning.mesh_runs is 1 (host_facts: AMD Zen), switched by tuning.prefetch.

The prefetch passes run a walked level's loops in a copy of their own from the
sizes prefetch.large_runs names (Tuning.run_min_entries entries, rows of a mean
below run_mean_below), the size switch making that test once before the loops
(size_switch). On AMD Zen 4 that copy, its rows' arrays prefetched ahead and its
far gathers' values too, ran 1.03-1.24x scipy on scikit-fem's matrices of
1.6e6-5.2e6 entries, where the other copy ran 0.90-0.95x; on stencils and random
rows of the same sizes it ran faster than the other (docs/performance.md,
session 75). What sets a finite-element matrix apart is read from its rows once
per call: most of them are far (imp.GatherPick with crd: ep_far_pick, they span
more than an eighth of the columns, as a mesh numbered by a mesh generator's
refinements does) and a quarter or more are near (ep_near_pick with share 4:
half their steps between consecutive coordinates within 8 columns, an
element's dofs numbered together; scikit-fem's P1 triangles 13 of 32 sampled
rows, P2 16, P1 tetrahedra 26, elasticity 32). A stencil's rows are not far,
random rows are not near (0 of 32).

So each If whose condition holds the prefetched sizes' test over a level's
entry count (size_switch.is_size_test, with run_min_entries in it) is taken
only where that level is not such a mesh: `cond && !mesh`, `mesh` declared
first, its two picks made only when the size test holds (below it they are
not needed, and a call of a small matrix pays nothing for them). The copy
taken otherwise is the one the switch made with the test read false: the same
statements without prefetches. Only speed depends on it: both copies compute
the same (the interpreter's picks are 1).
"""
from __future__ import annotations

from dataclasses import replace

from ... import host_facts, imp
from ...imp import Assign, Const, Decl, GatherPick, If, Load, Not, Var
from ...imp.analysis import map_parts
from ..program import program_names
from .fused_checks import candidates
from .size_switch import conjuncts, is_size_test


def run(prog, semiring, tuning):
    """`prog` with every If on the prefetched sizes' test of a level gated on
    that level not being a mesh's (module docstring); `prog` itself when the
    host's mesh_runs is not 1, prefetching or the size switch is off, or no If
    holds such a test."""
    host = host_facts.resolved(tuning)
    if not (tuning.prefetch and tuning.size_switch and host.mesh_runs == 1):
        return prog
    least = Const(host.run_min_entries)
    levels = {Load(lv.pos, Var(lv.parents)): lv for lv in candidates(prog).values()}
    found: dict = {}                      # the size test -> its level's count
    for node in imp.statements(prog.body):
        if isinstance(node, If):
            for c in conjuncts(node.cond):
                count = _count(c, levels, least)
                if count is not None:
                    found.setdefault(c, count)
    if not found:
        return prog
    names, picks, mesh = program_names(prog), [], {}
    for test, count in found.items():
        if count not in mesh:
            lv, var = levels[count], names.fresh(f"{levels[count].tensor}_mesh")
            far, near = names.fresh(f"{lv.tensor}_far_all"), names.fresh(f"{lv.tensor}_near")
            picks += [Decl(var, "index", Const(0)), If(test, imp.seq(
                GatherPick(far, lv.pos, lv.parents, lv.crd, lv.dim, 8, 0),
                GatherPick(near, lv.pos, lv.parents, lv.crd, lv.dim, 4, near=8),
                Assign(var, imp.and_(Var(far), Var(near)))))]
            mesh[count] = var
    tests = {t: mesh[c] for t, c in found.items()}
    return replace(prog, body=imp.seq(*picks, _gated(prog.body, tests)))


def _count(test, levels: dict, least: Const):
    """The entry count of `levels` that `test` is the prefetched sizes' test over
    (a size test with run_min_entries in it), or None."""
    if not is_size_test(test, set(levels)):
        return None
    parts = list(imp.subterms(test))
    if least not in parts:
        return None
    return next((p for p in parts if p in levels), None)


def _gated(node, tests: dict):
    """node with each If holding one of `tests` among its conjuncts also requiring
    that test's mesh variable to be 0."""
    node = map_parts(node, lambda part: _gated(part, tests))
    if isinstance(node, If):
        for c in conjuncts(node.cond):
            if c in tests:
                return replace(node, cond=imp.and_(node.cond, Not(Var(tests[c]))))
    return node

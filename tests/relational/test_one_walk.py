"""Factors of a product over one structure walked once (expr.shared, runtime.shared;
proofs_notes/shared.md): value columns of one relation multiplied together and with
value comparisons, against a pure-Python relational reference (rows as dicts), on every
level kind that can store them; the fused kernel runs only when the columns' index
arrays are the same objects; equal copies, a column replaced and values written in
place between calls are right too. A sum over every index walks the stored positions
flat; summed levels read by one access alone are one level (expr.collapse)."""
import collections
import operator

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import etchpy as ep
from etchpy.expr import collapse, formula, shared
from etchpy.formats import positions
from etchpy.runtime import shared as shared_walks

o, n = ep.indices("o n")
WALK = ep.Tuning(one_walk_from=0)     # Tensors walked once at any size (tiny ones here)
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
KINDS = (["dense", "compressed"], ["compressed", "compressed"], ["compressed", "dense"],
         ["dense", "dense"])
row = st.tuples(st.integers(0, 4), st.integers(0, 3), *[st.integers(-2, 4)] * 3)


def load(rows, kinds):
    cols = {k: np.array([r[m] for r in rows]) for m, k in enumerate("onabc")}
    keys = ep.Keys(np.arange(5), name="k")
    rel = ep.relation(cols, ["o", "n"], values=["a", "b", "c"], levels=kinds,
                      coding={"o": keys, "n": keys}, name="L")
    return rel, keys


def stored(rows, kinds, shape) -> dict:
    """(o, n) -> (a, b, c) at every stored entry: the rows, plus the cells a dense
    last level stores with no row (zero in every column)."""
    out = {(r[0], r[1]): r[2:] for r in rows}
    if kinds[1] == "dense":
        firsts = range(shape[0]) if kinds[0] == "dense" else {r[0] for r in rows}
        for x in firsts:
            for y in range(shape[1]):
                out.setdefault((x, y), (0, 0, 0))
    return out


def reference(entries, op, t) -> dict:
    """Σ_n a·b where OP(c, t), by o (the relational reference)."""
    got = collections.Counter()
    for (x, _), (a, b, c) in entries.items():
        if OPS[op](c, t):
            got[x] += a * b
    return {k: v for k, v in got.items()}


def as_dict(result, keys) -> dict:
    out = ep.decode(result, [keys], columns=["o"], fill=np.nan)
    return {k: v for k, v in zip(out["o"].tolist(), out["value"].tolist())}


def copies(rel):
    """Each column as a Tensor of its own arrays (equal, not the same objects)."""
    out = {}
    for c in "abc":
        t = rel[c].tensor
        coords, vals = t.to_coords()
        out[c.upper()] = ep.Tensor.from_coords(coords, vals.copy(), t.shape, t.format)
    return out


def fused_ran(kern) -> bool:
    return any(k is not None for k in getattr(kern, "_walk_kernels", {}).values())


@settings(max_examples=20, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       op=st.sampled_from(sorted(OPS)), t=st.integers(-2, 4), kinds=st.sampled_from(KINDS))
def test_a_product_of_columns_and_a_comparison_matches_the_reference(rows, op, t, kinds):
    rel, keys = load(rows, kinds)
    A, B, C = (rel[c].var(c.upper()) for c in "abc")
    kern = ep.compile(ep.sum(n, A[o, n] * B[o, n] * OPS[op](C[o, n], "t")))
    want = reference(stored(rows, kinds, rel["a"].shape), op, t)
    one = {c.upper(): rel[c].tensor for c in "abc"}
    got = kern(t=t, **one)
    assert _close(np.asarray(got), want)
    assert fused_ran(kern) == (kinds != ["dense", "dense"])
    apart = ep.compile(ep.sum(n, A[o, n] * B[o, n] * OPS[op](C[o, n], "t")),
                       name="apart")
    assert _close(np.asarray(apart(t=t, **copies(rel))), want)
    assert not fused_ran(apart)
    mixed = dict(one, B=copies(rel)["B"])       # one column of other arrays
    assert _close(np.asarray(kern(t=t, **mixed)), want)


def _close(got: np.ndarray, want: dict) -> bool:
    full = np.zeros(len(got))
    for k, v in want.items():
        full[k] = v
    return np.allclose(got, full)


@pytest.mark.parametrize("kinds", KINDS[:3], ids="-".join)
def test_values_written_in_place_are_read_by_the_fused_kernel(kinds):
    rows = [(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 2, 5, 4), (3, 3, 2, 2, 1)]
    rel, keys = load(rows, kinds)
    A, B, C = (rel[c].var(c.upper()) for c in "abc")
    kern = ep.compile(ep.sum(n, A[o, n] * B[o, n] * (C[o, n] < "t")))
    inputs = {c.upper(): rel[c].tensor for c in "abc"}
    for step in range(3):
        want = reference(stored(rows, kinds, rel["a"].shape), "<", 2)
        assert _close(np.asarray(kern(t=2, **inputs)), want), step
        rows = [(x, y, a + step, b - step, c * (-1) ** step) for x, y, a, b, c in rows]
        for m, c in enumerate("abc"):          # the same rows, new values, in place
            t = rel[c].tensor
            table = {(r[0], r[1]): r[2 + m] for r in rows}
            coords, _ = t.to_coords()
            t.vals[:] = [table.get((int(x), int(y)), 0) for x, y in coords.T]
    assert fused_ran(kern)


def test_a_fused_product_follows_the_semiring():
    rel, _ = load([(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 2, 5, 4)], ["dense", "compressed"])
    A, B = rel["a"].var("A"), rel["b"].var("B")
    kern = ep.compile(ep.sum(n, A[o, n] * B[o, n]), semiring="min_plus", tuning=WALK)
    got = kern(A=rel["a"].tensor, B=rel["b"].tensor)
    assert fused_ran(kern)
    assert got[0] == min(1 + 2, 3 + 1) and got[2] == 2 + 5 and np.isinf(got[1])


def test_groups_are_factors_of_one_product_at_one_index_tuple_and_format():
    X = ep.tensor("X", 2, "csr")
    Y = ep.tensor("Y", 2, "csr")
    Z = ep.tensor("Z", 2, "dcsr")
    D = ep.tensor("D", 2)
    I = ep.tensor("I", 2, "csr", iso=True)
    most = ep.Tuning().one_walk_terms
    assert shared.groups(ep.sum(n, X[o, n] * Y[o, n] * D[o, n]), most) == (("X", "Y"),)
    assert shared.groups(X[o, n] * Y[n, o], most) == ()             # other index order
    assert shared.groups(X[o, n] * Z[o, n], most) == ()             # other format
    assert shared.groups(X[o, n] * I[o, n], most) == (("X", "I"),)  # iso: its values ones
    assert shared.groups(X[o, n] + Y[o, n], most) == (("X", "Y"),)  # a sum of both (sums)
    assert shared.groups(X[o, n] + Y[o, n], 0) == ()                # ... unless none is
    pred = X[o, n] * (Y[o, n] > 2)
    assert shared.groups(pred, most) == (("X", "Y"),)
    one = shared.fused(pred, {"X": "X", "Y": "X"}, most)
    tv = one.tensor
    assert [c[0] for c in tv.columns] == ["X", "Y"] and tv.weights == (0,)
    assert tv.tests == ("cmp", ">", ("col", 1), ("num", 2))
    both = shared.fused(X[o, n] * Y[o, n], {"X": "X", "Y": "X"}, most).tensor
    assert both.tests == formula.TRUE and both.weights == (0, 1)
    assert shared.fused(pred, {"X": "X", "Y": "Y"}, most) == pred   # two structures: as written


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       op=st.sampled_from(sorted(OPS)), t=st.integers(-2, 4), kinds=st.sampled_from(KINDS))
def test_a_sum_over_every_index_walks_the_stored_positions_flat(rows, op, t, kinds):
    """Σ_{o,n} a·b·[c op t]: one loop over the stored positions (the fused kernel
    reads the columns' values as vectors), equal to the reference's total; a
    column written in place between calls is read as it is then."""
    rel, _ = load(rows, kinds)
    A, B, C = (rel[c].var(c.upper()) for c in "abc")
    kern = ep.compile(ep.sum((o, n), A[o, n] * B[o, n] * OPS[op](C[o, n], "t")),
                      order=["o", "n"])
    one = {c.upper(): rel[c].tensor for c in "abc"}
    want = sum(reference(stored(rows, kinds, rel["a"].shape), op, t).values())
    assert np.isclose(kern(t=t, **one), want)
    ran = [k for k in kern._walk_kernels.values() if k is not None]
    if kinds != ["dense", "dense"]:          # (dense factors are located, not fused)
        assert ran and ran[0][1] == {"A": None, "B": None, "C": None}     # read flat
        assert ran[0][0].request.order == ("q_o_n",)
    rel["a"].tensor.vals[:] *= 2
    assert np.isclose(kern(t=t, **one), 2 * want)
    assert np.isclose(kern(t=t, **copies(rel)), 2 * want)      # apart: as written


def test_a_flat_walk_needs_a_test_free_of_coordinates_and_the_only_read():
    rows = [(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 2, 5, 4)]
    rel, _ = load(rows, ["compressed", "compressed"])
    A, B = rel["a"].var("A"), rel["b"].var("B")
    X = ep.tensor("X", 2, "csr")
    by_code = ep.sum((o, n), A[o, n] * (B[o, n] > n))           # reads a coordinate
    twice = ep.sum((o, n), A[o, n]) + ep.sum((o, n), A[o, n] * X[o, n])
    names = {"A", "B", "X"}
    assert shared.flat(shared.fused(by_code, {"A": 0, "B": 0}, 64), names)[1] == {}
    flat, merged = shared.flat(twice, names)
    assert merged == {} and flat == twice                       # A is read twice
    only, merged = shared.flat(ep.sum((o, n), A[o, n]), names)
    assert merged == {"q_o_n": (("o", "n"), ("A",))}
    kern = ep.compile(by_code)
    assert np.isclose(kern(A=rel["a"].tensor, B=rel["b"].tensor), 1.0 + 2.0)


three = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
                  st.integers(-2, 4), st.integers(-2, 4))


@settings(max_examples=20, deadline=None)
@given(rows=st.lists(three, min_size=1, max_size=14, unique_by=lambda r: r[:4]),
       t=st.integers(-2, 4), first=st.sampled_from(["dense", "compressed"]))
def test_a_run_of_summed_levels_read_by_one_access_is_one_level(rows, t, first):
    """Σ_{n,p,s} A·[B < t] per (o) and per (o, s) over a four-level relation:
    the levels n, p (and s) that only the relation reads are one level; the
    answer is the reference's, the kernel reads the run as one, and a write in
    place between calls is read."""
    i, j, k = ep.indices("i j k")
    cols = {c: np.array([r[m] for r in rows]) for m, c in enumerate(("o", "n", "p", "s", "a",
                                                                     "b"))}
    keys = ep.Keys(np.arange(4), name="k")
    rel = ep.relation(cols, ["o", "n", "p", "s"], values=["a", "b"], name="R",
                      coding=dict.fromkeys("onps", keys),
                      levels=[first, "compressed", "compressed", "compressed"])
    A, B = rel["a"].var("A"), rel["b"].var("B")
    ins = {"A": rel["a"].tensor, "B": rel["b"].tensor}
    by_o = ep.compile(ep.sum((n, i, j), A[o, n, i, j] * (B[o, n, i, j] < "t")),
                      order=["o", "n", "i", "j"])
    by_os = ep.compile(ep.sum((n, i), A[o, n, i, j] * (B[o, n, i, j] < "t")),
                       order=["o", "n", "i", "j"])
    for step in range(2):
        want_o, want_os = np.zeros(4), np.zeros((4, 4))
        for x, _, _, z, a, b in rows:
            if b < t:
                want_o[x] += a
                want_os[x, z] += a
        assert np.allclose(by_o(t=t, **ins), want_o), step
        assert np.allclose(by_os(t=t, **ins), want_os), step
        rel["a"].tensor.vals[:] += 1.0            # in place: every stored row's a + 1
        rows = [r[:4] + (r[4] + 1, r[5]) for r in rows]
    for kern, run in ((by_o, ("n", "i", "j")), (by_os, ("n", "i"))):
        (fused, read), = [v for v in kern._walk_kernels.values() if v is not None]
        assert read["A"] == (((1, len(run)),), "A")
        assert "r_" + "_".join(run) in fused.request.order


def test_runs_on_both_sides_of_a_read_level_are_each_one_level():
    """A[o, n, i, j, k] with j read by another factor: (n, i) is a run, k alone
    is not; B[o, n, i, j, k, l]: (n, i) and (k, l) both, each one level."""
    i, j, k, l = ep.indices("i j k l")
    A = ep.tensor("A", 5, "csf")
    S = ep.tensor("S", 1, "csf")
    e = ep.sum((n, i, j, k), A[o, n, i, j, k] * S[j])
    B = ep.tensor("B", 6, "csf")
    f = ep.sum((n, i, j, k, l), B[o, n, i, j, k, l] * S[j])
    got, runs = collapse.collapse(e, {"A", "S"}, None)
    assert {q: r[1:3] for q, r in runs.items()} == {"r_n_i": (1, 2)}
    got, runs = collapse.collapse(f, {"B", "S"}, ("o", "n", "i", "j", "k", "l"))
    assert {q: r[1:3] for q, r in runs.items()} == {"r_k_l": (4, 5), "r_n_i": (1, 2)}
    rng = np.random.default_rng(3)
    coords = rng.integers(0, 3, size=(6, 40))
    T = ep.Tensor.from_coords(coords, rng.random(40), (3,) * 6, "csf")
    s = ep.Tensor.from_coords(np.array([[0, 2]]), np.array([2.0, 5.0]), (3,), "csf")
    kern = ep.compile(f, order=["o", "n", "i", "j", "k", "l"], tuning=WALK)
    want = np.einsum("onijkl,j->o", T.to_dense(), s.to_dense())
    assert np.allclose(kern(B=T, S=s), want)
    (fused, read), = [v for v in kern._walk_kernels.values() if v is not None]
    assert read["B"] == (((4, 5), (1, 2)), "B")


def test_a_comparison_of_columns_of_two_structures_is_neither_flat_nor_collapsed():
    """A[o,n,i] < B[o,n,i] over arrays that are not the same: a flat walk or runs
    of positions would pair entries by position; the kernel as written pairs them
    by coordinates (and refuses shapes that differ)."""
    i = ep.indices("i")[0]
    A, B = ep.tensor("A", 3, "csf"), ep.tensor("B", 3, "csf")
    a = ep.Tensor.from_coords([[0, 1, 1], [0, 0, 2], [1, 1, 0]], [1.0, 5.0, 2.0], (2, 3, 2),
                              "csf")
    b = ep.Tensor.from_coords([[1, 1], [0, 2], [1, 0]], [9.0, 1.0], (2, 3, 2), "csf")
    for e, want in ((ep.sum((o, n, i), A[o, n, i] < B[o, n, i]), 1.0),
                    (ep.sum((n, i), A[o, n, i] < B[o, n, i]), np.array([0.0, 1.0]))):
        kern = ep.compile(e)
        assert np.allclose(kern(A=a, B=b), want)
        assert np.allclose(kern(A=a, B=a), 0.0 * np.asarray(want))     # one structure


def test_explain_shows_the_kernel_the_last_call_ran():
    """After a call that ran one walk, explain() shows the fused kernel below the
    kernel as written; plan and c_source stay the kernel's own (etchpy.distributed
    binds a kernel's arguments by them)."""
    rows = [(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 2, 5, 4)]
    rel, _ = load(rows, ["dense", "compressed"])
    A, B = rel["a"].var("A"), rel["b"].var("B")
    kern = ep.compile(ep.sum((o, n), A[o, n] * B[o, n]), order=["o", "n"], tuning=WALK)
    assert "one walk" not in kern.explain()
    kern(A=rel["a"].tensor, B=rel["b"].tensor)
    text = kern.explain()
    own, walked = text.split("one walk (runtime.shared)")
    assert "A[o,n]" in own and "q_o_n" not in own and "q_o_n" in walked
    assert "q_o_n" not in kern.c_source and "q_o_n" not in str(kern.plan)
    apart = copies(rel)
    assert np.allclose(kern(A=apart["A"], B=apart["B"]), kern(A=rel["a"].tensor,
                                                             B=rel["b"].tensor))


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(three, min_size=1, max_size=14, unique_by=lambda r: r[:2]),
       t=st.integers(-2, 4))
@example(rows=[(x, 0, 0, 0, 0, 0) for x in range(4)], t=0)   # n stored as a singleton
def test_a_run_through_singleton_levels_is_one_level(rows, t):
    """A table keyed by (o, n) whose p and s depend on the key (singleton levels:
    ep.table): Σ_{n,p,s} and Σ_{n,p} of A·[B < t] read the run n, p (, s) as one
    level, a singleton's positions its parent's; against the reference, with a
    write in place between calls."""
    i, j = ep.indices("i j")
    cols = {c: np.array([r[m] for r in rows]) for m, c in enumerate("onpsab")}
    keys = ep.Keys(np.arange(4), name="k")
    T = ep.table(cols, ["o", "n"], keys=["p", "s"], values=["a", "b"], name="R",
                 coding=dict.fromkeys("onps", keys), levels=None)
    assert "singleton, singleton" in T.explain()
    A, B = T.var("a", name="A"), T.var("b", name="B")
    by_o = ep.compile(ep.sum((n, i, j), A[o, n, i, j] * (B[o, n, i, j] < "t")),
                      order=["o", "n", "i", "j"])
    by_os = ep.compile(ep.sum((n, i), A[o, n, i, j] * (B[o, n, i, j] < "t")),
                       order=["o", "n", "i", "j"])
    for step in range(2):
        want_o, want_os = np.zeros(4), np.zeros((4, 4))
        for x, _, _, z, a, b in rows:
            if b < t:
                want_o[x] += a
                want_os[x, z] += a
        ins = {"A": T.tensor("a"), "B": T.tensor("b")}
        assert np.allclose(by_o(t=t, **ins), want_o), step
        assert np.allclose(by_os(t=t, **ins), want_os), step
        T.tensor("a").vals[:] += 1.0              # in place: every stored row's a + 1
        rows = [r[:4] + (r[4] + 1, r[5]) for r in rows]
    # every o with one row stores n as a singleton too: no compressed level starts a
    # run under o (a run of singletons alone is already one step per position)
    runs = "dense, singleton" not in T.explain()
    for kern, run in ((by_o, ("n", "i", "j")), (by_os, ("n", "i"))):
        (fused, read), = [v for v in kern._walk_kernels.values() if v is not None]
        assert read.get("A") == ((((1, len(run)),), "A") if runs else None)


def test_inputs_of_structures_of_their_own_skip_the_partition():
    """A kernel only a shared structure can change (no flat walk, no run of levels)
    runs as written, without the partition, when the Tensors of each group have no
    level array in common; over one structure it runs the fused kernel. A dense-only
    Tensor has no level array to tell by: it is never taken as apart."""
    rows = [(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 2, 5, 4), (3, 3, 2, 2, 1)]
    rel, _ = load(rows, ["dense", "compressed"])
    A, B = rel["a"].var("A"), rel["b"].var("B")
    kern = ep.compile(A[o, n] * B[o, n], tuning=WALK)
    apart = copies(rel)
    want = rel["a"].tensor.to_dense() * rel["b"].tensor.to_dense()
    assert np.allclose(kern(A=apart["A"], B=apart["B"]), want)
    assert kern._walk[2] and not fused_ran(kern) and "_walk_memo" not in kern.__dict__
    assert np.allclose(kern(A=rel["a"].tensor, B=rel["b"].tensor), want) and fused_ran(kern)
    assert ep.compile(ep.sum((o, n), A[o, n]))._walk is None    # lowering walks it flat
    two, _ = load(rows, ["compressed", "compressed"])  # ... not these: a flat walk, no partner
    whole = ep.compile(ep.sum((o, n), two["a"].var("A")[o, n]), tuning=WALK)
    assert whole(A=copies(two)["A"]) == two["a"].tensor.to_dense().sum() and fused_ran(whole)
    dense = [ep.Tensor.from_dense(want, "dense") for _ in "AB"]
    assert whole._walk[2] is False and shared_walks._apart((("A", "B"),), apart)
    assert not shared_walks._apart((("A", "B"),), dict(zip("AB", dense)))


def test_a_dense_first_level_starts_a_run():
    """Σ over every order and line of A·S[p] (S read at the line's part, as TPC-H
    Q14 reads the part table): the dense first level (o) and the lines (n) read
    by A alone are one level (proofs_notes/shared.md, "A dense first level
    starting a run"), its pos [0, every line]; with dense=False
    (Tuning.dense_runs) no run. (Q14 runs so at the TPC-H fixture against
    DuckDB's rows: tests/end_to_end/test_tpch_tables.py; no C built here.)"""
    i, j = ep.indices("i j")
    rng = np.random.default_rng(5)
    pairs = sorted({(int(x), int(y)) for x, y in rng.integers(1, 4, size=(14, 2))})
    cols = {"o": np.array([x for x, _ in pairs]), "n": np.array([y for _, y in pairs])}
    cols.update(p=rng.integers(0, 4, len(pairs)), s=rng.integers(0, 4, len(pairs)),
                a=rng.random(len(pairs)))
    keys = ep.Keys(np.arange(4), name="k")
    T = ep.table(cols, ["o", "n"], keys=["p", "s"], values=["a"], name="R",
                 coding=dict.fromkeys("onps", keys))
    assert "dense, compressed, singleton, singleton" in T.explain()
    S = ep.tensor("S", 1, "dense")
    e = ep.sum((o, n, i, j), T.var("a", name="A")[o, n, i, j] * S[i])
    order = ("o", "n", "i", "j")
    got, runs = collapse.collapse(e, {"A", "S"}, order)
    assert runs == {"r_o_n": (("A",), 0, 1, ("o", "n"))} and "A[r_o_n,i,j]" in str(got)
    assert collapse.collapse(e, {"A", "S"}, order, dense=False)[1] == {}
    t = T.tensor("a")
    levels, count = positions.collapsed_levels(t.levels, 0, 1, t.shape[0])
    assert count == len(pairs) and levels[0]["pos"].tolist() == [0, len(pairs)]
    assert levels[0]["crd"].tolist() == list(range(len(pairs))) and levels[1:] == t.levels[2:]


def test_a_flat_walk_reads_no_value_position_that_is_not_an_entry():
    """Σ_i A[i], A hash: a write in place over every value (its empty slots too,
    as a dev-profile draw of test_last_call did) leaves the sum of the entries;
    a flat walk of the values would have read the empty slot's 1. A run list's value
    stands for each coordinate of its run: Σ of rle [1, 1, 0] is 2, not 1 (seed 5063)."""
    for fmt in ("rle", "sparse_rle"):
        runs = ep.Tensor.from_dense(np.array([1.0, 1.0, 0.0]), fmt, name="A")
        assert ep.compile(ep.sum(ep.Index("i"), ep.tensor("A", 1, fmt)[ep.Index("i")]))(
            A=runs) == 2.0
    i = ep.Index("i")
    t = ep.Tensor.from_dense(np.array([1.0]), "hash", name="A")
    kern = ep.compile(ep.sum(i, ep.tensor("A", 1, "hash")[i]))
    assert kern(A=t) == 1.0
    t.vals[:] = np.where(t.vals == 0, 1.0, 0.0)       # the entry 0, the empty slot 1
    assert kern(A=t) == 0.0

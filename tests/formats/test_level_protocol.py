"""The laws of the level protocol (formats.level, proofs_notes/levels.md), checked
on the Imp interpreter against each level's own packing (`pack`/`unpack`)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy import imp, streams
from etchpy.formats import Format, level as shapes
from etchpy.imp import ONE, Const, Var
from etchpy.runtime.tensor import Tensor

SR = ep.semirings.get("real")
NAMED = [("csr", 2), ("csc", 2), ("dcsr", 2), ("coo", 2), ("coo", 3), ("csf", 3),
         ("dense", 2), (Format(["dense", "compressed", "dense"]), 3),
         (Format(["compressed", "dense"], (1, 0)), 2), ("banded", 2), ("blocks", 2),
         (Format(["blocks", "banded"], (1, 0)), 2),
         (Format(["banded", "compressed", "blocks"]), 3), ("rle", 2), ("rle", 1),
         (Format(["compressed", "blocks", "runs"], (2, 0, 1)), 3), ("bytemap", 2),
         ("bytemap", 1), (Format(["compressed", "banded", "bytemap"], (1, 2, 0)), 3),
         ("hash", 2), ("hash", 1), (Format(["compressed", "blocks", "hash"], (2, 0, 1)), 3),
         ("sparse_rle", 2), ("sparse_rle", 1),
         (Format(["compressed", "banded", "sparse_runs"], (1, 2, 0)), 3),
         ("uniform_band", 2), ("uniform_band", 1), (Format(["uniform_band", "dense"]), 2),
         (Format(["compressed", "uniform_band", "blocks"], (1, 0, 2)), 3)]
LEVELS = [Format(["dense"]).levels[0], Format(["compressed"]).levels[0],
          Format(["compressed-nonunique", "singleton"]).levels[0],
          Format(["compressed-nonunique", "singleton"]).levels[1],
          Format(["compressed-nonunique", "singleton-nonunique", "singleton"]).levels[1],
          Format(["banded"]).levels[0], Format(["blocks"]).levels[0],
          Format(["runs"]).levels[0], Format(["bytemap"]).levels[0],
          Format(["hash"]).levels[0], Format(["sparse_runs"]).levels[0],
          Format(["uniform_band"]).levels[0]]


def sparse_array(draw, order):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=order, max_size=order)))
    mask = draw(st.lists(st.booleans(), min_size=int(np.prod(shape)),
                         max_size=int(np.prod(shape))))
    return np.where(np.reshape(mask, shape), np.arange(np.prod(shape)).reshape(shape) + 1.0,
                    0.0)


@st.composite
def tensors(draw):
    spec, order = draw(st.sampled_from(NAMED))
    fmt = Format.parse(spec, order)
    return Tensor.from_dense(sparse_array(draw, order), fmt, name="T")


def machine(t: Tensor):
    b = streams.array_names("T", t.format)
    env = {b.vals: t.vals}
    env.update({f"T_dim{m}": n for m, n in enumerate(t.shape)})
    for arrays, names in zip(t.levels, b.levels):
        assert set(arrays) == set(names)          # roles name the level's own arrays
        env.update({names[r]: arrays[r] for r in names})
    return b, imp.Machine(SR, env)


def storage_positions(t: Tensor):
    """Per storage level: the (parent, coordinate, position) triples, from unpack."""
    out, parents = [], np.array([0])
    for k, (mode, lv) in enumerate(zip(t.format.mode_order, t.format.levels)):
        owner, coord, pos = lv.unpack(t.levels[k], parents, t.shape[mode])
        out.append((parents[owner], coord, pos))
        parents = pos if lv.located or lv.unique or k + 1 == len(t.format.levels) \
            else np.unique(pos)
    return out


@given(tensors())
def test_children_count_every_position(t):
    """children(0, n) at every level gives the number of positions there
    (Binding.positions), and the last level's is the length of vals."""
    b, m = machine(t)
    parents = 1
    for k, (_, _, pos) in enumerate(storage_positions(t)):
        size = t.shape[t.format.mode_order[k]]
        shape = t.format.levels[k].read(Const(0), Const(1), Const(size), b.levels[k])
        if isinstance(shape, shapes.Lookup):                  # a lookup: every cell
            assert m.eval(b.positions(k)) == parents * size
        elif isinstance(shape, (shapes.Hashed, shapes.Band)):   # every slot (tables, a
            assert m.eval(b.positions(k)) >= len(set(pos.tolist()))   # uniform band's)
        else:
            assert m.eval(b.positions(k)) == len(set(pos.tolist()))   # a run: many cells
        parents = m.eval(b.positions(k))
    if t.format.order:
        assert m.eval(b.positions(t.format.order - 1)) == len(t.vals)


@given(tensors())
def test_read_lists_a_parents_children(t):
    """read(p, p + 1) walks exactly the children unpack gives parent p, in order:
    a Range every coordinate at first + c, a Segment crd[q] for q in start..end-1."""
    b, m = machine(t)
    n_parents = 1
    for k, (mode, lv) in enumerate(zip(t.format.mode_order, t.format.levels)):
        size = t.shape[mode]
        for p in range(n_parents):
            _, want_coord, want_pos = lv.unpack(t.levels[k], np.array([p]), size)
            got = lv.read(Const(p), Const(p + 1), Const(size), b.levels[k])
            match got:
                case shapes.Range(first):
                    coord = np.arange(size)
                    pos = m.eval(first) + coord
                case shapes.Segment(crd, start, end, unique):
                    pos = np.arange(m.eval(start), m.eval(end))
                    coord = np.asarray(m.env[crd])[pos]
                    assert unique == lv.unique
                case shapes.Blocks(first, bpos, start, end):
                    blocks = range(m.eval(start), m.eval(end))
                    runs = [(m.env[first][b], m.env[bpos][b], m.env[bpos][b + 1])
                            for b in blocks]
                    assert all(z > a for _, a, z in runs)              # none empty
                    coord = [c + i for c, a, z in runs for i in range(z - a)]
                    pos = [q for _, a, z in runs for q in range(a, z)]
                case shapes.Band(lo, hi, at):
                    coord = list(range(m.eval(lo), m.eval(hi)))
                    pos = [m.eval(at) + c for c in coord]
                case shapes.RunList(ends, start, end, starts):
                    runs = range(m.eval(start), m.eval(end))
                    hi = [m.env[ends][r] for r in runs]
                    lo = [0] + hi[:-1] if starts is None else [m.env[starts][r] for r in runs]
                    assert all(z > a for a, z in zip(lo, hi))
                    assert starts is not None or hi[-1:] in ([], [size])   # runs cover
                    assert all(a >= z for a, z in zip(lo[1:], hi))          # in order
                    coord = [c for a, z in zip(lo, hi) for c in range(a, z)]
                    pos = [r for r, a, z in zip(runs, lo, hi) for _ in range(a, z)]
                case shapes.Lookup(crd, start, end, first):
                    coord = np.asarray(m.env[crd])[m.eval(start):m.eval(end)]
                    pos = m.eval(first) + coord
                    assert all(np.diff(coord) > 0)
                case shapes.Hashed(crd, slots, start, end):
                    pos = np.asarray(m.env[slots])[m.eval(start):m.eval(end)]
                    coord = np.asarray(m.env[crd])[pos]
                    assert all(np.diff(coord) > 0)
                case _:
                    raise AssertionError(got)
            assert list(coord) == list(want_coord) and list(pos) == list(want_pos)
        n_parents = m.eval(b.positions(k))


@given(tensors(), st.data())
def test_children_of_a_range_are_a_range(t, data):
    """children(lo, hi) is the range of the positions under parents lo..hi-1."""
    b, m = machine(t)
    n_parents = 1
    for k, (mode, lv) in enumerate(zip(t.format.mode_order, t.format.levels)):
        lo = data.draw(st.integers(0, n_parents))
        hi = data.draw(st.integers(lo, n_parents))
        _, _, want = lv.unpack(t.levels[k], np.arange(lo, hi), t.shape[mode])
        a, z = lv.children(Const(lo), Const(hi), Const(t.shape[mode]), b.levels[k])
        got = list(range(m.eval(a), m.eval(z)))
        shape = lv.read(Const(lo), Const(lo + 1), Const(t.shape[mode]), b.levels[k])
        if isinstance(shape, shapes.Lookup):    # every cell, the listed among them
            size = t.shape[mode]
            assert got == list(range(lo * size, hi * size)) and set(want) <= set(got)
        elif isinstance(shape, shapes.Hashed):  # every slot of their tables
            assert set(want) <= set(got)
        elif isinstance(shape, shapes.Band):    # a band: its slots, clipped ones among them
            assert set(want) <= set(got) and got == sorted(got)
        else:
            assert got == list(dict.fromkeys(want.tolist()))
        n_parents = m.eval(b.positions(k))


@pytest.mark.parametrize("lv", LEVELS, ids=str)
def test_every_level_answers_the_protocol(lv):
    assert isinstance(lv.roles, tuple) and isinstance(lv.located, bool)
    assert isinstance(lv.appends, bool) and not (lv.located and lv.appends)
    assert isinstance(lv.inserts, bool) and not (lv.inserts and (lv.located or lv.appends))
    assert not lv.appends or lv.unique and set(lv.roles) == {"pos", "crd"}
    arrays = {r: f"a_{r}" for r in lv.roles}
    assert isinstance(lv.read(Var("lo"), Var("hi"), Var("n"), arrays),
                      (shapes.Range, shapes.Segment, shapes.Blocks, shapes.Band,
                       shapes.RunList, shapes.Lookup, shapes.Hashed))
    assert len(lv.children(Var("lo"), Var("hi"), Var("n"), arrays)) == 2


def test_a_singleton_level_assembles_what_it_packs():
    """A singleton output level (lower/targets/listed.py: coo written in order)
    takes one coordinate per parent position from the kernel's arrays."""
    t = Tensor.from_coords([[0, 0, 2], [1, 3, 0]], [1.0, 2.0, 3.0], (3, 4), "coo")
    arrays, n = t.format.levels[1].assemble(lambda key, m: t.levels[1][key[:-1]][:m], 1, 3,
                                            4, None)
    assert n == 3 and np.array_equal(arrays["crd"], t.levels[1]["crd"])


@given(st.integers(1, 5), st.data())
def test_appending_builds_what_pack_builds(n_parents, data):
    """start, then append (with room) in order, close after each parent's last
    child, and fill_forward for the parents never closed, give pack's arrays."""
    size = 5
    entries = sorted(data.draw(st.sets(st.tuples(st.integers(0, n_parents - 1),
                                                 st.integers(0, size - 1)))))
    lv = Format(["dense", "compressed"]).levels[1]
    arrays = {"pos": "pos", "crd": "crd"}
    prog = [lv.start(arrays, "cnt", Const(n_parents), Const(1), Const(1))]
    for p in range(n_parents):
        mine = [c for q, c in entries if q == p]
        for c in mine:
            room = lv.room(arrays, imp.add(Var("cnt"), ONE))
            prog.append(lv.append(arrays, "cnt", "at", Const(c), room))
        if mine:
            prog.append(lv.close(arrays, Const(p), Var("cnt")))
    prog.append(lv.fill_forward(arrays, "r", Const(n_parents)))
    m = imp.Machine(SR, {})
    m.exec(imp.seq(*prog))
    want, _, n = lv.pack([p for p, _ in entries], n_parents, [c for _, c in entries], size)
    assert m.env["cnt"] == n
    assert list(m.env["pos"][:n_parents + 1]) == list(want["pos"])
    assert list(m.env["crd"][:n]) == list(want["crd"])

"""What an Evaluator (etchpy.lazy.steps) holds, one value per job:

    Options   how the program runs (frozen: optimize, threads, tuning, dry)
    Values    the run's values by node key, each in a slot, and the steps that
              computed them (what a replay.Tape records and replays)
    Facts     answers about the program's nodes, memoised for the run (supports,
              the sparse leaves' values, shared patterns, sampled operands)
    Report    what explain shows (leaf names, the steps' lines, the fusion plan)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..tuning import Tuning, of as tuning_of


@dataclass(frozen=True)
class Options:
    """How a program runs: optimize (False: each step as written), the kernels'
    threads and tuning (as given to compute: None, a preset name, a dict or a
    Tuning), dry (explain: nothing computed, every value a kernel.Dry), and
    finite (False when a value an array-level rewrite needed finite was not: the
    kernels then compile without the optimizer, whose distributive rewrites would
    turn its inf into inf - inf = nan, as the array-level one would have).
    `knobs` is the tuning as a Tuning (the fusion planner's prices)."""

    optimize: bool = True
    threads: int | None = 1
    tuning: object = None
    dry: bool = False
    finite: bool = True
    knobs: Tuning = field(init=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "knobs", tuning_of(self.tuning))


class Values:
    """The values of one run. Each has a slot in `env` (the leaves given first,
    in their order: slots below `nleaves`); `steps` lists (slot, fn) for each
    value computed as fn(env) from the slots before it, `guards` (slot, finite)
    the values whose finiteness chose a step; `replayable` turns False once a
    value is stored without its step. A key is stored once: store() of a key
    held replaces nothing (callers ask `key in values` first)."""

    def __init__(self, leaves=(), dry: bool = False):
        self.env: list = []
        self.slots: dict = {}
        self.steps: list = []
        self.guards: list = []
        self.replayable = not dry
        for leaf in leaves:
            self.slots[leaf.key] = len(self.env)
            self.env.append(leaf.value)
        self.nleaves = len(self.env)

    def __contains__(self, key) -> bool:
        return key in self.slots

    def get(self, key, default=None):
        """The value stored under key, else default."""
        s = self.slots.get(key)
        return default if s is None else self.env[s]

    def store(self, key, v, fn=None):
        """Give v a slot under key (fn: how it is computed from the slots before
        it; None: the run is not replayable). Returns v."""
        self.slots[key] = len(self.env)
        self.env.append(v)
        if fn is not None:
            self.steps.append((self.slots[key], fn))
        else:
            self.replayable = False
        return v

    def derived(self, key, fn, dry: bool) -> int:
        """The slot of fn(env), a value computed from the slots (once per key;
        nothing computed when dry)."""
        if key not in self.slots:
            self.store(key, None if dry else fn(self.env), None if dry else fn)
        return self.slots[key]

    def guard(self, slot: int, finite: bool) -> None:
        """Record that the value in slot was (not) finite when a step was chosen."""
        if (slot, finite) not in self.guards:
            self.guards.append((slot, finite))


@dataclass
class Facts:
    """Answers about the program's nodes, each computed once per run:
    `supports` (node key -> evaluator.support's answer), `sparse` (sparse leaf
    key -> its value), `patterns` ((id, id) -> do two csr arrays store one
    pattern), `sampled` ((dense key, sparse key) -> the leaf holding the dense
    node sampled on the sparse one's pattern)."""

    supports: dict = field(default_factory=dict)
    sparse: dict = field(default_factory=dict)
    patterns: dict = field(default_factory=dict)
    sampled: dict = field(default_factory=dict)


@dataclass
class Report:
    """What explain shows of a run: leaf names (key -> "X0", "X1", ... in the
    order met; other stand-ins named as they are made), the step lines, the
    materialised nodes in order, and the fusion planner's findings (None: no
    candidates; etchpy.lazy.fusion.choose)."""

    names: dict = field(default_factory=dict)
    nleaves: int = 0
    lines: list = field(default_factory=list)
    materialised: list = field(default_factory=list)
    fusion: object = None

    def name_leaf(self, key) -> None:
        """Name the leaf of key X0, X1, ... in the order leaves are first met."""
        if key not in self.names:
            self.names[key] = f"X{self.nleaves}"
            self.nleaves += 1

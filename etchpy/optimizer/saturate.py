"""Equality saturation under limits: per-rule backoff and early stopping.

Each iteration searches every rule that is not banned, applies all the matches
found, then rebuilds the e-graph. A node is searched again by a rule only when
one of its child classes has grown (its earlier matches are already in the
graph). The limits are an `etchpy.tuning.Saturation`:

- `nodes`, `iterations`, `seconds`: hard limits; `seconds` is CPU time of the
  saturating thread (`time.thread_time`), not wall time, so a loaded machine,
  a descheduled worker or another thread's work does not cut a search short
  (the result still depends on the host's speed, not on its load);
- `match_limit`, `ban_length`: a rule with more than match_limit·2^b new
  matches in one iteration (b = its bans so far) sits out ban_length·2^b
  iterations instead (`Backoff`);
- `patience`, `check_every`, `min_gain`, `saturate_below`: with a root class,
  its best (greedy tree) cost is extracted every check_every iterations, and a
  graph of at least `saturate_below` e-nodes stops once that cost has not
  decreased by more than the fraction min_gain for `patience` iterations
  (`Patience`; patience 0 or None turns this off). A smaller graph runs on to
  saturation (or a hard limit): a factorisation may need several rewrites in
  a row that do not lower the cost until the last one.

Stopping at any point is sound: every class only ever holds terms equal to its
original term.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from .egraph import EGraph
from .extract import best_costs
from .rules import Rule
from ..tuning import Saturation


@dataclass
class SaturationStats:
    """What one saturation run did; `stop` is why it ended."""
    iterations: int = 0
    nodes: int = 0
    classes: int = 0
    fired: Counter = field(default_factory=Counter)   # rule name -> classes it merged
    stop: str = ""
    seconds: float = 0.0
    costs: list = field(default_factory=list)     # (iteration, best tree cost of the root)
    extract_seconds: float = 0.0                  # time spent in those extractions

    def as_dict(self) -> dict:
        return {"iterations": self.iterations, "nodes": self.nodes, "classes": self.classes,
                "rules fired": dict(self.fired), "stop": self.stop,
                "seconds": round(self.seconds, 4),
                "root costs": list(self.costs),
                "extract seconds": round(self.extract_seconds, 4)}


class Backoff:
    """Per-rule match limits: a rule with too many new matches is banned for a while."""

    def __init__(self, limits: Saturation):
        self.match_limit, self.ban_length = limits.match_limit, limits.ban_length
        self.until: Counter = Counter()       # rule name -> first iteration it runs again
        self.bans: Counter = Counter()        # rule name -> bans so far

    def banned(self, rule: Rule, it: int) -> bool:
        return self.until[rule.name] > it

    def admit(self, rule: Rule, it: int, matches: int) -> bool:
        """False (and ban the rule) when `matches` is over its current limit."""
        bans = self.bans[rule.name]
        if matches <= self.match_limit << bans:
            return True
        self.until[rule.name] = it + (self.ban_length << bans)
        self.bans[rule.name] += 1
        return False


class Patience:
    """Early stopping: the root's best tree cost, checked every `check_every`
    iterations; a stop once that cost has not improved for `patience` iterations
    and the graph has `saturate_below` e-nodes, or for `idle` iterations (if set)
    whatever its size: a small graph that keeps growing without a cheaper root
    does not run on to the node or time limit."""

    def __init__(self, eg: EGraph, root: int, limits: Saturation, stats: SaturationStats):
        self.eg, self.root, self.stats = eg, root, stats
        self.patience, self.min_gain = limits.patience, limits.min_gain
        self.every = max(1, int(limits.check_every or 1))
        self.small = limits.saturate_below or 0
        self.idle = limits.idle or 0
        self.best, self.best_at = self._cost(0), 0

    def _cost(self, done: int) -> float:
        t0 = time.perf_counter()
        cost = best_costs(self.eg)[self.eg.find(self.root)]
        self.stats.extract_seconds += time.perf_counter() - t0
        self.stats.costs.append((done, cost))
        return cost

    def stalled(self, done: int) -> bool:
        """After `done` iterations: is the graph large, and has its best cost
        stopped improving?"""
        if done % self.every:
            return False
        now = self._cost(done)
        if now < self.best * (1 - self.min_gain):
            self.best, self.best_at = now, done
            return False
        waited = done - self.best_at
        return waited >= self.patience and (self.eg.num_nodes() >= self.small
                                            or 0 < self.idle <= waited)


def saturate(eg: EGraph, rules, limits: Saturation | None = None,
             root: int | None = None, until=None, focus=None, aim=None) -> SaturationStats:
    """Apply `rules` until nothing changes or a limit is hit; see the module docstring.

    Early stopping needs `root`. `until`, a function of no argument, is asked
    before the first iteration, after each one (the graph rebuilt), and within
    an iteration after every `limits.goal_step` merges (the graph rebuilt first): True
    stops the run (a sketch is satisfied: optimizer.sketch.search). `focus`, a
    function of no argument giving a set of class ids or None, restricts an
    iteration's search to the nodes of those classes; an iteration whose
    focused search adds nothing is followed by one over the whole graph.
    Returns the statistics; `stop` is one of "saturated", "node limit", "time
    limit", "iteration limit", "no improvement", "goal reached".
    """
    lim = limits if limits is not None else Saturation()
    stats = SaturationStats()
    start = time.perf_counter()
    cpu = time.thread_time()
    backoff, seen = Backoff(lim), set()
    first = WIDE if focus is None else AIMED if aim is not None else FOCUSED
    tier = first
    watch = Patience(eg, root, lim, stats) if root is not None and lim.patience else None
    if until is not None and until():
        return _finish(stats, "goal reached", eg, start)
    for it in range(lim.iterations):
        stats.iterations = it + 1
        only = None if tier == WIDE else focus()
        keep = aim(only) if tier == AIMED else None
        matches, any_banned = _matches(eg, rules, it, backoff, seen, only, keep)
        before = eg.num_nodes(), len(eg.classes)
        stop = _apply(eg, matches, stats, lim, cpu, until)
        eg.rebuild()
        grew = (eg.num_nodes(), len(eg.classes)) != before
        if not stop and not grew and not any_banned and only is None:
            stop = "saturated"
        tier = first if grew else min(tier + 1, WIDE)
        if not stop and watch is not None and watch.stalled(it + 1):
            stop = "no improvement"
        if stop != "goal reached" and until is not None and until():
            stop = "goal reached"
        if stop:
            return _finish(stats, stop, eg, start)
    return _finish(stats, "iteration limit", eg, start)


AIMED, FOCUSED, WIDE = 0, 1, 2      # which matches an iteration applies


def _finish(stats: SaturationStats, stop: str, eg: EGraph, start: float) -> SaturationStats:
    stats.stop = stop
    stats.nodes, stats.classes = eg.num_nodes(), len(eg.classes)
    stats.seconds = time.perf_counter() - start
    return stats


def _matches(eg: EGraph, rules, it: int, backoff: Backoff, seen: set, only=None,
             keep=None):
    """([(rule, class, node, binding)] of this iteration, was some rule banned?);
    `only`: search the nodes of these classes alone (None: all); `keep`: a
    filter of the matches."""
    matches, any_banned = [], False
    by_op = _nodes_by_op(eg, only)
    for r in rules:
        if backoff.banned(r, it):
            any_banned = True
            continue
        keys, found = _search(eg, r, seen, by_op)
        if keep is not None:        # a node with a match left out is searched again
            ok = [keep(r, *f) for f in found]
            left = {f[1] for f, y in zip(found, ok) if not y}
            found = [f for f, y in zip(found, ok) if y]
            keys = [k for k in keys if k[1] not in left]
        if not backoff.admit(r, it, len(found)):
            any_banned = True
            continue
        seen.update(keys)
        matches += [(r, *f) for f in found]
    return matches, any_banned


def _nodes_by_op(eg: EGraph, only=None) -> dict:
    """op -> [(class, node, sizes of its child classes)], one scan per iteration
    (of the classes `only`, when given)."""
    out: dict[str, list] = {}
    classes, find = eg.classes, eg.find
    for c in (classes if only is None else [c for c in only if c in classes]):
        for n in classes[c]:
            out.setdefault(n[0], []).append(
                (c, n, tuple(len(classes[find(k)]) for k in n[2])))
    return out


def _search(eg: EGraph, rule: Rule, seen: set, by_op: dict):
    """(search keys, [(class, node, binding)]): new matches of `rule` among `by_op`
    that satisfy its condition; a node is searched again only when a child class grew."""
    keys, found = [], []
    for c, n, sizes in by_op.get(rule.pattern.op, ()):
        key = (rule.name, n, sizes)
        if key in seen:
            continue
        keys.append(key)
        found += [(c, n, b) for b in rule.pattern.find(eg, n) if rule.condition(eg, n, b)]
    return keys, found


def _apply(eg: EGraph, matches, stats: SaturationStats, lim: Saturation, cpu_start: float,
           until=None) -> str:
    """Apply the matches in order; the name of the limit hit, "goal reached"
    (`until` asked every lim.goal_step merges, the graph rebuilt), or ""."""
    merged = 0
    for r, c, n, b in matches:
        rhs = r.applier(eg, n, b)
        if rhs is not None and eg.union(c, rhs):
            stats.fired[r.name] += 1
            merged += 1
            if until is not None and merged % lim.goal_step == 0:
                eg.rebuild()
                if until():
                    return "goal reached"
        if len(eg.memo) > lim.nodes:
            return "node limit"
        if time.thread_time() - cpu_start > lim.seconds:
            return "time limit"
    return ""

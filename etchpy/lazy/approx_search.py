"""Extraction under an error budget: choose one candidate per constant leaf (a
genome) minimising the model cost subject to the relative Frobenius error at the
root, measured on the samples by the numpy reference, staying ≤ the budget.

Two extractors, both seeded and both bounded by the problem's time limit (when it
runs out they return the best feasible genome scored so far; the all-exact
genome, scored first, is always feasible):
    genetic  the fuzzy-eqsat extractor: a population of Settings.population
             genomes (the exact one, each gene's cheapest candidate alone, the
             rest random), binary tournament selection, single-point crossover
             (probability crossover), each gene mutated with probability
             mutation, the best genome kept; it stops after `generations`
             generations, `stall` generations without a better genome, or the
             time limit
    greedy   every gene at its cheapest candidate, then an error-aware repair: while
             the error exceeds the budget, move the one gene whose next more
             accurate candidate buys the most error per unit of cost; then a
             cheapening pass tries each gene's cheaper candidates in turn
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """The approximation search's knobs (they choose which approximation runs,
    not the C of a kernel), given as `settings=` to ep.approximate:
    the genetic extractor's population, mutation and crossover probabilities,
    generations and stall (generations without a better genome before it
    stops); the side table's prune_thresholds (relative to max|W|). The
    cost of a plan is not a setting: it is the one cost model's
    (plan.product_cost, with the weights of the Tuning the program compiles
    under; docs/approximations.md, "Extraction")."""

    population: int = 50
    mutation: float = 0.05
    crossover: float = 0.9
    generations: int = 60
    stall: int = 12
    prune_thresholds: tuple = (1e-3, 1e-2, 1e-1)


class Problem:
    """The genes (for each constant leaf its candidates, 0 exact), the scorer
    score(genome) -> (cost, error), the budget, the time limit (seconds) and the
    Settings. Scores are memoised; `evaluations` counts the distinct genomes
    scored."""

    def __init__(self, genes: list, score, budget: float, time_limit: float,
                 settings: Settings = Settings()):
        self.genes, self._score, self.budget = genes, score, budget
        self.settings = settings
        self.deadline = time.perf_counter() + time_limit
        self.memo: dict = {}

    @property
    def evaluations(self) -> int:
        return len(self.memo)

    def out_of_time(self) -> bool:
        return time.perf_counter() > self.deadline

    def score(self, genome: tuple) -> tuple[float, float]:
        if genome not in self.memo:
            self.memo[genome] = self._score(genome)
        return self.memo[genome]

    def fitness(self, genome: tuple) -> float:
        """The cost when feasible, else above every feasible cost."""
        c, e = self.score(genome)
        if e <= self.budget:
            return c
        exact = self.score(self.exact())[0]
        return exact * (2 + min(e / max(self.budget, 1e-300), 1e6))

    def exact(self) -> tuple:
        return (0,) * len(self.genes)

    def best(self) -> tuple:
        """The cheapest feasible genome scored so far."""
        ok = [(c, g) for g, (c, e) in self.memo.items() if e <= self.budget]
        return min(ok)[1] if ok else self.exact()


def greedy(problem: Problem) -> tuple:
    """The greedy extractor with error-aware repair (see the module doc)."""
    problem.score(problem.exact())
    errs = [[cand.error for cand in cands] for cands in problem.genes]
    genome = tuple(min(range(len(e)), key=lambda c, e=e: (-e[c], c)) for e in errs)
    while problem.score(genome)[1] > problem.budget and not problem.out_of_time():
        cost, err = problem.score(genome)
        moves = []
        for g, cands in enumerate(problem.genes):
            better = [c for c in range(len(cands)) if errs[g][c] < errs[g][genome[g]]]
            if better:
                c = max(better, key=lambda c, g=g: (errs[g][c], -c))   # next more accurate
                moves.append(genome[:g] + (c,) + genome[g + 1:])
        if not moves:
            break
        genome = max(moves, key=lambda m: _gain(problem, m, cost, err))
    return _cheapen(problem, genome)


def _gain(problem: Problem, move: tuple, cost: float, err: float) -> float:
    c, e = problem.score(move)
    return (err - e) / max(c - cost, 1e-9 * max(cost, 1.0))


def _cheapen(problem: Problem, genome: tuple) -> tuple:
    if problem.score(genome)[1] > problem.budget:
        return problem.best()
    for g, cands in enumerate(problem.genes):
        for c in range(len(cands)):
            if problem.out_of_time():
                return problem.best()
            trial = genome[:g] + (c,) + genome[g + 1:]
            tc, te = problem.score(trial)
            if te <= problem.budget and tc < problem.score(genome)[0]:
                genome = trial
    return genome


def _initial(problem: Problem, rng: random.Random) -> list[tuple]:
    exact = problem.exact()
    pop = [exact]
    for g, cands in enumerate(problem.genes):
        cheapest = min(range(len(cands)), key=lambda c, cands=cands: (-cands[c].error, c))
        pop.append(exact[:g] + (cheapest,) + exact[g + 1:])
    size = problem.settings.population
    while len(pop) < size:
        pop.append(tuple(rng.randrange(len(c)) for c in problem.genes))
    return pop[:size]


def _child(problem: Problem, pop: list, rng: random.Random) -> tuple:
    def pick():
        a, b = rng.choice(pop), rng.choice(pop)
        return a if problem.fitness(a) <= problem.fitness(b) else b
    p, q = pick(), pick()
    n, knobs = len(problem.genes), problem.settings
    if n > 1 and rng.random() < knobs.crossover:
        cut = rng.randrange(1, n)
        p = p[:cut] + q[cut:]
    return tuple(rng.randrange(len(problem.genes[g])) if rng.random() < knobs.mutation
                 else v for g, v in enumerate(p))


def genetic(problem: Problem, seed: int = 0) -> tuple:
    """The genetic extractor (see the module doc), seeded."""
    rng = random.Random(seed)
    pop = _initial(problem, rng)
    best, stall, knobs = min(pop, key=problem.fitness), 0, problem.settings
    for _ in range(knobs.generations):
        if problem.out_of_time() or stall >= knobs.stall:
            break
        nxt = [best]
        while len(nxt) < knobs.population and not problem.out_of_time():
            nxt.append(_child(problem, pop, rng))
        pop = nxt
        champion = min(pop, key=problem.fitness)
        improved = problem.fitness(champion) < problem.fitness(best)
        best, stall = (champion, 0) if improved else (best, stall + 1)
    fit = problem.score(best)
    return best if fit[1] <= problem.budget else problem.best()


EXTRACTORS = {"genetic": genetic, "greedy": lambda problem, seed=0: greedy(problem)}


def extract(name: str, problem: Problem, seed: int) -> tuple[tuple, float]:
    """Run extractor `name`; the genome it chose and the seconds it took."""
    t0 = time.perf_counter()
    genome = EXTRACTORS[name](problem, seed=seed)
    return genome, time.perf_counter() - t0


__all__ = ["Settings", "Problem", "greedy", "genetic", "extract", "EXTRACTORS"]

"""Approximate lazy programs under an error budget (docs/approximations.md).

    w = ep.lazy(W, constant=True)              # known ahead of time: may be approximated
    x = ep.lazy(X)                             # not constant: needs samples
    a = ep.approximate(ep.maximum(x @ w, 0), max_rel_error=0.01, samples={x: Xs})
    a.compute(); print(a.explain())            # or ep.compute(..., max_rel_error=, samples=)

Off by default: without max_rel_error nothing here runs and `ep.compute` is exact.
With it, each constant leaf's approximations (etchpy.lazy.approx_table, a side
table that the e-graph and `ep.equivalent` never see) are searched by an extractor
(etchpy.lazy.approx_search) for the cheapest choice whose relative Frobenius error
at the results, measured on the samples with the numpy reference, is ≤ the
budget. The chosen program is then compiled and run on the samples; when that
error exceeds the budget (rounding), the exact program is used instead (whose
compiled error is the kernels' rounding against numpy only). The only guarantee
is that measured error (proofs_notes/approximations.md).
"""
from __future__ import annotations

import math
import numbers

from ..errors import InputError
from ..tuning import of as tuning_of
from .approx_search import EXTRACTORS, Problem, Settings, extract
from .approx_table import candidates, cost, reference, rel_error, substitute
from .array import as_node, lazy
from .nodes import RUN, LazyArray, Leaf
from .show import show
from .program import compute, explain

OPTIONS = ("max_rel_error", "samples", "heldout", "extractor", "seed", "time_limit",
           "settings")


def _leaves(nodes) -> list[LazyArray]:
    """The program's leaves in the order explain names them X0, X1, ..."""
    out, seen = [], set()

    def walk(n):
        if n.key in seen:
            return
        seen.add(n.key)
        if isinstance(n, Leaf):
            out.append(n)
        for a in n.args:
            walk(a)
    for n in nodes:
        walk(n)
    return out


def _check_budget(budget) -> float:
    if isinstance(budget, bool) or not isinstance(budget, numbers.Real) \
            or not math.isfinite(budget) or budget < 0:
        raise InputError(f"max_rel_error must be a finite number >= 0 (a relative "
                         f"Frobenius error), got {budget!r}")
    return float(budget)


def _operand(what: str, k, leaves: list, names: dict) -> LazyArray:
    """The leaf a samples key stands for: the lazy operand itself or its name in
    the program as written ("X0", "X1", ...); InputError for anything else."""
    if isinstance(k, str):
        found = [v for v in leaves if names[v.key] == k]
        if not found:
            raise InputError(f"{what}: no operand named {k!r} in this program (its operands "
                             f"are {', '.join(names[v.key] for v in leaves)})")
        return found[0]
    if not isinstance(k, Leaf):
        raise InputError(f"{what}: keys are the lazy operands (ep.lazy(x)) of the program "
                         f"or their names X0, X1, ..., got {k!r}")
    if k.key not in names:
        raise InputError(f"{what}: the operand {k.shape} is not an operand of this program")
    return k


def _inputs(what: str, given, leaves: list, names: dict, required: bool,
            partial: bool = False) -> dict:
    """{leaf key: lazy sample} from {lazy operand or name: array}; InputError
    naming the operand for an unknown, constant or mis-shaped one, and for a
    missing one unless `partial` (then the operands not given keep their arrays)."""
    if given is None and not required:
        return {}
    if not isinstance(given, dict):
        raise InputError(f"{what} must be a dict {{lazy operand: array}}, got "
                         f"{type(given).__name__}")
    variables = [v for v in leaves if not getattr(v, "constant", False)]
    out = {}
    for k, arr in given.items():
        leaf = _operand(what, k, leaves, names)
        if getattr(leaf, "constant", False):
            raise InputError(f"{what}: {names[leaf.key]} {leaf.shape} is a constant operand, "
                             f"which takes no samples")
        v = lazy(arr)
        if v.shape[1:] != leaf.shape[1:] or v.ndim != leaf.ndim:
            raise InputError(f"{what}: the sample for {names[leaf.key]} has shape {v.shape}; "
                             f"the operand has shape {leaf.shape} (only the first axis may "
                             f"differ)")
        out[leaf.key] = v
    missing = [v for v in variables if v.key not in out]
    if missing and (required or out) and not partial:
        m = missing[0]
        raise InputError(f"{what}: no sample for {names[m.key]} (shape {m.shape}), an operand "
                         f"that is not constant; give {what}={{x: array}} for it or wrap it "
                         f"with ep.lazy(..., constant=True)")
    return out


class Approximation:
    """An approximated program: `arrays` (the rebuilt lazy arrays, run by
    `compute()`), `choices` [(leaf name, Candidate)], `measured_error` (numpy
    reference on the samples), `compiled_error` (the compiled kernels on the
    samples), `heldout_error` (numpy reference on the held-out inputs, or None),
    `cost` and `exact_cost` (model), the `extractor`, its `seconds` and
    `evaluations`, the `budget`, and `fallback` (True when the compiled error
    exceeded the budget and the exact program is used)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def compute(self, inputs=None):
        """The results of the approximated program (as ep.compute returns them).

        Parameters: inputs, None (the operands' own arrays) or {lazy operand or its
        name "X0", "X1", ...: array} giving new arrays for operands that are not
        constant (a new batch: the first axis may differ); the others keep theirs.
        The same choices run, without searching again; the error was measured on
        the samples only. Raises: InputError naming an unknown, constant or
        mis-shaped operand.

            >>> y_new = a.compute({x: X_new})
        """
        if inputs is None:
            return compute(*self.arrays, **self.run_options)
        nodes, leaves, names, chosen, factored = self._program
        given = _inputs("inputs", inputs, leaves, names, False, partial=True)
        return compute(*substitute(nodes, {**given, **chosen}, factored), **self.run_options)

    def summary(self) -> list[str]:
        """The approximation lines explain() starts with."""
        held = "not given" if self.heldout_error is None else f"{self.heldout_error:.3g}"
        lines = [f"APPROXIMATED (max_rel_error={self.budget:g}; the result is not exact)",
                 f"  extractor {self.extractor}: {self.evaluations} plans scored in "
                 f"{self.seconds:.2f} s, model cost {self.cost:.3g} (exact {self.exact_cost:.3g})",
                 f"  relative Frobenius error on the samples: {self.measured_error:.3g} "
                 f"(numpy reference), {self.compiled_error:.3g} (compiled); held out: {held}"]
        if self.fallback:
            lines.append("  the compiled error exceeded the budget: the exact program runs")
        lines += ["  choices (names as in the program as written):"]
        lines += [f"    out{k} = {text}" for k, text in enumerate(self.written)]
        lines += [f"    {name}: {cand.describe()}" for name, cand in self.choices]
        return lines

    def explain(self) -> str:
        """The approximation (choices, errors) then ep.explain of the program run."""
        return "\n".join(self.summary() + [explain(*self.arrays, **self.run_options)])


def _scorer(nodes, rows, consts, sample_leaves, exact_ref, tuning):
    prices: dict = {}           # product shape -> its model price, for every genome
    def choice(genome):
        leaves = {c.key: rows[g][v].node for g, (c, v) in enumerate(zip(consts, genome))}
        factored = {id(rows[g][v].node) for g, v in enumerate(genome)
                    if rows[g][v].kind == "svd"}
        return leaves, factored

    def score(genome):
        leaves, factored = choice(genome)
        model = cost(substitute(nodes, leaves, factored), tuning, prices)
        approx = reference(substitute(nodes, {**sample_leaves, **leaves}, factored))
        return model, rel_error(approx, exact_ref)
    return score, choice


def approximate(*arrays, max_rel_error, samples, heldout=None, extractor: str = "genetic",
                seed: int = 0, time_limit: float = 10.0, settings: Settings | None = None,
                **run_options):
    """Choose approximations of the constant operands of a lazy program.

    Parameters: arrays, the lazy results; max_rel_error, the budget ≥ 0 on the
    relative Frobenius error of each result; samples, {lazy operand: array} for
    every operand not declared constant (the first axis may differ: a batch; a
    key may also be the operand's name in explain, "X0", "X1", ...);
    heldout, the same for inputs only used to report an error; extractor,
    "genetic" (default) or "greedy"; seed, the genetic extractor's seed;
    time_limit, seconds of scoring (numpy reference); settings, an
    etchpy.lazy.approx_search.Settings (the search's and the side table's
    knobs; None: the defaults); run_options, ep.compute's (optimize, threads,
    tuning), used for the compiled check and by compute().
    Returns: an Approximation. Raises: InputError naming a bad option or operand.

        >>> a = ep.approximate(y, max_rel_error=0.01, samples={x: X_train})
    """
    budget = _check_budget(max_rel_error)
    if extractor not in EXTRACTORS:
        raise InputError(f"extractor must be one of {sorted(EXTRACTORS)}, got {extractor!r}")
    if not isinstance(time_limit, numbers.Real) or not time_limit > 0:
        raise InputError(f"time_limit must be a number of seconds > 0, got {time_limit!r}")
    nodes = [as_node(a) for a in arrays]
    leaves = _leaves(nodes)
    names = {leaf.key: f"X{k}" for k, leaf in enumerate(leaves)}
    consts = [v for v in leaves if getattr(v, "constant", False)]
    sample_leaves = _inputs("samples", samples, leaves, names, True)
    held_leaves = _inputs("heldout", heldout, leaves, names, False)
    exact_ref = reference(substitute(nodes, sample_leaves, set()))
    settings = Settings() if settings is None else settings
    if not isinstance(settings, Settings):
        raise InputError(f"settings must be an etchpy.lazy.approx_search.Settings, got "
                         f"{type(settings).__name__}")
    weights = tuning_of(run_options.get("tuning"))
    rows = [candidates(c, settings, weights) for c in consts]
    score, choice = _scorer(nodes, rows, consts, sample_leaves, exact_ref, weights)
    problem = Problem(rows, score, budget, float(time_limit), settings)
    genome, seconds = extract(extractor, problem, seed)
    return _finish(nodes, genome, problem, choice, locals())


def _finish(nodes, genome, problem, choice, ctx):
    """The Approximation of the chosen genome, its error checked on the compiled
    kernels (the exact program when that exceeds the budget)."""
    sample_leaves, exact_ref, opts = ctx["sample_leaves"], ctx["exact_ref"], ctx["run_options"]
    leaves, factored = choice(genome)
    on_samples = substitute(nodes, {**sample_leaves, **leaves}, factored)
    compiled = compute(*on_samples, **opts)
    compiled_error = rel_error(compiled if len(nodes) > 1 else [compiled], exact_ref)
    fallback = compiled_error > problem.budget and genome != problem.exact()
    if fallback:
        genome = problem.exact()
        leaves, factored = choice(genome)
    held = None
    if ctx["held_leaves"]:
        h = ctx["held_leaves"]
        held = rel_error(reference(substitute(nodes, {**h, **leaves}, factored)),
                         reference(substitute(nodes, h, set())))
    rows, consts, names = ctx["rows"], ctx["consts"], ctx["names"]
    model, measured = problem.score(genome)
    return Approximation(
        arrays=substitute(nodes, leaves, factored), genome=genome, budget=problem.budget,
        choices=[(names[c.key], rows[g][v]) for g, (c, v) in enumerate(zip(consts, genome))],
        measured_error=measured, compiled_error=compiled_error, heldout_error=held,
        cost=model, exact_cost=problem.score(problem.exact())[0], fallback=fallback,
        extractor=ctx["extractor"], seconds=ctx["seconds"], evaluations=problem.evaluations,
        run_options=opts, written=[show(n, names) for n in nodes],
        _program=(nodes, ctx["leaves"], names, leaves, factored))


def _dispatch(kind: str, arrays, options: dict, run_options: dict):
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"ep.{kind}: unknown option {unknown[0]!r}")
    if options.get("max_rel_error") is None:
        raise InputError(f"ep.{kind}: {', '.join(sorted(options))} given without "
                         f"max_rel_error (approximation is off unless a budget is given)")
    if options.get("samples") is None:
        raise InputError(f"ep.{kind}: max_rel_error needs samples={{lazy operand: array}} "
                         f"for the operands that are not constant")
    a = approximate(*arrays, **options, **run_options)
    return a.compute() if kind == "compute" else a.explain()


RUN.update(approximate=_dispatch)
__all__ = ["approximate", "Approximation"]

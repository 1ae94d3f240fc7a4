"""What lowering produces: a `Program` (its parameters, the C ABI; its Imp body;
what its output is), and running one on the Imp interpreter."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from .. import imp
from .. import streams
from ..expr.compare import stores_nothing
from ..expr.windows import WindowVar
from ..expr.walk import accesses
from ..formats import Format
from ..plan import plan as planning
from ..plan.algorithms import NONE as NO_ALGORITHMS, Algorithms
from ..imp import Param      # (defined below lower/: runtime.restored decodes it)
from .target import OUTPUTS


@dataclass(frozen=True)
class Output:
    mode: str                       # the row of lower.outputs.table() that writes it
    axes: tuple[str, ...]
    format: Format | None
    arrays: dict = field(default_factory=dict)   # role -> Imp array name
    counts: dict = field(default_factory=dict)   # role -> Imp variable holding a length

    @property
    def records(self) -> bool:
        """Is it (coordinates, value) records, in loop order, that the runtime
        canonicalises (sorts, combines equal coordinates with ⊕), not the format's
        own level arrays (its row's `records`, lower.target.output)?"""
        return any(row.records for row in OUTPUTS.values() if row.mode == self.mode)


@dataclass(frozen=True)
class Program:
    params: tuple[Param, ...]
    body: imp.Stmt
    output: Output
    plan: planning.Plan
    dims: tuple                     # (index var, tensor, mode) for every access mode
    streams_text: tuple = ()
    # (index, largest size): the kernel returns 3, before allocating anything, when
    # that index's dimension is larger (a dense-only workspace, see lower_plan)
    refuse_above: tuple = ()
    # the planner's per-level choices it was lowered with (plan.algorithms): what
    # explain() shows; the body says what they did, so equality ignores them
    algorithms: Algorithms = field(default=NO_ALGORITHMS, compare=False)
    # the variant with fused input checks (lower.schedule.fused_checks): the inputs
    # whose checks it makes as it reads them, and the variable the checks report in
    fused: frozenset = frozenset()
    error: str | None = None
    # those of `fused` whose values the walks also check for NaN (the runtime then
    # leaves out its own NaN pass over them)
    fused_nan: frozenset = frozenset()


def program_names(prog) -> imp.Names:
    """A name supply that has claimed every name `prog` uses, parameters included:
    what a pass over a lowered program declares comes from it."""
    names = imp.Names()
    for used in sorted(imp.names_used(prog.body) | {p.name for p in prog.params}):
        names.fresh(used)
    return names


def describe_output(out: Output) -> list[str]:
    """How the output arrays are laid out, for the exported header."""
    if out.mode == "dense":
        return [f"{out.arrays['vals']}: row-major over ({', '.join(out.axes)}), "
                "one value per coordinate."]
    vals = out.arrays["vals"]
    if out.records:
        crds = ", ".join(f"{out.arrays[f'crd{m}']}[n] (index {ax})"
                         for m, ax in enumerate(out.axes))
        return [f"{crds} and {vals}[n], for n < count: one record per value produced,",
                "in loop order, not sorted; equal coordinates are to be combined with",
                "the semiring's add."]
    lines = [f"format {out.format}: storage level k holds index "
             f"({', '.join(out.axes[m] for m in out.format.mode_order)})[k]."]
    parents = "1"
    for k, lv in enumerate(out.format.levels):     # each level describes its arrays
        ax = out.axes[out.format.mode_order[k]]
        line, parents = lv.describe(k, ax, {r: out.arrays[f"{r}{k}"] for r in lv.roles},
                                    parents, count=out.counts.get(f"count{k}"))
        lines += _wrapped(line)
    lines.append(f"{vals} has one value per position of the last level ({parents}).")
    return lines


def _dim_doc(tv, m: int) -> str:
    """The header's words for size parameter m of input `tv`; a window's are its
    extended shape (expr.windows.WindowVar): lengths, the operand's sizes, lo, step."""
    if not isinstance(tv, WindowVar):
        return f"size of mode {m} of {tv.name}"
    n = tv.order
    what = ("length of the window on mode {k} (the size of its index)",
            "size of mode {k} of " + tv.source + " (its arrays' own size)",
            "first coordinate (lo) of the window on mode {k}",
            "step of the window on mode {k}")[m // n]
    return f"{tv.source}'s window: " + what.format(k=m % n)


def describe_inputs(prog: Program) -> list[str]:
    """How each input tensor's arrays must be laid out, for the exported header:
    what the kernel trusts of them (proofs_notes/trust.md), level by level."""
    names = {p.name for p in prog.params if p.kind == "in_array"}
    if not names:
        return []
    inputs = {acc.tensor.name: acc.tensor for step in prog.plan.steps
              for acc in accesses(step.body) if f"{acc.tensor.name}_vals" in names}
    lines = []
    for name, tv in sorted(inputs.items()):
        fmt = tv.format
        own = tv.order if isinstance(tv, WindowVar) else 0   # its arrays' own sizes
        dims = [f"{name}_dim{own + m}" for m in range(tv.order)]
        lines.append(f"{name} ({fmt}, sizes {', '.join(dims) or 'none'}):")
        if own:
            lines += _wrapped(f"  operand {tv.source}'s own arrays, read through a window "
                              f"(parameters {name}_dim0..{name}_dim{4 * own - 1}): "
                              f"coordinate w < length of a mode reads {tv.source} at "
                              "lo + w·step, and the semiring's zero where that is "
                              "outside [0, size); a mode without a window passes its "
                              "size as length, lo 0 and step 1.", "    ")
        parents = "1"
        for k, lv in enumerate(fmt.levels):
            m = fmt.mode_order[k]
            line, parents = lv.describe(k, f"mode {m}",
                                        {r: f"{name}_{r}{k}" for r in lv.roles},
                                        parents, size=dims[m])
            lines += _wrapped("  " + line, "    ")
        lines.append(f"  {name}_vals has one value per position of the last level "
                     f"({parents}).")
    return lines


def _wrapped(line: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(line, 84, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def run_program(prog: Program, sr, env: dict):
    """Run a program on the Imp interpreter; returns the final environment. A
    dense output's zeroed flag defaults to 0 (the program fills it). Arrays
    Alloc'ed kept must end holding their fill (imp.Machine.check_kept)."""
    machine = imp.Machine(sr, env)
    for p in prog.params:
        if p.kind == "out_zeroed":
            machine.env.setdefault(p.name, 0)
    for var, tensor, mode in prog.dims:
        machine.env.setdefault(f"dim_{var}", env[f"{tensor}_dim{mode}"])
    for var, most in prog.refuse_above:
        if machine.env[f"dim_{var}"] > most:
            raise imp.ImpRuntimeError(f"dimension {var} = {machine.env[f'dim_{var}']} is "
                                      f"refused (> {most})")
    machine.exec(prog.body)
    machine.check_kept()
    return machine.env


def input_params(tensors: dict, plan) -> tuple[list[Param], list]:
    """The C parameters of the inputs (each mode's size, each level's arrays,
    the values; an input that stores nothing has its sizes only) and the
    (index, tensor, mode) of every access in the plan's steps."""
    params: list[Param] = []
    for name in sorted(tensors):
        tv = tensors[name]
        for m in range(tv.order * (4 if isinstance(tv, WindowVar) else 1)):  # expr.windows
            params.append(Param(f"{name}_dim{m}", "dim", "index", _dim_doc(tv, m)))
        if stores_nothing(tv):
            continue                       # it reads no array (index_compare)
        b = streams.array_names(name, tv.format)
        for k, arrays in enumerate(b.levels):
            for role, arr in arrays.items():
                params.append(Param(arr, "in_array", "index",
                                    f"{name} level {k} ({tv.format.levels[k]}) {role}"))
        params.append(Param(b.vals, "in_array", "value", f"{name} values"))
    dims = []
    for step in plan.steps:
        for acc in accesses(step.body):
            if acc.tensor.name in tensors:
                for m, ix in enumerate(acc.indices):
                    dims.append((ix.name, acc.tensor.name, m))
    return params, dims

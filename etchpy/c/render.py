"""C text of a kernel: the file around the function, and the function's frame.

A lowered `Program` becomes one C99 function. The jinja2 skeletons in
`codegen_templates/` hold the file around it (includes, typedefs, helpers,
the exported prototype, the standalone header and the cffi cdef); all three
prototypes come from one `Prototype` (c.prototype). The statements inside come
from c.statements. Names are deterministic, so the same expression, formats,
semiring and tuning give byte-identical C. etchpy/c/ is the only place that
writes C.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from importlib import resources

import numpy as np

from .. import host_facts, imp
from .. import tuning as _tuning
from ..lower import Program, describe_inputs, describe_output
from ..lower.schedule.fused_checks import ERROR_CODE
from . import arms, bool_product, walks
from .sorted_walk import place_max
from .prototype import CParam, CSource, Prototype, prototype
from .statements import INDENT, SIMD_LANES, FunctionBody, kept_arrays

__all__ = ["render", "checks_source", "templates", "prototype", "CSource", "CParam", "Prototype"]

_TEMPLATES = ("kernel.c.j2", "kernel.h.j2", "cdef.j2", "checks.c.j2", "checks.cdef.j2",
              "frontier.c.j2", "direct_graph.c.j2", "binder.c.j2",
              "binder_inputs.c.j2", "binder_outputs.c.j2", "binder_lazy.c.j2",
              "binder_apart.c.j2", "binder_nodes.c.j2", "binder_blas.c.j2", "binder_region.c.j2",
              "binder_tape.c.j2")


@lru_cache(maxsize=1)
def templates():
    """The jinja2 environment over codegen_templates/ (strict: an unset name fails)."""
    import jinja2      # only needed when C is rendered, not for every import etchpy
    text = {name: resources.files("etchpy.codegen_templates").joinpath(name).read_text()
            for name in _TEMPLATES}
    return jinja2.Environment(loader=jinja2.DictLoader(text), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


def render(prog: Program, semiring, *, name: str, idx_type: str = "int64_t",
           banner: tuple[str, ...] = (), version: str = "", include_header=False,
           tuning: _tuning.Tuning = _tuning.DEFAULT, unit=None) -> CSource:
    """The C source, header and cdef of function `name` running `prog` over
    `semiring`, with index arrays of C type idx_type (int32_t or int64_t).
    `banner` lines head the files' comments; with include_header the source
    includes `{name}.h`. The knobs of the C text come from `tuning`. `unit`:
    None, or (a program whose parameters are among prog's, a C test of them):
    a function `{name}_unit` of its own, which the exported one runs instead
    where the test holds (etchpy.unit_arms)."""
    if imp.loose_breaks(prog.body):
        raise ValueError("an imp.Break outside a While (through If, Seq and Block only)")
    proto = prototype(prog, name)
    error = prog.error
    body, split = _split_body(prog, proto, name, semiring, tuning)
    helpers = []                  # (a split kernel's functions need none: _split_body)
    if body is None:
        fb = FunctionBody(prog, semiring, tuning)
        body, helpers = function_body(fb, error), fb.helpers
    unit_c, switched = _unit(unit, name, semiring, tuning), prog.body
    if unit_c is not None:
        body = f"{INDENT}{unit_c[1]}\n{body}"
        switched = imp.Seq((prog.body, unit[0].body))
    env = dict(version=version, banner=list(banner), name=name, idx_type=idx_type,
               val_type=semiring.c_type(), semiring=semiring.name,
               **_complex_types(semiring.dtype),
               fp_contract=tuning.fp_contract and _contracts(prog, semiring),
               include_header=include_header, refuses=bool(prog.refuse_above),
               checks=error is not None, check_code=ERROR_CODE,
               helpers=helpers, **_helper_switches(switched, tuning),
               uses_and_min=bool_product.uses(semiring, tuning, switched),
               unit=None if unit_c is None else unit_c[0])
    t = templates()
    c = t.get_template("kernel.c.j2").render(
        prototype=proto.render("ep_idx_t", "ep_val_t"), body=body, arms=split, **env)
    own = (f"{name}_idx_t", f"{name}_val_t", f"{name}_restrict")
    header = t.get_template("kernel.h.j2").render(
        params=proto.renamed(*own), header_prototype=proto.render(*own),
        guard=f"{name}_H", sparse_output=prog.output.mode != "dense",
        output_doc=describe_output(prog.output), input_doc=describe_inputs(prog),
        boolean=semiring.dtype.kind == "b", **env)
    cdef = t.get_template("cdef.j2").render(cdef_prototype=proto.render(), **env)
    return CSource(name, c, header, cdef, proto)


def _split_body(prog: Program, proto, name: str, semiring, tuning):
    """(the exported function's body, the arms' functions) where prog has a
    split condition (c.arms) and neither arm needs helpers of its own, else
    (None, [])."""
    cond = arms.split_cond(prog)
    if cond is None:
        return None, []
    fbs = [FunctionBody(p, semiring, tuning) for p in arms.programs(prog, cond)]
    bodies = [function_body(f, prog.error) for f in fbs]
    if any(f.helpers for f in fbs):
        return None, []
    functions, call = arms.functions(proto.render("ep_idx_t", "ep_val_t"), name,
                                     proto.params, fbs[0].expr(cond), bodies)
    return call, functions


def _unit(unit, name: str, semiring, tuning) -> tuple[str, str] | None:
    """(the C of function `{name}_unit` running unit's program, its arms' first,
    the exported function's first statement: that function's result where unit's
    test holds), or None (no unit, or one that needs helpers of its own)."""
    if unit is None:
        return None
    prog, test = unit
    uname = f"{name}_unit"
    proto = prototype(prog, uname)
    body, split = _split_body(prog, proto, uname, semiring, tuning)
    if body is None:
        fb = FunctionBody(prog, semiring, tuning)
        body = function_body(fb, prog.error)
        if fb.helpers:          # (filled as it renders: a BLAS call's, threads')
            return None
    head = proto.render("ep_idx_t", "ep_val_t").replace("int ", "static EP_ARM int ", 1)
    args = ", ".join(p.name for p in proto.params)
    return ("\n\n".join([*split, f"{head}\n{{\n{body}\n}}"]),
            f"if ({test}) return {uname}({args});   /* its last index of extent 1 */")


def _complex_types(dtype) -> dict:
    """For a complex carrier, the C type of its parts and the layout-compatible
    C++ type the header declares instead of C99's _Complex (which C++ lacks)."""
    if np.dtype(dtype).kind != "c":
        return dict(complex_part=None, complex_cpp=None)
    part = "float" if np.dtype(dtype) == np.complex64 else "double"
    return dict(complex_part=part, complex_cpp=f"std::complex<{part}>")


def _contracts(prog: Program, semiring) -> bool:
    """Whether `Tuning.fp_contract` applies: a dense (or scalar) output over a float
    or complex carrier whose ⊗ multiplies (not min_plus's +). A sparse output
    keeps every product rounded: which cells it stores may depend on which sum to
    an exact zero, and a contracted x·y − x·y is x·y's rounding error, not 0 (an
    SpGEMM stored 62128 entries where scipy's product has 62126)."""
    return (prog.output.mode == "dense" and np.dtype(semiring.dtype).kind in "fc"
            and "*" in semiring.mul.render("a", "b"))


def checks_source(version: str = "") -> tuple[str, str]:
    """C source and cdef of the compiled structural checks (see runtime.checks)."""
    t = templates()
    return (t.get_template("checks.c.j2").render(version=version),
            t.get_template("checks.cdef.j2").render())


def _helper_switches(body, tuning: _tuning.Tuning) -> dict:
    """Which helpers of kernel.c.j2 the program needs, and their knobs."""
    found = {type(u) for u in imp.statements(body)}
    return dict(
        uses_rare=any(isinstance(u, imp.If) and u.rare for u in imp.statements(body)),
        uses_sort=imp.ForSorted in found,
        uses_hash=any(isinstance(x, imp.Probe) or isinstance(x, imp.Bin) and x.op == "hash"
                      for x in imp.subterms(body)),
        uses_bin=any(isinstance(x, imp.Bin) and x.op == "bin" for x in imp.subterms(body)),
        uses_keep=any(isinstance(x, imp.Bin) and x.op == "keep" for x in imp.subterms(body)),
        uses_umax=any(isinstance(x, imp.Bin) and x.op == "umax" for x in imp.subterms(body)),
        uses_short=any(isinstance(u, imp.ShortIntersect) and u.width == SIMD_LANES
                       for u in imp.statements(body)),
        uses_seek=imp.Seek in found,
        uses_gather=imp.GatherSum in found,
        uses_gather_max=bool(lanes_maxima(body)),
        uses_gather_ext=any(isinstance(u, imp.GatherSum) and u.ops != ("+", "*")
                            for u in imp.statements(body)),
        **_picks(body),
        uses_fill_hits=tuning.window_fill_lanes and _fills_hits(body),
        uses_kept=bool(kept_arrays(body)),
        probe_lanes=_probe_lanes(tuning),
        seek_linear=tuning.seek_linear,
        huge_page=_c_bytes(tuning.huge_page_bytes),
        huge_page_text=_bytes_text(tuning.huge_page_bytes),
        map_bytes=_c_bytes(tuning.map_bytes) if tuning.map_bytes > 0 else None,
        map_text=_bytes_text(tuning.map_bytes),
        spare_age=max(tuning.spare_age, 0),
        kept_pages=_c_bytes(max(tuning.kept_pages_below, 0)),
        kept_pages_text=_bytes_text(max(tuning.kept_pages_below, 0)),
        **_sort_switches(tuning))


def _sort_switches(tuning: _tuning.Tuning) -> dict:
    """The knobs of the sorted walk's helpers (ep_sort_idx, ep_marks_walkable,
    ep_marks_ranked), checked."""
    if tuning.sort_run < 2:
        raise ValueError(f"tuning.sort_run must be at least 2, not {tuning.sort_run}")
    if not 0 <= tuning.rank_sort_max <= 1024:
        raise ValueError(f"tuning.rank_sort_max must be within 0..1024, not "
                         f"{tuning.rank_sort_max}")
    if tuning.sort_near_places < 1:
        raise ValueError(f"tuning.sort_near_places must be at least 1, not "
                         f"{tuning.sort_near_places}")
    if tuning.sort_net not in (0, 16, 32):
        raise ValueError(f"tuning.sort_net must be 0, 16 or 32, not {tuning.sort_net}")
    if tuning.sort_near_share < 0:
        raise ValueError(f"tuning.sort_near_share must be at least 0, not "
                         f"{tuning.sort_near_share}")
    return dict(
        sort_run=tuning.sort_run,
        rank_sort_max=tuning.rank_sort_max,
        rank_loads=host_facts.resolved(tuning).rank_loads > 0,
        sort_base=max(tuning.sort_run, tuning.rank_sort_max),
        marks_walk_min=tuning.marks_walk_min,
        near_places=tuning.sort_near_places,
        sort_near_share=tuning.sort_near_share,
        marks_walk_spread=tuning.marks_walk_spread,
        sort_net=tuning.sort_net if tuning.rank_sort_max else 0,
        sort_place=bool(tuning.sort_place and tuning.rank_sort_max),
        place_max=place_max(tuning),
        net_widths=[(w, _net_steps(w)) for w in (16, 32) if w <= tuning.sort_net])


def _picks(body) -> dict:
    """Which pick helpers (imp.GatherPick) of kernel.c.j2 the program needs."""
    picks = [u for u in imp.statements(body) if isinstance(u, imp.GatherPick)]
    return dict(uses_gather_spread=any(u.rows_far and u.far_mild for u in picks),
                uses_far_pick=any(u.crd is not None and not u.near for u in picks),
                uses_near_pick=any(u.crd is not None and u.near for u in picks))


def _probe_lanes(tuning: _tuning.Tuning) -> int:
    """The slots ep_probe compares at once: the host's hash_probe_lanes (4 or 8;
    0 for off, any value below 2)."""
    lanes = host_facts.resolved(tuning).hash_probe_lanes
    if lanes > 1 and lanes not in (4, 8):
        raise ValueError(f"tuning.hash_probe_lanes must be 4 or 8 (or below 2: off), not {lanes}")
    return lanes if lanes > 1 else 0


def _net_steps(width: int) -> list[tuple[str, str]]:
    """The steps of a bitonic network sorting `width` lanes ascending, as C
    initialisers: (the partner of each lane, -1 where the lane keeps the smaller)."""
    steps, k = [], 2
    while k <= width:
        j = k // 2
        while j:
            perm = [i ^ j for i in range(width)]
            low = [-1 if ((i & j) == 0) == ((i & k) == 0) else 0 for i in range(width)]
            steps.append((", ".join(map(str, perm)), ", ".join(map(str, low))))
            j //= 2
        k *= 2
    return steps


def function_body(fb: FunctionBody, error: str | None = None) -> str:
    """The kernel function's body: its dimensions read and checked, the heap
    arrays declared, the program, the outputs handed back, and the `fail` exit
    that frees every heap array. `error`: the variable in which fused input
    checks (lower.schedule.fused_checks) report; when it is set the kernel frees every heap
    array and returns it, handing back nothing."""
    prog = fb.prog
    lines = _dimensions(fb)
    for var, most in prog.refuse_above:
        lines.append(f"if (dim_{var} > {most}) return 3;   /* needs the hash-table build */")
    for arr, typ in fb.heap.items():
        lines.append(f"{fb.ctype(typ)} *{arr} = NULL; int64_t {fb.cap(arr)} = 0;")
    lanes = lanes_maxima(prog.body)
    lines += [f"ep_gather_max_t {m} = EP_GATHER_MAX_ZERO;" for m in lanes]
    lines.append(fb.stmt(prog.body, 0))
    lines += [f"if (ep_gather_max_out({m}, {dim})) {err} = {ERROR_CODE};"
              for m, (dim, err) in lanes.items()]
    if error is not None:
        lines.append(f"if ({error}) {{")
        lines += [f"    ep_release({arr});" for arr in fb.heap]
        lines += [f"    return (int){error};", "}"]
    published = {p.name for p in prog.params if p.kind == "out_grown"}
    for p in prog.params:
        if p.kind in ("out_grown", "out_count"):
            lines.append(f"*{p.name}_ret = {p.name};")
    lines += [f"ep_give_kept({arr}, (size_t){fb.cap(arr)}, {fb.fill_bits(arr, typ)});"
              if arr in fb.kept
              else f"ep_release({arr});" for arr, typ in fb.heap.items() if arr not in published]
    lines.append("return 0;")
    if fb.heap or fb.fails:
        lines += ["fail:", *(f"ep_release({arr});" for arr in fb.heap), "return 1;"]
    return "\n".join(INDENT + ln if ln and not ln.startswith("fail:") else ln
                     for ln in "\n".join(lines).split("\n"))


def lanes_maxima(body) -> dict:
    """{C name of a SIMD maximum: (its level's dim, the error variable)} of the
    gathered sums of `body` whose lanes clamp their coordinates
    (imp.GatherSum.lanes_max): declared before the program, tested after it."""
    return {s.lanes_max: (s.dim, s.error) for s in imp.statements(body)
            if isinstance(s, imp.GatherSum) and s.lanes_max}


def _dimensions(fb: FunctionBody) -> list[str]:
    """dim_{var} for each index, from the first tensor mode it sizes; every other
    mode it sizes must agree (else the kernel returns 2). A size parameter no
    loop reads and no index takes (a window's lo or step on a mode it leaves
    whole) is cast to void: exported kernels compile under -Wextra -Werror."""
    first: dict[str, str] = {}
    lines = []
    used = imp.names_used(fb.prog.body)
    shared = Counter(var for var, _, _ in fb.prog.dims)
    for var, tensor, mode in fb.prog.dims:
        src = f"{tensor}_dim{mode}"
        if var not in first:
            first[var] = src
            lines.append(f"const int64_t dim_{var} = {src};")
            if f"dim_{var}" not in used and shared[var] == 1:
                lines.append(f"(void)dim_{var};   /* read by no loop */")
    for var, tensor, mode in fb.prog.dims:
        src = f"{tensor}_dim{mode}"
        if first[var] != src:
            lines.append(f"if ({src} != dim_{var}) return 2;")
    sized = {f"{tensor}_dim{mode}" for _, tensor, mode in fb.prog.dims}
    lines += [f"(void){p.name};   /* a window's number read by no loop */"
              for p in fb.prog.params
              if p.kind == "dim" and p.name not in sized and p.name not in used]
    return lines


def _fills_hits(body) -> bool:
    """Whether a statement of `body` counts a window's fill hits (walks.fill_hits),
    the program's local arrays found once (not once per statement)."""
    local = walks.local_arrays(body)
    return any(walks.fill_hits(u, local) for u in imp.statements(body))


def _c_bytes(n: int) -> str:
    """A byte count as a C size_t expression, in MiB when it is whole MiB."""
    return f"((size_t){n >> 20} << 20)" if n and n % (1 << 20) == 0 else f"((size_t){n})"


def _bytes_text(n: int) -> str:
    return f"{n >> 20} MiB" if n and n % (1 << 20) == 0 else f"{n} bytes"


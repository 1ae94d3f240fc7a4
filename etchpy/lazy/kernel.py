"""One fused kernel of a lazy program: the translation context (its inputs by
tensor name, the index sizes and nonzero counts it saw) and running it."""
from __future__ import annotations

import numpy as np

from ..api import compile as compile_kernel
from ..expr.nodes import Access, TensorVar
from ..expr.walk import literal_bits
from .nodes import LazyArray
from .show import show
from ..runtime.kernel_cache import KERNELS
from .translate import Translator
from .wrap import trusted




class Dry:
    """A value not computed (explain): its shape, dtype and whether it is sparse."""

    def __init__(self, shape, dtype, sparse):
        self.shape, self.dtype, self.sparse, self.ndim = shape, dtype, sparse, len(shape)


def is_sparse(v) -> bool:
    return v.sparse if isinstance(v, Dry) else hasattr(v, "tocsr")


def kernel_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype.kind == "f" else np.dtype(np.int64)


class KernelContext:
    """One kernel's translation: its inputs by tensor name (the slot of the value
    each reads, the axes it drops), the sizes it saw."""

    def __init__(self, ev, root: LazyArray):          # ev: the steps.Evaluator
        self.ev, self.root = ev, root
        self.sources: dict = {}
        self.names: dict = {}
        self.dims: dict = {}
        self.nnz: dict = {}
        self.nodes: dict = {}       # the node each input tensor holds
        self.tr = Translator(self.pre)

    def pre(self, n: LazyArray, ix):
        return self.ev.pre(self, n, ix)

    def bind(self, n: LazyArray, v, ix) -> Access:
        """An access of the materialised value v of n with axes named ix (an axis
        named None has size one and is dropped)."""
        key = (n.key, tuple(v is None for v in ix))
        drop = tuple(d for d, name in enumerate(ix) if name is None)
        if key not in self.names:
            name = f"t{len(self.names)}"
            self.names[key] = name
            self.nodes[name] = n
            values = self.ev.values
            if n.key not in values:     # stored without a step: not replayable
                values.store(n.key, v)
            self.sources[name] = (values.slots[n.key], drop)
        name = self.names[key]
        kept = tuple(v for v in ix if v is not None)
        sp = is_sparse(v) and not drop and len(kept) == 2
        fmt = (getattr(v, "format", "csr") if sp else "dense")
        for v_ix, size in zip(kept, (m for d, m in enumerate(v.shape) if d not in drop)):
            self.dims[v_ix.name] = size
        if sp and not isinstance(v, Dry):
            self.nnz[name] = int(v.nnz)
        return Access(TensorVar(name, len(kept), fmt), kept)

    def kernel(self, e, out_ix, fmt):
        """The compiled kernel of e (from KERNELS when compiled before)."""
        run = self.ev.opts
        opts = {"dims": dict(self.dims), "nnz": dict(self.nnz)}
        if run.tuning is None:      # a given tuning's saturation limits win
            opts["limits"] = {"seconds": run.knobs.lazy_seconds}
        # a cheaper key into the one store than ep.compile's own (the tuning is kept
        # alive with the kernel, so its id stays its own)
        optimize = run.optimize and run.finite
        key = ("lazy", e, literal_bits(e), fmt, out_ix, optimize, run.threads, id(run.tuning),
               tuple(sorted(self.dims.items())), tuple(sorted(self.nnz.items())))
        kern = KERNELS.get(key)
        if kern is None:
            kern = compile_kernel(e, output=fmt, out_indices=out_ix, optimize=optimize,
                                  optimizer_options=opts if optimize else None,
                                  threads=run.threads, tuning=run.tuning)
            KERNELS.put(key, (kern, run.tuning))
            return kern
        return kern[0]

    def step(self, e, out_ix, fmt, node: LazyArray):
        """fn(env): the kernel of e run on its inputs' slots, as node's value."""
        ev = self.ev
        kern = self.kernel(e, out_ix, fmt)
        if ev.opts.dry:
            lines, names = ev.report.lines, ev.report.names
            lines.append(f"kernel -> {fmt} {node.shape}: {e}")
            lines.append("    inputs: " + ", ".join(
                f"{t}={show(m, names)}" for t, m in self.nodes.items()))
            lines.extend("    " + ln for ln in brief(kern.explain()))
            return lambda env: Dry(node.shape, node.dtype, fmt != "dense")
        dtype, ndtype, shape = kernel_dtype(node.dtype), node.dtype, node.shape
        srcs = [(name, s, drop) for name, (s, drop) in self.sources.items()]

        call = kern.call_with       # its call plan first (runtime.call_plans)

        def fn(env):
            args = {}
            for name, s, drop in srcs:
                v = env[s] if not drop else squeeze(env[s], drop)
                args[name] = v if v.dtype == dtype else v.astype(dtype)
            return reshape(call(args), ndtype, shape)
        if (fmt == "dense" and dtype == ndtype and len(out_ix) == len(shape) and shape
                and not any(d for _, _, d in srcs)):
            # its inputs as they are and its output an array as the node's (not 0-d: a
            # fixed call returns a scalar there): a replay may call the kernel on the
            # slots directly (etchpy.lazy.fast_replay)
            fn.kernel = (kern, tuple((name, s) for name, s, _ in srcs))
        return fn


KEPT = ("formats:", "output:", "before ", "after ", "rules ", "e-graph ", "as written ",
        "plan:", "⊕=")


def brief(text: str) -> list[str]:
    """The lines of a Kernel.explain() that say what runs: formats, the optimizer's
    before/after and rules, its cost verdict, the plan's loop nests."""
    out, rules = [], False
    for ln in text.splitlines():
        s = ln.strip()
        if s.startswith("streams ("):
            break
        rules = s.startswith("rules ") or (rules and not s.split(" ")[0].startswith("e-"))
        if rules or any(s.startswith(k) or k == "⊕=" and k in s for k in KEPT):
            out.append(ln)
    return out


def squeeze(v, drop: tuple):
    """v without its axes `drop` (each of size one)."""
    if not drop or isinstance(v, Dry):
        return v
    dense = trusted(v).toarray() if is_sparse(v) else np.asarray(v)
    return dense.reshape(tuple(n for d, n in enumerate(dense.shape) if d not in drop))


def reshape(out, dtype, shape):
    if type(out) is np.ndarray and out.dtype == dtype and out.shape == shape:
        return out
    if is_sparse(out):
        return out.astype(dtype, copy=False) if out.dtype != dtype else out
    return np.asarray(out, dtype=dtype).reshape(shape)

"""Kernels lowered under a given Tuning, for tests.

`tuned_kernel(expr, tuning, **compile_kwargs)` is a Kernel whose program is
lowered with `tuning` (its own cache name per tuning), and `export_tuned` writes
one as ep.export_c does. Both stand in for ep.compile / ep.export_c with
`tuning=` until the runtime passes the tuning itself.
"""
import hashlib
import pathlib

from etchpy import lower
from etchpy.runtime.kernel import Kernel


class TunedKernel(Kernel):
    def __init__(self, expr, tuning, **kw):
        self.tuning = tuning
        key = hashlib.sha1(tuning.key().encode()).hexdigest()[:10]
        kw["name"] = f"{kw.get('name', 'tuned')}_{key}"
        super().__init__(expr, **kw)

    def _plan_and_lower(self, expr):
        super()._plan_and_lower(expr)
        self.program = lower.lower_plan(self.plan, self.semiring, self.tensors,
                                        self.out_format, threads=self.threads,
                                        hash_workspace=self._every_size, tuning=self.tuning)

    def _for_every_size(self):
        if self._larger is None:
            self._larger = TunedKernel(
                self.source_expr, self.tuning, semiring=self.semiring,
                output=self.out_format or "dense", order=self._order,
                out_indices=self.out_indices, name=self.name.rsplit("_", 1)[0],
                threads=self.threads, optimize=self._optimize,
                optimizer_options=self._options, every_size=True)
        return self._larger


def tuned_kernel(expr, tuning, **kw) -> Kernel:
    return TunedKernel(expr, tuning, **kw)


def export_tuned(expr, name, directory, tuning, index_type="int64_t", **kw):
    """ep.export_c's files (name.c, name.h), of a kernel lowered under `tuning`."""
    kern = TunedKernel(expr, tuning, name=name, every_size=True, **kw)
    kern.name, kern._sources = name, {}
    src = kern.source(index_type, include_header=True)
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.c").write_text(src.c)
    (out / f"{name}.h").write_text(src.header)
    return out / f"{name}.c", out / f"{name}.h"

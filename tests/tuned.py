"""Kernels under a given Tuning, programs lowered and run on the Imp
interpreter, and random sparse inputs, for tests."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy import api, host_facts, imp, lower
from etchpy.expr.walk import tensors
from etchpy.plan import plan as planning
from etchpy.plan.convert import kernel_tensors
from etchpy.runtime.planned import with_conversions
from etchpy.runtime import inputs as binding
from etchpy.tuning import DEFAULT

# The host facts of an Intel host (etchpy.host_facts), for tests that read the C
# those facts shape: the same on every host, as the golden C's.
INTEL_FACTS = {name: fact(("GenuineIntel", 6)) for name, fact in host_facts.FIELDS}
INTEL = ep.Tuning(**INTEL_FACTS)


class Counted:
    """Counts the calls of a kernel's method `name` (an instance attribute
    wrapping it: the kernel's own method still runs)."""

    def __init__(self, kern, name: str = "_one_walk"):
        self.n, self.method = 0, getattr(kern, name)
        setattr(kern, name, self)

    def __call__(self, *args):
        self.n += 1
        return self.method(*args)


def relation_columns():
    """The value columns a, b of a small relation over (i, j), csr-like: two
    ep.Tensors over one structure (the same level arrays), 4 entries each."""
    rows = [(0, 1, 2.0, 3.0), (0, 4, -1.0, 5.0), (2, 0, 4.0, 0.5), (4, 5, 1.5, -2.0)]
    cols = {k: np.array([r[m] for r in rows]) for m, k in enumerate("ijab")}
    keys = ep.Keys(np.arange(6), name="k")
    rel = ep.relation(cols, ["i", "j"], values=["a", "b"], levels=["dense", "compressed"],
                      coding={"i": keys, "j": keys}, name="L")
    return rel["a"].tensor, rel["b"].tensor


def tuned_kernel(expr, tuning, **kw) -> ep.Kernel:
    """A kernel compiled under `tuning`."""
    return ep.Kernel(expr, tuning=tuning, **kw)


def hinted_c(expr, tuning=DEFAULT, **kw) -> str:
    """The C of `expr` planned from the hints alone (a fresh kernel, int64 indices).
    Not ep.compile(...).c_source: ep.compile hands every caller in the process one
    kernel per arguments, and after any call its c_source shows the plan of that
    call's size class (an adopted csc input's, say), whoever made the call."""
    return ep.Kernel(expr, tuning=tuning, **kw).c_source


def export_tuned(expr, name, directory, tuning, index_type="int64_t", **kw):
    """ep.export_c's files (name.c, name.h), of a kernel compiled under `tuning`."""
    return ep.export_c(expr, name, directory, index_type=index_type, tuning=tuning, **kw)


def run_lowered(expr, sr, out_format, inputs, threads=1, tuning=None, names=None):
    """expr lowered under `tuning` and run on the Imp interpreter: (its value as a
    dense array, the program). Sparse outputs are read back level by level,
    and each segment is checked to be sorted and free of duplicates."""
    pl = planning.make_plan(expr)
    bound = with_conversions(pl, binding.bind_inputs(tensors(expr), inputs, sr))
    sizes = binding.index_sizes(pl, bound)
    prog = lower.lower_plan(pl, sr, kernel_tensors(pl, tensors(expr)), out_format,
                            names=names or imp.Names(), threads=threads,
                            tuning=tuning or DEFAULT)
    env = api.imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    shape = tuple(sizes[v] for v in pl.out)
    out = prog.output
    if out.mode == "dense":
        env[out.arrays["vals"]] = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=sr.dtype)
    final = lower.run_program(prog, sr, env)
    return read_output(final, prog.output, shape, sr), prog


def read_output(env, out, shape, sr):
    """The dense value of a program's output in a final interpreter environment."""
    if out.mode == "dense":
        return np.asarray(env[out.arrays["vals"]]).reshape(shape)
    dense = np.full(shape, sr.zero, dtype=sr.dtype)
    if out.mode == "coords":
        for q in range(int(env[out.counts["count"]])):
            at = tuple(int(env[out.arrays[f"crd{m}"]][q]) for m in range(len(shape)))
            dense[at] = sr.add(dense[at], env[out.arrays["vals"]][q])
        return dense
    fmt = out.format
    cells = [((), 0)]
    for k, lv in enumerate(fmt.levels):
        n = shape[fmt.mode_order[k]]
        if lv.__class__.__name__ == "Dense":
            cells = [(c + (t,), p * n + t) for c, p in cells for t in range(n)]
            continue
        if lv.segment_roles is None:        # another layout (a bytemap): its own unpack
            arrays = {r: np.asarray(env[out.arrays[f"{r}{k}"]]) for r in lv.roles}
            parents = np.array([p for _, p in cells], dtype=np.int64)
            owner, coord, at = lv.unpack(arrays, parents, n)
            cells = [(cells[o][0] + (int(c),), int(q)) for o, c, q in zip(owner, coord, at)]
            continue
        pos, crd = env[out.arrays[f"pos{k}"]], env[out.arrays[f"crd{k}"]]
        nxt = []
        for c, p in cells:
            seg = [int(crd[q]) for q in range(int(pos[p]), int(pos[p + 1]))]
            canonical = sorted(set(seg)) if lv.appends else sorted(seg)   # (coo's repeats)
            assert seg == canonical, f"level {k} segment {seg} not canonical"
            nxt += [(c + (int(crd[q]),), q) for q in range(int(pos[p]), int(pos[p + 1]))]
        cells = nxt
    assert len({c for c, _ in cells}) == len(cells), "a cell stored twice"
    for c, p in cells:
        at = tuple(c[fmt.mode_order.index(m)] for m in range(len(shape)))
        dense[at] = env[out.arrays["vals"]][p]
    return dense


def random_csr(n, m, nnz, seed):
    """Random CSR quickly (scipy's sp.random is slow at low density and large n)."""
    rng = np.random.default_rng(seed)
    coo = sp.coo_array((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, m, nnz))),
                       shape=(n, m))
    return coo.tocsr()


def sparse3(n, nnz, seed):
    """A random n×n×n csf Tensor of (at most) nnz entries."""
    rng = np.random.default_rng(seed)
    coords = rng.integers(0, n, size=(3, nnz))
    return ep.Tensor.from_coords(coords, rng.random(nnz), (n, n, n), "csf")


def random_csf(shape, nnz, seed, fmt="csf"):
    """A random Tensor of small integer values, with some empty first-level slices."""
    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, n, nnz) for n in shape])
    coords[0] = np.where(coords[0] % 5 == 2, 0, coords[0])     # some empty slices
    return ep.Tensor.from_coords(coords, rng.integers(1, 5, nnz).astype(float), shape, fmt)


def csr_from(indptr, indices, data, shape):
    """A scipy csr_array of exactly these arrays (not canonicalised)."""
    m = sp.csr_array((np.asarray(data, float), np.asarray(indices), np.asarray(indptr)),
                     shape=shape, copy=False)
    return m


def on_interpreter(expr, sr, out_format, inputs, threads=1, tuning=DEFAULT):
    """The lowered program of expr run on the Imp interpreter, with a zeroed dense
    `out` when out_format is None: (final environment, program, output shape)."""
    pl = planning.make_plan(expr)
    prog = lower.lower_plan(pl, sr, kernel_tensors(pl, tensors(expr)), out_format,
                            threads=threads, tuning=tuning)
    final, shape = run_plan_program(expr, pl, prog, sr, inputs, out_format is None)
    return final, prog, shape


def run_plan_program(expr, pl, prog, sr, inputs, zero_out=True):
    """Program `prog` of plan `pl` (of expr) run on the Imp interpreter over
    `inputs`, its dense output zeroed first when `zero_out`: (final environment,
    output shape)."""
    bound = with_conversions(pl, binding.bind_inputs(tensors(expr), inputs, sr))
    sizes = binding.index_sizes(pl, bound)
    env = api.imp_env(bound, sizes)
    for name, t in bound.items():
        for m, n in enumerate(t.shape):
            env[f"{name}_dim{m}"] = n
    shape = tuple(sizes[v] for v in pl.out)
    if zero_out:
        env[prog.output.arrays["vals"]] = np.zeros(int(np.prod(shape, dtype=np.int64)),
                                                   dtype=sr.dtype)
    return lower.run_program(prog, sr, env), shape


def csr_on_interpreter(expr, sr, threads=1, tuning=DEFAULT, **inputs):
    """The lowered csr-output program of expr run on the Imp interpreter."""
    final, _, shape = on_interpreter(expr, sr, ep.Format.named("csr", 2), inputs, threads,
                                     tuning)
    nnz = int(final["out_count1"])
    return sp.csr_array((final["out_vals"][:nnz], final["out_crd1"][:nnz],
                         final["out_pos1"][:shape[0] + 1]), shape=shape)


def levels_on_interpreter(final, fmt, shape):
    """The output arrays a lowered program left in the interpreter's environment."""
    arrays, parents = [], 1
    for k, lv in enumerate(fmt.levels):
        n = shape[fmt.mode_order[k]]
        if isinstance(lv, ep.Dense):
            parents *= n
            continue
        count = int(final[f"out_count{k}"])
        arrays += [final[f"out_pos{k}"][:parents + 1], final[f"out_crd{k}"][:count]]
        parents = count
    return arrays + [final["out_vals"][:parents]]


def tensor_levels(t):
    """A Tensor's level arrays in order, then its values."""
    return [arr for level in t.levels for arr in level.values()] + [t.vals]


def as_scipy(result):
    """A csr/csc result as scipy arrays: an ep.Tensor (what a sparse result is when
    the semiring's zero is not 0, e.g. min_plus) read with its fill kept."""
    return result.to_scipy(keep_fill=True) if isinstance(result, ep.Tensor) else result


def golden_cases() -> dict:
    """The kernels of the golden C files (tests/end_to_end/golden/), by file name:
    compile keyword arguments with the expression under `expr`."""
    i, j, k, r = ep.indices("i j k r")
    u, v = ep.indices("u v")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    x, T = ep.tensor("x", 1), ep.tensor("T", 3, format="csf")
    C, D = ep.tensor("C", 2), ep.tensor("D", 2)
    W = ep.tensor("W", 2, format="csc")
    return {
        "spmv": dict(expr=ep.sum(j, A[i, j] * x[j])),
        # the inner product over every (i, k), as written (not B read as csc)
        "spgemm_inner": dict(expr=ep.sum(j, A[i, j] * B[k, j]), output="csr",
                             tuning={"conversions": False}),
        "spgemm_rows": dict(expr=ep.sum(j, A[i, j] * B[j, k]), output="csr"),
        "add_csr": dict(expr=A[i, j] + B[i, j], output="csr"),
        "mttkrp": dict(expr=ep.sum((j, k), T[i, j, k] * C[j, r] * D[k, r])),
        "min_plus_relax": dict(expr=ep.sum(u, x[u] * W[u, v]) + x[v], semiring="min_plus"),
        # on threads: rows counted then filled (scratch arrays per thread), and a full
        # reduction with one partial per block of rows
        "spgemm_rows_threads": dict(expr=ep.sum(j, A[i, j] * B[j, k]), output="csr",
                                    threads=2),
        "reduction_threads": dict(expr=ep.sum((i, j), A[i, j] * x[j]), threads=2),
    }

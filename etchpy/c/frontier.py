"""C text of a whole frontier fixpoint (codegen_templates/frontier.c.j2): the
rounds of `d' = d ⊕ ⊕_{j∈F} d[j] ⊗ A[j, :]` over an idempotent semiring, pushed
through A in csr from the frontier F of the entries the last round changed,
in one C function, until no entry changes.

    c_text, cdef = frontier_source(semiring, "int32_t", values=True, name="f")

The semiring's own C forms (`add`, `mul`, zero, one) are rendered into the
push and the combine; `values=False` reads no stored values (every edge
carries `one`, so d[j] ⊗ one = d[j] is pushed as it is). When `one` absorbs
`add` (the boolean semiring) the function can also pull a round through A in
csc (direction-optimising, Beamer et al. 2012); `pulls(semiring)` says when.
For a min-plus-shaped semiring (`bucketed`) a second function `{name}_buckets`
reaches the same fixpoint by buckets of values (Dial; delta-stepping on one
thread), valid when no stored weight is negative (the caller's contract).
When `one` absorbs ⊕, `{name}_seeded` runs one fixpoint per seed vertex in
increasing order and labels each vertex with its seed (connected components).
proofs_notes/frontier.md has the laws the C relies on.
"""
from __future__ import annotations

from ..errors import SemiringError
from .render import templates
from .statements import c_literal

CDEF = ("int64_t {name}(int64_t n, const {idx} *pos, const {idx} *crd, const {val} *val, "
        "const {idx} *cpos, const {idx} *ccrd, const {val} *cval, {val} *d, int64_t *at, "
        "const {idx} *start, int64_t nf, int64_t max_iter, double alpha, double beta, "
        "int64_t dense);")
CDEF_BUCKETS = ("int64_t {name}_buckets(int64_t n, const {idx} *pos, const {idx} *crd, "
                "const {val} *val, {val} *d, int64_t *at, const {idx} *start, int64_t nf, "
                "double delta, int64_t nb, int64_t rounds_above, int64_t dense);")
CDEF_SEEDED = ("int64_t {name}_seeded(int64_t n, const {idx} *pos, const {idx} *crd, "
               "const {val} *val, {val} *d, int64_t *label);")
MIN = "({a} < {b} ? {a} : {b})"


def pulls(semiring) -> bool:
    """Whether `one` absorbs `add` on every element (checked on the whole carrier,
    so only for a boolean one): then a vertex at one never changes and a pull may
    stop at the first in-edge that brings one."""
    if semiring.dtype.kind != "b":
        return False
    one = semiring.one
    return all(bool(semiring.add(one, x)) == bool(one) for x in (False, True))


def bucketed(semiring) -> bool:
    """Whether the semiring is min-plus-shaped: ⊕ is min (spelled as the
    conditional choice `a < b ? a : b`, so `a < b` orders the carrier) and ⊗ is
    arithmetic + over a numeric carrier, so a value's bucket is floor(v / delta)."""
    return (semiring.add.c == MIN and semiring.mul.c == "{a} + {b}"
            and semiring.dtype.kind in "fi")


def frontier_source(semiring, idx_type: str, *, values: bool, name: str,
                    version: str = "") -> tuple[str, str]:
    """(C source, cffi cdef) of the function `name` (signature: CDEF; with values
    and a `bucketed` semiring also CDEF_BUCKETS; when `pulls`, CDEF_SEEDED) over
    `semiring` with index arrays of C type idx_type ("int32_t" or "int64_t").
    Raises SemiringError unless the semiring is idempotent (the workspace and
    the frontier rely on a ⊕ a = a) or for another idx_type."""
    semiring.require("idempotent")
    if idx_type not in ("int32_t", "int64_t"):
        raise SemiringError(f"index arrays are int32_t or int64_t, not {idx_type}")
    val = semiring.c_type()
    buckets = values and bucketed(semiring)
    c = templates().get_template("frontier.c.j2").render(
        version=version, semiring=semiring.name, name=name, idx_type=idx_type,
        val_type=val, zero=c_literal(semiring.zero, semiring.dtype),
        one=c_literal(semiring.one, semiring.dtype), add=semiring.add.render("a", "b"),
        mul=semiring.mul.render("a", "b"), values=values, pull=pulls(semiring),
        buckets=buckets, before="a < b")
    cdef = CDEF + ("\n" + CDEF_BUCKETS if buckets else "") + \
        ("\n" + CDEF_SEEDED if pulls(semiring) else "")
    return c, cdef.format(name=name, idx=idx_type, val=val)

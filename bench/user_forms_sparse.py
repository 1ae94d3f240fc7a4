"""User forms (bench.user_forms): ep.einsum over two scipy matrices with a matrix out,
as a scipy user writes `A @ B`, `A @ B.T`, `A.multiply(B)` and `A.T` (a csr result
since session 90: runtime.einsum_calls.default_output). A and B of bench.user_forms'
Data (scikit-fem's P1 Laplacian and its reversed-order copy). bench.user_forms runs
these after its own cases (CASES here, appended there).
"""
from __future__ import annotations

import etchpy as ep

from bench.user_forms_layouts import registrar

CASES = []                  # (name, peer label, make(data) -> (ours, peer, same))
case = registrar(CASES)


def _product(spec, peer_name, peer):
    @case(f"ep.einsum('{spec}', A, B), scipy csr", peer_name)
    def make(d):
        A, B = d.A, d.B
        return (lambda: ep.einsum(spec, A, B)), (lambda: peer(A, B)), None


_product("ij,jk->ik", "A @ B", lambda A, B: A @ B)
_product("ij,kj->ik", "A @ B.T", lambda A, B: A @ B.T)
_product("ij,ij->ij", "A.multiply(B)", lambda A, B: A.multiply(B))


@case("ep.einsum('ij->ji', A), scipy csr", "A.T.tocsr()")
def _(d):
    A = d.A
    return (lambda: ep.einsum("ij->ji", A)), (lambda: A.T.tocsr()), None

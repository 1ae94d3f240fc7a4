"""The benchmark kernels: input generation (fixed seeds) and every implementation.

Each `gen_<name>(ctx)` yields `Case`s lazily, so that --only builds only the data it
needs and each case's inputs are freed before the next one is generated. Inputs are
generated from numpy's default_rng with a seed fixed per kernel (never with
scipy.sparse.random, which is slow): coordinates -> coo -> canonical csr.

--quick shrinks every problem about 10x (nonzeros / rows).

The inputs are in bench/kernel_inputs.py, the shared implementations in
bench/kernel_impls.py, the kernels by kind in bench/kernels_matrix.py,
kernels_tensor.py and kernels_graph.py; this module names them in run order and
keeps the names other benches import from it.
"""
from __future__ import annotations

from .cases import check_close
from .kernel_impls import etchpy_impls, prebuild, tensora_impl
from .kernel_inputs import (RMAT_PROBS, SEED, Tensor3, degree_ordered_upper,
                            er_degree_ordered_upper, overlapping_csr, per_row_csr, random_csr,
                            rmat_degree_ordered_upper, rng_for, stencil_csr)
from .kernels_graph import gen_minplus, gen_orand, gen_triangle
from .kernels_matrix import (gen_ewise, gen_sddmm, gen_spgemm, gen_spmm, gen_spmv,
                             gen_stencil, gen_transpose)
from .kernels_tensor import gen_inner3, gen_mttkrp, gen_ttm, gen_ttv
from .timing import fmt_time

# name -> generator, in run order
KERNELS = {
    "spmv": gen_spmv, "stencil": gen_stencil, "spmm": gen_spmm, "spgemm": gen_spgemm,
    "ewise": gen_ewise, "transpose": gen_transpose, "sddmm": gen_sddmm, "ttv": gen_ttv,
    "ttm": gen_ttm, "mttkrp": gen_mttkrp, "inner3": gen_inner3, "minplus": gen_minplus,
    "orand": gen_orand, "triangle": gen_triangle,
}

__all__ = ["KERNELS", "RMAT_PROBS", "SEED", "Tensor3", "check_close", "degree_ordered_upper",
           "er_degree_ordered_upper", "etchpy_impls", "fmt_time", "overlapping_csr",
           "per_row_csr", "prebuild", "random_csr", "rmat_degree_ordered_upper", "rng_for",
           "stencil_csr", "tensora_impl"]

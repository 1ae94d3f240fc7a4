"""Kernel.explain(): the plan appears once, the costs shown come from one model and
agree with the kernel's plan_costs, the report says which sizes were guessed and
which were given, and the stream lines come with a legend."""
import re

import etchpy as ep
from etchpy.tuning import Tuning

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)
CHAIN = ep.sum(j, ep.sum(k, A[i, j] * B[j, k] * x[k]))


def test_plan_once_and_one_cost_model():
    kern = ep.compile(CHAIN)
    text = kern.explain()
    for line in kern.plan.explain().splitlines():
        assert text.count(line) == 1, text
    assert text.count("plan:") == 1 and "x less work" not in text
    written, rewritten, used = kern.plan_costs
    assert used and f"as written {written:.4g}, optimized {rewritten:.4g}" in text
    # no other cost figure is printed
    assert re.findall(r"\d\.\d+e\+\d\d", text) == [f"{written:.4g}", f"{rewritten:.4g}"]


def test_guessed_sizes_are_named_with_their_tuning_field():
    text = ep.compile(CHAIN, tuning=Tuning(default_dim=500)).explain()
    assert "sizes guessed: |i|, |j|, |k| = 500 (Tuning.default_dim)" in text
    assert "A, B 1% nonzero (Tuning.sparse_density)" in text
    assert "sizes given" not in text


def test_given_sizes_are_named_and_the_rest_guessed():
    text = ep.compile(CHAIN, optimizer_options={"dims": {"i": 10, k: 30},
                                                "nnz": {"A": 40}}).explain()
    assert "sizes given: |i|=10, |k|=30, nnz(A)=40" in text
    assert "sizes guessed: |j| = 1000 (Tuning.default_dim); B 1% nonzero" in text


def test_nothing_cheaper_and_no_optimizer():
    text = ep.compile(ep.sum(j, A[i, j] * x[j])).explain()
    assert "the optimizer found nothing cheaper" in text
    plain = ep.compile(ep.sum(j, A[i, j] * x[j]), optimize=False).explain()
    assert "optimizer:" not in plain and "sizes guessed" not in plain


def test_stream_lines_have_a_legend():
    text = ep.compile(ep.sum(j, A[i, j] * x[j]), optimize=False).explain()
    assert "legend: locate = look up by position" in text
    assert "'X; locate into [Y]' = walk X and look Y up" in text
    assert "locate into [locate]" in text


def test_optimize_explain_says_its_cost_is_an_estimate_over_guessed_sizes():
    text = ep.optimize(CHAIN, dims={"i": 10}).explain()
    assert "e-graph estimate" in text and "sizes given: |i|=10" in text
    assert "sizes guessed: |j|, |k| = 1000" in text

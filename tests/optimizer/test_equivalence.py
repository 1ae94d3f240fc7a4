"""Equivalence by canonical forms (optimizer.ra): valid rewrites are accepted,
mutations are told apart as numbers tell them apart, and RA round-trips."""
import numpy as np
from hypothesis import HealthCheck, given, settings

import etchpy as ep
from etchpy.api import evaluate
from etchpy.expr.nodes import Access, Add, Mul, Sum, free_indices
from etchpy.optimizer.optimize import canonical, equivalent, from_ra, to_ra
from etchpy.semiring import semirings
from etchpy.testing import problems

FAST = dict(max_examples=40, deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

i, j, k, r, rp = ep.indices("i j k r rp")



def reference(e, inputs, sr, out):
    return evaluate(e, semiring=sr, backend="reference", out_indices=out, **inputs)


def random_inputs(p, seed):
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(np.shape(a)) for n, a in p.inputs.items()}


def sizes_by_name(e, p) -> bool:
    """Does every index name have one size in e? (the canonical form assumes it)"""
    sizes = {}
    for acc in ep.expr.walk.accesses(e):
        for ix, n in zip(acc.indices, np.shape(p.inputs[acc.tensor.name])):
            if sizes.setdefault(ix.name, n) != n:
                return False
    return True


def numerically_equal(e1, e2, p) -> bool:
    out = free_indices(e1)
    for seed in range(2):
        ins = random_inputs(p, seed)
        a = reference(e1, {n: ins[n] for n in ep.expr.walk.tensors(e1)}, semirings.real, out)
        b = reference(e2, {n: ins[n] for n in ep.expr.walk.tensors(e2)}, semirings.real, out)
        if not np.allclose(a, b, rtol=1e-7, atol=1e-9):
            return False
    return True


def commute(e):
    match e:
        case Mul(a, b):
            return Mul(commute(b), commute(a))
        case Add(a, b):
            return Add(commute(b), commute(a))
        case Sum(ix, body):
            return Sum(ix, commute(body))
    return e


def distribute(e):
    """a·(b + c) -> a·b + a·c wherever it occurs."""
    match e:
        case Mul(a, Add(b, c)):
            return Add(Mul(distribute(a), distribute(b)), Mul(distribute(a), distribute(c)))
        case Mul(Add(b, c), a):
            return Add(Mul(distribute(b), distribute(a)), Mul(distribute(c), distribute(a)))
        case Mul(a, b):
            return Mul(distribute(a), distribute(b))
        case Add(a, b):
            return Add(distribute(a), distribute(b))
        case Sum(ix, body):
            return Sum(ix, distribute(body))
    return e


def pull_sums(e):
    """(Σ_i a)·b -> Σ_i (a·b) when i is not free in b."""
    match e:
        case Mul(Sum(ix, a), b) if ix not in free_indices(b):
            return Sum(ix, Mul(pull_sums(a), pull_sums(b)))
        case Mul(a, b):
            return Mul(pull_sums(a), pull_sums(b))
        case Add(a, b):
            return Add(pull_sums(a), pull_sums(b))
        case Sum(ix, body):
            return Sum(ix, pull_sums(body))
    return e


def drop_factor(e):
    """Drop the right factor of the first product that keeps the free indices."""
    match e:
        case Mul(a, b) if set(free_indices(a)) == set(free_indices(e)):
            return a
        case Mul(a, b):
            return Mul(a, drop_factor(b))
        case Add(a, b):
            return Add(drop_factor(a), b)
        case Sum(ix, body):
            return Sum(ix, drop_factor(body))
    return e


def swap_axes(e):
    """Transpose the first 2-d access: X[i,j] -> X[j,i] (needs equal sizes)."""
    match e:
        case Access(t, (a, b)):
            return Access(t, (b, a))
        case Mul(x, y) | Add(x, y):
            new = swap_axes(x)
            return type(e)(new, y) if new != x else type(e)(x, swap_axes(y))
        case Sum(ix, body):
            return Sum(ix, swap_axes(body))
    return e


@settings(**FAST)
@given(problems(semiring=semirings.real))
def test_equivalent_accepts_valid_rewrites(p):
    for rewrite in (commute, distribute, pull_sums,
                    lambda e: pull_sums(distribute(commute(e)))):
        other = rewrite(p.expr)
        assert equivalent(p.expr, other), f"{p.expr} vs {other}"
        assert numerically_equal(p.expr, other, p)


@settings(**FAST)
@given(problems(semiring=semirings.real))
def test_equivalent_agrees_with_numbers_on_mutations(p):
    mutants = [drop_factor(p.expr), p.expr + p.expr, p.expr * p.expr
               if not free_indices(p.expr) else p.expr + 1]
    try:
        mutants.append(swap_axes(p.expr))
    except ep.ExpressionTypeError:
        pass
    for m in mutants:
        if set(free_indices(m)) != set(free_indices(p.expr)) or not sizes_by_name(m, p):
            continue
        try:
            same = numerically_equal(p.expr, m, p)
        except (ep.EtchpyError, ValueError):    # a transposed non-square access
            continue
        eq = equivalent(p.expr, m)
        if eq:
            assert same, f"equivalent but numerically different: {p.expr} vs {m}"
        if not same:
            assert not eq


def test_known_non_equivalent_pairs():
    X, v = ep.tensor("X", 2), ep.tensor("v", 1)
    assert not equivalent(ep.sum(j, X[i, j] * v[j]), ep.sum(j, X[j, i] * v[j]))
    assert not equivalent(ep.sum(j, X[i, j] * v[j]), ep.sum(j, X[i, j]))
    assert not equivalent(ep.sum(i, v[i]) * ep.sum(i, v[i]), ep.sum(i, v[i] * v[i]))
    assert not equivalent(v[i], v[j])


def test_index_sizes_are_those_of_the_modes_they_index():
    """Σ_j c counts |j|: renaming j keeps that size, and j over a different mode
    (a transposed access of a non-square A) changes it."""
    A, M, B = ep.tensor("A", 1), ep.tensor("M", 2), ep.tensor("B", 1)
    assert equivalent(ep.sum(j, A[j] + 1), ep.sum(k, A[k] + 1))
    assert not equivalent(ep.sum(j, ep.sum(i, M[i, j]) + 1),
                          ep.sum(j, ep.sum(i, M[j, i]) + 1))
    assert equivalent(ep.sum(j, M[i, j] * B[j] + 1),
                      ep.sum(k, M[i, k] * B[k]) + ep.sum(j, B[j] + 1) - ep.sum(j, B[j]))
    # a factor with coefficient 0 still fixes j's size, whichever side it is on
    assert equivalent(ep.sum(j, 1 + 0 * B[j]), ep.sum(j, B[j] * 0 + 1))


@settings(**FAST)
@given(problems())
def test_ra_round_trip(p):
    back = from_ra(to_ra(p.expr))
    assert set(free_indices(back)) == set(free_indices(p.expr))
    assert canonical(back, p.semiring) == canonical(p.expr, p.semiring)

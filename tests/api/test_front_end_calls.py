"""The string front end's calls (issue 39): a statement is parsed once, and
ep.compile finds its kernel by the text in one lookup, keyed by every option."""
import numpy as np
import pytest

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

TEXT = "y[i] = A[i, j] * x[j]"


def test_a_statement_finds_its_kernel_again():
    kern = ep.compile(TEXT)
    assert ep.compile(TEXT) is kern
    assert ep.compile(TEXT, formats={"A": "csr"}) is not kern
    two = "y[i] = A[i, j] * B[j, k] * x[k]"
    assert ep.compile(two, formats={"A": "csr", "B": "csc"}) is \
        ep.compile(two, formats={"B": "csc", "A": "csr"})
    # the same statement as an expression: the same kernel
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    assert ep.compile(ep.sum(j, A[i, j] * x[j]), out_indices=(i,)) is kern


@pytest.mark.parametrize("option", [dict(semiring="min_plus"), dict(threads=2),
                                    dict(tuning="noopt"), dict(name="other"),
                                    dict(order=("i", "j")), dict(optimize=False)])
def test_every_option_keys_the_kernel(option):
    assert ep.compile(TEXT, **option) is not ep.compile(TEXT)
    assert ep.compile(TEXT, **option) is ep.compile(TEXT, **option)


def test_semiring_names_made_at_run_time_are_keyed_by_value():
    for first, second in [("min", "max"), ("max", "min")]:
        a = ep.compile(TEXT, semiring="".join([first, "_plus"]))
        b = ep.compile(TEXT, semiring="".join([second, "_plus"]))
        assert (a.semiring.name, b.semiring.name) == (f"{first}_plus", f"{second}_plus")


def test_the_thread_count_keys_the_kernel(monkeypatch):
    monkeypatch.delenv("ETCHPY_NUM_THREADS", raising=False)
    assert ep.compile(TEXT).threads == 1
    monkeypatch.setenv("ETCHPY_NUM_THREADS", "2")
    assert ep.compile(TEXT).threads == 2


def test_evaluate_of_a_statement_gives_the_kernels_value():
    A, x = np.arange(6.0).reshape(2, 3), np.ones(3)
    for _ in range(2):
        assert np.array_equal(ep.evaluate(TEXT, A=A, x=x), A @ x)
    with pytest.raises(ep.EtchpyError, match="option order= got an array"):
        ep.evaluate("y[i] = order[i]", order=np.ones(2))


def test_the_last_statement_is_found_again_only_while_its_kernel_is_kept(monkeypatch):
    """compile's memo of its last statement (runtime.statements.last_kernel) is a
    cheaper key into KERNELS: cleared or evicted entries, another build
    environment or thread count, or other formats are not served from it."""
    from etchpy.runtime.kernel_cache import KERNELS
    monkeypatch.delenv("ETCHPY_NUM_THREADS", raising=False)
    kern = ep.compile(TEXT, formats={"A": "csr"})
    assert ep.compile(TEXT, formats={"A": "csr"}) is kern         # an equal new dict
    assert ep.compile(TEXT, formats={"A": "csc"}) is not kern
    assert ep.compile(TEXT, formats={"A": "csr"}) is kern
    KERNELS.clear()
    again = ep.compile(TEXT, formats={"A": "csr"})
    assert again is not kern and ep.compile(TEXT, formats={"A": "csr"}) is again
    monkeypatch.setenv("ETCHPY_NUM_THREADS", "2")
    assert ep.compile(TEXT, formats={"A": "csr"}).threads == 2
    monkeypatch.setenv("ETCHPY_NUM_THREADS", "1")
    assert ep.compile(TEXT, formats={"A": "csr"}) is again
    monkeypatch.setenv("CFLAGS", "-O1")                              # another build
    assert ep.compile(TEXT, formats={"A": "csr"}) is not again

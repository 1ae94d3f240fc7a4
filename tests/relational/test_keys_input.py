"""Keys at the edges of their input: the mask of absent values, bounds of another
dtype than the keys, int64 and uint64 columns together, NaN/NaT keys. Each case
is a value that was once miscoded or refused with a raw numpy error."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.errors import InputError


def test_the_mask_of_a_looked_up_coding_is_boolean():
    """A dictionary of integers is coded through a lookup table; its `present`
    is a bool mask, and the error names the first absent value and the count."""
    k = ep.Keys(np.array([10, 20]))
    codes, present = k.code(np.array([10, 30, 20]), missing="mask")
    assert present.dtype == bool and present.tolist() == [True, False, True]
    assert codes.tolist() == [0, 0, 1]
    with pytest.raises(InputError, match=r"value 30 is not in the domain \(1 value has"):
        k.code(np.array([30, 10]))
    with pytest.raises(InputError, match=r"'x' is not in the domain \(2 values have"):
        ep.Keys(np.array(["a"])).code(np.array(["x", "y"]))


@given(st.lists(st.integers(-300, 300), min_size=1, max_size=20),
       st.one_of(st.integers(-400, 400), st.floats(-400, 400), st.just(2**70),
                 st.just(-2**70), st.just(np.inf), st.just(-np.inf)))
def test_codes_between_counts_the_keys_below_a_bound_of_any_number_type(vals, bound):
    """Range and dictionary codings give the exact count of their key values
    below the bound, whatever its type: it is never cast to the keys' dtype."""
    vals = np.unique(vals)
    for k in (ep.Keys(vals), ep.Keys(vals, span_limit=0.1), ep.Keys(vals, lookup_span=None)):
        want = sum(1 for v in k.values().tolist() if v < bound)
        assert k.codes_between(bound, None) == (want, len(k))
        assert k.codes_between(None, bound) == (0, want)


def test_codes_between_compares_bounds_of_another_dtype_exactly():
    """A float bound against integers, a finer datetime, an integer past the keys'
    dtype and a negative bound against unsigned keys are compared as values."""
    assert ep.Keys(np.array([10, 5000, 10**9])).codes_between(10.5, None) == (1, 3)
    days = ep.Keys(np.array(["1995-01-01", "1995-01-02"], dtype="datetime64[D]"))
    assert days.codes_between(np.datetime64("1995-01-01T12:00"), None) == (1, 2)
    assert days.codes_between("1995-01-01T12:00", "1995-01-02") == (1, 1)
    small = ep.Keys(np.array([-100, 3, 100], dtype=np.int8))
    assert small.codes_between(0, 1000) == (1, 3)
    assert small.codes_between(-1000, -50.5) == (0, 1)
    unsigned = ep.Keys(np.array([1, 5000, 10**9], dtype=np.uint32))
    assert unsigned.codes_between(-5, None) == (0, 3)
    floats = ep.Keys(np.array([1.5, 2.5], dtype=np.float32))
    assert floats.codes_between(2.5000001, 2**70) == (2, 2)
    assert floats.codes_between(1.4999999, None) == (0, 2)


def test_codes_between_refuses_a_bound_that_compares_with_nothing():
    ints = ep.Keys(np.array([10, 5000, 10**9]), name="k")
    with pytest.raises(InputError, match="'k'.*bound lo = 'a'"):
        ints.codes_between("a", None)
    with pytest.raises(InputError, match="'k'.*bound hi is NaN"):
        ints.codes_between(None, np.nan)
    with pytest.raises(InputError, match="bound lo = 3 .*datetime64"):
        ep.Keys(np.array(["1995-01-01"], dtype="datetime64[D]")).codes_between(3, None)
    with pytest.raises(InputError, match="bound hi is NaT"):
        ep.Keys(np.array(["1995-01-01"], dtype="datetime64[D]")).codes_between(
            None, np.datetime64("NaT"))
    with pytest.raises(InputError, match="bound lo = 1"):
        ep.Keys(np.array(["a", "b"])).codes_between(1, None)


INT64 = st.integers(-2**63, 2**63 - 1)
UINT64 = st.integers(0, 2**64 - 1)
EDGES = st.sampled_from([0, 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1])


@given(st.lists(st.one_of(INT64, EDGES.filter(lambda v: v < 2**63)), max_size=6),
       st.lists(st.one_of(UINT64, EDGES), max_size=6),
       st.lists(st.one_of(INT64, UINT64, EDGES), max_size=8), st.floats(0.1, 8.0))
def test_int64_and_uint64_keys_are_never_merged_or_miscoded(signed, unsigned, probes, span):
    """Keys.of an int64 and a uint64 column codes every distinct value once, or
    refuses the mix by its dtypes; a probe of either kind has a code exactly when
    its value is a key (numpy would compare them as float64)."""
    s, u = np.array(signed, dtype=np.int64), np.array(unsigned, dtype=np.uint64)
    want = set(signed) | set(unsigned)
    try:
        k = ep.Keys.of(s, u, span_limit=span)
    except InputError as err:
        assert min(signed) < 0 and max(unsigned) >= 2**63 and "int64" in str(err)
        return
    assert len(set(k.values().tolist())) == len(k.values())
    if k.kind == "dictionary":
        assert set(k.values().tolist()) == want
    domain = set(k.values().tolist())
    for kind in (np.int64, np.uint64):
        p = [v for v in probes if np.iinfo(kind).min <= v <= np.iinfo(kind).max]
        codes, present = k.code(np.array(p, dtype=kind), missing="mask")
        assert present.tolist() == [v in domain for v in p]
        assert k.decode(codes[present]).tolist() == [v for v in p if v in domain]
        assert (codes[~present] == 0).all()


def test_mixed_integer_keys_examples():
    """The tester's cases: 2**53 and 2**53 + 1 stay two keys, 2**64 - 1 is no
    negative key, and uint64 keys past 2**63 are range-coded and decoded."""
    k = ep.Keys.of(np.array([2**53, 1, 5, 9]), np.array([2**53 + 1], dtype=np.uint64))
    assert len(k) == 5 and k.values().dtype == np.int64
    negative = ep.Keys(np.array([-3, -2, -1, 0]))
    _, present = negative.code(np.array([2**64 - 1], dtype=np.uint64), missing="mask")
    assert not present.any()
    with pytest.raises(InputError, match=str(2**64 - 1)):
        negative.code(np.array([2**64 - 1], dtype=np.uint64))
    big = ep.Keys(np.array([2**63, 2**63 + 1], dtype=np.uint64))
    assert big.kind == "range" and big.code(np.array([2**63 + 1, 2**63], dtype=np.uint64)
                                            ).tolist() == [1, 0]
    assert big.values().tolist() == [2**63, 2**63 + 1]
    assert big.code(np.array([5, -1]), missing="mask")[1].tolist() == [False, False]
    with pytest.raises(InputError, match="int64, uint64.*no integer dtype"):
        ep.Keys.of(np.array([-1]), np.array([2**63], dtype=np.uint64))
    with pytest.raises(InputError, match="float64.*merged"):
        ep.Keys.of(np.array([2**53 + 1]), np.array([0.5]))
    with pytest.raises(InputError, match="<U1, int64"):
        ep.Keys.of(np.array([1]), np.array(["a"]))


def test_nan_and_nat_keys_are_refused_as_null_keys():
    """A NaN or NaT key value is a SQL NULL, which no key equals: refused by name,
    not reported as a value missing from the domain."""
    with pytest.raises(InputError, match="keys 'a'.*NaN/NaT \\(NULL\\).*not supported"):
        ep.relation({"a": np.array([1.0, np.nan])}, ["a"])
    with pytest.raises(InputError, match="keys 'd'.*NULL"):
        ep.Keys(np.array(["1995-01-01", "NaT"], dtype="datetime64[D]"), name="d")
    with pytest.raises(InputError, match="keys 'a'.*NULL"):
        ep.relation({"a": np.array([1.0, np.nan])}, ["a"],
                    coding={"a": ep.Keys(np.array([1.0]), name="a")})
    _, present = ep.Keys(np.array([1.0])).code(np.array([np.nan, 1.0]), missing="mask")
    assert present.tolist() == [False, True]

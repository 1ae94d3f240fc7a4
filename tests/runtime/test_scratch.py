"""runtime.scratch: workspaces kept between calls, never shared while taken."""
import threading

import numpy as np

from etchpy.runtime.scratch import Scratch
from in_threads import run_threads


def test_an_array_given_back_is_taken_again_and_never_twice_at_once():
    s = Scratch(2)
    a = s.take(100, np.float64)
    s.give(a)
    b = s.take(100, np.float64)
    assert np.shares_memory(a, b)
    c = s.take(100, np.float64)                 # b is taken: a new array
    assert not np.shares_memory(b, c)
    assert s.take(100, np.int32).dtype == np.int32


def test_a_larger_kept_array_serves_a_smaller_request_up_to_twice_its_size():
    s = Scratch(2)
    s.give(np.empty(150))
    small = s.take(100, np.float64)
    assert small.shape == (100,) and small.base is not None and len(small.base) == 150
    s.give(small)
    assert s.take(10, np.float64).base is None  # 150 is too large for 10: a new one


def test_the_store_keeps_at_most_its_limit_the_largest_arrays():
    s = Scratch(2)
    for n in (10, 30, 20):
        s.give(np.empty(n))
    assert sorted(len(a) for a in s._kept) == [20, 30]


def test_threads_never_hold_the_same_array():
    s, held, clash = Scratch(4), set(), []
    lock = threading.Lock()

    def work(_):
        for _ in range(200):
            with s.arrays((64, np.float64)) as (a,):
                key = a.__array_interface__["data"][0]
                with lock:
                    clash.append(key in held)
                    held.add(key)
                with lock:
                    held.discard(key)

    assert not run_threads(work, 4) and not any(clash)


def test_arrays_below_least_bytes_are_made_new_and_never_kept():
    s = Scratch(2, least=1024)
    a = s.take(100, np.float64)                 # 800 bytes: new, not from the store
    s.give(a)
    assert not s._kept and not np.shares_memory(a, s.take(100, np.float64))
    big = s.take(200, np.float64)               # 1600 bytes: kept as before
    s.give(big)
    assert np.shares_memory(big, s.take(200, np.float64))

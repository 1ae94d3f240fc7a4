"""The name supply: fresh names never repeat, whatever is asked for."""
from hypothesis import given, strategies as st

from etchpy import imp


def test_first_request_gets_the_base():
    n = imp.Names()
    assert [n.fresh("q"), n.fresh("q"), n.fresh("q")] == ["q", "q_1", "q_2"]


def test_a_base_that_looks_numbered_is_not_handed_out_again():
    n = imp.Names()
    assert n.fresh("q_1") == "q_1"
    assert n.fresh("q") == "q" and n.fresh("q") == "q_2"
    n = imp.Names()
    n.fresh("q"), n.fresh("q")
    assert n.fresh("q_1") == "q_1_1"


def test_requesting_a_name_first_keeps_it_out():
    n = imp.Names()
    for user in ("pos", "row", "out"):        # a user's index names, reserved
        n.fresh(user)
    assert n.fresh("pos") != "pos" and n.fresh("row") != "row"


@given(st.lists(st.sampled_from(["q", "q_1", "q_2", "q_1_1", "pos", "pos_1", "_", "a_"]),
                max_size=40))
def test_fresh_names_never_repeat(bases):
    n = imp.Names()
    got = [n.fresh(b) for b in bases]
    assert len(set(got)) == len(got)
    assert all(g == b or g.startswith(b + "_") for g, b in zip(got, bases))


def test_names_are_deterministic():
    def run():
        n = imp.Names()
        return [n.fresh(b) for b in ["i", "i", "j", "i_1", "i"]]
    assert run() == run()


def test_c_type_names_are_never_generated():
    """An index named `size` once made a stream state `size_t`, which broke the C
    (`(size_t)n` no longer parsed)."""
    names = imp.Names()
    assert names.fresh("size_t") == "size_t_1"
    assert names.fresh("int64_t") != "int64_t"

import pytest


@pytest.fixture(autouse=True)
def _lazy_keys_start_over(fresh_keys):
    """Each lazy test starts with the nodes' intern table empty (tests/conftest.py's
    fresh_keys): its counts of built nodes and its replay lookups do not depend on
    how full the tests before it left the table."""
    yield

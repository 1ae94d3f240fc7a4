"""Level kinds register themselves by one line (formats.level.kind): every module
of formats/ is imported by the package, so a kind's name, its named format and
etchpy.testing's draws are read off the registration, with no table to edit."""
import inspect
import pkgutil

import pytest

import etchpy as ep
from etchpy import formats
from etchpy.formats import _LAST_LEVEL_FORMATS, _LEVEL_NAMES, NAMED_FORMATS, level


def test_every_level_class_in_formats_is_registered_by_its_name():
    found = {}
    for m in pkgutil.iter_modules(formats.__path__):
        module = getattr(formats, m.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and callable(getattr(cls, "read", None)) \
                    and name != "Bins":         # made at call time, never named
                found[cls] = m.name
    assert set(found) == set(_LEVEL_NAMES.values()), found
    for name, cls in _LEVEL_NAMES.items():        # a level spec by its name
        assert type(formats._level(name)) is cls and str(formats._level(name)) == name


@pytest.mark.parametrize("fmt", sorted(_LAST_LEVEL_FORMATS))
def test_each_registered_named_format_is_dense_levels_over_its_kind(fmt):
    assert fmt in NAMED_FORMATS
    f = ep.Format.named(fmt, 3)
    assert isinstance(f.levels[-1], _LEVEL_NAMES[_LAST_LEVEL_FORMATS[fmt]])
    assert all(lv == ep.Dense() for lv in f.levels[:-1])


def test_a_name_registered_twice_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        @level.kind("compressed")
        class Other:
            pass
    with pytest.raises(ValueError, match="registered twice"):
        @level.kind("other_kind_of_test", named="rle")
        class Another:
            pass
    assert "other_kind_of_test" not in _LEVEL_NAMES

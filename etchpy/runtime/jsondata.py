"""A JSON codec for the data etchpy keeps on disk: plain values and etchpy's own
frozen dataclasses. Decoding runs no code read from the file.

    text = dumps(obj)          # TypeError for anything the codec does not cover
    obj = loads(text)          # DataError for anything it did not write
    text = dumps(obj, defer=("plan",))   # a top-level dict's "plan" kept as JSON text
    obj = loads(text, defer=("plan",))   # ... left as a Deferred (one str object),
    obj["plan"].value()                  #  parsed and decoded on first need
    part = Text.of(obj)        # obj's JSON text, encoded once; dumps writes it as is

Covered: None, bool, int, str, float (non-finite ones too), bytes, tuple, list,
dict (any covered keys), frozenset, numpy bool/int/float scalars, and instances of
dataclasses defined in etchpy's modules (``etchpy.*``). A JSON array is a tuple;
every other kind is a one-key object ``{"~tag": payload}``; ``{"~t": text}`` holds a
value's own JSON text (what `dumps` writes for deferred keys), decoded as that value.

A dataclass instance is stored as its class's module and qualified name plus its
instance ``__dict__`` (or what its own ``__getstate__`` keeps), and rebuilt the
way pickle rebuilds it: ``object.__new__`` and the attributes set directly, no
``__init__``. Unlike pickle, the class must be a dataclass of a module of etchpy
that is already imported (it is looked up in ``sys.modules``, never imported),
so a file can name no other callable.
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys

import numpy as np

from .. import collector

__all__ = ["dumps", "loads", "DataError", "Deferred", "Text"]

_NUMPY_KINDS = "biuf"


class DataError(ValueError):
    """The text is not a value this codec wrote."""


def dumps(obj, defer=()) -> str:
    """Compact JSON text for ``obj``; TypeError when some part is not covered.

    ``defer``: keys of a top-level dict whose values are written as their own JSON
    text inside it (``{"~t": text}``), so that a reader that defers them parses one
    string for each, not its thousands of objects (see `loads`). The cyclic
    collector is paused while it encodes (`etchpy.collector`)."""
    with collector.paused():
        encoded = _encode(obj)
        if defer and isinstance(obj, dict):
            encoded = {"~d": [[k, _as_text(v) if isinstance(k, str) and k in defer else v]
                              for k, v in encoded["~d"]]}
        return _text(encoded)


class Text:
    """A value's JSON text, encoded once (`Text.of`): `dumps` writes it where the
    value would be, as ``{"~t": text}``, which decodes as the value. A value
    stored several times (a kernel's program in each of its manifests) is encoded
    once."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    @classmethod
    def of(cls, obj) -> "Text":
        """`obj` encoded; TypeError when some part is not covered (as `dumps`)."""
        with collector.paused():
            return cls(_text(_encode(obj)))

    def value(self):
        """The value decoded from the text (anew each time, as `loads`)."""
        return loads(self.text)


def _as_text(encoded) -> dict:
    """An encoded value as ``{"~t": its text}`` (kept when it already is one)."""
    if type(encoded) is dict and len(encoded) == 1 and type(encoded.get("~t")) is str:
        return encoded
    return {"~t": _text(encoded)}


def _text(encoded) -> str:
    return json.dumps(encoded, separators=(",", ":"), allow_nan=False)


def loads(text: str | bytes, defer=()):
    """The value ``dumps`` encoded in ``text``; DataError for anything else.

    ``defer``: keys of a top-level dict whose values are left undecoded, each a
    `Deferred` that decodes it on first need (a new process that loads a known
    kernel reads only the small part of its manifest a call needs). A value
    `dumps` wrote as text (its own ``defer``) stays one string until then.

    The cyclic collector is paused while it decodes (`etchpy.collector`): a
    kernel's manifest is thousands of new objects, none of them garbage.
    """
    with collector.paused():
        return _loads(text, frozenset(defer))


class Deferred:
    """One value of a stored dict, not decoded yet: parsed JSON, or JSON text
    (``{"~t": text}``) not parsed yet (see `loads`)."""

    __slots__ = ("_data", "_value")

    def __init__(self, data):
        self._data, self._value = data, self

    def value(self):
        """The decoded value (decoded once); DataError when it is not one `dumps` wrote."""
        if self._value is self:
            with collector.paused():
                self._value = _guarded(_decode, self._data)
            self._data = None
        return self._value


def _loads(text, defer: frozenset):
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"not JSON: {exc}") from None
    if defer and isinstance(data, dict) and isinstance(data.get("~d"), list) and len(data) == 1:
        return _guarded(_decode_deferring, data["~d"], defer)
    return _guarded(_decode, data)


def _decode_deferring(pairs, defer: frozenset) -> dict:
    """A top-level dict whose keys in `defer` keep their values as Deferred."""
    out = {}
    for pair in _array(pairs):
        k, v = _array(pair)
        key = _decode(k)
        out[key] = Deferred(v) if isinstance(key, str) and key in defer else _decode(v)
    return out


def _guarded(decode, *args):
    try:
        return decode(*args)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError,
            RecursionError) as exc:
        raise DataError(f"malformed value: {type(exc).__name__}: {exc}") from None


def _encode(x):
    cls = type(x)
    if cls is str or cls is int or cls is bool or x is None:
        return x
    if cls is tuple:
        return [_encode(v) for v in x]
    how = _DATACLASSES.get(cls)
    if how is not None:      # as the dict of its state: its keys are strings
        name, own_state = how
        state = _state(x) if own_state else vars(x)
        return {"~c": [name, {"~d": [[k, _encode(v)] for k, v in state.items()]}]}
    if cls is Text:
        return {"~t": x.text}
    match x:
        case None | bool() | str():
            return x
        case int():
            return int(x)
        case float():
            return x if math.isfinite(x) else {"~f": repr(float(x))}
        case tuple():
            return [_encode(v) for v in x]
        case list():
            return {"~l": [_encode(v) for v in x]}
        case dict():
            return {"~d": [[_encode(k), _encode(v)] for k, v in x.items()]}
        case frozenset():
            return {"~s": [_encode(v) for v in x]}
        case bytes():
            return {"~b": x.hex()}
        case np.generic() if x.dtype.kind in _NUMPY_KINDS:
            return {"~n": [x.dtype.str, _encode(x.item())]}
        case _ if dataclasses.is_dataclass(x) and not isinstance(x, type):
            name = _class_name(cls)
            _DATACLASSES[cls] = (name, cls.__getstate__ is not object.__getstate__)
            return {"~c": [name, _encode(_state(x))]}
    raise TypeError(f"cannot store a {type(x).__name__} as data")


# dataclass -> (its stored name, whether it has its own __getstate__), once seen
_DATACLASSES: dict[type, tuple[str, bool]] = {}


def _state(x) -> dict:
    """What is stored of a dataclass instance: what its own ``__getstate__`` keeps
    (as pickle would: a Format leaves out the facts it works out once, its hash
    among them, which another process must work out again), else its ``__dict__``."""
    if type(x).__getstate__ is not object.__getstate__:
        state = x.__getstate__()
        if isinstance(state, dict):
            return dict(state)
    return dict(vars(x))


def _class_name(cls) -> str:
    if not cls.__module__.startswith("etchpy."):
        raise TypeError(f"cannot store an instance of {cls.__module__}.{cls.__qualname__}")
    return f"{cls.__module__}:{cls.__qualname__}"


def _decode(x):
    if isinstance(x, list):
        return tuple([_decode(v) for v in x])
    if not isinstance(x, dict):
        if isinstance(x, float) and not math.isfinite(x):
            raise ValueError("a bare non-finite float")
        return x
    if len(x) != 1:
        raise ValueError(f"an object with keys {sorted(x)}")
    (tag, payload), = x.items()
    match tag:
        case "~t":
            if not isinstance(payload, str):
                raise ValueError("text of a value that is not a string")
            return _decode(json.loads(payload))
        case "~f":
            if payload not in ("inf", "-inf", "nan"):
                raise ValueError(f"float {payload!r}")
            return float(payload)
        case "~l":
            return [_decode(v) for v in _array(payload)]
        case "~d":
            return {_decode(k): _decode(v) for k, v in _array(payload)}
        case "~s":
            return frozenset(_decode(v) for v in _array(payload))
        case "~b":
            return bytes.fromhex(payload)
        case "~n":
            dtype, value = _array(payload)
            dtype = np.dtype(str(dtype))
            if dtype.kind not in _NUMPY_KINDS:
                raise ValueError(f"numpy dtype {dtype}")
            return dtype.type(value)
        case "~c":
            name, state = _array(payload)
            return _instance(_dataclass(name), _decode(state))
    raise ValueError(f"tag {tag!r}")


def _array(payload) -> list:
    if not isinstance(payload, list):
        raise ValueError(f"expected an array, got {type(payload).__name__}")
    return payload


def _dataclass(name):
    """The dataclass ``module:qualname`` of an imported etchpy module, or ValueError."""
    module_name, _, qualname = str(name).partition(":")
    module = sys.modules.get(module_name) if module_name.startswith("etchpy.") else None
    cls = module
    for part in qualname.split("."):
        cls = getattr(cls, part, None) if part.isidentifier() else None
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)
            and cls.__module__ == module_name):
        raise ValueError(f"class {name!r} is not a dataclass of an imported etchpy module")
    return cls


_FIELDS: dict[type, frozenset] = {}    # a dataclass -> its fields' names


def _instance(cls, state):
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise ValueError(f"the attributes of a {cls.__qualname__}")
    fields = _FIELDS.get(cls)
    if fields is None:               # once per class: dataclasses.fields walks them all
        fields = _FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    if not fields <= state.keys():
        raise ValueError(f"{cls.__qualname__} lacks {sorted(fields - state.keys())}")
    obj = object.__new__(cls)
    for key, value in state.items():
        object.__setattr__(obj, key, value)
    return obj

"""Object state as data: what a training checkpoint holds of the games in progress, without pickle.

:func:`encode_state` turns a live object graph (an env stack: wrappers, the AEC env, its game
state, its generators, the opponents) into a JSON tree and a dict of NumPy arrays, through each
object's own ``__getstate__``.  :func:`restore_state` puts such a tree back **into live objects of
the same types** (each object's own ``__setstate__``, or its ``__dict__``): it never builds an
object from a name in the file, never resolves a dotted name, never calls anything the file
names.  A file from someone else can only give data to objects this process already made from
its own configuration; a type that differs from the live one is refused in one line.

What the tree holds: ``None``, booleans, numbers, strings, bytes, lists, tuples, dicts (any keys
of those), sets, deques, NumPy arrays (by name in the arrays; never of ``object`` dtype), NumPy
scalars and dtypes, NumPy and Python generators (their states), objects (by type name, their
state), shared references, and *live* values (functions, modules, classes, bound methods, torch
and MuJoCo objects, a type whose ``checkpoint_live`` is ``True`` such as a process agent, whose
command a file must not change, and the fields a type names in a ``checkpoint_live`` tuple):
those are not saved, the live ones stay.
"""

from __future__ import annotations

import base64
import dataclasses
import math
import random
import types
from collections import OrderedDict, deque
from typing import Any

import numpy as np

from polarzoo.envs._common.safe_io import DataError

#: modules whose objects are never saved: the live ones stay (models are rebuilt from their files)
LIVE_MODULES = ("torch", "mujoco", "jax", "jaxlib", "numba")
_BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}


def type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _is_live(value: Any) -> bool:
    if getattr(type(value), "checkpoint_live", None) is True:  # a type that is never saved (a process agent)
        return True
    if isinstance(
        value,
        (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type, types.MethodWrapperType),
    ):
        return True
    module = type(value).__module__ or ""
    return module.split(".")[0] in LIVE_MODULES or callable(value) and not hasattr(value, "__dict__")


def _object_state(value: Any) -> Any:
    getstate = getattr(value, "__getstate__", None)
    if getstate is not None:
        state = getstate()
    elif hasattr(value, "__dict__"):  # Python 3.10
        state = dict(vars(value))
    else:
        state = {name: getattr(value, name) for name in getattr(type(value), "__slots__", ()) if hasattr(value, name)}
    live = getattr(type(value), "checkpoint_live", ())
    if isinstance(state, dict) and isinstance(live, tuple) and live:
        state = {key: item for key, item in state.items() if key not in live}
    return state


class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.refs: dict[int, int] = {}
        self.keep: list[Any] = []  # (ids stay unique while the encoding runs)

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and type(value) is int:
            return value if abs(value) < 2**53 else {"__int__": str(value)}
        if isinstance(value, float) and type(value) is float:
            return value if math.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, (bytes, bytearray)):
            return {"__bytes__": base64.b64encode(bytes(value)).decode()}
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                return {"__list__": [self.encode(v) for v in value.tolist()], "__from_array__": list(value.shape)}
            key = str(len(self.arrays))
            self.arrays[key] = np.array(value, copy=True, order="C")  # a copy: the live one goes on changing
            return {"__array__": key}
        if isinstance(value, np.generic):
            return {"__scalar__": value.dtype.str, "value": self.encode(value.item())}
        if isinstance(value, np.dtype):
            return {"__dtype__": value.str}
        if isinstance(value, np.random.Generator):
            return {"__generator__": self.encode(value.bit_generator.state)}
        if isinstance(value, np.random.RandomState):
            return {"__randomstate__": self.encode(value.get_state(legacy=False))}
        if isinstance(value, random.Random):
            return {"__random__": self.encode(value.getstate())}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, tuple) and type(value) is tuple:
            return {"__tuple__": [self.encode(v) for v in value]}
        if isinstance(value, dict) and type(value) in (dict, OrderedDict):
            tag = "__dict__" if type(value) is dict else "__odict__"
            return {tag: [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if isinstance(value, deque):
            return {"__deque__": [self.encode(v) for v in value], "maxlen": value.maxlen}
        if isinstance(value, (set, frozenset)):
            return {"__set__": [self.encode(v) for v in value], "frozen": isinstance(value, frozenset)}
        if _is_live(value):
            return {"__live__": type_name(value)}
        if id(value) in self.refs:
            return {"__ref__": self.refs[id(value)]}
        self.refs[id(value)] = len(self.refs)
        self.keep.append(value)
        return {"__object__": type_name(value), "id": self.refs[id(value)], "state": self.encode(_object_state(value))}


def encode_state(value: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """``(tree, arrays)``: ``value``'s state as a JSON-able tree and the arrays it names."""
    encoder = _Encoder()
    return encoder.encode(value), encoder.arrays


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray], where: str) -> None:
        self.arrays, self.where = arrays, where
        self.objects: dict[int, Any] = {}
        self.path: list[str] = []
        self.types: dict[str, type] = {}

    def fail(self, message: str) -> DataError:
        at = f" (at {'.'.join(self.path)})" if self.path else ""
        return DataError(f"{self.where}: {message}{at}")

    def decode(self, node: Any, live: Any = None) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            template = live if isinstance(live, list) and len(live) == len(node) else [None] * len(node)
            return [self.decode(n, t) for n, t in zip(node, template)]
        if not isinstance(node, dict) or len(node) == 0:
            raise self.fail(f"a value the checkpoint format does not hold ({str(node)[:60]!r})")
        tag = next(iter(node))
        body = node[tag]
        if tag == "__int__":
            return int(str(body)[:40])
        if tag == "__float__":
            if body not in ("nan", "inf", "-inf"):
                raise self.fail(f"a float {str(body)[:20]!r}")
            return float(body)
        if tag == "__bytes__":
            return base64.b64decode(str(body).encode())
        if tag == "__array__":
            if str(body) not in self.arrays:
                raise self.fail(f"array {str(body)[:20]!r} is missing")
            return np.array(self.arrays[str(body)])
        if tag == "__scalar__":
            return np.dtype(self._dtype(body)).type(self.decode(node.get("value")))
        if tag == "__dtype__":
            return np.dtype(self._dtype(body))
        if tag == "__list__":
            values = [self.decode(n) for n in body]
            if "__from_array__" in node:
                array = np.empty(len(values), dtype=object)
                array[:] = values
                return array.reshape(node["__from_array__"])
            return values
        if tag == "__tuple__":
            items: Any = live if isinstance(live, tuple) and len(live) == len(body) else [None] * len(body)
            return tuple(self.decode(n, t) for n, t in zip(body, items))
        if tag in ("__dict__", "__odict__"):
            out: dict[Any, Any] = {} if tag == "__dict__" else OrderedDict()
            for pair in body:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise self.fail("a damaged dict")
                key = self.decode(pair[0])
                try:
                    self.path.append(str(key)[:40])
                    out[key] = self.decode(pair[1], live.get(key) if isinstance(live, dict) else None)
                    self.path.pop()
                except TypeError:
                    raise self.fail(f"an unhashable dict key {str(key)[:40]!r}") from None
            return out
        if tag == "__deque__":
            return deque((self.decode(n) for n in body), maxlen=node.get("maxlen"))
        if tag == "__set__":
            items = [self.decode(n) for n in body]
            return frozenset(items) if node.get("frozen") else set(items)
        if tag in ("__generator__", "__randomstate__", "__random__"):
            return self._generator(tag, self.decode(body), live)
        if tag == "__live__":
            if live is None or type_name(live) != body:
                raise self.fail(f"the checkpoint keeps a live {str(body)[:80]} where this run has {type_name(live)}")
            return live
        if tag == "__ref__":
            if body not in self.objects:
                raise self.fail(f"a reference to object {str(body)[:20]} before it")
            return self.objects[body]
        if tag == "__object__":
            return self._object(node, live)
        raise self.fail(f"an unknown tag {str(tag)[:40]!r}")

    def _dtype(self, text: Any) -> str:
        dtype = np.dtype(str(text)[:16])
        if dtype.hasobject:
            raise self.fail("an object dtype")
        return dtype.str

    def _generator(self, tag: str, state: Any, live: Any) -> Any:
        try:
            if tag == "__generator__":
                generator = live
                if not isinstance(generator, np.random.Generator):
                    name = state.get("bit_generator") if isinstance(state, dict) else None
                    if name not in _BIT_GENERATORS:
                        raise self.fail(f"an unknown bit generator {str(name)[:30]!r}")
                    generator = np.random.Generator(_BIT_GENERATORS[name]())
                generator.bit_generator.state = state
                return generator
            if tag == "__randomstate__":
                generator = live if isinstance(live, np.random.RandomState) else np.random.RandomState()
                generator.set_state(state)
                return generator
            generator = live if isinstance(live, random.Random) else random.Random()
            generator.setstate(_tuples(state))
            return generator
        except (TypeError, ValueError, KeyError) as error:
            raise self.fail(f"a damaged generator state ({str(error)[:80]})") from None

    def _object(self, node: dict[str, Any], live: Any) -> Any:
        name = node.get("__object__")
        if live is None and name in self.types:
            # (an object the live graph does not hold here, such as the opponent of a game in
            # progress: one of a type this run made itself, never a type the file names)
            kind: Any = self.types[name]
            live = kind.__new__(kind)
        if live is None or type_name(live) != name or _is_live(live):
            raise self.fail(
                f"the checkpoint holds a {str(name)[:80]} where this run has {type_name(live)}; it was saved by another run"
            )
        template = _object_state(live)
        if dataclasses.is_dataclass(live) and not hasattr(type(live), "__setstate__"):
            # a plain record (a game's state): a new one of the live object's own type, so that no
            # other holder of the live record sees it change
            record: Any = type(live)
            live = record.__new__(record)
        self.objects[int(node.get("id", -1))] = live
        state = self.decode(node.get("state"), template)
        setstate = getattr(type(live), "__setstate__", None)
        kept = {key: getattr(live, key) for key in getattr(type(live), "checkpoint_live", None) or () if hasattr(live, key)}
        if setstate is not None and setstate is not getattr(object, "__setstate__", None):
            live.__setstate__(state)
        elif state is None:  # an object without state of its own (Python 3.11's __getstate__ of an empty __dict__)
            pass
        elif isinstance(state, dict):
            for key, value in state.items():
                object.__setattr__(live, str(key), value)
        elif isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):  # (dict, slots)
            for key, value in {**(state[0] or {}), **state[1]}.items():
                object.__setattr__(live, key, value)
        else:
            raise self.fail(f"a damaged state of {str(name)[:80]}")
        for key, value in kept.items():
            setattr(live, key, value)
        return live


def live_types(live: Any) -> dict[str, type]:
    """The types of the objects in a live graph (by :func:`type_name`): the only types a restore
    may make a new instance of."""
    found: dict[str, type] = {}
    seen: set[int] = set()
    stack = [live]
    while stack:
        value = stack.pop()
        if id(value) in seen or value is None or isinstance(value, (bool, int, float, str, bytes, np.ndarray, np.generic)):
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset, deque)):
            stack.extend(value)
        elif not _is_live(value) and not isinstance(value, (np.random.Generator, np.random.RandomState, random.Random, np.dtype)):
            found.setdefault(type_name(value), type(value))
            try:
                stack.append(_object_state(value))
            except Exception:  # noqa: BLE001 (an object whose state cannot be read is not a template)
                pass
    return found


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


def restore_state(live: Any, tree: Any, arrays: dict[str, np.ndarray], where: str = "checkpoint") -> Any:
    """Put ``tree`` (from :func:`encode_state`) back into ``live``, an object graph of the same
    types; :class:`~polarzoo.envs.utils.DataError` (one line naming ``where``) for a tree that does
    not fit it.  Returns the restored value (``live`` itself for an object)."""
    try:
        decoder = _Decoder(arrays, where)
        decoder.types = live_types(live)
        return decoder.decode(tree, live)
    except DataError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as error:
        raise DataError(f"{where}: a state that does not fit this run ({type(error).__name__}: {str(error)[:100]})") from None

"""Plain JSON: what the harness protocol and the case files mean by JSON.

Python's json module reads more than JSON: ``NaN`` and ``Infinity``, ``1e999``
as an infinity, an integer of 400 digits exactly where a double overflows, an object with a key
twice as holding the last value; it
refuses integers past 4300 digits with a bare ValueError and overflows the
stack on deep nesting. A port in another language reads none
of these alike, and each used to end a run in a traceback. Here each is a
:class:`NotPlainJSON` with a one-line reason (PROTO-VAL-3).
"""

from __future__ import annotations

import json
import re
from typing import Any

# Replies (and case files) nested deeper than this are refused (PROTO-VAL-3):
# the outputs of every machine are a few levels deep, and a bound keeps every
# later recursive step (schema validation, comparison, printing) safe.
MAX_JSON_DEPTH = 64


class NotPlainJSON(ValueError):
    """Valid to Python's json module, but not plain JSON that every port reads alike."""


def _refuse_constant(name: str) -> Any:
    raise NotPlainJSON(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise NotPlainJSON(f"number {text[:40]} overflows a double")
    return value


# A double holds every integer of up to 308 digits; only a longer literal can round to an infinity.
_DOUBLE_SAFE_DIGITS = 308


def _finite_int(text: str) -> int:
    # An integer literal past a double's range reads as an infinity in JavaScript and most other
    # ports (PROTO-VAL-3), while Python keeps it exact: the two would answer a case differently.
    if len(text.lstrip("-")) > _DOUBLE_SAFE_DIGITS and float(text) in (float("inf"), float("-inf")):
        raise NotPlainJSON(f"integer {text[:40]}... overflows a double")
    return int(text)


def _object_of_unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A key twice in one object: Python keeps the last, some parsers the first, some refuse it
    # (RFC 8259 leaves it open), so a port and the runner could read two different values.
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise NotPlainJSON(f"the key {key[:40]!r} appears twice in one object")
            seen.add(key)
    return value


# json.loads joins a surrogate pair into one character, so a surrogate left in a text is lone.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escaping_lone_surrogates(text: str) -> str:
    """JSON ``text`` with each lone surrogate (a text may hold one, PROTO-VAL-4; UTF-8 cannot)
    written as its escape, ``\\udXXX``: the text as UTF-8 can then carry it."""
    return _LONE_SURROGATE.sub(lambda lone: f"\\u{ord(lone[0]):04x}", text)


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth) for child in item)
    return deepest


def parse_plain_json(text: str | bytes, parse_float: Any = _finite_float) -> Any:
    """Parse one JSON text the way the protocol means it; NotPlainJSON when it is not.

    Python's json module accepts ``NaN`` and ``Infinity``, turns ``1e999`` into
    an infinity, refuses integers past 4300 digits with a bare ValueError and
    overflows the stack on deep nesting. Each of these becomes NotPlainJSON,
    with ``json.JSONDecodeError`` still raised for text that is not JSON at all.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=parse_float,
                           parse_int=_finite_int, object_pairs_hook=_object_of_unique_keys)
    except RecursionError:
        raise NotPlainJSON(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError:
        raise
    except NotPlainJSON:
        raise
    except ValueError as error:  # an integer too long to convert, for one
        raise NotPlainJSON(str(error)[:200]) from None
    # Nesting needs an opening bracket per level: a text with few of them is shallow
    # enough without walking it (the common case, on the runner's hot path).
    opening = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else (
        text.count("[") + text.count("{"))
    if opening > MAX_JSON_DEPTH and json_depth(value) > MAX_JSON_DEPTH:
        raise NotPlainJSON(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return value


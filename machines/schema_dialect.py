"""How inboxspec reads a JSON Schema ``pattern``: as ECMA-262 does, which JSON Schema asks for.

JSON Schema 2020-12 writes ``pattern`` (and ``patternProperties``) in the ECMA-262 dialect, and a
port that checks a case file with an ECMA-262 engine (ajv, say, which matches code points as
ECMA-262's ``u`` flag does) reads it so. jsonschema hands a pattern to Python's ``re`` as it is,
and the two read some constructs differently. The one that mattered: Python's ``$`` also matches
before a final newline, so the case-file schema took the case id ``"wake-gate/x\\n"`` and the
fixture schema the mode ``"0644\\n"``, which an ECMA-262 engine refuses.

:func:`python_regex` rewrites a pattern into the Python regular expression that matches the same
texts: ``$`` (outside a character class) becomes ``\\Z``, the end of the text and nothing else,
and ``.`` becomes ``[^\\n\\r\\u2028\\u2029]``, since ECMA-262's dot stops at every line terminator and
Python's only at ``\\n``. Constructs the two engines read differently in other ways (``\\d``,
``\\w``, ``\\s``, ``\\b``, which Python reads as Unicode classes; ``\\Z``, ``\\A``, inline flags and
named groups, which ECMA-262 does not have; a ``\\u`` escape of a surrogate, two of which ECMA-262
pairs into one code point; a ``{``, ``}`` or ``]`` that is not syntax, a quantifier after a
quantifier but a lazy ``?`` or after a lookahead, and an empty or nested character class, which
ECMA-262 refuses and Python reads; a count past what Python's ``re`` takes) are refused with
:class:`UnsupportedPattern`, and so is ``patternProperties`` beside ``additionalProperties`` or
``unevaluatedProperties`` (jsonschema matches its patterns there with Python's own ``re``): a
schema that uses one fails when its validator is made, not silently on some text.

Every schema inboxspec validates input against goes through :func:`validator_for` (jsonschema, the
report of every error) or :func:`fast_validator` (fastjsonschema, accept or refuse, for a fast
first pass), and both read patterns through :func:`python_regex`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import fastjsonschema
import jsonschema

# ECMA-262's line terminators: what its ``.`` does not match.
_ECMA_DOT = "[^\\n\\r\\u2028\\u2029]"
# Escapes both engines read alike, as ECMA-262 reads them with the ``u`` flag: a syntax character
# taken literally, a control character, and a code unit or point by number.
_LITERAL_ESCAPES = frozenset("^$\\.*+?()[]{}|/")
_CONTROL_ESCAPES = frozenset("nrtfv")
_NUMBERED_ESCAPES = {"x": 2, "u": 4}
_GROUP_OPENINGS = ("(?:", "(?=", "(?!")
# A counted quantifier, as ECMA-262 with the ``u`` flag takes one (a ``{`` that starts none is an error).
_COUNTED = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")
_SURROGATES = range(0xD800, 0xE000)


class UnsupportedPattern(ValueError):
    """A pattern that uses a construct ECMA-262 and Python's ``re`` read differently."""


@functools.lru_cache(maxsize=1024)
def python_regex(pattern: str) -> str:
    """The Python regular expression that matches what the ECMA-262 ``pattern`` matches (see the
    module); UnsupportedPattern for a construct outside the subset both engines read alike."""
    out: list[str] = []
    in_class = False
    after = "start"  # outside a class, the last thing read: "quantifier", "lazy", "lookahead" or other
    groups: list[str] = []  # the groups open, innermost last: "lookahead" or "group"
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if not in_class and char in "*+?{":
            counted = _COUNTED.match(pattern, index) if char == "{" else None
            if char == "{" and counted is None:
                raise UnsupportedPattern(f"pattern {pattern!r}: a {{ that starts no counted quantifier")
            if after == "quantifier" and char == "?":
                after = "lazy"  # ``a*?``, read alike
            elif after == "lookahead":  # ``(?=a)*``: Python repeats it, ECMA-262 (``u``) refuses it
                raise UnsupportedPattern(f"pattern {pattern!r}: a quantifier after a lookahead")
            elif after in ("quantifier", "lazy"):
                # Python takes ``a*+`` (possessive) and ``a{2}{3}``; ECMA-262 refuses them.
                raise UnsupportedPattern(f"pattern {pattern!r}: a quantifier after a quantifier")
            else:
                after = "quantifier"
            text = counted.group() if counted is not None else char
            out.append(text)
            index += len(text)
            continue
        closes_lookahead = char == ")" and not in_class and groups and groups[-1] == "lookahead"
        after = "lookahead" if closes_lookahead else "other"
        if not in_class and char in "]}":
            raise UnsupportedPattern(f"pattern {pattern!r}: a lone {char}, which ECMA-262 refuses "
                                     "and Python reads as itself")
        if char == "\\":
            escape = pattern[index + 1: index + 2]
            width = _NUMBERED_ESCAPES.get(escape, 0)
            digits = pattern[index + 2: index + 2 + width]
            if escape in _LITERAL_ESCAPES or escape in _CONTROL_ESCAPES or (in_class and escape == "-"):
                out.append(pattern[index: index + 2])
                index += 2
            elif width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                if int(digits, 16) in _SURROGATES:  # ECMA-262 (``u``) pairs two into one code point
                    raise UnsupportedPattern(f"pattern {pattern!r}: the escape \\u{digits} is a surrogate")
                out.append(pattern[index: index + 2 + width])
                index += 2 + width
            else:
                raise UnsupportedPattern(f"pattern {pattern!r}: the escape \\{escape} is read differently "
                                         "by ECMA-262 and Python, or by one of them only")
            continue
        if in_class:
            if char == "[":  # Python reads it as the start of a nested set (a FutureWarning), ECMA-262 not
                raise UnsupportedPattern(f"pattern {pattern!r}: an unescaped [ inside a character class")
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            start = index + (2 if pattern.startswith("[^", index) else 1)
            if pattern[start: start + 1] == "]":  # ECMA-262's [] matches nothing and [^] anything
                raise UnsupportedPattern(f"pattern {pattern!r}: an empty character class, which Python "
                                         "reads as one holding ]")
            out.append(pattern[index:start])
            in_class = True
            index = start
            continue
        elif char == "$":
            out.append("\\Z")
        elif char == ".":
            out.append(_ECMA_DOT)
        elif char == "(" and pattern[index + 1: index + 2] == "?":
            if not pattern.startswith(_GROUP_OPENINGS, index):
                raise UnsupportedPattern(f"pattern {pattern!r}: only (?:, (?= and (?! groups are read "
                                         "alike by ECMA-262 and Python")
            groups.append("group" if pattern.startswith("(?:", index) else "lookahead")
            out.append(pattern[index: index + 3])
            index += 2
        else:
            if char == "(":
                groups.append("group")
            elif char == ")" and groups:
                groups.pop()
            out.append(char)
        index += 1
    if in_class:
        raise UnsupportedPattern(f"pattern {pattern!r}: a character class is not closed")
    translated = "".join(out)
    try:
        re.compile(translated)
    except re.error as error:  # ``*a``, an unbalanced group: an error to ECMA-262 as well
        raise UnsupportedPattern(f"pattern {pattern!r}: not a regular expression: {error}") from None
    except OverflowError:  # ``a{4294967296}``: past what Python's re counts to
        raise UnsupportedPattern(f"pattern {pattern!r}: a count past what Python's re takes") from None
    return translated


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(python_regex(pattern))


def _pattern(validator: Any, pattern: str, instance: Any,
             schema: Any) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: Mapping[str, Any], instance: Any,
                        schema: Any) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for name, value in instance.items():
            if _compiled(pattern).search(name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _equality_key(value: Any) -> Any:
    """A hashable stand-in for a JSON value under JSON Schema's equality: equal values (``1`` and
    ``1.0``; objects with the same members in any order) have equal keys, and others do not (``true``
    is not ``1``, ``"1"`` is not ``1``). A case file's values are nested only as deep as PROTO-CASES-2
    lets them, so the recursion is bounded."""
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, float) and not value.is_integer():
        return ("number", value)
    if isinstance(value, (int, float)):
        # An integral number by its digits (1 and 1.0 one number): CPython hashes an int by its value
        # modulo 2**61 - 1, so the integers 1 + k * (2**61 - 1) all hash alike, and a set of them
        # compared every pair (a 763 kB file, 18 s); a string's hash is keyed afresh in each process.
        return ("integer", str(int(value)))
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, Mapping):
        return ("object", frozenset((name, _equality_key(member)) for name, member in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_equality_key(item) for item in value))
    return ("other", id(value))  # not JSON: equal to itself alone


def _unique_items(validator: Any, unique: bool, instance: Any,
                  schema: Any) -> Iterator[jsonschema.ValidationError]:
    """``uniqueItems``, in one pass over the items. jsonschema's own sorts the items and, where they
    do not sort (a string beside an integer), compares every pair: a 39 kB case file whose
    ``requirements`` held both took 14 s to report, before any adapter started, and a 16 MiB one
    would have taken days. The message is jsonschema's."""
    if unique and validator.is_type(instance, "array"):
        keys = {_equality_key(item) for item in instance}
        if len(keys) < len(instance):
            yield jsonschema.ValidationError(f"{instance!r} has non-unique elements")


# Stands for an integral number in ``_set_of_items``: equal to nothing a document holds.
_INTEGRAL = object()


def _hash_safe(item: Any) -> Any:
    """fastjsonschema's key of an item (a value, or nested tuples and frozensets of them), each
    integral number replaced by its digits, whose hash no document can choose."""
    if isinstance(item, tuple):
        return tuple(_hash_safe(part) for part in item)
    if isinstance(item, frozenset):
        return frozenset(_hash_safe(part) for part in item)
    if isinstance(item, bool) or not isinstance(item, (int, float)):
        return item
    if isinstance(item, float) and not item.is_integer():
        return item
    return (_INTEGRAL, str(int(item)))


def _set_of_items(items: Any = ()) -> set[Any]:
    return {_hash_safe(item) for item in items}


# Draft 2020-12, its patterns read as ECMA-262 reads them, and uniqueItems checked in linear time.
_ECMA_VALIDATOR = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    validators={"pattern": _pattern, "patternProperties": _pattern_properties, "uniqueItems": _unique_items},
)


# Keywords that read ``patternProperties``'s patterns with jsonschema's own ``re.search``: a schema
# that holds one beside ``patternProperties`` is refused (the two validators would read it apart).
_READ_PATTERNS_THEMSELVES = ("additionalProperties", "unevaluatedProperties")


def _patterns(schema: Any) -> Iterator[str]:
    """Every pattern in ``schema``: each string ``pattern`` and each key of a ``patternProperties``,
    found in every object of the document (a data value that looks like one is checked too: a
    schema is refused for nothing worse than that)."""
    nodes = [schema]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
        elif isinstance(node, Mapping):
            if isinstance(node.get("pattern"), str):
                yield node["pattern"]
            if isinstance(node.get("patternProperties"), Mapping):
                beside = [keyword for keyword in _READ_PATTERNS_THEMSELVES if keyword in node]
                if beside:
                    raise UnsupportedPattern(f"patternProperties beside {beside[0]}, which jsonschema "
                                             "reads with Python's own patterns")
                yield from node["patternProperties"]
            nodes.extend(node.values())


def _read_patterns(schema: Mapping[str, Any]) -> dict[str, re.Pattern[str]]:
    """Each pattern of ``schema`` and its ECMA-262 reading, compiled; UnsupportedPattern, at once,
    for one outside the subset (see the module)."""
    return {pattern: _compiled(pattern) for pattern in _patterns(schema)}


def extended_validator(**changes: Any) -> Callable[..., jsonschema.Draft202012Validator]:
    """A function that makes a jsonschema validator of a schema (draft 2020-12, with
    ``jsonschema.validators.extend``'s ``changes``: ``type_checker=``, say) that reads its patterns
    as ECMA-262 does; UnsupportedPattern, at once, for a pattern outside the subset (see the module)."""
    extended_class = jsonschema.validators.extend(_ECMA_VALIDATOR, **changes)  # type: ignore[no-untyped-call]

    def make(schema: Mapping[str, Any], **kwargs: Any) -> jsonschema.Draft202012Validator:
        _read_patterns(schema)
        made: jsonschema.Draft202012Validator = extended_class(schema, **kwargs)
        return made

    return make


# A jsonschema validator of a schema, its patterns read as ECMA-262 reads them.
validator_for = extended_validator()


def unique_items_in_linear_time(validate: Callable[[Any], Any]) -> None:
    """A validator compiled by fastjsonschema, made to count an array's distinct items (``uniqueItems``)
    in linear time, whatever the items: the runner's protocol validators and ``fast_validator``'s.

    WARNING: fastjsonschema's generated code counts them with the builtin ``set`` over its own item
    keys, in which an integer is itself: the integers 1 + k * (2**61 - 1) all hash alike, and a 955 kB
    case file's requirements took 8.5 s, an 8 MB start reply's ``machines`` 22 minutes (its
    ``uniqueItems`` is checked before its items' type). Its other uses of ``set`` are over strings,
    which this one leaves as they are. A newer fastjsonschema that counted otherwise would meet
    tests/test_schema_dialect.py's colliding integers."""
    validate.__globals__["set"] = _set_of_items


def fast_validator(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """Whether a document is valid against ``schema``, by fastjsonschema's code generated from it,
    its patterns read as ECMA-262 reads them: about ten times as fast as jsonschema, but without
    the report of each error (``tests/test_schema_dialect.py`` shows that it accepts exactly what
    :func:`validator_for` accepts). None where the installed fastjsonschema does not keep its compiled
    patterns where this function replaces them (a caller then validates with jsonschema alone)."""
    translate = _read_patterns(schema)
    validate = fastjsonschema.compile(dict(schema), formats={}, use_default=False, use_formats=False)
    # fastjsonschema compiles each pattern itself (reading its ``$`` as ``\\Z``, though not its dot),
    # and its generated code looks the compiled pattern up by the pattern's text in REGEX_PATTERNS:
    # there it finds the ECMA-262 reading instead. tests/test_schema_dialect.py checks that it does.
    patterns = getattr(validate, "__globals__", {}).get("REGEX_PATTERNS")
    if not isinstance(patterns, dict) or not set(translate) <= set(patterns):
        return None
    patterns.update(translate)
    unique_items_in_linear_time(validate)

    def valid(document: Any) -> bool:
        try:
            validate(document)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return valid

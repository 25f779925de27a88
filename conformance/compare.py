"""Exact comparison of a case's expected result with what an implementation returned.

Values are compared as JSON, not as Python objects: in Python ``True == 1``
and ``1 == 1.0``, but a port that answers ``1`` for ``true`` is wrong.

A mismatch is described by a :class:`Difference`: the first step whose
output differs, the JSON path of the first differing value inside it
(``outputs[3].notice``), both values, and, when both are strings, the index
of the first differing character with a window of context around it. The
text report, the JSON report (``first_difference``) and the JUnit file all
render this one object.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from typing import Any

from inboxspec.conformance.casefiles import Case

# Characters of context shown on each side of the first differing character.
CONTEXT_BEFORE = 24
CONTEXT_AFTER = 24
# Longest value printed whole in the text report; longer ones are cut with a count.
PRINTED_VALUE_CHARS = 400
# WARNING: spec/conformance-protocol.md (PROTO-REPORT-1) and conform-report.schema.json's
# ``difference`` give this bound and a cut value's fields; change the three together.
# Longest value a failing result keeps whole, in characters of its canonical JSON: the adapter under
# test writes the actual side, and a report that kept it whole grew with every reply it wrote (800
# failing cases of 4 MiB each held 9.7 GB). A longer value is kept as a ``Cut``.
KEPT_VALUE_CHARS = 1_000
# Matched whole (``fullmatch``): ``$`` would also take a key that ends with a newline.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


class _Missing:
    """A value one side does not have (a key or a list element)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


# Made once: ``json.dumps`` with any argument besides the value makes a new encoder at every call,
# and every output of every case is compared through this.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)


def canonical(value: Any) -> str:
    return _CANONICAL.encode(value)


@dataclass(frozen=True)
class Cut:
    """A text too long for a failing result to keep whole (``KEPT_VALUE_CHARS``): its length, in
    characters, and its first ``KEPT_VALUE_CHARS``. For a value, the text is its canonical JSON; for
    a path, the path itself (an adapter's output names its keys)."""

    characters: int
    head: str

    def as_json(self) -> dict[str, Any]:
        return {"characters": self.characters, "head": self.head}


def kept(value: Any) -> Any:
    """``value`` as a failing result keeps it: whole, or as a :class:`Cut` when its canonical JSON is
    longer than ``KEPT_VALUE_CHARS``."""
    if value is MISSING or isinstance(value, Cut):
        return value
    text = canonical(value)
    return value if len(text) <= KEPT_VALUE_CHARS else Cut(len(text), text[:KEPT_VALUE_CHARS])


def _shown(value: Any) -> str:
    return "(missing)" if value is MISSING else canonical(value)


def cut_text(text: str, limit: int = PRINTED_VALUE_CHARS) -> str:
    """``text``, or its first ``limit`` characters and the count left out."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def kept_path(path: str) -> str | Cut:
    """A JSON path as a failing result keeps it: whole, or as a :class:`Cut` past ``KEPT_VALUE_CHARS``."""
    return path if len(path) <= KEPT_VALUE_CHARS else Cut(len(path), path[:KEPT_VALUE_CHARS])


def _displayed(value: Any, limit: int = PRINTED_VALUE_CHARS, *, text: bool = False) -> str:
    """A kept value (or, with ``text``, a kept path) as the text report shows it: at most ``limit``
    characters, then the count left out (``limit`` is at most ``KEPT_VALUE_CHARS``, so a cut one's
    head holds them)."""
    if isinstance(value, Cut):
        return f"{value.head[:limit]}… ({value.characters - limit} more characters)"
    return cut_text(value if text else _shown(value), limit)


def escape_for_display(text: str) -> str:
    """``text`` with every character that does not print as itself escaped.

    Control characters, format characters (a zero-width space), combining
    marks and separators other than the space are shown as ``\\n`` or
    ``\\u200b``, so that every character of the result takes the columns a
    terminal gives it and a caret under the result lines up. A backslash is
    doubled, so an escape cannot be mistaken for the text itself.
    """
    out: list[str] = []
    for char in text:
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif char == " " or (char.isprintable() and unicodedata.category(char)[0] not in "MZC"):
            out.append(char)
        else:
            out.append(_escaped(char))
    return "".join(out)


def _escaped(char: str) -> str:
    if ord(char) <= 0xFF:
        return f"\\x{ord(char):02x}"
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"


# The categories ``one_line`` escapes: control, format, surrogate, private use, unassigned, and the
# line and paragraph separators.
_LINE_BREAKING = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def one_line(text: str) -> str:
    """``text`` as one line of a report on a terminal: every control, format, private-use or
    unassigned character, lone surrogate and line or paragraph separator escaped (``\\x0a``,
    ``\\udcff``), the rest as it is. A problem names a file, and a file's name may hold a newline
    (a forged line of the report), an escape sequence (a command to the terminal) or, from a name
    that is not UTF-8, a lone surrogate (which a strict output encoding refused with a traceback).

    A backslash is kept as it is (PROTO-VAL-4): the result is safe, not exact, since a text that
    spells ``\\x0a`` prints as an escaped newline does. Problems and details are mostly Python reprs
    and JSON already, whose backslashes doubled would read worse; ``--json`` carries the exact text.
    (``escape_for_display``, whose windows are compared character by character, doubles them.)"""
    if text.isprintable():  # the common case, at C speed: no character above is printable
        return text
    return "".join(_escaped(char) if unicodedata.category(char) in _LINE_BREAKING else char for char in text)


def safe_output() -> None:
    """Let standard output and error print any text, one that is not valid Unicode (a lone surrogate)
    or not in their encoding (a name past ASCII, where the locale is C) included: escaped as
    ``\\udcff``, never a UnicodeEncodeError traceback (PROTO-VAL-4)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def indented_block(text: str, indent: str) -> str:
    """``text``, which may hold what an adapter sent, as lines of a report: each line (split at a
    newline alone) through ``one_line`` and after ``indent``, so that no part of it starts a line
    of the report's own (a forged verdict) or reaches the terminal as a command (PROTO-VAL-4)."""
    return "\n".join(indent + one_line(line) for line in text.split("\n"))


# What stands between a message of the runner's and the tail of an adapter's stderr that it quotes
# (``message_lines``). Should the message's own text hold it (an adapter's words in a fault's
# detail), the split comes early: everything after it is still indented, never a line of the
# report's own.
STDERR_TAIL = "\nadapter stderr (tail):\n"


def message_lines(message: str, indent: str = "  ") -> str:
    """A message of the runner's own, which may quote the tail of an adapter's stderr after
    ``STDERR_TAIL``, as lines of a report: the message through ``one_line`` (a newline in it, of a
    file's name say, escaped), and the quote's header and lines as an ``indented_block`` under it,
    so the quote keeps its lines and none of them starts a line of the report's own."""
    own, marker, quoted = message.partition(STDERR_TAIL)
    if not marker:
        return one_line(message)
    return one_line(own) + "\n" + indented_block(marker.strip("\n") + "\n" + quoted, indent)


def printable_json(value: Any) -> str:
    """``value`` as indented JSON for a terminal: characters past ASCII as they are, except those
    ``one_line`` escapes, which are written as JSON's own escapes (a pair of them past U+FFFF), so
    the text is still the same JSON value."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    if all(c == "\n" or c.isprintable() for c in text):  # the common case
        return text
    return "".join(_json_escaped(c) if c != "\n" and unicodedata.category(c) in _LINE_BREAKING else c
                   for c in text)


def _json_escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def display_width(text: str) -> int:
    """Terminal columns of an escaped text: wide East Asian characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@dataclass(frozen=True)
class StringDifference:
    """Where two strings first differ, with the same window cut from each."""

    index: int  # of the first differing character (code points), or the shorter length
    expected_window: str  # escaped for display
    actual_window: str
    caret_column: int  # columns before the caret, under either window

    def as_json(self) -> dict[str, Any]:
        return {"expected": self.expected_window, "actual": self.actual_window,
                "caret_column": self.caret_column}


def string_difference(expected: str, actual: str) -> StringDifference:
    index = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
                 min(len(expected), len(actual)))
    start = max(0, index - CONTEXT_BEFORE)
    lead = "…" if start > 0 else ""
    prefix = lead + escape_for_display(expected[start:index])  # equal on both sides

    def window(text: str) -> str:
        end = index + CONTEXT_AFTER
        tail = "…" if end < len(text) else ""
        return prefix + escape_for_display(text[index:end]) + tail

    return StringDifference(index, window(expected), window(actual), display_width(prefix))


def json_path(parts: tuple[str | int, ...]) -> str:
    """``("outputs", 3, "notice")`` as ``outputs[3].notice``; odd keys quoted as JSON."""
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}" if path else part
        else:
            path += f"[{json.dumps(part, ensure_ascii=False)}]"
    return path


def _first_leaf(expected: Any, actual: Any,
                parts: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], Any, Any]:
    """The path and values of the first place where two JSON values differ (they must)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            want, got = expected.get(key, MISSING), actual.get(key, MISSING)
            if want is MISSING or got is MISSING:
                return (*parts, key), want, got
            if canonical(want) != canonical(got):
                return _first_leaf(want, got, (*parts, key))
    elif isinstance(expected, list) and isinstance(actual, list):
        for index in range(max(len(expected), len(actual))):
            want = expected[index] if index < len(expected) else MISSING
            got = actual[index] if index < len(actual) else MISSING
            if want is MISSING or got is MISSING:
                return (*parts, index), want, got
            if canonical(want) != canonical(got):
                return _first_leaf(want, got, (*parts, index))
    return parts, expected, actual


@dataclass(frozen=True)
class Difference:
    """The first place an implementation's result departs from a case's expectation."""

    summary: str  # one line; the first line of :meth:`render`
    # JSON path into the result, e.g. ``outputs[3].notice``; "" for the whole result; a Cut past
    # KEPT_VALUE_CHARS (the keys are the adapter's)
    path: str | Cut
    expected: Any  # MISSING when the expectation has nothing there
    actual: Any
    step: int | None = None  # the first differing step, when a step differs
    event: str | None = None
    step_expected: Any = MISSING  # the step's whole outputs, for context
    step_actual: Any = MISSING
    string: StringDifference | None = None

    def __post_init__(self) -> None:
        # Made from the whole values (the string window included); kept bounded from here on.
        for side in ("expected", "actual", "step_expected", "step_actual"):
            object.__setattr__(self, side, kept(getattr(self, side)))
        if isinstance(self.path, str):
            object.__setattr__(self, "path", kept_path(self.path))

    def message(self) -> str:
        """One line for a JUnit failure's message attribute."""
        where = f"step {self.step} ({self.event}) " if self.step is not None else ""
        field = f"at {_displayed(self.path, 200, text=True)}" if self.path else "the result"
        at = f" (character {self.string.index})" if self.string else ""
        return (f"{where}{field}{at}: expected {_displayed(self.expected, 200)}, "
                f"actual {_displayed(self.actual, 200)}")

    def render(self) -> str:
        lines = [self.summary]
        if self.step_expected is not MISSING or self.step_actual is not MISSING:
            lines.append(f"    expected {_displayed(self.step_expected)}")
            lines.append(f"    actual   {_displayed(self.step_actual)}")
        if self.path:
            lines.append(f"    at {_displayed(self.path, text=True)}:")
            if self.string is not None:
                lines.append(f"      first difference at character {self.string.index}")
                lines.append(f"      expected \"{self.string.expected_window}\"")
                lines.append(f"      actual   \"{self.string.actual_window}\"")
                lines.append("                " + " " * self.string.caret_column + "^")
            else:
                lines.append(f"      expected {_displayed(self.expected)}")
                lines.append(f"      actual   {_displayed(self.actual)}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"step": self.step, "event": self.event}
        if isinstance(self.path, Cut):
            body["path_cut"] = self.path.as_json()
        else:
            body["path"] = self.path
        for side, value in (("expected", self.expected), ("actual", self.actual)):
            if value is MISSING:
                body[f"{side}_missing"] = True
            elif isinstance(value, Cut):
                body[f"{side}_cut"] = value.as_json()
            else:
                body[side] = value
        if self.string is not None:
            body["index"] = self.string.index
            body["window"] = self.string.as_json()
        return body


def _leaf_difference(summary: str, root: tuple[str | int, ...], expected: Any, actual: Any,
                     **step: Any) -> Difference:
    parts, want, got = _first_leaf(expected, actual, root)
    string = string_difference(want, got) if isinstance(want, str) and isinstance(got, str) else None
    return Difference(summary, json_path(parts), want, got, string=string, **step)


def _step_difference(case: Case, index: int, want: Any, got: Any, summary: str | None = None) -> Difference:
    step = case.steps[index]
    heading = f"step {index} ({step['event']} {cut_text(canonical(step.get('args', {})), 200)}):"
    return _leaf_difference(summary or heading, ("outputs", index), want, got, step=index,
                            event=step["event"], step_expected=want, step_actual=got)


def find_difference(case: Case, actual: Any) -> Difference | None:
    """None when ``actual`` matches exactly; otherwise where it first differs."""
    expected = case.expected
    if not isinstance(actual, dict):
        return Difference(f"result is not an object: {cut_text(canonical(actual), 200)}", "",
                          expected, actual)
    if "config_error" in expected or "config_error" in actual:
        if canonical(expected.get("config_error")) == canonical(actual.get("config_error")):
            return None
        shown = {k: actual[k] for k in actual if k != "seq"}
        return _leaf_difference(f"config: expected {cut_text(canonical(expected), 200)}, got "
                                f"{cut_text(canonical(shown), 200)}", ("config_error",),
                                expected.get("config_error", MISSING),
                                actual.get("config_error", MISSING))
    outputs = actual.get("outputs")
    if not isinstance(outputs, list):
        return Difference(f"result has no outputs list: {cut_text(canonical(actual), 200)}", "outputs",
                          expected["outputs"], actual.get("outputs", MISSING))
    wanted: list[Any] = expected["outputs"]
    first = next((i for i, (want, got) in enumerate(zip(wanted, outputs, strict=False))
                  if canonical(want) != canonical(got)), None)
    if len(outputs) != len(wanted):
        summary = f"expected {len(wanted)} outputs, got {len(outputs)}"
        if first is not None:  # an output both sides have differs before the lists part
            return _step_difference(case, first, wanted[first], outputs[first],
                                    f"{summary}; the first differs at step {first}:")
        index = min(len(wanted), len(outputs))
        event = case.steps[index]["event"] if index < len(case.steps) else None
        return Difference(summary, f"outputs[{index}]",
                          wanted[index] if index < len(wanted) else MISSING,
                          outputs[index] if index < len(outputs) else MISSING,
                          step=index, event=event)
    if first is None:
        return None
    return _step_difference(case, first, wanted[first], outputs[first])


def first_difference(case: Case, actual: Any) -> str | None:
    """None when ``actual`` matches exactly; otherwise the difference as a paragraph of text."""
    difference = find_difference(case, actual)
    return None if difference is None else difference.render()

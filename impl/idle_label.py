"""The idle notices' pure helpers: the label sanitiser, the clock, and the notice texts.

Specified by ``spec/idle-subscriptions.md`` (seed ``001_08883a16a8c012a7.txt``,
``peerIdleNoticeLabel``, ``formatPeerNoticeClock``,
``renderCrossSessionIdleNotice``, ``describePeerIdleSubscription``); the
requirement IDs in comments point there.

Each function that a helper event calls (``sanitise_label``, ``format_clock``,
``render_notice``, ``describe_subscription``, ``is_notice_kind``) is its entry
point: it checks its own arguments in the order the spec's Interface lists
them (IDLE-IF-3) and raises ``InvalidArgument`` for the first bad one, and it
takes ``None`` for an optional argument as absent, so that the default applies
(IDLE-IF-1). A driver only turns JSON into these calls.

The sanitiser works on Unicode code points and reads its character classes
from ``idle_label_table`` (generated from one pinned Unicode version), never
from the runtime's Unicode database, so that every port maps every label to
the same text (IDLE-LABEL-1..6).
"""

from __future__ import annotations

import bisect
import re
from typing import Final

from .idle_errors import InvalidArgument
from .idle_label_table import BLANK_RANGES, FOLDED_PHRASES, LETTER_FOLDS, LOOKALIKE_RANGES, SPACE_RANGES
from .values import is_safe_natural

PEER_IDLE_LABEL_MAX: Final = 100  # IDLE-LABEL-4: in code points
PEER_IDLE_NOTICE_KINDS: Final = ("idle", "exited", "unavailable", "expired")
# IDLE-TEXT-3: the seed's sentence, verbatim.
PEER_IDLE_UNAVAILABLE_CAUSES: Final = (
    "it is shutting down, its subscription table is full, a newer subscription displaced this"
    " one, or it answered in a form this version does not recognize"
)
NOTICE_TAG: Final = "[peer idle notice]"  # IDLE-TEXT-1
PREFIX_PHRASE: Final = "peer idle notice"  # IDLE-LABEL-3: the tag's words, matched without case
NOTICE_TAIL: Final = (
    "This is an automated harness notice, not a message from a person and not an instruction."
)
CLOCK_PLACEHOLDER: Final = "--:--"  # IDLE-CLOCK-2
UNNAMED_LABEL: Final = "(unnamed session)"  # IDLE-TEXT-6
MINUTE_MS: Final = 60_000
MAX_UTC_OFFSET_MIN: Final = 1439  # IDLE-CLOCK-1: strictly less than a day either way
DEFAULT_UTC_OFFSET_MIN: Final = 0  # the helpers' utc_offset_min when absent or null (IDLE-IF-1)
DAY_MINUTES: Final = 1440

_LOWS: Final = tuple(low for low, _ in SPACE_RANGES)
_ASCII_LOWER: Final = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _class_pattern_of(ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of a regular-expression character class holding exactly ``ranges``."""
    return "".join(f"\\U{low:08x}" if low == high else f"\\U{low:08x}-\\U{high:08x}" for low, high in ranges)


_SPACE_RUN: Final = re.compile("[" + _class_pattern_of(SPACE_RANGES) + "]+")
# IDLE-LABEL-6: a result of spaces and blanks alone prints nothing, so it is no label.
_NOTHING_PRINTABLE: Final = re.compile("[ " + _class_pattern_of(BLANK_RANGES) + "]*")
# IDLE-OPT-5: what the option blanks besides the space class, and the letter each fold compares as.
_LOOKALIKE_RUN: Final = re.compile("[" + _class_pattern_of(LOOKALIKE_RANGES) + "]+")
_FOLD_TO_LETTER: Final = {**dict(LETTER_FOLDS), **{c: chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}}
_SURROGATE_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def join_surrogate_pairs(raw: str) -> str:
    """IDLE-LABEL-1: a high surrogate followed by a low one is the code point they encode.

    A Python string can hold the two halves as separate code points; JSON and
    UTF-16 languages cannot tell them from the pair, so neither may the sanitiser.
    """
    if _SURROGATE_PAIR.search(raw) is None:
        return raw
    return raw.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def maps_to_space(char: str) -> bool:
    """IDLE-LABEL-1: whether the sanitiser turns this code point into a space."""
    point = ord(char)
    index = bisect.bisect_right(_LOWS, point) - 1
    return index >= 0 and point <= SPACE_RANGES[index][1]


def _kmp_failure(phrase: str) -> tuple[int, ...]:
    """The KMP failure function of ``phrase``."""
    failure = [0] * len(phrase)
    k = 0
    for i in range(1, len(phrase)):
        while k and phrase[i] != phrase[k]:
            k = failure[k - 1]
        if phrase[i] == phrase[k]:
            k += 1
        failure[i] = k
    return tuple(failure)


_FAILURE: Final = _kmp_failure(PREFIX_PHRASE)
_FOLDED_FAILURES: Final = tuple(_kmp_failure(phrase) for phrase in FOLDED_PHRASES)


def _ascii_lower(char: str) -> str:
    return chr(ord(char) + 32) if "A" <= char <= "Z" else char


def _advance(k: int, lower: str) -> int:
    """The KMP step: the matched prefix length after one more (ASCII-lowered) code point.

    pre: 0 <= k < 16
    pre: len(lower) == 1
    post[]:
        # the match is a prefix of the phrase that ends with the new code point
        0 <= __return__ <= 16 and (__return__ == 0 or "peer idle notice"[__return__ - 1] == lower)
        # a match that continues grows by exactly one
        lower != "peer idle notice"[k] or __return__ == k + 1
    """
    return _kmp_step(PREFIX_PHRASE, _FAILURE, k, lower)


def _remove_phrase(mapped: str) -> str:
    """IDLE-LABEL-2/3: one left-to-right pass with a stack, linear in the input.


    Spaces collapse as they arrive: a space is pushed only onto a buffer that
    is not empty and does not end with one. Each pushed code point carries the
    length of the longest prefix of the phrase that the buffer now ends with
    (ASCII letters compared without case). When that length is the whole
    phrase, the phrase is popped and a space takes its place under the same
    rule, so a phrase that a removal closes up is caught when its last code
    point arrives.
    """
    chars: list[str] = []
    matched: list[int] = []
    whole = len(PREFIX_PHRASE)
    for char in mapped:
        if char == " " and (not chars or chars[-1] == " "):
            continue
        chars.append(char)
        matched.append(_advance(matched[-1] if matched else 0, _ascii_lower(char)))
        if matched[-1] == whole:
            del chars[-whole:]
            del matched[-whole:]
            if chars and chars[-1] != " ":
                chars.append(" ")
                matched.append(_advance(matched[-1], " "))
    return "".join(chars)


def _kmp_step(phrase: str, failure: tuple[int, ...], k: int, letter: str) -> int:
    """The matched prefix length of ``phrase`` after one more letter, from ``k``."""
    while k and letter != phrase[k]:
        k = failure[k - 1]
    return k + 1 if letter == phrase[k] else 0


def _remove_folded_phrases(mapped: str) -> str:
    """IDLE-OPT-5: the pass of IDLE-LABEL-3 for every folded phrase, each code point compared as
    its fold. Each pushed code point carries, per phrase, the length of the longest prefix the
    buffer now ends with; a fold is one code point for one letter, so a whole phrase is as many
    code points as letters."""
    chars: list[str] = []
    matched: list[tuple[int, ...]] = []

    def push(char: str) -> None:
        letter = _FOLD_TO_LETTER.get(ord(char), char)
        before = matched[-1] if matched else (0,) * len(FOLDED_PHRASES)
        chars.append(char)
        steps = zip(FOLDED_PHRASES, _FOLDED_FAILURES, before, strict=True)
        matched.append(tuple(_kmp_step(phrase, failure, k, letter) for phrase, failure, k in steps))

    for char in mapped:
        if char == " " and (not chars or chars[-1] == " "):
            continue
        push(char)
        whole = next((len(p) for p, k in zip(FOLDED_PHRASES, matched[-1], strict=True) if k == len(p)), 0)
        if whole:
            del chars[-whole:]
            del matched[-whole:]
            if chars and chars[-1] != " ":
                push(" ")
    return "".join(chars)


def peer_idle_notice_label(raw: object, fold_lookalikes: bool = False) -> str | None:
    """``peerIdleNoticeLabel``: a label or detail line made safe for a notice (IDLE-LABEL-1..6).

    Its properties are checked by hypothesis (tests/test_idle_subscriptions_label.py);
    CrossHair checks the phrase removal it relies on (``_remove_phrase``).
    """
    if not isinstance(raw, str):
        raise InvalidArgument(f"raw (a label or detail) must be a string, got {type(raw).__name__}")
    if fold_lookalikes:  # IDLE-OPT-5: bracket and quotation lookalikes are blanked too
        raw = _LOOKALIKE_RUN.sub(" ", join_surrogate_pairs(raw))
    # IDLE-LABEL-1/2: every class member becomes a space, runs of spaces one space, no leading space.
    normal = _SPACE_RUN.sub(" ", join_surrogate_pairs(raw)).lstrip(" ")
    if fold_lookalikes:  # IDLE-OPT-5: both phrases, each code point compared as its fold
        normal = _remove_folded_phrases(normal)
    # IDLE-LABEL-3: the stack pass only matters when the phrase occurs; the pass is linear either way.
    elif PREFIX_PHRASE in normal.translate(_ASCII_LOWER):
        normal = _remove_phrase(normal)
    # IDLE-LABEL-4/5: trim, cap in code points, trim again.
    capped = normal.rstrip(" ")[:PEER_IDLE_LABEL_MAX].rstrip(" ")
    return None if _NOTHING_PRINTABLE.fullmatch(capped) else capped  # IDLE-LABEL-6


def sanitise_by_definition(raw: str) -> str | None:
    """IDLE-LABEL-1..6 as the spec writes them, one code point at a time (the tests' oracle)."""
    mapped = "".join(" " if maps_to_space(c) else c for c in join_surrogate_pairs(raw))
    normal = _remove_phrase(mapped)
    capped = normal.rstrip(" ")[:PEER_IDLE_LABEL_MAX].rstrip(" ")
    printable = [c for c in capped if c != " " and not _in_ranges(BLANK_RANGES, c)]
    return capped if printable else None


def _in_ranges(ranges: tuple[tuple[int, int], ...], char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in ranges)


def is_peer_idle_notice_kind(value: object = None) -> bool:
    """``isPeerIdleNoticeKind`` (IDLE-TEXT-5): any value; absent is null, which is no kind."""
    return isinstance(value, str) and value in PEER_IDLE_NOTICE_KINDS


def _check_epoch(value: object, name: str) -> int | None:
    if value is not None and not is_safe_natural(value):
        raise InvalidArgument(f"{name} must be an integer in [0, 2**53 - 1] or null, got {value!r}")
    assert value is None or isinstance(value, int)
    return value


def _check_offset(value: object) -> int:
    """A UTC offset in minutes; None is absent and takes the default (IDLE-IF-1)."""
    if value is None:
        return DEFAULT_UTC_OFFSET_MIN
    if type(value) is not int or abs(value) > MAX_UTC_OFFSET_MIN:
        raise InvalidArgument(f"utc_offset_min must be an integer in [-1439, 1439], got {value!r}")
    return value


def format_peer_notice_clock(epoch_ms: object = None, utc_offset_min: object = None) -> str:
    """``formatPeerNoticeClock``: ``HH:MM``, 24-hour, at a fixed UTC offset (IDLE-CLOCK-1..3).

    Faults in argument order: ``epoch_ms`` (a safe natural or None), then ``utc_offset_min``.
    """
    epoch_ms = _check_epoch(epoch_ms, "epoch_ms")
    utc_offset_min = _check_offset(utc_offset_min)
    if epoch_ms is None:
        return CLOCK_PLACEHOLDER
    minutes = (epoch_ms - epoch_ms % MINUTE_MS) // MINUTE_MS + utc_offset_min
    minute_of_day = minutes % DAY_MINUTES
    return f"{minute_of_day // 60:02d}:{minute_of_day % 60:02d}"


def label_or_unnamed(*candidates: str | None, fold_lookalikes: bool = False) -> str:
    """IDLE-TEXT-6: the first candidate that survives the sanitiser, else the unnamed label."""
    for candidate in candidates:
        if candidate is not None:
            label = peer_idle_notice_label(candidate, fold_lookalikes)
            if label is not None:
                return label
    return UNNAMED_LABEL


def render_idle_notice(kind: object, label: object, finished_at: object = None, detail: object = None,
                       utc_offset_min: object = None) -> str:
    """``renderCrossSessionIdleNotice``: the model-facing line of one notice (IDLE-TEXT-1..4).

    ``label`` and ``detail`` are used as given (IDLE-TEXT-8). Faults in argument order:
    ``kind``, ``label`` (a non-empty string), ``finished_at``, ``detail``, ``utc_offset_min``.
    """
    if not is_peer_idle_notice_kind(kind):
        raise InvalidArgument(f"not an idle notice kind: {kind!r}")
    assert isinstance(kind, str)
    if not isinstance(label, str) or not label:
        raise InvalidArgument(f"label must be a non-empty string, got {label!r}")
    finished_at = _check_epoch(finished_at, "finished_at")
    if detail is not None and not isinstance(detail, str):
        raise InvalidArgument(f"detail must be a string or null, got {detail!r}")
    clock = format_peer_notice_clock(finished_at, _check_offset(utc_offset_min))
    if kind == "idle":
        body = f'Session "{label}" went idle at {clock}.'
        if detail is not None:
            body += f" Its last turn ended with: «{detail}»."
    elif kind == "exited":
        body = f'Session "{label}" exited at {clock}; it will not go idle again.'
    elif kind == "unavailable":
        body = f'Session "{label}" is not holding your idle subscription: {PEER_IDLE_UNAVAILABLE_CAUSES}.'
    else:
        body = f'Your idle subscription to session "{label}" expired with no answer from it.'
    return f"{NOTICE_TAG} {body} {NOTICE_TAIL}"


def describe_peer_idle_subscription(address: object, detail_shared: object = None,
                                    fold_lookalikes: bool = False) -> str:
    """``describePeerIdleSubscription``: the host-facing line when a peer subscribes (IDLE-TEXT-7).

    Faults in argument order: ``address`` (a string), then ``detail_shared`` (a boolean; None
    is absent, which is false).
    """
    if not isinstance(address, str):
        raise InvalidArgument(f"address must be a string, got {address!r}")
    if detail_shared is None:
        detail_shared = False
    if type(detail_shared) is not bool:
        raise InvalidArgument(f"detail_shared must be true, false or null, got {detail_shared!r}")
    who = label_or_unnamed(address, fold_lookalikes=fold_lookalikes)
    if detail_shared:
        shared = "it is told the time and a one-line detail of the last turn"
    else:
        shared = "it is told the time only; no detail of the last turn is shared"
    return (f'Session "{who}" subscribed to this session\'s idle notices: when this session next'
            f" goes idle or exits, {shared}.")

"""Idle subscriptions as an explicit state chart (spec/idle-subscriptions.md).

Control states are the target half's phases; both tables, the clock, the
armed fire, the last turn's finish time and detail, and the held count are the
chart's data. Time is the chart's own event: ``advance(ms)`` moves the clock
by ``ms`` and fires what falls due (IDLE-TIME-2); a conformance step
``advance`` with ``now_ms`` is the chart's ``advance(now_ms - clock)``. Every
guard is named after the requirement it encodes, and the transitions of one
event are listed in the order the spec applies its rules: python-statemachine
takes the first enabled transition in document order.

The notice texts and the label sanitiser are written here again from the
spec's words (IDLE-LABEL-*, IDLE-TEXT-*), one code point at a time, so that
the lockstep tests compare two independent descriptions. The code-point
table is the generated one the spec pins (IDLE-LABEL-1), in the model's own
copy: this module imports nothing from ``inboxspec.impl``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

from statemachine import State

from .chart import ModelChart, stay
from .idle_label_table import BLANK_RANGES, FOLDED_PHRASES, LETTER_FOLDS, LOOKALIKE_RANGES, SPACE_RANGES

# IDLE-DEF-1, written here again rather than imported.
DEFAULTS: dict[str, Any] = {
    "start_ms": 0, "ttl_ms": 43_200_000, "outstanding_cap": 32, "priors_kept": 3,
    "subscriber_cap": 32, "debounce_ms": 750, "held_backoff_ms": 30_000,
    "reader_utc_offset_min": 0, "last_turn_text_seat": False,
}
LABEL_MAX = 100
PHRASE = "peer idle notice"
CAUSES = ("it is shutting down, its subscription table is full, a newer subscription displaced this one,"
          " or it answered in a form this version does not recognize")
TAIL = "This is an automated harness notice, not a message from a person and not an instruction."


# -- the spec's helpers, from its words ---------------------------------------------------


def in_space_class(char: str) -> bool:
    point = ord(char)
    return any(low <= point <= high for low, high in SPACE_RANGES)


def in_lookalike_class(char: str) -> bool:
    """IDLE-OPT-5: a bracket or quotation lookalike."""
    point = ord(char)
    return any(low <= point <= high for low, high in LOOKALIKE_RANGES)


FOLDS: dict[int, str] = dict(LETTER_FOLDS)


def folded(char: str) -> str:
    """IDLE-OPT-5: the letter a code point compares as: its fold, an ASCII capital's small letter."""
    if "A" <= char <= "Z":
        return chr(ord(char) + 32)
    return FOLDS.get(ord(char), char)


@functools.lru_cache(maxsize=4096)
def label(raw: str, fold_lookalikes: bool = False) -> str | None:
    """IDLE-LABEL-1..6, as the spec's one left-to-right pass describes it.

    Memoised: it is pure, and the explorer asks for the same few labels a million times.
    """
    points: list[str] = []
    for char in raw:
        if points and "\ud800" <= points[-1] <= "\udbff" and "\udc00" <= char <= "\udfff":
            # A high and a low surrogate in a row are the one code point they encode.
            char = chr(0x10000 + ((ord(points.pop()) - 0xD800) << 10) + (ord(char) - 0xDC00))
        points.append(char)
    pieces: list[str] = []
    for char in points:
        blank = in_space_class(char) or (fold_lookalikes and in_lookalike_class(char))
        mapped = " " if blank else char
        if mapped == " " and (not pieces or pieces[-1] == " "):
            continue
        pieces.append(mapped)
        if fold_lookalikes:  # IDLE-OPT-5: both phrases, every code point compared as its fold
            ends = [p for p in FOLDED_PHRASES if "".join(folded(c) for c in pieces[-len(p):]) == p]
        else:
            tail = "".join(pieces[-len(PHRASE):])
            ascii_lowered = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in tail)
            ends = [PHRASE] if ascii_lowered == PHRASE else []
        if ends:
            del pieces[-len(ends[0]):]
            if pieces and pieces[-1] != " ":
                pieces.append(" ")
    text = "".join(pieces).rstrip(" ")[:LABEL_MAX].rstrip(" ")
    # IDLE-LABEL-6: nothing printable is left when every code point is a space or prints nothing.
    printable = [c for c in text if c != " " and not any(low <= ord(c) <= high for low, high in BLANK_RANGES)]
    return text if printable else None


def clock(epoch_ms: int | None, offset_min: int) -> str:
    """IDLE-CLOCK-1/2."""
    if epoch_ms is None:
        return "--:--"
    minute = (epoch_ms // 60_000 + offset_min) % 1440
    return f"{minute // 60:02d}:{minute % 60:02d}"


def notice_text(kind: str, who: str, finished_at: int | None, detail: str | None, offset_min: int) -> str:
    """IDLE-TEXT-1..4."""
    at = clock(finished_at, offset_min)
    bodies = {
        "idle": f'Session "{who}" went idle at {at}.'
                + (f" Its last turn ended with: «{detail}»." if detail is not None else ""),
        "exited": f'Session "{who}" exited at {at}; it will not go idle again.',
        "unavailable": f'Session "{who}" is not holding your idle subscription: {CAUSES}.',
        "expired": f'Your idle subscription to session "{who}" expired with no answer from it.',
    }
    return f"[peer idle notice] {bodies[kind]} {TAIL}"


def label_or_unnamed(*candidates: str | None, fold_lookalikes: bool = False) -> str:
    """IDLE-TEXT-6."""
    for candidate in candidates:
        if candidate is not None and (found := label(candidate, fold_lookalikes)) is not None:
            return found
    return "(unnamed session)"


def describe(address: str, shared: bool, fold_lookalikes: bool = False) -> str:
    """IDLE-TEXT-7."""
    told = ("it is told the time and a one-line detail of the last turn" if shared
            else "it is told the time only; no detail of the last turn is shared")
    who = label_or_unnamed(address, fold_lookalikes=fold_lookalikes)
    return (f'Session "{who}" subscribed to this session\'s idle notices: '
            f"when this session next goes idle or exits, {told}.")


def recognised(answer: Any) -> tuple[str, int | None, str | None]:
    """IDLE-REQ-6."""
    if isinstance(answer, dict) and set(answer) <= {"kind", "finished_at", "detail"}:
        kind, at, detail = answer.get("kind"), answer.get("finished_at"), answer.get("detail")
        natural = at is None or (type(at) is int and 0 <= at <= 2**53 - 1)
        text_ok = detail is None or isinstance(detail, str)
        if kind in ("idle", "exited", "unavailable") and natural and text_ok:
            return kind, at, detail
    return "unavailable", None, None


# The kinds a notice has: the three answers (IDLE-REQ-6) and a requester's own expiry
# (IDLE-REQ-4); written here again rather than imported from the implementation.
NOTICE_KINDS = ("idle", "exited", "unavailable", "expired")


def is_notice_kind(value: Any) -> bool:
    """The ``is_notice_kind`` helper: one of the four notice kinds, spelled exactly."""
    return isinstance(value, str) and value in NOTICE_KINDS


# -- the chart ------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdleModelOptions:
    notify_pushed_out: bool = False  # IDLE-F1
    fire_when_already_idle: bool = False  # IDLE-F2
    fire_on_release: bool = False  # IDLE-F3
    answers_from_target_only: bool = False  # IDLE-F4
    fold_lookalikes: bool = False  # IDLE-F5: texts only; the explorer's labels hold no lookalike


# Table rows as the model keeps them: named tuples, so that a snapshot can hold them as they are.
class Outstanding(NamedTuple):
    """A row of the requester half's outstanding table."""

    subscription: int
    target: str
    label: str  # the target as notices name it (IDLE-OPT-1)
    sent_at: int  # the clock when it was sent, in ms


class Subscriber(NamedTuple):
    """A row of the target half's subscriber table."""

    requester: str
    subscription: int
    added_at: int  # the clock when it was accepted, in ms
    parity: bool


class IdleSubscriptionsChart(ModelChart["IdleSubscriptionsChart"]):
    idle = State(initial=True)
    busy = State()
    settling = State()
    backing_off = State()
    exited = State()
    shut_down = State()

    _open = (idle, busy, settling, backing_off)
    _closed = (exited, shut_down)
    _all = (*_open, *_closed)
    _armed = (settling, backing_off)

    subscribe = (
        stay(_all, cond="subscription_is_outstanding", on="reject_duplicate")
        | stay(_all, cond="outstanding_table_is_full", on="book_cap")
        | stay(_all, on="book_sent")
    )
    receive_notice = (
        stay(_all, cond="answer_is_not_the_targets", on="book_ignored")
        | stay(_all, cond="subscription_is_outstanding", on="book_resolution")
        | stay(_all, on="book_ignored")
    )
    add_subscriber = (
        exited.to.itself(internal=True, on="answer_exited_at_once")
        | shut_down.to.itself(internal=True, on="answer_unavailable_at_once")
        | stay(_open, cond="subscription_is_retransmitted", on="book_retransmission")
        | stay(_open, cond="requester_is_subscribed", on="book_displacement")
        | stay(_open, cond="subscriber_table_is_full", on="book_table_full")
        | idle.to(settling, cond="arrival_arms_the_fire", on="book_subscriber_arming")
        | stay(_open, on="book_subscriber")
    )
    turn_started = (
        busy.from_(idle, settling, backing_off, on="book_turn_started")
        | busy.to.itself(internal=True, on="reject_turn_in_progress")
        | stay(_closed, on="reject_closed")
    )
    turn_finished = (
        busy.to(settling, on="book_turn_finished")
        | stay((idle, settling, backing_off), on="reject_no_turn")
        | stay(_closed, on="reject_closed")
    )
    set_held = (
        backing_off.to(settling, cond="release_rearms_the_fire", on="book_release")
        | stay(_all, on="book_held")
    )
    exit = exited.from_(*_open, on="book_exit") | stay(_closed, on="reject_closed")
    shutdown = shut_down.from_(*_open, on="book_shutdown") | stay(_closed, on="reject_closed")
    advance = (
        idle.from_(*_armed, cond="fire_is_due_with_nothing_held", on="book_fire")
        | backing_off.from_(*_armed, cond="fire_is_due_while_held", on="book_back_off")
        | stay(_all, on="book_time")
    )

    del _open, _closed, _all, _armed

    def __init__(self, config: dict[str, Any] | None = None, options: IdleModelOptions | None = None) -> None:
        merged = {**DEFAULTS, **(config or {})}
        self.ttl_ms: int = merged["ttl_ms"]
        self.outstanding_cap: int = merged["outstanding_cap"]
        self.priors_kept: int = merged["priors_kept"]
        self.subscriber_cap: int = merged["subscriber_cap"]
        self.debounce_ms: int = merged["debounce_ms"]
        self.held_backoff_ms: int = merged["held_backoff_ms"]
        self.offset_min: int = merged["reader_utc_offset_min"]
        self.seat: bool = merged["last_turn_text_seat"]
        self.options = options or IdleModelOptions()
        self.now_ms: int = merged["start_ms"]
        self.outstanding: tuple[Outstanding, ...] = ()
        self.subscribers: tuple[Subscriber, ...] = ()
        self.fire_at: int | None = None
        self.finished_at: int | None = None
        self.detail: str | None = None
        self.held = 0
        self.closed_at: int | None = None
        # The phase mirrors the control state as data, so that outputs can show it
        # (the explorer fires actions on bare data that knows no state).
        self.phase = "idle"
        self.output: dict[str, Any] = {}
        super().__init__()

    # -- guards, named for their requirements --------------------------------------------

    def subscription_is_outstanding(self, subscription: int) -> bool:
        """IDLE-ERR-6 (subscribe) and IDLE-REQ-5/7 (receive_notice)."""
        return any(row.subscription == subscription for row in self.outstanding)

    def answer_is_not_the_targets(self, subscription: int, sender: str | None) -> bool:
        """IDLE-OPT-4 (finding IDLE-F4); IDLE-REQ-8 otherwise."""
        return self.options.answers_from_target_only and any(
            row.subscription == subscription and row.target != sender for row in self.outstanding)

    def outstanding_table_is_full(self) -> bool:
        """IDLE-REQ-1."""
        return len(self.outstanding) >= self.outstanding_cap

    def subscription_is_retransmitted(self, requester: str, subscription: int) -> bool:
        """IDLE-TGT-5."""
        return any(row.requester == requester and row.subscription == subscription
                   for row in self.subscribers)

    def requester_is_subscribed(self, requester: str) -> bool:
        """IDLE-TGT-2."""
        return any(row.requester == requester for row in self.subscribers)

    def subscriber_table_is_full(self) -> bool:
        """IDLE-TGT-1."""
        return len(self.subscribers) >= self.subscriber_cap

    def arrival_arms_the_fire(self) -> bool:
        """IDLE-OPT-2 (finding IDLE-F2); IDLE-FIRE-4 otherwise."""
        return self.options.fire_when_already_idle

    def release_rearms_the_fire(self, count: int) -> bool:
        """IDLE-OPT-3 (finding IDLE-F3); IDLE-HELD-3 otherwise."""
        return self.options.fire_on_release and count == 0

    def _fire_is_due(self, ms: int) -> bool:
        return self.fire_at is not None and self.fire_at <= self.now_ms + ms

    def fire_is_due_with_nothing_held(self, ms: int) -> bool:
        """IDLE-FIRE-3, IDLE-HELD-2."""
        return self._fire_is_due(ms) and self.held == 0

    def fire_is_due_while_held(self, ms: int) -> bool:
        """IDLE-HELD-2."""
        return self._fire_is_due(ms) and self.held > 0

    # -- actions: every one sets ``output`` (IDLE-OUT-1..3) -------------------------------

    def _emit(self, notices: list[dict[str, Any]] | None = None, sent: list[dict[str, Any]] | None = None,
              swept: list[dict[str, Any]] | None = None, **fields: Any) -> None:
        self.output = {**fields, "notices": notices or [], "sent": sent or [], "swept": swept or [],
                       **self._counts()}

    def _counts(self) -> dict[str, Any]:
        return {"phase": self.phase, "outstanding": len(self.outstanding),
                "subscribers": len(self.subscribers)}

    def _error(self, code: str) -> None:
        self.output = {"error": code, **self._counts()}

    def _notice(self, row: Outstanding, kind: str, at: int | None, detail: str | None) -> dict[str, Any]:
        """IDLE-TEXT-*, IDLE-DETAIL-2: only idle shows a detail, re-sanitised; only idle and exited a time."""
        shown = label(detail, self.options.fold_lookalikes) if kind == "idle" and detail is not None else None
        when = at if kind in ("idle", "exited") else None
        return {"subscription": row.subscription, "kind": kind,
                "text": notice_text(kind, row.label, when, shown, self.offset_min)}

    @staticmethod
    def _answer(to: str, subscription: int, kind: str, at: int | None = None,
                detail: str | None = None) -> dict[str, Any]:
        return {"to": to, "subscription": subscription, "kind": kind, "finished_at": at, "detail": detail}

    def reject_duplicate(self) -> None:
        """IDLE-ERR-6."""
        self._error("duplicate_subscription")

    def book_cap(self) -> None:
        """IDLE-REQ-1."""
        self._emit(verdict="cap", pushed_out=None)

    def book_sent(self, peer: str, subscription: int, label: str | None = None) -> None:
        """IDLE-REQ-2, IDLE-REQ-3 (a prior pushed out), IDLE-OPT-1.

        ``peer`` is the spec's ``target`` argument: python-statemachine reserves
        the name ``target`` for the transition's target state.
        """
        priors = [row for row in self.outstanding if row.target == peer]
        notices = []
        pushed_out = None
        if len(priors) > self.priors_kept:
            oldest = priors[0]
            self.outstanding = tuple(row for row in self.outstanding if row is not oldest)
            pushed_out = oldest.subscription
            if self.options.notify_pushed_out:
                notices.append(self._notice(oldest, "unavailable", None, None))
        shown = label_or_unnamed(label, peer, fold_lookalikes=self.options.fold_lookalikes)
        self.outstanding += (Outstanding(subscription, peer, shown, self.now_ms),)
        self._emit(notices, verdict="sent", pushed_out=pushed_out)

    def book_resolution(self, subscription: int, notice: Any = None) -> None:
        """IDLE-REQ-5, IDLE-REQ-6."""
        row = next(r for r in self.outstanding if r.subscription == subscription)
        self.outstanding = tuple(r for r in self.outstanding if r is not row)
        kind, at, detail = recognised(notice)
        self._emit([self._notice(row, kind, at, detail)], resolved=True)

    def book_ignored(self) -> None:
        """IDLE-REQ-7."""
        self._emit(resolved=False)

    def answer_exited_at_once(self, requester: str, subscription: int) -> None:
        """IDLE-END-3."""
        self._emit(sent=[self._answer(requester, subscription, "exited", self.closed_at)],
                   accepted=False, displaced=None, announcement=None)

    def answer_unavailable_at_once(self, requester: str, subscription: int) -> None:
        """IDLE-END-3."""
        self._emit(sent=[self._answer(requester, subscription, "unavailable")],
                   accepted=False, displaced=None, announcement=None)

    def _accept(self, requester: str, subscription: int, parity: bool | None,
                sent: list[dict[str, Any]], displaced: int | None) -> None:
        """IDLE-TGT-4, IDLE-DETAIL-1."""
        self.subscribers += (Subscriber(requester, subscription, self.now_ms, bool(parity)),)
        self._emit(sent=sent, accepted=True, displaced=displaced,
                   announcement=describe(requester, self.seat and bool(parity), self.options.fold_lookalikes))

    def book_retransmission(self) -> None:
        """IDLE-TGT-5: the same subscription again changes nothing."""
        self._emit(accepted=True, displaced=None, announcement=None)

    def book_displacement(self, requester: str, subscription: int, parity: bool | None = None) -> None:
        """IDLE-TGT-2."""
        older = next(r for r in self.subscribers if r.requester == requester)
        self.subscribers = tuple(r for r in self.subscribers if r is not older)
        self._accept(requester, subscription, parity,
                     [self._answer(requester, older.subscription, "unavailable")], older.subscription)

    def book_table_full(self, requester: str, subscription: int) -> None:
        """IDLE-TGT-1."""
        self._emit(sent=[self._answer(requester, subscription, "unavailable")],
                   accepted=False, displaced=None, announcement=None)

    def book_subscriber(self, requester: str, subscription: int, parity: bool | None = None) -> None:
        """IDLE-TGT-4, IDLE-FIRE-4, IDLE-FIRE-5."""
        self._accept(requester, subscription, parity, [], None)

    def book_subscriber_arming(self, requester: str, subscription: int, parity: bool | None = None) -> None:
        """IDLE-OPT-2: a subscription to an idle target arms the fire."""
        self.phase, self.fire_at = "settling", self.now_ms + self.debounce_ms
        self._accept(requester, subscription, parity, [], None)

    def reject_turn_in_progress(self) -> None:
        """IDLE-ERR-5."""
        self._error("turn_in_progress")

    def reject_no_turn(self) -> None:
        """IDLE-ERR-5."""
        self._error("no_turn")

    def reject_closed(self) -> None:
        """IDLE-ERR-4."""
        self._error("target_closed")

    def book_turn_started(self) -> None:
        """IDLE-FIRE-2."""
        self.phase, self.fire_at = "busy", None
        self._emit()

    def book_turn_finished(self, last_turn_text: str | None = None) -> None:
        """IDLE-FIRE-1, IDLE-DETAIL-2."""
        self.phase = "settling"
        self.finished_at = self.now_ms
        self.fire_at = self.now_ms + self.debounce_ms
        fold = self.options.fold_lookalikes  # IDLE-OPT-5
        self.detail = label(last_turn_text, fold) if last_turn_text is not None else None
        self._emit()

    def book_release(self, count: int) -> None:
        """IDLE-OPT-3."""
        self.held = count
        self.phase, self.fire_at = "settling", self.now_ms + self.debounce_ms
        self._emit()

    def book_held(self, count: int) -> None:
        """IDLE-HELD-1, IDLE-HELD-3."""
        self.held = count
        self._emit()

    def _close(self, phase: str, kind: str) -> None:
        at = self.now_ms if kind == "exited" else None
        sent = [self._answer(r.requester, r.subscription, kind, at) for r in self.subscribers]
        self.subscribers = ()
        self.phase, self.fire_at = phase, None
        self.closed_at = self.now_ms
        self._emit(sent=sent)

    def book_exit(self) -> None:
        """IDLE-END-1, IDLE-END-4."""
        self._close("exited", "exited")

    def book_shutdown(self) -> None:
        """IDLE-END-2, IDLE-END-4."""
        self._close("shut_down", "unavailable")

    def _expire_and_sweep(self, until: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """IDLE-REQ-4 up to now, IDLE-TGT-3 up to ``until`` (IDLE-TIME-2)."""
        due = [r for r in self.outstanding if r.sent_at + self.ttl_ms <= self.now_ms]
        self.outstanding = tuple(r for r in self.outstanding if r.sent_at + self.ttl_ms > self.now_ms)
        gone = [r for r in self.subscribers if r.added_at + self.ttl_ms <= until]
        self.subscribers = tuple(r for r in self.subscribers if r.added_at + self.ttl_ms > until)
        return ([self._notice(r, "expired", None, None) for r in due],
                [{"requester": r.requester, "subscription": r.subscription} for r in gone])

    def book_fire(self, ms: int) -> None:
        """IDLE-TIME-2, IDLE-FIRE-3, IDLE-DETAIL-1."""
        self.now_ms += ms
        assert self.fire_at is not None
        notices, swept = self._expire_and_sweep(self.fire_at)
        sent = [self._answer(r.requester, r.subscription, "idle", self.finished_at,
                             self.detail if self.seat and r.parity else None) for r in self.subscribers]
        self.subscribers = ()
        self.phase, self.fire_at = "idle", None
        self._emit(notices, sent, swept)

    def book_back_off(self, ms: int) -> None:
        """IDLE-HELD-2: re-checks every back-off after the due time, until one lies after now."""
        self.now_ms += ms
        assert self.fire_at is not None
        # The first re-check after now, of those every back-off after the due time.
        self.fire_at += ((self.now_ms - self.fire_at) // self.held_backoff_ms + 1) * self.held_backoff_ms
        self.phase = "backing_off"
        notices, swept = self._expire_and_sweep(self.now_ms)
        self._emit(notices, [], swept)

    def book_time(self, ms: int) -> None:
        """IDLE-TIME-1: the clock moves; only expiries and sweeps fall due."""
        self.now_ms += ms
        notices, swept = self._expire_and_sweep(self.now_ms)
        self._emit(notices, [], swept)

"""The wake gate: does an idle host wake for a pending batch of inbox mail?

Specified by ``spec/wake-gate.md`` (seed ``000_82681ec6c92fd68c.txt``); the
requirement IDs in comments point there.

Theory of operation
-------------------
A host that is idle and has mail pending asks :meth:`WakePolicy.decide`. The
batch is classified into exactly one lane, first match wins:

1. ``userInput``: some message has kind ``user``. It always wakes and never
   counts against the cap, because the user's message is what resets the
   streak; gating it would deadlock. The policy does not reset the streak
   itself: the host calls :meth:`WakePolicy.reset_streak` on delivery.
2. ``scheduledSelf``: some message is scheduled self-mail. It wakes exempt
   from the cap unless it is *rapid* (closer than the cadence floor to the
   previous self-wake), in which case it is booked exactly like chatter.
3. ``chatter``: everything else, including a plugin-only (empty) batch.

Counted wakes raise the streak by one until it reaches ``max_streak``; from
then on they are refused and the streak stays put, so the next tick retries
under the same rules. A refusal episode is announced once: the announcement is
re-armed by a reset or by an allowed counted wake.

The core is sans-IO and pure: :func:`decide` and :func:`announce` take a frozen
:class:`GateState` and return a new one. :class:`WakePolicy` is the small
stateful wrapper hosts use. Time is data (``now_ms``); nothing here reads a
clock. Bad input raises a :class:`WakeGateError` before any state changes.

Validation lives in the public entry points (:class:`WakePolicy`,
:class:`GateOptions`, :class:`Message`, :func:`parse_message`,
:func:`parse_batch`, :func:`check_arguments`): they take any Python value and raise only the typed
errors below. The pure core functions trust their (already validated)
arguments. When one call has several faults, the first in the spec's fault
order (WAKE-IF-5) is reported: the batch's shape, then each message in order,
then ``now_ms``, then ``plugin_pending``, then the empty-batch rejection.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import ClassVar

from .errors import InboxSpecError
from .options import FindingOptions
from .values import MAX_SAFE_INTEGER, check_argument_names, describe, is_safe_natural

DEFAULT_MAX_STREAK = 10  # WAKE-DEF-1
DEFAULT_CADENCE_FLOOR_MS = 30_000  # WAKE-DEF-1
SCHEDULED_PREFIX = "[scheduled] "  # WAKE-SELF-1: eleven characters and one space
USER_KIND = "user"
CONFIG_KEYS = frozenset({"max_streak", "floor_ms", "options"})  # WAKE-IF-1


class WakeGateError(InboxSpecError):
    code: ClassVar[str] = "invalid_argument"


class InvalidArgument(WakeGateError):
    """An argument the event does not define (WAKE-IF-3): a misspelt
    ``pluginPending`` must not silently take the default."""

    code = "invalid_argument"


def check_arguments(event: str, args: object, names: Collection[str]) -> Mapping[str, object]:
    """WAKE-IF-3, a step's first fault: ``args`` may name only the event's arguments (``names``,
    spec/wake-gate.interface.json), else ``invalid_argument``. Returns ``args``. (An ``args`` that
    is not an object is a malformed request, which the driver answers before calling this;
    given one anyway, this raises ``invalid_argument`` too.)"""
    return check_argument_names(event, args, names, InvalidArgument)


class InvalidConfig(WakeGateError):
    code = "invalid_config"


class InvalidTime(WakeGateError):
    code = "invalid_time"


class InvalidMessage(WakeGateError):
    code = "invalid_message"


class InvalidBatch(WakeGateError):
    code = "invalid_batch"


class InvalidStreak(WakeGateError):
    code = "invalid_streak"


class InvalidFloor(WakeGateError):
    code = "invalid_floor"


class EmptyBatchRejected(WakeGateError):
    """Only with the ``reject_empty_batch`` option (finding WAKE-F4)."""

    code = "empty_batch"


class Lane(StrEnum):
    USER_INPUT = "userInput"
    SCHEDULED_SELF = "scheduledSelf"
    CHATTER = "chatter"


class RefusalCode(StrEnum):
    CHATTER_CAP = "chatter_cap"
    SELF_SPIN_CAP = "self_spin_cap"


@dataclass(frozen=True)
class Message:
    """One pending message (WAKE-MSG-1). Only these four fields matter to the gate."""

    kind: str
    sender: str
    recipient: str
    text: str

    def __post_init__(self) -> None:
        for name in ("kind", "sender", "recipient"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InvalidMessage(f"message {name} must be a non-empty string, got {describe(value)}")
        if not isinstance(self.text, str):
            raise InvalidMessage(f"message text must be a string, got {type(self.text).__name__}")


@dataclass(frozen=True)
class GateOptions(FindingOptions):
    """Behaviour changes recommended by the findings. Every default is the seed's.

    Their JSON form is an object of booleans (WAKE-IF-1); WAKE-ERR-1: "no" or
    "false" must not switch an option on by being truthy."""

    MACHINE = "wake-gate"
    INVALID_CONFIG = InvalidConfig

    announce_requires_refusal: bool = False  # WAKE-F1
    cadence_from_allowed_wakes: bool = False  # WAKE-F2
    clamp_backwards_clock: bool = False  # WAKE-F3
    reject_empty_batch: bool = False  # WAKE-F4



@dataclass(frozen=True)
class GateRules:
    max_streak: int
    floor_ms: int
    options: GateOptions


@dataclass(frozen=True)
class GateState:
    """Everything the gate remembers between decisions."""

    streak: int = 0
    last_self_wake_ms: int | None = None
    # Whether an announcement was made since the last re-arm (WAKE-ANN-1).
    announced: bool = False
    # Whether a refusal happened since the last re-arm; read only under WAKE-F1's option.
    refused_since_rearm: bool = False


@dataclass(frozen=True)
class BatchSummary:
    """What classification needs to know about a batch (WAKE-LANE-1..6)."""

    has_user_message: bool
    has_scheduled_self_mail: bool
    is_empty: bool
    plugin_pending: bool


@dataclass(frozen=True)
class WakeDecision:
    lane: Lane
    wake: bool
    counts_against_cap: bool
    refusal_code: RefusalCode | None = None
    refusal_reason: str | None = None


def is_scheduled_self_mail(message: Message) -> bool:
    """WAKE-SELF-1: addressed from its own recipient mailbox, with the exact prefix.

    post: __return__ == (message.sender == message.recipient and message.text[:12] == "[scheduled] ")
    """
    return message.sender == message.recipient and message.text.startswith(SCHEDULED_PREFIX)


def summarize(batch: Iterable[Message], plugin_pending: bool) -> BatchSummary:
    messages = list(batch)
    return BatchSummary(
        has_user_message=any(m.kind == USER_KIND for m in messages),
        has_scheduled_self_mail=any(is_scheduled_self_mail(m) for m in messages),
        is_empty=not messages,
        plugin_pending=plugin_pending,
    )


def classify(summary: BatchSummary) -> Lane:
    """First match wins (WAKE-LANE-1..3); plugin-only and empty batches are chatter."""
    if summary.has_user_message:
        return Lane.USER_INPUT
    if summary.has_scheduled_self_mail:
        return Lane.SCHEDULED_SELF
    return Lane.CHATTER


def chatter_refusal_reason(streak: int, max_streak: int) -> str:
    """WAKE-OUT-2."""
    return (
        f"inbox wake refused: {streak} consecutive inbox wakes without user input"
        f" (cap {max_streak}); the mail stays queued until the next user input"
    )


def self_spin_refusal_reason(floor_ms: int, max_streak: int) -> str:
    """WAKE-OUT-2: the floor is quoted in whole seconds, truncated."""
    return (
        f"inbox wake refused: busy-spin guard: scheduled self-mail arrives faster than"
        f" the {floor_ms // 1000}s cadence floor and the wake cap of {max_streak} is"
        f" reached; the mail stays queued until the next user input"
    )


def is_rapid(last_self_wake_ms: int | None, now_ms: int, rules: GateRules) -> bool:
    """WAKE-CAD-1/2: closer than the floor to the previous self-wake.

    A clock that moved backwards gives a negative elapsed time, which is below
    every floor, including zero (finding WAKE-F3 clamps it to zero instead).
    """
    if last_self_wake_ms is None:
        return False
    elapsed = now_ms - last_self_wake_ms
    if rules.options.clamp_backwards_clock:
        elapsed = max(0, elapsed)
    return elapsed < rules.floor_ms


def decide(
    state: GateState, summary: BatchSummary, now_ms: int, rules: GateRules
) -> tuple[WakeDecision, GateState]:
    """Decide, and book, the wake for one pending batch.

    The contracts below are checked symbolically by CrossHair (tests/test_crosshair.py).

    pre: 0 <= state.streak
    pre: 0 <= rules.max_streak
    pre: 0 <= rules.floor_ms
    pre: not (rules.options.reject_empty_batch and summary.is_empty and not summary.plugin_pending)
    post[]:
        # a batch holding a user-kind message always wakes
        (not summary.has_user_message) or __return__[0].wake
        # a refused decision leaves the streak unchanged
        __return__[0].wake or __return__[1].streak == state.streak
        # an allowed counted wake raises the streak by exactly one
        not (__return__[0].wake and __return__[0].counts_against_cap) or __return__[1].streak == state.streak + 1
        # an exempt wake leaves the streak unchanged
        not (__return__[0].wake and not __return__[0].counts_against_cap) or __return__[1].streak == state.streak
        # decisions never push the streak past the cap
        __return__[1].streak <= max(state.streak, rules.max_streak)
        # only an allowed counted wake re-arms a spent announcement
        (not state.announced) or __return__[1].announced or (__return__[0].wake and __return__[0].counts_against_cap)
    """  # noqa: E501
    lane = classify(summary)
    if lane is Lane.USER_INPUT:
        # WAKE-LANE-1: the host, not the policy, resets on delivery.
        return WakeDecision(lane, wake=True, counts_against_cap=False), state

    rapid = lane is Lane.SCHEDULED_SELF and is_rapid(state.last_self_wake_ms, now_ms, rules)
    # WAKE-CAD-3: upstream records the self-wake time on every scheduled-self
    # decision; WAKE-F2's option records it only for wakes that are allowed.
    records_time = lane is Lane.SCHEDULED_SELF and not rules.options.cadence_from_allowed_wakes
    after = replace(state, last_self_wake_ms=now_ms) if records_time else state
    allowed_time = now_ms if lane is Lane.SCHEDULED_SELF else state.last_self_wake_ms

    if lane is Lane.SCHEDULED_SELF and not rapid:
        # WAKE-CAD-4: a deliberate cadence is exempt; streak and announcement untouched.
        exempt = WakeDecision(lane, wake=True, counts_against_cap=False)
        return exempt, replace(after, last_self_wake_ms=allowed_time)

    if state.streak >= rules.max_streak:
        # WAKE-CAP-1 / WAKE-CAD-5: refused; the streak stays, so the next tick retries.
        if lane is Lane.SCHEDULED_SELF:
            code = RefusalCode.SELF_SPIN_CAP
            reason = self_spin_refusal_reason(rules.floor_ms, rules.max_streak)
        else:
            code = RefusalCode.CHATTER_CAP
            reason = chatter_refusal_reason(state.streak, rules.max_streak)
        refused = WakeDecision(lane, wake=False, counts_against_cap=True, refusal_code=code,
                               refusal_reason=reason)
        return refused, replace(after, refused_since_rearm=True)

    # WAKE-CAP-2 / WAKE-CAD-6: an allowed counted wake closes any episode and re-arms.
    counted = WakeDecision(lane, wake=True, counts_against_cap=True)
    return counted, GateState(
        streak=state.streak + 1,
        last_self_wake_ms=allowed_time,
        announced=False,
        refused_since_rearm=False,
    )


def announce(state: GateState, rules: GateRules) -> tuple[bool, GateState]:
    """WAKE-ANN-1: may this call announce the current refusal episode?

    post[]:
        # a spent announcement is never granted again before a re-arm
        (not state.announced) or not __return__[0]
        # a granted announcement is spent
        (not __return__[0]) or __return__[1].announced
        __return__[1].streak == state.streak
    """
    if state.announced:
        return False, state
    if rules.options.announce_requires_refusal and not state.refused_since_rearm:
        return False, state  # WAKE-F1: nothing to announce yet, keep the announcement armed
    return True, replace(state, announced=True)


def reset(state: GateState) -> GateState:
    """WAKE-RESET-1: user input ends the streak and the refusal episode together."""
    return GateState(streak=0, last_self_wake_ms=state.last_self_wake_ms)


MESSAGE_FIELDS = frozenset({"kind", "from", "to", "text"})


def parse_message(raw: object) -> Message:
    """A message from its JSON form ``{"kind", "from", "to", "text"}`` (WAKE-MSG-1)."""
    if isinstance(raw, Message):
        return raw
    if not isinstance(raw, Mapping):
        raise InvalidMessage(f"a message must be an object, got {type(raw).__name__}")
    if set(raw) != MESSAGE_FIELDS:
        got = sorted(describe(key) for key in raw)
        raise InvalidMessage(f"a message has exactly the fields kind, from, to, text; got {got}")
    return Message(kind=raw["kind"], sender=raw["from"], recipient=raw["to"], text=raw["text"])


def parse_batch(raw: object) -> list[Message]:
    """A batch: a list (or tuple) of messages, each a :class:`Message` or its JSON form.

    The first two places of the fault order (WAKE-IF-5): the batch's shape,
    then each message in order.
    """
    if not isinstance(raw, (list, tuple)):
        raise InvalidBatch(f"a batch must be a list of messages, got {type(raw).__name__}")
    return [parse_message(item) for item in raw]


class WakePolicy:
    """The stateful gate a host holds: one per idle inbox watcher."""

    def __init__(
        self,
        max_streak: int = DEFAULT_MAX_STREAK,
        floor_ms: int = DEFAULT_CADENCE_FLOOR_MS,
        options: GateOptions | Mapping[str, bool] | None = None,
    ) -> None:
        if not is_safe_natural(max_streak):
            raise InvalidConfig(f"max_streak must be a non-negative integer, got {describe(max_streak)}")
        if not is_safe_natural(floor_ms):
            raise InvalidConfig(f"floor_ms must be a non-negative integer, got {describe(floor_ms)}")
        if options is None:
            options = GateOptions()
        elif not isinstance(options, GateOptions):
            options = GateOptions.from_mapping(options)
        self._rules = GateRules(max_streak, floor_ms, options)
        self._state = GateState()

    @classmethod
    def from_config(cls, config: object) -> WakePolicy:
        """Build from a conformance ``config`` object (WAKE-IF-1); absent keys take the defaults."""
        if not isinstance(config, Mapping):
            raise InvalidConfig(f"a wake-gate config must be an object, got {type(config).__name__}")
        unknown = sorted(describe(key) for key in config if key not in CONFIG_KEYS)
        if unknown:
            raise InvalidConfig(f"unknown wake-gate config key(s): {', '.join(unknown)}")
        return cls(
            max_streak=config.get("max_streak", DEFAULT_MAX_STREAK),
            floor_ms=config.get("floor_ms", DEFAULT_CADENCE_FLOOR_MS),
            options=GateOptions.from_mapping(config.get("options", {})),
        )

    @property
    def max_streak(self) -> int:
        return self._rules.max_streak

    @property
    def options(self) -> GateOptions:
        return self._rules.options

    @property
    def streak(self) -> int:
        return self._state.streak

    @streak.setter
    def streak(self, value: int) -> None:
        # WAKE-HOST-1: a host may restore a persisted streak; nothing else moves.
        if not is_safe_natural(value) or value == MAX_SAFE_INTEGER:
            raise InvalidStreak(f"streak must be an integer in [0, 2**53 - 2], got {describe(value)}")
        self._state = replace(self._state, streak=value)

    @property
    def floor_ms(self) -> int:
        return self._rules.floor_ms

    @floor_ms.setter
    def floor_ms(self, value: int) -> None:
        # WAKE-HOST-2: zero is allowed and makes every forward-moving self-wake exempt.
        if not is_safe_natural(value):
            raise InvalidFloor(f"floor_ms must be a non-negative integer, got {describe(value)}")
        self._rules = replace(self._rules, floor_ms=value)

    @property
    def state(self) -> GateState:
        return self._state

    def decide(
        self,
        batch: Sequence[Message | Mapping[str, object]],
        *,
        now_ms: int,
        plugin_pending: bool = False,
    ) -> WakeDecision:
        """Decide, and book, the wake for one pending batch.

        Faults are checked in the spec's order (WAKE-IF-5) and the first one
        is raised: batch shape, each message, ``now_ms``, ``plugin_pending``,
        then the empty-batch rejection of WAKE-OPT-4.
        """
        messages = parse_batch(batch)
        if not is_safe_natural(now_ms):
            raise InvalidTime(f"now_ms must be an integer in [0, 2**53 - 1], got {describe(now_ms)}")
        if type(plugin_pending) is not bool:
            raise InvalidBatch(f"plugin_pending must be true or false, got {describe(plugin_pending)}")
        summary = summarize(messages, plugin_pending)
        if summary.is_empty and not plugin_pending and self._rules.options.reject_empty_batch:
            raise EmptyBatchRejected("nothing is pending: an empty batch without plugin work")
        decision, self._state = decide(self._state, summary, now_ms, self._rules)
        return decision

    def announce_refusal(self) -> bool:
        result, self._state = announce(self._state, self._rules)
        return result

    def reset_streak(self) -> None:
        self._state = reset(self._state)

"""Idle subscriptions: "tell me when that session next goes idle", both halves.

Specified by ``spec/idle-subscriptions.md`` (seed ``001_08883a16a8c012a7.txt``);
the requirement IDs in comments point there.

Theory of operation
-------------------
Every session runs both halves. The **requester half** keeps the table of
its outstanding subscriptions to other sessions: a subscribe (with an id the
host chose) answers the send verdict ``sent`` or ``cap`` (nothing sent); it
keeps at most ``priors_kept`` earlier outstanding subscriptions to the same
target and forgets the oldest one past that; its own timer resolves a
subscription as ``expired`` when it reaches the TTL; the first recognised
answer from the target (``idle``, ``exited``, ``unavailable``) resolves it, and
any answer for a subscription it does not hold is ignored.

The **target half** keeps the table of its subscribers, one per requester
address: a newer subscription from the same requester displaces the older
one, a subscription past the cap is answered ``unavailable``, and a
subscriber that reaches the TTL is swept without a word. When a turn
finishes, the fire is armed ``debounce_ms`` later; a turn that starts in that
window cancels it; while messages are held for review the fire is re-checked
every ``held_backoff_ms``. A fire answers every subscriber ``idle`` once and
empties the table; exit answers ``exited`` and shutdown ``unavailable``.

Time is data: :class:`IdleSubscriptions` keeps the current time and only
:meth:`IdleSubscriptions.advance` moves it, firing every due timer in a
documented order (IDLE-TIME-2). Nothing here reads a clock. Bad input raises
an :class:`IdleSubscriptionError` before any state changes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import ClassVar

from .idle_errors import (
    DuplicateSubscription,
    IdleSubscriptionError,
    InvalidArgument,
    InvalidConfig,
    InvalidTime,
    NoTurnInProgress,
    TargetClosed,
    TurnInProgress,
)
from .idle_label import (
    MAX_UTC_OFFSET_MIN,
    describe_peer_idle_subscription,
    label_or_unnamed,
    peer_idle_notice_label,
    render_idle_notice,
)
from .options import FindingOptions
from .values import check_argument_names, is_safe_natural

# The seed's constants (IDLE-DEF-1).
PEER_IDLE_SUBSCRIPTION_TTL_MS = 43_200_000
PEER_IDLE_SUBSCRIBER_TABLE_CAP = 32
PEER_IDLE_OUTSTANDING_CAP = 32
PEER_IDLE_PRIORS_KEPT = 3
PEER_IDLE_FIRE_DEBOUNCE_MS = 750
PEER_IDLE_HELD_BACKOFF_MS = 30_000

__all__ = [
    "DuplicateSubscription", "IdleSubscriptionError", "InvalidArgument", "InvalidConfig", "InvalidTime",
    "NoTurnInProgress", "TargetClosed", "TurnInProgress",
]
RECOGNISED_ANSWERS = ("idle", "exited", "unavailable")  # IDLE-REQ-6


class Phase(StrEnum):
    """The target half's control state (IDLE-FIRE-*)."""

    IDLE = "idle"  # no turn running and no fire armed
    BUSY = "busy"  # a turn is running
    SETTLING = "settling"  # a turn finished; the fire is armed at fire_at
    BACKING_OFF = "backing_off"  # the fire found held messages; re-checked at fire_at
    EXITED = "exited"
    SHUT_DOWN = "shut_down"


CLOSED = (Phase.EXITED, Phase.SHUT_DOWN)


@dataclass(frozen=True)
class IdleOptions(FindingOptions):
    """Behaviour changes recommended by the findings. Every default is the seed's."""

    MACHINE = "idle-subscriptions"
    INVALID_CONFIG = InvalidConfig

    notify_pushed_out: bool = False  # IDLE-F1
    fire_when_already_idle: bool = False  # IDLE-F2
    fire_on_release: bool = False  # IDLE-F3
    answers_from_target_only: bool = False  # IDLE-F4
    fold_lookalikes: bool = False  # IDLE-F5



@dataclass(frozen=True)
class IdleConfig:
    """IDLE-CONF-1: every key, its type and its default."""

    start_ms: int = 0
    ttl_ms: int = PEER_IDLE_SUBSCRIPTION_TTL_MS
    outstanding_cap: int = PEER_IDLE_OUTSTANDING_CAP
    priors_kept: int = PEER_IDLE_PRIORS_KEPT
    subscriber_cap: int = PEER_IDLE_SUBSCRIBER_TABLE_CAP
    debounce_ms: int = PEER_IDLE_FIRE_DEBOUNCE_MS
    held_backoff_ms: int = PEER_IDLE_HELD_BACKOFF_MS
    reader_utc_offset_min: int = 0
    last_turn_text_seat: bool = False
    options: IdleOptions = field(default_factory=IdleOptions)

    POSITIVE: ClassVar[tuple[str, ...]] = ("ttl_ms", "held_backoff_ms")

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "reader_utc_offset_min":
                if type(value) is not int or abs(value) > MAX_UTC_OFFSET_MIN:
                    raise InvalidConfig(f"reader_utc_offset_min must be an integer in [-1439, 1439], "
                                        f"got {value!r}")
            elif f.name == "last_turn_text_seat":
                if type(value) is not bool:
                    raise InvalidConfig(f"last_turn_text_seat must be true or false, got {value!r}")
            elif f.name == "options":
                if not isinstance(value, IdleOptions):
                    raise InvalidConfig("options must be IdleOptions")
            elif not is_safe_natural(value) or (f.name in self.POSITIVE and value == 0):
                least = 1 if f.name in self.POSITIVE else 0
                raise InvalidConfig(f"{f.name} must be an integer in [{least}, 2**53 - 1], got {value!r}")

    @classmethod
    def from_mapping(cls, raw: object) -> IdleConfig:
        """From a conformance ``config`` object; absent keys take the defaults (IDLE-CONF-1)."""
        if not isinstance(raw, Mapping):
            raise InvalidConfig(f"config must be an object, got {type(raw).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in raw if k not in known)
        if unknown:
            raise InvalidConfig(f"unknown idle-subscriptions config key(s): {', '.join(unknown)}")
        values = dict(raw)
        values["options"] = IdleOptions.from_mapping(values.get("options", {}))
        return cls(**values)


# -- what the machine tells its host ---------------------------------------------


@dataclass(frozen=True)
class RenderedNotice:
    """A notice the requester half hands to its model (IDLE-TEXT-*)."""

    subscription: int
    kind: str
    text: str


@dataclass(frozen=True)
class SentNotice:
    """An answer the target half sends to one subscriber (IDLE-FIRE-*, IDLE-TGT-*)."""

    to: str
    subscription: int
    kind: str
    finished_at: int | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Swept:
    requester: str
    subscription: int


@dataclass
class Effects:
    """Everything one event produced, in the order the spec lists it (IDLE-OUT-1)."""

    notices: list[RenderedNotice] = field(default_factory=list)
    sent: list[SentNotice] = field(default_factory=list)
    swept: list[Swept] = field(default_factory=list)


@dataclass(frozen=True)
class SubscribeResult:
    verdict: str  # "sent" or "cap" (IDLE-REQ-1)
    pushed_out: int | None
    effects: Effects


@dataclass(frozen=True)
class AddSubscriberResult:
    accepted: bool
    displaced: int | None
    announcement: str | None
    effects: Effects


# -- the two tables ---------------------------------------------------------------


@dataclass(frozen=True)
class Outstanding:
    subscription: int
    target: str
    label: str
    sent_at: int


@dataclass(frozen=True)
class Subscriber:
    requester: str
    subscription: int
    added_at: int
    parity: bool


def _address(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(f"{name} must be a non-empty string, got {value!r}")
    return value


def _optional_text(value: object, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a string or null, got {value!r}")
    return value


def check_arguments(event: str, args: object, names: Collection[str]) -> Mapping[str, object]:
    """IDLE-IF-2/3, a step's first two faults: ``args`` must be an object, and may name only
    the event's arguments (``names``, spec/idle-subscriptions.interface.json). Returns ``args``.

    Each argument's own check, the faults that follow, is the called method's or helper's
    (``IdleSubscriptions.subscribe``, ``idle_label.render_idle_notice``, ...): every one takes
    ``None`` for an absent argument, and either rejects it (a required argument) or takes the
    default (IDLE-IF-1).
    """
    return check_argument_names(event, args, names, InvalidArgument)


def must_push_out(priors: int, priors_kept: int) -> bool:
    """IDLE-REQ-3: whether a new subscription pushes out the oldest of ``priors`` to its target.

    The new subscription makes every outstanding one to the same target a
    prior; the oldest goes only when keeping it would exceed ``priors_kept``.

    pre: 0 <= priors_kept
    pre: 0 <= priors <= priors_kept + 1
    post[]:
        # the priors kept never exceed the bound
        priors - int(__return__) <= priors_kept
        # a prior is pushed out only when the bound needs it
        not __return__ or priors > priors_kept
    """
    return priors > priors_kept


def next_fire(fire_at: int, held: int, now_ms: int, backoff_ms: int) -> tuple[int | None, int]:
    """A due fire's fate at ``now_ms``: (the fire time, or None; the next ``fire_at``).

    IDLE-HELD-2: with nothing held the fire happens at its due time; with
    messages held it re-checks every back-off after the due time, and the next
    re-check is the first one after now. The contracts are checked by CrossHair
    (tests/test_idle_subscriptions_crosshair.py).

    pre: 0 <= fire_at <= now_ms
    pre: 0 <= held
    pre: 1 <= backoff_ms
    post[]:
        # no fire while messages are held
        __return__[0] is None or held == 0
        # a fire happens at its due time
        __return__[0] is None or __return__[0] == fire_at
        # a due fire with nothing held is never lost
        held > 0 or __return__[0] is not None
        # a held fire is re-checked after now, on the back-off grid
        held == 0 or (now_ms < __return__[1] <= now_ms + backoff_ms and (__return__[1] - fire_at) % backoff_ms == 0)
    """  # noqa: E501
    if held == 0:
        return fire_at, fire_at
    checks = (now_ms - fire_at) // backoff_ms + 1
    return None, fire_at + checks * backoff_ms


def read_answer(answer: object) -> tuple[str, int | None, str | None]:
    """IDLE-REQ-6: an answer as (kind, finished_at, detail); unrecognised forms read as unavailable."""
    if isinstance(answer, Mapping) and set(answer) <= {"kind", "finished_at", "detail"}:
        kind = answer.get("kind")
        finished_at = answer.get("finished_at")
        detail = answer.get("detail")
        if (isinstance(kind, str) and kind in RECOGNISED_ANSWERS
                and (finished_at is None or is_safe_natural(finished_at))
                and (detail is None or isinstance(detail, str))):
            return kind, finished_at, detail
    return "unavailable", None, None


class IdleSubscriptions:
    """One session's two halves and its clock: the machine a host holds."""

    def __init__(self, config: IdleConfig | None = None) -> None:
        self.config = config or IdleConfig()
        self.now_ms = self.config.start_ms
        # Requester half (insertion order is sending order).
        self.outstanding: dict[int, Outstanding] = {}
        # Per target, its outstanding ids in sending order: priors without a table scan.
        self._by_target: dict[str, list[int]] = {}
        # Target half (insertion order is arrival order).
        self.subscribers: dict[str, Subscriber] = {}
        self.phase = Phase.IDLE
        self.fire_at: int | None = None
        self.finished_at: int | None = None
        self.last_turn_detail: str | None = None
        self.held = 0
        self.closed_at: int | None = None

    @classmethod
    def from_config(cls, raw: object) -> IdleSubscriptions:
        return cls(IdleConfig.from_mapping(raw))

    # -- requester half -------------------------------------------------------------

    def subscribe(self, target: object, subscription: object, label: object = None) -> SubscribeResult:
        """IDLE-REQ-1..3: the send verdict for a new subscription to ``target``."""
        target = _address(target, "target")
        if not is_safe_natural(subscription):
            raise InvalidArgument(f"subscription must be an integer in [0, 2**53 - 1], got {subscription!r}")
        assert isinstance(subscription, int)
        label = _optional_text(label, "label")
        if subscription in self.outstanding:
            raise DuplicateSubscription(f"subscription {subscription} is already outstanding")
        effects = Effects()
        if len(self.outstanding) >= self.config.outstanding_cap:
            return SubscribeResult("cap", None, effects)  # IDLE-REQ-1: nothing is sent
        priors = self._by_target.get(target, [])
        pushed_out = None
        if must_push_out(len(priors), self.config.priors_kept):
            oldest = self._forget(priors[0])  # IDLE-REQ-3: the oldest prior is forgotten
            pushed_out = oldest.subscription
            if self.config.options.notify_pushed_out:  # IDLE-OPT-1
                effects.notices.append(self._render(oldest, "unavailable", None, None))
        self.outstanding[subscription] = Outstanding(
            subscription, target,
            label_or_unnamed(label, target, fold_lookalikes=self.config.options.fold_lookalikes), self.now_ms)
        self._by_target.setdefault(target, []).append(subscription)
        return SubscribeResult("sent", pushed_out, effects)

    def receive_notice(self, subscription: object, notice: object = None,
                       sender: object = None) -> tuple[bool, Effects]:
        """IDLE-REQ-5..8: a target's answer resolves an outstanding subscription, or is ignored.

        ``notice`` is the answer, any value (IDLE-REQ-6); ``sender`` is the session the answer
        came from (the spec's ``from``).
        """
        if not is_safe_natural(subscription):
            raise InvalidArgument(f"subscription must be an integer in [0, 2**53 - 1], got {subscription!r}")
        assert isinstance(subscription, int)
        sender = _optional_text(sender, "from")
        effects = Effects()
        if subscription not in self.outstanding:
            return False, effects  # IDLE-REQ-7: unknown, resolved or expired
        if (self.config.options.answers_from_target_only
                and sender != self.outstanding[subscription].target):
            return False, effects  # IDLE-OPT-4: not the target's answer
        held = self._forget(subscription)
        kind, finished_at, detail = read_answer(notice)
        effects.notices.append(self._render(held, kind, finished_at, detail))
        return True, effects

    def _forget(self, subscription: int) -> Outstanding:
        held = self.outstanding.pop(subscription)
        ids = self._by_target[held.target]
        ids.remove(subscription)
        if not ids:
            del self._by_target[held.target]
        return held

    def _render(self, held: Outstanding, kind: str, finished_at: int | None,
                detail: str | None) -> RenderedNotice:
        # IDLE-TEXT-2: the requester re-sanitises the detail; only idle shows one.
        fold = self.config.options.fold_lookalikes  # IDLE-OPT-5
        shown = peer_idle_notice_label(detail, fold) if kind == "idle" and detail is not None else None
        text = render_idle_notice(kind, held.label, finished_at if kind in ("idle", "exited") else None,
                                  shown, self.config.reader_utc_offset_min)
        return RenderedNotice(held.subscription, kind, text)

    # -- target half ------------------------------------------------------------------

    def add_subscriber(self, requester: object, subscription: object,
                       parity: object = None) -> AddSubscriberResult:
        """IDLE-TGT-1..4: a subscription arrives from ``requester``."""
        requester = _address(requester, "requester")
        if not is_safe_natural(subscription):
            raise InvalidArgument(f"subscription must be an integer in [0, 2**53 - 1], got {subscription!r}")
        assert isinstance(subscription, int)
        if parity is None:
            parity = False
        if type(parity) is not bool:
            raise InvalidArgument(f"parity must be true, false or null, got {parity!r}")
        effects = Effects()
        if self.phase is Phase.EXITED:  # IDLE-END-3
            effects.sent.append(SentNotice(requester, subscription, "exited", self.closed_at))
            return AddSubscriberResult(False, None, None, effects)
        if self.phase is Phase.SHUT_DOWN:
            effects.sent.append(SentNotice(requester, subscription, "unavailable"))
            return AddSubscriberResult(False, None, None, effects)
        current = self.subscribers.get(requester)
        if current is not None and current.subscription == subscription:
            return AddSubscriberResult(True, None, None, effects)  # IDLE-TGT-5: a retransmission
        displaced = None
        older = self.subscribers.pop(requester, None)
        if older is not None:  # IDLE-TGT-2
            displaced = older.subscription
            effects.sent.append(SentNotice(older.requester, older.subscription, "unavailable"))
        elif len(self.subscribers) >= self.config.subscriber_cap:  # IDLE-TGT-1
            effects.sent.append(SentNotice(requester, subscription, "unavailable"))
            return AddSubscriberResult(False, None, None, effects)
        self.subscribers[requester] = Subscriber(requester, subscription, self.now_ms, parity)
        if self.config.options.fire_when_already_idle and self.phase is Phase.IDLE:  # IDLE-OPT-2
            self.phase, self.fire_at = Phase.SETTLING, self.now_ms + self.config.debounce_ms
        shared = self.config.last_turn_text_seat and parity  # IDLE-DETAIL-1
        announcement = describe_peer_idle_subscription(requester, shared, self.config.options.fold_lookalikes)
        return AddSubscriberResult(True, displaced, announcement, effects)

    def _open_phase(self) -> None:
        if self.phase in CLOSED:
            raise TargetClosed(f"the target has {'exited' if self.phase is Phase.EXITED else 'shut down'}")

    def turn_started(self) -> Effects:
        """IDLE-FIRE-2: a turn that starts cancels an armed fire."""
        self._open_phase()
        if self.phase is Phase.BUSY:
            raise TurnInProgress("a turn is already running")
        self.phase, self.fire_at = Phase.BUSY, None
        return Effects()

    def turn_finished(self, last_turn_text: object = None) -> Effects:
        """IDLE-FIRE-1: the fire is armed one debounce after the turn finished."""
        text = _optional_text(last_turn_text, "last_turn_text")
        self._open_phase()
        if self.phase is not Phase.BUSY:
            raise NoTurnInProgress("no turn is running")
        self.phase, self.fire_at = Phase.SETTLING, self.now_ms + self.config.debounce_ms
        self.finished_at = self.now_ms
        fold = self.config.options.fold_lookalikes  # IDLE-OPT-5
        self.last_turn_detail = peer_idle_notice_label(text, fold) if text is not None else None
        return Effects()

    def set_held(self, count: object) -> Effects:
        """IDLE-HELD-1: how many peer messages the target holds for review."""
        if not is_safe_natural(count):
            raise InvalidArgument(f"count must be an integer in [0, 2**53 - 1], got {count!r}")
        assert isinstance(count, int)
        self.held = count
        if (count == 0 and self.phase is Phase.BACKING_OFF
                and self.config.options.fire_on_release):  # IDLE-OPT-3
            self.phase, self.fire_at = Phase.SETTLING, self.now_ms + self.config.debounce_ms
        return Effects()

    def exit(self) -> Effects:
        """IDLE-END-1: every subscriber is answered ``exited``."""
        return self._close(Phase.EXITED, "exited")

    def shutdown(self) -> Effects:
        """IDLE-END-2: every subscriber is answered ``unavailable``."""
        return self._close(Phase.SHUT_DOWN, "unavailable")

    def _close(self, phase: Phase, kind: str) -> Effects:
        self._open_phase()
        effects = Effects()
        at = self.now_ms if kind == "exited" else None
        effects.sent = [SentNotice(s.requester, s.subscription, kind, at) for s in self.subscribers.values()]
        self.subscribers.clear()
        self.phase, self.fire_at, self.closed_at = phase, None, self.now_ms
        return effects

    # -- time -------------------------------------------------------------------------

    def advance(self, now_ms: object) -> Effects:
        """IDLE-TIME-1/2: move the clock to ``now_ms`` and fire what is due, in the spec's order."""
        if not is_safe_natural(now_ms):
            raise InvalidTime(f"now_ms must be an integer in [0, 2**53 - 1], got {now_ms!r}")
        assert isinstance(now_ms, int)
        if now_ms < self.now_ms:
            raise InvalidTime(f"time does not move backwards: now_ms {now_ms} < {self.now_ms}")
        self.now_ms = now_ms
        effects = Effects()
        ttl = self.config.ttl_ms
        # 1. The requester's own timer (IDLE-REQ-4), in sending order.
        # Tables are in time order (the clock never goes back), so each scan stops at the first
        # entry that is not due: an advance costs what falls due, not the table's size.
        due = []
        for row in self.outstanding.values():
            if row.sent_at + ttl > now_ms:
                break
            due.append(row.subscription)
        for subscription in due:
            effects.notices.append(self._render(self._forget(subscription), "expired", None, None))
        # 2. The target's fire, if one falls due by now (IDLE-FIRE-3, IDLE-HELD-2).
        fire = self._due_fire(now_ms)
        # 3. Sweeps up to the fire (or to now), then the fire (IDLE-TGT-3, IDLE-TIME-2).
        sweep_until = now_ms if fire is None else fire
        gone = []
        for subscriber in self.subscribers.values():
            if subscriber.added_at + ttl > sweep_until:
                break
            gone.append(subscriber)
        for subscriber in gone:
            del self.subscribers[subscriber.requester]
            effects.swept.append(Swept(subscriber.requester, subscriber.subscription))
        if fire is not None:
            effects.sent = [self._idle_answer(s) for s in self.subscribers.values()]
            self.subscribers.clear()
            self.phase, self.fire_at = Phase.IDLE, None
        return effects

    def _due_fire(self, now_ms: int) -> int | None:
        """The time of the fire within this advance, moving a back-off forward if still held."""
        if self.phase not in (Phase.SETTLING, Phase.BACKING_OFF):
            return None
        assert self.fire_at is not None
        if self.fire_at > now_ms:
            return None
        fire, self.fire_at = next_fire(self.fire_at, self.held, now_ms, self.config.held_backoff_ms)
        if fire is None:
            self.phase = Phase.BACKING_OFF
        return fire

    def _idle_answer(self, subscriber: Subscriber) -> SentNotice:
        shared = self.config.last_turn_text_seat and subscriber.parity  # IDLE-DETAIL-1
        return SentNotice(subscriber.requester, subscriber.subscription, "idle", self.finished_at,
                          self.last_turn_detail if shared else None)

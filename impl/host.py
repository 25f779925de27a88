"""The host: sessions composed of the reference machines, on one shared clock.

Specified by ``spec/host.md`` (seeds ``000_82681ec6c92fd68c.txt`` and
``001_08883a16a8c012a7.txt``); the requirement IDs in comments point there.

Theory of operation
-------------------
Each :class:`Session` holds a :class:`~inboxspec.impl.wake_gate.WakePolicy`,
a :class:`~inboxspec.impl.peer_delivery.PeerDelivery` (the session as a
recipient), an :class:`~inboxspec.impl.idle_subscriptions.IdleSubscriptions`
(both halves), its pending mail, its waiting harness lines and its phase.
The :class:`Host` owns the clock and does only wiring: it never decides what
a composed machine decides. A ``tick`` asks each idle session's gate about
its pending mail (HOST-WAKE-*); turn actions go through the recipients' peer
delivery and idle halves (HOST-SEND-*, HOST-TURN-*); every receipt and idle
notice comes back to its session as a harness line (HOST-RCPT-1,
HOST-IDLE-2, HOST-LINE-1); after each step the idle halves learn how much
their session holds (HOST-IDLE-1).

Validation happens first, in the fault order of HOST-IF-5, before any machine
sees an event, so a rejected step changes nothing (HOST-IF-4). Errors the
composed machines raise on a value the host passes through (a ticket) are
raised again as host errors with the same code.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from .errors import InboxSpecError
from .idle_subscriptions import Effects, IdleSubscriptionError, IdleSubscriptions
from .peer_delivery import (
    SETTINGS,
    PeerDelivery,
    PeerDeliveryError,
    Receipt,
    render_delivery_notice,
    render_dropped_notice,
)
from .values import check_argument_names
from .wake_gate import SCHEDULED_PREFIX, USER_KIND, Message, WakeGateError, WakePolicy

MAX_SAFE_INTEGER = 2**53 - 1
DEFAULT_SESSIONS = ("s1", "s2")
MAX_SESSIONS = 8
CONFIG_KEYS = (
    "sessions",
    "wake_gate",
    "peer_delivery",
    "idle_subscriptions",
    "turn_action_limit",
    "reminder_limit",
    "options",
)
PEER_KIND = "agent"  # HOST-SEND-3: delivered peer mail, and reminders (HOST-TURN-3)
WAKE_RECEIPTS = ("wake_attempted", "turn_started")  # HOST-WAKE-2
REFUSAL_RECEIPTS = ("wake_attempted", "wake_refused")  # HOST-WAKE-3


class HostError(InboxSpecError):
    code: ClassVar[str] = "invalid_argument"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code  # type: ignore[misc]  # an error a composed machine raised, by its code


class InvalidConfig(HostError):
    code = "invalid_config"


class InvalidArgument(HostError):
    code = "invalid_argument"


def check_arguments(event: str, args: object, names: Collection[str]) -> Mapping[str, object]:
    """A step's first fault (spec/host.md): ``args`` may name only the event's arguments (``names``,
    spec/host.interface.json), else ``invalid_argument``. Returns ``args``. (An ``args`` that
    is not an object is a malformed request, which the driver answers before calling this;
    given one anyway, this raises ``invalid_argument`` too.)"""
    return check_argument_names(event, args, names, InvalidArgument)


class UnknownSession(HostError):
    code = "unknown_session"


class InvalidTarget(HostError):
    code = "invalid_target"


class InvalidClaim(HostError):
    code = "invalid_claim"


class InvalidText(HostError):
    code = "invalid_text"


class InvalidDelay(HostError):
    code = "invalid_delay"


class InvalidTime(HostError):
    code = "invalid_time"


class InvalidTicket(HostError):
    code = "invalid_ticket"


class InvalidSetting(HostError):
    code = "invalid_setting"


class ReminderLimit(HostError):
    code = "reminder_limit"


class NotInTurn(HostError):
    code = "not_in_turn"


class TurnLimit(HostError):
    code = "turn_limit"


def _is_safe_natural(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


@dataclass(frozen=True)
class HostOptions:
    """The findings' options; every default is the seeds' behaviour."""

    stamp_true_sender: bool = False  # HOST-F1, HOST-OPT-1
    harness_lines_as_agent_mail: bool = False  # HOST-F2, HOST-OPT-2
    harness_lines_at_next_turn: bool = False  # HOST-F2, HOST-OPT-3
    pending_counts_as_held: bool = False  # HOST-F3, HOST-OPT-4

    def __post_init__(self) -> None:
        for f in fields(self):
            if type(getattr(self, f.name)) is not bool:
                raise InvalidConfig(f"option {f.name} must be true or false, got {getattr(self, f.name)!r}")
        if self.harness_lines_as_agent_mail and self.harness_lines_at_next_turn:
            raise InvalidConfig(
                "harness_lines_as_agent_mail and harness_lines_at_next_turn are two readings"
                " of one rule (HOST-LINE-1): choose one"
            )

    @classmethod
    def from_mapping(cls, raw: object) -> HostOptions:
        if not isinstance(raw, Mapping):
            raise InvalidConfig(f"options must be an object, got {type(raw).__name__}")
        unknown = sorted(str(k) for k in set(raw) - {f.name for f in fields(cls)})
        if unknown:
            raise InvalidConfig(f"unknown host option(s): {', '.join(unknown)}")
        return cls(**raw)

    @property
    def line_delivery(self) -> str:
        """HOST-LINE-1 and its two other readings."""
        if self.harness_lines_at_next_turn:
            return "next_turn"
        return "agent" if self.harness_lines_as_agent_mail else USER_KIND


@dataclass(frozen=True)
class Pending:
    """One pending message: what the gate sees, and the channel it came by."""

    message: Message
    channel: str  # "typed", "peer", "reminder" or "line"


@dataclass(frozen=True)
class InFlight:
    """What the host remembers of a message its recipient's peer delivery has not settled."""

    origin: str  # the true origin (HOST-TERM-3)
    text: str


@dataclass
class Session:
    address: str
    gate: WakePolicy
    delivery: PeerDelivery
    idle: IdleSubscriptions
    pending: list[Pending] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # HOST-OPT-3's waiting lines
    phase: str = "idle"
    actions: int = 0  # turn actions in the current turn (HOST-TURN-1)
    told_held: int = 0  # what the idle half last got from set_held (HOST-IDLE-1)
    in_flight: dict[int, InFlight] = field(default_factory=dict)  # by its peer delivery's ticket

    def state(self) -> dict[str, Any]:
        """HOST-IF-2."""
        return {
            "phase": self.phase,
            "pending": len(self.pending),
            "shown": len(self.shown),
            "held": self.delivery.held_count,
            "streak": self.gate.streak,
        }


@dataclass(frozen=True)
class Reminder:
    session: str
    due_ms: int
    text: str


class ReminderBook:
    """The reminders scheduled and not yet joined to their session's pending mail (HOST-TURN-3).

    A case file may hold hundreds of thousands of ``schedule`` steps (PROTO-CASES-2's size), so no
    step here costs in proportion to the reminders waiting: each session's waiting count is kept,
    not counted, and the reminders wait in a heap by due time, with their scheduling number, so
    that ``fall_due`` takes only the due ones and gives them in scheduling order (HOST-TIME-1
    step 3)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Reminder]] = []  # (due_ms, scheduling number, reminder)
        self._scheduled = 0
        self._waiting: dict[str, int] = {}

    def waiting(self, session: str) -> int:
        """How many of ``session``'s reminders are waiting, due or not."""
        return self._waiting.get(session, 0)

    def schedule(self, reminder: Reminder) -> None:
        heapq.heappush(self._heap, (reminder.due_ms, self._scheduled, reminder))
        self._scheduled += 1
        self._waiting[reminder.session] = self.waiting(reminder.session) + 1

    def fall_due(self, now_ms: int) -> list[Reminder]:
        """The reminders due at ``now_ms``, taken out, in scheduling order."""
        due: list[tuple[int, Reminder]] = []
        while self._heap and self._heap[0][0] <= now_ms:
            _due_ms, number, reminder = heapq.heappop(self._heap)
            due.append((number, reminder))
            self._waiting[reminder.session] -= 1
        due.sort(key=lambda entry: entry[0])
        return [reminder for _number, reminder in due]


def _part(build: Any, config: object, machine: str, error: type[InboxSpecError]) -> Any:
    try:
        return build(config)
    except error as problem:
        raise InvalidConfig(f"{machine}: {problem}") from None


class Host:
    """Sessions on one clock (HOST-TERM-1), and the wiring between their machines."""

    def __init__(
        self,
        sessions: Sequence[str] = DEFAULT_SESSIONS,
        wake_gate: object = None,
        peer_delivery: object = None,
        idle_subscriptions: object = None,
        turn_action_limit: object = None,
        reminder_limit: object = None,
        options: HostOptions | None = None,
    ) -> None:
        if (
            not isinstance(sessions, (list, tuple))
            or not 2 <= len(sessions) <= MAX_SESSIONS
            or any(not isinstance(a, str) or not a for a in sessions)
            or len(set(sessions)) != len(sessions)
        ):
            raise InvalidConfig(
                f"sessions must be 2 to {MAX_SESSIONS} distinct non-empty strings, got {sessions!r}"
            )
        if turn_action_limit is not None and not _is_safe_natural(turn_action_limit):
            raise InvalidConfig(
                f"turn_action_limit must be a safe integer or null, got {turn_action_limit!r}"
            )
        if reminder_limit is not None and not _is_safe_natural(reminder_limit):
            raise InvalidConfig(f"reminder_limit must be a safe integer or null, got {reminder_limit!r}")
        options = HostOptions() if options is None else options
        if not isinstance(options, HostOptions):
            raise InvalidConfig(f"options must be HostOptions, got {type(options).__name__}")
        parts = {
            "wake_gate": {} if wake_gate is None else wake_gate,
            "peer_delivery": {} if peer_delivery is None else peer_delivery,
            "idle_subscriptions": {} if idle_subscriptions is None else idle_subscriptions,
        }
        self.sessions: dict[str, Session] = {
            address: Session(
                address,
                _part(WakePolicy.from_config, parts["wake_gate"], "wake_gate", WakeGateError),
                _part(PeerDelivery.from_config, parts["peer_delivery"], "peer_delivery", PeerDeliveryError),
                _part(
                    IdleSubscriptions.from_config,
                    parts["idle_subscriptions"],
                    "idle_subscriptions",
                    IdleSubscriptionError,
                ),
            )
            for address in sessions
        }
        for session in self.sessions.values():
            if session.idle.now_ms != 0:
                raise InvalidConfig("idle_subscriptions: start_ms must be 0, the host clock's start")
        self.turn_action_limit: int | None = turn_action_limit  # type: ignore[assignment]
        self.reminder_limit: int | None = reminder_limit  # type: ignore[assignment]
        self.options = options
        self.now_ms = 0
        self.reminders = ReminderBook()
        self.next_subscription = 1
        self.subscription_targets: dict[int, str] = {}  # HOST-TURN-4, for HOST-IDLE-2's `about`
        self._events: list[dict[str, Any]] = []

    @classmethod
    def from_config(cls, config: object) -> Host:
        """HOST-IF-1."""
        if not isinstance(config, Mapping):
            raise InvalidConfig(f"a host config must be an object, got {type(config).__name__}")
        unknown = sorted(str(k) for k in set(config) - set(CONFIG_KEYS))
        if unknown:
            raise InvalidConfig(f"unknown host config key(s): {', '.join(unknown)}")
        for key in ("wake_gate", "peer_delivery", "idle_subscriptions"):
            if key in config and not isinstance(config[key], Mapping):
                raise InvalidConfig(f"{key} must be an object, got {type(config[key]).__name__}")
        return cls(
            sessions=config.get("sessions", list(DEFAULT_SESSIONS)),
            wake_gate=config.get("wake_gate", {}),
            peer_delivery=config.get("peer_delivery", {}),
            idle_subscriptions=config.get("idle_subscriptions", {}),
            turn_action_limit=config.get("turn_action_limit"),
            reminder_limit=config.get("reminder_limit"),
            options=HostOptions.from_mapping(config.get("options", {})),
        )

    # -- reading ------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The state field ``sessions`` (HOST-IF-2)."""
        return {address: session.state() for address, session in self.sessions.items()}

    # -- validation (HOST-IF-5: arguments in order, then the state checks) ---------------

    def _session(self, address: object) -> Session:
        if not isinstance(address, str) or address not in self.sessions:
            raise UnknownSession(f"session must be one of {', '.join(self.sessions)}, got {address!r}")
        return self.sessions[address]

    def _other(self, session: Session, address: object) -> Session:
        if not isinstance(address, str) or address not in self.sessions or address == session.address:
            raise InvalidTarget(f"the target must be another configured session, got {address!r}")
        return self.sessions[address]

    @staticmethod
    def _text(value: object, nullable: bool = False) -> str | None:
        if not (isinstance(value, str) or (nullable and value is None)):
            raise InvalidText(f"text must be a string{' or null' if nullable else ''}, got {value!r}")
        return value

    def _turn(self, session: Session, counted: bool = True) -> None:
        """HOST-TURN-1: the state checks of a turn action, not_in_turn before turn_limit."""
        if session.phase != "turn":
            raise NotInTurn(f"session {session.address} is not in a turn")
        if counted and self.turn_action_limit is not None and session.actions >= self.turn_action_limit:
            raise TurnLimit(f"session {session.address} used its {self.turn_action_limit} turn actions")

    # -- wiring ---------------------------------------------------------------------------

    def _begin(self) -> list[dict[str, Any]]:
        self._events = []
        return self._events

    def _finish(self) -> list[dict[str, Any]]:
        """HOST-IDLE-1: each idle half learns its session's held count, in config order."""
        for session in self.sessions.values():
            count = session.delivery.held_count
            if self.options.pending_counts_as_held:  # HOST-OPT-4
                count += len(session.pending)
            if count != session.told_held:
                session.idle.set_held(count)
                session.told_held = count
        return self._events

    def _line(self, to: Session, about: str, text: str) -> None:
        """HOST-LINE-1 (HOST-OPT-2/3): a harness line reaches its session."""
        delivery = self.options.line_delivery
        self._events.append(
            {"type": "line", "to": to.address, "about": about, "delivery": delivery, "text": text}
        )
        if delivery == "next_turn":
            to.shown.append(text)
        else:
            to.pending.append(Pending(Message(delivery, about, to.address, text), "line"))

    def _receipts(self, recipient: Session, receipts: Sequence[Receipt]) -> None:
        """HOST-RCPT-1 and HOST-SEND-3: each receipt told to its true origin; deliveries join pending."""
        for receipt in receipts:
            flight = recipient.in_flight[receipt.ticket]
            if receipt.state != "held":
                del recipient.in_flight[receipt.ticket]
            self._events.append(
                {
                    "type": "receipt",
                    "recipient": recipient.address,
                    "ticket": receipt.ticket,
                    "sender": flight.origin,
                    "state": receipt.state,
                    "cause": receipt.cause,
                    "reason": receipt.reason,
                }
            )
            if receipt.state == "delivered":
                recipient.pending.append(
                    Pending(Message(PEER_KIND, receipt.sender, recipient.address, flight.text), "peer")
                )
            if receipt.state == "dropped":
                text = render_dropped_notice(1, [recipient.address], [receipt.reason])
            else:
                text = render_delivery_notice(receipt.state, 1, [recipient.address])
            self._line(self.sessions[flight.origin], recipient.address, text)

    def _idle_effects(self, session: Session, effects: Effects) -> None:
        """HOST-IDLE-2: a requester's notices become lines; a target's answers are carried."""
        for notice in effects.notices:
            self._line(session, self.subscription_targets[notice.subscription], notice.text)
        for answer in effects.sent:
            self._events.append(
                {
                    "type": "answer",
                    "from": session.address,
                    "to": answer.to,
                    "subscription": answer.subscription,
                    "kind": answer.kind,
                }
            )
            requester = self.sessions[answer.to]
            _resolved, notices = requester.idle.receive_notice(
                answer.subscription,
                {"kind": answer.kind, "finished_at": answer.finished_at, "detail": answer.detail},
                session.address,
            )
            self._idle_effects(requester, notices)

    # -- events -----------------------------------------------------------------------------

    def user_input(self, session: object, text: object) -> list[dict[str, Any]]:
        """HOST-WAKE-4: a typed line joins the pending mail."""
        target = self._session(session)
        line = self._text(text)
        assert line is not None
        events = self._begin()
        target.pending.append(Pending(Message(USER_KIND, target.address, target.address, line), "typed"))
        self._finish()
        return events

    def tick(self) -> list[dict[str, Any]]:
        """HOST-WAKE-1..3: every idle watcher polls, in config order."""
        events = self._begin()
        for session in self.sessions.values():
            if session.phase != "idle" or not session.pending:
                continue
            batch = [p.message for p in session.pending]
            decision = session.gate.decide(batch, now_ms=self.now_ms)
            if not decision.wake:
                announced = session.gate.announce_refusal()
                events.append(
                    {
                        "type": "refusal",
                        "session": session.address,
                        "lane": decision.lane.value,
                        "refusal_code": decision.refusal_code.value if decision.refusal_code else None,
                        "announced": announced,
                        "line": decision.refusal_reason if announced else None,
                        "receipts": list(REFUSAL_RECEIPTS) if announced else [],
                    }
                )
                continue
            taken = len(session.pending) + len(session.shown)
            peer = sum(1 for p in session.pending if p.channel == "peer")
            if peer:
                session.delivery.take(peer)
            if any(m.kind == USER_KIND for m in batch):
                session.gate.reset_streak()
            session.pending.clear()
            session.shown.clear()
            session.idle.turn_started()
            session.phase, session.actions = "turn", 0
            events.append(
                {
                    "type": "wake",
                    "session": session.address,
                    "lane": decision.lane.value,
                    "counts_against_cap": decision.counts_against_cap,
                    "taken": taken,
                    "receipts": list(WAKE_RECEIPTS),
                }
            )
        return self._finish()

    def advance(self, now_ms: object) -> list[dict[str, Any]]:
        """HOST-TIME-1: the one clock moves every machine, then reminders fall due."""
        if not _is_safe_natural(now_ms):
            raise InvalidTime(f"now_ms must be an integer in [0, 2**53 - 1], got {now_ms!r}")
        assert isinstance(now_ms, int)
        if now_ms < self.now_ms:
            raise InvalidTime(f"now_ms {now_ms} is before the clock {self.now_ms}")
        events = self._begin()
        self.now_ms = now_ms
        for session in self.sessions.values():
            self._receipts(session, session.delivery.advance(now_ms).receipts)
        for session in self.sessions.values():
            self._idle_effects(session, session.idle.advance(now_ms))
        for reminder in self.reminders.fall_due(now_ms):
            owner = self.sessions[reminder.session]
            owner.pending.append(
                Pending(
                    Message(PEER_KIND, owner.address, owner.address, SCHEDULED_PREFIX + reminder.text),
                    "reminder",
                )
            )
        self._finish()
        return events

    def send_message(
        self, session: object, to: object, text: object, claimed_from: object = None
    ) -> list[dict[str, Any]]:
        """HOST-SEND-1..4."""
        origin = self._session(session)
        recipient = self._other(origin, to)
        body = self._text(text)
        assert body is not None
        if claimed_from is not None and (
            not isinstance(claimed_from, str) or claimed_from not in self.sessions
        ):
            raise InvalidClaim(f"claimed_from must be null or a configured session, got {claimed_from!r}")
        self._turn(origin)
        events = self._begin()
        origin.actions += 1
        claimed = origin.address if claimed_from is None or self.options.stamp_true_sender else claimed_from
        result = recipient.delivery.send_message(claimed)
        assert result.ticket is not None
        events.append(
            {
                "type": "send",
                "session": origin.address,
                "to": recipient.address,
                "claimed_from": claimed_from,
                "ticket": result.ticket,
                "send_error": result.send_error,
            }
        )
        if result.send_error is None:  # HOST-SEND-4: a queue_full send leaves nothing in flight
            recipient.in_flight[result.ticket] = InFlight(origin.address, body)
            self._receipts(recipient, result.receipts)
        self._finish()
        return events

    def schedule(self, session: object, delay_ms: object, text: object) -> list[dict[str, Any]]:
        """HOST-TURN-3."""
        owner = self._session(session)
        if not _is_safe_natural(delay_ms):
            raise InvalidDelay(f"delay_ms must be a safe integer, got {delay_ms!r}")
        body = self._text(text)
        assert isinstance(delay_ms, int) and body is not None
        self._turn(owner)
        waiting = self.reminders.waiting(owner.address)
        if self.reminder_limit is not None and waiting >= self.reminder_limit:
            raise ReminderLimit(f"session {owner.address} has {waiting} reminders waiting")
        if self.now_ms + delay_ms > MAX_SAFE_INTEGER:
            raise InvalidDelay(f"the reminder would fall due past 2**53 - 1 ms (delay {delay_ms})")
        events = self._begin()
        owner.actions += 1
        self.reminders.schedule(Reminder(owner.address, self.now_ms + delay_ms, body))
        events.append({"type": "reminder", "session": owner.address, "due_ms": self.now_ms + delay_ms})
        self._finish()
        return events

    def subscribe(self, session: object, target: object) -> list[dict[str, Any]]:
        """HOST-TURN-4: the requester half subscribes, the target half is told at once."""
        requester = self._session(session)
        other = self._other(requester, target)
        self._turn(requester)
        events = self._begin()
        requester.actions += 1
        subscription = self.next_subscription
        self.next_subscription += 1
        self.subscription_targets[subscription] = other.address
        result = requester.idle.subscribe(other.address, subscription)
        events.append(
            {
                "type": "subscribe",
                "session": requester.address,
                "target": other.address,
                "subscription": subscription,
                "verdict": result.verdict,
                "pushed_out": result.pushed_out,
            }
        )
        self._idle_effects(requester, result.effects)
        if result.verdict == "sent":
            added = other.idle.add_subscriber(requester.address, subscription, False)
            self._idle_effects(other, added.effects)
        self._finish()
        return events

    def end_turn(self, session: object, detail: object = None) -> list[dict[str, Any]]:
        """HOST-TURN-2."""
        owner = self._session(session)
        line = self._text(detail, nullable=True)
        self._turn(owner, counted=False)
        events = self._begin()
        owner.idle.turn_finished(line)
        owner.phase = "idle"
        self._finish()
        return events

    def _held_action(self, session: object, ticket: object, approve: bool) -> list[dict[str, Any]]:
        """HOST-ENV-1: the recipient user acts on its own buffer."""
        owner = self._session(session)
        if not (type(ticket) is int and 1 <= ticket <= MAX_SAFE_INTEGER):
            raise InvalidTicket(f"ticket must be an integer in [1, 2**53 - 1], got {ticket!r}")
        try:
            result = owner.delivery.approve(ticket) if approve else owner.delivery.deny(ticket)
        except PeerDeliveryError as error:  # not_held (or box_full under a peer-delivery option)
            raise HostError(str(error), error.code) from None
        events = self._begin()
        self._receipts(owner, result.receipts)
        self._finish()
        return events

    def approve(self, session: object, ticket: object) -> list[dict[str, Any]]:
        return self._held_action(session, ticket, approve=True)

    def deny(self, session: object, ticket: object) -> list[dict[str, Any]]:
        return self._held_action(session, ticket, approve=False)

    def set_setting(self, session: object, setting: object) -> list[dict[str, Any]]:
        """HOST-ENV-2: the new setting, then a drain round."""
        owner = self._session(session)
        if setting is not None and not (isinstance(setting, str) and setting in SETTINGS):
            raise InvalidSetting(f"setting must be accept, hold, refuse or null, got {setting!r}")
        events = self._begin()
        owner.delivery.set_recipient(setting=setting)
        self._receipts(owner, owner.delivery.drain().receipts)
        self._finish()
        return events

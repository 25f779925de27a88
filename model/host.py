"""The host as a chart composing the model charts (spec/host.md).

The host chart has one control state, ``running``: what varies is data. Each
session's machines are the model charts of ``model/wake_gate.py``,
``model/peer_delivery.py`` and ``model/idle_subscriptions.py``, each kept as
a :class:`~inboxspec.model.compose.Part` (its control state and its data) and
fired through its own transitions; the host chart only wires them, rule by
rule of spec/host.md. Time is the chart's own event: ``advance(ms)`` moves the
one clock by ``ms`` (a conformance step ``advance`` with ``now_ms`` is
``advance(now_ms - clock)``).

Every pending message keeps its **true origin** beside the sender it claims
(``Mail.origin`` and ``Mail.sender``), and its channel, so that the
explorer's properties speak of what really happened (HOST-INV-*).

The receipt lines are written again here from PEER-NOTE-1/2 and
PEER-LABEL-1. This module does not import ``inboxspec.impl``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from statemachine import State

from .chart import ModelChart, stay
from .compose import Part
from .idle_subscriptions import IdleModelOptions, IdleSubscriptionsChart
from .peer_delivery import KEEP, PeerDeliveryChart, PeerDeliveryModelOptions
from .wake_gate import SCHEDULED_PREFIX, WakeGateChart, WakeGateModelOptions

DEFAULT_SESSIONS = ("s1", "s2")
TRAILER = "This line is automated harness output, not a message from a person and not an instruction."
PHRASES = {
    "held": "was held for the recipient's approval",
    "denied": "was denied by the recipient",
    "expired": "was not approved in time and was discarded",
    "delivered": "was delivered",
    "refused": "was refused: the recipient does not accept messages from other sessions",
}
DROP_PHRASES = {
    "rate-limited": "rate limited",
    "duplicate": "duplicate",
    "hop-loop": "relay loop",
    "hop-runaway": "too many relay hops",
    "queue-full": "recipient queue full",
}


def peer_label(raw: str) -> str:
    """PEER-LABEL-1."""
    spaced = "".join(
        " " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zs", "Zl", "Zp") or c in '[]<>«»"' else c
        for c in raw
    )
    return " ".join(word for word in spaced.split(" ") if word)[:48].rstrip(" ")


def receipt_line(state: str, recipient: str, reason: str | None) -> str:
    """PEER-NOTE-1 and PEER-NOTE-2 for one receipt to one recipient."""
    label = peer_label(recipient)
    suffix = f" to {label}" if label else ""
    if state == "dropped":
        reasons = DROP_PHRASES[reason] if reason is not None else "no reason given"
        return (
            f"[peer delivery] 1 message{suffix} was dropped by the recipient's ingress guard"
            f" ({reasons}). {TRAILER}"
        )
    return f"[peer delivery] 1 message{suffix} {PHRASES[state]}. {TRAILER}"


class Mail(NamedTuple):
    """A pending message: what the gate reads, and where it really came from."""

    kind: str
    sender: str  # the claimed sender: the gate message's `from`
    recipient: str
    text: str
    channel: str  # "typed", "peer", "reminder" or "line"
    origin: str | None  # the true origin session of peer mail and reminders; None for typed and harness lines

    def for_gate(self) -> tuple[str, str, str, str]:
        return (self.kind, self.sender, self.recipient, self.text)


class Reminder(NamedTuple):
    session: str
    due_ms: int
    text: str


@dataclass(frozen=True)
class HostModelOptions:
    stamp_true_sender: bool = False  # HOST-F1
    harness_lines_as_agent_mail: bool = False  # HOST-F2
    harness_lines_at_next_turn: bool = False  # HOST-F2
    pending_counts_as_held: bool = False  # HOST-F3


class InFlight(NamedTuple):
    """A message a session was sent and has not yet read or been told the fate of, by its ticket."""

    origin: str  # the session that really sent it, whatever sender it claims
    text: str


@dataclass
class SessionData:
    """One session (HOST-TERM-1): its three parts, with their control states, and its own data."""

    gate: Any
    gate_state: str
    delivery: Any
    delivery_state: str
    idle: Any
    idle_state: str
    pending: list[Mail] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    phase: str = "idle"
    actions: int = 0
    told_held: int = 0
    in_flight: dict[int, InFlight] = field(default_factory=dict)  # by ticket


class _ListsNoHeld:
    """A session's peer delivery part, whose outputs list no held buffer. The host reads a delivery
    output's receipts, ticket and send error alone, and counts the buffer itself (HOST-IDLE-1):
    listing the whole buffer at every step made a case of many held sends quadratic (20,000: 82 s)."""

    def _held_output(self) -> list[dict[str, Any]]:
        return []


class Parts:
    """The three part charts every session is built from, configured once per host."""

    def __init__(
        self, wake_gate: dict[str, Any], peer_delivery: dict[str, Any], idle_subscriptions: dict[str, Any]
    ) -> None:
        gate = {k: v for k, v in wake_gate.items() if k != "options"}
        self.gate = Part(WakeGateChart, options=WakeGateModelOptions(**wake_gate.get("options", {})), **gate)
        delivery = {k: v for k, v in peer_delivery.items() if k != "options"}
        self.delivery = Part(
            PeerDeliveryChart,
            options=PeerDeliveryModelOptions(**peer_delivery.get("options", {})),
            **delivery,
        )
        self.delivery.holder = type("SessionDeliveryPart", (_ListsNoHeld, self.delivery.holder), {})
        idle = {k: v for k, v in idle_subscriptions.items() if k != "options"}
        self.idle = Part(
            IdleSubscriptionsChart, idle, IdleModelOptions(**idle_subscriptions.get("options", {}))
        )

    @classmethod
    def configured(
        cls, wake_gate: dict[str, Any], peer_delivery: dict[str, Any], idle_subscriptions: dict[str, Any]
    ) -> Parts:
        """The parts for these configurations, built once per distinct configuration in a process.

        Building them reads three chart classes and builds a real chart of each (about 15 ms),
        which a replay per trace (``HostExplorer.concretize``, refinement) would otherwise pay
        per chart. Sharing is exact because a ``Parts`` is never changed once built: ``session``
        deep-copies each part's template, and ``Part.fire`` only caches functions generated
        from its rows. ``tests/test_compose.py`` checks that a chart built after another has
        run is the chart built afresh."""
        # ``repr`` tells apart what the charts could (a tuple from a list, 1 from True or 1.0);
        # the same values in another key order only miss the memo.
        key = repr((wake_gate, peer_delivery, idle_subscriptions))
        built = _CONFIGURED.get(key)
        if built is None:
            if len(_CONFIGURED) >= _CONFIGURED_LIMIT:  # fuzzed configurations: memory stays bounded
                _CONFIGURED.clear()
            built = _CONFIGURED[key] = cls(wake_gate, peer_delivery, idle_subscriptions)
        return built

    def session(self) -> SessionData:
        return SessionData(
            self.gate.data(),
            self.gate.initial,
            self.delivery.data(),
            self.delivery.initial,
            self.idle.data(),
            self.idle.initial,
        )


# The parts built so far, by their configurations' ``repr`` (``Parts.configured``).
_CONFIGURED: dict[str, Parts] = {}
_CONFIGURED_LIMIT = 64


class HostChart(ModelChart["HostChart"]):
    running = State(initial=True)
    _all = (running,)

    user_input = stay(_all, on="book_typed_line")
    tick = stay(_all, on="book_tick")
    advance = stay(_all, on="book_time")
    send_message = (
        stay(_all, cond="session_is_not_in_turn", on="reject_not_in_turn")
        | stay(_all, cond="turn_budget_is_spent", on="reject_turn_limit")
        | stay(_all, on="book_send")
    )
    schedule = (
        stay(_all, cond="session_is_not_in_turn", on="reject_not_in_turn")
        | stay(_all, cond="turn_budget_is_spent", on="reject_turn_limit")
        | stay(_all, cond="reminders_are_at_their_limit", on="reject_reminder_limit")
        | stay(_all, on="book_reminder")
    )
    subscribe = (
        stay(_all, cond="session_is_not_in_turn", on="reject_not_in_turn")
        | stay(_all, cond="turn_budget_is_spent", on="reject_turn_limit")
        | stay(_all, on="book_subscription")
    )
    end_turn = stay(_all, cond="session_is_not_in_turn", on="reject_not_in_turn") | stay(
        _all, on="book_turn_end"
    )
    approve = stay(_all, on="book_approval")
    deny = stay(_all, on="book_denial")
    set_setting = stay(_all, on="book_setting")

    del _all

    def __init__(self, config: dict[str, Any] | None = None, options: HostModelOptions | None = None) -> None:
        config = dict(config or {})
        self.addresses: tuple[str, ...] = tuple(config.get("sessions", DEFAULT_SESSIONS))
        self.limit: int | None = config.get("turn_action_limit")
        self.reminder_limit: int | None = config.get("reminder_limit")
        self.options = options or HostModelOptions()
        self.parts = Parts.configured(
            config.get("wake_gate", {}), config.get("peer_delivery", {}), config.get("idle_subscriptions", {})
        )
        self.sessions: dict[str, SessionData] = {a: self.parts.session() for a in self.addresses}
        self.now_ms = 0
        self.reminders: list[Reminder] = []
        self.next_subscription = 1
        self.subscription_targets: dict[int, str] = {}
        self.records: list[dict[str, Any]] = []
        self.output: dict[str, Any] = {}
        super().__init__()

    # -- guards --------------------------------------------------------------------------

    def session_is_not_in_turn(self, session: str) -> bool:
        """HOST-TURN-1."""
        return self.sessions[session].phase != "turn"

    def turn_budget_is_spent(self, session: str) -> bool:
        """HOST-TURN-1."""
        return self.limit is not None and self.sessions[session].actions >= self.limit

    def reminders_are_at_their_limit(self, session: str) -> bool:
        """HOST-TURN-3. Counted only under a limit: a case of many reminders without one was quadratic."""
        if self.reminder_limit is None:
            return False
        return sum(1 for r in self.reminders if r.session == session) >= self.reminder_limit

    # -- firing the parts ------------------------------------------------------------------

    def _gate(self, s: SessionData, event: str, **kwargs: Any) -> dict[str, Any]:
        s.gate_state = self.parts.gate.fire(s.gate, s.gate_state, event, **kwargs)
        return dict(s.gate.output)

    def _delivery(self, s: SessionData, event: str, **kwargs: Any) -> dict[str, Any]:
        s.delivery_state = self.parts.delivery.fire(s.delivery, s.delivery_state, event, **kwargs)
        return dict(s.delivery.output)

    def _idle(self, s: SessionData, event: str, **kwargs: Any) -> dict[str, Any]:
        s.idle_state = self.parts.idle.fire(s.idle, s.idle_state, event, **kwargs)
        return dict(s.idle.output)

    # -- wiring -------------------------------------------------------------------------------

    def _emit(self) -> None:
        """HOST-IDLE-1's sync, then the output (HOST-IF-2/3)."""
        for address in self.addresses:
            s = self.sessions[address]
            count = len(s.delivery.held) + (len(s.pending) if self.options.pending_counts_as_held else 0)
            if count != s.told_held:
                self._idle(s, "set_held", count=count)
                s.told_held = count
        self.output = {"events": self.records, "sessions": self._state()}
        self.records = []

    def _state(self) -> dict[str, Any]:
        return {
            a: {
                "phase": s.phase,
                "pending": len(s.pending),
                "shown": len(s.shown),
                "held": len(s.delivery.held),
                "streak": s.gate.streak,
            }
            for a in self.addresses
            for s in (self.sessions[a],)
        }

    def _error(self, code: str) -> None:
        self.records = []
        self.output = {"error": code, "sessions": self._state()}

    def _line(self, to: str, about: str, text: str) -> None:
        """HOST-LINE-1, HOST-OPT-2, HOST-OPT-3."""
        if self.options.harness_lines_at_next_turn:
            delivery = "next_turn"
        else:
            delivery = "agent" if self.options.harness_lines_as_agent_mail else "user"
        self.records.append({"type": "line", "to": to, "about": about, "delivery": delivery, "text": text})
        if delivery == "next_turn":
            self.sessions[to].shown.append(text)
        else:
            self.sessions[to].pending.append(Mail(delivery, about, to, text, "line", None))

    def _receipts(self, recipient: str, receipts: list[dict[str, Any]]) -> None:
        """HOST-RCPT-1, HOST-SEND-3."""
        s = self.sessions[recipient]
        for receipt in receipts:
            origin, text = s.in_flight[receipt["ticket"]]
            if receipt["state"] != "held":
                del s.in_flight[receipt["ticket"]]
            self.records.append(
                {
                    "type": "receipt",
                    "recipient": recipient,
                    "ticket": receipt["ticket"],
                    "sender": origin,
                    "state": receipt["state"],
                    "cause": receipt["cause"],
                    "reason": receipt["reason"],
                }
            )
            if receipt["state"] == "delivered":
                s.pending.append(Mail("agent", receipt["sender"], recipient, text, "peer", origin))
            self._line(origin, recipient, receipt_line(receipt["state"], recipient, receipt["reason"]))

    def _idle_output(self, address: str, output: dict[str, Any]) -> None:
        """HOST-IDLE-2."""
        for notice in output.get("notices", ()):
            self._line(address, self.subscription_targets[notice["subscription"]], notice["text"])
        for answer in output.get("sent", ()):
            self.records.append(
                {
                    "type": "answer",
                    "from": address,
                    "to": answer["to"],
                    "subscription": answer["subscription"],
                    "kind": answer["kind"],
                }
            )
            requester = self.sessions[answer["to"]]
            reply = self._idle(
                requester,
                "receive_notice",
                subscription=answer["subscription"],
                notice={
                    "kind": answer["kind"],
                    "finished_at": answer["finished_at"],
                    "detail": answer["detail"],
                },
                sender=address,
            )
            self._idle_output(answer["to"], reply)

    # -- actions --------------------------------------------------------------------------------

    def reject_not_in_turn(self) -> None:
        """HOST-TURN-1."""
        self._error("not_in_turn")

    def reject_turn_limit(self) -> None:
        """HOST-TURN-1."""
        self._error("turn_limit")

    def reject_reminder_limit(self) -> None:
        """HOST-TURN-3."""
        self._error("reminder_limit")

    def book_typed_line(self, session: str, text: str) -> None:
        """HOST-WAKE-4."""
        self.sessions[session].pending.append(Mail("user", session, session, text, "typed", None))
        self._emit()

    def book_tick(self) -> None:
        """HOST-WAKE-1, HOST-WAKE-2, HOST-WAKE-3."""
        for address in self.addresses:
            s = self.sessions[address]
            if s.phase != "idle" or not s.pending:
                continue
            batch = [m.for_gate() for m in s.pending]
            self._gate(s, "elapse", ms=self.now_ms - s.gate.now_ms)
            decision = self._gate(s, "decide", batch=batch, plugin_pending=False)
            if not decision["wake"]:
                announced = self._gate(s, "announce_refusal")["announce"]
                self.records.append(
                    {
                        "type": "refusal",
                        "session": address,
                        "lane": decision["lane"],
                        "refusal_code": decision["refusal_code"],
                        "announced": announced,
                        "line": decision["refusal_reason"] if announced else None,
                        "receipts": ["wake_attempted", "wake_refused"] if announced else [],
                    }
                )
                continue
            taken = len(s.pending) + len(s.shown)
            peer = sum(1 for m in s.pending if m.channel == "peer")
            if peer:
                self._delivery(s, "take", count=peer)
            if any(m.kind == "user" for m in s.pending):
                self._gate(s, "reset_streak")
            s.pending, s.shown = [], []
            self._idle(s, "turn_started")
            s.phase, s.actions = "turn", 0
            self.records.append(
                {
                    "type": "wake",
                    "session": address,
                    "lane": decision["lane"],
                    "counts_against_cap": decision["counts_against_cap"],
                    "taken": taken,
                    "receipts": ["wake_attempted", "turn_started"],
                }
            )
        self._emit()

    def book_time(self, ms: int) -> None:
        """HOST-TIME-1."""
        self.now_ms += ms
        for address in self.addresses:
            out = self._delivery(self.sessions[address], "advance", now_ms=self.now_ms)
            self._receipts(address, out["receipts"])
        for address in self.addresses:
            s = self.sessions[address]
            self._idle_output(address, self._idle(s, "advance", ms=self.now_ms - s.idle.now_ms))
        due = [r for r in self.reminders if r.due_ms <= self.now_ms]
        self.reminders = [r for r in self.reminders if r.due_ms > self.now_ms]
        for r in due:
            self.sessions[r.session].pending.append(
                Mail("agent", r.session, r.session, SCHEDULED_PREFIX + r.text, "reminder", r.session)
            )
        self._emit()

    def book_send(self, session: str, to: str, text: str, claimed_from: str | None = None) -> None:
        """HOST-SEND-1, HOST-SEND-2, HOST-SEND-4 (HOST-OPT-1)."""
        self.sessions[session].actions += 1
        claimed = session if claimed_from is None or self.options.stamp_true_sender else claimed_from
        recipient = self.sessions[to]
        out = self._delivery(
            recipient,
            "send_message",
            sender=claimed,
            sender_mode=None,
            attestation="absent",
            hops=0,
            loop=False,
            duplicate=False,
            rate_limited=False,
        )
        self.records.append(
            {
                "type": "send",
                "session": session,
                "to": to,
                "claimed_from": claimed_from,
                "ticket": out["ticket"],
                "send_error": out["send_error"],
            }
        )
        if out["send_error"] is None:
            recipient.in_flight[out["ticket"]] = InFlight(session, text)
            self._receipts(to, out["receipts"])
        self._emit()

    def book_reminder(self, session: str, delay_ms: int, text: str) -> None:
        """HOST-TURN-3."""
        self.sessions[session].actions += 1
        self.reminders.append(Reminder(session, self.now_ms + delay_ms, text))
        self.records.append({"type": "reminder", "session": session, "due_ms": self.now_ms + delay_ms})
        self._emit()

    def book_subscription(self, session: str, peer: str) -> None:
        """HOST-TURN-4 (the argument is the spec's `target`: python-statemachine gives that name to a
        transition's target state)."""
        target = peer
        requester = self.sessions[session]
        requester.actions += 1
        subscription = self.next_subscription
        self.next_subscription += 1
        self.subscription_targets[subscription] = target
        out = self._idle(requester, "subscribe", peer=target, subscription=subscription, label=None)
        self.records.append(
            {
                "type": "subscribe",
                "session": session,
                "target": target,
                "subscription": subscription,
                "verdict": out["verdict"],
                "pushed_out": out["pushed_out"],
            }
        )
        self._idle_output(session, out)
        if out["verdict"] == "sent":
            added = self._idle(
                self.sessions[target],
                "add_subscriber",
                requester=session,
                subscription=subscription,
                parity=False,
            )
            self._idle_output(target, added)
        self._emit()

    def book_turn_end(self, session: str, detail: str | None = None) -> None:
        """HOST-TURN-2."""
        s = self.sessions[session]
        self._idle(s, "turn_finished", last_turn_text=detail)
        s.phase = "idle"
        self._emit()

    def _held_action(self, session: str, event: str, ticket: Any) -> None:
        """HOST-ENV-1: the peer delivery's own answer, its errors included."""
        out = self._delivery(self.sessions[session], event, ticket=ticket)
        if "error" in out:
            self._error(out["error"])
            return
        self._receipts(session, out["receipts"])
        self._emit()

    def book_approval(self, session: str, ticket: Any) -> None:
        """HOST-ENV-1."""
        self._held_action(session, "approve", ticket)

    def book_denial(self, session: str, ticket: Any) -> None:
        """HOST-ENV-1."""
        self._held_action(session, "deny", ticket)

    def book_setting(self, session: str, setting: str | None) -> None:
        """HOST-ENV-2."""
        s = self.sessions[session]
        self._delivery(s, "set_recipient", setting=setting, starting_up=KEEP, mode=KEEP)
        self._receipts(session, self._delivery(s, "drain")["receipts"])
        self._emit()

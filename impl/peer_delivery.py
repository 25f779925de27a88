"""Peer delivery: the life of cross-session messages at one recipient session.

Specified by ``spec/peer-delivery.md`` (seed ``001_08883a16a8c012a7.txt``);
the requirement IDs in comments point there.

Theory of operation
-------------------
A sender's ``send`` first meets the send station: a recipient whose box is
full refuses synchronously (``queue_full``) and nothing else happens. Otherwise
the message is judged at the recipient's ingress (:func:`judge`, first match
wins): the ingress guard drops loops, runaways, duplicates and rate-limited
mail; an explicit ``refuse`` refuses; everything else is delivered into the
box or held in the buffer with a cause.

Held messages leave the buffer in five ways: ``approve`` (delivered), ``deny``
(denied), a deadline passing at ``advance`` (expired; only review causes arm
one), eviction by a newer hold past the cap (expired), and a drain round that
judges a waiting-cause entry again (delivered, refused, or still held). The
sender is told each step as a receipt: at most one ``held``, then exactly one
terminal state.

The core is sans-IO: :class:`PeerDelivery` holds the state and each method
returns a :class:`StepResult`; the pure functions below (judgement, eviction,
expiry, resolution, rendering) carry the CrossHair contracts. Time is data:
only :meth:`PeerDelivery.advance` moves the clock. Bad input raises a
:class:`PeerDeliveryError` before any state changes.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Final

from .errors import InboxSpecError

MAX_SAFE_INTEGER: Final = 2**53 - 1
DEFAULT_HELD_CAP: Final = 100  # PEER-IF-1, the seed's PEER_HELD_QUEUE_CAP
DEFAULT_BOX_CAP: Final = 50  # PEER-IF-1, the accepted delivery queue of the upstream facts
DEFAULT_MAX_HOPS: Final = 4  # PEER-IF-1, this spec's choice

SETTINGS: Final = ("accept", "hold", "refuse")
ATTESTATIONS: Final = ("valid", "garbage", "absent")
RECEIPT_STATES: Final = ("held", "denied", "expired", "delivered", "refused", "dropped")  # PEER-RCPT-1
DROP_REASONS: Final = ("rate-limited", "duplicate", "hop-loop", "hop-runaway", "queue-full")  # PEER-RCPT-2
HOLD_CAUSES: Final = ("inbound-hold", "starting-up", "mode-mismatch", "no-mode-asserted",
                      "attestation-garbage")  # PEER-CAUSE-1
REVIEW_CAUSES: Final = ("mode-mismatch", "no-mode-asserted", "attestation-garbage")  # PEER-CAUSE-2

DIALOG_EXPIRY_MS: Final[dict[str, int | None]] = {
    "60s": 60_000, "5m": 300_000, "10m": 600_000, "never": None}  # PEER-EXP-1
DIALOG_EXPIRY_DEFAULT: Final = "5m"
DIALOG_EXPIRY_WARNING: Final = ("[peer delivery settings] dialogExpiry is not one of 60s, 5m, 10m, never;"
                                " the default 5m applies.")  # PEER-EXP-3

NOTICE_TAG: Final = "[peer delivery]"
NOTICE_TRAILER: Final = ("This line is automated harness output, not a message from a person"
                         " and not an instruction.")
DELIVERY_PHRASES: Final = {  # PEER-NOTE-1; {was} is "was" or "were"
    "held": "{was} held for the recipient's approval",
    "denied": "{was} denied by the recipient",
    "expired": "{was} not approved in time and {was} discarded",
    "delivered": "{was} delivered",
    "refused": "{was} refused: the recipient does not accept messages from other sessions",
}
DROP_PHRASES: Final[dict[str | None, str]] = {  # PEER-NOTE-3
    "rate-limited": "rate limited", "duplicate": "duplicate", "hop-loop": "relay loop",
    "hop-runaway": "too many relay hops", "queue-full": "recipient queue full",
    None: "no reason given",
}
LABEL_MAX: Final = 48  # PEER-LABEL-1
_LABEL_BLANKED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
_LABEL_BLANKED_CHARACTERS: Final = frozenset('[]<>«»"')


class _Absent:
    """An argument that was not given (``null`` is a value: PEER-IF table)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


# -- errors (PEER-ERR-1) -------------------------------------------------------------

class PeerDeliveryError(InboxSpecError):
    code: ClassVar[str] = "invalid_argument"


class InvalidConfig(PeerDeliveryError):
    code = "invalid_config"


class InvalidArgument(PeerDeliveryError):
    code = "invalid_argument"


class InvalidMessage(PeerDeliveryError):
    code = "invalid_message"


class InvalidRecipient(PeerDeliveryError):
    code = "invalid_recipient"


class InvalidTime(PeerDeliveryError):
    code = "invalid_time"


class InvalidTicket(PeerDeliveryError):
    code = "invalid_ticket"


class NotHeld(PeerDeliveryError):
    code = "not_held"


class InvalidCount(PeerDeliveryError):
    code = "invalid_count"


class InvalidState(PeerDeliveryError):
    code = "invalid_state"


class InvalidRecipients(PeerDeliveryError):
    code = "invalid_recipients"


class InvalidReasons(PeerDeliveryError):
    code = "invalid_reasons"


class BoxFull(PeerDeliveryError):
    """Only with ``release_respects_box_cap`` (finding PEER-F2)."""

    code = "box_full"


# -- values ---------------------------------------------------------------------------

def _is_safe_natural(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def _is_positive_safe(value: object) -> bool:
    return type(value) is int and 1 <= value <= MAX_SAFE_INTEGER


def _is_mode(value: object) -> bool:
    return value is None or (type(value) is str and value != "")


@dataclass(frozen=True)
class DeliveryOptions:
    """Behaviour changes recommended by the findings. Every default is the seed's."""

    fair_eviction: bool = False  # PEER-F1
    release_respects_box_cap: bool = False  # PEER-F2
    deadline_for_waiting_holds: bool = False  # PEER-F3

    def __post_init__(self) -> None:
        for f in fields(self):
            if type(getattr(self, f.name)) is not bool:
                raise InvalidConfig(f"option {f.name} must be true or false, got {getattr(self, f.name)!r}")

    @classmethod
    def from_mapping(cls, raw: object) -> DeliveryOptions:
        if not isinstance(raw, Mapping):
            raise InvalidConfig(f"options must be an object, got {type(raw).__name__}")
        unknown = sorted(str(k) for k in set(raw) - {f.name for f in fields(cls)})
        if unknown:
            raise InvalidConfig(f"unknown peer-delivery option(s): {', '.join(unknown)}")
        return cls(**raw)


@dataclass(frozen=True)
class MessageFacts:
    """What the ingress judges about one message (the host's verdicts included)."""

    sender: str
    sender_mode: str | None = None
    attestation: str = "absent"
    hops: int = 0
    loop: bool = False
    duplicate: bool = False
    rate_limited: bool = False


@dataclass(frozen=True)
class Recipient:
    """The recipient session's standing: its inbound setting, start-up, mode class."""

    setting: str | None = None
    starting_up: bool = False
    mode: str | None = None


@dataclass(frozen=True)
class Verdict:
    state: str  # "delivered", "dropped", "refused" or "held"
    cause: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class HeldEntry:
    ticket: int
    facts: MessageFacts
    cause: str
    deadline_ms: int | None

    def to_json(self) -> dict[str, Any]:
        return {"ticket": self.ticket, "sender": self.facts.sender, "cause": self.cause,
                "deadline_ms": self.deadline_ms}


@dataclass(frozen=True)
class Receipt:
    ticket: int
    sender: str
    state: str
    cause: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ticket": self.ticket, "sender": self.sender, "state": self.state,
                "cause": self.cause, "reason": self.reason}


@dataclass(frozen=True)
class ResolvedDialogExpiry:
    value: str
    ms: int | None
    invalid: bool

    @property
    def warning(self) -> str | None:
        return DIALOG_EXPIRY_WARNING if self.invalid else None


@dataclass(frozen=True)
class StepResult:
    """What one stateful event produced, and the state after it."""

    receipts: tuple[Receipt, ...]
    held: tuple[HeldEntry, ...]
    box: int
    ticket: int | None = None
    send_error: str | None = None
    expiry: ResolvedDialogExpiry | None = None


# -- pure core --------------------------------------------------------------------------

def resolve_dialog_expiry(raw: object) -> ResolvedDialogExpiry:
    """PEER-EXP-2: absent (:data:`ABSENT`), null or "default" give the default, not invalid.

    post: __return__.value in ("60s", "5m", "10m", "never")
    post: __return__.invalid == (raw is not ABSENT and raw is not None and raw != "default" and not (type(raw) is str and raw in ("60s", "5m", "10m", "never")))
    """  # noqa: E501
    if type(raw) is str and raw in DIALOG_EXPIRY_MS:
        return ResolvedDialogExpiry(raw, DIALOG_EXPIRY_MS[raw], invalid=False)
    invalid = not (raw is ABSENT or raw is None or (type(raw) is str and raw == "default"))
    return ResolvedDialogExpiry(DIALOG_EXPIRY_DEFAULT, DIALOG_EXPIRY_MS[DIALOG_EXPIRY_DEFAULT], invalid)


def is_review_cause(cause: str) -> bool:
    return cause in REVIEW_CAUSES


def judge(facts: MessageFacts, recipient: Recipient, max_hops: int, at_ingress: bool = True) -> Verdict:
    """PEER-JUDGE-1, first match wins; a drain round (PEER-DRAIN-1) skips the ingress guard.

    post[]:
        # only the ingress guard drops
        __return__.state != "dropped" or (at_ingress and (facts.loop or facts.hops > max_hops or facts.duplicate or facts.rate_limited))
        # an accept setting holds only a garbled attestation
        not (recipient.setting == "accept" and __return__.state == "held") or __return__.cause == "attestation-garbage"
        # a refuse setting never delivers or holds
        recipient.setting != "refuse" or __return__.state in ("refused", "dropped")
        # a held verdict always names a cause
        (__return__.state == "held") == (__return__.cause is not None)
    """  # noqa: E501
    if at_ingress:
        if facts.loop:
            return Verdict("dropped", reason="hop-loop")
        if facts.hops > max_hops:
            return Verdict("dropped", reason="hop-runaway")
        if facts.duplicate:
            return Verdict("dropped", reason="duplicate")
        if facts.rate_limited:
            return Verdict("dropped", reason="rate-limited")
    if recipient.setting == "refuse":
        return Verdict("refused")
    if facts.attestation == "garbage":
        return Verdict("held", cause="attestation-garbage")
    if recipient.setting == "accept":
        return Verdict("delivered")
    if recipient.setting == "hold":
        return Verdict("held", cause="inbound-hold")
    if recipient.starting_up:
        return Verdict("held", cause="starting-up")
    if facts.sender_mode is None or recipient.mode is None:
        return Verdict("held", cause="no-mode-asserted")
    if facts.sender_mode != recipient.mode:
        return Verdict("held", cause="mode-mismatch")
    return Verdict("delivered")


def eviction_position(senders: Sequence[str], fair: bool) -> int:
    """PEER-HOLD-2 (the oldest) or PEER-OPT-1 (the oldest of the sender holding the most).

    pre: len(senders) > 0
    post[]:
        0 <= __return__ < len(senders)
        # without the option, eviction takes the oldest
        fair or __return__ == 0
        # with it, the evicted sender holds at least as many entries as any other
        not fair or all(senders.count(senders[__return__]) >= senders.count(s) for s in senders)
    """
    if not fair:
        return 0
    most = max(senders.count(s) for s in senders)
    return next(i for i, s in enumerate(senders) if senders.count(s) == most)


def hold(entries: tuple[HeldEntry, ...], entry: HeldEntry, cap: int,
         fair: bool) -> tuple[tuple[HeldEntry, ...], HeldEntry | None]:
    """Append a hold; past the cap, evict one entry (PEER-HOLD-1/2).

    pre: cap >= 1
    pre: len(entries) <= cap
    post[]:
        # the buffer never exceeds its cap
        len(__return__[0]) <= cap
        # nothing is lost: every entry is kept or evicted
        len(__return__[0]) + (__return__[1] is not None) == len(entries) + 1
        # without the option, the evicted entry is the oldest
        fair or __return__[1] is None or __return__[1] == entries[0]
    """
    grown = (*entries, entry)
    if len(grown) <= cap:
        return grown, None
    position = eviction_position([e.facts.sender for e in grown], fair)
    return grown[:position] + grown[position + 1:], grown[position]


def expire_due(entries: tuple[HeldEntry, ...],
               now_ms: int) -> tuple[tuple[HeldEntry, ...], tuple[HeldEntry, ...]]:
    """PEER-TIME-1: the entries whose deadline has come leave, in buffer order.

    post[]:
        # nothing is lost
        len(__return__[0]) + len(__return__[1]) == len(entries)
        # only an entry with a deadline that has come expires
        all(e.deadline_ms is not None and e.deadline_ms <= now_ms for e in __return__[1])
        # no entry whose deadline has come stays
        all(e.deadline_ms is None or e.deadline_ms > now_ms for e in __return__[0])
    """
    due = tuple(e for e in entries if e.deadline_ms is not None and e.deadline_ms <= now_ms)
    kept = tuple(e for e in entries if e.deadline_ms is None or e.deadline_ms > now_ms)
    return kept, due


def arms_deadline(cause: str, options: DeliveryOptions) -> bool:
    """PEER-EXP-4, PEER-OPT-3."""
    return is_review_cause(cause) or options.deadline_for_waiting_holds


# -- rendering ---------------------------------------------------------------------------

def render_label(raw: str) -> str:
    """PEER-LABEL-1: one line, no tag or quote characters, at most 48 code points.

    post: "\\n" not in __return__ and "[" not in __return__ and "]" not in __return__
    post: len(__return__) <= 48
    post: __return__ == __return__.strip(" ")
    """
    blanked = "".join(
        " " if (c in _LABEL_BLANKED_CHARACTERS or unicodedata.category(c) in _LABEL_BLANKED_CATEGORIES)
        else c for c in raw)
    collapsed = " ".join(part for part in blanked.split(" ") if part)
    return collapsed[:LABEL_MAX].rstrip(" ")


def _check_recipients(recipients: object) -> list[str]:
    if not isinstance(recipients, (list, tuple)) or not all(type(r) is str for r in recipients):
        raise InvalidRecipients("recipients must be a list of strings")
    return list(recipients)


def _check_reasons(reasons: object) -> list[str | None]:
    if not isinstance(reasons, (list, tuple)) or not all(
            r is None or (type(r) is str and r in DROP_REASONS) for r in reasons):
        raise InvalidReasons(f"reasons must be a list of drop reasons ({', '.join(DROP_REASONS)}) or nulls")
    return list(reasons)


def _check_count(count: object) -> int:
    if not _is_positive_safe(count):
        raise InvalidCount(f"count must be an integer in [1, 2**53 - 1], got {count!r}")
    assert isinstance(count, int)
    return count


def recipient_suffix(recipients: Sequence[str]) -> str:
    """PEER-NOTE-4: unique non-empty labels, at most three named."""
    labels: list[str] = []
    for raw in _check_recipients(recipients):
        label = render_label(raw)
        if label and label not in labels:
            labels.append(label)
    if not labels:
        return ""
    if len(labels) <= 3:
        named = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
        return f" to {named}"
    rest = len(labels) - 3
    return f" to {', '.join(labels[:3])} and {rest} {'other' if rest == 1 else 'others'}"


def describe_drop_reasons(reasons: Sequence[str | None]) -> str:
    """PEER-NOTE-3: each phrase once, in the order of its first occurrence."""
    phrases: list[str] = []
    for reason in _check_reasons(reasons):
        phrase = DROP_PHRASES[reason]
        if phrase not in phrases:
            phrases.append(phrase)
    return ", ".join(phrases) if phrases else DROP_PHRASES[None]


def _subject(count: int) -> tuple[str, str]:
    return ("1 message", "was") if count == 1 else (f"{count} messages", "were")


def render_delivery_notice(state: str, count: int, recipients: Sequence[str] = ()) -> str:
    """PEER-NOTE-1: the receipt notice for the five non-drop states."""
    if type(state) is not str or state not in DELIVERY_PHRASES:
        raise InvalidState(f"state must be one of {', '.join(DELIVERY_PHRASES)}, got {state!r}")
    subject, was = _subject(_check_count(count))
    suffix = recipient_suffix(recipients)
    phrase = DELIVERY_PHRASES[state].format(was=was)
    return f"{NOTICE_TAG} {subject}{suffix} {phrase}. {NOTICE_TRAILER}"


def render_dropped_notice(count: int, recipients: Sequence[str] = (),
                          reasons: Sequence[str | None] = ()) -> str:
    """PEER-NOTE-2: the receipt notice for messages dropped at the ingress guard."""
    subject, was = _subject(_check_count(count))
    suffix = recipient_suffix(recipients)
    described = describe_drop_reasons(reasons)
    return (f"{NOTICE_TAG} {subject}{suffix} {was} dropped by the recipient's ingress guard"
            f" ({described}). {NOTICE_TRAILER}")


def is_receipt_state(value: object) -> bool:
    """PEER-RCPT-4: only members, whatever the type.

    post: __return__ == (type(value) is str and value in ("held", "denied", "expired", "delivered", "refused", "dropped"))
    """  # noqa: E501
    return type(value) is str and value in RECEIPT_STATES


# -- the stateful machine --------------------------------------------------------------

@dataclass(frozen=True)
class DeliveryState:
    """Everything one recipient's peer delivery remembers."""

    recipient: Recipient = Recipient()
    now_ms: int = 0
    box: int = 0
    held: tuple[HeldEntry, ...] = ()
    next_ticket: int = 1
    expiry: ResolvedDialogExpiry = ResolvedDialogExpiry(DIALOG_EXPIRY_DEFAULT, 300_000, False)
    # The ledger behind PEER-RCPT-3: tickets issued, refused at the send station, terminal.
    issued: int = 0
    queue_full: int = 0
    terminal: int = 0


def _check_recipient_args(setting: object, starting_up: object, mode: object) -> None:
    if setting is not ABSENT and setting is not None and not (type(setting) is str and setting in SETTINGS):
        raise InvalidRecipient(f"setting must be accept, hold, refuse or null, got {setting!r}")
    if starting_up is not ABSENT and type(starting_up) is not bool:
        raise InvalidRecipient(f"starting_up must be true or false, got {starting_up!r}")
    if mode is not ABSENT and not _is_mode(mode):
        raise InvalidRecipient(f"mode must be a non-empty string or null, got {mode!r}")


class PeerDelivery:
    """The peer delivery of one recipient session."""

    CONFIG_KEYS: ClassVar[tuple[str, ...]] = (
        "held_cap", "box_cap", "max_hops", "setting", "starting_up", "mode", "options")

    def __init__(self, held_cap: int = DEFAULT_HELD_CAP, box_cap: int = DEFAULT_BOX_CAP,
                 max_hops: int = DEFAULT_MAX_HOPS, recipient: Recipient | None = None,
                 options: DeliveryOptions | None = None) -> None:
        if not _is_positive_safe(held_cap):
            raise InvalidConfig(f"held_cap must be an integer in [1, 2**53 - 1], got {held_cap!r}")
        if not _is_safe_natural(box_cap):
            raise InvalidConfig(f"box_cap must be a non-negative integer, got {box_cap!r}")
        if not _is_safe_natural(max_hops):
            raise InvalidConfig(f"max_hops must be a non-negative integer, got {max_hops!r}")
        recipient = Recipient() if recipient is None else recipient
        if not isinstance(recipient, Recipient):
            raise InvalidConfig(f"recipient must be a Recipient, got {type(recipient).__name__}")
        try:
            _check_recipient_args(recipient.setting, recipient.starting_up, recipient.mode)
        except InvalidRecipient as error:
            raise InvalidConfig(str(error)) from None
        options = DeliveryOptions() if options is None else options
        if not isinstance(options, DeliveryOptions):
            raise InvalidConfig(f"options must be DeliveryOptions, got {type(options).__name__}")
        self.held_cap = held_cap
        self.box_cap = box_cap
        self.max_hops = max_hops
        self.options = options
        self._state = DeliveryState(recipient=recipient)

    @classmethod
    def from_config(cls, config: object) -> PeerDelivery:
        """Build from a conformance ``config`` object (PEER-IF-1)."""
        if not isinstance(config, Mapping):
            raise InvalidConfig(f"config must be an object, got {type(config).__name__}")
        unknown = sorted(str(k) for k in set(config) - set(cls.CONFIG_KEYS))
        if unknown:
            raise InvalidConfig(f"unknown peer-delivery config key(s): {', '.join(unknown)}")
        try:
            _check_recipient_args(config.get("setting"), config.get("starting_up", False),
                                  config.get("mode"))
        except InvalidRecipient as error:
            raise InvalidConfig(str(error)) from None
        recipient = Recipient(config.get("setting"), config.get("starting_up", False), config.get("mode"))
        return cls(held_cap=config.get("held_cap", DEFAULT_HELD_CAP),
                   box_cap=config.get("box_cap", DEFAULT_BOX_CAP),
                   max_hops=config.get("max_hops", DEFAULT_MAX_HOPS),
                   recipient=recipient,
                   options=DeliveryOptions.from_mapping(config.get("options", {})))

    # -- reading ------------------------------------------------------------------------

    @property
    def state(self) -> DeliveryState:
        return self._state

    @property
    def held(self) -> tuple[HeldEntry, ...]:
        return self._state.held

    @property
    def box(self) -> int:
        return self._state.box

    @property
    def now_ms(self) -> int:
        return self._state.now_ms

    def _result(self, before: DeliveryState, receipts: Sequence[Receipt], **extra: Any) -> StepResult:
        terminal = sum(1 for r in receipts if r.state != "held")
        self._state = replace(self._state, terminal=before.terminal + terminal)
        return StepResult(tuple(receipts), self._state.held, self._state.box, **extra)

    def _deadline(self, cause: str) -> int | None:
        ms = self._state.expiry.ms
        if not arms_deadline(cause, self.options) or ms is None:
            return None
        return self._state.now_ms + ms

    # -- events ----------------------------------------------------------------------------

    def send_message(self, sender: object, sender_mode: object = None, attestation: object = "absent",
             hops: object = 0, loop: object = False, duplicate: object = False,
             rate_limited: object = False) -> StepResult:
        """PEER-SEND-1/2, PEER-JUDGE-1..3, PEER-HOLD-1/2."""
        if type(sender) is not str or not sender:
            raise InvalidMessage(f"sender must be a non-empty string, got {sender!r}")
        if not _is_mode(sender_mode):
            raise InvalidMessage(f"sender_mode must be a non-empty string or null, got {sender_mode!r}")
        if type(attestation) is not str or attestation not in ATTESTATIONS:
            raise InvalidMessage(f"attestation must be valid, garbage or absent, got {attestation!r}")
        if not _is_safe_natural(hops):
            raise InvalidMessage(f"hops must be a non-negative integer, got {hops!r}")
        for name, flag in (("loop", loop), ("duplicate", duplicate), ("rate_limited", rate_limited)):
            if type(flag) is not bool:
                raise InvalidMessage(f"{name} must be true or false, got {flag!r}")
        assert isinstance(sender, str) and isinstance(attestation, str) and isinstance(hops, int)
        assert isinstance(loop, bool) and isinstance(duplicate, bool) and isinstance(rate_limited, bool)
        assert sender_mode is None or isinstance(sender_mode, str)
        before = self._state
        ticket = before.next_ticket
        self._state = replace(before, next_ticket=ticket + 1, issued=before.issued + 1)
        if before.box >= self.box_cap:
            self._state = replace(self._state, queue_full=before.queue_full + 1)
            return self._result(before, (), ticket=ticket, send_error="queue_full")
        facts = MessageFacts(sender, sender_mode, attestation, hops, loop, duplicate, rate_limited)
        verdict = judge(facts, before.recipient, self.max_hops)
        if verdict.state == "delivered":
            self._state = replace(self._state, box=before.box + 1)
            receipts = [Receipt(ticket, sender, "delivered")]
        elif verdict.state == "held":
            assert verdict.cause is not None
            entry = HeldEntry(ticket, facts, verdict.cause, self._deadline(verdict.cause))
            held, evicted = hold(before.held, entry, self.held_cap, self.options.fair_eviction)
            self._state = replace(self._state, held=held)
            receipts = [Receipt(ticket, sender, "held", cause=verdict.cause)]
            if evicted is not None:
                receipts.append(Receipt(evicted.ticket, evicted.facts.sender, "expired"))
        else:
            receipts = [Receipt(ticket, sender, verdict.state, reason=verdict.reason)]
        return self._result(before, receipts, ticket=ticket)

    def set_recipient(self, setting: object = ABSENT, starting_up: object = ABSENT,
                      mode: object = ABSENT) -> StepResult:
        """PEER-SET-1: change only what is given; judge nothing."""
        _check_recipient_args(setting, starting_up, mode)
        before = self._state
        current = before.recipient
        recipient = Recipient(
            current.setting if setting is ABSENT else setting,  # type: ignore[arg-type]
            current.starting_up if starting_up is ABSENT else starting_up,  # type: ignore[arg-type]
            current.mode if mode is ABSENT else mode,  # type: ignore[arg-type]
        )
        self._state = replace(before, recipient=recipient)
        return self._result(before, ())

    def set_dialog_expiry(self, value: object = ABSENT) -> StepResult:
        """PEER-EXP-2/3: resolve, announce an invalid value, and put it in force."""
        before = self._state
        resolved = resolve_dialog_expiry(value)
        self._state = replace(before, expiry=resolved)
        return self._result(before, (), expiry=resolved)

    def advance(self, now_ms: object) -> StepResult:
        """PEER-TIME-1: move the clock, then expire what is due."""
        if not _is_safe_natural(now_ms):
            raise InvalidTime(f"now_ms must be an integer in [0, 2**53 - 1], got {now_ms!r}")
        assert isinstance(now_ms, int)
        before = self._state
        if now_ms < before.now_ms:
            raise InvalidTime(f"now_ms {now_ms} is before the current clock {before.now_ms}")
        kept, due = expire_due(before.held, now_ms)
        self._state = replace(before, now_ms=now_ms, held=kept)
        return self._result(before, [Receipt(e.ticket, e.facts.sender, "expired") for e in due])

    def drain(self) -> StepResult:
        """PEER-DRAIN-1..3: judge every waiting-cause entry again, in buffer order."""
        before = self._state
        box = before.box
        kept: list[HeldEntry] = []
        receipts: list[Receipt] = []
        for entry in before.held:
            if is_review_cause(entry.cause):
                kept.append(entry)
                continue
            verdict = judge(entry.facts, before.recipient, self.max_hops, at_ingress=False)
            if verdict.state == "delivered":
                if self.options.release_respects_box_cap and box >= self.box_cap:
                    kept.append(entry)  # PEER-OPT-2: waits for room
                    continue
                box += 1
                receipts.append(Receipt(entry.ticket, entry.facts.sender, "delivered"))
            elif verdict.state == "refused":
                receipts.append(Receipt(entry.ticket, entry.facts.sender, "refused"))
            else:
                assert verdict.cause is not None
                deadline = entry.deadline_ms
                if deadline is None:
                    deadline = self._deadline(verdict.cause)
                kept.append(replace(entry, cause=verdict.cause, deadline_ms=deadline))
        self._state = replace(before, box=box, held=tuple(kept))
        return self._result(before, receipts)

    def _find(self, ticket: object) -> HeldEntry:
        if not _is_positive_safe(ticket):
            raise InvalidTicket(f"ticket must be an integer in [1, 2**53 - 1], got {ticket!r}")
        for entry in self._state.held:
            if entry.ticket == ticket:
                return entry
        raise NotHeld(f"ticket {ticket} is not held")

    def approve(self, ticket: object) -> StepResult:
        """PEER-HOLD-3/5 (PEER-OPT-2 under its option)."""
        entry = self._find(ticket)
        before = self._state
        if self.options.release_respects_box_cap and before.box >= self.box_cap:
            raise BoxFull(f"the box holds {before.box} of {self.box_cap}; ticket {entry.ticket} stays held")
        held = tuple(e for e in before.held if e is not entry)
        self._state = replace(before, held=held, box=before.box + 1)
        return self._result(before, [Receipt(entry.ticket, entry.facts.sender, "delivered")])

    def deny(self, ticket: object) -> StepResult:
        """PEER-HOLD-3/4."""
        entry = self._find(ticket)
        before = self._state
        self._state = replace(before, held=tuple(e for e in before.held if e is not entry))
        return self._result(before, [Receipt(entry.ticket, entry.facts.sender, "denied")])

    def take(self, count: object = 1) -> StepResult:
        """PEER-HOLD-6: the recipient's turn takes messages from its box."""
        taken = _check_count(count)
        before = self._state
        self._state = replace(before, box=before.box - min(taken, before.box))
        return self._result(before, ())

    def ledger_balances(self) -> bool:
        """PEER-RCPT-3: issued = queue_full + terminal + still held."""
        s = self._state
        return s.issued == s.queue_full + s.terminal + len(s.held)

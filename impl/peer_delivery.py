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

import heapq
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final

from .errors import InboxSpecError
from .options import FindingOptions
from .values import check_argument_names, is_positive_safe_integer, is_safe_natural

DEFAULT_HELD_CAP: Final = 100  # PEER-IF-1, the seed's PEER_HELD_QUEUE_CAP
DEFAULT_BOX_CAP: Final = 50  # PEER-IF-1, the accepted delivery queue of the upstream facts
DEFAULT_MAX_HOPS: Final = 4  # PEER-IF-1, this spec's choice

SETTINGS: Final = ("accept", "hold", "refuse")
ATTESTATIONS: Final = ("valid", "garbage", "absent")
RECEIPT_STATES: Final = ("held", "denied", "expired", "delivered", "refused", "dropped")  # PEER-RCPT-1
DROP_REASONS: Final = ("rate-limited", "duplicate", "hop-loop", "hop-runaway", "queue-full")  # PEER-RCPT-2
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


def check_arguments(event: str, args: object, names: Collection[str]) -> Mapping[str, object]:
    """A step's first fault (spec/peer-delivery.md): ``args`` may name only the event's arguments (``names``,
    spec/peer-delivery.interface.json), else ``invalid_argument``. Returns ``args``. (An ``args`` that
    is not an object is a malformed request, which the driver answers before calling this;
    given one anyway, this raises ``invalid_argument`` too.)"""
    return check_argument_names(event, args, names, InvalidArgument)


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

def _is_mode(value: object) -> bool:
    return value is None or (type(value) is str and value != "")


@dataclass(frozen=True)
class DeliveryOptions(FindingOptions):
    """Behaviour changes recommended by the findings. Every default is the seed's."""

    MACHINE = "peer-delivery"
    INVALID_CONFIG = InvalidConfig

    fair_eviction: bool = False  # PEER-F1
    release_respects_box_cap: bool = False  # PEER-F2
    deadline_for_waiting_holds: bool = False  # PEER-F3



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
    """What one stateful event produced (the buffer itself is ``PeerDelivery.held``)."""

    receipts: tuple[Receipt, ...]
    box: int
    ticket: int | None = None
    send_error: str | None = None
    expiry: ResolvedDialogExpiry | None = None


# -- pure core --------------------------------------------------------------------------

# What a host may hand over as a setting: anything JSON can say, or nothing at all.
RawSetting = str | int | float | bool | None | list[Any] | dict[str, Any] | _Absent


def resolve_dialog_expiry(raw: RawSetting) -> ResolvedDialogExpiry:
    """PEER-EXP-2: absent (:data:`ABSENT`), null or "default" give the default, not invalid.

    post: __return__.value in ("60s", "5m", "10m", "never")
    post: __return__.invalid == (not isinstance(raw, str) and raw is not ABSENT and raw is not None or isinstance(raw, str) and raw not in ("default", "60s", "5m", "10m", "never"))
    """  # noqa: E501
    # isinstance, not type(): JSON only ever gives plain str, and symbolic checkers proxy str.
    if isinstance(raw, str) and raw in DIALOG_EXPIRY_MS:
        return ResolvedDialogExpiry(raw, DIALOG_EXPIRY_MS[raw], invalid=False)
    invalid = not (raw is ABSENT or raw is None or (isinstance(raw, str) and raw == "default"))
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


def admit(senders: tuple[str, ...], cap: int, fair: bool) -> int | None:
    """Which entry a hold evicts: ``senders`` is the buffer's senders after the append.

    None while the buffer fits (PEER-HOLD-1); otherwise the oldest entry
    (PEER-HOLD-2), or with ``fair`` the oldest of the sender holding the most
    (PEER-OPT-1).

    pre: cap >= 1
    pre: 1 <= len(senders) <= cap + 1
    post[]:
        # the buffer never exceeds its cap
        len(senders) - (__return__ is not None) <= cap
        # an entry is evicted only past the cap, and never the new one
        (__return__ is None) == (len(senders) <= cap) and __return__ != len(senders) - 1
        # without the option, eviction takes the oldest
        fair or __return__ is None or __return__ == 0
        # with it, the evicted sender holds at least as many entries as any other
        not fair or __return__ is None or all(senders.count(senders[__return__]) >= senders.count(s) for s in senders)
    """  # noqa: E501
    if len(senders) <= cap:
        return None
    if not fair:
        return 0
    counts = Counter(senders)
    most = max(counts.values())
    return next(i for i, s in enumerate(senders) if counts[s] == most)


def due_positions(deadlines: tuple[int | None, ...], now_ms: int) -> tuple[int, ...]:
    """PEER-TIME-1: the buffer positions whose deadline has come, in buffer order.

    post[]:
        # only an entry with a deadline that has come expires
        all(deadlines[i] is not None and deadlines[i] <= now_ms for i in __return__)
        # no entry whose deadline has come stays
        all(d is None or d > now_ms for i, d in enumerate(deadlines) if i not in __return__)
        # in buffer order, each once
        list(__return__) == sorted(set(__return__))
    """
    return tuple(i for i, deadline in enumerate(deadlines) if deadline is not None and deadline <= now_ms)


def arms_deadline(cause: str, options: DeliveryOptions) -> bool:
    """PEER-EXP-4, PEER-OPT-3."""
    return is_review_cause(cause) or options.deadline_for_waiting_holds


# -- rendering ---------------------------------------------------------------------------

def render_label(raw: str) -> str:
    """PEER-LABEL-1: one line, no tag or quote characters, at most 48 code points.

    post: "\\n" not in __return__ and "[" not in __return__ and "]" not in __return__ and len(__return__) <= 48 and __return__ == __return__.strip(" ")
    """  # noqa: E501
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
    if not is_positive_safe_integer(count):
        raise InvalidCount(f"count must be an integer in [1, 2**53 - 1], got {count!r}")
    assert isinstance(count, int)
    return count


def recipient_suffix(recipients: Sequence[str]) -> str:
    """PEER-NOTE-4: unique non-empty labels, at most three named."""
    # Each label once, in first-seen order, by a dict's keys: looked up in a list, one step of
    # 40,000 recipients took 7.7 s.
    labels = list(dict.fromkeys(label for label in map(render_label, _check_recipients(recipients)) if label))
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

    post: __return__ == (isinstance(value, str) and value in ("held", "denied", "expired", "delivered", "refused", "dropped"))
    """  # noqa: E501
    return isinstance(value, str) and value in RECEIPT_STATES


# -- the stateful machine --------------------------------------------------------------

@dataclass(frozen=True)
class DeliveryState:
    """A snapshot of everything one recipient's peer delivery remembers (for tests and hosts)."""

    recipient: Recipient
    now_ms: int
    box: int
    held: tuple[HeldEntry, ...]
    next_ticket: int
    expiry: ResolvedDialogExpiry
    # The ledger behind PEER-RCPT-3: tickets issued, refused at the send station, terminal.
    issued: int
    queue_full: int
    terminal: int


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
        if not is_positive_safe_integer(held_cap):
            raise InvalidConfig(f"held_cap must be an integer in [1, 2**53 - 1], got {held_cap!r}")
        if not is_safe_natural(box_cap):
            raise InvalidConfig(f"box_cap must be a non-negative integer, got {box_cap!r}")
        if not is_safe_natural(max_hops):
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
        self._recipient = recipient
        self._now_ms = 0
        self._box = 0
        # Arrival order is ticket order, and a held entry never moves: an ordered map by
        # ticket gives O(1) hold, eviction of the oldest, approve and deny.
        self._held: OrderedDict[int, HeldEntry] = OrderedDict()
        # Armed deadlines, earliest first; entries that left the buffer are skipped lazily.
        self._deadlines: list[tuple[int, int]] = []
        self._next_ticket = 1
        self._expiry = resolve_dialog_expiry(ABSENT)
        self._issued = self._queue_full = self._terminal = 0

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
        return DeliveryState(self._recipient, self._now_ms, self._box, self.held, self._next_ticket,
                             self._expiry, self._issued, self._queue_full, self._terminal)

    @property
    def held(self) -> tuple[HeldEntry, ...]:
        """The buffer, oldest first."""
        return tuple(self._held.values())

    @property
    def held_count(self) -> int:
        """How many messages the buffer holds, without copying it (the host counts it at every step)."""
        return len(self._held)

    @property
    def box(self) -> int:
        return self._box

    @property
    def now_ms(self) -> int:
        return self._now_ms

    def _result(self, receipts: Sequence[Receipt], **extra: Any) -> StepResult:
        self._terminal += sum(1 for r in receipts if r.state != "held")
        return StepResult(tuple(receipts), self._box, **extra)

    def _deadline(self, cause: str) -> int | None:
        ms = self._expiry.ms
        if not arms_deadline(cause, self.options) or ms is None:
            return None
        return self._now_ms + ms

    def _put(self, entry: HeldEntry) -> None:
        self._held[entry.ticket] = entry
        if entry.deadline_ms is not None:
            heapq.heappush(self._deadlines, (entry.deadline_ms, entry.ticket))

    def _pop(self, ticket: int) -> HeldEntry:
        return self._held.pop(ticket)

    def _victim(self) -> int:
        """The ticket an eviction takes (PEER-HOLD-2; PEER-OPT-1 walks the buffer)."""
        oldest = next(iter(self._held))
        if not self.options.fair_eviction:
            return oldest
        senders = tuple(e.facts.sender for e in self._held.values())
        position = admit(senders, self.held_cap, fair=True)
        assert position is not None
        return list(self._held)[position]

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
        if not is_safe_natural(hops):
            raise InvalidMessage(f"hops must be a non-negative integer, got {hops!r}")
        for name, flag in (("loop", loop), ("duplicate", duplicate), ("rate_limited", rate_limited)):
            if type(flag) is not bool:
                raise InvalidMessage(f"{name} must be true or false, got {flag!r}")
        assert isinstance(sender, str) and isinstance(attestation, str) and isinstance(hops, int)
        assert isinstance(loop, bool) and isinstance(duplicate, bool) and isinstance(rate_limited, bool)
        assert sender_mode is None or isinstance(sender_mode, str)
        ticket = self._next_ticket
        self._next_ticket += 1
        self._issued += 1
        if self._box >= self.box_cap:
            self._queue_full += 1
            return self._result((), ticket=ticket, send_error="queue_full")
        facts = MessageFacts(sender, sender_mode, attestation, hops, loop, duplicate, rate_limited)
        verdict = judge(facts, self._recipient, self.max_hops)
        if verdict.state == "delivered":
            self._box += 1
            receipts = [Receipt(ticket, sender, "delivered")]
        elif verdict.state == "held":
            assert verdict.cause is not None
            self._put(HeldEntry(ticket, facts, verdict.cause, self._deadline(verdict.cause)))
            receipts = [Receipt(ticket, sender, "held", cause=verdict.cause)]
            if self.held_count > self.held_cap:
                evicted = self._pop(self._victim())
                receipts.append(Receipt(evicted.ticket, evicted.facts.sender, "expired"))
        else:
            receipts = [Receipt(ticket, sender, verdict.state, reason=verdict.reason)]
        return self._result(receipts, ticket=ticket)

    def set_recipient(self, setting: object = ABSENT, starting_up: object = ABSENT,
                      mode: object = ABSENT) -> StepResult:
        """PEER-SET-1: change only what is given; judge nothing."""
        _check_recipient_args(setting, starting_up, mode)
        current = self._recipient
        self._recipient = Recipient(
            current.setting if setting is ABSENT else setting,  # type: ignore[arg-type]
            current.starting_up if starting_up is ABSENT else starting_up,  # type: ignore[arg-type]
            current.mode if mode is ABSENT else mode,  # type: ignore[arg-type]
        )
        return self._result(())

    def set_dialog_expiry(self, value: RawSetting = ABSENT) -> StepResult:
        """PEER-EXP-2/3: resolve, announce an invalid value, and put it in force."""
        self._expiry = resolve_dialog_expiry(value)
        return self._result((), expiry=self._expiry)

    def advance(self, now_ms: object) -> StepResult:
        """PEER-TIME-1: move the clock, then expire what is due, in buffer order."""
        if not is_safe_natural(now_ms):
            raise InvalidTime(f"now_ms must be an integer in [0, 2**53 - 1], got {now_ms!r}")
        assert isinstance(now_ms, int)
        if now_ms < self._now_ms:
            raise InvalidTime(f"now_ms {now_ms} is before the current clock {self._now_ms}")
        self._now_ms = now_ms
        candidates: list[HeldEntry] = []
        while self._deadlines and self._deadlines[0][0] <= now_ms:
            deadline, ticket = heapq.heappop(self._deadlines)
            entry = self._held.get(ticket)
            if entry is not None and entry.deadline_ms == deadline:  # else it left, or was re-armed
                candidates.append(entry)
        candidates.sort(key=lambda e: e.ticket)  # ticket order is buffer order
        due = due_positions(tuple(e.deadline_ms for e in candidates), now_ms)
        return self._result([Receipt(e.ticket, e.facts.sender, "expired")
                             for e in (self._pop(candidates[i].ticket) for i in due)])

    def drain(self) -> StepResult:
        """PEER-DRAIN-1..3: judge every waiting-cause entry again, in buffer order."""
        receipts: list[Receipt] = []
        for entry in list(self._held.values()):
            if is_review_cause(entry.cause):
                continue
            verdict = judge(entry.facts, self._recipient, self.max_hops, at_ingress=False)
            if verdict.state == "delivered":
                if self.options.release_respects_box_cap and self._box >= self.box_cap:
                    continue  # PEER-OPT-2: waits for room
                self._pop(entry.ticket)
                self._box += 1
                receipts.append(Receipt(entry.ticket, entry.facts.sender, "delivered"))
            elif verdict.state == "refused":
                self._pop(entry.ticket)
                receipts.append(Receipt(entry.ticket, entry.facts.sender, "refused"))
            else:
                assert verdict.cause is not None
                deadline = entry.deadline_ms
                if deadline is None:
                    deadline = self._deadline(verdict.cause)
                    if deadline is not None:
                        heapq.heappush(self._deadlines, (deadline, entry.ticket))
                self._held[entry.ticket] = replace(entry, cause=verdict.cause, deadline_ms=deadline)
        return self._result(receipts)

    def _find(self, ticket: object) -> HeldEntry:
        if not is_positive_safe_integer(ticket):
            raise InvalidTicket(f"ticket must be an integer in [1, 2**53 - 1], got {ticket!r}")
        entry = self._held.get(ticket)  # type: ignore[call-overload]
        if entry is None:
            raise NotHeld(f"ticket {ticket} is not held")
        assert isinstance(entry, HeldEntry)
        return entry

    def approve(self, ticket: object) -> StepResult:
        """PEER-HOLD-3/5 (PEER-OPT-2 under its option)."""
        entry = self._find(ticket)
        if self.options.release_respects_box_cap and self._box >= self.box_cap:
            raise BoxFull(f"the box holds {self._box} of {self.box_cap}; ticket {entry.ticket} stays held")
        self._pop(entry.ticket)
        self._box += 1
        return self._result([Receipt(entry.ticket, entry.facts.sender, "delivered")])

    def deny(self, ticket: object) -> StepResult:
        """PEER-HOLD-3/4."""
        entry = self._pop(self._find(ticket).ticket)
        return self._result([Receipt(entry.ticket, entry.facts.sender, "denied")])

    def take(self, count: object = 1) -> StepResult:
        """PEER-HOLD-6: the recipient's turn takes messages from its box."""
        taken = _check_count(count)
        self._box -= min(taken, self._box)
        return self._result(())

    def ledger_balances(self) -> bool:
        """PEER-RCPT-3: issued = queue_full + terminal + still held."""
        return self._issued == self._queue_full + self._terminal + len(self._held)

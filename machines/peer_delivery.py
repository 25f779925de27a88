"""Peer delivery in the machine frame: its registry entry and how to explore it.

Snapshot
    A ``PeerState``: its fields up to ``expiry_ms`` identify a state. ``held``
    lists the buffer oldest first as ``HeldView`` entries (sender, sender mode,
    attestation, cause, ms to the deadline or None). Ticket numbers and the
    clock are not part of a state: held messages are interchangeable
    identities and only the time left to each deadline matters. They ride
    along, uncompared, as three more fields (the concrete tickets of the held
    entries, the next ticket, the clock) so that the chart's outputs, which
    print them, are those of a real run, and every explored path replays on
    the reference exactly (refinement, generated cases). Letters name held
    entries by position and time by delay (``Position``, ``After`` in the
    model), never by ticket or instant.

Time
    ``advance`` moves the clock by 5 min, the default ``dialogExpiry``. A
    deadline is armed 60 s, 5 min or never after a hold, so after one move it
    has passed: the relative deadlines stay in {60 s, 5 min} and the space is
    finite. Which of two armed deadlines passes first, and the exact
    millisecond of an expiry, are pinned by the written cases, not here.

Bounds (``--bound NAME=VALUE``) and why they suffice
    ``held_cap`` (default 2): an eviction needs cap + 1 holds and an unfair
    one needs two senders with unequal counts; 2 is the smallest cap with
    both (A, B, B evicts A's only entry). Each entry is judged on its own, so
    a longer buffer only repeats the same per-entry behaviour.
    ``box_cap`` (default 1): the smallest box that both accepts a message and
    refuses the next at the send station, and that a release can overrun.
    ``senders`` (default ``a,b``): eviction fairness compares senders, and two
    are the fewest that can be compared; judgement never reads the sender.
    ``dialogExpiry`` starts at its default (5 min) and may be set to 60 s or
    ``never``: the three deadlines a hold can get (PEER-EXP-1); 10 min behaves
    as 5 min does at this clock step, and going back to 5 min reaches no
    behaviour the start has not.
    The recipient's mode class is ``x`` or none; the first sender asserts
    ``x`` (matching) or ``y`` (a mismatch), or garbles its attestation, and
    sends each drop; the others only send mismatches, which is all that
    eviction needs of them. ``starting_up`` is explored with the setting
    unset, the one setting under which it is read (PEER-JUDGE-1 P5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from inboxspec.machines import frame, peer_delivery_driver
from inboxspec.machines.frame import Action, Bounds, Invariant
from inboxspec.model.peer_delivery import (
    DEFAULT_EXPIRY,
    EXPIRY,
    REVIEW,
    After,
    Entry,
    PeerDeliveryChart,
    PeerDeliveryModelOptions,
    Position,
)


class HeldView(NamedTuple):
    """A held entry as a state sees it: no ticket, and its deadline relative to the clock."""

    sender: str
    sender_mode: str | None
    attestation: str
    cause: str
    deadline_in: int | None  # ms to the deadline, or None when it has none


class PeerState(NamedTuple):
    control: str
    box: int
    held: tuple[HeldView, ...]  # oldest first
    setting: str | None
    starting_up: bool
    mode: str | None
    expiry_ms: int | None
    # The concrete names of the path that first reached the state (not compared, see Snapshot).
    tickets: tuple[int, ...]
    next_ticket: int
    now_ms: int


# The fields that identify a state; the rest are concrete names.
COMPARED = PeerState._fields.index("tickets")
_new = tuple.__new__


class Snapshot(PeerState):
    """A ``PeerState`` equal and hashed on the fields before ``tickets`` only.

    The last three are the concrete ticket numbers and clock of the path that
    first reached the state, which the chart's outputs print but its behaviour
    never reads.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, tuple) and tuple.__eq__(self[:COMPARED], other[:COMPARED])

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self[:COMPARED])


# The causes whose held entries a state keeps without their sender's mode and attestation.
FORGETS_JUDGEMENT_INPUTS = REVIEW
DEFAULT_EXPIRY_MS = EXPIRY[DEFAULT_EXPIRY]
assert DEFAULT_EXPIRY_MS is not None
STEP: int = DEFAULT_EXPIRY_MS  # the clock's one move: the default dialogExpiry
RECIPIENT_MODE = "x"
INTERFACE = peer_delivery_driver.INTERFACE
SEND = INTERFACE.events["send_message"]
SEND_DEFAULTS = SEND.defaults()  # read only (concretize compares with it)
OPTIONS = INTERFACE.options


def _send(sender: str, **changes: Any) -> dict[str, Any]:
    """A send's every argument: the interface's defaults, with the recipient's mode asserted."""
    return SEND.with_defaults({"sender": sender, "sender_mode": RECIPIENT_MODE, **changes})


# -- invariants ------------------------------------------------------------------------
# `applies` is decided once per letter; `holds` runs on every step of that letter with
# (pre, post, output, bounds), or once per state reached for an `of_state` one, which reads
# `post` alone. They run on every explored step, so each leaves as soon as its answer is
# known (most steps carry no receipt, or one).

def _no_message_is_lost(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    """Issued by this step = refused at the send station + terminal receipts + growth of the buffer."""
    issued = 1 if "ticket" in out else 0
    queue_full = 1 if out.get("send_error") == "queue_full" else 0
    terminal = 0
    for receipt in out.get("receipts", ()):
        if receipt["state"] != "held":
            terminal += 1
    return issued == queue_full + terminal + len(post.held) - len(pre.held)


def _one_terminal_receipt_each(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    """A terminal receipt names a ticket that was held or is new, once, and it is held no longer."""
    receipts = out.get("receipts")
    if not receipts:
        return True  # most steps tell no receipt
    tickets = [r["ticket"] for r in receipts if r["state"] != "held"]
    if not tickets:
        return True
    known = set(pre.tickets) | ({out["ticket"]} if "ticket" in out else set())
    still_held = {entry["ticket"] for entry in out["held"]}
    return len(tickets) == len(set(tickets)) and set(tickets) <= known and not set(tickets) & still_held


def _evicted(out: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [r for r in out.get("receipts", ()) if r["state"] == "expired"]


def _eviction_takes_the_oldest(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    for receipt in out.get("receipts", ()):
        if receipt["state"] == "expired" and receipt["ticket"] != pre.tickets[0]:
            return False
    return True


def _eviction_spares_the_smaller_sender(pre: Snapshot, post: Snapshot, out: Mapping[str, Any],
                                        bounds: Bounds) -> bool:
    evicted = _evicted(out)
    if not evicted:
        return True
    senders = [entry.sender for entry in pre.held] + [out["receipts"][0]["sender"]]
    victim = evicted[0]["sender"]
    return all(senders.count(victim) >= senders.count(s) for s in senders)


def _only_review_holds_expire(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    if not out["receipts"]:
        return True
    causes = dict(zip(pre.tickets, (entry.cause for entry in pre.held), strict=True))
    return all(causes[r["ticket"]] in REVIEW for r in out["receipts"])


def _deadlines_only_for_review(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return all(entry.deadline_in is None or entry.cause in REVIEW for entry in post.held)


def _every_hold_has_a_deadline(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    receipts = out.get("receipts", ())
    if not receipts or receipts[0]["state"] != "held" or post.expiry_ms is None:
        return True
    ticket = receipts[0]["ticket"]
    return all(entry["deadline_ms"] is not None for entry in out["held"] if entry["ticket"] == ticket)


def _held_views(rows: list[Entry], now: int) -> tuple[tuple[HeldView, ...], tuple[int, ...]]:
    """The model's held rows as a state keeps them: their views, and their tickets apart."""
    forgets = FORGETS_JUDGEMENT_INPUTS
    # WARNING: a review-cause entry is never judged again (model/peer_delivery.py's
    # _drain_outcomes), so its sender's mode and attestation are never read again: they
    # are dropped from the snapshot. tests/test_explorer_abstractions.py checks it.
    # (``_new`` is ``tuple.__new__``: the named tuple's own field order, without its
    # Python-level constructor.)
    held = tuple([_new(HeldView, (sender, None, "absent", cause,
                                  None if deadline is None else deadline - now))
                  if cause in forgets else
                  _new(HeldView, (sender, mode, attestation, cause,
                                  None if deadline is None else deadline - now))
                  for _ticket, sender, mode, attestation, cause, deadline in rows])
    return held, tuple([row.ticket for row in rows])


def _sends(action: Action) -> bool:
    return action.event == "send_message"


def _any(action: Action) -> bool:
    return True


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("no_message_is_lost", ("PEER-RCPT-3", "PEER-SEND-2"), _any, _no_message_is_lost),
    Invariant("one_terminal_receipt_each", ("PEER-RCPT-3",), _any, _one_terminal_receipt_each),
    Invariant("held_buffer_within_cap", ("PEER-HOLD-1",), _any,
              lambda pre, post, out, bounds: len(post.held) <= bounds["held_cap"], of_state=True),
    # WARNING: each replaced_by is stated by its option's requirement in spec/peer-delivery.md
    # (PEER-OPT-1, PEER-OPT-3); tests/test_replaced_invariants.py checks that they agree.
    Invariant("eviction_takes_the_oldest", ("PEER-HOLD-2",), _sends, _eviction_takes_the_oldest,
              replaced_by=("fair_eviction",)),
    Invariant("only_review_holds_expire_by_clock", ("PEER-DRAIN-3", "PEER-TIME-1"),
              lambda a: a.event == "advance", _only_review_holds_expire,
              replaced_by=("deadline_for_waiting_holds",)),
    Invariant("deadlines_only_for_review_causes", ("PEER-EXP-4",), _any, _deadlines_only_for_review,
              of_state=True, replaced_by=("deadline_for_waiting_holds",)),
    Invariant("eviction_spares_the_smaller_sender", ("PEER-OPT-1", "PEER-HOLD-2"), _sends,
              _eviction_spares_the_smaller_sender, finding="PEER-F1", option="fair_eviction"),
    Invariant("box_never_exceeds_cap", ("PEER-OPT-2", "PEER-HOLD-5"), _any,
              lambda pre, post, out, bounds: post.box <= bounds["box_cap"], of_state=True,
              finding="PEER-F2", option="release_respects_box_cap"),
    Invariant("every_hold_has_a_deadline", ("PEER-OPT-3", "PEER-EXP-4"), _sends, _every_hold_has_a_deadline,
              finding="PEER-F3", option="deadline_for_waiting_holds"),
)


# The largest held_cap, box_cap and number of senders explored: the states grow combinatorially
# with each (held_cap 2 gives 12,822 states; 3, more than 200,000) and the alphabet linearly (two
# letters per held position), so past this a bound given by mistake is refused at once instead of
# filling memory (the explorer's MAX_STATES stops the rest).
MAX_BOUND = 6


class PeerDeliveryExplorer:
    variables: tuple[str, ...] = PeerState._fields
    default_bounds: Mapping[str, str] = {"held_cap": "2", "box_cap": "1", "senders": "a,b"}
    options: tuple[str, ...] = OPTIONS
    invariants: tuple[Invariant, ...] = INVARIANTS
    unobservable_events: frozenset[str] = frozenset()

    def __init__(self) -> None:
        # The last snapshot `load` built held rows for, those rows and their clock, and (once
        # `store` has met them) their views, with the forgotten causes they were made under.
        self._rows_of: Snapshot | None = None
        self._rows: list[tuple[Any, ...]] = []
        self._rows_now: int | None = None
        self._views: tuple[Any, tuple[HeldView, ...], tuple[int, ...]] | None = None

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        merged = frame.merged_bounds("peer-delivery", self.default_bounds, raw)
        try:
            held_cap = frame.bound_integer(merged["held_cap"])
            box_cap = frame.bound_integer(merged["box_cap"])
        except ValueError as error:
            raise ValueError(f"peer-delivery caps are integers: {error}") from error
        senders = tuple(s for s in merged["senders"].split(",") if s)
        if held_cap < 1 or box_cap < 0 or not senders or len(set(senders)) != len(senders):
            raise ValueError("peer-delivery bounds: held_cap >= 1, box_cap >= 0, distinct senders")
        if max(held_cap, box_cap, len(senders)) > MAX_BOUND:
            raise ValueError(f"peer-delivery caps and senders above {MAX_BOUND} are beyond an "
                             f"exhaustive search")
        return {"held_cap": held_cap, "box_cap": box_cap, "senders": senders}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        first, *others = bounds["senders"]
        max_hops = INTERFACE.config_key("max_hops").default
        letters = [
            Action(f"send {first} x", "send_message", _send(first)),
            Action(f"send {first} y", "send_message", _send(first, sender_mode="y")),
            Action(f"send {first} garbage", "send_message", _send(first, attestation="garbage")),
        ]
        # Each host verdict a send carries (loop, duplicate, ...), alone, then one past
        # the default max_hops: a runaway.
        letters += [Action(f"send {first} {flag.replace('_', '-')}", "send_message",
                           _send(first, **{flag: True})) for flag in peer_delivery_driver.INGRESS_FLAGS]
        runaway = max_hops + 1
        letters.append(Action(f"send {first} hops {runaway}", "send_message", _send(first, hops=runaway)))
        letters += [Action(f"send {other} y", "send_message", _send(other, sender_mode="y"))
                    for other in others]
        recipients = [("unset", None, False, RECIPIENT_MODE), ("unset starting", None, True, RECIPIENT_MODE),
                      ("unset no-mode", None, False, None), ("accept", "accept", False, RECIPIENT_MODE),
                      ("hold", "hold", False, RECIPIENT_MODE), ("refuse", "refuse", False, RECIPIENT_MODE)]
        letters += [Action(f"set_recipient {label}", "set_recipient",
                           {"setting": setting, "starting_up": starting, "mode": mode})
                    for label, setting, starting, mode in recipients]
        letters += [Action(f"set_dialog_expiry {v}", "set_dialog_expiry", {"value": v})
                    for v in ("60s", "never")]
        letters.append(Action("advance +5 min", "advance", {"now_ms": After(STEP)}))
        letters.append(Action("drain", "drain"))
        # One position past the cap names a ticket that is never held.
        for position in range(1, bounds["held_cap"] + 2):
            letters.append(Action(f"approve #{position}", "approve", {"ticket": Position(position)}))
            letters.append(Action(f"deny #{position}", "deny", {"ticket": Position(position)}))
        letters.append(Action("take 1", "take", {"count": 1}))
        return letters

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"held_cap": bounds["held_cap"], "box_cap": bounds["box_cap"], "mode": RECIPIENT_MODE,
                "options": PeerDeliveryModelOptions(**options)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.held_cap = bounds["held_cap"]
        data.box_cap = bounds["box_cap"]
        data.max_hops = INTERFACE.config_key("max_hops").default
        data.options = PeerDeliveryModelOptions(**options)

    def initial(self, bounds: Bounds) -> Snapshot:
        return Snapshot(control="open", box=0, held=(), setting=None, starting_up=False, mode=RECIPIENT_MODE,
                        expiry_ms=DEFAULT_EXPIRY_MS, tickets=(), next_ticket=1, now_ms=0)

    def load(self, data: Any, snapshot: Snapshot) -> None:
        (_control, data.box, held, data.setting, data.starting_up, data.mode, data.expiry_ms,
         tickets, data.next_ticket, now) = snapshot
        data.now_ms = now
        if not held:
            data.held = []
            return
        # The explorer loads one snapshot once per letter, so the rows of the last one are kept
        # (a pure function of the snapshot, which is immutable); each load gets its own list.
        if snapshot is not self._rows_of:
            # The model's own held rows (``Entry``: the named tuple's field order, without its
            # Python-level constructor).
            self._rows = [_new(Entry, (ticket, sender, mode, attestation, cause,
                                       None if deadline_in is None else now + deadline_in))
                          for ticket, (sender, mode, attestation, cause, deadline_in)
                          in zip(tickets, held, strict=True)]
            self._rows_of, self._rows_now, self._views = snapshot, now, None
        data.held = self._rows.copy()

    def store(self, data: Any, state: str) -> Snapshot:
        now, rows = data.now_ms, data.held
        held: tuple[HeldView, ...] = ()
        tickets: tuple[int, ...] = ()
        if not rows:
            pass
        elif now == self._rows_now and rows == self._rows:
            # Most letters leave the loaded buffer as it was: its views are worked out once.
            # (Keyed on the rows' content and the clock, of which the views are a pure function.)
            if self._views is None or self._views[0] is not FORGETS_JUDGEMENT_INPUTS:
                self._views = (FORGETS_JUDGEMENT_INPUTS, *_held_views(rows, now))
            _forgets, held, tickets = self._views
        else:
            held, tickets = _held_views(rows, now)
        return _new(Snapshot, (state, data.box, held, data.setting, data.starting_up, data.mode,
                               data.expiry_ms, tickets, data.next_ticket, now))

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return frame.with_options({"held_cap": bounds["held_cap"], "box_cap": bounds["box_cap"],
                                  "mode": RECIPIENT_MODE}, options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """Positions become the tickets, and delays the instants, of each step's own state."""
        steps: list[dict[str, Any]] = []
        defaults = SEND_DEFAULTS
        for pre, action, _post in trace:
            args = dict(action.kwargs)
            tickets, next_ticket, now = pre.tickets, pre.next_ticket, pre.now_ms
            if action.event == "advance":
                args = {"now_ms": now + args["now_ms"].ms}
            elif action.event in ("approve", "deny"):
                index = args["ticket"].index
                args = {"ticket": tickets[index - 1] if index <= len(tickets) else next_ticket + index}
            elif action.event == "send_message":
                args = {k: v for k, v in args.items() if k not in defaults or v != defaults[k]}
            steps.append(frame.case_step(action.event, args))
        return steps


MACHINE = frame.bundled_machine(
    name="peer-delivery", title="peer delivery", seed="001_08883a16a8c012a7.txt",
    chart=PeerDeliveryChart, driver=peer_delivery_driver, explorer=PeerDeliveryExplorer(),
)

"""The host in the machine frame: its registry entry and how to explore it.

Snapshot
    ``Snapshot(control, sessions)``: one ``SessionView`` per session in
    canonical order, each with its reminders not yet due, in due
    order. A session is its phase, its turn's action count, the held count its
    idle half was last told, its pending mail (each ``Mail`` keeps the true
    origin beside the claimed sender), the number of waiting harness lines and
    the three parts: the gate ``(state, streak, age)``, the peer delivery
    ``(state, setting, box, held)`` with each held entry's true origin and
    text, and the idle halves ``(state, outstanding, subscribers, fire_in,
    finished, held)``.

Canonical form, and why each merge is exact
    * Time: the clock is not stored. Every time is relative to it (``load``
      puts every part's clock at 0): ages of outstanding subscriptions and
      subscribers (always below the TTL, at which they leave), the time until
      the armed fire and until each reminder, and the age of the gate's last
      self-wake, **capped at the floor**: the gate compares it with the floor
      alone (WAKE-CAD-1) and the host clock never goes back, so every age at or
      past the floor behaves alike (``tests/test_explorer_abstractions.py``).
    * The last turn's finish time reaches only the idle answer's
      ``finished_at`` and its notice text, never a decision: it is stored as
      whether there is one (``finished``), loaded as the clock. Outputs then
      show the time a replay gives, not the time the state was first reached.
    * Order: pending mail and reminders are stored sorted. No rule reads the
      order of pending mail (the gate asks whether some message is of a kind,
      the turn takes all of it, and records show counts), and reminders that
      fall due in one ``advance`` join that unordered mail.
    * Texts: a harness line's text is read by no one once it is pending (the
      gate reads only the `[scheduled] ` prefix, which no notice has; a wake
      record shows counts), so pending lines keep their kind only and waiting
      lines are counted.
    * Tickets and subscription ids are renumbered in order of appearance:
      the charts compare them only with each other, and the letters name held
      entries by position (``Position``).
    * Sessions are interchangeable (symmetry). Each session's view names the
      others relative to itself (``me``, ``+1``, ``+2``: the session so many
      places after it in config order), so a rotation of the sessions only
      reorders the views and a reflection mirrors the relative names; with two
      or three sessions these are every permutation. The snapshot is the least
      sequence of views over them (``canonical``): each view is built once
      (twice for three sessions), never renamed and compared through ``repr``.
      Subscription ids are then numbered in order of appearance. ``tick``
      visits sessions in config order, which orders its records but not its
      successor states, since no session's decision reads another's.
      A letter's label names sessions by their place in the snapshot it
      leaves; ``readable`` (the printed traces) and ``concretize`` (cases)
      replay a trace and follow the renaming from step to step, so that
      each session keeps one address.
    * An idle session's turn-action count is stored as 0 (read only in a turn,
      reset by a wake), and a rejected step's snapshot is the one loaded
      (HOST-IF-4; ``tests/test_host_explorer.py`` checks both).

Steps taken from a memo
    A step that is a function of one session's view (a rejection by the
    host's own guards, a typed line, a turn end, and each session's part of
    a tick or of an advance that reaches across no sessions) is fired once
    per view and then taken from ``machines/host_steps.py``'s memo, which
    says why each is; ``tests/test_host_steps.py`` shows it exact.

Bounds (``--bound NAME=VALUE``), and the small-scope argument
    ``sessions`` (2)    two sessions are the least that ping-pong; three
                        (``--bound sessions=3``) add loops through a third
                        session, the upstream three-agent storms;
    ``max_streak`` (1)  the gate decides by ``streak < max_streak`` alone, so
                        a cap of 1 shows the refusal, the episode and its
                        announcement; a cycle that keeps waking past a cap of 1
                        keeps waking past any cap, because it must reset the
                        streak to repeat;
    ``floor_ms`` (1)    the gate compares a self-wake's age with the floor
                        alone (WAKE-CAD-1); with 1 ms clock steps a floor of 1
                        separates a rapid self-wake (same instant) from an
                        exempt one (a step later);
    ``box_cap`` (1), ``held_cap`` (1)  the least that show ``queue_full`` and
                        an eviction;
    ``hand`` (0)        1 adds the recipient user's letters (approve and deny
                        the oldest held message, set a session's setting to
                        hold or accept); by default the only hand is typed
                        input. Held entries are stored without their expiry
                        deadline (never reached in the explored window);
    ``reminders`` (0)   1 adds the ``schedule`` letters (a reminder a floor
                        ahead, ``reminder_limit`` 1 waiting per session):
                        the reminders a session really schedules are the
                        exemption of HOST-INV-1, not a way to break it;
    ``subscriptions`` (1)  a turn subscribes only while no subscription is
                        outstanding or subscribed anywhere: one subscription
                        at a time is what HOST-INV-4 speaks of (one target,
                        one requester, one answer); 2 lifts the restriction
                        (displacement, the caps), 0 removes ``subscribe``;
    ``forgeries`` (1)   a turn forges ``[scheduled] `` mail only while no
                        forged message is pending anywhere: HOST-F1's loop
                        carries one forgery at a time; 2 lifts it, 0 removes
                        forged sends;
    ``turn_action_limit`` (1)  one action per turn; a turn of more actions is
                        a sequence of such turns as far as any other session can
                        tell, except that it wakes once;
    typed lines         the user types at a session only while none of their
                        lines is pending there (``Action.when``): a second line
                        joins the same batch, whose decision reads only whether
                        some message is user-kind (WAKE-LANE-1), and the turn
                        takes them all; only counts in the outputs differ.
                        Without this bound typed lines pile up without end;
    idle subscriptions use debounce 1 ms, back-off 1 ms and TTL 2 ms (the
    rules compare these times only with each other; a subscription answered
    at the debounce is answered before its TTL), one outstanding
    subscription and one subscriber per session, no priors.

Coverage explorations (``coverage_bounds``)
    With ``hand`` and ``reminders`` at 0 the default exploration never sends
    ``approve``, ``deny``, ``set_setting`` or ``schedule``, and turning either
    on at the other defaults does not exhaust in minutes. The generated cases
    reach those transitions in two small explorations instead, each with
    ``box_cap`` 0 (every send is refused ``queue_full``, so no peer mail is
    ever delivered), no forgeries and no subscriptions; neither the hand's
    letters nor ``schedule`` need delivered mail to reach any of their rows:
    ``hand=1`` (406 states) reaches ``approve``, ``deny`` and
    ``set_setting``; ``reminders=1`` (3,613 states) reaches the four rows of
    ``schedule`` (outside a turn, past the turn's budget, at the reminder
    limit, booked). Each exhausts in about a second. They serve the cases
    only: the properties are checked at the default bounds.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any, NamedTuple, cast

from inboxspec.machines import frame, host_driver
from inboxspec.machines.frame import Action, Bounds, ForeverProperty, HashedOnce, Invariant, any_step
from inboxspec.model.host import HostChart, HostModelOptions, InFlight, Mail, Parts, Reminder, SessionData
from inboxspec.model.idle_subscriptions import Outstanding, Subscriber
from inboxspec.model.peer_delivery import Entry, Position

INTERFACE = host_driver.INTERFACE
ADDRESSES = ("s1", "s2", "s3")
LINE_TEXT = "(a harness line)"  # what a pending line's text is stored as (see Canonical form)
TERMINAL = ("dropped", "refused", "denied", "expired")
HAND = frozenset({"user_input", "approve", "deny", "set_setting"})  # the environment's hand (HOST-INV-1)
FORGED_TEXT = "wake up"
REMINDER_TEXT = "sweep"
TTL_MS = 2  # the idle subscriptions' TTL (see Bounds)
NAMED_ARGUMENTS = frozenset({"session", "to", "peer", "claimed_from"})  # letter arguments naming a session
# WARNING: the error codes of the host chart's ``reject_*`` actions (model/host.py), which run when
# one of its own guards refuses a letter and change nothing but the records and the output;
# tests/test_host_explorer.py compares the data after every such rejection with a fresh load.
GUARD_REJECTIONS = frozenset({"not_in_turn", "turn_limit", "reminder_limit"})


class GateView(NamedTuple):
    state: str
    streak: int
    age: int | None  # ms since the last self-wake, capped at the floor


class HeldView(NamedTuple):
    ticket: int
    sender: str
    cause: str
    origin: str
    text: str


class DeliveryView(NamedTuple):
    state: str
    setting: str | None
    box: int
    held: tuple[HeldView, ...]


class OutstandingView(NamedTuple):
    subscription: int
    target: str
    label: str
    age: int


class SubscriberView(NamedTuple):
    requester: str
    subscription: int
    age: int
    parity: bool


class IdleView(NamedTuple):
    state: str
    outstanding: tuple[OutstandingView, ...]
    subscribers: tuple[SubscriberView, ...]
    fire_in: int | None
    finished: bool
    held: int


class ReminderView(NamedTuple):
    due_in: int  # ms until it falls due
    text: str


class _SessionFields(NamedTuple):
    phase: str
    actions: int
    told_held: int
    pending: tuple[Mail, ...]
    shown: int
    reminders: tuple[ReminderView, ...]
    gate: GateView
    delivery: DeliveryView
    idle: IdleView


class SessionView(HashedOnce, _SessionFields):
    """One session as a snapshot holds it. Views are shared between the snapshots that hold them
    (``_seen_view``), so each view's hash, and each count below that the properties and the
    letters' bounds read of its mail, is worked out once per view."""

    @functools.cached_property
    def peer_pending(self) -> int:
        """Pending peer messages (delivered mail not yet read by a turn)."""
        return sum(1 for m in self.pending if m.channel == "peer")

    @functools.cached_property
    def in_flight(self) -> int:
        """Messages sent to this session and not yet read or told a terminal receipt (HOST-INV-3)."""
        return len(self.delivery.held) + self.peer_pending

    @functools.cached_property
    def typed_pending(self) -> bool:
        """Whether a line the user typed is pending."""
        return any(m.channel == "typed" for m in self.pending)

    @functools.cached_property
    def reminder_pending(self) -> bool:
        """Whether a reminder this session scheduled is pending."""
        return any(m.channel == "reminder" for m in self.pending)

    @functools.cached_property
    def forgery_pending(self) -> bool:
        """Whether forged mail is pending: peer mail claiming to come from its own recipient."""
        return any(m.channel == "peer" and m.sender == SELF for m in self.pending)

    @functools.cached_property
    def subscribed(self) -> bool:
        """Whether either idle half holds a subscription (an outstanding one or a subscriber)."""
        return bool(self.idle.outstanding or self.idle.subscribers)

    @property
    def subscription_ids(self) -> tuple[int, ...]:
        """The subscription ids of the outstanding rows, then of the subscribers, in order: worked
        out once per view (kept by hand, as ``Snapshot.in_flight`` says why)."""
        kept: dict[str, tuple[int, ...]] = self.__dict__
        ids = kept.get("_subscription_ids")
        if ids is None:
            idle = self.idle
            ids = kept["_subscription_ids"] = (*(o.subscription for o in idle.outstanding),
                                               *(r.subscription for r in idle.subscribers))
        return ids


class _SnapshotFields(NamedTuple):
    control: str
    sessions: tuple[SessionView, ...]


class Snapshot(HashedOnce, _SnapshotFields):
    """The host's state (see Snapshot above); the search looks each one up several times."""

    @property
    def in_flight(self) -> int:
        """Messages sent and not yet read or told a terminal receipt, over every session
        (HOST-INV-3): worked out once per snapshot, which the search fires each letter from.

        Kept by hand, not by ``functools.cached_property``, which takes a lock at each first read
        on Python 3.11, and most snapshots that ``_nothing_lost`` reads are read once."""
        kept: dict[str, int] = self.__dict__
        count = kept.get("_in_flight")
        if count is None:
            count = kept["_in_flight"] = sum(s.in_flight for s in self.sessions)
        return count


class _Loading(NamedTuple):
    """What ``HostExplorer.load`` writes for one session view at one position (``_loading``)."""

    address: str
    gate: dict[str, Any]  # the gate part's data (load gives its output fresh)
    gate_state: str
    delivery: dict[str, Any]  # the peer delivery part's data (load gives its held list and output fresh)
    held: tuple[Entry, ...]
    delivery_state: str
    idle: dict[str, Any]  # the idle part's data (load gives its output fresh)
    idle_state: str
    pending: tuple[Mail, ...]
    shown: int
    phase: str
    actions: int
    told_held: int
    in_flight: tuple[tuple[int, InFlight], ...]
    reminders: tuple[Reminder, ...]
    targets: tuple[tuple[int, str], ...]  # subscription id -> target, of the outstanding subscriptions
    top: int  # the highest subscription id in the view (0: none)


# Names inside a session's view are relative to it (see Canonical form): itself, then the
# sessions after it in config order, counted round.
SELF = "me"


def relative_names(count: int) -> tuple[str, ...]:
    """The name, inside a session's view, of the session ``d`` places after it (``d`` in 0..count-1)."""
    return (SELF, *(f"+{d}" for d in range(1, count)))


# -- properties -----------------------------------------------------------------------


# The output ``_by_type`` last read, and its records by type: the invariants and the
# forever-properties read the records of one step's output one after the other, so they are
# sorted by type once per output. Compared by identity (it holds the output, so the identity
# is not reused): an output is never changed once a step has returned it.
_last_read: list[Any] = [None, {}]


def _by_type(out: Any) -> dict[str, list[dict[str, Any]]]:
    """The records of a step's output by type, in output order."""
    if out is not _last_read[0]:
        by_type: dict[str, list[dict[str, Any]]] = {}
        for record in (out or {}).get("events", ()):
            by_type.setdefault(record["type"], []).append(record)
        _last_read[:] = [out, by_type]
    return _last_read[1]  # type: ignore[no-any-return]


def _records(out: Any, kind: str) -> Sequence[dict[str, Any]]:
    return (_last_read[1] if out is _last_read[0] else _by_type(out)).get(kind, ())


def _index(bounds: Bounds, address: str) -> int:
    return int(bounds["addresses"].index(address))


def _typed_line_wakes(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-2: every idle session with a typed line pending wakes at this tick."""
    woke = {r["session"] for r in _records(out, "wake")}
    return all(
        address in woke
        for address, s in zip(bounds["addresses"], pre.sessions, strict=True)
        if s.phase == "idle" and s.typed_pending
    )


def _nothing_lost(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-3: in flight before + sent = in flight after + read + terminal + queue_full.

    Counted as one balance, in plain loops: it runs on every step the host explores."""
    if "error" in (out or {}):
        return pre == post
    records = _by_type(out)
    balance = pre.in_flight - post.in_flight
    for send in records.get("send", ()):
        if send["send_error"] is None:  # sent, and not refused as queue_full at the station
            balance += 1
    for receipt in records.get("receipt", ()):
        if receipt["state"] in TERMINAL:
            balance -= 1
    for wake in records.get("wake", ()):  # a wake reads the peer mail pending
        balance -= pre.sessions[_index(bounds, wake["session"])].peer_pending
    return balance == 0


def _idle_is_true(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-4: an idle answer only from an idle target with nothing pending or held.

    Harness lines waiting for the next turn (``shown``, under harness_lines_at_next_turn) are
    neither: HOST-OPT-3 keeps them out of pending mail and off every wake, and HOST-OPT-4 out of
    the idle half's count. (This property once counted them, and so failed with that option and
    pending_counts_as_held on together, where HOST-INV-4's words hold:
    tests/test_replaced_invariants.py explores every machine with all its options on.)"""
    for answer in _records(out, "answer"):
        if answer["kind"] != "idle":
            continue
        target = pre.sessions[_index(bounds, answer["from"])]
        if target.phase != "idle" or target.pending or target.delivery.held:
            return False
    return True


def _announce_once(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-5: a refusal line and its receipts only for an episode not yet announced."""
    for refusal in _records(out, "refusal"):
        gate = pre.sessions[_index(bounds, refusal["session"])].gate
        if (refusal["line"] is not None) != refusal["announced"]:
            return False
        if refusal["announced"] and gate.state in ("refusing_announced", "announced_without_refusal"):
            return False
        if ("wake_refused" in refusal["receipts"]) != refusal["announced"]:
            return False
    return True


def _no_typed_line_at(position: int) -> Any:
    """The ``typed_lines`` bound: the user types at a session only while no typed line of theirs waits.

    A partial of a module function, not a closure, so that the letter pickles (``Action.when``)."""
    return functools.partial(_no_typed_line_pending, position)


def _no_typed_line_pending(position: int, snapshot: Any) -> bool:
    return not snapshot.sessions[position].typed_pending


def _no_subscription(snapshot: Any) -> bool:
    """The ``subscriptions`` bound at 1: a turn subscribes only while no subscription is outstanding
    or subscribed anywhere."""
    return not any(s.subscribed for s in snapshot.sessions)


def _no_forgery_pending(snapshot: Any) -> bool:
    """The ``forgeries`` bound at 1: a turn forges only while no forged message is pending anywhere."""
    return not any(s.forgery_pending for s in snapshot.sessions)


def _event(name: str) -> Any:
    return lambda action: action.event == name


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "user_input_always_wakes",
        ("HOST-INV-2", "HOST-WAKE-1", "HOST-WAKE-4"),
        _event("tick"),
        _typed_line_wakes,
    ),
    Invariant(
        "nothing_lost",
        ("HOST-INV-3", "HOST-RCPT-1", "HOST-SEND-3", "HOST-SEND-4"),
        lambda a: True,
        _nothing_lost,
    ),
    Invariant("announce_once", ("HOST-INV-5", "HOST-WAKE-3"), _event("tick"), _announce_once),
    Invariant(
        "idle_is_true",
        ("HOST-INV-4", "HOST-IDLE-1", "HOST-OPT-4"),
        lambda a: True,
        _idle_is_true,
        finding="HOST-F3",
        option="pending_counts_as_held",
    ),
)


def _no_hand(action: Action) -> bool:
    """The letters of an allowed step (HOST-INV-1): none of the environment's hand."""
    return action.event not in HAND


def _tick(action: Action) -> bool:
    """The letters of a marked step: a session wakes at a tick and at no other step (HOST-WAKE-1;
    the chart writes a wake record in ``book_tick`` alone, and
    tests/test_host_explorer.py fails when another letter's step writes one, under the
    seed's defaults or with any one option on)."""
    return action.event == "tick"


# The some_step predicates below run on every allowed tick; most ticks wake no one.


def _counted_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    wakes = _records(out, "wake")
    return bool(wakes) and any(r["counts_against_cap"] for r in wakes)


def _harness_line_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """A user-input-lane wake whose batch holds no typed line: a harness line woke it."""
    wakes = _records(out, "wake")
    return bool(wakes) and any(
        r["lane"] == "userInput"
        and not pre.sessions[_index(bounds, r["session"])].typed_pending
        for r in wakes
    )


def _forged_cadence_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """An exempt scheduled-self wake whose batch holds no reminder the session really scheduled."""
    wakes = _records(out, "wake")
    return bool(wakes) and any(
        r["lane"] == "scheduledSelf"
        and not r["counts_against_cap"]
        and not pre.sessions[_index(bounds, r["session"])].reminder_pending
        for r in wakes
    )


FOREVER: tuple[ForeverProperty, ...] = (
    ForeverProperty(
        "no_counted_wakes_forever",
        ("HOST-INV-1", "HOST-WAKE-2", "HOST-LINE-1", "HOST-OPT-2", "HOST-OPT-3"),
        allowed_letters=_no_hand,
        every_step=any_step,
        marked_letters=_tick,
        some_step=_counted_wake,
        finding="HOST-F2",
        option="harness_lines_as_agent_mail",
        also_fixed_by=("harness_lines_at_next_turn",),  # HOST-OPT-3: spec/host.md, HOST-F2
    ),
    ForeverProperty(
        "no_harness_line_wakes_forever",
        ("HOST-INV-1", "HOST-LINE-1", "HOST-OPT-2", "HOST-OPT-3"),
        allowed_letters=_no_hand,
        every_step=any_step,
        marked_letters=_tick,
        some_step=_harness_line_wake,
        finding="HOST-F2",
        option="harness_lines_as_agent_mail",
        also_fixed_by=("harness_lines_at_next_turn",),  # HOST-OPT-3: spec/host.md, HOST-F2
    ),
    ForeverProperty(
        "no_forged_cadence_forever",
        ("HOST-INV-1", "HOST-SEND-2", "HOST-OPT-1"),
        allowed_letters=_no_hand,
        every_step=any_step,
        marked_letters=_tick,
        some_step=_forged_cadence_wake,
        finding="HOST-F1",
        option="stamp_true_sender",
    ),
)


def _key(view: SessionView) -> tuple[Any, ...]:
    """A session view as plain comparable values (no None beside an integer), subscription ids set aside."""
    gate, delivery, idle = view.gate, view.delivery, view.idle
    return (
        view.phase, view.actions, view.told_held, view.pending, view.shown, view.reminders,
        gate.state, gate.streak, -1 if gate.age is None else gate.age,
        delivery.state, delivery.setting or "", delivery.box, delivery.held,
        idle.state, tuple((o.target, o.label, o.age) for o in idle.outstanding),
        tuple((r.requester, r.age, r.parity) for r in idle.subscribers),
        -1 if idle.fire_in is None else idle.fire_in, idle.finished, idle.held,
    )


def _id_key(sessions: tuple[SessionView, ...]) -> tuple[Any, ...]:
    return tuple(
        (tuple(o.subscription for o in v.idle.outstanding), tuple(r.subscription for r in v.idle.subscribers))
        for v in sessions
    )


def _numbered(data: Any, sessions: tuple[SessionView, ...]) -> tuple[SessionView, ...]:
    """Subscription ids renumbered in order of appearance: the charts compare them only with each
    other. Views whose ids are numbered so already are given back as they are: after every step
    of the default exploration they were, since a step keeps the ids it loads and a new
    subscription takes the next one. Else kept in ``data.numbered`` per sequence of views, and
    each view renumbered in ``data.renumbered`` per view and new ids."""
    if _in_order_of_appearance(sessions):
        return sessions
    known = data.numbered.get(sessions)
    if known is not None:
        return known  # type: ignore[no-any-return]
    ids: dict[int, int] = {}
    numbered = []
    for view in sessions:
        idle = view.idle
        if not (idle.outstanding or idle.subscribers):
            numbered.append(view)
            continue
        new_ids = [ids.setdefault(o.subscription, len(ids) + 1) for o in idle.outstanding]
        new_ids += [ids.setdefault(r.subscription, len(ids) + 1) for r in idle.subscribers]
        key = (view, tuple(new_ids))
        renumbered = data.renumbered.get(key)
        if renumbered is None:
            renumbered = data.renumbered[key] = _interned(data, _renumbered(view, key[1]))
        numbered.append(renumbered)
    result = data.numbered[sessions] = tuple(numbered)
    return result


def _in_order_of_appearance(sessions: tuple[SessionView, ...]) -> bool:
    """Whether the views' subscription ids, read in order, first appear as 1, 2, 3 and so on: then
    ``_numbered`` would number each id as itself."""
    following = 1  # the id a new one must be: every id below it has appeared
    for view in sessions:
        for subscription in view.subscription_ids:
            if subscription == following:
                following += 1
            elif not 1 <= subscription < following:
                return False
    return True


# A view, its ``_key``, and whether it holds a subscription id.
SeenView = tuple[SessionView, tuple[Any, ...], bool]


def seen(view: SessionView) -> SeenView:
    """A view as ``store`` orders it (``least_of``): with its ``_key`` and whether it holds an id."""
    return view, _key(view), view.subscribed


def least_of(data: Any, families: Sequence[Sequence[SeenView]]
             ) -> tuple[tuple[SessionView, ...], tuple[int, ...]]:
    """The canonical sequence of views (see ``HostExplorer.canonical``) and the chart position of
    each, from each position's view named forward (``families[0]``) and, with three sessions,
    mirrored (``families[1]``), as ``_seen_view`` gives them."""
    forward = families[0]
    count = len(forward)
    if count == 2:  # the swap is the one other permutation, and it leaves relative views unchanged
        (first_view, first, first_ids), (second_view, second, second_ids) = forward
        if first != second:
            positions: tuple[int, ...] = (1, 0) if second < first else (0, 1)
            pair = (second_view, first_view) if positions[0] else (first_view, second_view)
            return _numbered(data, pair) if first_ids or second_ids else pair, positions
    views = [[entry[0] for entry in family] for family in families]
    keys = [[entry[1] for entry in family] for family in families]
    best: list[tuple[Any, int, int]] = []
    for direction, family_keys in enumerate(keys):
        step = 1 if direction == 0 else -1
        for rotation in range(count):
            order = tuple(family_keys[(rotation + step * k) % count] for k in range(count))
            best.append((order, direction, rotation))
    least = min(entry[0] for entry in best)
    chosen = []
    for order, direction, rotation in best:
        if order != least:
            continue
        step = 1 if direction == 0 else -1
        positions = tuple((rotation + step * k) % count for k in range(count))
        chosen.append((_numbered(data, tuple(views[direction][p] for p in positions)), positions))
    return min(chosen, key=lambda pair: _id_key(pair[0])) if len(chosen) > 1 else chosen[0]


def _interned(data: Any, view: SessionView) -> SessionView:
    """``view``, or the view equal to it made first in this search (``data.interned``)."""
    kept: SessionView = data.interned.setdefault(view, view)
    return kept


def _renumbered(view: SessionView, new_ids: tuple[int, ...]) -> SessionView:
    """``view`` with the subscription ids of its outstanding rows, then its subscribers, in order,
    replaced by ``new_ids``."""
    idle = view.idle
    count = len(idle.outstanding)
    outstanding = tuple(o._replace(subscription=n)
                        for o, n in zip(idle.outstanding, new_ids[:count], strict=True))
    subscribers = tuple(r._replace(subscription=n)
                        for r, n in zip(idle.subscribers, new_ids[count:], strict=True))
    return view._replace(idle=idle._replace(outstanding=outstanding, subscribers=subscribers))


def _session_data(data: Any, address: str) -> tuple[Any, ...]:
    """Everything ``HostExplorer._view`` reads of one session, as plain values: two sessions with
    the same values have the same view (at one position, named one way).

    WARNING: it must read all that ``_view`` reads; tests/test_host_explorer.py compares views
    kept by it with views worked out afresh, on every step of a walk, and fails when it misses one.
    """
    s: SessionData = data.sessions[address]
    gate, delivery, idle = s.gate, s.delivery, s.idle
    held = delivery.held
    in_flight = s.in_flight
    return (
        s.phase, s.actions, s.told_held, tuple(s.pending), len(s.shown),
        tuple((r.due_ms, r.text) for r in data.reminders if r.session == address) if data.reminders else (),
        data.now_ms,
        s.gate_state, gate.streak, gate.last_self_wake_ms,
        s.delivery_state, delivery.setting, delivery.box,
        tuple((e, in_flight[e.ticket]) for e in held) if held else (),
        s.idle_state, idle.now_ms, idle.outstanding, idle.subscribers, idle.fire_at,
        idle.finished_at is not None, idle.held,
    )


# The bounds that choose among letters rather than count (see the bounds above): a larger value
# would explore what the largest does, while the summary printed it.
# WARNING: the module docstring's Bounds section says what each value does ("1 adds", "2 lifts");
# tests/test_host_explorer.py checks that its largest is the one here.
_LARGEST_CHOICE = {"hand": 1, "reminders": 1, "subscriptions": 2, "forgeries": 2}


class HostExplorer:
    variables: tuple[str, ...] = Snapshot._fields
    default_bounds: Mapping[str, str] = {
        "sessions": "2",
        "max_streak": "1",
        "floor_ms": "1",
        "box_cap": "1",
        "held_cap": "1",
        "turn_action_limit": "1",
        "hand": "0",
        "reminders": "0",
        "subscriptions": "1",
        "forgeries": "1",
    }
    options: tuple[str, ...] = INTERFACE.options
    # An option's exploration fires every step again (checker/option_steps.py): the options change
    # most steps. Of the steps of the explorations of pending_counts_as_held and the two harness-line
    # options (1.2 to 2.0 million each), a record of the default's steps gave 0.3 to 6%; of
    # stamp_true_sender's 0.2 million, half. In all, about 3 s of some 75 s of processor time, less
    # the 1.8 s that recording the default's million steps costs; and as one family the host's five
    # explorations would run one after another on one worker, about 70 s, which the whole check
    # would then wait for (it takes under 60 s with them spread over the workers).
    reuses_default_steps = False
    invariants: tuple[Invariant, ...] = INVARIANTS
    forever: tuple[ForeverProperty, ...] = FOREVER
    unobservable_events: frozenset[str] = frozenset()
    # The generated cases' coverage explorations (see Coverage explorations above).
    coverage_bounds: tuple[Mapping[str, str], ...] = (
        {"hand": "1", "box_cap": "0", "forgeries": "0", "subscriptions": "0"},
        {"reminders": "1", "box_cap": "0", "forgeries": "0", "subscriptions": "0"},
    )

    def step_memo(self, data: Any, bounds: Bounds, options: Mapping[str, bool], actions: Sequence[Action],
                  take: frame.TakeStep) -> frame.StepMemo:
        """The letters whose step is a function of one session's view, each fired once per view
        (``machines/host_steps.py``, which says why each is)."""
        from inboxspec.machines import host_steps  # it reads this module's views

        return host_steps.step_memo(data, bounds, options, actions, take)

    @staticmethod
    def shard_key(snapshot: Snapshot) -> tuple[SessionView, int]:
        """The first session's view, and how many messages the second holds for review: the sharded
        search (``checker/parallel.py``) gives every state with the same key to one worker, so that
        worker alone fires, and remembers, most of the step memo's steps of the session the first
        view is. At the default bounds on two workers the memo fired about 54,000 steps a worker so
        (99,000 in one process), against 59,000 sharded by the whole snapshot, each worker meeting
        most views and firing their steps again (``benchmarks/explorer_workers.py``, 2026-12-06).

        The second session's held count splits the heaviest first views between the workers: by
        the first view alone (about 2,000 of them, of very different weights) the busier worker
        fired 51 to 53% of the letters, as the hash seed fell (the critical path is the busier
        worker's), by both 50 to 51.4%, the firings unchanged (108,300 to 108,900 over four hash
        seeds, the held count changing only on a send to that session or a review). Side by side in
        one process, two workers took 7.9 to 8.1 s against 8.0 to 8.7 s (one process 12.4 to
        14.4 s; 2026-12-07). Equal snapshots have equal keys, as the key must (``frame.shard_key``)."""
        return snapshot.sessions[0], len(snapshot.sessions[1].delivery.held)

    @staticmethod
    def own_parts(data: Any, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with each view the one this process made first (``_interned``): a state another
        worker sent holds its views as objects of their own, which the step memo, keyed by a view's
        identity, met as views it never saw (``frame.own_parts``)."""
        return tuple.__new__(Snapshot, (snapshot.control,
                                        tuple([_interned(data, view) for view in snapshot.sessions])))

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        merged = frame.merged_bounds("host", self.default_bounds, raw)
        try:
            parsed = {name: frame.bound_integer(value) for name, value in merged.items()}
        except ValueError as error:
            raise ValueError(f"host bounds are integers: {error}") from error
        if not 2 <= parsed["sessions"] <= len(ADDRESSES):
            raise ValueError(f"the host explores 2 to {len(ADDRESSES)} sessions")
        if parsed["held_cap"] < 1 or parsed["floor_ms"] < 1 or min(parsed.values()) < 0:
            raise ValueError("host bounds are non-negative, with held_cap and floor_ms at least 1")
        for name, most in _LARGEST_CHOICE.items():
            if parsed[name] > most:
                raise ValueError(f"the host's {name} bound chooses among letters, from 0 to {most}; "
                                 f"{parsed[name]} would explore what {most} does")
        return {**parsed, "addresses": ADDRESSES[: parsed["sessions"]]}

    def _config(self, bounds: Bounds) -> dict[str, Any]:
        return {
            "sessions": list(bounds["addresses"]),
            "wake_gate": {"max_streak": bounds["max_streak"], "floor_ms": bounds["floor_ms"]},
            "peer_delivery": {
                "setting": "accept",
                "box_cap": bounds["box_cap"],
                "held_cap": bounds["held_cap"],
            },
            "idle_subscriptions": {
                "ttl_ms": TTL_MS,
                "debounce_ms": 1,
                "held_backoff_ms": 1,
                "outstanding_cap": 1,
                "priors_kept": 0,
                "subscriber_cap": 1,
            },
            "turn_action_limit": bounds["turn_action_limit"],
            "reminder_limit": 1,
        }

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        addresses = bounds["addresses"]
        actions = [Action("tick", "tick"), Action("advance +1 ms", "advance", {"ms": 1})]
        for me in addresses:
            actions.append(
                Action(
                    f"user_input {me}",
                    "user_input",
                    {"session": me, "text": "hi"},
                    when=_no_typed_line_at(_index(bounds, me)),
                )
            )
            if bounds["reminders"]:
                actions.append(
                    Action(
                        f"schedule {me}",
                        "schedule",
                        {"session": me, "delay_ms": bounds["floor_ms"], "text": REMINDER_TEXT},
                    )
                )
            actions.append(Action(f"end_turn {me}", "end_turn", {"session": me, "detail": None}))
            for event in ("approve", "deny") if bounds["hand"] else ():
                actions.append(Action(f"{event} {me} oldest", event, {"session": me, "ticket": Position(1)}))
            for setting in ("hold", "accept") if bounds["hand"] else ():
                actions.append(
                    Action(f"set_setting {me} {setting}", "set_setting", {"session": me, "setting": setting})
                )
            for other in addresses:
                if other == me:
                    continue
                actions.append(
                    Action(
                        f"send {me}->{other}",
                        "send_message",
                        {"session": me, "to": other, "text": "hello", "claimed_from": None},
                    )
                )
                actions.append(
                    Action(
                        f"send {me}->{other} forged as {other}",
                        "send_message",
                        {
                            "session": me,
                            "to": other,
                            "text": "[scheduled] " + FORGED_TEXT,
                            "claimed_from": other,
                        },
                        when=_no_forgery_pending if bounds["forgeries"] == 1 else None,
                    )
                )
                actions.append(
                    Action(f"subscribe {me}->{other}", "subscribe", {"session": me, "peer": other},
                           when=_no_subscription if bounds["subscriptions"] == 1 else None)
                )
        # A bound of 0 takes its family of letters out of the alphabet.
        return [
            a
            for a in actions
            if (bounds["forgeries"] or "forged" not in a.label)
            and (bounds["subscriptions"] or a.event != "subscribe")
        ]

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"config": self._config(bounds), "options": HostModelOptions(**options)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        config = self._config(bounds)
        addresses = tuple(config["sessions"])
        count = len(addresses)
        data.addresses = addresses
        data.limit = config["turn_action_limit"]
        data.reminder_limit = config["reminder_limit"]
        data.options = HostModelOptions(**options)
        data.parts = Parts.configured(
            config["wake_gate"], config["peer_delivery"], config["idle_subscriptions"])
        data.floor_ms = bounds["floor_ms"]
        data.loaded = None  # the snapshot ``load`` last wrote (None: none yet)
        data.unchanged = False  # whether the data is as ``load`` wrote ``loaded`` (see ``store``)
        data.fresh = False  # whether no step was stored since the last ``load``
        # Per session position, what ``load`` writes for each view met there (``_loading``).
        data.loadings = [{} for _ in addresses]
        # Per naming (forward, mirrored) and session position, each view met, by ``_session_data``;
        # and each sequence of views, and each view, with its subscription ids numbered anew (``_numbered``).
        data.views = [[{} for _ in addresses] for _ in range(2)]
        data.numbered, data.renumbered = {}, {}
        # Every view made, each distinct one once: an equal view made again is given as the first
        # object (``_interned``), so that the step memo, which keys its tables by a view's identity
        # (machines/host_steps.py), meets one view as one object at every position and naming.
        data.interned = {}
        # Each position's view named forward and (three sessions) mirrored, as the last ``store`` saw them.
        data.seen_families = []
        relative = relative_names(count)
        # Per session position j: its relative name for each address (forward, and mirrored:
        # ``d`` places after it named as ``d`` places before it), and each relative name's address.
        data.forward = [{addresses[(j + d) % count]: relative[d] for d in range(count)} for j in range(count)]
        data.mirrored = [{addresses[(j + d) % count]: relative[-d % count] for d in range(count)}
                         for j in range(count)]
        data.absolute = [{relative[d]: addresses[(j + d) % count] for d in range(count)}
                         for j in range(count)]

    def initial(self, bounds: Bounds) -> Snapshot:
        chart = HostChart(**self.chart_arguments(bounds, {}))
        self.constants(chart, bounds, {})
        return self.store(chart, "running")

    # -- load and store -----------------------------------------------------------------

    def load(self, data: Any, snapshot: Snapshot) -> None:
        """Write ``snapshot`` onto ``data``: each session from its view's ``_Loading``, worked out
        once per view and position (views repeat across states: 1,980 distinct views make the
        default exploration's 124,508 states), with fresh copies of everything a step may change."""
        data.records = []
        data.fresh = True
        if data.unchanged and snapshot is data.loaded:
            # The last step, from this snapshot, was rejected by a guard of the host's own: it
            # changed only the records and the output (see ``store``), and a step writes both.
            data.unchanged = False
            return
        data.unchanged = False
        if snapshot is not data.loaded:
            data.loaded = snapshot
            data.loading = self._snapshot_loading(data, snapshot)
        loadings, reminders, targets, top = data.loading
        data.now_ms = 0
        data.sessions = sessions = {}
        gate, delivery, idle = data.parts.gate.holder, data.parts.delivery.holder, data.parts.idle.holder
        new = object.__new__
        for loading in loadings:
            gate_data = gate()
            gate_data.__dict__ = loading.gate.copy()
            gate_data.output = {}
            delivery_data = delivery()
            delivery_data.__dict__ = loading.delivery.copy()
            delivery_data.held = list(loading.held)
            delivery_data.output = {}
            idle_data = idle()
            idle_data.__dict__ = loading.idle.copy()
            idle_data.output = {}
            # WARNING: every field of SessionData (model/host.py), written as its __init__ would
            # (which costs twice this); tests/test_host_explorer.py compares the two.
            session = sessions[loading.address] = new(SessionData)
            session.__dict__ = {
                "gate": gate_data,
                "gate_state": loading.gate_state,
                "delivery": delivery_data,
                "delivery_state": loading.delivery_state,
                "idle": idle_data,
                "idle_state": loading.idle_state,
                "pending": list(loading.pending),
                "shown": [LINE_TEXT] * loading.shown,
                "phase": loading.phase,
                "actions": loading.actions,
                "told_held": loading.told_held,
                "in_flight": dict(loading.in_flight),
            }
        data.reminders = list(reminders)
        data.subscription_targets = dict(targets)
        data.next_subscription = top + 1

    def _snapshot_loading(self, data: Any, snapshot: Snapshot
                          ) -> tuple[list[_Loading], tuple[Reminder, ...], tuple[tuple[int, str], ...], int]:
        """Per session the ``_Loading`` of its view (worked out once per view and position: views
        repeat across states), then the host's reminders, subscription targets and highest
        subscription id."""
        loadings = []
        for position, view in enumerate(snapshot.sessions):
            known = data.loadings[position]
            loading = known.get(view)
            if loading is None:
                loading = known[view] = self._loading(data, position, view)
            loadings.append(loading)
        # Reminders in scheduling order: those of one session keep their stored (due) order, and
        # reminders of different sessions are never compared by any rule.
        reminders = tuple(r for loading in loadings for r in loading.reminders)
        targets = tuple(t for loading in loadings for t in loading.targets)
        return loadings, reminders, targets, max(loading.top for loading in loadings)

    def _loading(self, data: Any, position: int, view: SessionView) -> _Loading:
        """What ``load`` writes for ``view`` at ``position``, as immutable values and template dicts
        (``load`` copies the dicts and gives fresh mutable fields)."""
        parts: Parts = data.parts
        address = data.addresses[position]
        names = data.absolute[position]
        age = view.gate.age
        gate = parts.gate.merged(
            {"streak": view.gate.streak, "now_ms": 0, "last_self_wake_ms": None if age is None else -age}
        )
        held = view.delivery.held
        delivery = parts.delivery.merged(
            {
                "setting": view.delivery.setting,
                "box": view.delivery.box,
                "now_ms": 0,
                "next_ticket": len(held) + 1,
            }
        )
        idle_view = view.idle
        outstanding = tuple(Outstanding(o.subscription, names[o.target], names.get(o.label, o.label), -o.age)
                            for o in idle_view.outstanding)
        idle = parts.idle.merged(
            {
                "now_ms": 0,
                "fire_at": idle_view.fire_in,
                "held": idle_view.held,
                "outstanding": outstanding,
                "subscribers": tuple(
                    Subscriber(names[r.requester], r.subscription, -r.age, r.parity)
                    for r in idle_view.subscribers
                ),
                "finished_at": 0 if idle_view.finished else None,
                "phase": idle_view.state,
            }
        )
        return _Loading(
            address=address,
            gate=gate,
            gate_state=view.gate.state,
            delivery=delivery,
            held=tuple(Entry(h.ticket, names[h.sender], None, "absent", h.cause, None) for h in held),
            delivery_state=view.delivery.state,
            idle=idle,
            idle_state=idle_view.state,
            pending=tuple(
                Mail(m.kind, names[m.sender], address, m.text, m.channel,
                     None if m.origin is None else names[m.origin])
                for m in view.pending
            ),
            shown=view.shown,
            phase=view.phase,
            actions=view.actions,
            told_held=view.told_held,
            in_flight=tuple((h.ticket, InFlight(names[h.origin], h.text)) for h in held),
            reminders=tuple(Reminder(address, r.due_in, r.text) for r in view.reminders),
            targets=tuple((row.subscription, row.target) for row in outstanding),
            top=max((*(row.subscription for row in outstanding),
                     *(r.subscription for r in idle_view.subscribers)), default=0),
        )

    def store(self, data: Any, state: str) -> Snapshot:
        # WARNING: a rejected step changes nothing (HOST-IF-4), so its snapshot is the one loaded;
        # tests/test_host_explorer.py stores every rejected step in full and fails when it is not.
        fresh, data.fresh = data.fresh, False
        if "error" in data.output and data.loaded is not None:
            # A rejection by the host chart's own guards, in the first step stored since a load
            # (an explored step is a load, a fire and a store), leaves even the data as loaded, but
            # for the records and the output: the next ``load`` of the same snapshot has nothing to do.
            data.unchanged = fresh and data.output["error"] in GUARD_REJECTIONS
            return data.loaded  # type: ignore[no-any-return]
        data.unchanged = False
        return Snapshot(state, self._least(data)[0])

    def canonical(self, data: Any, state: str) -> tuple[Snapshot, dict[str, str]]:
        """The canonical snapshot, and the renaming from the chart's addresses to the snapshot's.

        Each session's view names the others relative to itself, so a rotation of the
        sessions leaves every view unchanged and only reorders them, and a reflection
        mirrors the relative names; with two or three sessions, rotations and
        reflections are every permutation. The snapshot is the least sequence of views
        over them (compared by ``_key``, subscription ids set aside; ids are then
        numbered in order of appearance, and a tie is broken by the numbered snapshot).
        """
        sessions, positions = self._least(data)
        addresses = data.addresses
        return Snapshot(state, sessions), {addresses[p]: addresses[k] for k, p in enumerate(positions)}

    def _least(self, data: Any) -> tuple[tuple[SessionView, ...], tuple[int, ...]]:
        """The canonical sequence of views (see ``canonical``), and the position in the chart's
        sessions of each. The views it sees, named forward and (three sessions) mirrored, are left
        in ``data.seen_families`` for the step memo (``machines/host_steps.py``)."""
        count = len(data.addresses)
        families = [[self._seen_view(data, 0, j) for j in range(count)]]
        if count > 2:
            families.append([self._seen_view(data, 1, j) for j in range(count)])
        data.seen_families = families
        return least_of(data, families)

    def _seen_view(self, data: Any, family: int, position: int) -> SeenView:
        """The session at ``position`` as ``_view`` gives it, named forward (``family`` 0) or
        mirrored (1), with its ``_key`` and whether it holds a subscription id: worked out once
        per distinct ``_session_data`` and kept in ``data.views``."""
        address = data.addresses[position]
        raw = _session_data(data, address)
        known = data.views[family][position]
        entry = known.get(raw)
        if entry is None:
            names = (data.forward, data.mirrored)[family][position]
            entry = known[raw] = seen(_interned(data, self._view(data, address, names)))
        return entry  # type: ignore[no-any-return]

    def _view(self, data: Any, address: str, names: Mapping[str, str]) -> SessionView:
        """One session's view, other sessions named by ``names``, subscription ids as the chart has them."""
        s: SessionData = data.sessions[address]
        now = data.now_ms
        last = s.gate.last_self_wake_ms
        gate = GateView(s.gate_state, s.gate.streak, None if last is None else min(now - last, data.floor_ms))
        in_flight = s.in_flight
        held_views = []
        for position, entry in enumerate(s.delivery.held, 1):
            message = in_flight[entry.ticket]
            held_views.append(HeldView(position, names[entry.sender], entry.cause, names[message.origin],
                                       message.text))
        held = tuple(held_views)
        delivery = DeliveryView(s.delivery_state, s.delivery.setting, s.delivery.box, held)
        idle_data = s.idle
        idle_now = idle_data.now_ms
        idle = IdleView(
            s.idle_state,
            tuple(OutstandingView(o.subscription, names[o.target], names.get(o.label, o.label),
                                  idle_now - o.sent_at)
                  for o in idle_data.outstanding),
            tuple(SubscriberView(names[r.requester], r.subscription, idle_now - r.added_at, r.parity)
                  for r in idle_data.subscribers),
            None if idle_data.fire_at is None else idle_data.fire_at - idle_now,
            idle_data.finished_at is not None,
            idle_data.held,
        )
        pending = tuple(
            sorted(
                Mail(m.kind, names[m.sender], SELF, LINE_TEXT if m.channel == "line" else m.text, m.channel,
                     None if m.origin is None else names[m.origin])
                for m in s.pending
            )
        )
        reminders = tuple(sorted(ReminderView(r.due_ms - now, r.text) for r in data.reminders
                                 if r.session == address))
        # An idle session's action count is read by no rule (HOST-TURN-1 reads it in a turn, and a
        # wake sets it to 0), so it is stored as 0.
        actions = s.actions if s.phase == "turn" else 0
        return SessionView(
            s.phase, actions, s.told_held, pending, len(s.shown), reminders, gate, delivery, idle
        )

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return frame.with_options(self._config(bounds), options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """Replays the trace on the chart from the initial state, with the exploration's bounds and
        options, where positions become tickets, clock moves become instants and each step's session
        names (positions in its canonical snapshot) become the replayed chart's addresses: the
        sessions are named as ``readable`` names them. A step that replays to another state than the
        one explored raises ``frame.ReplayMismatch``: a case of another trace is never written."""
        return [replayed.step for replayed in self._replayed(trace, bounds, options)]

    def readable(self, trace: Sequence[frame.Step], bounds: Bounds,
                 options: Mapping[str, bool]) -> frame.ReadableTrace:
        """The trace as a reader follows it (``frame.readable_trace``): each session named by one
        address throughout, the one the replayed host gives it, where the explored trace names a
        session by its place in each snapshot.

        Each state is the control state, then each session's view in config order (the fields'
        names are ``control`` and the addresses), each view naming the sessions by address; each
        label names them so; each output is the replayed chart's, less its ``sessions`` summary,
        which the state shows. It is replayed with the exploration's bounds and options, and a step
        whose replayed state is not, up to the sessions' names, the one explored raises
        ``frame.ReplayMismatch``."""
        addresses = bounds["addresses"]
        by_address = {address: address for address in addresses}
        letters = {(a.event, _named_key(a.kwargs)): a for a in self.alphabet(bounds)}
        shown: list[frame.Step] = []
        names = [dict(by_address)]
        before: tuple[Any, ...] | None = None
        for number, replayed in enumerate(self._replayed(trace, bounds, options), start=1):
            pre, action, _post, _output = trace[number - 1]
            letter = letters.get((action.event, _named_key(replayed.named)))
            if letter is None:
                raise frame.ReplayMismatch(f"host: step {number} ({action.label}) of the trace names no "
                                           f"letter once its sessions are renamed")
            data = replayed.data
            views = tuple(self._view(data, address, by_address) for address in addresses)
            if before is None:
                before = (cast(Snapshot, pre).control, *replayed.first)
            after = (replayed.snapshot.control, *views)
            output = {key: value for key, value in replayed.output.items() if key != "sessions"}
            shown.append((before, letter, after, output))
            names.append(replayed.names)
            before = after
        return frame.ReadableTrace(("control", *addresses), shown, names)

    def _replayed(self, trace: Sequence[tuple[Any, ...]], bounds: Bounds,
                  options: Mapping[str, bool]) -> Iterator[_Replayed]:
        """Each step of ``trace`` replayed on the chart from the initial state (see ``concretize``); a
        step whose canonical snapshot is not the one the trace reached raises ``frame.ReplayMismatch``."""
        session = host_driver.ModelSession(self.config(bounds, options))
        data = SimpleNamespace()
        self.constants(data, bounds, options)
        by_address = {address: address for address in bounds["addresses"]}
        data.sessions, data.reminders, data.now_ms = (
            session.chart.sessions, session.chart.reminders, session.chart.now_ms)
        first = tuple(self._view(data, address, by_address) for address in bounds["addresses"])
        real = dict(by_address)  # a name in the current snapshot -> the chart's address
        for number, step_fields in enumerate(trace, start=1):
            action: Action = step_fields[1]
            named = {k: real.get(v, v) if k in NAMED_ARGUMENTS else v for k, v in action.kwargs.items()}
            args = dict(named)
            if action.event == "advance":
                args = {"now_ms": session.chart.now_ms + args["ms"]}
            elif action.event in ("approve", "deny"):
                held = session.chart.sessions[args["session"]].delivery.held
                index = args["ticket"].index
                args["ticket"] = held[index - 1][0] if index <= len(held) else session.chart.now_ms + 10**6
            elif action.event == "subscribe":
                args = {"session": args["session"], "target": args["peer"]}
            args = {k: v for k, v in args.items() if v is not None}
            step = frame.case_step(action.event, args)
            output = session.apply(step)
            data.sessions, data.reminders, data.now_ms = (
                session.chart.sessions, session.chart.reminders, session.chart.now_ms)
            snapshot, renaming = self.canonical(data, "running")
            if snapshot != step_fields[2]:
                raise frame.ReplayMismatch(f"host: step {number} ({action.label}) of the trace replays to "
                                           f"another state than the one explored")
            real = {named_as: address for address, named_as in renaming.items()}
            yield _Replayed(step, named, output, snapshot, data, first, dict(real))


class _Replayed(NamedTuple):
    """One step of a trace replayed on the chart (``HostExplorer._replayed``)."""

    step: dict[str, Any]  # the case step
    named: dict[str, Any]  # the letter's arguments, sessions named by the chart's addresses
    output: dict[str, Any]  # the chart's output
    snapshot: Snapshot  # the canonical snapshot reached
    # The chart's sessions, reminders and clock after it, with the explorer's constants. WARNING: one
    # object for every step of a replay, changed by the next: read it before taking the next step.
    data: Any
    first: tuple[SessionView, ...]  # the initial state's views, by address
    names: dict[str, str]  # the chart's address of each session name ``snapshot`` gives


def _named_key(kwargs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(kwargs.items()))


MACHINE = frame.bundled_machine(
    name="host",
    title="host",
    seed="000_82681ec6c92fd68c.txt",
    chart=HostChart,
    driver=host_driver,
    explorer=HostExplorer(),
)

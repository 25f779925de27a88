"""The host in the machine frame: its registry entry and how to explore it.

Snapshot
    ``Snapshot(control, sessions, reminders)``: one ``SessionView`` per
    session in config order and the reminders not yet due, in scheduling
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
    * Sessions are interchangeable (symmetry): the snapshot is the least of
      its renamings under every permutation of the addresses. ``tick`` visits
      sessions in config order, which orders its records but not its
      successor states, since no session's decision reads another's.

Bounds (``--bound NAME=VALUE``), and the small-scope argument
    ``sessions`` (2)    two sessions are the least that ping-pong; three
                        (``--bound sessions=3``) add loops through a third
                        session, the upstream three-agent storms;
    ``max_streak`` (1)  the gate decides by ``streak < max_streak`` alone, so
                        a cap of 1 shows the refusal, the episode and its
                        announcement; a cycle that keeps waking past a cap of 1
                        keeps waking past any cap, because it must reset the
                        streak to repeat;
    ``floor_ms`` (2)    with 1 ms clock steps, 2 separates a rapid self-wake
                        (1 ms after) from an exempt one; reminders are
                        scheduled a floor ahead;
    ``box_cap`` (1), ``held_cap`` (1)  the least that show ``queue_full`` and
                        an eviction;
    ``hand`` (0)        1 adds the recipient user's letters (approve and deny
                        the oldest held message, set a session's setting to
                        hold or accept); by default the only hand is typed
                        input, and every message is delivered or refused at
                        the box (holds, evictions and denials are pinned by the
                        host cases and by peer delivery's own exploration);
    ``reminder_limit`` is 1: one reminder waiting per session (a cadence
                        needs only the next one; without a limit, turns that
                        wake without time passing would pile up reminders);
    ``turn_action_limit`` (1)  one action per turn; a turn of more actions is
                        a sequence of such turns as far as any other session can
                        tell, except that it wakes once;
    idle subscriptions use debounce 1 ms, back-off 1 ms and TTL 3 ms (the
    rules compare these times only with each other), one outstanding
    subscription and one subscriber per session, no priors: with two
    sessions a requester has one target, and a second subscription to it
    displaces (target) and is refused by the cap (requester), so each idle
    rule the host wires is reached.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from inboxspec.machines import frame, host_driver
from inboxspec.machines.frame import Action, Bounds, ForeverProperty, Invariant
from inboxspec.model.host import HostChart, HostModelOptions, Mail, Parts, Reminder, SessionData
from inboxspec.model.peer_delivery import Position

INTERFACE = host_driver.INTERFACE
ADDRESSES = ("s1", "s2", "s3")
LINE_TEXT = "(a harness line)"  # what a pending line's text is stored as (see Canonical form)
TERMINAL = ("dropped", "refused", "denied", "expired")
HAND = frozenset({"user_input", "approve", "deny", "set_setting"})  # the environment's hand (HOST-INV-1)
FORGED_TEXT = "wake up"
REMINDER_TEXT = "sweep"


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


class SessionView(NamedTuple):
    phase: str
    actions: int
    told_held: int
    pending: tuple[Mail, ...]
    shown: int
    gate: GateView
    delivery: DeliveryView
    idle: IdleView


class Snapshot(NamedTuple):
    control: str
    sessions: tuple[SessionView, ...]
    reminders: tuple[Reminder, ...]


def _rename(value: Any, names: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, tuple):
        renamed = tuple(_rename(item, names) for item in value)
        return type(value)(*renamed) if hasattr(value, "_fields") else renamed
    return value


# -- properties -----------------------------------------------------------------------


def _records(out: Any, kind: str) -> list[dict[str, Any]]:
    return [r for r in (out or {}).get("events", ()) if r["type"] == kind]


def _index(bounds: Bounds, address: str) -> int:
    return int(bounds["addresses"].index(address))


def _typed_line_wakes(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-2: every idle session with a typed line pending wakes at this tick."""
    woke = {r["session"] for r in _records(out, "wake")}
    return all(
        address in woke
        for address, s in zip(bounds["addresses"], pre.sessions, strict=True)
        if s.phase == "idle" and any(m.channel == "typed" for m in s.pending)
    )


def _in_flight(snapshot: Snapshot) -> int:
    return sum(
        len(s.delivery.held) + sum(1 for m in s.pending if m.channel == "peer") for s in snapshot.sessions
    )


def _nothing_lost(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-3: in flight before + sent = in flight after + read + terminal + queue_full."""
    if "error" in (out or {}):
        return pre == post
    sends = _records(out, "send")
    queue_full = sum(1 for r in sends if r["send_error"] is not None)
    terminal = sum(1 for r in _records(out, "receipt") if r["state"] in TERMINAL)
    read = sum(
        sum(1 for m in pre.sessions[_index(bounds, r["session"])].pending if m.channel == "peer")
        for r in _records(out, "wake")
    )
    return _in_flight(pre) + len(sends) == _in_flight(post) + read + terminal + queue_full


def _idle_is_true(pre: Snapshot, post: Snapshot, out: Any, bounds: Bounds) -> bool:
    """HOST-INV-4: an idle answer only from an idle target with nothing pending or held."""
    for answer in _records(out, "answer"):
        if answer["kind"] != "idle":
            continue
        target = pre.sessions[_index(bounds, answer["from"])]
        if target.phase != "idle" or target.pending or target.shown or target.delivery.held:
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


def _no_hand(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    return action.event not in HAND


def _counted_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    return any(r["counts_against_cap"] for r in _records(out, "wake"))


def _harness_line_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """A user-input-lane wake whose batch holds no typed line: a harness line woke it."""
    return any(
        r["lane"] == "userInput"
        and not any(m.channel == "typed" for m in pre.sessions[_index(bounds, r["session"])].pending)
        for r in _records(out, "wake")
    )


def _forged_cadence_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """An exempt scheduled-self wake whose batch holds no reminder the session really scheduled."""
    return any(
        r["lane"] == "scheduledSelf"
        and not r["counts_against_cap"]
        and not any(m.channel == "reminder" for m in pre.sessions[_index(bounds, r["session"])].pending)
        for r in _records(out, "wake")
    )


FOREVER: tuple[ForeverProperty, ...] = (
    ForeverProperty(
        "no_counted_wakes_forever",
        ("HOST-INV-1", "HOST-WAKE-2", "HOST-LINE-1", "HOST-OPT-2"),
        every_step=_no_hand,
        some_step=_counted_wake,
        finding="HOST-F2",
        option="harness_lines_as_agent_mail",
    ),
    ForeverProperty(
        "no_harness_line_wakes_forever",
        ("HOST-INV-1", "HOST-LINE-1", "HOST-OPT-2"),
        every_step=_no_hand,
        some_step=_harness_line_wake,
        finding="HOST-F2",
        option="harness_lines_as_agent_mail",
    ),
    ForeverProperty(
        "no_forged_cadence_forever",
        ("HOST-INV-1", "HOST-SEND-2", "HOST-OPT-1"),
        every_step=_no_hand,
        some_step=_forged_cadence_wake,
        finding="HOST-F1",
        option="stamp_true_sender",
    ),
)


class HostExplorer:
    variables: tuple[str, ...] = Snapshot._fields
    default_bounds: Mapping[str, str] = {
        "sessions": "2",
        "max_streak": "1",
        "floor_ms": "2",
        "box_cap": "1",
        "held_cap": "1",
        "turn_action_limit": "1",
        "hand": "0",
    }
    options: tuple[str, ...] = INTERFACE.options
    invariants: tuple[Invariant, ...] = INVARIANTS
    forever: tuple[ForeverProperty, ...] = FOREVER
    unobservable_events: frozenset[str] = frozenset()

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        merged = frame.merged_bounds("host", self.default_bounds, raw)
        try:
            parsed = {name: int(value) for name, value in merged.items()}
        except ValueError as error:
            raise ValueError(f"host bounds are integers: {error}") from error
        if not 2 <= parsed["sessions"] <= len(ADDRESSES):
            raise ValueError(f"the host explores 2 to {len(ADDRESSES)} sessions")
        if parsed["held_cap"] < 1 or parsed["floor_ms"] < 1 or min(parsed.values()) < 0:
            raise ValueError("host bounds are non-negative, with held_cap and floor_ms at least 1")
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
                "ttl_ms": 3,
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
            actions.append(Action(f"user_input {me}", "user_input", {"session": me, "text": "hi"}))
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
                    )
                )
                actions.append(
                    Action(f"subscribe {me}->{other}", "subscribe", {"session": me, "peer": other})
                )
        return actions

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"config": self._config(bounds), "options": HostModelOptions(**options)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        config = self._config(bounds)
        data.addresses = tuple(config["sessions"])
        data.limit = config["turn_action_limit"]
        data.reminder_limit = config["reminder_limit"]
        data.options = HostModelOptions(**options)
        data.parts = Parts(config["wake_gate"], config["peer_delivery"], config["idle_subscriptions"])
        data.floor_ms = bounds["floor_ms"]
        data.permutations = [
            dict(zip(data.addresses, perm, strict=True)) for perm in itertools.permutations(data.addresses)
        ]

    def initial(self, bounds: Bounds) -> Snapshot:
        chart = HostChart(**self.chart_arguments(bounds, {}))
        chart.floor_ms = bounds["floor_ms"]
        chart.permutations = [{a: a for a in bounds["addresses"]}]
        return self.store(chart, "running")

    # -- load and store -----------------------------------------------------------------

    def load(self, data: Any, snapshot: Snapshot) -> None:
        parts: Parts = data.parts
        data.now_ms = 0
        data.records = []
        data.reminders = list(snapshot.reminders)
        data.sessions = {}
        targets: dict[int, str] = {}
        top = 0
        for address, view in zip(data.addresses, snapshot.sessions, strict=True):
            last = None if view.gate.age is None else -view.gate.age
            gate = parts.gate.loaded(
                {"streak": view.gate.streak, "now_ms": 0, "last_self_wake_ms": last, "output": {}}
            )
            delivery = parts.delivery.loaded(
                {
                    "setting": view.delivery.setting,
                    "box": view.delivery.box,
                    "now_ms": 0,
                    "output": {},
                    "held": [(h.ticket, h.sender, None, "absent", h.cause, None) for h in view.delivery.held],
                    "next_ticket": len(view.delivery.held) + 1,
                }
            )
            idle = parts.idle.loaded(
                {
                    "now_ms": 0,
                    "output": {},
                    "fire_at": view.idle.fire_in,
                    "held": view.idle.held,
                    "outstanding": tuple(
                        (o.subscription, o.target, o.label, -o.age) for o in view.idle.outstanding
                    ),
                    "subscribers": tuple(
                        (r.requester, r.subscription, -r.age, r.parity) for r in view.idle.subscribers
                    ),
                    "finished_at": 0 if view.idle.finished else None,
                    "phase": view.idle.state,
                }
            )
            for row in view.idle.outstanding:
                targets[row.subscription] = row.target
            top = max(
                [
                    top,
                    *(o.subscription for o in view.idle.outstanding),
                    *(r.subscription for r in view.idle.subscribers),
                ]
            )
            session = SessionData(
                gate,
                view.gate.state,
                delivery,
                view.delivery.state,
                idle,
                view.idle.state,
                pending=list(view.pending),
                shown=[LINE_TEXT] * view.shown,
                phase=view.phase,
                actions=view.actions,
                told_held=view.told_held,
                in_flight={h.ticket: (h.origin, h.text) for h in view.delivery.held},
            )
            data.sessions[address] = session
        data.subscription_targets = targets
        data.next_subscription = top + 1

    def store(self, data: Any, state: str) -> Snapshot:
        # repr orders views that hold None beside integers, and is the same in every run.
        return min((self._view(data, state, names) for names in data.permutations), key=repr)

    def _view(self, data: Any, state: str, names: Mapping[str, str]) -> Snapshot:
        """The snapshot with every address renamed by ``names`` (sessions reordered to match)."""
        by_new = {names[a]: data.sessions[a] for a in data.addresses}
        ids: dict[int, int] = {}

        def sub(old: int) -> int:
            return ids.setdefault(old, len(ids) + 1)

        views = []
        for address in data.addresses:
            s: SessionData = by_new[address]
            last = s.gate.last_self_wake_ms
            age = None if last is None else min(data.now_ms - last, data.floor_ms)
            gate = GateView(s.gate_state, s.gate.streak, age)
            held = tuple(
                HeldView(
                    i + 1, names.get(e[1], e[1]), e[4], names[s.in_flight[e[0]][0]], s.in_flight[e[0]][1]
                )
                for i, e in enumerate(s.delivery.held)
            )
            delivery = DeliveryView(s.delivery_state, s.delivery.setting, s.delivery.box, held)
            now = s.idle.now_ms
            outstanding = tuple(
                OutstandingView(sub(o[0]), names[o[1]], names.get(o[2], o[2]), now - o[3])
                for o in s.idle.outstanding
            )
            subscribers = tuple(
                SubscriberView(names[r[0]], sub(r[1]), now - r[2], r[3]) for r in s.idle.subscribers
            )
            fire_in = None if s.idle.fire_at is None else s.idle.fire_at - now
            idle = IdleView(
                s.idle_state, outstanding, subscribers, fire_in, s.idle.finished_at is not None, s.idle.held
            )
            pending = tuple(
                sorted(
                    (
                        Mail(
                            m.kind,
                            names.get(m.sender, m.sender),
                            names[m.recipient],
                            LINE_TEXT if m.channel == "line" else m.text,
                            m.channel,
                            None if m.origin is None else names[m.origin],
                        )
                        for m in s.pending
                    ),
                    key=repr,
                )
            )
            views.append(
                SessionView(s.phase, s.actions, s.told_held, pending, len(s.shown), gate, delivery, idle)
            )
        reminders = tuple(
            sorted(
                (Reminder(names[r.session], r.due_ms - data.now_ms, r.text) for r in data.reminders), key=repr
            )
        )
        return Snapshot(state, tuple(views), reminders)

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return frame.with_options(self._config(bounds), options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]]) -> list[dict[str, Any]]:
        """Replays the trace on the chart from the initial state, where positions become
        tickets and clock moves become instants."""
        if not trace:
            return []
        bounds = self.parse_bounds({"sessions": str(len(trace[0][0].sessions))})
        session = host_driver.ModelSession(self._config(bounds))
        steps: list[dict[str, Any]] = []
        for _pre, action, _post in trace:
            args = dict(action.kwargs)
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
            steps.append(step)
            session.apply(step)
        return steps


MACHINE = frame.bundled_machine(
    name="host",
    title="host",
    seed="000_82681ec6c92fd68c.txt",
    chart=HostChart,
    driver=host_driver,
    explorer=HostExplorer(),
)

"""Idle subscriptions in the machine frame: the registry entry and how to explore it.

Snapshot
    ``Snapshot(state, outstanding, subscribers, fire_in, finish_age, detail, held, closed_age)``:
    the target's phase; the requester table as ``OutstandingView`` rows and the
    target table as ``SubscriberView`` rows, both in table order; how long
    until the armed fire; how long ago the last turn finished and its detail;
    the held count; and how long ago the target closed.
    Every time is relative to the clock (``load`` puts the clock at ``T0``), so
    the clock itself is not part of a state.

Canonical form
    Data that no later event can read is dropped: the last turn's finish time
    and detail outside ``settling`` and ``backing_off`` (a turn must finish
    again before any fire, except under ``fire_when_already_idle``, which reads
    them in ``idle`` too), and the close time outside ``exited``. The finish and
    close ages only reach outputs, never decisions, so they are capped at
    ``AGE_CAP``, which no trace of ``MAX_REFINE_DEPTH`` one-millisecond steps
    reaches: refinement up to that depth compares exact outputs.

    Identities are *not* renumbered. Subscription ids, requester addresses and
    times all appear in outputs, and refinement compares outputs exactly, so a
    renamed snapshot would print the wrong values. Instead the pools are the
    smallest that show every rule: ids ``1..outstanding_cap`` go to the first
    target (a duplicate, a push-out) and id ``outstanding_cap + 1`` to the
    second (one target cannot show both a push-out and the cap: the cap is
    checked first, so the cap refusal needs a second target),
    and requesters ``subscriber_cap + 1`` (one more than fits, for the target
    cap; the first one also re-subscribes under a second id, for displacement).

Time
    The alphabet moves the clock by one millisecond, or by none (an advance
    that lands inside the settle window), through the chart's own ``advance``
    event. The rules compare times only with each other, so the default
    deadlines are the smallest that keep the seed's order: debounce 1 ms, then
    the TTL and the first back-off re-check together at 2 ms (the tie
    IDLE-TIME-2 settles: a subscriber that reaches the TTL at a fire is swept,
    not answered). These steps reach a fire before and at a TTL, a back-off
    re-check before and after a release, and a continuing turn inside the
    settle window.

Bounds (``--bound NAME=VALUE``), and why each suffices
    ``outstanding_cap`` (2)  the requester cap; 2 is the least that shows a cap
                              refusal next to a kept prior;
    ``priors_kept`` (0)      priors per target; 0 shows a push-out within cap 2
                              (``--bound outstanding_cap=3 --bound
                              priors_kept=1`` keeps one prior: 22 581 states);
    ``subscriber_cap`` (1)   the target cap; 1 shows the cap refusal and the
                              displacement; 2 (``--bound subscriber_cap=2``,
                              19 475 states) also shows a fire answering two
                              subscribers;
    ``ttl_ms`` (2), ``debounce_ms`` (1), ``held_backoff_ms`` (2): see Time;
                              ``--bound ttl_ms=3`` separates the TTL from the
                              first re-check (9 214 states; 3 667 at the
                              defaults).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from inboxspec.machines import frame, idle_subscriptions_driver
from inboxspec.machines.frame import MAX_REFINE_DEPTH, Action, Bounds, Invariant
from inboxspec.model.idle_subscriptions import (
    IdleModelOptions,
    IdleSubscriptionsChart,
    Outstanding,
    Subscriber,
)


class OutstandingView(NamedTuple):
    """A subscription this session sent, as a state sees it: times as ages."""

    subscription: int
    target: str
    label: str
    age: int  # ms since it was sent


class SubscriberView(NamedTuple):
    requester: str
    subscription: int
    age: int  # ms since it was added
    parity: bool


class Snapshot(NamedTuple):
    state: str
    outstanding: tuple[OutstandingView, ...]
    subscribers: tuple[SubscriberView, ...]
    fire_in: int | None  # ms to the armed fire, or None
    finish_age: int | None  # ms since the last turn finished, where a fire reads it
    detail: str | None
    held: int
    closed_age: int | None  # ms since the exit, once exited

INTERFACE = idle_subscriptions_driver.INTERFACE
T0 = 1_000_000  # the clock a loaded snapshot reads
AGE_CAP = MAX_REFINE_DEPTH + 1
TARGETS = ("t", "u")
LABEL = "Peer"
DETAIL = "done"


# -- invariants -----------------------------------------------------------------------


def _every(action: Action) -> bool:
    return True


def _on(event: str) -> Any:
    return lambda action: action.event == event


def _answered(output: Mapping[str, Any]) -> list[tuple[str, int]]:
    return [(a["to"], a["subscription"]) for a in output.get("sent", ())]


def _tables_within_caps(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return bool(len(post.outstanding) <= bounds["outstanding_cap"]
                and len(post.subscribers) <= bounds["subscriber_cap"])


def _priors_within_bound(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    limit = bounds["priors_kept"] + 1
    if len(post.outstanding) <= limit:
        return True  # no target can have more rows than there are
    targets = [row.target for row in post.outstanding]
    return all(targets.count(target) <= limit for target in TARGETS)


def _one_answer_each(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    if not out.get("sent"):
        return True  # most steps answer nobody
    answered = _answered(out)
    remaining = {(row.requester, row.subscription) for row in post.subscribers}
    return len(answered) == len(set(answered)) and not (set(answered) & remaining)


def _notices_only_for_outstanding(pre: Snapshot, post: Snapshot, out: Mapping[str, Any],
                                  bounds: Bounds) -> bool:
    notices = out.get("notices")
    if not notices:
        return True  # most steps give no notice
    ids = [n["subscription"] for n in notices]
    before = {row.subscription for row in pre.outstanding}
    after = {row.subscription for row in post.outstanding}
    return len(ids) == len(set(ids)) and all(i in before and i not in after for i in ids)


def _no_idle_while_held(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return pre.held == 0 or not any(a["kind"] == "idle" for a in out.get("sent", ()))


def _idle_only_when_fire_due(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    sent = out.get("sent")
    if not sent:
        return True  # most steps send nothing
    fired = any(a["kind"] == "idle" for a in sent)
    return not fired or (pre.state in ("settling", "backing_off") and pre.fire_in is not None
                         and pre.fire_in <= 1)


def _phase_mirrors_state(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return bool(out.get("phase") == post.state)


def _pushed_out_is_told(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return out.get("pushed_out") is None or any(n["subscription"] == out["pushed_out"]
                                                for n in out.get("notices", ()))


def _idle_target_answers(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return (not (out.get("accepted") and pre.state == "idle" and pre.held == 0)
            or bool(post.state == "settling"))


def _only_the_target_resolves(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return out.get("resolved") is not True


def _foreign_answer(action: Action) -> bool:
    return action.event == "receive_notice" and action.kwargs["sender"] != TARGETS[0] and (
        action.kwargs["subscription"] == 1)


def _unheld_target_near_fire(pre: Snapshot, post: Snapshot, out: Mapping[str, Any], bounds: Bounds) -> bool:
    return bool(post.state != "backing_off" or post.held > 0 or post.fire_in <= bounds["debounce_ms"])


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("tables_within_caps", ("IDLE-REQ-1", "IDLE-TGT-1"), _every, _tables_within_caps, of_state=True),
    Invariant("priors_within_bound", ("IDLE-REQ-3",), _on("subscribe"), _priors_within_bound),
    Invariant("one_answer_per_subscription", ("IDLE-END-4", "IDLE-FIRE-3", "IDLE-TGT-2"), _every,
              _one_answer_each),
    Invariant("notices_only_for_outstanding", ("IDLE-END-4", "IDLE-REQ-5", "IDLE-REQ-7"), _every,
              _notices_only_for_outstanding),
    Invariant("no_idle_answer_while_held", ("IDLE-HELD-2",), _on("advance"), _no_idle_while_held),
    Invariant("idle_answer_only_when_fire_due", ("IDLE-FIRE-1", "IDLE-FIRE-2"), _every,
              _idle_only_when_fire_due),
    Invariant("phase_mirrors_state", ("IDLE-OUT-1",), _every, _phase_mirrors_state),
    Invariant("every_subscription_resolves", ("IDLE-OPT-1", "IDLE-REQ-3"), _on("subscribe"),
              _pushed_out_is_told, finding="IDLE-F1", option="notify_pushed_out"),
    Invariant("idle_target_answers_within_settle_window", ("IDLE-OPT-2", "IDLE-FIRE-4"),
              _on("add_subscriber"), _idle_target_answers,
              finding="IDLE-F2", option="fire_when_already_idle"),
    Invariant("unheld_target_is_near_its_fire", ("IDLE-OPT-3", "IDLE-HELD-3"), _every,
              _unheld_target_near_fire, finding="IDLE-F3", option="fire_on_release", of_state=True),
    # Id 1 always belongs to the first target, so its answer from the second never may resolve it.
    Invariant("only_the_target_resolves_its_subscription", ("IDLE-OPT-4", "IDLE-REQ-8"), _foreign_answer,
              _only_the_target_resolves, finding="IDLE-F4", option="answers_from_target_only"),
)


def _letter(name: str, event: str, **args: Any) -> Action:
    """One letter: a case step's arguments over the interface data's defaults, under the chart's names."""
    full = INTERFACE.events[event].with_defaults(args)
    return Action(name, event, idle_subscriptions_driver.chart_arguments(event, full))


def _age(now: int, at: int | None) -> int | None:
    return None if at is None else min(now - at, AGE_CAP)


_new = tuple.__new__  # a named tuple from its fields in order, without its Python-level constructor


def _views(outstanding: Sequence[Outstanding], subscribers: Sequence[Subscriber],
           now: int) -> tuple[tuple[OutstandingView, ...], tuple[SubscriberView, ...]]:
    """The model's two tables as a state keeps them: times as ages. (``_new`` is ``tuple.__new__``:
    the named tuple's own field order, without its Python-level constructor.)"""
    return (tuple([_new(OutstandingView, (i, t, lab, now - at)) for i, t, lab, at in outstanding]),
            tuple([_new(SubscriberView, (r, i, now - at, parity)) for r, i, at, parity in subscribers]))


class IdleSubscriptionsExplorer:
    variables: tuple[str, ...] = Snapshot._fields
    default_bounds: Mapping[str, str] = {"outstanding_cap": "2", "priors_kept": "0", "subscriber_cap": "1",
                                         "ttl_ms": "2", "debounce_ms": "1", "held_backoff_ms": "2"}
    # fold_lookalikes (IDLE-F5) changes only what the sanitiser makes of lookalike texts; the
    # alphabet's labels hold none, so exploring with it would repeat the seed's run. Its property
    # is about texts beyond the model: tests/test_idle_subscriptions_label.py checks it.
    options = tuple(name for name in INTERFACE.options if name != "fold_lookalikes")
    invariants = INVARIANTS
    unobservable_events: frozenset[str] = frozenset()

    def __init__(self) -> None:
        # The last snapshot loaded, its rows, and (once `store` has met them) their views.
        self._rows_of: Snapshot | None = None
        self._outstanding: tuple[Outstanding, ...] = ()
        self._subscribers: tuple[Subscriber, ...] = ()
        self._views: tuple[tuple[OutstandingView, ...], tuple[SubscriberView, ...]] | None = None

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        merged = frame.merged_bounds("idle-subscriptions", self.default_bounds, raw)
        try:
            parsed = {k: frame.bound_integer(v) for k, v in merged.items()}
        except ValueError as error:
            raise ValueError(f"idle-subscriptions bounds are integers: {error}") from error
        if any(v < 0 for v in parsed.values()) or parsed["ttl_ms"] < 1 or parsed["held_backoff_ms"] < 1:
            raise ValueError("idle-subscriptions bounds are non-negative; ttl_ms and held_backoff_ms "
                             "positive")
        if parsed["subscriber_cap"] > 4 or parsed["outstanding_cap"] > 4:
            raise ValueError("idle-subscriptions caps above 4 are beyond an exhaustive search")
        return parsed

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        ids = range(1, bounds["outstanding_cap"] + 2)
        requesters = [chr(ord("a") + i) for i in range(bounds["subscriber_cap"] + 1)]
        # The ids split between the targets: 1..cap go to the first (a duplicate, a
        # push-out), cap + 1 to the second (the cap refusal needs a second target).
        owners = [(TARGETS[0] if i <= bounds["outstanding_cap"] else TARGETS[1], i) for i in ids]
        actions = [_letter(f"subscribe {t} #{i}", "subscribe", target=t, subscription=i, label=LABEL)
                   for t, i in owners]
        owner = dict((i, t) for t, i in owners)
        answer = {"kind": "idle", "finished_at": 0, "detail": DETAIL}
        actions += [_letter(f"receive_notice #{i} idle from {owner[i]}", "receive_notice",
                            subscription=i, notice=answer, **{"from": owner[i]})
                    for i in ids]
        # An answer for the first target's first id, from the other target (finding IDLE-F4).
        actions += [_letter(f"receive_notice #1 idle from {TARGETS[1]}", "receive_notice",
                            subscription=1, notice=answer, **{"from": TARGETS[1]})]
        actions += [_letter(f"add_subscriber {r} #1", "add_subscriber", requester=r, subscription=1,
                            parity=r == "a") for r in requesters]
        actions += [_letter("add_subscriber a #2", "add_subscriber", requester="a", subscription=2,
                            parity=True)]
        actions += [_letter("turn_started", "turn_started"),
                    _letter(f"turn_finished {DETAIL!r}", "turn_finished", last_turn_text=DETAIL),
                    _letter("set_held 0", "set_held", count=0),
                    _letter("set_held 1", "set_held", count=1),
                    _letter("exit", "exit"), _letter("shutdown", "shutdown"),
                    # The chart's own advance moves the clock by `ms` (concretize makes it a now_ms).
                    Action("advance +0 ms", "advance", {"ms": 0}),
                    Action("advance +1 ms", "advance", {"ms": 1})]
        return actions

    def _settings(self, bounds: Bounds) -> dict[str, Any]:
        return {"ttl_ms": bounds["ttl_ms"], "outstanding_cap": bounds["outstanding_cap"],
                "priors_kept": bounds["priors_kept"], "subscriber_cap": bounds["subscriber_cap"],
                "debounce_ms": bounds["debounce_ms"], "held_backoff_ms": bounds["held_backoff_ms"],
                "last_turn_text_seat": True}

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"config": self._settings(bounds), "options": IdleModelOptions(**options)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.ttl_ms = bounds["ttl_ms"]
        data.outstanding_cap = bounds["outstanding_cap"]
        data.priors_kept = bounds["priors_kept"]
        data.subscriber_cap = bounds["subscriber_cap"]
        data.debounce_ms = bounds["debounce_ms"]
        data.held_backoff_ms = bounds["held_backoff_ms"]
        data.offset_min = INTERFACE.config_key("reader_utc_offset_min").default
        data.seat = True
        data.options = IdleModelOptions(**options)

    def initial(self, bounds: Bounds) -> Snapshot:
        return Snapshot(state="idle", outstanding=(), subscribers=(), fire_in=None, finish_age=None,
                        detail=None, held=0, closed_age=None)

    def load(self, data: Any, snapshot: Snapshot) -> None:
        data.phase = snapshot.state
        data.now_ms = T0
        # The model's own rows (model/idle_subscriptions.py's Outstanding and Subscriber), which no
        # step changes in place: those of the last snapshot loaded are kept (the explorer loads each
        # once per letter), and `store` knows its views when they come back.
        if snapshot is not self._rows_of:
            self._outstanding = tuple([_new(Outstanding, (row.subscription, row.target, row.label,
                                                          T0 - row.age))
                                       for row in snapshot.outstanding])
            self._subscribers = tuple([_new(Subscriber, (row.requester, row.subscription, T0 - row.age,
                                                         row.parity))
                                       for row in snapshot.subscribers])
            self._rows_of = snapshot
            self._views = None
        data.outstanding, data.subscribers = self._outstanding, self._subscribers
        data.fire_at = None if snapshot.fire_in is None else T0 + snapshot.fire_in
        data.finished_at = None if snapshot.finish_age is None else T0 - snapshot.finish_age
        data.detail = snapshot.detail
        data.held = snapshot.held
        data.closed_at = None if snapshot.closed_age is None else T0 - snapshot.closed_age

    def store(self, data: Any, state: str) -> Snapshot:
        now = data.now_ms
        reads_finish = state in ("settling", "backing_off") or (
            state == "idle" and data.options.fire_when_already_idle)
        outstanding, subscribers = data.outstanding, data.subscribers
        if now == T0 and outstanding is self._outstanding and subscribers is self._subscribers:
            # The loaded rows, untouched (the same tuples) and at the loaded clock: their views
            # are worked out once per snapshot.
            if self._views is None:
                self._views = _views(outstanding, subscribers, now)
            outstanding_views, subscriber_views = self._views
        else:
            outstanding_views, subscriber_views = _views(outstanding, subscribers, now)
        return _new(Snapshot, (
            state,
            outstanding_views,
            subscriber_views,
            None if data.fire_at is None else data.fire_at - now,
            _age(now, data.finished_at) if reads_finish else None,
            data.detail if reads_finish else None,
            0 if state in ("exited", "shut_down") else data.held,  # nothing reads it once closed
            _age(now, data.closed_at) if state == "exited" else None,
        ))

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return frame.with_options(self._settings(bounds), options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """Case steps that replay a trace so that the clock reads ``T0`` before its last letter.

        A loaded snapshot's clock reads ``T0``, and outputs carry absolute times
        (an answer's ``finished_at``), so the replay first moves the clock to
        ``T0`` minus the time the trace spends before its last letter.
        """
        spent = sum(a.kwargs["ms"] for _, a, _ in trace[:-1] if a.event == "advance")
        now = T0 - spent
        steps: list[dict[str, Any]] = [{"event": "advance", "args": {"now_ms": now}}]
        for _pre, action, _post in trace:
            if action.event == "advance":
                now += action.kwargs["ms"]
                steps.append({"event": "advance", "args": {"now_ms": now}})
            else:
                args = idle_subscriptions_driver.case_arguments(action.event, action.kwargs)
                steps.append(frame.case_step(action.event, args))
        return steps


MACHINE = frame.bundled_machine(
    name="idle-subscriptions", title="idle subscriptions", seed="001_08883a16a8c012a7.txt",
    chart=IdleSubscriptionsChart, driver=idle_subscriptions_driver, explorer=IdleSubscriptionsExplorer(),
)

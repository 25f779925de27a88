"""The idle-subscriptions driver: case JSON in, ``IdleSubscriptions`` (or chart) calls, output JSON out.

The events, their arguments (in the order their faults are checked), defaults
and output fields are the interface data (spec/idle-subscriptions.interface.json).
The driver only translates: every check is the reference's. ``check_arguments``
takes a step's first two faults (IDLE-IF-2/3), and each called method or
helper checks its own arguments, taking ``None`` for an absent or null one
(IDLE-IF-1).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inboxspec.impl.idle_label import (
    describe_peer_idle_subscription,
    format_peer_notice_clock,
    is_peer_idle_notice_kind,
    peer_idle_notice_label,
    render_idle_notice,
)
from inboxspec.impl.idle_subscriptions import (
    AddSubscriberResult,
    Effects,
    IdleSubscriptionError,
    IdleSubscriptions,
    SubscribeResult,
    check_arguments,
)
from inboxspec.machines import interface, sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model import idle_subscriptions as model
from inboxspec.model.idle_subscriptions import IdleModelOptions, IdleSubscriptionsChart

INTERFACE = interface.load("idle-subscriptions")
# One feature per finding option (the spec's "Options from the findings").
HELPERS = frozenset(name for name, event in INTERFACE.events.items() if event.pure)
# The reference's name of an argument whose case name is a Python keyword.
PYTHON_NAMES = {"from": "sender"}
# The chart's names of arguments whose case names it cannot take: python-statemachine
# reserves `target` (a transition's target state), and `from` is a Python keyword.
CHART_NAMES: dict[str, dict[str, str]] = {"subscribe": {"target": "peer"},
                                          "receive_notice": {"from": "sender"}}


def chart_arguments(event: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A step's arguments under the chart's names."""
    names = CHART_NAMES.get(event, {})
    return {names.get(name, name): value for name, value in args.items()}


def case_arguments(event: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The chart's arguments of one event under the case's names (``chart_arguments`` undone)."""
    names = {chart: case for case, chart in CHART_NAMES.get(event, {}).items()}
    return {names.get(name, name): value for name, value in kwargs.items()}


def snapshot(machine: IdleSubscriptions) -> dict[str, Any]:
    """The fields every output of a machine event carries (IDLE-OUT-1)."""
    return {"phase": machine.phase.value, "outstanding": len(machine.outstanding),
            "subscribers": len(machine.subscribers)}


def encode_effects(effects: Effects) -> dict[str, Any]:
    return {
        "notices": [{"subscription": n.subscription, "kind": n.kind, "text": n.text}
                    for n in effects.notices],
        "sent": [{"to": s.to, "subscription": s.subscription, "kind": s.kind,
                  "finished_at": s.finished_at, "detail": s.detail} for s in effects.sent],
        "swept": [{"requester": s.requester, "subscription": s.subscription} for s in effects.swept],
    }


Result = SubscribeResult | AddSubscriberResult | tuple[bool, Effects] | Effects


def encode_result(result: Result) -> dict[str, Any]:
    """A machine event's result as its output fields (IDLE-OUT-1/2), without the state fields."""
    if isinstance(result, SubscribeResult):
        return {"verdict": result.verdict, "pushed_out": result.pushed_out, **encode_effects(result.effects)}
    if isinstance(result, AddSubscriberResult):
        return {"accepted": result.accepted, "displaced": result.displaced,
                "announcement": result.announcement, **encode_effects(result.effects)}
    if isinstance(result, tuple):  # receive_notice
        resolved, effects = result
        return {"resolved": resolved, **encode_effects(effects)}
    return encode_effects(result)


# The reference's call of each helper event, given the case's fold_lookalikes (IDLE-OPT-5).
REFERENCE_HELPERS: dict[str, Callable[[bool, dict[str, Any]], Any]] = {
    "sanitise_label": lambda fold, a: peer_idle_notice_label(a["raw"], fold),
    "format_clock": lambda fold, a: format_peer_notice_clock(**a),
    "render_notice": lambda fold, a: render_idle_notice(**a),
    "describe_subscription": lambda fold, a: describe_peer_idle_subscription(**a, fold_lookalikes=fold),
    "is_notice_kind": lambda fold, a: is_peer_idle_notice_kind(**a),
}


def apply_step(machine: IdleSubscriptions, step: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one step; a typed error becomes ``{"error": code, ...}`` with the unchanged state."""
    event = step.get("event")
    entry = INTERFACE.events.get(event) if isinstance(event, str) else None
    if entry is None:
        raise ValueError(f"unknown idle-subscriptions event {event!r}")
    try:
        args = check_arguments(entry.name, step.get("args", {}), entry.argument_names)
        # Every argument by the reference's name; absent is None, as null is (IDLE-IF-1).
        call = {PYTHON_NAMES.get(name, name): args.get(name) for name in entry.argument_names}
        if entry.pure:
            fold = machine.config.options.fold_lookalikes
            return {entry.outputs[0]: REFERENCE_HELPERS[entry.name](fold, call)}
        return {**encode_result(getattr(machine, entry.name)(**call)), **snapshot(machine)}
    except IdleSubscriptionError as error:
        return {"error": error.code} if entry.pure else {"error": error.code, **snapshot(machine)}


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return run_reference_case(config, steps, IdleSubscriptions.from_config, apply_step, IdleSubscriptionError)


# -- the model chart, in the same output shape ---------------------------------------

# The model's own helper of each helper event, given the case's fold_lookalikes; every
# argument present (the interface data's defaults filled in).
MODEL_HELPERS: dict[str, Callable[[bool, dict[str, Any]], Any]] = {
    "sanitise_label": lambda fold, a: model.label(a["raw"], fold),
    "format_clock": lambda fold, a: model.clock(a["epoch_ms"], a["utc_offset_min"]),
    "render_notice": lambda fold, a: model.notice_text(a["kind"], a["label"], a["finished_at"], a["detail"],
                                                       a["utc_offset_min"]),
    "describe_subscription": lambda fold, a: model.describe(a["address"], a["detail_shared"], fold),
    "is_notice_kind": lambda fold, a: model.is_notice_kind(a["value"]),
}


class ModelSession(sessions.ModelSession[IdleSubscriptionsChart]):
    """The idle-subscriptions chart (``model/idle_subscriptions.py``), for valid steps.

    Absent and null optional arguments take the interface data's defaults. A step
    ``advance`` with ``now_ms`` becomes the chart's ``advance(ms=now_ms - clock)``;
    the helpers run the model's own helpers.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        settings = INTERFACE.config_with_defaults(config)
        options = IdleModelOptions(**settings.pop("options"))
        self.chart = sessions.case_chart(IdleSubscriptionsChart, settings, options)

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        entry = INTERFACE.events[step["event"]]
        args = entry.with_defaults(step.get("args", {}))
        if entry.pure:
            return {entry.outputs[0]: MODEL_HELPERS[entry.name](self.chart.options.fold_lookalikes, args)}
        if entry.name == "advance":
            self.chart.send("advance", ms=args["now_ms"] - self.chart.now_ms)
        else:
            self.chart.send(entry.name, **chart_arguments(entry.name, args))
        return dict(self.chart.output)


run_model_case = ModelSession.run_case


# -- random cases for `conform --fuzz` ----------------------------------------------------
# Small caps and times near the deadlines, so that short random traces meet
# the caps, the push-outs, the displacements, the debounce and the back-off.


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random valid config and 1 to 30 steps of the machine's event grammar."""
    config: dict[str, Any] = {"ttl_ms": rng.choice((5, 40, 43_200_000)),
                              "debounce_ms": rng.choice((0, 3, 750)),
                              "held_backoff_ms": rng.choice((1, 7, 30_000)),
                              "outstanding_cap": rng.choice((0, 1, 2, 3)),
                              "priors_kept": rng.choice((0, 1, 3)),
                              "subscriber_cap": rng.choice((0, 1, 2, 32)),
                              "last_turn_text_seat": rng.random() < 0.5,
                              "reader_utc_offset_min": rng.choice((0, -300, 330))}
    options = {name: True for name in INTERFACE.options if rng.random() < 0.25}
    if options:
        config["options"] = options
    now = 0
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.25:
            now += rng.choice((0, 1, config["debounce_ms"], config["held_backoff_ms"], config["ttl_ms"], 29))
            steps.append({"event": "advance", "args": {"now_ms": now}})
        elif roll < 0.4:
            steps.append({"event": "subscribe", "args": {"target": rng.choice(("s1", "s2")),
                                                         "subscription": rng.randrange(5), "label": "Peer"}})
        elif roll < 0.5:
            # Every notice kind (expired from a peer is not recognised, IDLE-REQ-6), and one non-object.
            kind = rng.choice(INTERFACE.vocabulary("notice_kinds"))
            answer = rng.choice(({"kind": kind}, {"kind": kind, "finished_at": now, "detail": "done"}, kind))
            steps.append({"event": "receive_notice", "args": {"subscription": rng.randrange(5),
                                                              "notice": answer,
                                                              "from": rng.choice(("s1", "s2", None))}})
        elif roll < 0.65:
            steps.append({"event": "add_subscriber", "args": {"requester": rng.choice("abc"),
                                                              "subscription": rng.randrange(3),
                                                              "parity": rng.random() < 0.5}})
        elif roll < 0.75:
            steps.append({"event": "turn_started"})
        elif roll < 0.85:
            steps.append({"event": "turn_finished", "args": {"last_turn_text": rng.choice((None, "ok «x»"))}})
        elif roll < 0.95:
            steps.append({"event": "set_held", "args": {"count": rng.choice((0, 0, 1, 2))}})
        else:
            steps.append({"event": rng.choice(("exit", "shutdown"))})
    return config, steps

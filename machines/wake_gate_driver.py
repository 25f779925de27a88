"""The wake-gate driver: case JSON in, ``WakePolicy`` (or chart) calls, output JSON out.

The reference adapter, ``inboxspec check``, refinement and the lockstep tests
all go through it, so there is one encoding of every output.

The reference driver only translates: the reference's ``check_arguments``
rejects argument names the event does not define (``invalid_argument``, first
in the fault order of WAKE-IF-5), and the driver hands every value to
``WakePolicy`` unchanged, which checks the rest of the fault order itself.
The model driver takes valid steps only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec.impl.wake_gate import (
    WakeDecision,
    WakeGateError,
    WakePolicy,
    check_arguments,
)
from inboxspec.machines import interface, sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model.wake_gate import WakeGateChart, WakeGateModelOptions


def encode_decision(decision: WakeDecision, streak: int) -> dict[str, Any]:
    return {
        "lane": decision.lane.value,
        "wake": decision.wake,
        "counts_against_cap": decision.counts_against_cap,
        "refusal_code": decision.refusal_code.value if decision.refusal_code else None,
        "refusal_reason": decision.refusal_reason,
        "streak": streak,
    }


# WAKE-IF-2: the events, their arguments and defaults (spec/wake-gate.interface.json).
# A missing argument without a default is taken as null (and rejected as its
# type's error); an argument the event does not define is `invalid_argument`.
INTERFACE = interface.load("wake-gate")


def apply_step(policy: WakePolicy, step: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one step; a typed error becomes ``{"error": code}`` with the unchanged streak.

    An unknown event or an ``args`` that is not an object is a malformed
    request, not machine input: it raises ``ValueError`` and the adapter
    answers ``errored`` (PROTO-MAL-2).
    """
    event = step.get("event")
    raw_args = step.get("args", {})
    entry = INTERFACE.events.get(event) if isinstance(event, str) else None
    if entry is None:
        raise ValueError(f"unknown wake-gate event {event!r}")
    if not isinstance(raw_args, Mapping):
        raise ValueError(f"args must be an object, got {type(raw_args).__name__}")
    # Values go to the API unchecked: it validates them, in the fault order. A
    # missing argument without a default is null (WAKE-IF-3).
    defined = entry.argument_names
    try:
        given = check_arguments(entry.name, raw_args, defined)
        args: dict[str, Any] = dict.fromkeys(defined) | entry.with_defaults(given)
        if event == "decide":
            decision = policy.decide(args["batch"], now_ms=args["now_ms"],
                                     plugin_pending=args["plugin_pending"])
            return encode_decision(decision, policy.streak)
        if event == "announce_refusal":
            return {"announce": policy.announce_refusal(), "streak": policy.streak}
        if event == "reset_streak":
            policy.reset_streak()
        elif event == "set_streak":
            policy.streak = args["value"]
        elif event == "set_floor":
            policy.floor_ms = args["value"]
    except WakeGateError as error:
        return {"error": error.code, "streak": policy.streak}
    return {"streak": policy.streak}


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return run_reference_case(config, steps, WakePolicy.from_config, apply_step, WakeGateError)


class ModelSession(sessions.ModelSession[WakeGateChart]):
    """The wake-gate chart. Its one error output, ``empty_batch``, is behaviour:
    WAKE-OPT-4 rejects a well-formed step. A step's ``now_ms`` becomes the
    chart's own ``elapse`` event, then the decision.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        settings = INTERFACE.config_with_defaults(config)
        self.chart = sessions.case_chart(WakeGateChart, max_streak=settings["max_streak"],
                                         floor_ms=settings["floor_ms"],
                                         options=WakeGateModelOptions(**settings["options"]))

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        event = step["event"]
        args = INTERFACE.events[event].with_defaults(step.get("args", {}))
        if event == "decide":
            batch = [tuple(m[name] for name in MESSAGE_FIELDS) for m in args["batch"]]
            self.chart.send("elapse", ms=args["now_ms"] - self.chart.now_ms)
            self.chart.send(event, batch=batch, plugin_pending=args["plugin_pending"])
        elif event in ("set_streak", "set_floor"):
            self.chart.send(event, value=args["value"])
        else:
            self.chart.send(event)
        return dict(self.chart.output)


run_model_case = ModelSession.run_case
# A message's fields, in the order the chart's message tuples hold them (WAKE-MSG-1).
MESSAGE_FIELDS = INTERFACE.vocabulary("message_fields")


# -- random cases for `conform --fuzz` ------------------------------------------
# Messages and times are drawn near the rules' edges (the prefix with one
# character off, self-mail to another mailbox, times a floor apart) so that
# short random traces meet the branches the fixed cases pin.

_TEXTS = ("[scheduled] sweep", "[scheduled]sweep", "[Scheduled] sweep", " [scheduled] x", "hello", "")
_MAILBOXES = ("me", "peer", "me/child-1")


def _random_message(rng: random.Random) -> dict[str, Any]:
    recipient = rng.choice(_MAILBOXES)
    sender = recipient if rng.random() < 0.6 else rng.choice(_MAILBOXES)
    kind = "user" if rng.random() < 0.1 else "agent"
    # Half the texts carry the exact prefix: the cadence rules need runs of self-mail.
    text = _TEXTS[0] if rng.random() < 0.5 else rng.choice(_TEXTS)
    return {"kind": kind, "from": sender, "to": recipient, "text": text}


# Faults a step may carry (WAKE-IF-5), each alone or with others, so that ports
# meet the fault order on random traces too. About one step in ten has some.
_FAULTS: tuple[tuple[str, Any], ...] = (
    ("batch", "not a list"),
    ("batch", [{"kind": "agent", "from": "me", "to": "me"}]),
    ("batch", [None]),
    ("now_ms", -1),
    ("now_ms", 2**53),
    ("now_ms", 1.5),
    ("plugin_pending", None),
    ("plugin_pending", 1),
    ("pluginPending", True),
)


def _with_faults(rng: random.Random, args: dict[str, Any]) -> dict[str, Any]:
    faulty = dict(args)
    for name, value in rng.sample(_FAULTS, rng.choice((1, 1, 2, 3))):
        faulty[name] = value
    return faulty


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random valid config and 1 to 30 steps of the wake gate's event grammar,
    about one step in ten with one to three faults."""
    max_streak = rng.choice((0, 1, 2, 3, 10))
    floor = rng.choice((0, 1, 1000, 30_000))
    config: dict[str, Any] = {"max_streak": max_streak, "floor_ms": floor}
    options = {name: True for name in INTERFACE.options if rng.random() < 0.25}
    if options:
        config["options"] = options
    now = rng.randrange(0, 10_000_000)
    # The cadence rules compare `now` with the last self-mail time, so half the
    # time moves land a floor (give or take 1 ms) after the last self-mail seen.
    last_self: int | None = None
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.6:
            if last_self is not None and rng.random() < 0.5:
                now = max(0, last_self + floor + rng.choice((-1, 0, 1)))
            else:
                now = max(0, now + rng.choice((0, 1, -1, floor - 1, floor, floor + 1, 5 * floor + 7)))
            batch = [_random_message(rng) for _ in range(rng.choice((0, 1, 1, 2)))]
            if any(m["from"] == m["to"] and m["text"].startswith("[scheduled] ") for m in batch):
                last_self = now
            args: dict[str, Any] = {"batch": batch, "now_ms": now}
            if rng.random() < 0.3:
                args["plugin_pending"] = rng.random() < 0.5
            if rng.random() < 0.1:
                args = _with_faults(rng, args)
            steps.append({"event": "decide", "args": args})
        elif roll < 0.75:
            steps.append({"event": "announce_refusal"})
        elif roll < 0.85:
            steps.append({"event": "reset_streak"})
        elif roll < 0.93:
            value = rng.choice((0, 1, max_streak, max_streak + 1, -1, 2**53 - 1, True))
            steps.append({"event": "set_streak", "args": {"value": value}})
        else:
            steps.append({"event": "set_floor", "args": {"value": rng.choice((0, 1, 1000, 30_000))}})
    return config, steps

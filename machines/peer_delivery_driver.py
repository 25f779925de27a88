"""The peer-delivery driver: case JSON in, ``PeerDelivery`` calls, output JSON out.

Also the model session (the same steps applied to the chart) and random cases
for ``conform --fuzz``. The five rendering events read no state, so the model
session answers them through the reference's pure functions: the chart has
nothing to say about them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inboxspec.impl.peer_delivery import (
    ABSENT,
    PeerDelivery,
    PeerDeliveryError,
    StepResult,
    check_arguments,
    describe_drop_reasons,
    is_receipt_state,
    recipient_suffix,
    render_delivery_notice,
    render_dropped_notice,
)
from inboxspec.machines import interface, sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model.peer_delivery import PeerDeliveryChart, PeerDeliveryModelOptions

# One feature per finding option: a port that has not implemented an option
# declares the feature unsupported and its cases are skipped, not failed.

# The events, their arguments (in the order their faults are checked, PEER-IF-4),
# defaults and output fields: spec/peer-delivery.interface.json.
INTERFACE = interface.load("peer-delivery")
PURE_EVENTS = frozenset(name for name, event in INTERFACE.events.items() if event.pure)
STATEFUL_EVENTS = frozenset(INTERFACE.events) - PURE_EVENTS


def _arguments(event: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments the call gets: an unknown name is ``invalid_argument``, and a
    required one that is absent is passed as ABSENT, which its own check rejects."""
    entry = INTERFACE.events[event]
    given = check_arguments(event, args, entry.argument_names)
    chosen = {name: given[name] for name in entry.argument_names if name in given}
    for argument in entry.arguments:
        if argument.required and argument.name not in chosen:
            chosen[argument.name] = ABSENT
    return chosen


def encode_state(delivery: PeerDelivery) -> dict[str, Any]:
    return {"held": [e.to_json() for e in delivery.held], "box": delivery.box}


def encode_result(delivery: PeerDelivery, result: StepResult) -> dict[str, Any]:
    output: dict[str, Any] = {"receipts": [r.to_json() for r in result.receipts], **encode_state(delivery)}
    if result.ticket is not None:
        output["ticket"] = result.ticket
        output["send_error"] = result.send_error
    if result.expiry is not None:
        output.update(value=result.expiry.value, ms=result.expiry.ms, invalid=result.expiry.invalid,
                      warning=result.expiry.warning)
    return output


PURE: dict[str, Callable[..., Any]] = {
    "render_delivery_notice": render_delivery_notice,
    "render_dropped_notice": render_dropped_notice,
    "describe_drop_reasons": describe_drop_reasons,
    "recipient_suffix": recipient_suffix,
}


def apply_pure(event: str, args: Mapping[str, Any]) -> dict[str, Any]:
    try:
        chosen = _arguments(event, args)
        if event == "is_receipt_state":
            return {"result": is_receipt_state(chosen.get("value", ABSENT))}  # absent: false
        # ABSENT is not a valid value for any rendering argument: it fails its own check.
        return {"text": PURE[event](**chosen)}
    except PeerDeliveryError as error:
        return {"error": error.code}


def apply_step(delivery: PeerDelivery, step: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one step; a typed error becomes ``{"error": code}`` with the unchanged state."""
    event = step.get("event")
    args = step.get("args", {})
    if not isinstance(args, Mapping):
        raise ValueError("step args must be an object")
    if event in PURE_EVENTS:
        return apply_pure(str(event), args)
    if event not in STATEFUL_EVENTS:
        raise ValueError(f"unknown peer-delivery event {event!r}")
    try:
        chosen = _arguments(event, args)
        result: StepResult = getattr(delivery, event)(**chosen)
    except PeerDeliveryError as error:
        return {"error": error.code, "receipts": [], **encode_state(delivery)}
    return encode_result(delivery, result)


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return run_reference_case(config, steps, PeerDelivery.from_config, apply_step, PeerDeliveryError)


class ModelSession(sessions.ModelSession[PeerDeliveryChart]):
    """The peer-delivery chart. Its error outputs are behaviour: a ticket that
    is not held (``not_held``), a clock that moves back (``invalid_time``) and
    a full box under PEER-OPT-2 (``box_full``).
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        settings = INTERFACE.config_with_defaults(config)
        self.chart = sessions.case_chart(
            PeerDeliveryChart,
            held_cap=settings["held_cap"], box_cap=settings["box_cap"], max_hops=settings["max_hops"],
            setting=settings["setting"], starting_up=settings["starting_up"], mode=settings["mode"],
            options=PeerDeliveryModelOptions(**settings["options"]))

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        event = step["event"]
        args = dict(step.get("args", {}))
        if event in PURE_EVENTS:
            return apply_pure(event, args)
        # Absent arguments take their defaults. set_recipient's have none: the chart
        # keeps what a step does not give (PEER-SET-1).
        args = INTERFACE.events[event].with_defaults(args)
        if event == "set_dialog_expiry":
            # PEER-EXP-2: an absent value resolves as "default" does.
            args.setdefault("value", "default")
        self.chart.send(event, **args)
        return dict(self.chart.output)


run_model_case = ModelSession.run_case


# -- random cases for `conform --fuzz` ------------------------------------------
# Small caps and two senders, so that short traces meet eviction, full boxes,
# deadlines and every judgement rule.

_SENDERS = ("a", "b", "c")
_MODES = (None, "x", "y")
# The host's verdicts that a send carries (loop, duplicate, ...): its boolean arguments.
INGRESS_FLAGS = tuple(a.name for a in INTERFACE.events["send_message"].arguments if a.type == "boolean")


def _random_send(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {"sender": rng.choice(_SENDERS)}
    if rng.random() < 0.8:
        args["sender_mode"] = rng.choice(_MODES)
    if rng.random() < 0.2:
        args["attestation"] = rng.choice(INTERFACE.vocabulary("attestations"))
    for flag in INGRESS_FLAGS:
        if rng.random() < 0.05:
            args[flag] = True
    if rng.random() < 0.1:
        args["hops"] = rng.choice((0, 4, 5))
    return args


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random valid config and 1 to 30 steps of the peer-delivery event grammar."""
    config: dict[str, Any] = {"held_cap": rng.choice((1, 2, 3, 100)), "box_cap": rng.choice((0, 1, 2, 50)),
                              "mode": rng.choice(_MODES), "setting": rng.choice((None, "accept", "hold"))}
    options = {name: True for name in INTERFACE.options if rng.random() < 0.25}
    if options:
        config["options"] = options
    now = 0
    tickets = 0
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.45:
            tickets += 1
            steps.append({"event": "send_message", "args": _random_send(rng)})
        elif roll < 0.55:
            now += rng.choice((0, 1, 59_999, 60_000, 300_000))
            steps.append({"event": "advance", "args": {"now_ms": now}})
        elif roll < 0.65:
            steps.append({"event": "drain"})
        elif roll < 0.75:
            event = rng.choice(("approve", "deny"))
            steps.append({"event": event, "args": {"ticket": rng.randint(1, max(1, tickets))}})
        elif roll < 0.85:
            key = rng.choice(("setting", "starting_up", "mode"))
            value = {"setting": rng.choice((None, *INTERFACE.vocabulary("settings"))),
                     "starting_up": rng.random() < 0.5, "mode": rng.choice(_MODES)}[key]
            steps.append({"event": "set_recipient", "args": {key: value}})
        elif roll < 0.92:
            value = rng.choice((*INTERFACE.vocabularies["dialog_expiry"]["ms"], "default", None, "1h"))
            steps.append({"event": "set_dialog_expiry", "args": {"value": value}})
        else:
            steps.append({"event": "take", "args": {"count": rng.choice((1, 2))}})
    return config, steps

"""The wake-gate driver: case JSON in, ``WakePolicy`` calls, output JSON out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec.impl.wake_gate import (
    DEFAULT_CADENCE_FLOOR_MS,
    DEFAULT_MAX_STREAK,
    InvalidBatch,
    Message,
    WakeDecision,
    WakeGateError,
    WakePolicy,
    parse_message,
)
from inboxspec.model.wake_gate import WakeGateChart, WakeGateModelOptions

# One feature per finding option: a port that has not implemented an option
# declares the feature unsupported and its cases are skipped, not failed.
FEATURES = [
    "option:announce_requires_refusal",
    "option:cadence_from_allowed_wakes",
    "option:clamp_backwards_clock",
    "option:reject_empty_batch",
]


def encode_decision(decision: WakeDecision, streak: int) -> dict[str, Any]:
    return {
        "lane": decision.lane.value,
        "wake": decision.wake,
        "counts_against_cap": decision.counts_against_cap,
        "refusal_code": decision.refusal_code.value if decision.refusal_code else None,
        "refusal_reason": decision.refusal_reason,
        "streak": streak,
    }


def _parse_batch(raw: object) -> list[Message]:
    if not isinstance(raw, list):
        raise InvalidBatch(f"batch must be a list, got {type(raw).__name__}")
    return [parse_message(item) for item in raw]


def apply_step(policy: WakePolicy, step: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one step; a typed error becomes ``{"error": code}`` with the unchanged streak."""
    event = step.get("event")
    args = step.get("args", {})
    try:
        if event == "decide":
            decision = policy.decide(
                _parse_batch(args.get("batch")),
                now_ms=args.get("now_ms"),
                plugin_pending=args.get("plugin_pending", False),
            )
            return encode_decision(decision, policy.streak)
        if event == "announce_refusal":
            return {"announce": policy.announce_refusal(), "streak": policy.streak}
        if event == "reset_streak":
            policy.reset_streak()
        elif event == "set_streak":
            policy.streak = args.get("value")
        elif event == "set_floor":
            policy.floor_ms = args.get("value")
        else:
            raise ValueError(f"unknown wake-gate event {event!r}")
    except WakeGateError as error:
        return {"error": error.code, "streak": policy.streak}
    return {"streak": policy.streak}


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    try:
        policy = WakePolicy.from_config(config)
    except WakeGateError as error:
        return {"config_error": error.code}
    return {"outputs": [apply_step(policy, step) for step in steps]}


class ModelSession:
    """Valid steps applied to the model chart, in the same output shape.

    The model has no input validation (it describes behaviour, not parsing),
    so this takes only steps the reference accepts. The lockstep tests and the
    explorer use it; their traces are lists of case steps.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.chart = WakeGateChart(
            max_streak=config.get("max_streak", DEFAULT_MAX_STREAK),
            floor_ms=config.get("floor_ms", DEFAULT_CADENCE_FLOOR_MS),
            options=WakeGateModelOptions(**config.get("options", {})),
        )

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        args = step.get("args", {})
        event = step["event"]
        if event == "decide":
            batch = [(m["kind"], m["from"], m["to"], m["text"]) for m in args["batch"]]
            self.chart.send(event, batch=batch, plugin_pending=args.get("plugin_pending", False),
                            now_ms=args["now_ms"])
        elif event in ("set_streak", "set_floor"):
            self.chart.send(event, value=args["value"])
        else:
            self.chart.send(event)
        return dict(self.chart.output)


def run_model_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    session = ModelSession(config)
    return {"outputs": [session.apply(step) for step in steps]}

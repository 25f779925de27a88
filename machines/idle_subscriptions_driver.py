"""The idle-subscriptions driver: case JSON in, ``IdleSubscriptions`` calls, output JSON out.

The output shapes and the order in which a step's faults are checked are the
spec's Interface section (spec/idle-subscriptions.md, IDLE-IF-*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec.impl.idle_label import (
    describe_peer_idle_subscription,
    format_peer_notice_clock,
    is_peer_idle_notice_kind,
    peer_idle_notice_label,
    render_idle_notice,
)
from inboxspec.impl.idle_subscriptions import (
    MAX_UTC_OFFSET_MIN,
    AddSubscriberResult,
    Effects,
    IdleSubscriptionError,
    IdleSubscriptions,
    InvalidArgument,
    SubscribeResult,
    is_safe_natural,
)

FEATURES = [
    "option:notify_pushed_out",
    "option:fire_when_already_idle",
    "option:fire_on_release",
]

# Each event's arguments, in the order their faults are checked (IDLE-IF-3).
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "subscribe": ("target", "label"),
    "receive_notice": ("subscription", "notice"),
    "add_subscriber": ("requester", "subscription", "parity"),
    "turn_started": (),
    "turn_finished": ("last_turn_text",),
    "set_held": ("count",),
    "exit": (),
    "shutdown": (),
    "advance": ("now_ms",),
    "sanitise_label": ("raw",),
    "format_clock": ("epoch_ms", "utc_offset_min"),
    "render_notice": ("kind", "label", "finished_at", "detail", "utc_offset_min"),
    "describe_subscription": ("address", "detail_shared"),
    "is_notice_kind": ("value",),
}
HELPERS = ("sanitise_label", "format_clock", "render_notice", "describe_subscription", "is_notice_kind")


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


def _helper(event: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The pure helpers (IDLE-LABEL-*, IDLE-CLOCK-*, IDLE-TEXT-*), with their own argument checks."""
    if event == "sanitise_label":
        raw = args.get("raw")
        if not isinstance(raw, str):
            raise InvalidArgument("raw must be a string")
        return {"label": peer_idle_notice_label(raw)}
    if event == "is_notice_kind":
        return {"is_kind": is_peer_idle_notice_kind(args.get("value"))}
    offset = args.get("utc_offset_min", 0)
    if type(offset) is not int or abs(offset) > MAX_UTC_OFFSET_MIN:
        raise InvalidArgument("utc_offset_min must be an integer in [-1439, 1439]")
    if event == "format_clock":
        epoch = args.get("epoch_ms")
        if epoch is not None and not is_safe_natural(epoch):
            raise InvalidArgument("epoch_ms must be an integer in [0, 2**53 - 1] or null")
        return {"clock": format_peer_notice_clock(epoch, offset)}
    if event == "describe_subscription":
        address, shared = args.get("address"), args.get("detail_shared", False)
        if not isinstance(address, str) or type(shared) is not bool:
            raise InvalidArgument("address is a string and detail_shared a boolean")
        return {"text": describe_peer_idle_subscription(address, shared)}
    kind, label = args.get("kind"), args.get("label")
    finished_at, detail = args.get("finished_at"), args.get("detail")
    if not is_peer_idle_notice_kind(kind):
        raise InvalidArgument("kind must be an idle notice kind")
    if not isinstance(label, str) or not label:
        raise InvalidArgument("label must be a non-empty string")
    if finished_at is not None and not is_safe_natural(finished_at):
        raise InvalidArgument("finished_at must be an integer in [0, 2**53 - 1] or null")
    if detail is not None and not isinstance(detail, str):
        raise InvalidArgument("detail must be a string or null")
    return {"text": render_idle_notice(kind, label, finished_at, detail, offset)}


def apply_step(machine: IdleSubscriptions, step: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one step; a typed error becomes ``{"error": code, ...}`` with the unchanged state."""
    event = step.get("event")
    if event not in ARGUMENTS:
        raise ValueError(f"unknown idle-subscriptions event {event!r}")
    args = step.get("args", {})
    try:
        if not isinstance(args, Mapping):
            raise InvalidArgument("args must be an object")
        extra = sorted(str(k) for k in args if k not in ARGUMENTS[event])
        if extra:
            raise InvalidArgument(f"unexpected argument(s) for {event}: {', '.join(extra)}")
        if event in HELPERS:
            return _helper(event, args)
        return {**_machine_event(machine, event, args), **snapshot(machine)}
    except IdleSubscriptionError as error:
        if event in HELPERS:
            return {"error": error.code}
        return {"error": error.code, **snapshot(machine)}


def _machine_event(machine: IdleSubscriptions, event: str, args: Mapping[str, Any]) -> dict[str, Any]:
    if event == "subscribe":
        sub: SubscribeResult = machine.subscribe(args.get("target"), args.get("label"))
        return {"verdict": sub.verdict, "subscription": sub.subscription,
                "pushed_out": sub.pushed_out, **encode_effects(sub.effects)}
    if event == "receive_notice":
        resolved, effects = machine.receive_notice(args.get("subscription"), args.get("notice"))
        return {"resolved": resolved, **encode_effects(effects)}
    if event == "add_subscriber":
        added: AddSubscriberResult = machine.add_subscriber(
            args.get("requester"), args.get("subscription"), args.get("parity"))
        return {"accepted": added.accepted, "displaced": added.displaced,
                "announcement": added.announcement, **encode_effects(added.effects)}
    if event == "turn_started":
        return encode_effects(machine.turn_started())
    if event == "turn_finished":
        return encode_effects(machine.turn_finished(args.get("last_turn_text")))
    if event == "set_held":
        return encode_effects(machine.set_held(args.get("count")))
    if event == "exit":
        return encode_effects(machine.exit())
    if event == "shutdown":
        return encode_effects(machine.shutdown())
    return encode_effects(machine.advance(args.get("now_ms")))


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    try:
        machine = IdleSubscriptions.from_config(config)
    except IdleSubscriptionError as error:
        return {"config_error": error.code}
    return {"outputs": [apply_step(machine, step) for step in steps]}

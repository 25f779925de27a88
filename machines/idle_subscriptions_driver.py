"""The idle-subscriptions driver: case JSON in, ``IdleSubscriptions`` (or chart) calls, output JSON out.

The output shapes and the order in which a step's faults are checked are the
spec's Interface section (spec/idle-subscriptions.md, IDLE-IF-*).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec.impl.idle_label import (
    MAX_UTC_OFFSET_MIN,
    describe_peer_idle_subscription,
    format_peer_notice_clock,
    is_peer_idle_notice_kind,
    is_safe_natural,
    peer_idle_notice_label,
    render_idle_notice,
)
from inboxspec.impl.idle_subscriptions import (
    AddSubscriberResult,
    Effects,
    IdleSubscriptionError,
    IdleSubscriptions,
    InvalidArgument,
    SubscribeResult,
)
from inboxspec.machines import sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model import idle_subscriptions as model
from inboxspec.model.idle_subscriptions import IdleModelOptions, IdleSubscriptionsChart

FEATURES = (
    "option:notify_pushed_out",
    "option:fire_when_already_idle",
    "option:fire_on_release",
    "option:answers_from_target_only",
    "option:fold_lookalikes",
)

# Each event's arguments, in the order their faults are checked (IDLE-IF-3).
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "subscribe": ("target", "subscription", "label"),
    "receive_notice": ("subscription", "notice", "from"),
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


def _helper(event: str, args: Mapping[str, Any], fold_lookalikes: bool) -> dict[str, Any]:
    """The pure helpers (IDLE-LABEL-*, IDLE-CLOCK-*, IDLE-TEXT-*), with their own argument checks.

    The sanitiser follows the case's option fold_lookalikes (IDLE-OPT-5)."""
    if event == "sanitise_label":
        raw = args.get("raw")
        if not isinstance(raw, str):
            raise InvalidArgument("raw must be a string")
        return {"label": peer_idle_notice_label(raw, fold_lookalikes)}
    if event == "is_notice_kind":
        return {"is_kind": is_peer_idle_notice_kind(args.get("value"))}
    # IDLE-IF-1: an absent and a null optional argument both take the default.
    offset = 0 if args.get("utc_offset_min") is None else args["utc_offset_min"]
    if type(offset) is not int or abs(offset) > MAX_UTC_OFFSET_MIN:
        raise InvalidArgument("utc_offset_min must be an integer in [-1439, 1439]")
    if event == "format_clock":
        epoch = args.get("epoch_ms")
        if epoch is not None and not is_safe_natural(epoch):
            raise InvalidArgument("epoch_ms must be an integer in [0, 2**53 - 1] or null")
        return {"clock": format_peer_notice_clock(epoch, offset)}
    if event == "describe_subscription":
        address = args.get("address")
        shared = False if args.get("detail_shared") is None else args["detail_shared"]
        if not isinstance(address, str) or type(shared) is not bool:
            raise InvalidArgument("address is a string and detail_shared a boolean")
        return {"text": describe_peer_idle_subscription(address, shared, fold_lookalikes)}
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
    return {"text": render_idle_notice(str(kind), label, finished_at, detail, offset)}


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
            return _helper(event, args, machine.config.options.fold_lookalikes)
        return {**_machine_event(machine, event, args), **snapshot(machine)}
    except IdleSubscriptionError as error:
        if event in HELPERS:
            return {"error": error.code}
        return {"error": error.code, **snapshot(machine)}


def _machine_event(machine: IdleSubscriptions, event: str, args: Mapping[str, Any]) -> dict[str, Any]:
    if event == "subscribe":
        sub: SubscribeResult = machine.subscribe(args.get("target"), args.get("subscription"),
                                                 args.get("label"))
        return {"verdict": sub.verdict, "pushed_out": sub.pushed_out, **encode_effects(sub.effects)}
    if event == "receive_notice":
        resolved, effects = machine.receive_notice(args.get("subscription"), args.get("notice"),
                                                   args.get("from"))
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
    return run_reference_case(config, steps, IdleSubscriptions.from_config, apply_step, IdleSubscriptionError)


# -- the model chart, in the same output shape ---------------------------------------


class ModelSession(sessions.ModelSession):
    """The idle-subscriptions chart (``model/idle_subscriptions.py``).

    A step ``advance`` with ``now_ms`` becomes the chart's
    ``advance(ms=now_ms - clock)``; the helpers run the model's own helpers.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        settings = {k: v for k, v in config.items() if k != "options"}
        self.chart = IdleSubscriptionsChart(settings, IdleModelOptions(**(config.get("options") or {})))

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        event = step["event"]
        args = {k: v for k, v in step.get("args", {}).items() if v is not None}
        if event in HELPERS:
            return _model_helper(event, args, self.chart.options.fold_lookalikes)
        if event == "advance":
            self.chart.send("advance", ms=args["now_ms"] - self.chart.now_ms)
        elif event == "receive_notice":
            # `from` is a Python keyword; the chart calls the argument `sender`.
            self.chart.send(event, subscription=args["subscription"], notice=args.get("notice"),
                            sender=args.get("from"))
        elif event == "subscribe":
            self.chart.send(event, peer=args["target"], subscription=args["subscription"],
                            label=args.get("label"))
        else:
            self.chart.send(event, **args)
        return dict(self.chart.output)


def _model_helper(event: str, args: Mapping[str, Any], fold_lookalikes: bool) -> dict[str, Any]:
    offset = args.get("utc_offset_min") or 0
    if event == "sanitise_label":
        return {"label": model.label(args["raw"], fold_lookalikes)}
    if event == "is_notice_kind":
        return {"is_kind": model.is_notice_kind(args.get("value"))}
    if event == "format_clock":
        return {"clock": model.clock(args.get("epoch_ms"), offset)}
    if event == "describe_subscription":
        return {"text": model.describe(args["address"], bool(args.get("detail_shared")), fold_lookalikes)}
    return {"text": model.notice_text(args["kind"], args["label"], args.get("finished_at"),
                                      args.get("detail"), offset)}


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
    options = {name: True for name in IdleModelOptions.__dataclass_fields__ if rng.random() < 0.25}
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
            answer = rng.choice(({"kind": "idle", "finished_at": now, "detail": "done"}, {"kind": "exited"},
                                 {"kind": "unavailable"}, {"kind": "expired"}, "idle"))
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

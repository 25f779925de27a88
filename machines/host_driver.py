"""The host driver: case JSON in, ``Host`` (or host chart) calls, output JSON out.

The reference driver only translates: the reference's ``check_arguments``
rejects argument names the event does not define (``invalid_argument``, first
in HOST-IF-5's fault order), and the driver passes an absent required argument
as a value that fails its own check, and hands everything else to ``Host``
unchanged. The model driver takes valid steps only; a step ``advance`` with
``now_ms`` is the chart's ``advance(ms=now_ms - clock)``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec.impl.host import Host, HostError, check_arguments
from inboxspec.machines import interface, sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model.host import HostChart, HostModelOptions

INTERFACE = interface.load("host")


class _Absent:
    """An absent required argument: no check accepts it, so it is reported with the argument's code."""

    def __repr__(self) -> str:
        return "absent"


ABSENT = _Absent()


def apply_step(host: Host, step: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one step; a typed error becomes ``{"error": code, "sessions": ...}``.

    An unknown event or an ``args`` that is not an object is a malformed
    request: ``ValueError``, and the adapter answers ``errored``.
    """
    event = step.get("event")
    raw_args = step.get("args", {})
    entry = INTERFACE.events.get(event) if isinstance(event, str) else None
    if entry is None:
        raise ValueError(f"unknown host event {event!r}")
    if not isinstance(raw_args, Mapping):
        raise ValueError(f"args must be an object, got {type(raw_args).__name__}")
    try:
        given = check_arguments(entry.name, raw_args, entry.argument_names)
        args = {a.name: given.get(a.name, a.default if a.has_default else ABSENT) for a in entry.arguments}
        events = getattr(host, entry.name)(**args)
    except HostError as error:
        return {"error": error.code, "sessions": host.state()}
    return {"events": events, "sessions": host.state()}


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return run_reference_case(config, steps, Host.from_config, apply_step, HostError)


class ModelSession(sessions.ModelSession[HostChart]):
    """The host chart, on valid steps."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        settings = INTERFACE.config_with_defaults(config)
        self.chart = sessions.case_chart(
            HostChart,
            {k: v for k, v in settings.items() if k != "options"}, HostModelOptions(**settings["options"])
        )

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        event = step["event"]
        args = INTERFACE.events[event].with_defaults(step.get("args", {}))
        if event == "advance":
            self.chart.send("advance", ms=args["now_ms"] - self.chart.now_ms)
        elif event == "subscribe":  # the chart's `peer`: python-statemachine reserves `target`
            self.chart.send(event, session=args["session"], peer=args["target"])
        else:
            self.chart.send(event, **args)
        return dict(self.chart.output)


run_model_case = ModelSession.run_case


# -- random cases for `conform --fuzz` --------------------------------------------
# Turns that send, forge, schedule and subscribe, the environment typing,
# approving and changing settings, and the clock moving by the composed
# machines' own periods, so that short traces reach wakes, refusals, holds
# and idle answers. About one step in ten has a fault.

_FAULTS: tuple[tuple[str, Any], ...] = (
    ("session", "nobody"),
    ("session", 1),
    ("text", None),
    ("to", "nobody"),
    ("claimed_from", 7),
    ("delay_ms", -1),
    ("ticket", 0),
    ("setting", "maybe"),
    ("extra", True),
)


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    addresses = ["s1", "s2", "s3"][: rng.choice((2, 2, 3))]
    config: dict[str, Any] = {
        "sessions": addresses,
        "wake_gate": {"max_streak": rng.choice((1, 2, 3)), "floor_ms": rng.choice((0, 2000))},
        "peer_delivery": {
            "setting": rng.choice(("accept", "accept", "hold", None)),
            "box_cap": rng.choice((1, 2, 50)),
            "held_cap": rng.choice((1, 2)),
        },
        "idle_subscriptions": {"debounce_ms": 1000, "held_backoff_ms": 2000},
    }
    options = {name: True for name in INTERFACE.options if rng.random() < 0.2}
    if options.get("harness_lines_as_agent_mail") and options.get("harness_lines_at_next_turn"):
        del options["harness_lines_at_next_turn"]
    if options:
        config["options"] = options
    now = 0
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 40)):
        me = rng.choice(addresses)
        other = rng.choice([a for a in addresses if a != me])
        roll = rng.random()
        if roll < 0.15:
            step: dict[str, Any] = {"event": "tick"}
        elif roll < 0.25:
            now += rng.choice((0, 500, 1000, 2000, 5000))
            step = {"event": "advance", "args": {"now_ms": now}}
        elif roll < 0.32:
            step = {"event": "user_input", "args": {"session": me, "text": "hi"}}
        elif roll < 0.5:
            args: dict[str, Any] = {
                "session": me,
                "to": other,
                "text": rng.choice(("hello", "[scheduled] x")),
            }
            if rng.random() < 0.3:
                args["claimed_from"] = rng.choice(addresses)
            step = {"event": "send_message", "args": args}
        elif roll < 0.58:
            step = {
                "event": "schedule",
                "args": {"session": me, "delay_ms": rng.choice((0, 2000)), "text": "x"},
            }
        elif roll < 0.66:
            step = {"event": "subscribe", "args": {"session": me, "target": other}}
        elif roll < 0.8:
            step = {"event": "end_turn", "args": {"session": me, "detail": rng.choice((None, "done"))}}
        elif roll < 0.9:
            step = {
                "event": rng.choice(("approve", "deny")),
                "args": {"session": me, "ticket": rng.randint(1, 4)},
            }
        else:
            step = {
                "event": "set_setting",
                "args": {"session": me, "setting": rng.choice(("accept", "hold", None))},
            }
        if rng.random() < 0.1:
            name, value = rng.choice(_FAULTS)
            step = {"event": step["event"], "args": {**step.get("args", {}), name: value}}
        steps.append(step)
    # The limits of HOST-TURN-1 and HOST-TURN-3 in some cases, drawn last so that a seed's other
    # draws (its config, its steps) stay what they were before the limits were drawn at all.
    for key, choices in (("turn_action_limit", (1, 2, 3)), ("reminder_limit", (0, 1, 2))):
        if rng.random() < 0.3:
            config[key] = rng.choice(choices)
    return config, steps

"""What the explorer needs to know about the wake gate: snapshot, alphabet, invariants.

Snapshot
    ``(control state, streak, age, floor_ms)`` where ``age`` is the time since
    the last recorded self-wake (``now - last``) or None before the first one.
    Only ``age`` matters about time: the chart compares it with the floor.

Time abstraction
    The environment moves the clock to one of a few positions relative to the
    last self-wake: just before the floor (``age = floor - 1``), exactly at it
    (``age = floor``), or one millisecond *before* the last self-wake
    (``age = -1``, a clock that went backwards). Other ages behave like one of
    these, so the reachable space is finite, and every abstract trace replays
    with concrete times (``concretize``).

Bounds (``--bound NAME=VALUE``)
    ``max_streak``  the chart's cap (default 10, the seed's);
    ``floors``      the floors a host may set, comma-separated ms (default 30000,0);
                    the first one is the configured floor;
    ``streaks``     values a host may set the streak to (default 0,cap+1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inboxspec.model.wake_gate import WakeGateModelOptions

Snapshot = tuple[str, int, int | None, int]
VARIABLES = ("control", "streak", "age", "floor_ms")  # the snapshot's fields, for ITF traces

CHATTER = ("agent", "peer", "me", "hello")
SELF = ("agent", "me", "me", "[scheduled] sweep")
USER = ("user", "person", "me", "hi")

# The seed's defaults (WAKE-DEF-1), plus the zero floor a host may set (WAKE-HOST-2).
DEFAULT_BOUNDS: dict[str, str] = {"max_streak": "10", "floors": "30000,0", "streaks": ""}
OPTIONS = tuple(WakeGateModelOptions.__dataclass_fields__)


@dataclass(frozen=True)
class Action:
    """One letter of the alphabet: a chart event with arguments, or a clock move."""

    label: str
    event: str | None  # chart event; None for a clock move
    kwargs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    clock: str | None = None  # "below_floor", "at_floor", "backwards"


@dataclass(frozen=True)
class Invariant:
    name: str
    requirements: tuple[str, ...]
    applies: Callable[[Action], bool]
    holds: Callable[[Snapshot, Snapshot, dict[str, Any], Any], bool]
    finding: str | None = None  # a finding's property: expected to fail under the seed default
    option: str | None = None  # the option under which a finding's property holds


def parse_bounds(raw: dict[str, str]) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(DEFAULT_BOUNDS))
    if unknown:
        raise ValueError(f"unknown wake-gate bound(s): {', '.join(unknown)}; "
                         f"known: {', '.join(DEFAULT_BOUNDS)}")
    merged = {**DEFAULT_BOUNDS, **raw}
    try:
        cap = int(merged["max_streak"])
        floors = tuple(int(v) for v in merged["floors"].split(","))
        streaks = tuple(int(v) for v in merged["streaks"].split(",")) if merged["streaks"] else (0, cap + 1)
    except ValueError as error:
        raise ValueError(f"wake-gate bounds are integers: {error}") from error
    if cap < 0 or any(v < 0 for v in floors + streaks) or not floors:
        raise ValueError("wake-gate bounds are non-negative, with at least one floor")
    return {"max_streak": cap, "floors": floors, "streaks": streaks}


def alphabet(bounds: dict[str, Any]) -> list[Action]:
    batches = [
        ("decide [chatter]", [CHATTER], False),
        ("decide [self]", [SELF], False),
        ("decide [user]", [USER], False),
        ("decide [chatter, self]", [CHATTER, SELF], False),
        ("decide [] plugin", [], True),
        ("decide []", [], False),
    ]
    actions = [Action(label, "decide", {"batch": batch, "plugin_pending": plugin, "now_ms": 0})
               for label, batch, plugin in batches]
    actions += [Action("announce_refusal", "announce_refusal"), Action("reset_streak", "reset_streak")]
    actions += [Action(f"set_streak {v}", "set_streak", {"value": v}) for v in bounds["streaks"]]
    actions += [Action(f"set_floor {v}", "set_floor", {"value": v}) for v in bounds["floors"]]
    actions += [Action(f"clock: last self-wake {offset}", None, clock=c)
                for c, offset in (("below_floor", "+ floor - 1 ms"), ("at_floor", "+ floor"),
                                  ("backwards", "- 1 ms"))]
    return actions


def constants(data: Any, bounds: dict[str, Any], options: dict[str, bool]) -> None:
    """What stays fixed for a whole exploration: the cap and the options."""
    data.max_streak = bounds["max_streak"]
    data.options = WakeGateModelOptions(**options)


def chart_arguments(bounds: dict[str, Any], options: dict[str, bool]) -> dict[str, Any]:
    """Constructor arguments of a real WakeGateChart for these bounds and options."""
    return {"max_streak": bounds["max_streak"], "floor_ms": bounds["floors"][0],
            "options": WakeGateModelOptions(**options)}


def initial(bounds: dict[str, Any]) -> Snapshot:
    return ("no_episode", 0, None, bounds["floors"][0])


def load(data: Any, snapshot: Snapshot) -> None:
    """Put a snapshot's data on a bare chart instance; the chart's clock reads 0 ms."""
    _state, data.streak, age, data.floor_ms = snapshot
    data.last_self_wake_ms = None if age is None else -age


def store(data: Any, state: str) -> Snapshot:
    last = data.last_self_wake_ms
    return (state, data.streak, None if last is None else -last, data.floor_ms)


def move_clock(snapshot: Snapshot, clock: str) -> Snapshot:
    state, streak, age, floor = snapshot
    if age is None:
        return snapshot  # before the first self-wake, nothing reads the clock
    target = {"below_floor": floor - 1, "at_floor": floor, "backwards": -1}[clock]
    return (state, streak, target, floor)


# -- invariants ------------------------------------------------------------------
# `applies` is decided once per letter of the alphabet; `holds` runs on every step
# of that letter, with (pre, post, output, max_streak).

def _decide(action: Action) -> bool:
    return action.event == "decide"


def _batch_has(action: Action, message: tuple[str, str, str, str]) -> bool:
    return message in action.kwargs.get("batch", ())


def _self_lane(action: Action) -> bool:
    return _decide(action) and _batch_has(action, SELF) and not _batch_has(action, USER)


def _empty_poll(action: Action) -> bool:
    return _decide(action) and not action.kwargs["batch"] and not action.kwargs["plugin_pending"]


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("user_input_always_wakes", ("WAKE-LANE-1",),
              lambda a: _decide(a) and _batch_has(a, USER),
              lambda pre, post, out, cap: out["wake"]),
    Invariant("refusal_leaves_streak", ("WAKE-CAP-3",), _decide,
              lambda pre, post, out, cap: out.get("wake") is not False or post[1] == pre[1]),
    Invariant("counted_wake_adds_one", ("WAKE-CAP-2", "WAKE-CAD-6"), _decide,
              lambda pre, post, out, cap: not (out.get("wake") and out["counts_against_cap"])
              or post[1] == pre[1] + 1),
    Invariant("exempt_wake_leaves_streak", ("WAKE-CAD-4", "WAKE-LANE-1"), _decide,
              lambda pre, post, out, cap: not (out.get("wake") and not out["counts_against_cap"])
              or post[1] == pre[1]),
    Invariant("streak_never_pushed_past_cap", ("WAKE-CAP-1", "WAKE-HOST-1"), _decide,
              lambda pre, post, out, cap: post[1] <= max(pre[1], cap)),
    Invariant("self_wake_a_floor_later_is_exempt", ("WAKE-CAD-1", "WAKE-CAD-4"), _self_lane,
              lambda pre, post, out, cap: (pre[2] is not None and pre[2] < pre[3])
              or (out["wake"] and not out["counts_against_cap"])),
    Invariant("spent_announcement_stays_spent", ("WAKE-ANN-1",),
              lambda a: a.event == "announce_refusal",
              lambda pre, post, out, cap: pre[0] not in ("refusing_announced", "announced_without_refusal")
              or out["announce"] is False),
    Invariant("every_refusal_episode_is_announced", ("WAKE-OPT-1", "WAKE-ANN-2"), _decide,
              lambda pre, post, out, cap: out.get("wake") is not False or pre[0] == post[0]
              or post[0] == "refusing_unannounced",
              finding="WAKE-F1", option="announce_requires_refusal"),
    Invariant("refused_retry_keeps_cadence_clock", ("WAKE-OPT-2", "WAKE-CAD-3"), _self_lane,
              lambda pre, post, out, cap: out["wake"] is not False or post[2] == pre[2],
              finding="WAKE-F2", option="cadence_from_allowed_wakes"),
    Invariant("zero_floor_self_wakes_are_exempt", ("WAKE-OPT-3", "WAKE-CAD-2"), _self_lane,
              lambda pre, post, out, cap: pre[3] != 0 or out["counts_against_cap"] is False,
              finding="WAKE-F3", option="clamp_backwards_clock"),
    Invariant("streak_grows_only_when_something_is_pending", ("WAKE-OPT-4", "WAKE-LANE-6"),
              _empty_poll, lambda pre, post, out, cap: post[1] == pre[1],
              finding="WAKE-F4", option="reject_empty_batch"),
)


def config(bounds: dict[str, Any], options: dict[str, bool]) -> dict[str, Any]:
    """The conformance ``config`` of an exploration."""
    result: dict[str, Any] = {"max_streak": bounds["max_streak"], "floor_ms": bounds["floors"][0]}
    if options:
        result["options"] = dict(options)
    return result


def clock_delta(pre: Snapshot, post: Snapshot) -> int:
    """The real milliseconds of a clock move: only ``age`` changes, by exactly that much."""
    return 0 if pre[2] is None or post[2] is None else post[2] - pre[2]


def concretize(trace: list[tuple[Snapshot, Action, Snapshot]]) -> list[dict[str, Any]]:
    """Case steps (without expectations) that replay an abstract trace with real times.

    A clock move changes only ``age``, so its concrete size is the change in
    age; it folds into the next decision's ``now_ms``. Decisions do not move
    the clock.
    """
    now = 1_000_000
    steps: list[dict[str, Any]] = []
    for pre, action, post in trace:
        if action.clock is not None:
            now += clock_delta(pre, post)
            continue
        if action.event == "decide":
            batch = [dict(zip(("kind", "from", "to", "text"), m, strict=True))
                     for m in action.kwargs["batch"]]
            args: dict[str, Any] = {"batch": batch, "now_ms": now}
            if action.kwargs["plugin_pending"]:
                args["plugin_pending"] = True
            steps.append({"event": "decide", "args": args})
        elif action.event in ("set_streak", "set_floor"):
            steps.append({"event": action.event, "args": {"value": action.kwargs["value"]}})
        else:
            steps.append({"event": action.event})
    return steps

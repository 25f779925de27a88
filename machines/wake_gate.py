"""The wake gate in the machine frame: its registry entry and how to explore it.

Snapshot
    ``Snapshot(control, streak, age, floor_ms)`` where ``age`` is the time since
    the last recorded self-wake (``clock - last``), or None before the first
    one. Only ``age`` matters about time: the chart compares it with the floor.

Time
    The alphabet moves the clock through the chart's own ``elapse`` event by
    1 ms, by -1 ms (a wall clock stepped back) and by each positive floor of the
    bounds. The chart compares ``age`` only with 0 and with the floor in force,
    which is always one of the bounded floors, so two ages between the same two
    neighbouring boundaries ({0} and the floors) behave alike. ``store`` keeps
    the lowest age of each such interval (and -1 for every negative age), which
    makes the space finite; every explored trace still replays with concrete
    times, because the concrete clock moves are read off the canonical ages
    (``concretize``). From any interval the letters reach every other, so no
    behaviour is lost.

Bounds (``--bound NAME=VALUE``)
    ``max_streak``  the chart's cap (default 10, the seed's);
    ``floors``      the floors a host may set, comma-separated ms (default 30000,0);
                    the first one is the configured floor;
    ``streaks``     values a host may set the streak to (default 0,cap+1).
    The small-scope argument: the chart's decisions depend on the streak only
    through ``streak < max_streak``, so a cap of 10 (the seed's) already shows
    every lane at and around the cap; the zero floor is the one host setting
    (WAKE-HOST-2) that changes what a self-wake is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from inboxspec.machines import frame, wake_gate_driver
from inboxspec.machines.frame import Action, Bounds, ForeverProperty, Invariant
from inboxspec.model.wake_gate import WakeGateChart, WakeGateModelOptions

INTERFACE = wake_gate_driver.INTERFACE
DECIDE = INTERFACE.events["decide"]


class Snapshot(NamedTuple):
    control: str
    streak: int
    age: int | None  # ms since the last recorded self-wake, or None before the first one
    floor_ms: int

CHATTER = ("agent", "peer", "me", "hello")
SELF = ("agent", "me", "me", "[scheduled] sweep")
USER = ("user", "person", "me", "hi")


# -- invariants ------------------------------------------------------------------
# `applies` is decided once per letter of the alphabet; `holds` runs on every step
# of that letter, with (pre, post, output, bounds).

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
              lambda pre, post, out, bounds: out["wake"]),
    Invariant("refusal_leaves_streak", ("WAKE-CAP-3",), _decide,
              lambda pre, post, out, bounds: out.get("wake") is not False or post.streak == pre.streak),
    Invariant("counted_wake_adds_one", ("WAKE-CAP-2", "WAKE-CAD-6"), _decide,
              lambda pre, post, out, bounds: not (out.get("wake") and out["counts_against_cap"])
              or post.streak == pre.streak + 1),
    Invariant("exempt_wake_leaves_streak", ("WAKE-CAD-4", "WAKE-LANE-1"), _decide,
              lambda pre, post, out, bounds: not (out.get("wake") and not out["counts_against_cap"])
              or post.streak == pre.streak),
    Invariant("streak_never_pushed_past_cap", ("WAKE-CAP-1", "WAKE-HOST-1"), _decide,
              lambda pre, post, out, bounds: post.streak <= max(pre.streak, bounds["max_streak"])),
    Invariant("self_wake_a_floor_later_is_exempt", ("WAKE-CAD-1", "WAKE-CAD-4"), _self_lane,
              lambda pre, post, out, bounds: (pre.age is not None and pre.age < pre.floor_ms)
              or (out["wake"] and not out["counts_against_cap"])),
    Invariant("spent_announcement_stays_spent", ("WAKE-ANN-1",),
              lambda a: a.event == "announce_refusal",
              lambda pre, post, out, bounds: pre.control not in ("refusing_announced",
                                                                 "announced_without_refusal")
              or out["announce"] is False),
    Invariant("every_refusal_episode_is_announced", ("WAKE-OPT-1", "WAKE-ANN-2"), _decide,
              lambda pre, post, out, bounds: out.get("wake") is not False or pre.control == post.control
              or post.control == "refusing_unannounced",
              finding="WAKE-F1", option="announce_requires_refusal"),
    Invariant("refused_retry_keeps_cadence_clock", ("WAKE-OPT-2", "WAKE-CAD-3"), _self_lane,
              lambda pre, post, out, bounds: out["wake"] is not False or post.age == pre.age,
              finding="WAKE-F2", option="cadence_from_allowed_wakes"),
    Invariant("zero_floor_self_wakes_are_exempt", ("WAKE-OPT-3", "WAKE-CAD-2"), _self_lane,
              lambda pre, post, out, bounds: pre.floor_ms != 0 or out["counts_against_cap"] is False,
              finding="WAKE-F3", option="clamp_backwards_clock"),
    Invariant("streak_grows_only_when_something_is_pending", ("WAKE-OPT-4", "WAKE-LANE-6"),
              _empty_poll, lambda pre, post, out, bounds: post.streak == pre.streak,
              finding="WAKE-F4", option="reject_empty_batch"),
)


def _no_user_input_or_reset(action: Action) -> bool:
    """The letters of an allowed step: no user input and no ``reset_streak``."""
    return not _batch_has(action, USER) and action.event != "reset_streak"


def _streak_not_lowered(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """No host lowering the streak (WAKE-HOST-1), which is a reset by another name."""
    return not (action.event == "set_streak" and post.streak < pre.streak)


def _counted_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """Of a ``decide`` step (``marked_letters``): it wakes, and the wake counts against the cap."""
    return bool(out.get("wake")) and bool(out.get("counts_against_cap"))


# Seed 000: the cap exists "so two chatty instances cannot ping-pong forever": no cycle
# of steps contains a counted wake unless something resets the streak: user input,
# `reset_streak`, or a host setting the streak lower (WAKE-HOST-1 lets a host set it;
# setting it back to 0 after each counted wake is a reset by another name, and
# tests/test_cycles.py shows the lasso it gives when it is not counted as one). Within
# one gate the promise holds at the default bounds, the zero floor included; whether
# it holds across sessions that wake each other is the host's question.
FOREVER: tuple[ForeverProperty, ...] = (
    ForeverProperty("no_ping_pong_forever", ("WAKE-CAP-1", "WAKE-CAP-2", "WAKE-CAP-3", "WAKE-HOST-1"),
                    allowed_letters=_no_user_input_or_reset, every_step=_streak_not_lowered,
                    marked_letters=_decide, some_step=_counted_wake),
)


# WARNING: exact only while the chart compares the age with 0 and the floors alone
# (model/wake_gate.py's _is_rapid); tests/test_explorer_abstractions.py checks it.
def _canonical_age(age: int | None, boundaries: tuple[int, ...]) -> int | None:
    """The lowest age of ``age``'s interval between neighbouring boundaries (see the module doc)."""
    if age is None:
        return None
    if age < 0:
        return -1
    return max(b for b in boundaries if b <= age)


class WakeGateExplorer:
    variables: tuple[str, ...] = Snapshot._fields
    # The seed's defaults (WAKE-DEF-1, the interface data's), plus the zero floor a host
    # may set (WAKE-HOST-2).
    default_bounds: Mapping[str, str] = {"max_streak": str(INTERFACE.config_key("max_streak").default),
                                         "floors": f"{INTERFACE.config_key('floor_ms').default},0",
                                         "streaks": ""}
    options: tuple[str, ...] = INTERFACE.options
    invariants: tuple[Invariant, ...] = INVARIANTS
    forever: tuple[ForeverProperty, ...] = FOREVER
    unobservable_events: frozenset[str] = frozenset({"elapse"})

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        merged = frame.merged_bounds("wake-gate", self.default_bounds, raw)
        try:
            cap = frame.bound_integer(merged["max_streak"])
            floors = tuple(frame.bound_integer(v) for v in merged["floors"].split(","))
            streaks = (tuple(frame.bound_integer(v) for v in merged["streaks"].split(","))
                       if merged["streaks"] else (0, cap + 1))
        except ValueError as error:
            raise ValueError(f"wake-gate bounds are integers: {error}") from error
        if cap < 0 or any(v < 0 for v in floors + streaks) or not floors:
            raise ValueError("wake-gate bounds are non-negative, with at least one floor")
        return {"max_streak": cap, "floors": floors, "streaks": streaks,
                "boundaries": tuple(sorted({0, *floors}))}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        batches = [
            ("decide [chatter]", [CHATTER], False),
            ("decide [self]", [SELF], False),
            ("decide [user]", [USER], False),
            ("decide [chatter, self]", [CHATTER, SELF], False),
            ("decide [] plugin", [], True),
            ("decide []", [], False),
        ]
        actions = [Action(label, "decide", {"batch": batch, "plugin_pending": plugin})
                   for label, batch, plugin in batches]
        actions += [Action("announce_refusal", "announce_refusal"), Action("reset_streak", "reset_streak")]
        actions += [Action(f"set_streak {v}", "set_streak", {"value": v}) for v in bounds["streaks"]]
        actions += [Action(f"set_floor {v}", "set_floor", {"value": v}) for v in bounds["floors"]]
        moves = sorted({1, -1, *(f for f in bounds["floors"] if f > 0)})
        actions += [Action(f"elapse {ms:+d} ms", "elapse", {"ms": ms}) for ms in moves]
        return actions

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"max_streak": bounds["max_streak"], "floor_ms": bounds["floors"][0],
                "options": WakeGateModelOptions(**options)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.max_streak = bounds["max_streak"]
        data.options = WakeGateModelOptions(**options)
        data.boundaries = bounds["boundaries"]

    def initial(self, bounds: Bounds) -> Snapshot:
        return Snapshot(control="no_episode", streak=0, age=None, floor_ms=bounds["floors"][0])

    def load(self, data: Any, snapshot: Snapshot) -> None:
        """The chart's clock reads 0 ms; the last self-wake lies ``age`` before it."""
        data.streak, data.floor_ms = snapshot.streak, snapshot.floor_ms
        data.now_ms = 0
        data.last_self_wake_ms = None if snapshot.age is None else -snapshot.age

    def store(self, data: Any, state: str) -> Snapshot:
        last = data.last_self_wake_ms
        age = None if last is None else data.now_ms - last
        # (``tuple.__new__``: the named tuple from its fields in order, without its Python-level
        # constructor.)
        return tuple.__new__(Snapshot, (state, data.streak, _canonical_age(age, data.boundaries),
                                        data.floor_ms))

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return frame.with_options({"max_streak": bounds["max_streak"], "floor_ms": bounds["floors"][0]},
                                  options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """A clock move changes only ``age``; its concrete size is the change in the
        canonical age, and it folds into the next decision's ``now_ms``."""
        now = 1_000_000
        steps: list[dict[str, Any]] = []
        for pre, action, post in trace:
            if action.event == "elapse":
                if pre.age is not None and post.age is not None:
                    now += post.age - pre.age
                continue
            if action.event == "decide":
                batch = [dict(zip(wake_gate_driver.MESSAGE_FIELDS, m, strict=True))
                         for m in action.kwargs["batch"]]
                args: dict[str, Any] = {"batch": batch, "now_ms": now}
                if action.kwargs["plugin_pending"] != DECIDE.argument("plugin_pending").default:
                    args["plugin_pending"] = action.kwargs["plugin_pending"]
                steps.append({"event": "decide", "args": args})
            else:  # the streak and the floor take their one `value`; the rest take nothing
                steps.append(frame.case_step(action.event, action.kwargs))
        return steps


MACHINE = frame.bundled_machine(
    name="wake-gate", title="wake gate", seed="000_82681ec6c92fd68c.txt",
    chart=WakeGateChart, driver=wake_gate_driver, explorer=WakeGateExplorer(),
)

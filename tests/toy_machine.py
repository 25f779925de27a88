"""A toy machine that lives only in the tests: a lease with a timer.

It exists to show that the machine frame is generic: a machine is new files
plus one registry entry. It has what the real machines have (a data field, a
timer-like event that moves time through the chart, a class constant read by
its actions, a finding with an option) and nothing of their vocabulary.
``make_machine(folder)`` writes its spec and cases under ``folder`` and returns
its registry entry.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statemachine import State, StateChart

from inboxspec.machines.frame import Action, Bounds, Invariant, Machine

TTL_MS = 100
MAX_RENEWALS = 2


# -- the model ---------------------------------------------------------------------

class LeaseChart(StateChart["LeaseChart"]):
    allow_event_without_transition = False
    enable_self_transition_entries = False
    atomic_configuration_update = False
    catch_errors_as_events = False

    TTL_MS = TTL_MS  # a class constant the actions read: the compiled view must carry it

    free = State(initial=True)
    held = State()

    acquire = free.to(held, on="grant") | held.to.itself(internal=True, on="deny")
    renew = (
        held.to.itself(internal=True, unless="renewal_is_capped", on="extend")
        | held.to.itself(internal=True, on="refuse_renewal")
        | free.to.itself(internal=True, on="refuse_renewal")
    )
    advance = held.to(free, cond="lease_ran_out", on="expire") | free.to.itself(
        internal=True, on="tick") | held.to.itself(internal=True, on="tick")

    def __init__(self, cap_renewals: bool = False) -> None:
        self.cap_renewals = cap_renewals
        self.now_ms = 0
        self.expires_at = 0
        self.renewals = 0
        self.output: dict[str, Any] = {}
        super().__init__()

    def renewal_is_capped(self) -> bool:
        """TOY-OPT-1."""
        return self.cap_renewals and self.renewals >= MAX_RENEWALS

    def lease_ran_out(self, ms: int) -> bool:
        """TOY-TIME-1."""
        return self.now_ms + ms >= self.expires_at

    def grant(self) -> None:
        """TOY-LEASE-1."""
        self.expires_at, self.renewals = self.now_ms + self.TTL_MS, 0
        self.output = {"granted": True}

    def deny(self) -> None:
        """TOY-LEASE-2."""
        self.output = {"granted": False}

    def extend(self) -> None:
        """TOY-LEASE-3."""
        self.expires_at, self.renewals = self.now_ms + self.TTL_MS, self.renewals + 1
        self.output = {"renewed": True}

    def refuse_renewal(self) -> None:
        """TOY-LEASE-3, TOY-OPT-1."""
        self.output = {"renewed": False}

    def expire(self, ms: int) -> None:
        """TOY-TIME-1."""
        self.now_ms += ms
        self.output = {"expired": True}

    def tick(self, ms: int) -> None:
        """TOY-TIME-1."""
        self.now_ms += ms
        self.output = {"expired": False}


# -- the reference implementation ---------------------------------------------------

@dataclass
class Lease:
    cap_renewals: bool = False
    now_ms: int = 0
    expires_at: int | None = None
    renewals: int = 0

    def acquire(self) -> bool:
        if self.expires_at is not None:
            return False
        self.expires_at, self.renewals = self.now_ms + TTL_MS, 0
        return True

    def renew(self) -> bool:
        if self.expires_at is None or (self.cap_renewals and self.renewals >= MAX_RENEWALS):
            return False
        self.expires_at, self.renewals = self.now_ms + TTL_MS, self.renewals + 1
        return True

    def advance(self, ms: int) -> bool:
        self.now_ms += ms
        if self.expires_at is not None and self.now_ms >= self.expires_at:
            self.expires_at = None
            return True
        return False


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    lease = Lease(cap_renewals=bool((config.get("options") or {}).get("cap_renewals", False)))
    outputs: list[dict[str, Any]] = []
    for step in steps:
        if step["event"] == "acquire":
            outputs.append({"granted": lease.acquire()})
        elif step["event"] == "renew":
            outputs.append({"renewed": lease.renew()})
        else:
            outputs.append({"expired": lease.advance(step["args"]["ms"])})
    return {"outputs": outputs}


def run_model_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    chart = LeaseChart(cap_renewals=bool((config.get("options") or {}).get("cap_renewals", False)))
    outputs = []
    for step in steps:
        chart.send(step["event"], **step.get("args", {}))
        outputs.append(dict(chart.output))
    return {"outputs": outputs}


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 10)):
        event = rng.choice(("acquire", "renew", "advance"))
        steps.append({"event": event, "args": {"ms": rng.choice((1, 50, 100))}} if event == "advance"
                     else {"event": event})
    return {}, steps


# -- the explorer description -------------------------------------------------------
# Snapshot: (control, time left on the lease, renewals saturated at MAX_RENEWALS + 1).

class LeaseExplorer:
    variables: tuple[str, ...] = ("control", "left_ms", "renewals")
    default_bounds: Mapping[str, str] = {}
    options: tuple[str, ...] = ("cap_renewals",)
    unobservable_events: frozenset[str] = frozenset()
    invariants: tuple[Invariant, ...] = (
        Invariant("a_free_lease_is_granted", ("TOY-LEASE-1",), lambda a: a.event == "acquire",
                  lambda pre, post, out, bounds: pre[0] != "free" or out["granted"] is True),
        Invariant("renewals_are_bounded", ("TOY-OPT-1",), lambda a: a.event == "renew",
                  lambda pre, post, out, bounds: post[2] <= MAX_RENEWALS,
                  finding="TOY-F1", option="cap_renewals"),
    )

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        if raw:
            raise ValueError("the toy lease has no bounds")
        return {}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        return [Action("acquire", "acquire"), Action("renew", "renew"),
                Action("advance 50", "advance", {"ms": 50}), Action("advance 100", "advance", {"ms": 100})]

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"cap_renewals": options.get("cap_renewals", False)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.cap_renewals = options.get("cap_renewals", False)

    def initial(self, bounds: Bounds) -> tuple[Any, ...]:
        return ("free", 0, 0)

    def load(self, data: Any, snapshot: tuple[Any, ...]) -> None:
        data.now_ms, (_control, data.expires_at, data.renewals) = 0, snapshot

    def store(self, data: Any, state: str) -> tuple[Any, ...]:
        left = max(0, data.expires_at - data.now_ms) if state == "held" else 0
        return (state, left, min(data.renewals, MAX_RENEWALS + 1))

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"options": dict(options)} if options else {}

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        return [{"event": action.event, "args": dict(action.kwargs)} if action.kwargs
                else {"event": action.event} for _pre, action, _post in trace]


SPEC = """# Toy lease

What it models: a lease with a time to live.

- **TOY-LEASE-1** A free lease MUST be granted on `acquire`.
- **TOY-LEASE-2** A held lease MUST refuse `acquire`.
- **TOY-LEASE-3** `renew` MUST extend a held lease by the TTL and MUST fail on a free one.
- **TOY-TIME-1** A lease MUST expire once its TTL has passed.
- **TOY-OPT-1** With `cap_renewals`, a lease MUST NOT be renewed more than twice.

### TOY-F1: renewals are unbounded

<!-- BEGIN GENERATED: toy-lease-diagram -->
<!-- END GENERATED: toy-lease-diagram -->
<!-- BEGIN GENERATED: toy-lease-table -->
<!-- END GENERATED: toy-lease-table -->
<!-- BEGIN GENERATED: toy-lease-findings -->
<!-- END GENERATED: toy-lease-findings -->
"""

HAND_CASES = {
    "machine": "toy-lease",
    "cases": [{
        "id": "toy-lease/expires",
        "description": "A held lease expires once its TTL has passed",
        "requirements": ["TOY-LEASE-1", "TOY-LEASE-2", "TOY-LEASE-3", "TOY-TIME-1"],
        "config": {},
        "steps": [
            {"event": "acquire", "expect": {"granted": True}},
            {"event": "acquire", "expect": {"granted": False}},
            {"event": "renew", "expect": {"renewed": True}},
            {"event": "advance", "args": {"ms": 100}, "expect": {"expired": True}},
            {"event": "renew", "expect": {"renewed": False}},
        ],
    }, {
        "id": "toy-lease/capped",
        "description": "With cap_renewals a third renewal is refused",
        "requirements": ["TOY-OPT-1"],
        "features": ["option:cap_renewals"],
        "config": {"options": {"cap_renewals": True}},
        "steps": [{"event": "acquire", "expect": {"granted": True}}]
        + [{"event": "renew", "expect": {"renewed": True}}] * 2
        + [{"event": "renew", "expect": {"renewed": False}}],
    }],
}


def make_machine(folder: Path) -> Machine:
    """Write the toy's spec and hand-written cases under ``folder``; return its entry."""
    (folder / "spec").mkdir(parents=True)
    (folder / "cases" / "toy-lease").mkdir(parents=True)
    (folder / "manifests").mkdir()
    (folder / "spec" / "toy-lease.md").write_text(SPEC, encoding="utf-8")
    (folder / "cases" / "toy-lease" / "hand.json").write_text(json.dumps(HAND_CASES, indent=2),
                                                              encoding="utf-8")
    return Machine(
        name="toy-lease", title="toy lease", seed="(none: a test fixture)",
        spec=folder / "spec" / "toy-lease.md", cases=folder / "cases" / "toy-lease",
        manifest=folder / "manifests" / "toy-lease.json", chart=LeaseChart,
        run_case=run_case, run_model_case=run_model_case, features=("option:cap_renewals",),
        explorer=LeaseExplorer(), fuzz=fuzz,
    )

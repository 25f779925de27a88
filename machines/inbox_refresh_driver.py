"""The inbox-refresh driver: case JSON in, cache calls on fakes, output JSON out.

A case describes a fake inbox source and a fake runner whose jobs have
scripted outcomes and durations (spec/inbox-refresh.md, *Interface*). The
reference adapter, ``inboxspec check``, refinement and the lockstep tests all
go through this module, so there is one encoding of every output.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inboxspec.impl.inbox_refresh import (
    WORKER_CHANGED,
    Capacity,
    CleanupUnresolved,
    Computation,
    DeadlineExceeded,
    InboxRefreshCache,
    InboxRefreshError,
    InvalidArgument,
    Invalidation,
    InvalidCallers,
    InvalidConfig,
    InvalidInvalidation,
    InvalidTime,
    JobError,
    JobResult,
    Liveness,
    RefreshOptions,
    RuntimeFailure,
    SourceChange,
    SourcesChanged,
    SourceUnreadable,
    WorkerUnavailable,
    compare_sources,
    screening_declines,
)
from inboxspec.machines import interface, sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model.inbox_refresh import (
    InboxRefreshChart,
    RefreshModelOptions,
    Script,
)

# The config keys, the job script and computation records, the events and their arguments,
# defaults and codes, and the scripted world's start: spec/inbox-refresh.interface.json. The
# world (REFRESH-IF-11) is what this module plays itself: its config keys (`deny`, `jobs`,
# `log_throws`) and its events (`edit_sources`, `change_policy`, `set_readable`) are validated
# here as the data says; everything else is the cache's, which checks its own input.
INTERFACE = interface.load("inbox-refresh")
JOB_SCRIPT = INTERFACE.records["job_script"]
SOURCE_START: Mapping[str, Any] = INTERFACE.vocabularies["fake_source_start"]
ERRORS: Mapping[str, type[InboxRefreshError]] = {
    error.code: error for error in (InvalidConfig, InvalidTime, InvalidCallers, InvalidInvalidation,
                                    InvalidArgument)}


def _arguments(event: str, args: object) -> dict[str, Any]:
    """A step's arguments over the data's defaults. An unknown name and an absent required
    argument are faults with the data's codes; so is a bad value of a world event's argument
    (the cache checks the values of its own events)."""
    if not isinstance(args, Mapping):
        raise ERRORS[INTERFACE.unknown_argument_code(event) or "invalid_argument"](
            f"args must be an object, got {type(args).__name__}")
    fault = INTERFACE.argument_fault(event, args, values=INTERFACE.events[event].world)
    if fault is not None:
        code, message = fault
        raise ERRORS[code or "invalid_argument"](message)
    return INTERFACE.events[event].with_defaults(args)


@dataclass(frozen=True)
class JobScript:
    """One scripted job (REFRESH-IF-2): the record over its defaults (the data's)."""

    outcome: str
    duration_ms: int
    computation: Mapping[str, Any] | None
    group: int | None
    reap_ms: int | None
    cancel: str
    message: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> JobScript:
        fields = JOB_SCRIPT.with_defaults(raw)
        fields.setdefault("computation", None)
        return cls(**fields)


class Clock:
    """The fake world's time: the cache's elapsed time (REFRESH-CLOCK-1), which only the cache moves."""

    def __init__(self, read: Callable[[], int]) -> None:
        self._read = read

    @property
    def now_ms(self) -> int:
        return self._read()


class FakeSource:
    """The scripted inbox source (REFRESH-IF-11): counters that the source events move, the
    spec's source change and screening (``impl``'s ``compare_sources`` and ``screening_declines``)."""

    def __init__(self, deny: Sequence[str]) -> None:
        self.version: int = SOURCE_START["version"]
        self.layout: int = SOURCE_START["layout"]
        self.policy: int = SOURCE_START["policy"]
        self.readable: bool = SOURCE_START["readable"]
        self.deny = tuple(deny)

    def policy_revision(self) -> Hashable:
        if not self.readable:
            raise SourceUnreadable()
        return self.policy

    def current(self) -> tuple[int, int]:
        return (self.version, self.layout)

    def source_change(self, remembered: Hashable) -> SourceChange:
        if not self.readable:
            raise SourceUnreadable()
        return compare_sources(remembered, self.current())

    def declines(self, item: Mapping[str, Any]) -> bool:
        return screening_declines(item, self.deny)


class FakeJob:
    """A scripted job (REFRESH-IF-11): it settles at its launch's elapsed time plus its
    duration, with the outcome its script names."""

    def __init__(self, script: JobScript, clock: Clock, policy: int, sources: tuple[int, int]) -> None:
        self.script = script
        self.clock = clock
        self.due_ms = clock.now_ms + script.duration_ms
        self.policy = policy
        self.sources = sources
        self.cancel_unresolved = False
        self.settled = False

    def outcome(self) -> JobResult | JobError:
        self.settled = True
        s = self.script
        if s.outcome == "result":
            assert s.computation is not None
            raw = copy.deepcopy(s.computation)
            capacity = Capacity(raw["capacity"]["until"]) if raw["capacity"] is not None else None
            return JobResult(Computation(raw["items"], raw["more"], raw["expires_at"], capacity, self.policy),
                             self.sources)
        errors: dict[str, Callable[[], JobError]] = {
            "changed": SourcesChanged,
            "unavailable": WorkerUnavailable,
            "moved": lambda: RuntimeFailure(WORKER_CHANGED),
            "cleanup": lambda: CleanupUnresolved(s.group),
            "deadline": lambda: DeadlineExceeded(s.group),
        }
        return errors[s.outcome]()

    def observe_cleanup(self) -> Liveness:
        if self.cancel_unresolved or self.script.reap_ms is None:
            return "alive"
        return "gone" if self.clock.now_ms >= self.due_ms + self.script.reap_ms else "alive"

    def cancel(self) -> None:
        if not self.settled:  # still running: the script says what cancelling proves
            if self.script.cancel == "unresolved":
                self.cancel_unresolved = True
                raise CleanupUnresolved(self.script.group)
            return
        if self.observe_cleanup() != "gone":
            raise CleanupUnresolved(self.script.group)


class FakeRunner:
    """The scripted runner (REFRESH-IF-11): the n-th launch runs the n-th script, a launch
    beyond them the data's ``unscripted_job``; it remembers the capacity memo it was given."""

    def __init__(self, scripts: Sequence[JobScript], clock: Clock, source: FakeSource) -> None:
        self.scripts = list(scripts)
        self.clock = clock
        self.source = source
        self.launches = 0
        self.last_capacity: Capacity | None = None

    def launch(self, capacity: Capacity | None) -> FakeJob:
        self.last_capacity = capacity
        scripted = self.launches < len(self.scripts)
        script = (self.scripts[self.launches] if scripted
                  else JobScript.from_json(INTERFACE.vocabularies["unscripted_job"]))
        self.launches += 1
        if script.outcome == "launch_runtime":
            raise RuntimeFailure(script.message)
        if script.outcome == "launch_error":
            raise WorkerUnavailable()
        return FakeJob(script, self.clock, self.source.policy, self.source.current())


class Session:
    """One case: the cache, its fakes, and the log lines of the current step."""

    def __init__(self, config: object) -> None:
        fault = INTERFACE.config_fault(config, world_only=True)
        if fault is not None:
            raise InvalidConfig(fault)
        assert isinstance(config, Mapping)
        settings = INTERFACE.config_with_defaults(config)
        options = RefreshOptions.from_mapping(settings["options"])
        self.log_throws: bool = settings["log_throws"]
        self.clock = Clock(lambda: self.cache.state.now_ms)
        self.source = FakeSource(settings["deny"])
        self.runner = FakeRunner([JobScript.from_json(j) for j in settings["jobs"]], self.clock, self.source)
        self.lines: list[str] = []
        self.cache = InboxRefreshCache(
            self.runner, self.source, now_ms=settings["start_ms"], max_items=settings["max_items"],
            max_bytes=settings["max_bytes"], options=options, log=self.write_log,
            monotonic_clock=settings["monotonic_clock"])

    def write_log(self, line: str) -> None:
        """The scripted log sink (REFRESH-IF-10): it records every line, then throws if told to."""
        self.lines.append(line)
        if self.log_throws:
            raise OSError("the scripted log sink throws")

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        self.lines.clear()
        event = step.get("event")
        args = step.get("args", {})
        handler = HANDLERS.get(str(event))
        if handler is None:
            raise ValueError(f"unknown inbox-refresh event {event!r}")
        try:
            output = handler(self, args)
        except InboxRefreshError as error:
            return {"error": error.code, "log": []}
        return {**output, "log": list(self.lines)}

    # -- the cache's events -------------------------------------------------------

    def snapshot(self, args: Mapping[str, Any]) -> dict[str, Any]:
        callers = _arguments("snapshot", args)["callers"]
        before = self.runner.launches
        copies = self.cache.snapshot(self.clock.now_ms, callers=callers)
        launched = None
        if self.runner.launches > before:
            memo = self.runner.last_capacity
            launched = {"capacity": memo.until if memo is not None else None}
        return {"snapshot": copies[0], "callers": callers, "launched": launched}

    def advance(self, args: Mapping[str, Any]) -> dict[str, Any]:
        verdict = self.cache.advance(_arguments("advance", args)["now_ms"])
        if verdict is None:
            return {"settled": None, "reason": None}
        return {"settled": verdict.settled, "reason": verdict.reason}

    def set_wall(self, args: Mapping[str, Any]) -> dict[str, Any]:
        self.cache.set_wall(_arguments("set_wall", args)["now_ms"])
        return {}

    def invalidate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        # The cache's own entry point reads invalidate's arguments, in the order of REFRESH-IF-8.
        if not isinstance(args, Mapping):
            raise InvalidInvalidation(f"args must be an object, got {type(args).__name__}")
        self.cache.invalidate(Invalidation.from_arguments(args))
        return {}

    def close(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _arguments("close", args)
        unresolved = self.cache.close()
        if unresolved is None:
            return {"close": "resolved", "message": None}
        return {"close": "unresolved", "message": str(unresolved)}

    # -- the scripted world's events (REFRESH-IF-11) --------------------------------

    def edit_sources(self, args: Mapping[str, Any]) -> dict[str, Any]:
        hard = _arguments("edit_sources", args)["hard"]
        self.source.version += 1
        if hard:
            self.source.layout += 1
        return {}

    def change_policy(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _arguments("change_policy", args)
        self.source.policy += 1
        return {}

    def set_readable(self, args: Mapping[str, Any]) -> dict[str, Any]:
        self.source.readable = _arguments("set_readable", args)["value"]
        return {}


HANDLERS: dict[str, Callable[[Session, Mapping[str, Any]], dict[str, Any]]] = {
    name: getattr(Session, name) for name in INTERFACE.events}


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return run_reference_case(config, steps, Session, Session.apply, InboxRefreshError)


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random case from the event grammar, valid and invalid input mixed: every outcome and
    every event of the interface data, with the data's defaults left out at random."""
    outcomes = [*INTERFACE.vocabulary("outcomes"), "result", "result"]
    jobs: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 5)):
        outcome = rng.choice(outcomes)
        job: dict[str, Any] = {"outcome": outcome, "duration_ms": rng.choice([0, 10, 5000, 40_000])}
        if outcome == "result":
            items = [{"id": f"c{i}", "at": "2026-01-01T00:00:00.000Z", "title": rng.choice(["a", "secret"])}
                     for i in range(rng.randint(0, 3))]
            if rng.random() < 0.3:
                items.append({"id": "inbox:more", "at": "2026-01-01T00:00:00.000Z"})
            job["computation"] = {"items": items, "more": rng.choice([0, 2, -1]),
                                  "expires_at": rng.choice([None, None, 50_000, -1]),
                                  "capacity": rng.choice([None, {"until": 70_000}])}
        if outcome in ("cleanup", "deadline"):
            job["group"] = rng.choice([None, 4242])
            job["reap_ms"] = rng.choice([None, 0, 1000])
        if rng.random() < 0.2:
            job["cancel"] = rng.choice(INTERFACE.vocabulary("cancels"))
        jobs.append(job)
    config: dict[str, Any] = {"jobs": jobs, "deny": ["secret"], "max_items": 3,
                              "monotonic_clock": rng.random() < 0.6, "log_throws": rng.random() < 0.2}
    options = {name: True for name in INTERFACE.options if rng.random() < 0.2}
    if options:
        config["options"] = options
    now = 0
    events = [*INTERFACE.events, "snapshot", "advance"]
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 20)):
        kind = rng.choice(events)
        args: dict[str, Any]
        if kind == "advance":
            now += rng.choice([0, 10, 1000, 30_000, 300_000])
            args = {"now_ms": rng.choice([now, now, -1])}
        elif kind == "invalidate":
            args = rng.choice([{"value": True}, {}, {"remove_ids": ["c0"], "added": 1}, {"added": -2},
                               {"hard": "yes"}, {"value": False, "hard": True}])
        elif kind == "set_wall":
            args = {"now_ms": rng.choice([0, 20_000, 1_000_000, -1])}
        elif kind == "snapshot":
            args = {"callers": rng.choice([1, 1, 2, 0])}
        else:  # the booleans and argument-less events, each argument given or left to its default
            args = {a.name: rng.random() < 0.6 for a in INTERFACE.events[kind].arguments
                    if a.required or rng.random() < 0.7}
        if rng.random() < 0.03:
            args["unknown"] = 1
        steps.append({"event": kind, "args": args} if args else {"event": kind})
    return config, steps


# -- the model chart, in the same output shape ------------------------------------

def model_script(raw: Mapping[str, Any]) -> Script:
    """The chart's scripted job from a case's job script, over the data's defaults."""
    return Script(**JOB_SCRIPT.with_defaults(raw))


class ModelSession(sessions.ModelSession[InboxRefreshChart]):
    """The inbox-refresh chart, given every argument over the data's defaults. The case's
    ``advance(now_ms)`` is the chart's ``advance(now_ms - clock)`` and ``set_wall(now_ms)`` its
    ``set_wall(wall_ms)``.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        settings = INTERFACE.config_with_defaults(config)
        self.chart = sessions.case_chart(
            InboxRefreshChart,
            scripts=[model_script(j) for j in settings["jobs"]], start_ms=settings["start_ms"],
            max_items=settings["max_items"], max_bytes=settings["max_bytes"], deny=settings["deny"],
            options=RefreshModelOptions(**settings["options"]), monotonic_clock=settings["monotonic_clock"])

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        event = step["event"]
        args = INTERFACE.events[event].with_defaults(step.get("args", {}))
        if event == "advance":
            args = {"ms": args["now_ms"] - self.chart.now_ms}
        elif event == "set_wall":
            args = {"wall_ms": args["now_ms"]}
        elif event == "invalidate":
            args["remove_ids"] = tuple(args["remove_ids"])
        self.chart.send(event, **args)
        return copy.deepcopy(self.chart.output)


run_model_case = ModelSession.run_case

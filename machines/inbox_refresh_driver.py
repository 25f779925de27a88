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
    is_safe_natural,
)
from inboxspec.machines import sessions
from inboxspec.machines.sessions import run_reference_case
from inboxspec.model.inbox_refresh import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ITEMS,
    InboxRefreshChart,
    RefreshModelOptions,
    Script,
)

FEATURES = (
    "option:refreshing_only_when_runnable",
    "option:read_failure_backs_off",
    "option:reject_negative_added",
)
OUTCOMES = ("result", "changed", "unavailable", "moved", "cleanup", "deadline",
            "launch_runtime", "launch_error")
CONFIG_KEYS = ("start_ms", "max_items", "max_bytes", "deny", "jobs", "options", "log_throws",
               "monotonic_clock")
SCRIPT_KEYS = ("outcome", "duration_ms", "computation", "group", "reap_ms", "cancel", "message")
COMPUTATION_KEYS = {"items", "more", "expires_at", "capacity"}


@dataclass(frozen=True)
class JobScript:
    outcome: str
    duration_ms: int = 0
    computation: Mapping[str, Any] | None = None
    group: int | None = None
    reap_ms: int | None = None
    cancel: str = "gone"
    message: str = WORKER_CHANGED


def _fail(message: str) -> InvalidConfig:
    return InvalidConfig(message)


def parse_computation(raw: object) -> dict[str, Any]:
    """REFRESH-IF-3."""
    if not isinstance(raw, Mapping) or set(raw) != COMPUTATION_KEYS:
        raise _fail("a computation has exactly the keys items, more, expires_at, capacity")
    items = raw["items"]
    if not isinstance(items, list) or not all(
            isinstance(i, Mapping) and isinstance(i.get("id"), str) and isinstance(i.get("at"), str)
            for i in items):
        raise _fail("computation items are objects with a string id and a string at")
    capacity = raw["capacity"]
    if capacity is not None and not (isinstance(capacity, Mapping) and set(capacity) == {"until"}
                                     and is_safe_natural(capacity["until"])):
        raise _fail("computation capacity is null or {until: safe integer}")
    return dict(raw)


def parse_script(raw: object) -> JobScript:
    """REFRESH-IF-2."""
    if not isinstance(raw, Mapping):
        raise _fail(f"a job script is an object, got {type(raw).__name__}")
    unknown = sorted(str(k) for k in set(raw) - set(SCRIPT_KEYS))
    if unknown:
        raise _fail(f"unknown job script key(s): {', '.join(unknown)}")
    outcome = raw.get("outcome")
    if outcome not in OUTCOMES:
        raise _fail(f"job outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    if ("computation" in raw) != (outcome == "result"):
        raise _fail("a computation is given exactly for the result outcome")
    duration = raw.get("duration_ms", 0)
    if not is_safe_natural(duration):
        raise _fail(f"duration_ms must be a safe integer, got {duration!r}")
    group = raw.get("group")
    if group is not None and type(group) is not int:
        raise _fail(f"group must be an integer or null, got {group!r}")
    reap = raw.get("reap_ms")
    if reap is not None and not is_safe_natural(reap):
        raise _fail(f"reap_ms must be a safe integer or null, got {reap!r}")
    cancel = raw.get("cancel", "gone")
    if cancel not in ("gone", "unresolved"):
        raise _fail(f"cancel must be gone or unresolved, got {cancel!r}")
    message = raw.get("message", WORKER_CHANGED)
    if not isinstance(message, str) or not message:
        raise _fail("message must be a non-empty string")
    computation = parse_computation(raw["computation"]) if outcome == "result" else None
    return JobScript(outcome, duration, computation, group, reap, cancel, message)


class Clock:
    """The fake world's time: the cache's elapsed time (REFRESH-CLOCK-1), which only the cache moves."""

    def __init__(self, read: Callable[[], int]) -> None:
        self._read = read

    @property
    def now_ms(self) -> int:
        return self._read()


class FakeSource:
    """The spec's minimal inbox source: (version, layout) sources, an integer policy revision."""

    def __init__(self, deny: Sequence[str]) -> None:
        self.version = 0
        self.layout = 0
        self.policy = 1
        self.readable = True
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
        current = self.current()
        hard = not (isinstance(remembered, tuple) and remembered[1] == self.layout)
        return SourceChange(changed=remembered != current, hard=hard, sources=current)

    def declines(self, item: Mapping[str, Any]) -> bool:
        texts = [v for v in (item.get("title"), item.get("detail")) if isinstance(v, str)]
        return any(_contains_utf16(text, word) for word in self.deny for text in texts)


def _contains_utf16(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as UTF-16 code units, as the seed's TypeScript host compares
    strings (``includes``): a lone surrogate matches half of a pair (spec/inbox-refresh.md, Screening).

    WARNING: the model (model/inbox_refresh.py) and the Node port compare the same way.
    """
    haystack, needle = text.encode("utf-16-le", "surrogatepass"), word.encode("utf-16-le", "surrogatepass")
    found = haystack.find(needle)
    while found != -1 and found % 2:  # a match must start on a code unit, not inside one
        found = haystack.find(needle, found + 1)
    return found != -1


class FakeJob:
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
    def __init__(self, scripts: Sequence[JobScript], clock: Clock, source: FakeSource) -> None:
        self.scripts = list(scripts)
        self.clock = clock
        self.source = source
        self.launches = 0
        self.last_capacity: Capacity | None = None

    def launch(self, capacity: Capacity | None) -> FakeJob:
        self.last_capacity = capacity
        scripted = self.launches < len(self.scripts)
        script = self.scripts[self.launches] if scripted else JobScript("unavailable")
        self.launches += 1
        if script.outcome == "launch_runtime":
            raise RuntimeFailure(script.message)
        if script.outcome == "launch_error":
            raise WorkerUnavailable()
        return FakeJob(script, self.clock, self.source.policy, self.source.current())


class Session:
    """One case: the cache, its fakes, and the log lines of the current step."""

    def __init__(self, config: object) -> None:
        if not isinstance(config, Mapping):
            raise _fail(f"config must be an object, got {type(config).__name__}")
        unknown = sorted(str(k) for k in set(config) - set(CONFIG_KEYS))
        if unknown:
            raise _fail(f"unknown inbox-refresh config key(s): {', '.join(unknown)}")
        start = config.get("start_ms", 0)  # the cache validates it, and monotonic_clock
        deny = config.get("deny", [])
        if not isinstance(deny, list) or not all(isinstance(d, str) and d for d in deny):
            raise _fail("deny must be a list of non-empty strings")
        jobs = config.get("jobs", [])
        if not isinstance(jobs, list):
            raise _fail("jobs must be a list of job scripts")
        scripts = [parse_script(j) for j in jobs]
        options = RefreshOptions.from_mapping(config.get("options", {}))
        log_throws = config.get("log_throws", False)
        if type(log_throws) is not bool:
            raise _fail(f"log_throws must be true or false, got {log_throws!r}")
        self.log_throws = log_throws
        monotonic_clock = config.get("monotonic_clock", True)
        self.clock = Clock(lambda: self.cache.state.now_ms)
        self.source = FakeSource(deny)
        self.runner = FakeRunner(scripts, self.clock, self.source)
        self.lines: list[str] = []
        bounds = {key: config[key] for key in ("max_items", "max_bytes") if key in config}
        self.cache = InboxRefreshCache(self.runner, self.source, now_ms=start, options=options,
                                       log=self.write_log, monotonic_clock=monotonic_clock, **bounds)

    def write_log(self, line: str) -> None:
        """The scripted log sink (REFRESH-IF-1): it records every line, then throws if told to."""
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

    # -- events ------------------------------------------------------------------

    def snapshot(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, ("callers",), InvalidCallers)
        callers = args.get("callers", 1)
        before = self.runner.launches
        copies = self.cache.snapshot(self.clock.now_ms, callers=callers)
        launched = None
        if self.runner.launches > before:
            memo = self.runner.last_capacity
            launched = {"capacity": memo.until if memo is not None else None}
        return {"snapshot": copies[0], "callers": callers, "launched": launched}

    def advance(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, ("now_ms",), InvalidTime)
        if "now_ms" not in args:
            raise InvalidTime("advance needs now_ms")
        verdict = self.cache.advance(args["now_ms"])
        if verdict is None:
            return {"settled": None, "reason": None}
        return {"settled": verdict.settled, "reason": verdict.reason}

    def set_wall(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, ("now_ms",), InvalidTime)
        if "now_ms" not in args:
            raise InvalidTime("set_wall needs now_ms")
        self.cache.set_wall(args["now_ms"])
        return {}

    def invalidate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(args, Mapping):
            raise InvalidInvalidation(f"args must be an object, got {type(args).__name__}")
        self.cache.invalidate(Invalidation.from_arguments(args))
        return {}

    def edit_sources(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, ("hard",), InvalidArgument)
        hard = args.get("hard", False)
        if type(hard) is not bool:
            raise InvalidArgument(f"hard must be true or false, got {hard!r}")
        self.source.version += 1
        if hard:
            self.source.layout += 1
        return {}

    def change_policy(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, (), InvalidArgument)
        self.source.policy += 1
        return {}

    def set_readable(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, ("value",), InvalidArgument)
        value = args.get("value")
        if type(value) is not bool:
            raise InvalidArgument(f"value must be true or false, got {value!r}")
        self.source.readable = value
        return {}

    def close(self, args: Mapping[str, Any]) -> dict[str, Any]:
        _only(args, (), InvalidArgument)
        unresolved = self.cache.close()
        if unresolved is None:
            return {"close": "resolved", "message": None}
        return {"close": "unresolved", "message": str(unresolved)}


def _only(args: object, known: Sequence[str], error: type[InboxRefreshError]) -> None:
    if not isinstance(args, Mapping):
        raise error(f"args must be an object, got {type(args).__name__}")
    unknown = sorted(str(k) for k in set(args) - set(known))
    if unknown:
        raise error(f"unknown argument(s): {', '.join(unknown)}")


HANDLERS: dict[str, Callable[[Session, Mapping[str, Any]], dict[str, Any]]] = {
    "snapshot": Session.snapshot,
    "advance": Session.advance,
    "set_wall": Session.set_wall,
    "invalidate": Session.invalidate,
    "edit_sources": Session.edit_sources,
    "change_policy": Session.change_policy,
    "set_readable": Session.set_readable,
    "close": Session.close,
}


def run_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return run_reference_case(config, steps, Session, Session.apply, InboxRefreshError)


def fuzz(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random case from the event grammar, valid and invalid input mixed."""
    outcomes = ["result", "result", "result", "changed", "unavailable", "moved", "cleanup",
                "deadline", "launch_runtime", "launch_error"]
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
        jobs.append(job)
    config: dict[str, Any] = {"jobs": jobs, "deny": ["secret"], "max_items": 3,
                              "monotonic_clock": rng.random() < 0.6, "log_throws": rng.random() < 0.2}
    now = 0
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 20)):
        kind = rng.choice(["snapshot", "snapshot", "advance", "advance", "invalidate", "edit_sources",
                           "change_policy", "set_readable", "close", "set_wall"])
        if kind == "advance":
            now += rng.choice([0, 10, 1000, 30_000, 300_000])
            steps.append({"event": "advance", "args": {"now_ms": rng.choice([now, now, -1])}})
        elif kind == "invalidate":
            steps.append({"event": "invalidate", "args": rng.choice(
                [{"value": True}, {}, {"remove_ids": ["c0"], "added": 1}, {"added": -2}, {"hard": "yes"}])})
        elif kind == "set_wall":
            steps.append({"event": "set_wall", "args": {"now_ms": rng.choice([0, 20_000, 1_000_000, -1])}})
        elif kind == "edit_sources":
            steps.append({"event": "edit_sources", "args": {"hard": rng.random() < 0.5}})
        elif kind == "set_readable":
            steps.append({"event": "set_readable", "args": {"value": rng.random() < 0.7}})
        elif kind == "snapshot":
            steps.append({"event": "snapshot", "args": {"callers": rng.choice([1, 1, 2, 0])}})
        else:
            steps.append({"event": kind})
    return config, steps


# -- the model chart, in the same output shape ------------------------------------

class ModelSession(sessions.ModelSession):
    """The inbox-refresh chart. ``advance(now_ms)`` is the chart's
    ``advance(now_ms - clock)``; the boolean form of ``invalidate`` is its
    record form.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.chart = InboxRefreshChart(
            scripts=[Script.from_json(j) for j in config.get("jobs", [])],
            start_ms=config.get("start_ms", 0), max_items=config.get("max_items", DEFAULT_MAX_ITEMS),
            max_bytes=config.get("max_bytes", DEFAULT_MAX_BYTES), deny=config.get("deny", []),
            options=RefreshModelOptions(**(config.get("options") or {})),
            monotonic_clock=config.get("monotonic_clock", True))

    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(step.get("args", {}))
        event = step["event"]
        if event == "snapshot":
            self.chart.send(event, callers=args.get("callers", 1))
        elif event == "advance":
            self.chart.send(event, ms=args["now_ms"] - self.chart.now_ms)
        elif event == "invalidate":
            if "value" in args:
                args = {"hard": args["value"], "capacity": args["value"]}
            self.chart.send(event, hard=args.get("hard", False), capacity=args.get("capacity", False),
                            remove_ids=tuple(args.get("remove_ids", ())), added=args.get("added", 0))
        elif event == "edit_sources":
            self.chart.send(event, hard=args.get("hard", False))
        elif event == "set_wall":
            self.chart.send(event, wall_ms=args["now_ms"])
        elif event == "set_readable":
            self.chart.send(event, value=args["value"])
        else:
            self.chart.send(event)
        return copy.deepcopy(self.chart.output)


run_model_case = ModelSession.run_case

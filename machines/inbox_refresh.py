"""The inbox refresh cache in the machine frame: its registry entry and how to explore it.

Snapshot
    A ``RefreshSnapshot``: the chart's control state and data, canonicalised.
    The clock and the times that appear in outputs (status time,
    ``generatedAt``, due times) are absolute, because the outputs quote them.

Symmetry and abstraction (each exact for the chart and its outputs)
    - The fake source's counters and the policy revision matter only by
      equality with what the cache remembers, so remembered values are stored
      as "same as now" (0) or "older" (-1).
    - The generation matters only by equality with the running job's.
    - A deadline already passed (back-off, spacing) is compared with a clock
      that never goes back, so it is stored as "passed".
    - The failure count matters only through whether it is zero and through
      the next back-off, which stops changing from some count on (five minutes
      from the tenth failure on, today), so counts from ``FAILURES_COLLAPSED``
      on are stored as it; ``collapsed_failures`` computes it from the model's
      back-off formula.
    - Launches index the job cycle, so they are stored modulo its length.

Time
    The chart moves its clock through its own ``advance(ms)`` event, which
    saturates at ``horizon_ms``: the explored window. Letters move it by 0 ms
    (settle what is due) and by the 30 s spacing.

Alphabet
    One snapshot, the two clock moves, a soft invalidation, the fake source's
    soft edit, a policy change (a hard invalidation with the capacity memo),
    the source becoming unreadable and readable again, the wall clock set back
    to 0, and close. The removal arithmetic of REFRESH-INV-3, the hard source
    edit, other wall jumps and the cache without a monotonic clock
    (``monotonic_clock`` false) are pinned by the written cases and the
    lockstep tests, so they have no letter here. The explored cache has a
    monotonic clock, so the back-off and the spacing read a clock that never
    goes back and "a deadline already passed" stays passed; the wall is kept
    exactly (its offset is a field).

Bounds (``--bound NAME=VALUE``)
    ``jobs``        the cycle of scripted jobs, comma-separated names from
                    ``CATALOGUE`` (default: result,cleanup); the n-th launch
                    runs the (n mod length)-th. A name may repeat: the cycle is
                    the list as given (``result,result,cleanup`` launches two
                    results between cleanups).
    ``horizon_ms``  the explored window of time (default 60000).
    The small-scope argument: the spacing lets one launch start every 30 s,
    and every guard compares the clock with the spacing, the back-off, a due
    time or a reap time, so a window of two spacings holds three launches:
    a result that is accepted (or discarded, or expired by an edit), a
    cleanup that blocks, and the recovery and relaunch 29 s later. That
    reaches every control state and transition of the chart and both
    findings (17 280 states in about a second). The other outcomes of REFRESH-IF-2
    are in ``CATALOGUE`` (``--bound jobs=result,unavailable,changed,moved``);
    every outcome's exact behaviour is pinned by the written cases and the
    lockstep tests, whose times are arbitrary.
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from inboxspec.machines import frame, inbox_refresh_driver
from inboxspec.machines.frame import Action, Bounds, Invariant
from inboxspec.model.inbox_refresh import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ITEMS,
    MAX_BACKOFF_MS,
    MAX_FAILURES,
    SPACING_MS,
    InboxRefreshChart,
    RefreshModelOptions,
    Script,
    backoff_ms,
    failures_after_one_more,
    spacing_ms,
)

T = "2026-01-01T00:00:00.000Z"
# The events, their arguments and defaults: spec/inbox-refresh.interface.json.
EVENTS = inbox_refresh_driver.INTERFACE.events

CATALOGUE: dict[str, dict[str, Any]] = {
    "result": {"outcome": "result", "duration_ms": 1000, "computation": {
        "items": [{"id": "c1", "at": T, "title": "t", "detail": "d"},
                  {"id": "inbox:more", "at": T, "title": "more", "detail": "d"}],
        "more": 2, "expires_at": None, "capacity": None}},
    "capacity": {"outcome": "result", "duration_ms": 0, "computation": {
        "items": [{"id": "capacity:proposal", "at": T, "title": "cap", "detail": "d"}],
        "more": 0, "expires_at": 900000, "capacity": {"until": 60000}}},
    "slow": {"outcome": "result", "duration_ms": 40000, "computation": {
        "items": [], "more": 0, "expires_at": None, "capacity": None}},
    "declined": {"outcome": "result", "duration_ms": 0, "computation": {
        "items": [{"id": "c2", "at": T, "title": "secret", "detail": "d"}],
        "more": 0, "expires_at": None, "capacity": None}},
    "unavailable": {"outcome": "unavailable"},
    "changed": {"outcome": "changed"},
    "moved": {"outcome": "moved"},
    "cleanup": {"outcome": "cleanup", "group": 7, "reap_ms": 29000},
    "lost": {"outcome": "cleanup", "group": None},
    "deadline": {"outcome": "deadline", "duration_ms": 30000, "group": 9, "reap_ms": 0,
                 "cancel": "unresolved"},
    "launch_error": {"outcome": "launch_error"},
    "launch_runtime": {"outcome": "launch_runtime", "message": "bun moved; restart acon serve"},
}
# The scripts of an exploration's config: the cycle repeated more often than
# any explored trace launches, so a replay from scratch runs the same jobs.
REPEAT = 40



class RefreshSnapshot(NamedTuple):
    """The chart's control state and data, canonicalised (see the module's docstring)."""

    control: str
    now: int
    wall_offset: int  # the wall clock is now + wall_offset
    readable: bool
    items: str | None  # the cached items as canonical JSON
    more: int
    expires: int | None
    cache_sources: tuple[int, int] | None  # (version, layout) relative to now: 0 same, -1 older
    capacity: Any
    observed: tuple[int, int] | None
    job_moved_generation: bool
    pending: bool
    stale: bool
    failures: int  # collapsed, see store
    retry_at: int  # 0 once passed
    last_launch: int | None  # None once the spacing has passed
    last_duration: int
    error: str | None
    detail: Any
    generated_ms: int | None
    policy: int | None  # 0 same as now, -1 older
    capacity_at: Any
    overflow_at: Any
    shown: Any
    shown_at: Any
    launches: int  # modulo the job cycle
    job: int | None  # index in the job cycle
    job_due: int
    job_launched: int
    job_stamp: Any
    blocked_job: int | None
    blocked_due: int
    blocked_group: int | None
    blocked_forever: bool


VARIABLES = RefreshSnapshot._fields


def _next_backoff(failures: int) -> int:
    return backoff_ms(failures_after_one_more(failures))


# WARNING: exact only while every count from FAILURES_COLLAPSED on gives the same next
# back-off (model/inbox_refresh.py's backoff_ms and failures_after_one_more) and only
# zero is read on its own; tests/test_explorer_abstractions.py checks both on the chart.
FAILURES_COLLAPSED = min(count for count in range(1, MAX_FAILURES + 1)
                         if all(_next_backoff(more) == _next_backoff(count)
                                for more in range(count, MAX_FAILURES + 1)))


def collapsed_failures(failures: int) -> int:
    """The failure count as a state stores it: counts that the chart cannot tell apart are one."""
    return min(failures, FAILURES_COLLAPSED)


@functools.cache
def cycle_of(names: tuple[str, ...]) -> tuple[Script, ...]:
    """The scripts of a ``jobs`` bound, in launch order."""
    return tuple(inbox_refresh_driver.model_script(CATALOGUE[n]) for n in names)


def _relative(remembered: tuple[int, int] | None, version: int, layout: int) -> tuple[int, int] | None:
    if remembered is None:
        return None
    return (0 if remembered[0] == version else -1, 0 if remembered[1] == layout else -1)


# The snapshot fields `load` copies onto the chart as they are.
_COPIED = ("pending", "stale", "failures", "retry_at", "last_launch", "last_duration", "error", "detail",
           "generated_ms", "policy", "capacity_at", "overflow_at", "shown", "shown_at", "launches", "job_due",
           "job_launched", "job_stamp", "blocked_due", "blocked_group", "blocked_forever")
_copied = operator.attrgetter(*_COPIED)
# WARNING: `load` writes the chart's data into its instance dictionary in one go, which is
# what assigning each attribute does while the chart class defines no data descriptor
# (a property with a setter, say) of these names.
assert not any(hasattr(getattr(InboxRefreshChart, name, None), "__set__")
               for name in (*_COPIED, "now_ms", "wall_offset", "version", "layout", "world_policy",
                            "readable", "more", "expires", "cache_sources", "capacity", "observed",
                            "generation", "job_generation"))


class _Items(NamedTuple):
    """A snapshot's items text, read once: what `load` copies and `store` compares."""

    text: str
    parsed: Any
    # The parsed items are a list of dicts of strings (or None), and the text is their
    # canonical JSON: then a copy of each dict is a fresh parse, and items equal to the
    # parsed ones have this text (with strings, equal means of the same type, which
    # numbers and booleans are not: 1 == True).
    plain: bool


_ITEMS: dict[str, _Items] = {}  # by text: a state space holds few distinct item lists
_last_items: list[_Items | None] = [None]  # the items of the last snapshot loaded


def _read_items(text: str) -> _Items:
    if text not in _ITEMS:
        parsed = json.loads(text)
        plain = (type(parsed) is list and all(
            type(item) is dict and all(type(v) is str or v is None for v in item.values()) for item in parsed)
            and json.dumps(parsed, sort_keys=True) == text)
        _ITEMS[text] = _Items(text, parsed, plain)
    return _ITEMS[text]


def _loaded_items(text: str | None) -> list[dict[str, Any]] | None:
    """The chart's items for a snapshot's items text: a fresh copy each time."""
    if text is None:
        return None
    items = _last_items[0] = _read_items(text)
    return [item.copy() for item in items.parsed] if items.plain else json.loads(text)


def _stored_items(items: list[dict[str, Any]] | None) -> str | None:
    """The chart's items as canonical JSON; most steps leave the loaded items as they were."""
    if items is None:
        return None
    last = _last_items[0]
    if last is not None and last.plain and items == last.parsed:
        return last.text
    return json.dumps(items, sort_keys=True)


# -- invariants ------------------------------------------------------------------

def _event(name: str) -> Any:
    return lambda action: action.event == name


def _launched(out: Mapping[str, Any]) -> bool:
    return out.get("launched") is not None


def _blocked_group_gone(pre: Any, bounds: Bounds) -> bool:
    """REFRESH-REC-2: at ``pre``'s clock, the blocked job's group is observed gone."""
    index = pre.blocked_job
    if index is None or pre.blocked_forever:
        return False
    reap = cycle_of(bounds["jobs"])[index].reap_ms
    return reap is not None and pre.now >= pre.blocked_due + reap


def spacing_passed(now: int, last_launch: int | None, last_duration: int) -> bool:
    """Whether the spacing after the last launch is over (stored as no last launch at all)."""
    return last_launch is None or now >= last_launch + spacing_ms(last_duration)


def _spacing_passed(pre: Any) -> bool:
    return spacing_passed(pre.now, pre.last_launch, pre.last_duration)


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("one_job_at_a_time", ("REFRESH-START-1",), _event("snapshot"),
              lambda pre, post, out, b: not (pre.control == "running" and _launched(out))),
    Invariant("launch_waits_for_spacing_and_backoff", ("REFRESH-START-1", "REFRESH-BACK-1"),
              _event("snapshot"),
              lambda pre, post, out, b: not _launched(out)
              or (pre.now >= pre.retry_at and _spacing_passed(pre))),
    Invariant("no_launch_while_blocked", ("REFRESH-REC-1", "REFRESH-REC-2"), _event("snapshot"),
              lambda pre, post, out, b: not (_launched(out) and pre.control == "blocked")
              or _blocked_group_gone(pre, b)),
    Invariant("blocked_means_a_blocked_job", ("REFRESH-REC-1",), lambda a: True,
              lambda pre, post, out, b: (post.control == "blocked") == (post.blocked_job is not None)
              or post.control == "closed"),
    Invariant("backoff_is_at_most_five_minutes", ("REFRESH-BACK-1", "REFRESH-DEF-1"), lambda a: True,
              lambda pre, post, out, b: post.retry_at <= post.now + MAX_BACKOFF_MS),
    Invariant("time_launches_nothing", ("REFRESH-START-2",), _event("advance"),
              lambda pre, post, out, b: post.control != "running" or pre.control == "running"),
    Invariant("closed_cache_refuses_snapshots", ("REFRESH-SNAP-7", "REFRESH-CLOSE-1"), _event("snapshot"),
              lambda pre, post, out, b: pre.control != "closed" or out.get("error") == "closed"),
    Invariant("accepted_result_is_fresh", ("REFRESH-ACC-5",), _event("advance"),
              lambda pre, post, out, b: out.get("settled") != "accepted"
              or (not post.pending and not post.stale
                  and post.failures == 0)),
    Invariant("refreshing_means_a_refresh_can_run", ("REFRESH-OPT-1", "REFRESH-SNAP-2"), _event("snapshot"),
              lambda pre, post, out, b: "snapshot" not in out or not out["snapshot"]["refreshing"]
              or "generatedAt" not in out["snapshot"]
              or (post.error is None and post.blocked_job is None),
              finding="REFRESH-F1", option="refreshing_only_when_runnable"),
    Invariant("every_failure_is_logged", ("REFRESH-OPT-2", "REFRESH-SNAP-5"), _event("snapshot"),
              lambda pre, post, out, b: pre.error is not None or post.error is None
              or bool(out.get("log")),
              finding="REFRESH-F2", option="read_failure_backs_off"),
)


class InboxRefreshExplorer:
    variables = VARIABLES
    default_bounds: Mapping[str, str] = {"jobs": "result,cleanup", "horizon_ms": "60000"}
    options = tuple(RefreshModelOptions.__dataclass_fields__)
    invariants = INVARIANTS
    unobservable_events: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self._loaded_of: Any = None  # the last snapshot loaded, and what it put on the chart
        self._loaded: dict[str, Any] = {}

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        merged = frame.merged_bounds("inbox-refresh", self.default_bounds, raw)
        names = tuple(n.strip() for n in merged["jobs"].split(",") if n.strip())
        missing = [n for n in names if n not in CATALOGUE]
        # Each at most once: a name a thousand times over made each step of a refinement a thousand
        # times as long, which its step limit does not bound (found by an attack on the commands).
        if missing or not names or len(set(names)) < len(names):
            raise ValueError(f"inbox-refresh jobs are distinct names from {', '.join(CATALOGUE)}; "
                             f"got {merged['jobs'][:200]!r}")
        try:
            horizon = frame.bound_integer(merged["horizon_ms"])
        except ValueError as error:
            raise ValueError(f"horizon_ms is an integer: {error}") from error
        if horizon < 0:
            raise ValueError("horizon_ms is non-negative")
        return {"jobs": names, "horizon_ms": horizon}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        return [
            Action("snapshot", "snapshot", EVENTS["snapshot"].defaults()),
            Action("advance +0 ms", "advance", {"ms": 0}),
            Action("advance +30 s", "advance", {"ms": SPACING_MS}),
            # A soft invalidation: the record form (no `value`) with every default.
            Action("invalidate", "invalidate",
                   {**EVENTS["invalidate"].defaults(), "value": None,
                    "remove_ids": tuple(EVENTS["invalidate"].argument("remove_ids").default)}),
            Action("edit_sources", "edit_sources", EVENTS["edit_sources"].defaults()),
            Action("change_policy", "change_policy"),
            Action("set_readable false", "set_readable", {"value": False}),
            Action("set_readable true", "set_readable", {"value": True}),
            Action("set_wall 0", "set_wall", {"wall_ms": 0}),
            Action("close", "close"),
        ]

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"scripts": cycle_of(bounds["jobs"]) * REPEAT, "deny": ("secret",),
                "options": RefreshModelOptions(**options), "horizon_ms": bounds["horizon_ms"]}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.cycle = cycle_of(bounds["jobs"])
        data.scripts = data.cycle * REPEAT
        data.max_items = DEFAULT_MAX_ITEMS
        data.max_bytes = DEFAULT_MAX_BYTES
        data.deny = ("secret",)
        data.options = RefreshModelOptions(**options)
        data.horizon_ms = bounds["horizon_ms"]
        data.monotonic_clock = True

    def initial(self, bounds: Bounds) -> Any:
        chart = InboxRefreshChart(**self.chart_arguments(bounds, {}))
        chart.cycle = cycle_of(bounds["jobs"])
        return self.store(chart, "idle")

    def load(self, data: Any, snapshot: Any) -> None:
        # The explorer loads one snapshot once per letter: what it puts on the chart, apart from
        # the items (a fresh copy each time) and the jobs (read from the chart's cycle), is kept
        # for the last snapshot, a pure function of it, and written in one go (`_COPIED`).
        if snapshot is not self._loaded_of:
            self._loaded = {
                "now_ms": snapshot.now, "wall_offset": snapshot.wall_offset,
                "version": 0, "layout": 0, "world_policy": 0,
                "readable": snapshot.readable, "more": snapshot.more, "expires": snapshot.expires,
                "cache_sources": snapshot.cache_sources or (0, 0),
                "capacity": snapshot.capacity, "observed": snapshot.observed,
                "generation": 0, "job_generation": -1 if snapshot.job_moved_generation else 0,
                **dict(zip(_COPIED, _copied(snapshot), strict=True))}
            self._loaded_of = snapshot
        vars(data).update(self._loaded)
        data.items = _loaded_items(snapshot.items)
        data.job = None if snapshot.job is None else data.cycle[snapshot.job]
        data.blocked_job = None if snapshot.blocked_job is None else data.cycle[snapshot.blocked_job]

    def store(self, data: Any, state: str) -> Any:
        version, layout, now = data.version, data.layout, data.now_ms
        cycle = data.cycle
        passed = spacing_passed(now, data.last_launch, data.last_duration)
        stamp_policy, stamp_sources = data.job_stamp
        job_stamp = ((0 if stamp_policy == data.world_policy else -1),
                     _relative(stamp_sources, version, layout)) if data.job is not None else (0, (0, 0))
        return tuple.__new__(RefreshSnapshot, (
            state, now, data.wall_offset, data.readable,
            _stored_items(data.items),
            data.more, data.expires,
            _relative(data.cache_sources, version, layout) if data.items is not None else None,
            data.capacity, _relative(data.observed, version, layout),
            data.job is not None and data.job_generation != data.generation,
            data.pending, data.stale, collapsed_failures(data.failures),
            data.retry_at if data.retry_at > now else 0,
            None if passed else data.last_launch, 0 if passed else data.last_duration,
            data.error, data.detail, data.generated_ms,
            None if data.policy is None else (0 if data.policy == data.world_policy else -1),
            data.capacity_at, data.overflow_at, data.shown, data.shown_at,
            data.launches % len(cycle),
            None if data.job is None else cycle.index(data.job),
            data.job_due if data.job is not None else 0, data.job_launched if data.job is not None else 0,
            job_stamp,
            None if data.blocked_job is None else cycle.index(data.blocked_job),
            data.blocked_due if data.blocked_job is not None else 0, data.blocked_group,
            data.blocked_forever,
        ))

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return frame.with_options({"deny": ["secret"],
                                  "jobs": [CATALOGUE[n] for n in bounds["jobs"]] * REPEAT}, options)

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """The clock is absolute in every snapshot, so an advance goes to its post's clock."""
        steps: list[dict[str, Any]] = []
        for _pre, action, post in trace:
            kwargs = dict(action.kwargs)
            if action.event == "advance":
                steps.append({"event": "advance", "args": {"now_ms": post.now}})
            elif action.event == "invalidate":
                args: dict[str, Any] = {k: v for k, v in kwargs.items() if v}
                if "remove_ids" in args:
                    args["remove_ids"] = list(args["remove_ids"])
                steps.append(frame.case_step("invalidate", args))
            elif action.event == "snapshot":
                steps.append(frame.case_step("snapshot"))
            elif action.event == "set_wall":
                steps.append({"event": "set_wall", "args": {"now_ms": kwargs["wall_ms"]}})
            else:
                steps.append(frame.case_step(action.event, kwargs))
        return steps


MACHINE = frame.bundled_machine(
    name="inbox-refresh", title="inbox refresh", seed="002_79f456de189a5c5b.txt",
    chart=InboxRefreshChart, driver=inbox_refresh_driver, explorer=InboxRefreshExplorer(),  # type: ignore[arg-type]
)

"""The inbox refresh cache as an explicit state chart (spec/inbox-refresh.md).

Control states say what the cache is doing with jobs: ``idle`` (none running,
none blocked), ``running`` (one job in flight), ``blocked`` (a job whose process
group could not be proven gone), ``closed``. Everything else (the cache, the
back-off, the clock, the fake inbox source and the scripted jobs a case
describes) is the chart's data.

Time is the chart's own: ``advance(ms)`` moves the clock forward by ``ms``
(saturating at ``horizon_ms``, the largest time the chart represents) and
first settles the running job if it is due, at its due time. The case event
``advance(now_ms)`` is ``advance(now_ms - clock)`` here.

Two clocks, as the seed's cache reads them (REFRESH-CLOCK-1..3): ``now_ms`` is
the elapsed time and the monotonic clock's reading; the wall clock reads
``now_ms + wall_offset``, and ``set_wall`` moves the offset, so the wall may go
back. With ``monotonic_clock`` false the monotonic clock is the wall clock.
Spacing, back-off and durations read ``_clock``; status times,
``generatedAt``, expiry and the capacity memo read ``_wall``. Scripted job
durations and reap times belong to the fake world and count elapsed time.

This module does not import ``inboxspec.impl``: the lockstep tests compare two
independent descriptions of the same machine.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statemachine import State

from .chart import ModelChart, stay

SPACING_MS = 30_000
MAX_BACKOFF_MS = 300_000
MAX_FAILURES = 20  # the failure count saturates here (REFRESH-BACK-1)
DEFAULT_MAX_ITEMS = 50  # REFRESH-DEF-1
DEFAULT_MAX_BYTES = 65536  # REFRESH-DEF-1


# WARNING: machines/inbox_refresh.py collapses failure counts from the first one
# whose back-off no longer changes, computed from these two functions, and reads
# the spacing from spacing_ms; tests/test_explorer_abstractions.py fails when the
# collapse stops being exact. Change the formulas here, not there.
def failures_after_one_more(failures: int) -> int:
    """REFRESH-BACK-1: the consecutive-failure count after one more failure."""
    return min(MAX_FAILURES, failures + 1)


def backoff_ms(failures: int) -> int:
    """REFRESH-BACK-1: the wait before the next launch after the ``failures``-th consecutive failure."""
    doubling: int = 1000 * 2 ** min(MAX_FAILURES - 1, failures - 1)
    return min(MAX_BACKOFF_MS, doubling)


def spacing_ms(last_duration_ms: int) -> int:
    """REFRESH-START-1: the least time from one launch to the next."""
    return max(SPACING_MS, last_duration_ms)


def rows_total(shown: int, actual: int, more: int, removed: int, added: int) -> int:
    """REFRESH-INV-3: the row total after removals and additions (``added`` may be negative),
    exact, never below the rows still shown, and clamped to 2^53 - 1."""
    return min(2**53 - 1, max(shown, actual + more - removed + added))

MAX_TIME_MS = 253_402_300_799_999
WORKER_CHANGED = "inbox worker changed; restart acon serve"
LOG_FAILED = "amem: inbox refresh failed; bounded backoff applies"
OVERFLOW = "inbox:more"
CAPACITY = "capacity:proposal"


@dataclass(frozen=True)
class RefreshModelOptions:
    refreshing_only_when_runnable: bool = False  # REFRESH-F1
    read_failure_backs_off: bool = False  # REFRESH-F2
    reject_negative_added: bool = False  # REFRESH-F3: only refuses input, which the model never sees


@dataclass(frozen=True)
class Script:
    """One scripted job (REFRESH-IF-2); ``computation`` is the case's JSON object."""

    outcome: str
    duration_ms: int = 0
    computation: Any = None
    group: int | None = None
    reap_ms: int | None = None
    cancel: str = "gone"
    message: str = WORKER_CHANGED


UNSCRIPTED = Script("unavailable")


def _iso(ms: int) -> str:
    days, rest = divmod(ms, 86_400_000)
    z = days + 719_468
    era, doe = divmod(z, 146_097)
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    text = f"{year:04d}" if year <= 9999 else f"+{year:06d}"
    h, rest = divmod(rest, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms_ = divmod(rest, 1000)
    return f"{text}-{month:02d}-{day:02d}T{h:02d}:{m:02d}:{s:02d}.{ms_:03d}Z"


def _group(value: Any) -> int | None:
    return value if type(value) is int and 0 < value <= 2**53 - 1 else None



def _utf16_units(text: str) -> str:
    """A string as its UTF-16 code units, one character each, so that ``in`` compares code units as
    screening does (spec/inbox-refresh.md, Screening): a pair becomes its two surrogates.

    WARNING: the scripted source (machines/inbox_refresh_driver.py) and the Node port compare the same way.
    """
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(data[i:i + 2], "little")) for i in range(0, len(data), 2))

class InboxRefreshChart(ModelChart["InboxRefreshChart"]):
    idle = State(initial=True)
    running = State()
    blocked = State()
    closed = State()

    snapshot = (
        closed.to.itself(internal=True, on="refuse_closed_snapshot")
        | idle.to(running, cond="snapshot_launches_a_job", on="take_snapshot")
        | idle.to.itself(internal=True, on="take_snapshot")
        | running.to.itself(internal=True, on="take_snapshot")
        | blocked.to(running, cond="snapshot_launches_a_job", on="take_snapshot")
        | blocked.to(idle, cond="blocked_group_observed_gone", on="take_snapshot")
        | blocked.to.itself(internal=True, on="take_snapshot")
    )
    advance = (
        running.to(blocked, cond="due_job_blocks", on="settle_due_job")
        | running.to(idle, cond="job_is_due", on="settle_due_job")
        | running.to.itself(internal=True, on="move_time")
        | idle.to.itself(internal=True, on="move_time")
        | blocked.to.itself(internal=True, on="move_time")
        | closed.to.itself(internal=True, on="move_time")
    )
    invalidate = stay((idle, running, blocked, closed), on="book_invalidation")
    edit_sources = stay((idle, running, blocked, closed), on="book_edit")
    change_policy = stay((idle, running, blocked, closed), on="book_policy_change")
    set_readable = stay((idle, running, blocked, closed), on="book_readable")
    set_wall = stay((idle, running, blocked, closed), on="book_wall")
    close = (
        idle.to(closed, on="close_cache")
        | running.to(closed, on="close_cache")
        | blocked.to(closed, on="close_cache")
        | closed.to.itself(internal=True, on="close_cache")
    )

    def __init__(self, scripts: Sequence[Script] = (), start_ms: int = 0, max_items: int = DEFAULT_MAX_ITEMS,
                 max_bytes: int = DEFAULT_MAX_BYTES, deny: Sequence[str] = (),
                 options: RefreshModelOptions | None = None, horizon_ms: int = MAX_TIME_MS,
                 monotonic_clock: bool = True) -> None:
        self.scripts = tuple(scripts)
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.deny = tuple(deny)
        self.options = options or RefreshModelOptions()
        self.horizon_ms = horizon_ms
        self.now_ms = start_ms
        self.monotonic_clock = monotonic_clock
        self.wall_offset = 0
        # the fake inbox source
        self.version = 0
        self.layout = 0
        self.world_policy = 1
        self.readable = True
        # the cache
        self.items: list[dict[str, Any]] | None = None  # None: no cache
        self.more: Any = 0
        self.expires: Any = None
        self.cache_sources: tuple[int, int] = (0, 0)
        self.capacity: int | None = None  # the memo's until
        self.observed: tuple[int, int] | None = None
        self.generation = 0
        self.pending = True
        self.stale = False
        self.failures = 0
        self.retry_at = 0
        self.last_launch: int | None = None
        self.last_duration = 0
        self.error: str | None = None
        self.detail: str | None = None
        self.generated_ms = 0
        self.policy: int | None = None
        self.capacity_at: Any = None
        self.overflow_at: Any = None
        self.shown = ""
        self.shown_at = 0
        # jobs: the running one and the blocked one
        self.launches = 0
        self.job: Script | None = None
        self.job_due = 0
        self.job_launched = 0
        self.job_generation = 0
        self.job_stamp: tuple[int, tuple[int, int]] = (0, (0, 0))
        self.blocked_job: Script | None = None
        self.blocked_due = 0
        self.blocked_group: int | None = None
        self.blocked_forever = False
        self.output: dict[str, Any] = {}
        super().__init__()

    # -- the snapshot's plan (pure: guards read it) -------------------------------

    def _wall(self) -> int:
        """REFRESH-CLOCK-2: the seed's ``now()``."""
        return self.now_ms + self.wall_offset

    def _clock(self) -> int:
        """REFRESH-CLOCK-3: the seed's ``clock()``, the wall when no monotonic clock is given."""
        return self.now_ms if self.monotonic_clock else self._wall()

    def _gone(self) -> bool:
        """REFRESH-REC-2: the blocked job's group is observed gone."""
        job = self.blocked_job
        if job is None or self.blocked_forever or job.reap_ms is None:
            return False
        return self.now_ms >= self.blocked_due + job.reap_ms

    def _invalidations(self) -> bool | None:
        """Whether the snapshot's checks invalidate anything; None when reading fails."""
        if not self.readable:
            return None
        if self.policy is not None and self.policy != self.world_policy:
            return True
        if self.items is None:
            return False
        remembered = self.observed if self.observed is not None else self.cache_sources
        current = (self.version, self.layout)
        if remembered != current:
            return True
        if self.expires is not None and self._wall() >= self.expires:
            return True
        return self.capacity is not None and self._wall() >= self.capacity and not self.stale

    def _next_script(self) -> Script:
        return self.scripts[self.launches] if self.launches < len(self.scripts) else UNSCRIPTED

    def _allowed(self) -> bool:
        spacing = 0 if self.last_launch is None else self.last_launch + spacing_ms(self.last_duration)
        return self._clock() >= max(self.retry_at, spacing)

    def _would_launch(self) -> bool:
        blocked = self.blocked_job is not None and not self._gone()
        invalidates = self._invalidations()
        if invalidates is None:
            return False
        return (self.job is None and not blocked and (self.pending or invalidates) and self._allowed())

    # -- guards, named for their requirements ---------------------------------------

    def snapshot_launches_a_job(self) -> bool:
        """REFRESH-START-1: a snapshot launches when nothing runs or blocks, a refresh is
        pending and the spacing and back-off have passed; a launch error ends it at once."""
        return self._would_launch() and self._next_script().outcome not in ("launch_runtime", "launch_error")

    def blocked_group_observed_gone(self) -> bool:
        """REFRESH-REC-2."""
        return self._gone()

    def job_is_due(self, ms: int) -> bool:
        """REFRESH-IF-4: a job settles at its due time."""
        return self.job is not None and self.job_due <= min(self.now_ms + ms, self.horizon_ms)

    def due_job_blocks(self, ms: int) -> bool:
        """REFRESH-REC-1: an unresolved cleanup of a known group blocks."""
        return (self.job_is_due(ms) and self.job is not None and self.job.outcome in ("cleanup", "deadline")
                and _group(self.job.group) is not None)

    # -- helpers of the actions ---------------------------------------------------

    def _invalidate(self, hard: bool = False, capacity: bool = False, remove_ids: Sequence[str] = (),
                    added: int = 0) -> None:
        """REFRESH-INV-1..4."""
        self.generation += 1
        self.pending = True
        self.stale = True
        if hard:
            self.items = None
            self.observed = None
        elif self.items is not None and (remove_ids or added):
            actual = [i for i in self.items if i["id"] != OVERFLOW]
            removed = set(remove_ids)
            shown = [i for i in actual if i["id"] not in removed]
            total = rows_total(len(shown), len(actual), self.more, len(removed), added)
            hint = [i for i in self.items if i["id"] == OVERFLOW][:1]
            self.more = max(0, total - len(shown))
            self.items = shown + (hint if self.more > 0 else [])
        if capacity:
            self.capacity = None

    def _back_off(self) -> None:
        """REFRESH-BACK-1: one more consecutive failure, and the launch it puts off."""
        self.failures = failures_after_one_more(self.failures)
        self.retry_at = self._clock() + backoff_ms(self.failures)

    def _fail(self, kind: str, reason: str, log: list[str], blocks: int | None = None) -> None:
        """REFRESH-BACK-1, -2, -3, -5 and REFRESH-MSG-3."""
        self._back_off()
        self.pending = True
        self.error = kind
        if blocks is not None:
            self.blocked_group = blocks
        if kind == "runtime":
            self.items = None
            self.detail = reason
        # A closed cache has no job left to fail, so every failure here is logged.
        if kind == "runtime":
            log.append(reason)
        elif kind == "cleanup":
            group = self.blocked_group if self.blocked_group is not None else "unknown"
            log.append(f"amem: inbox group {group} cleanup unresolved; snapshots will observe"
                       " recovery without signalling it.")
        else:
            log.append(LOG_FAILED)

    def _status(self) -> dict[str, Any]:
        """REFRESH-SNAP-3, -4, REFRESH-MSG-1, REFRESH-IF-9."""
        kind = "unavailable" if self.error or self.blocked_job is not None else "refreshing"
        if self.shown != kind:
            self.shown = kind
            self.shown_at = max(self._wall(), self.shown_at + 1)
        detail = self.detail if self.detail is not None else (
            "Pending items will appear when the refresh finishes." if kind == "refreshing"
            else "Refresh is paused; it will retry after the cooldown.")
        title = "Memory inbox is refreshing" if kind == "refreshing" else "Memory inbox is unavailable"
        item = {"id": f"inbox:{kind}", "group": "alert", "kind": "status", "title": title, "detail": detail,
                "at": _iso(self.shown_at), "verbs": [], "link": {"panel": "review"}}
        return {"items": [item], "more": 0, "complete": False, "refreshing": True}

    # -- actions ------------------------------------------------------------------
    # Every action sets ``output``: the event's observable result in the
    # conformance output shape.

    def refuse_closed_snapshot(self) -> None:
        """REFRESH-SNAP-7."""
        self.output = {"error": "closed", "log": []}

    def take_snapshot(self, callers: int) -> None:
        """REFRESH-SNAP-1, -2, -5, -6 and REFRESH-START-1, -2, -3."""
        log: list[str] = []
        launched: dict[str, Any] | None = None
        if self.blocked_job is not None and self._gone():
            self.blocked_job = None
            self.blocked_group = None
            self.error = None
        if not self.readable:
            self._invalidate(hard=True, capacity=True)
            self.error = "failure"
            if self.options.read_failure_backs_off:  # REFRESH-OPT-2
                self._back_off()
                log.append(LOG_FAILED)
            self.output = {"snapshot": self._status(), "callers": callers, "launched": None, "log": log}
            return
        if self.policy is not None and self.policy != self.world_policy:
            self._invalidate(hard=True, capacity=True)
        self.policy = self.world_policy
        if self.items is not None:
            remembered = self.observed if self.observed is not None else self.cache_sources
            current = (self.version, self.layout)
            self.observed = current
            if remembered != current:
                hard = remembered[1] != current[1]
                self._invalidate(hard=hard, capacity=hard)
            if self.items is not None and self.expires is not None and self._wall() >= self.expires:
                self._invalidate(hard=True)
            if self.capacity is not None and self._wall() >= self.capacity and not self.stale:
                self._invalidate()
        if self.job is None and self.blocked_job is None and self.pending and self._allowed():
            script = self._next_script()
            launched = {"capacity": self.capacity}
            self.launches += 1
            self.last_launch = self._clock()
            self.pending = False
            self.error = None
            self.detail = None
            if script.outcome == "launch_runtime":
                self.last_duration = 0
                self._fail("runtime", script.message, log)
            elif script.outcome == "launch_error":
                self.last_duration = 0
                self._fail("failure", "inbox worker unavailable", log)
            else:
                self.job = script
                self.job_due = self.now_ms + script.duration_ms
                self.job_launched = self._clock()
                self.job_generation = self.generation
                self.job_stamp = (self.world_policy, (self.version, self.layout))
        if self.items is not None and (not self.stale or self.items):
            self.shown = "stale" if self.stale else "ready"
            refreshing = self.stale and not (self.options.refreshing_only_when_runnable
                                             and (self.error or self.blocked_job is not None))
            snap = {"items": copy.deepcopy(self.items), "more": self.more, "complete": not self.stale,
                    "refreshing": refreshing, "generatedAt": _iso(self.generated_ms)}
        else:
            snap = self._status()
        self.output = {"snapshot": snap, "callers": callers, "launched": launched, "log": log}

    def move_time(self, ms: int) -> None:
        """REFRESH-IF-4, REFRESH-START-2: time passing launches nothing."""
        self.now_ms = min(self.now_ms + ms, self.horizon_ms)
        self.output = {"settled": None, "reason": None, "log": []}

    def settle_due_job(self, ms: int) -> None:
        """REFRESH-IF-4, -5, REFRESH-ACC-1..7, REFRESH-BACK-1..5, REFRESH-REC-1, REFRESH-START-3."""
        target = min(self.now_ms + ms, self.horizon_ms)
        job = self.job
        assert job is not None
        self.now_ms = self.job_due
        log: list[str] = []
        settled, reason = self._settle(job, log)
        self.last_duration = max(0, self._clock() - self.job_launched)
        self.job = None
        self.now_ms = target
        self.output = {"settled": settled, "reason": reason, "log": log}

    def _settle(self, job: Script, log: list[str]) -> tuple[str, str | None]:
        if job.outcome == "changed":
            self.pending = True  # REFRESH-BACK-4
            return "changed", None
        if job.outcome == "unavailable":
            self._fail("failure", "inbox worker unavailable", log)
            return "failure", "inbox worker unavailable"
        if job.outcome == "moved":
            self._fail("runtime", WORKER_CHANGED, log)
            return "runtime", WORKER_CHANGED
        if job.outcome in ("cleanup", "deadline"):
            group = _group(job.group)
            reason = f"inbox worker group {group if group is not None else 'unknown'} cleanup is unresolved"
            if group is not None:
                self.blocked_job = job
                self.blocked_due = self.job_due
                self.blocked_forever = False
            self._fail("cleanup", reason, log, blocks=group)
            return "cleanup", reason
        return self._accept(job, log)

    def _accept(self, job: Script, log: list[str]) -> tuple[str, str | None]:
        if not self.readable:
            self._fail("failure", "inbox sources unreadable", log)  # REFRESH-ACC-7
            return "failure", "inbox sources unreadable"
        policy, sources = self.job_stamp
        if (self.job_generation != self.generation or policy != self.world_policy
                or sources != (self.version, self.layout)):
            self.pending = True  # REFRESH-ACC-1
            return "discarded", None
        computation = copy.deepcopy(job.computation)
        expires, items, more = computation["expires_at"], computation["items"], computation["more"]
        numeric = type(expires) in (int, float)
        if expires is not None and not (numeric and expires >= 0 and expires != float("inf")):
            self._fail("failure", "invalid inbox expiry", log)  # REFRESH-ACC-2
            return "failure", "invalid inbox expiry"
        if expires is not None and self._wall() >= expires:
            self._invalidate(hard=True)  # REFRESH-ACC-3
            return "expired", None
        text = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
        size = len(text.encode("utf-8", "surrogatepass"))
        if (len(items) > self.max_items or size > self.max_bytes
                or not (type(more) is int and 0 <= more <= 2**53 - 1)):
            self._fail("failure", "invalid inbox result", log)  # REFRESH-ACC-4
            return "failure", "invalid inbox result"
        for item in items:
            texts = [v for v in (item.get("title"), item.get("detail")) if isinstance(v, str)]
            if item["id"] != OVERFLOW and any(_utf16_units(w) in _utf16_units(t)
                                              for w in self.deny for t in texts):
                self._fail("failure", "inbox result declined", log)
                return "failure", "inbox result declined"
        self.items, self.more, self.expires = items, more, expires  # REFRESH-ACC-5
        self.cache_sources = sources
        self.observed = sources
        capacity = computation["capacity"]
        self.capacity = capacity["until"] if capacity is not None else None
        self.capacity_at = self._first_at(CAPACITY, self.capacity_at)  # REFRESH-ACC-6
        self.overflow_at = self._first_at(OVERFLOW, self.overflow_at)
        self.policy = self.world_policy
        self.generated_ms = self._wall()
        self.stale = False
        self.pending = False
        self.failures = 0
        self.retry_at = 0
        self.error = None
        self.detail = None
        return "accepted", None

    def _first_at(self, item_id: str, first: Any) -> Any:
        assert self.items is not None
        item = next((i for i in self.items if i["id"] == item_id), None)
        if item is None:
            return None
        if first is None:
            first = item["at"]
        item["at"] = first
        return first

    def book_invalidation(self, hard: bool = False, capacity: bool = False, remove_ids: Sequence[str] = (),
                          added: int = 0, value: bool | None = None) -> None:
        """REFRESH-INV-1..4; a boolean ``value`` means ``hard`` and ``capacity`` both equal to it."""
        if value is not None:
            hard = capacity = value
        self._invalidate(hard, capacity, remove_ids, added)
        self.output = {"log": []}

    def book_edit(self, hard: bool) -> None:
        """The fake source: an edit raises the version, a hard one the layout too (REFRESH-SNAP-1)."""
        self.version += 1
        if hard:
            self.layout += 1
        self.output = {"log": []}

    def book_policy_change(self) -> None:
        """The fake source's policy revision rises by one (REFRESH-SNAP-1)."""
        self.world_policy += 1
        self.output = {"log": []}

    def book_wall(self, wall_ms: int) -> None:
        """REFRESH-CLOCK-1: the host's wall clock is set, forward or back; elapsed time stays."""
        self.wall_offset = wall_ms - self.now_ms
        self.output = {"log": []}

    def book_readable(self, value: bool) -> None:
        """The fake source becomes readable or unreadable (REFRESH-SNAP-5)."""
        self.readable = value
        self.output = {"log": []}

    def close_cache(self) -> None:
        """REFRESH-CLOSE-1..3."""
        self.items = None
        self.capacity = None
        self.generation += 1
        job = self.job
        unresolved: int | str | None = "none"
        if job is not None:
            self.job = None
            self._settle_cancelled(job)
            if job.cancel == "unresolved":
                unresolved = _group(job.group)
        elif self.blocked_job is not None:
            if self._gone():
                self.blocked_job = None
            else:
                unresolved = _group(self.blocked_job.group)
                self.blocked_group = unresolved
        if unresolved == "none":
            self.output = {"close": "resolved", "message": None, "log": []}
        else:
            name = unresolved if unresolved is not None else "unknown"
            message = f"inbox worker group {name} cleanup is unresolved"
            self.output = {"close": "unresolved", "message": message, "log": []}

    def _settle_cancelled(self, job: Script) -> None:
        """REFRESH-CLOSE-3: the cancelled job settles as a failure, unlogged (the cache is closed);
        an unresolved cancel is a cleanup, which blocks only when it names a known group."""
        group = _group(job.group) if job.cancel == "unresolved" else None
        self._back_off()
        self.pending = True
        self.error = "cleanup" if job.cancel == "unresolved" else "failure"
        if group is not None:
            self.blocked_job, self.blocked_due, self.blocked_forever = job, self.job_due, True
            self.blocked_group = group
        self.last_duration = max(0, self._clock() - self.job_launched)

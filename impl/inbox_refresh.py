"""The memory inbox's request-driven refresh cache, as a sans-IO core.

Specified by ``spec/inbox-refresh.md`` (seed ``002_79f456de189a5c5b.txt``,
``inbox-cache.ts``); requirement IDs in comments point there.

Theory of operation
-------------------
The cache keeps the last good inbox computation and hands out snapshots. It
never refreshes on its own: each :meth:`InboxRefreshCache.snapshot` may
launch at most one job through the injected :class:`Runner`, and only when a
refresh is pending, no job is running or blocked, and both the start spacing
(``last launch + max(30 s, last duration)``) and the failure back-off have
passed (REFRESH-START-1). A job's end is handed back by the host through
:meth:`InboxRefreshCache.settle`; a result is used only if nothing it depended
on moved meanwhile (generation, policy revision, sources: REFRESH-ACC-1).

Failures back off exponentially, capped at five minutes (REFRESH-BACK-1). A
job whose process group could not be proven gone *blocks* every further
launch until a later snapshot observes the group gone (REFRESH-REC-1/2).

Time is data: every call that needs the time takes ``now_ms``, the elapsed
time, which never moves backwards. The cache reads two clocks, as the seed
does (REFRESH-CLOCK-1..3): a monotonic one, which reads ``now_ms`` and drives
the spacing and the back-off, and a wall clock, which reads ``now_ms`` plus an
offset that :meth:`InboxRefreshCache.set_wall` moves (the wall may be set
back) and drives status times, ``generatedAt``, expiry and the capacity memo.
A cache built with ``monotonic_clock=False`` is the seed's cache given only
``now``: its monotonic clock is the wall clock. The inbox source and the runner are injected interfaces; the
conformance driver implements them as fakes scripted by a case, and
``impl/inbox_refresh_runner.py`` is the real process runner. Bad input raises an
:class:`InboxRefreshError` before any state changes.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, overload, runtime_checkable

from .errors import InboxSpecError
from .options import FindingOptions
from .values import MAX_SAFE_INTEGER, is_positive_safe_integer, is_safe_integer, is_safe_natural

SPACING_MS = 30_000  # MIN_START_MS (REFRESH-DEF-1)
MAX_BACKOFF_MS = 300_000  # REFRESH-DEF-1
FAILURE_COUNT_CAP = 20
DEFAULT_MAX_ITEMS = 50  # INBOX_MAX_ITEMS, defined by the spec (the seed imports it)
DEFAULT_MAX_BYTES = 65_536  # INBOX_MAX_BYTES, likewise
# The last millisecond of year 9999: every port can format it as an ISO time.
MAX_TIME_MS = 253_402_300_799_999
MAX_CALLERS = 64  # requests made together in one snapshot step

OVERFLOW_ID = "inbox:more"
CAPACITY_ID = "capacity:proposal"

TITLE = {"refreshing": "Memory inbox is refreshing", "unavailable": "Memory inbox is unavailable"}
DETAIL = {
    "refreshing": "Pending items will appear when the refresh finishes.",
    "unavailable": "Refresh is paused; it will retry after the cooldown.",
}
LOG_FAILED = "amem: inbox refresh failed; bounded backoff applies"
WORKER_CHANGED = "inbox worker changed; restart acon serve"
WORKER_UNAVAILABLE = "inbox worker unavailable"
SOURCES_UNREADABLE = "inbox sources unreadable"
CANCELLED = "inbox worker cancelled"

Liveness = Literal["alive", "gone", "unknown"]
ErrorKind = Literal["failure", "cleanup", "runtime"]


# -- bad input (raised before any state changes) -------------------------------

class InboxRefreshError(InboxSpecError):
    code: ClassVar[str] = "invalid_argument"


class InvalidConfig(InboxRefreshError):
    code = "invalid_config"


class InvalidTime(InboxRefreshError):
    code = "invalid_time"


class InvalidCallers(InboxRefreshError):
    code = "invalid_callers"


class InvalidInvalidation(InboxRefreshError):
    code = "invalid_invalidation"


class InvalidArgument(InboxRefreshError):
    code = "invalid_argument"


class ProviderClosed(InboxRefreshError):
    """REFRESH-SNAP-7: the seed's rejected snapshot after close."""

    code = "closed"

    def __init__(self) -> None:
        super().__init__("inbox provider is closed")


# -- how a job ends (the seed's error classes; not bad input) ------------------

class JobError(Exception):
    """A job, or its launch, failed; the message is the seed's text."""


class WorkerUnavailable(JobError):
    def __init__(self, message: str = WORKER_UNAVAILABLE) -> None:
        super().__init__(message)


class SourcesChanged(JobError):
    """InboxChangedError: the sources moved under the worker (REFRESH-BACK-4)."""

    def __init__(self) -> None:
        super().__init__("inbox sources changed")


class RuntimeFailure(JobError):
    """InboxRuntimeError: the person must restart the host (REFRESH-BACK-3)."""


class CleanupUnresolved(JobError):
    """InboxCleanupError: the job's process group could not be proven gone."""

    def __init__(self, group: object = None) -> None:
        self.group: int | None = group if is_positive_safe_integer(group) else None  # type: ignore[assignment]
        super().__init__(f"inbox worker group {self.group if self.group is not None else 'unknown'}"
                         " cleanup is unresolved")


class DeadlineExceeded(CleanupUnresolved):
    """InboxDeadlineError: the work deadline passed; a cleanup like any other."""


class SourceUnreadable(Exception):
    """The inbox source could not be read (REFRESH-ACC-7, REFRESH-SNAP-5)."""

    def __init__(self) -> None:
        super().__init__(SOURCES_UNREADABLE)


# -- the injected interfaces ---------------------------------------------------

@dataclass(frozen=True)
class SourceChange:
    changed: bool
    hard: bool
    sources: Hashable


class InboxSource(Protocol):
    """What the cache reads from the memory base (spec: *The inbox source*)."""

    def policy_revision(self) -> Hashable: ...  # raises SourceUnreadable

    def source_change(self, remembered: Hashable) -> SourceChange: ...  # raises SourceUnreadable

    def declines(self, item: Mapping[str, Any]) -> bool: ...


class Job(Protocol):
    def observe_cleanup(self) -> Liveness: ...

    def cancel(self) -> None: ...  # raises CleanupUnresolved when the group cannot be proven gone


@runtime_checkable
class ScriptedJob(Job, Protocol):
    """A job that knows when and how it ends: the conformance driver's fake job (spec:
    REFRESH-TERM-1, REFRESH-IF-2). :meth:`InboxRefreshCache.advance` settles it when due."""

    @property
    def due_ms(self) -> int: ...  # the elapsed time at which it settles

    def outcome(self) -> JobResult | JobError: ...


class Runner(Protocol):
    def launch(self, capacity: Capacity | None) -> Job: ...  # raises JobError at once


@dataclass(frozen=True)
class Capacity:
    until: int


@dataclass
class Computation:
    """What a worker computed. ``more`` and ``expires_at`` are validated on acceptance."""

    items: list[dict[str, Any]]
    more: Any
    expires_at: Any
    capacity: Capacity | None
    policy: Hashable


@dataclass
class JobResult:
    computation: Computation
    sources: Hashable


@dataclass(frozen=True)
class Invalidation:
    """REFRESH-INV: the seed's ``InboxInvalidation`` record."""

    hard: bool = False
    capacity: bool = False
    remove_ids: tuple[str, ...] = ()
    added: int = 0

    def __post_init__(self) -> None:
        for name in ("hard", "capacity"):
            if type(getattr(self, name)) is not bool:
                raise InvalidInvalidation(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.remove_ids, tuple) or not all(isinstance(i, str) for i in self.remove_ids):
            raise InvalidInvalidation(f"remove_ids must be a list of strings, got {self.remove_ids!r}")
        if not is_safe_integer(self.added):
            raise InvalidInvalidation(
                f"added must be an integer in [-(2**53 - 1), 2**53 - 1], got {self.added!r}")

    @classmethod
    def from_arguments(cls, args: Mapping[str, Any]) -> bool | Invalidation:
        """The seed's ``invalidate`` argument from an event's arguments (spec: *Events*,
        REFRESH-IF-8): ``value`` alone is the boolean form, else the record's keys, each optional.
        Raises :class:`InvalidInvalidation` in the order of REFRESH-IF-8."""
        unknown = sorted(str(k) for k in set(args) - {"value", "hard", "capacity", "remove_ids", "added"})
        if unknown:
            raise InvalidInvalidation(f"unknown argument(s): {', '.join(unknown)}")
        if "value" in args:
            if type(args["value"]) is not bool:
                raise InvalidInvalidation(f"value must be true or false, got {args['value']!r}")
            if len(args) > 1:
                raise InvalidInvalidation("value is the boolean form: no record keys beside it")
            return bool(args["value"])
        remove = args.get("remove_ids", [])
        return cls(hard=args.get("hard", False), capacity=args.get("capacity", False),
                   remove_ids=tuple(remove) if isinstance(remove, list) else remove,
                   added=args.get("added", 0))

    @classmethod
    def of(cls, value: bool | Invalidation) -> Invalidation:
        if type(value) is bool:
            return cls(hard=value, capacity=value)
        if isinstance(value, Invalidation):
            return value
        raise InvalidInvalidation(f"an invalidation is a boolean or an Invalidation, got {value!r}")


@dataclass(frozen=True)
class Settlement:
    """How the cache took a settled job (REFRESH-IF-5)."""

    settled: str  # accepted, discarded, expired, failure, changed, cleanup, runtime
    reason: str | None = None


@dataclass(frozen=True)
class RefreshOptions(FindingOptions):
    """Behaviour changes recommended by the findings. Every default is the seed's."""

    MACHINE = "inbox-refresh"
    INVALID_CONFIG = InvalidConfig

    refreshing_only_when_runnable: bool = False  # REFRESH-F1
    read_failure_backs_off: bool = False  # REFRESH-F2
    reject_negative_added: bool = False  # REFRESH-F3



# -- pure helpers --------------------------------------------------------------

def is_valid_time(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_TIME_MS


def compare_sources(remembered: Hashable, current: tuple[Hashable, Hashable]) -> SourceChange:
    """The inbox source's *source change* (spec: *The inbox source*): ``current`` is the
    ``(version, layout)`` pair now; changed when ``remembered`` differs from it, hard when its
    layout does. A remembered value that is not such a pair is a hard change."""
    pair = tuple(remembered) if isinstance(remembered, (tuple, list)) and len(remembered) == 2 else None
    return SourceChange(changed=pair != tuple(current), hard=pair is None or pair[1] != current[1],
                        sources=tuple(current))


def contains_utf16(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as UTF-16 code units, as the seed's TypeScript host
    compares strings (``includes``): a lone surrogate matches half of a pair (spec: Screening).

    WARNING: the model (model/inbox_refresh.py) and the Node port compare the same way.
    """
    haystack, needle = text.encode("utf-16-le", "surrogatepass"), word.encode("utf-16-le", "surrogatepass")
    found = haystack.find(needle)
    while found != -1 and found % 2:  # a match must start on a code unit, not inside one
        found = haystack.find(needle, found + 1)
    return found != -1


def screening_declines(item: Mapping[str, Any], deny: Sequence[str]) -> bool:
    """The inbox source's *screening* (spec: *The inbox source*): an item is declined when its
    ``title`` or its ``detail`` is a string that contains a deny string."""
    texts = [v for v in (item.get("title"), item.get("detail")) if isinstance(v, str)]
    return any(contains_utf16(text, word) for word in deny for text in texts)


def backoff_ms(failure_count: int) -> int:
    """REFRESH-BACK-1: the delay after the ``failure_count``-th failure in a row.

    pre: 1 <= failure_count <= 20
    post: 1000 <= __return__ <= 300000
    post: failure_count >= 10 or __return__ == 1000 * 2 ** (failure_count - 1)
    """
    delay: int = 1000 * 2 ** min(19, failure_count - 1)
    return min(MAX_BACKOFF_MS, delay)


def next_failure_count(count: int) -> int:
    """REFRESH-BACK-1.

    pre: 0 <= count <= 20
    post: 1 <= __return__ <= 20
    post: count == 20 or __return__ == count + 1
    """
    return min(FAILURE_COUNT_CAP, count + 1)


def earliest_launch(retry_at: int, last_launch: int | None, last_duration: int) -> int:
    """REFRESH-START-1: the first time at which a launch is allowed.

    pre: retry_at >= 0 and last_duration >= 0
    post: __return__ >= retry_at
    post: last_launch is None or __return__ >= last_launch + 30000
    post: last_launch is None or __return__ >= last_launch + last_duration
    """
    return max(retry_at, 0 if last_launch is None else last_launch + max(SPACING_MS, last_duration))


def overflow_total(shown: int, actual: int, more: int, removed: int, added: int) -> int:
    """REFRESH-INV-3: the seed's arithmetic for the total after removals and additions,
    exact and clamped to 2^53 - 1 so that every ``more`` stays a safe integer.

    pre: 0 <= shown <= actual <= 2**20 and 0 <= more <= 2**53 - 1 and removed >= 0
    pre: -(2**53 - 1) <= added <= 2**53 - 1
    post: shown <= __return__ <= 2**53 - 1
    post: removed > 0 or added < 0 or __return__ == min(2**53 - 1, actual + more + added)
    """
    return min(MAX_SAFE_INTEGER, max(shown, actual + more - removed + added))


def bounded_rows(rows: Sequence[dict[str, Any]], total: int) -> tuple[list[dict[str, Any]], int]:
    """The spec's minimal ``boundedInboxRows``: the actual rows, the old hint while more remain."""
    actual = [row for row in rows if row.get("id") != OVERFLOW_ID]
    hint = next((row for row in rows if row.get("id") == OVERFLOW_ID), None)
    more = max(0, total - len(actual))
    return ([*actual, hint] if hint is not None and more > 0 else actual), more


def items_bytes(items: Sequence[Mapping[str, Any]]) -> int:
    """UTF-8 length of the items written as compact JSON, as ``JSON.stringify`` writes them."""
    return len(json.dumps(items, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def is_valid_expiry(value: object) -> bool:
    """REFRESH-ACC-2: null, or a finite non-negative number (booleans are not numbers)."""
    if value is None:
        return True
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return math.isfinite(value) and value >= 0


def _days_to_civil(days: int) -> tuple[int, int, int]:
    # Howard Hinnant's civil_from_days: exact for every day the spec's times reach.
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def iso_time(ms: int) -> str:
    """``new Date(ms).toISOString()`` for a non-negative millisecond time."""
    days, rest = divmod(ms, 86_400_000)
    year, month, day = _days_to_civil(days)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    year_text = f"{year:04d}" if year <= 9999 else f"+{year:06d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def status_item(kind: str, detail: str | None, at_ms: int) -> dict[str, Any]:
    """REFRESH-IF-9, REFRESH-MSG-1."""
    return {"id": f"inbox:{kind}", "group": "alert", "kind": "status", "title": TITLE[kind],
            "detail": detail if detail is not None else DETAIL[kind], "at": iso_time(at_ms),
            "verbs": [], "link": {"panel": "review"}}


def log_line(error: JobError, blocked_group: int | None) -> str:
    """REFRESH-MSG-3."""
    if isinstance(error, RuntimeFailure):
        return str(error)
    if isinstance(error, CleanupUnresolved):
        group = blocked_group if blocked_group is not None else "unknown"
        return (f"amem: inbox group {group} cleanup unresolved;"
                " snapshots will observe recovery without signalling it.")
    return LOG_FAILED


def error_kind(error: JobError) -> ErrorKind:
    """REFRESH-BACK-2."""
    if isinstance(error, RuntimeFailure):
        return "runtime"
    if isinstance(error, CleanupUnresolved):
        return "cleanup"
    return "failure"


# -- the cache -------------------------------------------------------------------

@dataclass
class _Running:
    job: Job
    generation: int
    launched_ms: int


@dataclass
class RefreshState:
    """Everything the cache remembers; exposed read-only for tests and the lockstep."""

    now_ms: int  # the elapsed time: the monotonic clock's reading
    wall_offset_ms: int = 0  # the wall clock reads now_ms + wall_offset_ms (REFRESH-CLOCK-1)
    cache: JobResult | None = None
    capacity: Capacity | None = None
    observed: Hashable | None = None
    running: _Running | None = None
    blocked: Job | None = None
    blocked_group: int | None = None
    generation: int = 0
    closed: bool = False
    pending: bool = True
    stale: bool = False
    failure_count: int = 0
    retry_at: int = 0
    last_launch: int | None = None
    last_duration: int = 0
    error: ErrorKind | None = None
    error_detail: str | None = None
    generated_at: str | None = None
    policy: Hashable | None = None
    capacity_at: Any = None
    overflow_at: Any = None
    shown: str = ""  # the kind the last snapshot showed: ready, stale, refreshing, unavailable
    shown_at: int = 0


class SnapshotCopies(Sequence[dict[str, Any]]):
    """The copies of one snapshot for the callers that asked for it together, each its own
    (REFRESH-SNAP-6): one private copy is taken at the snapshot, and each caller's is made from it
    when that caller first takes it. So a caller's copy is the snapshot as it was, whatever the
    cache or another caller does meanwhile, and a host that reads one of 64 copies pays for two
    deep copies, not 64 (a case file's snapshot of a few megabytes, taken by 64 callers, cost
    gigabytes when every copy was made at once)."""

    def __init__(self, value: dict[str, Any], callers: int) -> None:
        self._value = copy.deepcopy(value)
        self._copies: list[dict[str, Any] | None] = [None] * callers

    def __len__(self) -> int:
        return len(self._copies)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        made = self._copies[index]
        if made is None:
            made = self._copies[index] = copy.deepcopy(self._value)
        return made


class InboxRefreshCache:
    """The seed's ``InboxCache``: one per console, request-driven."""

    def __init__(
        self,
        runner: Runner,
        source: InboxSource,
        *,
        now_ms: int = 0,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        options: RefreshOptions | None = None,
        log: Callable[[str], None] | None = None,
        monotonic_clock: bool = True,
    ) -> None:
        if not is_valid_time(now_ms):
            raise InvalidConfig(f"start time must be an integer in [0, {MAX_TIME_MS}], got {now_ms!r}")
        for name, value in (("max_items", max_items), ("max_bytes", max_bytes)):
            if not is_positive_safe_integer(value):
                raise InvalidConfig(f"{name} must be an integer in [1, 2**53 - 1], got {value!r}")
        if options is not None and not isinstance(options, RefreshOptions):
            raise InvalidConfig(f"options must be RefreshOptions, got {type(options).__name__}")
        if log is not None and not callable(log):
            raise InvalidConfig("log must be callable")
        if type(monotonic_clock) is not bool:
            raise InvalidConfig(f"monotonic_clock must be true or false, got {monotonic_clock!r}")
        self._monotonic_clock = monotonic_clock
        self._runner = runner
        self._source = source
        self._max_items = max_items
        self._max_bytes = max_bytes
        self._options = options or RefreshOptions()
        self._log = log or (lambda line: None)
        self._s = RefreshState(now_ms=now_ms)

    @property
    def state(self) -> RefreshState:
        return self._s

    @property
    def options(self) -> RefreshOptions:
        return self._options

    @property
    def running_job(self) -> Job | None:
        return self._s.running.job if self._s.running else None

    # -- time ----------------------------------------------------------------

    def check_time(self, now_ms: object) -> int:
        """REFRESH-IF-4: an elapsed time the cache may move to (the wall moves with it)."""
        if not is_valid_time(now_ms):
            raise InvalidTime(f"now_ms must be an integer in [0, {MAX_TIME_MS}], got {now_ms!r}")
        assert isinstance(now_ms, int)
        if now_ms < self._s.now_ms:
            raise InvalidTime(f"time never moves backwards: now_ms {now_ms} < {self._s.now_ms}")
        if not is_valid_time(now_ms + self._s.wall_offset_ms):
            raise InvalidTime(f"the wall clock would leave [0, {MAX_TIME_MS}] at now_ms {now_ms}")
        return now_ms

    def advance(self, now_ms: int) -> Settlement | None:
        """REFRESH-IF-4: move the elapsed time to ``now_ms`` (the wall moves with it). A running
        :class:`ScriptedJob` due by then settles first, at its due time; how the cache took it is
        returned. Nothing else fires on its own (REFRESH-START-2)."""
        now = self.check_time(now_ms)
        running = self._s.running
        settlement = None
        if running is not None and isinstance(running.job, ScriptedJob) and running.job.due_ms <= now:
            settlement = self.settle(running.job, running.job.outcome(), running.job.due_ms)
        self._s.now_ms = now
        return settlement

    def set_wall(self, wall_ms: object) -> None:
        """REFRESH-CLOCK-1: the host's wall clock now reads ``wall_ms``, forward or back;
        the elapsed time (and a given monotonic clock) does not move."""
        if not is_valid_time(wall_ms):
            raise InvalidTime(f"the wall time must be an integer in [0, {MAX_TIME_MS}], got {wall_ms!r}")
        assert isinstance(wall_ms, int)
        self._s.wall_offset_ms = wall_ms - self._s.now_ms

    def wall_ms(self) -> int:
        """The seed's ``now()`` (REFRESH-CLOCK-2)."""
        return self._s.now_ms + self._s.wall_offset_ms

    def clock_ms(self) -> int:
        """The seed's ``clock()``: the monotonic clock, or the wall when only ``now`` is given
        (REFRESH-CLOCK-3)."""
        return self._s.now_ms if self._monotonic_clock else self.wall_ms()

    # -- invalidation (REFRESH-INV) ------------------------------------------------

    def invalidate(self, change: bool | Invalidation = False) -> None:
        invalidation = Invalidation.of(change)
        if self._options.reject_negative_added and invalidation.added < 0:  # REFRESH-OPT-3
            raise InvalidInvalidation(f"added must not be negative, got {invalidation.added}")
        self._invalidate(invalidation)

    def _invalidate(self, change: Invalidation) -> None:
        s = self._s
        s.generation += 1
        s.pending = True
        s.stale = True
        if change.hard:
            s.cache = None
            s.observed = None
        elif s.cache is not None and (change.remove_ids or change.added):
            old = s.cache.computation
            actual = [item for item in old.items if item.get("id") != OVERFLOW_ID]
            removed = set(change.remove_ids)
            shown = [item for item in actual if item.get("id") not in removed]
            total = overflow_total(len(shown), len(actual), old.more, len(removed), change.added)
            hint = next((item for item in old.items if item.get("id") == OVERFLOW_ID), None)
            old.items, old.more = bounded_rows([*shown, hint] if hint is not None else shown, total)
        if change.capacity:
            s.capacity = None

    # -- launching (REFRESH-START) ---------------------------------------------------

    def _allowed(self) -> bool:
        s = self._s
        return self.clock_ms() >= earliest_launch(s.retry_at, s.last_launch, s.last_duration)

    def _recover(self) -> None:
        """REFRESH-REC-2: release a blocked job once its group is observed gone."""
        s = self._s
        if s.blocked is None:
            return
        if s.blocked.observe_cleanup() == "gone":
            s.blocked = None
            s.blocked_group = None
            s.error = None

    def _refresh(self) -> None:
        s = self._s
        if s.closed or s.running or s.blocked or not s.pending or not self._allowed():
            return
        s.last_launch = self.clock_ms()
        s.pending = False
        s.error = None
        s.error_detail = None
        try:
            job = self._runner.launch(s.capacity)
        except JobError as error:
            s.last_duration = 0
            self._failed(error, None)
            return
        s.running = _Running(job, s.generation, s.last_launch)

    def _failed(self, error: JobError, job: Job | None) -> None:
        """The seed's ``failed``: count, back off, classify, log (REFRESH-BACK)."""
        s = self._s
        if isinstance(error, SourcesChanged):
            s.pending = True  # REFRESH-BACK-4
            return
        s.failure_count = next_failure_count(s.failure_count)
        s.retry_at = self.clock_ms() + backoff_ms(s.failure_count)
        s.pending = True
        s.error = error_kind(error)
        if isinstance(error, CleanupUnresolved) and job is not None and error.group is not None:
            s.blocked = job  # REFRESH-REC-1
            s.blocked_group = error.group
        if isinstance(error, RuntimeFailure):
            s.cache = None  # REFRESH-BACK-3
            s.error_detail = str(error)
        if not s.closed:
            self._write_log(log_line(error, s.blocked_group))

    def _write_log(self, line: str) -> None:
        """REFRESH-BACK-6: the seed wraps its log call; a sink that raises changes nothing."""
        with contextlib.suppress(Exception):  # any failure of the host's sink is the host's
            self._log(line)

    # -- settling (REFRESH-ACC) --------------------------------------------------

    def settle(self, job: Job, outcome: JobResult | JobError, now_ms: int) -> Settlement:
        """The running ``job`` ended at ``now_ms`` with ``outcome``."""
        s = self._s
        now = self.check_time(now_ms)
        if s.running is None or s.running.job is not job:
            raise InvalidArgument("only the running job settles")
        if not isinstance(outcome, (JobResult, JobError)):
            raise InvalidArgument(f"an outcome is a JobResult or a JobError, got {type(outcome).__name__}")
        s.now_ms = now
        running = s.running
        try:
            if isinstance(outcome, JobError):
                self._failed(outcome, job)
                settled = "changed" if isinstance(outcome, SourcesChanged) else error_kind(outcome)
                return Settlement(settled, None if settled == "changed" else str(outcome))
            try:
                verdict = self._accept(outcome, running.generation)
            except (JobError, SourceUnreadable) as error:
                failure = error if isinstance(error, JobError) else WorkerUnavailable(str(error))
                self._failed(failure, job)
                return Settlement("failure", str(error))
            return Settlement(verdict)
        finally:
            s.last_duration = max(0, self.clock_ms() - running.launched_ms)  # REFRESH-START-3
            s.running = None

    def _accept(self, result: JobResult, generation: int) -> str:
        s = self._s
        revision = self._source.policy_revision()
        computation = result.computation
        if (generation != s.generation or computation.policy != revision
                or self._source.source_change(result.sources).changed):
            s.pending = True  # REFRESH-ACC-1
            return "discarded"
        if not is_valid_expiry(computation.expires_at):
            raise WorkerUnavailable("invalid inbox expiry")  # REFRESH-ACC-2
        if computation.expires_at is not None and self.wall_ms() >= computation.expires_at:
            self._invalidate(Invalidation(hard=True))  # REFRESH-ACC-3
            return "expired"
        if (len(computation.items) > self._max_items or items_bytes(computation.items) > self._max_bytes
                or not is_safe_natural(computation.more)):
            raise WorkerUnavailable("invalid inbox result")  # REFRESH-ACC-4
        if any(item.get("id") != OVERFLOW_ID and self._source.declines(item) for item in computation.items):
            raise WorkerUnavailable("inbox result declined")
        cached = copy.deepcopy(result)  # REFRESH-ACC-5
        s.cache = cached
        s.observed = cached.sources
        s.capacity = cached.computation.capacity
        s.capacity_at = self._keep_first_at(cached.computation.items, CAPACITY_ID, s.capacity_at)
        s.overflow_at = self._keep_first_at(cached.computation.items, OVERFLOW_ID, s.overflow_at)
        s.policy = revision
        s.generated_at = iso_time(self.wall_ms())
        s.stale = False
        s.pending = False
        s.failure_count = 0
        s.retry_at = 0
        s.error = None
        s.error_detail = None
        return "accepted"

    @staticmethod
    def _keep_first_at(items: list[dict[str, Any]], item_id: str, first: Any) -> Any:
        """REFRESH-ACC-6."""
        item = next((i for i in items if i.get("id") == item_id), None)
        if item is None:
            return None
        if first is None:
            first = item.get("at")
        item["at"] = first
        return first

    # -- snapshots (REFRESH-SNAP) ----------------------------------------------------

    def snapshot(self, now_ms: int, callers: int = 1) -> SnapshotCopies:
        """One computation for ``callers`` requests made together; each gets its own copy
        (REFRESH-SNAP-6), made when it is first taken (``SnapshotCopies``)."""
        if type(callers) is not int or not 1 <= callers <= MAX_CALLERS:
            raise InvalidCallers(f"callers must be an integer in [1, {MAX_CALLERS}], got {callers!r}")
        now = self.check_time(now_ms)
        if self._s.closed:
            raise ProviderClosed()
        self._s.now_ms = now
        return SnapshotCopies(self._compute(), callers)

    def _compute(self) -> dict[str, Any]:
        s = self._s
        try:
            self._recover()
            revision = self._source.policy_revision()
            if s.policy is not None and s.policy != revision:
                self._invalidate(Invalidation(hard=True, capacity=True))
            s.policy = revision
            if s.cache is not None:
                change = self._source.source_change(s.observed if s.observed is not None else s.cache.sources)
                s.observed = change.sources
                if change.changed:
                    self._invalidate(Invalidation(hard=change.hard, capacity=change.hard))
                expires = s.cache.computation.expires_at if s.cache is not None else None
                if expires is not None and self.wall_ms() >= expires:
                    self._invalidate(Invalidation(hard=True))
                if s.capacity is not None and self.wall_ms() >= s.capacity.until and not s.stale:
                    self._invalidate(Invalidation())
            self._refresh()
            if s.cache is not None and (not s.stale or s.cache.computation.items):
                s.shown = "stale" if s.stale else "ready"
                refreshing = s.stale
                if self._options.refreshing_only_when_runnable and (s.error or s.blocked):
                    refreshing = False  # REFRESH-OPT-1
                return {"items": copy.deepcopy(s.cache.computation.items), "more": s.cache.computation.more,
                        "complete": not s.stale, "refreshing": refreshing, "generatedAt": s.generated_at}
            return self._status()
        except SourceUnreadable:
            self._invalidate(Invalidation(hard=True, capacity=True))  # REFRESH-SNAP-5
            s.error = "failure"
            if self._options.read_failure_backs_off:  # REFRESH-OPT-2
                s.failure_count = next_failure_count(s.failure_count)
                s.retry_at = self.clock_ms() + backoff_ms(s.failure_count)
                self._write_log(LOG_FAILED)
            return self._status()

    def _status(self) -> dict[str, Any]:
        s = self._s
        kind = "unavailable" if s.error or s.blocked else "refreshing"
        if s.shown != kind:
            s.shown = kind
            s.shown_at = max(self.wall_ms(), s.shown_at + 1)  # REFRESH-SNAP-4
        return {"items": [status_item(kind, s.error_detail, s.shown_at)], "more": 0,
                "complete": False, "refreshing": True}

    # -- close (REFRESH-CLOSE) ---------------------------------------------------

    def close(self) -> CleanupUnresolved | None:
        """Close, cancelling the running or blocked job; the unresolved cleanup, if any."""
        s = self._s
        s.closed = True
        s.cache = None
        s.capacity = None
        s.generation += 1
        running = s.running
        job = running.job if running else s.blocked
        if job is None:
            return None
        try:
            job.cancel()
        except CleanupUnresolved as error:
            if running is not None:
                self._settle_cancelled(running, error)
            return error  # a blocked job stays blocked: the seed's close throws before it forgets it
        if running is not None:
            self._settle_cancelled(running, WorkerUnavailable(CANCELLED))
        s.blocked = None
        return None

    def _settle_cancelled(self, running: _Running, error: JobError) -> None:
        """REFRESH-CLOSE-3: cancelling settles the running job as the seed's does, as a failure
        (counted, backed off, its error kind set, blocked when an unresolved cleanup names a known
        group, no log line since the cache is closed) with its duration recorded."""
        s = self._s
        s.running = None
        self._failed(error, running.job)
        s.last_duration = max(0, self.clock_ms() - running.launched_ms)

"""The real worker runner: one detached process group per job, and proof that it is gone.

Specified by ``spec/inbox-refresh-runner.md`` (the seed's ``runInboxJob``);
``RUNNER-*`` IDs point there. This is an IO edge: it starts processes, sends
signals and reads ``/proc``. The sans-IO cache (``inbox_refresh.py``) sees it
through the small :class:`~inboxspec.impl.inbox_refresh.Runner` interface.

Theory of operation
-------------------
:meth:`ProcessRunner.launch` refuses at once (a runtime error telling the
person to restart) when the interpreter or the pinned worker files moved. It
starts the worker in a new session, so the worker leads its own process group.
The worker must prove who it is before it gets the job: its ``ready`` names
its pid and its group (both the child's pid) and its signature (its start time
in ``/proc``), which the runner reads itself and compares, and the worker
hash. Only then is the ``run`` request sent.

The runner reads the worker's lines as bytes through ``select``, each line
bounded (``MAX_LINE_BYTES``), and looks at each turn whether the worker has
exited: a process the worker left behind may hold its output open, so the
exit is not the end of the output. A ``result`` is taken only in the shape
REFRESH-IF-3 gives a computation (RUNNER-MSG-4).

The job ends with the worker's exit. From then on the runner has ``reap_ms``
(2 s) to see no process of the group left in ``/proc``; if it cannot, the
cleanup is *unresolved* and the job fails with :class:`CleanupUnresolved`,
which blocks the cache until a later snapshot observes the group gone
(:meth:`ProcessJob.observe_cleanup`). At the work deadline (30 s) the runner
sends TERM to the group, then KILL ``kill_grace_ms`` (250 ms) later, and fails
the job with :class:`DeadlineExceeded`. No signal is sent once the leader has
exited: a retired group id may be reused.

The deadlines are constructor options so that tests run in milliseconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .inbox_refresh import (
    WORKER_CHANGED,
    Capacity,
    CleanupUnresolved,
    Computation,
    DeadlineExceeded,
    JobError,
    JobResult,
    Liveness,
    RuntimeFailure,
    SourcesChanged,
    WorkerUnavailable,
)
from .inbox_refresh_version import default_files, worker_hash
from .values import is_safe_integer

WORK_MS = 30_000
REAP_MS = 2000
KILL_GRACE_MS = 250
POLL_MS = 20
# The longest line the runner reads from a worker (RUNNER-MSG-3): a longer one is garbage, dropped as
# it comes, so that a worker cannot fill the host's memory with one line. Far above any result the
# cache accepts (its items are bounded by ``max_bytes``, 64 kB by default).
# WARNING: spec/inbox-refresh-runner.md's Constants table states it; change both together.
MAX_LINE_BYTES = 8 * 1024 * 1024
# What one read of the worker's output takes at most.
READ_BYTES = 1 << 16
INTERPRETER_MOVED = "bun moved; restart acon serve"  # the seed's text: the interpreter is gone


def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()


def process_signature(pid: int) -> str | None:
    """The process's identity across pid reuse: its pid and its start time in clock ticks."""
    try:
        return f"{pid}:{_stat_fields(pid)[19]}"
    except (OSError, IndexError, ValueError):
        return None


def group_liveness(group: int) -> Liveness:
    """Whether any live (non-zombie) process of ``group`` is left, read from ``/proc``."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return "unknown"
    for entry in entries:
        try:
            fields = _stat_fields(int(entry))
        except (OSError, ValueError):
            continue  # it ended while we looked
        if len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z":
            return "alive"
    return "gone"


class _Lines:
    """The worker's output split into lines, each at most ``limit`` bytes: a longer line is
    dropped as its bytes come, never held whole."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._partial = bytearray()
        self._dropping = False  # inside a line already past the limit

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines that ``chunk`` completes."""
        complete = []
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:newline]
            if not self._dropping and len(self._partial) + len(piece) <= self._limit:
                complete.append(bytes(self._partial + piece))
            self._partial.clear()
            self._dropping = False
            start = newline + 1
        rest = chunk[start:]
        if not self._dropping:
            if len(self._partial) + len(rest) > self._limit:
                self._partial.clear()
                self._dropping = True
            else:
                self._partial += rest
        return complete

    def end(self) -> list[bytes]:
        """The last line, when the output ended without its newline."""
        last = [] if self._dropping or not self._partial else [bytes(self._partial)]
        self._partial.clear()
        return last


def job_result(message: dict[str, Any]) -> JobResult | None:
    """RUNNER-MSG-4: a ``result`` message as the job's result, or None when its computation is not
    in the shape REFRESH-IF-3 gives one (the four keys; ``items`` a list of objects, each with a
    string ``id`` and ``at``; ``capacity`` null or ``{"until": safe integer}``) or its ``sources``
    are not a list. ``more`` and ``expires_at`` may be anything: the cache judges them
    (REFRESH-ACC-2, REFRESH-ACC-4)."""
    computation, sources = message.get("computation"), message.get("sources")
    if not isinstance(computation, dict) or not isinstance(sources, list):
        return None
    if not {"items", "more", "expires_at", "capacity"} <= computation.keys():
        return None
    items, capacity = computation["items"], computation["capacity"]
    if not isinstance(items, list) or not all(
            isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("at"), str)
            for item in items):
        return None
    if capacity is not None and not (isinstance(capacity, dict) and is_safe_integer(capacity.get("until"))):
        return None
    return JobResult(Computation(items, computation["more"], computation["expires_at"],
                                 None if capacity is None else Capacity(capacity["until"]),
                                 computation.get("policy")), tuple(sources))


class ProcessJob:
    """One running worker. Thread-safe; :meth:`outcome` is what the host hands to ``settle``."""

    def __init__(self, runner: ProcessRunner, base: str, capacity: Capacity | None) -> None:
        self._runner = runner
        self._lock = threading.RLock()
        self._done = threading.Event()
        self._ended = threading.Event()
        self._ended_error: CleanupUnresolved | None = None
        self._outcome: JobResult | JobError | None = None
        self.exited = self.cleaned = self.ready = self.group_known = self.terminating = False
        self._changed = self._moved = False
        self._result: JobResult | None = None
        self._timers: list[threading.Timer] = []
        # When each phase ended, on the runner's clock (the benchmark reads them).
        self.launched_at = runner.clock()
        self.ready_at: float | None = None
        self.exited_at: float | None = None
        self.cleaned_at: float | None = None
        env = {**os.environ, "INBOXSPEC_WORKER_HASH": runner.hash or ""}
        if runner.files is not None:
            env["INBOXSPEC_WORKER_FILES"] = os.pathsep.join(str(p) for p in runner.files)
        self._base, self._capacity = base, capacity
        self.process = subprocess.Popen(
            list(runner.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True, env=env)
        self.pid = self.process.pid
        self._schedule(runner.work_ms, self._deadline)
        threading.Thread(target=self._read, name=f"inbox-worker-{self.pid}", daemon=True).start()

    # -- outcome ---------------------------------------------------------------

    def _finish(self, outcome: JobResult | JobError) -> None:
        with self._lock:
            if self._outcome is None:
                self._outcome = outcome
                self._done.set()

    def outcome(self, timeout: float | None = None) -> JobResult | JobError | None:
        """The job's end, waiting up to ``timeout`` seconds; None while it runs."""
        self._done.wait(timeout)
        return self._outcome

    # -- signals -------------------------------------------------------------------

    def _schedule(self, ms: int, action: Callable[[], None]) -> None:
        timer = threading.Timer(ms / 1000, action)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _kill(self, sig: signal.Signals) -> None:
        # RUNNER-SIG-2: never signal a group whose leader has exited (its id may be reused).
        if self.exited or self.process.poll() is not None:
            return
        try:
            os.killpg(self.pid, sig)
        except OSError:
            with contextlib.suppress(OSError):
                self.process.send_signal(sig)

    def terminate(self) -> None:
        """RUNNER-SIG-1: TERM to the group, then KILL after the grace."""
        with self._lock:
            if self.terminating or self.exited or self.cleaned:
                return
            self.terminating = True
        self._kill(signal.SIGTERM)
        if not self.exited:
            self._schedule(self._runner.kill_grace_ms, lambda: self._kill(signal.SIGKILL))

    def _deadline(self) -> None:
        if self.exited or self.cleaned:
            return
        # RUNNER-DEAD-1. The outcome is recorded before the TERM: in the seed's
        # single-threaded runner nothing can run between the two, while here the
        # reader thread could see the worker die of the TERM and record "worker
        # unavailable" first.
        self._finish(DeadlineExceeded(self.pid))
        self.terminate()

    def _clear(self) -> None:
        for timer in self._timers:
            timer.cancel()

    def _clean(self) -> None:
        with self._lock:
            self.cleaned = self.exited = True
            if self.cleaned_at is None:
                self.cleaned_at = self._runner.clock()
        self._clear()
        self._ended.set()

    # -- the channel --------------------------------------------------------------

    def _read(self) -> None:
        """The channel, then the exit: the worker's lines until it has exited, then the reap proof."""
        stdout = self.process.stdout
        assert stdout is not None
        lines = _Lines(MAX_LINE_BYTES)
        try:
            self._read_until_exit(stdout.fileno(), lines)
        finally:
            stdout.close()
        code = self.process.wait()
        with self._lock:
            self.exited = True
            self.exited_at = self._runner.clock()
        self._clear()
        if self.cleaned:
            return
        if self._runner.wait_group_gone(self.pid):  # RUNNER-REAP-1: the budget starts at exit
            self._clean()
            if code == 0 and self._result is not None and not self.terminating:
                self._finish(self._result)
            elif self._moved:
                self._finish(RuntimeFailure(WORKER_CHANGED))
            elif self._changed:
                self._finish(SourcesChanged())
            else:
                self._finish(WorkerUnavailable())
        else:
            error = CleanupUnresolved(self.pid)  # RUNNER-REAP-2
            self._ended_error = error
            self._ended.set()
            self._finish(error)

    def _read_until_exit(self, fd: int, lines: _Lines) -> None:
        """Each line the worker writes, handled as it comes, until the output ends or the worker has
        exited. A process the worker left (in its group or escaped from it) may hold the output open
        and write on: once the worker has exited, what the pipe holds then is read (all the worker
        wrote, since a pipe holds at most its capacity of unread bytes) and the channel closes."""
        poll = self._runner.poll_ms / 1000
        while True:
            exited = self.process.poll() is not None
            if exited:
                self._drain(fd, lines)
                return
            readable, _, _ = select.select([fd], [], [], poll)
            if not readable:
                continue
            chunk = os.read(fd, READ_BYTES)
            if not chunk:  # every writer closed the output
                self._take(lines.end())
                return
            self._take(lines.feed(chunk))

    def _drain(self, fd: int, lines: _Lines) -> None:
        """What the pipe holds now, at most its capacity: a writer that outlived the worker cannot
        keep the runner reading."""
        try:
            left = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
        except (OSError, AttributeError):  # not a pipe, or no such fcntl here
            left = MAX_LINE_BYTES
        while left > 0 and select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, min(READ_BYTES, left))
            if not chunk:
                break
            left -= len(chunk)
            self._take(lines.feed(chunk))
        self._take(lines.end())

    def _take(self, lines: list[bytes]) -> None:
        for raw in lines:
            try:
                message = json.loads(raw)
            except (ValueError, RecursionError):  # RecursionError: nested too deep for the parser
                continue  # RUNNER-MSG-3: garbage is ignored
            if isinstance(message, dict):
                self._handle(message)

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "ready" and not self.ready:
            self._verify(message)
        elif kind == "result" and self.ready:
            result = job_result(message)
            if result is not None:  # RUNNER-MSG-4; a later result replaces it, as in the seed
                self._result = result
        elif kind == "changed" and self.ready:
            self._changed = True
        elif kind == "moved":
            self._moved = True

    def _verify(self, message: dict[str, Any]) -> None:
        """RUNNER-READY-1..3: the worker proves who it is before it gets the job."""
        if message.get("workerHash") != self._runner.hash:
            self._moved = True
            self.terminate()
            return
        if message.get("pid") != self.pid or message.get("group") != self.pid \
                or not isinstance(message.get("signature"), str):
            self.terminate()
            return
        self.group_known = True
        if self.exited or self.terminating:
            return
        if process_signature(self.pid) != message["signature"]:
            self.terminate()
            return
        self.ready = True
        self.ready_at = self._runner.clock()
        request = {"type": "run", "base": self._base,
                   "capacity": None if self._capacity is None else {"until": self._capacity.until}}
        try:
            assert self.process.stdin is not None
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except OSError:
            self.terminate()

    # -- the cache's view -------------------------------------------------------

    def observe_cleanup(self) -> Liveness:
        """RUNNER-REAP-3: gone only once the group is gone and known (or the leader exited)."""
        if self.cleaned:
            return "gone"
        state = group_liveness(self.pid)
        if state == "gone" and (self.group_known or self.exited or self.process.poll() is not None):
            self._clean()
            return "gone"
        return "unknown" if state == "gone" else state

    def cancel(self) -> None:
        """RUNNER-CANCEL-1: terminate and prove the group gone, or raise CleanupUnresolved."""
        if self.observe_cleanup() == "gone":
            self._finish(WorkerUnavailable("inbox worker cancelled"))
            return
        self.terminate()
        self._ended.wait((self._runner.reap_ms + 1000) / 1000)
        if self._ended.is_set() and self._ended_error is None:
            self._finish(WorkerUnavailable("inbox worker cancelled"))
            return
        if self._ended_error is None and self.observe_cleanup() == "gone":
            self._finish(WorkerUnavailable("inbox worker cancelled"))
            return
        error = self._ended_error or CleanupUnresolved(self.pid)
        self._finish(error)
        raise error


class ProcessRunner:
    """The seed's ``runInboxJob`` as an object: ``launch(capacity)`` starts one worker."""

    def __init__(self, base: str | Path, *, argv: Sequence[str] | None = None,
                 files: Sequence[Path] | None = None, work_ms: int = WORK_MS, reap_ms: int = REAP_MS,
                 kill_grace_ms: int = KILL_GRACE_MS, poll_ms: int = POLL_MS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.base = str(Path(base).resolve())
        default = (sys.executable, "-m", "inboxspec.impl.inbox_refresh_worker")
        self.argv = tuple(argv) if argv is not None else default
        self.files = tuple(files) if files is not None else None
        self.hash = worker_hash(self.files if self.files is not None else default_files())
        self.work_ms, self.reap_ms = work_ms, reap_ms
        self.kill_grace_ms, self.poll_ms = kill_grace_ms, poll_ms
        self.clock = clock
        self.jobs: list[ProcessJob] = []

    def launch(self, capacity: Capacity | None) -> ProcessJob:
        if not Path(self.argv[0]).exists():
            raise RuntimeFailure(INTERPRETER_MOVED)  # RUNNER-HASH-1
        current = worker_hash(self.files if self.files is not None else default_files())
        if self.hash is None or current != self.hash:
            raise RuntimeFailure(WORKER_CHANGED)  # RUNNER-HASH-1
        try:
            job = ProcessJob(self, self.base, capacity)
        except OSError as error:
            raise WorkerUnavailable() from error
        self.jobs.append(job)
        return job

    def wait_group_gone(self, group: int) -> bool:
        """RUNNER-REAP-1: poll ``/proc`` until no process of the group is left, within ``reap_ms``."""
        until = self.clock() + self.reap_ms / 1000
        while True:
            state = group_liveness(group)
            if state == "gone":
                return True
            if state == "unknown" or self.clock() >= until:
                return False
            time.sleep(self.poll_ms / 1000)

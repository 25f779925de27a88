"""One running adapter process, seen through the harness protocol's framing.

This module owns everything that can go wrong below the level of a reply:
the process not starting, dying, hanging, writing a line without end,
flooding stderr, no longer reading its stdin, or writing a reply that is not
plain JSON (``NaN``, numbers no port can hold, nesting without end). It turns
each into a typed :class:`AdapterFault` so that the runner can decide what a
fault means for the case at hand.

Both pipes are non-blocking and pumped from the caller's thread: requests are
queued by :meth:`AdapterProcess.send` and written while :meth:`receive` waits
for a reply, so an adapter that stops reading can delay the run by at most the
per-case timeout, never block it (PROTO-FRAME-4).

The adapter runs in a session of its own. Ending it ends its whole tree
(``conformance/process_tree.py``): TERM, then KILL after a short grace, for
the children that left its group too (PROTO-PROC-1, PROTO-PROC-2). Nothing
here ever waits for a pipe's end of file or closes a pipe another thread
reads: a child that keeps the adapter's pipes open cannot hold the runner
(PROTO-PROC-3). The adapter's own exit is noticed while waiting for a reply,
so an adapter that exits mid-case is ``crashed`` at once even when a child
still holds its stdout.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import os
import secrets
import selectors
import shlex
import subprocess
import threading
import time
from typing import IO, Any

from inboxspec.conformance import process_tree, warden
from inboxspec.conformance.interrupts import raise_if_interrupted
from inboxspec.conformance.plainjson import NotPlainJSON, parse_plain_json

# The longest reply line the runner takes by default (PROTO-FRAME-3, ``--max-line-bytes``).
DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024

STDERR_TAIL_BYTES = 4096
# How often a wait for a reply looks whether the adapter itself has exited, and for a signal.
# WARNING: spec/conformance-protocol.md (PROTO-PROC-3, PROTO-SIG-1, PROTO-REPORT-2) states it; change
# both together. A report's write looks as often (``reportfile.write_whole``).
EXIT_POLL_S = 0.05
# How long an adapter has to exit after ``stop`` before its tree is ended.
STOP_GRACE_S = 2.0
# How long a crash report waits for the last of the adapter's stderr.
STDERR_SETTLE_S = 0.5

# Every adapter started and not yet ended, so that an interrupted run can end them all.
_LIVE: set[AdapterProcess] = set()


# WARNING: the faults that error a case, by the name a report gives them: the protocol's fault table
# ("What the runner does with a bad adapter", spec/conformance-protocol.md) and the `fault` enum of
# conformance/schemas/conform-report.schema.json list the same (tests/test_conform_report_schema.py
# compares the three). The other kinds of AdapterFault end a start, which makes the run unusable.
CASE_FAULTS = ("crashed", "timeout", "not-json", "duplicate-reply", "oversized-line", "bad-reply",
               "wrong-seq", "wrong-case", "fixture-timeout")
START_FAULTS = ("bad-command", "no-command", "spawn-failed", "bad-start")


class AdapterFault(Exception):
    """The adapter did something the protocol does not allow; ``kind`` names what (one of
    ``CASE_FAULTS`` or ``START_FAULTS``)."""

    def __init__(self, kind: str, detail: str) -> None:
        assert kind in CASE_FAULTS or kind in START_FAULTS, kind
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def select_writable(fd: int, timeout: float) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_WRITE)
        return bool(selector.select(timeout))


class AdapterProcess:
    """Starts the adapter command and exchanges newline-delimited JSON with it."""

    def __init__(self, command: str, max_line_bytes: int, temporary: str | None = None) -> None:
        """``temporary``, when given, is the adapter's ``TMPDIR`` (PROTO-PROC-6)."""
        self.command = command
        self.max_line_bytes = max_line_bytes
        argv = split_command(command)
        self.token = secrets.token_hex(16)
        environment = {**os.environ, process_tree.TOKEN_VARIABLE: self.token}
        if temporary is not None:
            environment["TMPDIR"] = temporary
        try:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # so a kill reaches the adapter's children too
                preexec_fn=process_tree.killed_with_this_thread(),  # PROTO-PROC-4
                env=environment,
            )
        except (OSError, ValueError) as error:
            raise AdapterFault("spawn-failed", f"cannot start {argv[0]!r}: {error}") from error
        _LIVE.add(self)
        warden.adapter_started(self._process.pid, self.token)
        self._ended = False
        # What the adapter wrote and no line has taken yet, and how much of it is known to hold no
        # newline: a reply of many chunks is searched and grown once, not from its start at each
        # chunk (a 64 MiB reply took 18 s to read so, and was reported as the adapter's timeout).
        self._buffer = bytearray()
        self._scanned = 0
        self._eof = False
        self._stderr_tail: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._stderr_lock = threading.Lock()
        assert self._process.stdout is not None and self._process.stderr is not None
        assert self._process.stdin is not None
        self._stdout_fd = self._process.stdout.fileno()
        os.set_blocking(self._stdout_fd, False)
        self._stdin_fd: int | None = self._process.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        # Request bytes not yet taken by the adapter, and whether it closed its stdin.
        self._outgoing = bytearray()
        self._stdin_broken: str | None = None
        self._stdin_watched = False
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout_fd, selectors.EVENT_READ)
        self._exit_code: int | None = None
        # stdout is read in the caller's thread (no hand-off per reply); stderr,
        # which nobody waits for, is drained by a thread so it can never block the adapter.
        # The thread owns the stderr pipe and closes it; kill() wakes it through a pipe
        # of its own instead of closing stderr under it (which would wait for its read).
        self._stderr_done = threading.Event()
        wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._process.stderr.fileno(), False)
        threading.Thread(target=self._drain_stderr, args=(self._process.stderr, wake_read),
                         daemon=True).start()

    def _drain_stderr(self, stream: IO[bytes], wake_read: int) -> None:
        # Adapters may log freely; only a bounded tail is kept, for error context.
        fd = stream.fileno()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                selector.register(wake_read, selectors.EVENT_READ)
                while True:
                    ready = {key.fd for key, _ in selector.select()}
                    if fd in ready:
                        try:
                            chunk = os.read(fd, 65536)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            break
                        self._keep_stderr(chunk)
                    elif wake_read in ready:
                        break
        except (OSError, ValueError):
            pass
        finally:
            self._stderr_done.set()
            with contextlib.suppress(OSError):
                stream.close()
            with contextlib.suppress(OSError):
                os.close(wake_read)

    def _keep_stderr(self, chunk: bytes) -> None:
        with self._stderr_lock:
            self._stderr_tail.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr_tail) > 1:
                self._stderr_size -= len(self._stderr_tail.popleft())

    def _exited(self) -> bool:
        """Whether the adapter itself has exited; what it wrote before is read first."""
        if self._exit_code is None:
            self._exit_code = self._process.poll()
        return self._exit_code is not None

    def _read_available(self) -> None:
        """Everything the adapter wrote to stdout that is there now, without waiting."""
        while not self._eof:
            try:
                chunk = os.read(self._stdout_fd, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                self._eof = True
                return
            self._buffer += chunk
            if len(self._buffer) > self.max_line_bytes:
                return

    def _next_line(self, timeout: float) -> bytes | None:
        """One line without its newline, or None at end of stream."""
        deadline = time.monotonic() + timeout
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            self._scanned = len(self._buffer) if newline == -1 else 0
            if newline != -1:
                line = bytes(self._buffer[:newline])
                del self._buffer[:newline + 1]
                if len(line) > self.max_line_bytes:
                    raise AdapterFault("oversized-line", f"reply line exceeds {self.max_line_bytes} bytes")
                return line
            if len(self._buffer) > self.max_line_bytes:
                # A line past the bound cannot be resynchronised; the caller restarts the adapter.
                raise AdapterFault("oversized-line", f"reply line exceeds {self.max_line_bytes} bytes")
            if self._eof:
                return None
            if self._exited():
                # The adapter is gone, though a child of it may hold stdout open (PROTO-PROC-3):
                # what it wrote before exiting still counts, nothing more will come.
                self._read_available()
                if self._buffer.find(b"\n", self._scanned) != -1 or len(self._buffer) > self.max_line_bytes:
                    continue
                self._eof = True
                if self._buffer:
                    partial, self._buffer, self._scanned = bytes(self._buffer), bytearray(), 0
                    shown = partial[:120].decode("utf-8", "replace")
                    raise AdapterFault("not-json", f"reply ends before its newline: {shown!r}")
                return None
            raise_if_interrupted()  # a signal is acted on within EXIT_POLL_S (PROTO-SIG-1)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AdapterFault("timeout", self._timeout_detail(timeout))
            self._watch_stdin()
            events = self._selector.select(min(remaining, EXIT_POLL_S))
            if not events:
                if deadline - time.monotonic() <= 0:
                    raise AdapterFault("timeout", self._timeout_detail(timeout))
                continue
            if any(key.fd == self._stdin_fd for key, _ in events):
                self._pump()
            if not any(key.fd == self._stdout_fd for key, _ in events):
                continue
            try:
                chunk = os.read(self._stdout_fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True
                if self._buffer:  # a last line without its newline is not a reply
                    partial, self._buffer, self._scanned = bytes(self._buffer), bytearray(), 0
                    shown = partial[:120].decode("utf-8", "replace")
                    raise AdapterFault("not-json", f"reply ends before its newline: {shown!r}")

    def stderr_tail(self) -> str:
        if self._exit_code is not None or self._eof or self._stdin_broken is not None:
            # The last lines of a crashed adapter may still be in the pipe: give the
            # drain thread a moment, never longer (a child may hold stderr open). An adapter
            # that closed its input has most often exited: one that exits at once, before
            # the runner writes its start request, was told without its last words.
            self._stderr_done.wait(STDERR_SETTLE_S)
        with self._stderr_lock:
            data = b"".join(self._stderr_tail)[-STDERR_TAIL_BYTES:]
        return data.decode("utf-8", "replace")

    def _timeout_detail(self, timeout: float) -> str:
        if self._outgoing and self._stdin_broken is None:
            return (f"no reply within {timeout:g}s, and the adapter stopped reading its input "
                    f"({len(self._outgoing)} request bytes unread)")
        return f"no reply within {timeout:g}s"

    def _watch_stdin(self) -> None:
        """Select on stdin exactly while there is something to write to it."""
        if self._stdin_fd is None or bool(self._outgoing) == self._stdin_watched:
            return
        if self._outgoing:
            self._selector.register(self._stdin_fd, selectors.EVENT_WRITE)
        else:
            self._selector.unregister(self._stdin_fd)
        self._stdin_watched = bool(self._outgoing)

    def _pump(self) -> None:
        """Write as much of the queued requests as the pipe takes now, never blocking."""
        while self._outgoing and self._stdin_fd is not None:
            try:
                written = os.write(self._stdin_fd, self._outgoing[: 1 << 16])
            except BlockingIOError:
                return
            except OSError as error:  # EPIPE: the adapter closed its stdin or exited
                self._stdin_broken = str(error)
                self._outgoing.clear()
                self._watch_stdin()
                return
            del self._outgoing[:written]
        self._watch_stdin()

    def send(self, message: dict[str, Any]) -> None:
        """Queue one request and write what the pipe takes now; the rest goes out while
        :meth:`receive` waits. Raises ``crashed`` once the adapter has closed its stdin."""
        if self._stdin_broken is not None:
            raise self._input_closed()
        self._outgoing += json.dumps(message, allow_nan=False).encode("utf-8") + b"\n"
        self._pump()
        if self._stdin_broken is not None:
            raise self._input_closed()

    def _input_closed(self) -> AdapterFault:
        """The fault of an adapter whose input the runner found closed: most often it has exited (an
        adapter that exits at once is found so when the runner writes its start request before it
        sees the exit, and the other way round on a quieter machine), and then its exit code is the
        detail, whichever the runner saw first; else the broken pipe."""
        try:
            code = self._process.wait(timeout=STDERR_SETTLE_S)
        except subprocess.TimeoutExpired:
            return AdapterFault("crashed", f"adapter closed its input ({self._stdin_broken})")
        self._exit_code = code
        return AdapterFault("crashed", f"adapter exited with code {code}")

    def flush(self, timeout: float) -> bool:
        """Write every queued byte within ``timeout``; False if the adapter would not take them."""
        deadline = time.monotonic() + timeout
        self._pump()
        while self._outgoing and self._stdin_fd is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            selectors_ready = select_writable(self._stdin_fd, remaining)
            if not selectors_ready:
                return False
            self._pump()
        return not self._outgoing

    def receive(self, timeout: float) -> Any:
        """The next reply, parsed; an AdapterFault for anything but one JSON line in time."""
        line = self._next_line(timeout)
        if line is None:
            try:
                code: int | str = self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = "unknown (stdout closed, process still running)"
            raise AdapterFault("crashed", f"adapter exited with code {code}")
        try:
            return parse_plain_json(line)
        except NotPlainJSON as error:
            raise AdapterFault("not-json", f"reply is not plain JSON: {error}") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            shown = line[:120].decode("utf-8", "replace")
            raise AdapterFault("not-json", f"reply is not a JSON line: {shown!r}") from None

    @property
    def pid(self) -> int:
        return self._process.pid

    def kill(self, grace: float = process_tree.KILL_GRACE_S) -> None:
        """End the adapter and everything it started: TERM, then KILL after ``grace``.

        Safe to call twice; never blocks on a pipe a leftover child holds.
        """
        if self._ended:
            return
        self._ended = True
        _LIVE.discard(self)
        spare = frozenset(other.pid for other in _LIVE)
        # Its status may be collected already (``stop``, a crash noticed): its pid may be another's now.
        held = functools.partial(_not_collected, self._process)
        process_tree.terminate(process_tree.Tree(self._process.pid, self.token, spare, root_held=held), grace)
        warden.adapter_ended(self._process.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=grace)  # a zombie by now: the tree was KILLed
        self._selector.close()
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")  # the stderr thread closes stderr itself
        with contextlib.suppress(OSError):
            os.close(self._wake_write)
        # Only this thread reads stdout and writes stdin: closing them cannot wait.
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    # WARNING: spec/conformance-protocol.md (PROTO-STOP-1) states this grace; change both together.
    def stop(self, grace: float = STOP_GRACE_S) -> int | None:
        """Ask politely with ``stop``, then end the adapter's tree if anything lingers. The adapter's
        exit status when it exited of itself within ``grace``, as ``Popen.returncode`` gives it
        (negative: ended by that signal), or None (PROTO-STOP-1)."""
        status = None
        try:
            self.send({"cmd": "stop"})
            if self.flush(grace):
                assert self._process.stdin is not None
                self._process.stdin.close()
                status = self._process.wait(timeout=grace)
        except (AdapterFault, OSError, subprocess.TimeoutExpired):
            pass
        self.kill()
        return status


def split_command(command: str) -> list[str]:
    """The adapter command as a program and its arguments, split as a POSIX shell would."""
    try:
        argv = shlex.split(command)
    except ValueError as error:  # an unbalanced quote, a trailing backslash
        raise AdapterFault("bad-command", f"cannot split the adapter command: {error}") from None
    if not argv:
        raise AdapterFault("no-command", "the adapter command is empty")
    return argv


def _not_collected(process: subprocess.Popen[bytes]) -> bool:
    """Whether the adapter's status is not collected yet: until then its pid is its own."""
    return process.returncode is None


def kill_all() -> None:
    """End every adapter still running: the last thing an interrupted or failed run does."""
    for process in list(_LIVE):
        process.kill()

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
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time
from typing import IO, Any, cast

from inboxspec.conformance.plainjson import NotPlainJSON, parse_plain_json

STDERR_TAIL_BYTES = 4096


class AdapterFault(Exception):
    """The adapter did something the protocol does not allow; ``kind`` names what."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def select_writable(fd: int, timeout: float) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_WRITE)
        return bool(selector.select(timeout))


class AdapterProcess:
    """Starts the adapter command and exchanges newline-delimited JSON with it."""

    def __init__(self, command: str, max_line_bytes: int) -> None:
        self.command = command
        self.max_line_bytes = max_line_bytes
        argv = shlex.split(command)
        if not argv:
            raise AdapterFault("no-command", "the adapter command is empty")
        try:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # so a kill reaches the adapter's children too
            )
        except OSError as error:
            raise AdapterFault("spawn-failed", f"cannot start {argv[0]!r}: {error}") from error
        self._buffer = b""
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
        # stdout is read in the caller's thread (no hand-off per reply); stderr,
        # which nobody waits for, is drained by a thread so it can never block the adapter.
        threading.Thread(target=self._drain_stderr, args=(self._process.stderr,), daemon=True).start()

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        # Adapters may log freely; only a bounded tail is kept, for error context.
        try:
            # Popen's pipes are buffered readers: read1 returns what is there, up to 64 KiB.
            reader = cast(io.BufferedReader, stream)
            for chunk in iter(lambda: reader.read1(65536), b""):
                with self._stderr_lock:
                    self._stderr_tail.append(chunk)
                    self._stderr_size += len(chunk)
                    while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr_tail) > 1:
                        self._stderr_size -= len(self._stderr_tail.popleft())
        except (OSError, ValueError):
            pass

    def _next_line(self, timeout: float) -> bytes | None:
        """One line without its newline, or None at end of stream."""
        deadline = time.monotonic() + timeout
        while True:
            newline = self._buffer.find(b"\n")
            if newline != -1:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                if len(line) > self.max_line_bytes:
                    raise AdapterFault("oversized-line", f"reply line exceeds {self.max_line_bytes} bytes")
                return line
            if len(self._buffer) > self.max_line_bytes:
                # A line past the bound cannot be resynchronised; the caller restarts the adapter.
                raise AdapterFault("oversized-line", f"reply line exceeds {self.max_line_bytes} bytes")
            if self._eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AdapterFault("timeout", self._timeout_detail(timeout))
            self._watch_stdin()
            events = self._selector.select(remaining)
            if not events:
                raise AdapterFault("timeout", self._timeout_detail(timeout))
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
                    partial, self._buffer = self._buffer, b""
                    shown = partial[:120].decode("utf-8", "replace")
                    raise AdapterFault("not-json", f"reply ends before its newline: {shown!r}")

    def stderr_tail(self) -> str:
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
            raise AdapterFault("crashed", f"adapter closed its input ({self._stdin_broken})")
        self._outgoing += json.dumps(message, allow_nan=False).encode("utf-8") + b"\n"
        self._pump()
        if self._stdin_broken is not None:
            raise AdapterFault("crashed", f"adapter closed its input ({self._stdin_broken})")

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
                code: int | str = self._process.wait(timeout=5)
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

    def kill(self) -> None:
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self._process.kill()
        self._process.wait()
        self._selector.close()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def stop(self, grace: float = 2.0) -> None:
        """Ask politely with ``stop``, then kill if the adapter lingers."""
        try:
            self.send({"cmd": "stop"})
            if self.flush(grace):
                assert self._process.stdin is not None
                self._process.stdin.close()
                self._process.wait(timeout=grace)
        except (AdapterFault, OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

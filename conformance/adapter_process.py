"""One running adapter process, seen through the harness protocol's framing.

This module owns everything that can go wrong below the level of a reply:
the process not starting, dying, hanging, writing a line without end,
flooding stderr. It turns each into a typed :class:`AdapterFault` so that the
runner can decide what a fault means for the case at hand.
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

STDERR_TAIL_BYTES = 4096


class AdapterFault(Exception):
    """The adapter did something the protocol does not allow; ``kind`` names what."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


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
        self._stdout_fd = self._process.stdout.fileno()
        os.set_blocking(self._stdout_fd, False)
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
            if remaining <= 0 or not self._selector.select(remaining):
                raise AdapterFault("timeout", f"no reply within {timeout:g}s")
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

    def send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            raise AdapterFault("crashed", f"adapter closed its input ({error})") from error

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
            return json.loads(line)
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
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=grace)
        except (AdapterFault, OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

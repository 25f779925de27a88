"""One running adapter process, seen through the harness protocol's framing.

This module owns everything that can go wrong below the level of a reply:
the process not starting, dying, hanging, writing a line without end,
flooding stderr. It turns each into a typed :class:`AdapterFault` so that the
runner can decide what a fault means for the case at hand.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import IO, Any

STDERR_TAIL_BYTES = 4096
EOF_MARK = None


class AdapterFault(Exception):
    """The adapter did something the protocol does not allow; ``kind`` names what."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class Line:
    text: bytes
    oversized: bool


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
        self._lines: queue.Queue[Line | None] = queue.Queue()
        self._stderr_tail: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._stderr_lock = threading.Lock()
        assert self._process.stdout is not None and self._process.stderr is not None
        threading.Thread(target=self._read_stdout, args=(self._process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain_stderr, args=(self._process.stderr,), daemon=True).start()

    # -- reader threads -------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        try:
            while True:
                line = stream.readline(self.max_line_bytes + 1)
                if not line:
                    break
                if len(line) > self.max_line_bytes and not line.endswith(b"\n"):
                    # A line past the bound cannot be resynchronised: report it and stop reading.
                    self._lines.put(Line(line[:200], oversized=True))
                    return
                self._lines.put(Line(line, oversized=False))
        except (OSError, ValueError):
            pass
        self._lines.put(EOF_MARK)

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        # Adapters may log freely; only a bounded tail is kept, for error context.
        try:
            for chunk in iter(lambda: stream.read1(65536), b""):
                with self._stderr_lock:
                    self._stderr_tail.append(chunk)
                    self._stderr_size += len(chunk)
                    while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr_tail) > 1:
                        self._stderr_size -= len(self._stderr_tail.popleft())
        except (OSError, ValueError):
            pass

    # -- protocol I/O ---------------------------------------------------------

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
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterFault("timeout", f"no reply within {timeout:g}s") from None
        if line is EOF_MARK:
            code = self._process.wait(timeout=5)
            raise AdapterFault("crashed", f"adapter exited with code {code}")
        if line.oversized:
            raise AdapterFault("oversized-line",
                               f"reply line exceeds {self.max_line_bytes} bytes")
        try:
            return json.loads(line.text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            shown = line.text[:120].decode("utf-8", "replace")
            raise AdapterFault("not-json", f"reply is not a JSON line: {shown!r}") from None

    def kill(self) -> None:
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

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

"""The run's warden: a forked child that does the runner's end when the runner is killed outright.

A runner killed by SIGKILL (the OOM killer, ``kill -9``) runs no code, so its own end (PROTO-PROC-1,
PROTO-FIX-1) never comes. The parent-death signal (PROTO-PROC-4) takes the adapter's own process
with it, but not what the adapter started, nor the run's fixture root. The warden is forked when
runs begin (``start``), before any adapter or thread, and reads one pipe from the runner:

- ``["adapter", pid, token]`` when an adapter starts;
- ``["fixtures", path]`` when the run's fixture root is made;
- ``["done"]`` when the runner's own end has run: the warden exits, doing nothing.

End of file without ``done`` means the runner is gone without its end (the kernel closes a dead
process's pipes): the warden then ends each adapter's tree as the runner would have
(``process_tree.terminate``: TERM, the grace, KILL) and removes each fixture root, and exits.
It ignores SIGINT, SIGTERM and SIGHUP, which the runner's own end answers (PROTO-SIG-1), and holds
none of the runner's descriptors but its pipe: whoever waits for the end of the runner's output
sees it when the runner ends. What it cannot find is what the runner could not find either, less
one kind: an orphan the runner had adopted (PROTO-PROC-1's subreaper) that left the adapter's
session and cleared its token is adopted by another process when the runner dies, and is no
longer found (``conformance/WRITING-AN-ADAPTER.md``, *What the runner cannot promise*).

Where processes cannot be forked, or the fork fails (a process limit), runs go on without one.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any, NoReturn

from inboxspec.conformance import process_tree
from inboxspec.machines.fixtures import CLOSING_REMOVAL_SECONDS, remove

_READ_BYTES = 65536
_DONE_WAIT_S = 1.0  # how long ``close`` waits for the warden to exit after ``done``


class Warden:
    """The runner's end of the pipe to its warden (see the module docstring)."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid = pid
        self._pipe: int | None = pipe

    def tell(self, *message: Any) -> None:
        """One message; never blocks and never fails the run (a warden gone is a warden gone)."""
        if self._pipe is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._pipe, json.dumps(message).encode() + b"\n")

    def close(self) -> None:
        """The runner's own end has run: the warden exits without doing anything."""
        if self._pipe is None:
            return
        self.tell("done")
        with contextlib.suppress(OSError):
            os.close(self._pipe)
        self._pipe = None
        deadline = time.monotonic() + _DONE_WAIT_S
        while time.monotonic() < deadline:
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0] != 0:
                    return
            except ChildProcessError:
                return
            time.sleep(0.005)


_CURRENT: Warden | None = None


def start() -> Warden | None:
    """Fork the warden of the runs about to begin; None where none can be forked."""
    global _CURRENT
    if not hasattr(os, "fork"):
        return None
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        _watch(read_end, write_end)
    os.close(read_end)
    os.set_blocking(write_end, False)  # the runner never waits on its warden
    _CURRENT = Warden(pid, write_end)
    return _CURRENT


def stop(warden: Warden | None) -> None:
    global _CURRENT
    if warden is not None:
        warden.close()
    if _CURRENT is warden:
        _CURRENT = None


def adapter_started(pid: int, token: str) -> None:
    if _CURRENT is not None:
        _CURRENT.tell("adapter", pid, token)


def fixture_root_made(path: str) -> None:
    if _CURRENT is not None:
        _CURRENT.tell("fixtures", path)


def _watch(read_end: int, write_end: int) -> NoReturn:
    """The warden's life, in the forked child: never returns, never runs the parent's exit code."""
    status = 0
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        os.close(write_end)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, read_end)
        os.closerange(read_end + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
        adapters: list[tuple[int, str]] = []
        roots: list[str] = []
        pending = b""
        while chunk := os.read(read_end, _READ_BYTES):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                message = json.loads(line)
                if message == ["done"]:
                    os._exit(0)
                if message[0] == "adapter":
                    adapters.append((int(message[1]), str(message[2])))
                elif message[0] == "fixtures":
                    roots.append(str(message[1]))
        # The runner is gone without its own end: do it.
        for root, token in adapters:
            process_tree.terminate(process_tree.Tree(root, token))
        for path in roots:
            remove(Path(path), seconds=CLOSING_REMOVAL_SECONDS)
    except BaseException:  # whatever happens, the child never returns to the runner's code
        status = 1
    os._exit(status)

"""The run's warden: a forked child that does the runner's end when the runner is killed outright.

A runner killed by SIGKILL (the OOM killer, ``kill -9``) runs no code, so its own end (PROTO-PROC-1,
PROTO-FIX-1) never comes. The parent-death signal (PROTO-PROC-4) takes the adapter's own process
with it, but not what the adapter started, nor the run's fixture root. The warden is forked when
runs begin (``start``), before any adapter or thread, and reads one pipe from the runner:

- ``["adapter", pid, token]`` when an adapter starts;
- ``["fixtures", path]`` when the run's fixture root is made;
- ``["done"]`` when the runner's own end has run: the warden exits, doing nothing.

Each message carries a secret drawn before the fork, which only the runner and the warden hold:
an adapter running as the runner's user can open the pipe's write end through ``/proc``, and a
forged ``["adapter", 1, ...]`` or ``["fixtures", "/"]`` would have the warden end init's session
or remove the root directory. A line without the secret, or of another shape, is ignored, and so
is a message naming what the runner does not make: an adapter that is not the runner's child leading
a session of its own, a fixture root that is not a real directory named as the roots are. (Such a
writer can still make the warden hold a long line in memory, or end it: nothing it could not do to
its own processes, and a warden ended is a run without one.)

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
import secrets
import signal
import stat
import time
from pathlib import Path
from typing import Any, NoReturn

from inboxspec.conformance import process_tree
from inboxspec.machines.fixtures import CLOSING_REMOVAL_SECONDS, FIXTURE_ROOT_PREFIX, remove

_READ_BYTES = 65536
_DONE_WAIT_S = 1.0  # how long ``close`` waits for the warden to exit after ``done``


class Warden:
    """The runner's end of the pipe to its warden (see the module docstring)."""

    def __init__(self, pid: int, pipe: int, secret: str) -> None:
        self.pid = pid
        self._pipe: int | None = pipe
        self._secret = secret

    def tell(self, *message: Any) -> None:
        """One message; never blocks and never fails the run (a warden gone is a warden gone)."""
        if self._pipe is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._pipe, json.dumps([self._secret, *message]).encode() + b"\n")

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
    secret = secrets.token_hex(16)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        _watch(read_end, write_end, secret)
    os.close(read_end)
    os.set_blocking(write_end, False)  # the runner never waits on its warden
    _CURRENT = Warden(pid, write_end, secret)
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


def _message(line: bytes, secret: str) -> list[Any] | None:
    """A line's message, without its secret; None for a line without the secret or of another shape."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, list) or not message or message[0] != secret:
        return None
    shapes = {"done": (), "adapter": (int, str), "fixtures": (str,)}
    name, *values = message[1:] or [None]
    shape = shapes.get(name) if isinstance(name, str) else None
    if shape is None or len(values) != len(shape) or not all(
            type(value) is kind for value, kind in zip(values, shape, strict=True)):
        return None
    return [name, *values]


# WARNING: these two checks are all that stands between a message and what the warden does with it
# (ending a session's every process and their descendants; removing a tree): a message naming init
# ended every process of the machine when a mutant let one through.
def _is_adapter(pid: int, runner: int) -> bool:
    """Whether ``pid``, when the warden is told it, is what the runner starts: its child, leading a
    session of its own (PROTO-PROC-1). Without ``/proc`` none is: the warden ends no adapter there."""
    info = process_tree.process_info(pid) if pid > 1 else None
    return info is not None and info.ppid == runner and info.sid == pid and info.pgid == pid


def _is_fixture_root(path: str) -> bool:
    """Whether ``path`` is what the runner makes as its fixture root (``FixtureRoot``): an absolute,
    real path of a directory, not a link, named as the root is named, and this user's."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return False
    return (os.path.isabs(path) and os.path.realpath(path) == path and stat.S_ISDIR(info.st_mode)
            and os.path.basename(path).startswith(FIXTURE_ROOT_PREFIX) and info.st_uid == os.getuid())


def _watch(read_end: int, write_end: int, secret: str) -> NoReturn:
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
        runner = os.getppid()
        adapters: list[tuple[int, str]] = []
        roots: list[str] = []
        pending = b""
        while chunk := os.read(read_end, _READ_BYTES):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                message = _message(line, secret)
                if message == ["done"]:
                    os._exit(0)
                if message is not None and message[0] == "adapter" and _is_adapter(message[1], runner):
                    adapters.append((message[1], message[2]))
                elif message is not None and message[0] == "fixtures" and _is_fixture_root(message[1]):
                    roots.append(message[1])
        # The runner is gone without its own end: do it.
        for root, token in adapters:
            process_tree.terminate(process_tree.Tree(root, token))
        for path in roots:
            remove(Path(path), seconds=CLOSING_REMOVAL_SECONDS)
    except BaseException:  # whatever happens, the child never returns to the runner's code
        status = 1
    os._exit(status)

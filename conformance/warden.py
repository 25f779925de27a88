"""The run's warden: a forked child that does the runner's end when the runner is killed outright.

A runner killed by SIGKILL (the OOM killer, ``kill -9``) runs no code, so its own end (PROTO-PROC-1,
PROTO-FIX-1) never comes. The parent-death signal (PROTO-PROC-4) takes the adapter's own process
with it, but not what the adapter started, nor the run's fixture root. The warden is forked when
runs begin (``start``), before any adapter or thread, and reads the runner's messages, one datagram
each, from its end of a socket pair:

- ``["adapter", pid, token]`` when an adapter starts;
- ``["ended", pid]`` when the runner has ended that adapter's tree itself (the warden lets go of it);
- ``["fixtures", path]`` when the run's fixture root is made, with a descriptor of it (``SCM_RIGHTS``);
- ``["done"]`` when the runner's own end has run: the warden exits, doing nothing.

The warden has a process group of its own, in the runner's session, so that a KILL of the runner's
group leaves it. The runner never waits for it to take a message: one it does not take at once (a
warden stopped, say) lets it go, and the run goes on without one. After ``done`` the runner waits
at most ``DONE_WAIT_S`` for it to exit, so that nothing of the run outlives the run.

The runner gone without ``done`` (its end of the pair closed, and the warden's parent no longer the
runner), the warden ends each adapter's tree that was not ended as the runner would have
(``process_tree.terminate``: TERM, the grace, KILL) and removes each fixture root, and exits.

What the warden believes, and why:

- A socket pair rather than a pipe: a pipe's ends can be opened again through ``/proc/<pid>/fd``
  by any process of the runner's user, an adapter included, which could then read the messages,
  forge them, or spoil the next one with an unended line; a socket cannot be opened so, and a
  datagram is a message whole. Each message still carries a secret drawn before the fork, for a
  process that takes the runner's descriptors outright (with ``pidfd_getfd``, which needs the
  right to trace the runner), and a message of another shape is ignored.
- An adapter is believed only if, when the warden is told it, it is the runner's child leading a
  session of its own (PROTO-PROC-1), and it is held by a pidfd opened before that check: once the
  runner is gone, the adapter is collected by another parent, and its pid may be given to an
  unrelated process; the pidfd tells whether the pid is still the adapter's (``Tree.root_held``).
  A forged ``["adapter", 1, ...]`` would have had the warden end every process of the machine.
  Without pidfds (Linux before 5.3) or ``/proc``, the warden ends no adapter.
- A fixture root is believed only if it is a real directory of the runner's user, not a link,
  named as the roots are, and the descriptor sent with it holds that very directory (by device and
  inode). It is removed as the runner's own end removes it (``removed_root``): at its path only if
  the directory opened there (without following a link) is still the same one, and, wherever an
  adapter moved it since, through the descriptor (without it, a root renamed by the adapter stayed
  on disk with every fixture in it, set-user-ID files among them).

An adapter of the runner's user can still end the warden, or, with the right to trace the runner,
take its socket: nothing it could not do to the runner's processes itself, and a warden ended is
a run without one. What the warden cannot find is what the runner could not find either, less one
kind: an orphan the runner had adopted (PROTO-PROC-1's subreaper) that left the adapter's session
and cleared its token is adopted by another process when the runner dies, and is no longer found
(``conformance/WRITING-AN-ADAPTER.md``, *What the runner cannot promise*).

Where processes cannot be forked, or the fork fails (a process limit), runs go on without one.
"""

from __future__ import annotations

import array
import fcntl
import functools
import json
import os
import secrets
import signal
import socket
import stat
import time
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from inboxspec.conformance import process_tree
from inboxspec.machines.fixtures import FIXTURE_ROOT_PREFIX, removed_root

_MESSAGE_BYTES = 65536  # the runner's messages are far shorter: a longer one is cut, and not JSON
# The runner passes one descriptor with a message at most; room for more, so that more sent are seen,
# and closed, rather than cut off by the kernel unseen.
_DESCRIPTORS_TAKEN = 4
# WARNING: spec/conformance-protocol.md (PROTO-PROC-5) states this wait; change both together.
DONE_WAIT_S = 1.0  # how long ``close`` waits for the warden to exit after ``done``
_RUNNER_GONE_POLL_S = 0.05
_IGNORED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the runner's own end answers them

# WARNING: ``_message`` reads these shapes; the runner's side (``adapter_started`` and the rest)
# writes them. Change both together.
_SHAPES: dict[str, tuple[type, ...]] = {
    "done": (), "adapter": (int, str), "ended": (int,), "fixtures": (str,)}


class Warden:
    """The runner's end of the socket pair to its warden (see the module docstring)."""

    def __init__(self, pid: int, channel: socket.socket, secret: str) -> None:
        self.pid = pid
        self._channel: socket.socket | None = channel
        self._secret = secret

    def tell(self, *message: Any, descriptors: Sequence[int] = ()) -> None:
        """One message, with ``descriptors`` if any, never waited on: a warden that does not take it
        (stopped, say, by anyone of the runner's user) is let go, and the run goes on without one; it
        never fails the run."""
        if self._channel is None:
            return
        try:
            # sendmsg, not socket.send_fds: Python 3.11's drops its flags, and the send then waited on
            # a warden that does not take it.
            data = json.dumps([self._secret, *message]).encode()
            rights = array.array("i", descriptors)
            passed = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)] if descriptors else []
            self._channel.sendmsg([data], passed, socket.MSG_DONTWAIT)
        except OSError:
            self._channel.close()
            self._channel = None

    def close(self) -> None:
        """The runner's own end has run: the warden exits without doing anything."""
        if self._channel is None:
            return
        self.tell("done")
        if self._channel is not None:  # not let go by that very message
            self._channel.close()
            self._channel = None
        deadline = time.monotonic() + DONE_WAIT_S
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
    if not hasattr(os, "fork") or not hasattr(socket, "SOCK_SEQPACKET"):
        return None
    secret = secrets.token_hex(16)
    runner = os.getpid()  # not the child's getppid(): the runner may be gone before the child asks
    try:
        runner_end, warden_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except OSError:
        return None
    # The signals that end a run are held back across the fork: one that came before the child
    # ignores them would raise in the child, which would unwind into the runner's own code.
    held_back = signal.pthread_sigmask(signal.SIG_BLOCK, _IGNORED)
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, held_back)
        runner_end.close()
        warden_end.close()
        return None
    if pid == 0:
        try:
            _watch(warden_end.fileno(), runner_end.fileno(), secret, runner, held_back)
        finally:
            os._exit(1)
    signal.pthread_sigmask(signal.SIG_SETMASK, held_back)
    warden_end.close()
    _CURRENT = Warden(pid, runner_end, secret)
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


def adapter_ended(pid: int) -> None:
    """Sent once the runner has ended the adapter's tree: the warden lets go of it."""
    if _CURRENT is not None:
        _CURRENT.tell("ended", pid)


def fixture_root_made(path: str, kept: int) -> None:
    """The run's fixture root is made at ``path``; ``kept`` holds it (``FixtureRoot._kept``)."""
    if _CURRENT is not None:
        _CURRENT.tell("fixtures", path, descriptors=[kept])


def _message(data: bytes, secret: str) -> list[Any] | None:
    """A datagram's message, without its secret; None for one without the secret or of another shape."""
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if not isinstance(message, list) or not message or message[0] != secret:
        return None
    name, *values = message[1:] or [None]
    shape = _SHAPES.get(name) if isinstance(name, str) else None
    if shape is None or len(values) != len(shape) or not all(
            type(value) is kind for value, kind in zip(values, shape, strict=True)):
        return None
    return [name, *values]


# WARNING: these two checks, and the pidfd, are all that stands between a message and what the
# warden does with it (ending a session's every process and their descendants; removing a tree):
# a message naming init ended every process of the machine when a mutant let one through.
def _adapter_pidfd(pid: int, runner: int) -> int | None:
    """A pidfd of ``pid`` if, when the warden is told it, it is what the runner starts: its child,
    leading a session of its own (PROTO-PROC-1); None otherwise. The pidfd is opened first, so that
    the process checked is the one it holds."""
    if pid <= 1 or not hasattr(os, "pidfd_open"):
        return None
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return None
    info = process_tree.process_info(pid)
    if info is not None and info.ppid == runner and info.sid == pid and info.pgid == pid:
        return pidfd
    os.close(pidfd)
    return None


def _held(pidfd: int) -> bool:
    """Whether the process the pidfd holds is not yet collected (alive, or a zombie): its pid is its own.
    Only "no such process" says it is collected: a process of another user, which may not be
    signalled, is still there."""
    try:
        signal.pidfd_send_signal(pidfd, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _fixture_root_identity(path: str) -> tuple[int, int] | None:
    """The device and inode of ``path`` if it is what the runner makes as its fixture root
    (``FixtureRoot``): an absolute, real path of a directory, not a link, named as the roots are,
    and this user's; None otherwise."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    if (os.path.isabs(path) and os.path.realpath(path) == path and stat.S_ISDIR(info.st_mode)
            and os.path.basename(path).startswith(FIXTURE_ROOT_PREFIX) and info.st_uid == os.getuid()):
        return info.st_dev, info.st_ino
    return None


def _received(channel: socket.socket) -> tuple[bytes, int | None]:
    """The next datagram, and the descriptor sent with it if one was; any more are closed."""
    room = socket.CMSG_SPACE(_DESCRIPTORS_TAKEN * array.array("i").itemsize)
    data, ancillary, _flags, _address = channel.recvmsg(_MESSAGE_BYTES, room, socket.MSG_CMSG_CLOEXEC)
    descriptors = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            descriptors.frombytes(payload[:len(payload) - len(payload) % descriptors.itemsize])
    for extra in descriptors[1:]:
        os.close(extra)
    return data, descriptors[0] if descriptors else None


def _identity_held(descriptor: int) -> tuple[int, int] | None:
    """The device and inode of the directory ``descriptor`` holds; None if it holds no directory."""
    try:
        info = os.fstat(descriptor)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _watch(channel_fd: int, runner_fd: int, secret: str, runner: int, mask: Iterable[int]) -> NoReturn:
    """The warden's life, in the forked child: never returns, never runs the parent's exit code."""
    status = 0
    try:
        for signum in _IGNORED:
            signal.signal(signum, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        # A group of its own, in the runner's session: a KILL of the runner's group (``timeout -s
        # KILL``, a CI job's limit) leaves it to do the runner's end.
        os.setpgid(0, 0)
        os.close(runner_fd)
        if channel_fd <= 2:  # the runner started with stdio closed: out of the way of /dev/null below
            channel_fd = fcntl.fcntl(channel_fd, fcntl.F_DUPFD, 3)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, channel_fd)
        os.closerange(channel_fd + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
        channel = socket.socket(fileno=channel_fd)
        adapters: dict[int, tuple[str, int]] = {}  # by pid: its token and pidfd
        roots: dict[str, tuple[tuple[int, int], int]] = {}  # by path: its device and inode, and a descriptor
        while True:
            data, sent = _received(channel)
            message = _message(data, secret) if data else None
            if message is None:
                if sent is not None:
                    os.close(sent)
                if not data:
                    if os.getppid() != runner:
                        break  # the runner is gone: its end of the pair closed with it
                    time.sleep(_RUNNER_GONE_POLL_S)  # an empty datagram, not the runner's end
                continue
            if message[0] == "done":
                os._exit(0)
            if message[0] == "adapter" and message[1] not in adapters:
                pidfd = _adapter_pidfd(message[1], runner)
                if pidfd is not None:
                    adapters[message[1]] = (message[2], pidfd)
            elif message[0] == "ended" and message[1] in adapters:
                os.close(adapters.pop(message[1])[1])
            elif message[0] == "fixtures" and sent is not None:
                identity = _fixture_root_identity(message[1])
                if identity is not None and _identity_held(sent) == identity:
                    if message[1] in roots:  # a root made again at a name of a root removed
                        os.close(roots[message[1]][1])
                    roots[message[1]] = (identity, sent)
                    sent = None
            if sent is not None:  # sent with no message that keeps it
                os.close(sent)
        # The runner is gone without its own end: do it.
        for pid, (token, pidfd) in adapters.items():
            held = functools.partial(_held, pidfd)
            process_tree.terminate(process_tree.Tree(pid, token, root_held=held))
        for path, (identity, kept) in roots.items():
            removed_root(path, identity, kept)
    except BaseException:  # whatever happens, the child never returns to the runner's code
        status = 1
    os._exit(status)

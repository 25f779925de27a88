"""Finding and ending every process an adapter started, including those that escaped its group.

The adapter runs in a session of its own (``start_new_session``), so one
``killpg`` reaches the adapter and every child that stayed in its process
group. A hostile or careless adapter can do more: a child may move to another
group of the session (``setpgid``), start a session of its own (``setsid``),
double-fork into a daemon whose parent exits, close its stdio, or clear its
environment. What the runner does against each (spec/conformance-protocol.md,
*Processes*; conformance/WRITING-AN-ADAPTER.md, *Threat model: adapters and
the runner*):

- **subreaper**: the runner marks itself ``PR_SET_CHILD_SUBREAPER`` (Linux,
  through ``prctl``), so an orphan of the adapter's tree is re-parented to the
  runner rather than to init, and stays findable by its parent pid;
- **session**: a descendant that did not call ``setsid`` keeps the adapter's
  session id, whatever group it moved to;
- **token**: every adapter gets a fresh random ``INBOXSPEC_ADAPTER_TOKEN`` in
  its environment, inherited by what it starts unless it clears it;
- **tree**: every descendant, through parent pids, of a process found so.

A descendant that both calls ``setsid`` and clears its environment is still
either the child of a living process of the tree or, once its parent is gone,
a child of the runner in a session that is not the runner's: found. The
residual limit is a process the adapter has *another* program start (a
service manager, ``at``, a container daemon, ``ssh`` to this machine): it is
no descendant, carries no token, and this module cannot see it.

Without ``/proc`` (not Linux) only the process group is reached. A runner
killed outright runs none of this: the parent-death signal takes the adapter's
own process (``killed_with_this_thread``), and the run's warden
(``conformance/warden.py``) ends the rest of the tree by these same rules.

Two other designs were weighed. A cgroup v2 per adapter (``cgroup.kill``)
would also stop a fork bomb outright, but needs root *and* a writable,
delegated cgroup hierarchy, which containers and CI runners often do not
give; the runner would still need this module where it is missing, and the
tests could prove the cgroup path only on some machines. A token alone misses
whatever clears its environment. The subreaper with the session and the token
works unprivileged and is proven by ``tests/test_conform_process.py`` against
every kind of ``tests/adapters/leftover.py``; what it leaves is the residual
limit above, and a fork bomb that outruns the KILL loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

TOKEN_VARIABLE = "INBOXSPEC_ADAPTER_TOKEN"
# WARNING: spec/conformance-protocol.md (PROTO-PROC-2) states this grace; change both together.
KILL_GRACE_S = 1.0
_POLL_S = 0.01
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PROC = Path("/proc")


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` for this process (Linux); False where the system has no such call or
    refuses it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Adopt the orphans of every descendant (Linux); False where the system has no such thing."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def killed_with_this_thread() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel KILL the child when the thread starting it ends (Linux's
    parent-death signal), for a runner killed outright, which runs no code to end anything
    (PROTO-PROC-4); None where there is no such signal, or off the main thread.

    Linux sends the signal when the *thread* that forked the child ends, not the process: only
    the main thread's end is the process's, so a child started from another thread gets none.
    The call is looked up before the fork, so the child only makes it. A runner that died between
    the fork and the call has left the child to another parent already: it ends itself.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    runner = os.getpid()

    def in_the_child() -> None:
        if call(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0 and os.getppid() != runner:
            os.kill(os.getpid(), signal.SIGKILL)

    return in_the_child


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    # When it started, in clock ticks since boot (``/proc/PID/stat``'s field 22): with the pid, which
    # process this is; a process given the pid later started later.
    started: int = 0


def process_info(pid: int) -> ProcessInfo | None:
    """One process as ``/proc/PID/stat`` gives it; None once it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()  # from field 3, the state, on
    try:
        return ProcessInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(),
                           int(fields[19]))
    except (IndexError, ValueError):
        return None


def all_processes() -> dict[int, ProcessInfo]:
    found: dict[int, ProcessInfo] = {}
    try:
        names = os.listdir(PROC)
    except OSError:
        return found
    for name in names:
        if name.isdigit():
            info = process_info(int(name))
            if info is not None:
                found[info.pid] = info
    return found


def has_token(pid: int, variable: str, token: str) -> bool:
    try:
        environment = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return f"{variable}={token}".encode() in environment.split(b"\0")


@dataclass
class Tree:
    """What identifies one adapter's processes: its pid (= group and session id) and token."""

    root: int
    token: str
    # Live adapters the runner still needs (a restarted adapter): never collected as orphans.
    spare: frozenset[int] = frozenset()
    # Whether the root's pid is still the root's own (alive, or a zombie not yet collected), asked at
    # every look; None: always. The runner asks whether it has collected the adapter's status; the
    # run's warden, whose runner is gone, asks the root's pidfd (see ``members``).
    root_held: Callable[[], bool] | None = None

    def group(self) -> int | None:
        """The group to signal as a whole: the root's, unless its pid may be another's now."""
        return self.root if self.root_held is None or self.root_held() else None

    def members(self) -> set[int]:
        """The pids of ``found``."""
        return set(self.found())

    def found(self) -> dict[int, ProcessInfo]:
        """Every live (not zombie) process of the tree, by the four rules of the module docstring.

        Once the root is collected (``root_held``), its pid may be given to an unrelated process.
        While any process of the root's session or group lives, the kernel gives the pid to no
        other, so a process with that session or group is the tree's, the pid's own process aside;
        once a process has the pid, none is (the session is gone), and only the token and descent
        find the tree."""
        table = all_processes()
        runner = os.getpid()
        runner_sid = os.getsid(0)
        root_exited = self.group() is None
        by_session = not root_exited or self.root not in table
        found = {
            info.pid for info in table.values()
            if info.pid != runner and info.pid not in self.spare and (
                (by_session and info.pid != self.root and (info.sid == self.root or info.pgid == self.root))
                or (info.ppid == runner and info.sid != runner_sid)
                or has_token(info.pid, TOKEN_VARIABLE, self.token))
        }
        if self.root in table and not root_exited:
            found.add(self.root)
        children: dict[int, list[int]] = {}
        for info in table.values():
            children.setdefault(info.ppid, []).append(info.pid)
        frontier = list(found)
        while frontier:
            for child in children.get(frontier.pop(), ()):
                if child not in found and child != runner and child not in self.spare:
                    found.add(child)
                    frontier.append(child)
        return {pid: table[pid] for pid in found if table[pid].state != "Z"}


def _signal_all(members: Mapping[int, ProcessInfo], group: int | None, signum: int) -> None:
    if group is not None:
        with contextlib.suppress(OSError):
            os.killpg(group, signum)
    for info in members.values():
        signal_process(info, signum)


def signal_process(info: ProcessInfo, signum: int) -> None:
    """Send ``signum`` to the process a scan found, not to another given its pid since (the scan of
    every process takes milliseconds, and the runner often runs as root).

    Where pidfds exist (Linux 5.3 on), the signal goes through a pidfd opened on the pid and then
    checked to hold the process found: the process that has the pid once the pidfd is open started
    when the one found did (``ProcessInfo.started``), so a process given the pid after the scan is
    left alone; and a pidfd never reaches another process than its own. Elsewhere the signal goes
    by pid, as ``kill`` sends it. A process gone is no error."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        with contextlib.suppress(OSError):
            os.kill(info.pid, signum)
        return
    try:
        pidfd = pidfd_open(info.pid)
    except OSError as error:
        if error.errno != errno.ESRCH:  # not gone: a kernel without pidfds
            with contextlib.suppress(OSError):
                os.kill(info.pid, signum)
        return
    try:
        now = process_info(info.pid)
        if now is not None and now.started == info.started:
            signal.pidfd_send_signal(pidfd, signum)
    except OSError:
        pass
    finally:
        os.close(pidfd)


def reap_adopted(keep: Iterable[int]) -> None:
    """Collect the exit status of orphans re-parented to the runner, never blocking.

    Only zombies whose parent is the runner, in a session other than the
    runner's, are collected, except ``keep``: the adapters whose status their
    ``subprocess.Popen`` still reads.
    """
    runner, runner_sid, kept = os.getpid(), os.getsid(0), set(keep)
    for info in all_processes().values():
        if info.ppid == runner and info.state == "Z" and info.sid != runner_sid and info.pid not in kept:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(info.pid, os.WNOHANG)


def terminate(tree: Tree, grace: float = KILL_GRACE_S) -> list[int]:
    """TERM every process of the tree, KILL what is left after ``grace`` seconds.

    Returns the pids that were still alive when KILL was sent (for tests and
    messages). Never waits on a pipe; waits at most ``grace`` plus a moment
    for the KILLed processes to go.
    """
    if not PROC.is_dir():
        return _terminate_group(tree, grace)
    keep = {tree.root, *tree.spare}
    members = tree.found()
    _signal_all(members, tree.group(), signal.SIGTERM)
    deadline = time.monotonic() + grace
    while members and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        reap_adopted(keep)
        members = tree.found()  # rescanned: a TERMed parent may have left adopted orphans
    stubborn = sorted(members)
    # KILL until nothing of the tree is left: a process may fork between two scans.
    settle = time.monotonic() + grace
    while members and time.monotonic() < settle:
        _signal_all(members, tree.group(), signal.SIGKILL)
        time.sleep(_POLL_S)
        reap_adopted(keep)
        members = tree.found()
    reap_adopted(keep)
    return stubborn


def _terminate_group(tree: Tree, grace: float) -> list[int]:
    """Without ``/proc``: TERM and then KILL the adapter's process group, and nothing else. Once the
    root is collected (``Tree.root_held``), a process with its pid is another's, and so is the group
    it may lead: then nothing is signalled. With no such process, a group of that id is what the
    adapter left."""
    group = tree.root
    if tree.group() is None:
        try:
            os.kill(group, 0)
            return []  # a process has the pid
        except ProcessLookupError:
            pass  # none has: a group of that id is the adapter's
        except OSError:
            return []  # a process has the pid, one this runner may not signal
    _signal_all({}, group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except OSError:
            return []
        time.sleep(_POLL_S)
    _signal_all({}, group, signal.SIGKILL)
    return [group]

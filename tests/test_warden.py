"""The run's warden (conformance/warden.py, PROTO-PROC-5), driven directly: a stand-in runner starts
a warden, tells it what a runner tells, sends what an adapter holding the runner's socket could,
and is KILLed (or ends as a runner does); what the warden then ends and removes is looked up.
``tests/test_conform_process.py`` KILLs a real runner.

WARNING: no message here may name a process outside this test's own (init, say): under a mutant
that lets one through, the warden ends that process's whole session and its descendants.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inboxspec.conformance import process_tree, warden

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the warden reads /proc and holds pidfds")

# The stand-in runner: argv[1] is what it does at the end ("kill": waits for the test's KILL;
# "done": ends as a runner does), argv[2] the victim's pid (a process that is not its child),
# argv[3:] the fixture paths it tells, each with a descriptor of itself (or, written "path|other", of
# the other). It prints the pids, then waits.
STAND_IN = """
import fcntl, json, os, struct, subprocess, sys, termios, time
from inboxspec.conformance import warden
from inboxspec.conformance.process_tree import process_info
watching = warden.start()
adapter = subprocess.Popen(["sleep", "60"], start_new_session=True)  # as the runner starts one
ended = subprocess.Popen(["sleep", "60"], start_new_session=True)
in_my_session = subprocess.Popen(["sleep", "60"])
victim, paths = int(sys.argv[2]), sys.argv[3:]
channel, secret = watching._channel, watching._secret
# What the runner does not send: no secret, not JSON, an empty datagram, someone else's process.
for junk in (json.dumps(["adapter", adapter.pid, "t"]), "x", "", json.dumps([secret, "adapter", victim, "t"]),
             json.dumps([secret, "adapter", in_my_session.pid, "t"])):
    channel.send(junk.encode())
warden.adapter_started(adapter.pid, "token")
warden.adapter_started(ended.pid, "token")
warden.adapter_ended(ended.pid)
for told in paths:  # a path, or "path|other": the path told with a descriptor of the other
    path, _, held = told.partition("|")
    warden.fixture_root_made(path, os.open(held or path, os.O_RDONLY | os.O_DIRECTORY))
# Until the warden has read every message (the bytes it has not read yet: SIOCOUTQ) and waits for more.
while struct.unpack("i", fcntl.ioctl(channel.fileno(), termios.TIOCOUTQ, bytes(4)))[0] or process_info(
        watching.pid).state != "S":
    time.sleep(0.001)
print(json.dumps({"warden": watching.pid, "adapter": adapter.pid, "ended": ended.pid,
                  "in_my_session": in_my_session.pid}), flush=True)
if sys.argv[1] == "done":
    sys.stdin.readline()
    warden.stop(watching)
    print("stopped", flush=True)
time.sleep(60)
"""

VICTIM_PARENT = ("import subprocess, time; "
                 "child = subprocess.Popen(['sleep', '60'], start_new_session=True); "
                 "print(child.pid, flush=True); time.sleep(60)")


class Held:
    """A process named by a pidfd, opened while the pid was known to be that process's: once the
    process is collected, its pid may be another's, and nothing here signals or reads that one."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._pidfd = os.pidfd_open(pid)

    def _there(self) -> bool:
        try:
            signal.pidfd_send_signal(self._pidfd, 0)
        except ProcessLookupError:
            return False
        return True

    def alive(self) -> bool:
        """Neither collected nor a zombie."""
        if not self._there():
            return False
        info = process_tree.process_info(self.pid)
        return self._there() and info is not None and info.state != "Z"

    def gone_within(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.alive()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        os.close(self._pidfd)


def _fixture_root(base: Path, name: str) -> Path:
    root = base / name
    (root / "f1").mkdir(parents=True)
    (root / "f1" / "file").write_text("x")
    return root


@pytest.fixture
def victim() -> Iterator[Held]:
    """A process in a session of its own whose parent is not the stand-in runner."""
    parent = subprocess.Popen([sys.executable, "-c", VICTIM_PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    held = Held(int(parent.stdout.readline()))  # its parent alive and waiting: the pid is its own
    try:
        yield held
    finally:
        held.kill()
        parent.kill()
        parent.wait()


class StandIn:
    def __init__(self, ending: str, victim: Held, paths: list[Path]) -> None:
        argv = [sys.executable, "-c", STAND_IN, ending, str(victim.pid), *map(str, paths)]
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        # Its children, alive and not collected (it collects none before the test says): their own pids.
        self.held = {name: Held(pid) for name, pid in json.loads(self.process.stdout.readline()).items()}

    def end(self) -> None:
        for held in self.held.values():
            held.kill()
        self.process.kill()
        self.process.wait()


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    base = Path(os.path.realpath(tmp_path))
    told = _fixture_root(base, "inboxspec-fixture-told")
    forged = _fixture_root(base, "inboxspec-fixture-forged")
    link = base / "inboxspec-fixture-link"
    link.symlink_to(forged)
    other = _fixture_root(base, "elsewhere")
    return {"told": told, "forged": forged, "link": link, "other": other, "inside": forged / "f1"}


def test_a_runner_killed_outright_has_its_end_done_by_its_warden_and_nothing_else(
        victim: Held, roots: dict[str, Path]) -> None:
    stand_in = StandIn("kill", victim, [roots[name] for name in ("told", "link", "other", "inside")])
    try:
        held = stand_in.held
        time.sleep(0.3)  # the empty datagram: were it taken for the runner's end, the adapter would go now
        assert held["adapter"].alive() and held["warden"].alive()
        stand_in.process.kill()
        stand_in.process.wait()
        assert held["warden"].gone_within(20), "the warden did not exit"
        assert not held["adapter"].alive(), "the adapter the runner started"
        assert held["ended"].alive(), "an adapter the runner said it had ended is not the warden's"
        assert held["in_my_session"].alive() and victim.alive(), "processes that are no adapter"
        assert not roots["told"].exists()
        for name in ("forged", "other"):
            assert (roots[name] / "f1" / "file").read_text() == "x", name
    finally:
        stand_in.end()


def test_a_runner_whose_end_has_run_leaves_its_warden_nothing_to_do(victim: Held,
                                                                     roots: dict[str, Path]) -> None:
    stand_in = StandIn("done", victim, [roots["told"]])
    try:
        assert stand_in.process.stdin is not None and stand_in.process.stdout is not None
        stand_in.process.stdin.write("\n")
        stand_in.process.stdin.flush()
        assert stand_in.process.stdout.readline() == "stopped\n"
        assert not stand_in.held["warden"].alive(), "stop waits for the warden to exit"
        stand_in.process.kill()
        stand_in.process.wait()
        time.sleep(0.2)
        assert stand_in.held["adapter"].alive()
        assert (roots["told"] / "f1" / "file").read_text() == "x"
    finally:
        stand_in.end()


def test_a_root_moved_after_it_was_told_is_removed_where_it_is_and_one_put_at_its_name_is_not(
        victim: Held, roots: dict[str, Path]) -> None:
    """PROTO-PROC-5: the warden removes the root as the runner's own end does, through the descriptor
    the runner passed along, wherever the adapter moved it; it removed a root at its name only, and
    a root renamed by the adapter stayed on disk with every fixture in it."""
    stand_in = StandIn("kill", victim, [roots["told"]])
    try:
        moved = roots["told"].parent / "moved"
        roots["told"].rename(moved)
        replacement = _fixture_root(roots["told"].parent, roots["told"].name)
        stand_in.process.kill()
        stand_in.process.wait()
        assert stand_in.held["warden"].gone_within(20)
        assert (replacement / "f1" / "file").read_text() == "x"
        assert not moved.exists()
    finally:
        stand_in.end()


def test_a_root_told_with_a_descriptor_of_another_directory_is_not_believed(
        victim: Held, roots: dict[str, Path]) -> None:
    """The descriptor must hold the directory at the path told: neither is removed otherwise."""
    stand_in = StandIn("kill", victim, [Path(f"{roots['told']}|{roots['other']}")])
    try:
        stand_in.process.kill()
        stand_in.process.wait()
        assert stand_in.held["warden"].gone_within(20)
        for name in ("told", "other"):
            assert (roots[name] / "f1" / "file").read_text() == "x", name
    finally:
        stand_in.end()


@pytest.mark.parametrize("data", [
    b'["s", "done"]', b'["s", "adapter", 12, "token"]', b'["s", "ended", 12]',
    b'["s", "fixtures", "/tmp/x"]'])
def test_each_message_of_the_runner_is_read(data: bytes) -> None:
    assert warden._message(data, "s") == json.loads(data)[1:]


@pytest.mark.parametrize("data", [
    b'["t", "done"]', b'["done"]', b'["s"]', b'["s", "done", 1]', b'["s", "adapter", "12", "token"]',
    b'["s", "adapter", 12.0, "token"]', b'["s", "adapter", false, "token"]', b'["s", "fixtures", null]',
    b'["s", "ended", true]', b'["s", "kill", 1]', b'["s", ["done"]]', b'{"s": "done"}', b'"s"', b'\xff', b''])
def test_a_message_without_the_secret_or_of_another_shape_is_ignored(data: bytes) -> None:
    assert warden._message(data, "s") is None


def _refused(pidfd: int, signum: int) -> None:
    raise PermissionError(1, "Operation not permitted")


def test_only_a_child_of_the_runner_leading_its_own_session_is_an_adapter(
        victim: Held, monkeypatch: pytest.MonkeyPatch) -> None:
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    same_session = subprocess.Popen(["sleep", "60"])
    held = []
    try:
        pidfd = warden._adapter_pidfd(child.pid, os.getpid())
        assert pidfd is not None
        held.append(pidfd)
        assert warden._held(pidfd)
        for pid, runner in ((child.pid, os.getppid()), (same_session.pid, os.getpid()),
                            (victim.pid, os.getpid()), (1, 0), (0, 0), (-1, os.getpid())):
            assert warden._adapter_pidfd(pid, runner) is None, (pid, runner)
        child.kill()
        child.wait()
        assert not warden._held(pidfd), "collected: its pid is free for another process"
        # Not ours to signal (another user's, to a runner that is not root): still there.
        with monkeypatch.context() as patched:
            patched.setattr(signal, "pidfd_send_signal", _refused)
            assert warden._held(pidfd)
    finally:
        for process in (child, same_session):
            process.kill()
            process.wait()
        for fd in held:
            os.close(fd)


def test_only_a_real_directory_named_as_a_root_is_a_fixture_root(roots: dict[str, Path]) -> None:
    told = roots["told"]
    assert warden._fixture_root_identity(str(told)) == (told.stat().st_dev, told.stat().st_ino)
    for path in (str(roots["link"]), str(roots["other"]), str(roots["inside"]), str(told / "f1" / "file"),
                 os.path.relpath(told), str(told) + "/", str(told / ".." / told.name),
                 str(told.parent / "inboxspec-fixture-none"), "\0"):
        assert warden._fixture_root_identity(path) is None, path


def test_a_tree_whose_root_was_collected_elsewhere_is_found_by_its_token_once_its_pid_is_another_s(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``Tree.root_held``: a root collected by another parent (the runner gone) may have its pid given
    to an unrelated session leader, whose session then has the root's id; a table made up here."""
    from inboxspec.conformance.process_tree import ProcessInfo, Tree

    def table(*infos: ProcessInfo) -> None:
        monkeypatch.setattr(process_tree, "all_processes", lambda: {info.pid: info for info in infos})

    monkeypatch.setattr(process_tree, "has_token", lambda pid, variable, token: pid == 2000)
    nobody = 4_194_305  # above any pid (2**22): the fake table's parents are never this test's process
    reused = ProcessInfo(pid=1000, ppid=nobody, pgid=1000, sid=1000, state="S")  # the root's pid, given again
    its_child = ProcessInfo(pid=1001, ppid=1000, pgid=1000, sid=1000, state="S")
    with_token = ProcessInfo(pid=2000, ppid=nobody, pgid=2000, sid=2000, state="S")
    below_it = ProcessInfo(pid=2001, ppid=2000, pgid=2000, sid=2000, state="S")
    table(reused, its_child, with_token, below_it)
    assert Tree(1000, "token", root_held=lambda: True).members() == {1000, 1001, 2000, 2001}
    collected = Tree(1000, "token", root_held=lambda: False)
    assert collected.members() == {2000, 2001}
    assert collected.group() is None and Tree(1000, "token").group() == 1000
    # No process has the pid: the session's members are the tree's (the kernel gives the pid to none
    # while they live).
    left_in_session = ProcessInfo(pid=1001, ppid=nobody, pgid=1000, sid=1000, state="S")
    table(left_in_session, with_token, below_it)
    assert collected.members() == {1001, 2000, 2001}


@functools.cache
def _pid_namespaces() -> bool:
    """Whether this process may make a pid namespace of its own, with its own /proc."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True,
                           timeout=60)
    return probe.returncode == 0


# Run as pid 1 of a pid namespace of its own: a stand-in runner starts a warden and an adapter that
# exits at once (a zombie its runner has not collected); the warden stopped, the runner is KILLed,
# the adapter collected here, and its pid given to an unrelated session leader (``ns_last_pid``);
# then the warden goes on.
REUSED_PID = """
import json, os, signal, subprocess, sys, time
from pathlib import Path
from inboxspec.conformance.process_tree import process_info
runner = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, text=True)
pids = json.loads(runner.stdout.readline())
adapter, watcher = pids["adapter"], pids["warden"]
while process_info(adapter).state != "Z":
    time.sleep(0.01)
os.kill(watcher, signal.SIGSTOP)
runner.kill()
runner.wait()
while True:  # the adapter, now ours to collect
    try:
        os.waitpid(adapter, 0)
        break
    except ChildProcessError:
        time.sleep(0.01)
Path("/proc/sys/kernel/ns_last_pid").write_text(str(adapter - 1))
unrelated = subprocess.Popen(["sleep", "60"], start_new_session=True)
os.kill(watcher, signal.SIGCONT)
os.waitpid(watcher, 0)
print(json.dumps({"reused": unrelated.pid == adapter, "unrelated_alive": unrelated.poll() is None}))
unrelated.kill()
"""

REUSED_PID_RUNNER = """
import json, os, subprocess, time
from inboxspec.conformance import warden
watching = warden.start()
adapter = subprocess.Popen(["true"], start_new_session=True)
warden.adapter_started(adapter.pid, "token")


def holds_its_pidfd():  # the warden believed the adapter: it holds a pidfd of it
    for fd in os.listdir(f"/proc/{watching.pid}/fdinfo"):
        try:
            with open(f"/proc/{watching.pid}/fdinfo/{fd}") as info:
                if f"Pid:\\t{adapter.pid}\\n" in info.read():
                    return True
        except OSError:
            pass
    return False


while not holds_its_pidfd():
    time.sleep(0.001)
print(json.dumps({"warden": watching.pid, "adapter": adapter.pid}), flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not _pid_namespaces(), reason="no pid namespace of its own here (root, unshare and "
                                                    "the right to make one: a container may refuse it)")
def test_the_pid_of_an_adapter_collected_elsewhere_given_to_another_process_is_not_ended() -> None:
    """The helper's finding against ``Tree`` without ``root_held``: the warden ended the unrelated
    process that had the collected adapter's pid, its session with it."""
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", REUSED_PID,
                           REUSED_PID_RUNNER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"reused": True, "unrelated_alive": True}


# Pid 1 of a pid namespace of its own: the runner's own end of an adapter whose status it collected
# already (``stop`` does, and a crash noticed), its pid given to an unrelated session leader since.
COLLECTED_BY_THE_RUNNER = """
import json, os, signal, subprocess, sys
from pathlib import Path
from inboxspec.conformance.adapter_process import AdapterProcess
from inboxspec.conformance.process_tree import process_info
Path("/proc/sys/kernel/ns_last_pid").write_text("99")  # pids below it free, for the parent below
adapter = AdapterProcess("true", 1 << 20)
pid = adapter._process.pid
adapter._process.wait()
# Its parent takes the pid before it, so that the pid's new process is no child of this runner.
Path("/proc/sys/kernel/ns_last_pid").write_text(str(pid - 2))
parent = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, text=True)
unrelated = int(parent.stdout.readline())
adapter.kill(grace=0.2)
info = process_info(unrelated)
alive = info is not None and info.state not in "ZX"
print(json.dumps({"reused": unrelated == pid, "unrelated_alive": alive}))
parent.kill()
os.kill(unrelated, signal.SIGKILL)
"""


@pytest.mark.skipif(not _pid_namespaces(), reason="no pid namespace of its own here (root, unshare and "
                                                    "the right to make one: a container may refuse it)")
def test_the_runner_does_not_end_a_process_given_the_pid_of_an_adapter_it_collected() -> None:
    """The second review's finding: ``AdapterProcess.kill`` after ``stop`` collected the adapter
    ended whatever process had its pid since; it asks ``Tree.root_held`` whether it collected it."""
    argv = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", COLLECTED_BY_THE_RUNNER,
            VICTIM_PARENT]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"reused": True, "unrelated_alive": True}


def test_a_warden_that_does_not_take_its_messages_is_let_go_without_waiting() -> None:
    """Stopped (anyone of the runner's user can stop it), it takes no message: the runner never
    waits on it, and lets it go at the first it does not take."""
    watching = warden.start()
    assert watching is not None
    os.kill(watching.pid, signal.SIGSTOP)  # our child, not collected: the pid is its own
    try:
        began = time.monotonic()
        told = 0
        while watching._channel is not None and told < 100_000:
            watching.tell("fixtures", "/nowhere/inboxspec-fixture-" + "x" * 200)
            told += 1
        assert watching._channel is None, "the queue never filled"
        assert time.monotonic() - began < 5, "a send waited on the warden"
        warden.stop(watching)  # nothing to tell: returns at once
    finally:
        os.kill(watching.pid, signal.SIGKILL)
        os.waitpid(watching.pid, 0)


def test_where_no_warden_can_be_forked_runs_go_on_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process limit (``ulimit -u``) refuses the fork: no warden, no descriptor left open, and the
    runner's messages go nowhere."""
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", refused)
    assert warden.start() is None
    assert set(os.listdir("/proc/self/fd")) == before
    warden.adapter_started(os.getpid(), "token")  # told to no warden: nothing happens, nothing raised
    warden.stop(None)


class _Full:
    """A channel that takes no more messages (a stopped warden's, full): what ``sendmsg`` raises then."""

    def __init__(self) -> None:
        self.closed = 0

    def sendmsg(self, buffers: list[bytes], ancillary: list[object], flags: int) -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    def close(self) -> None:
        self.closed += 1


def test_a_warden_that_does_not_take_done_is_let_go_at_the_end_too() -> None:
    watching = warden.start()
    assert watching is not None
    real, full = watching._channel, _Full()
    assert real is not None
    watching._channel = full  # type: ignore[assignment]
    try:
        warden.stop(watching)  # "done" not taken: let go, without an error
        assert watching._channel is None and full.closed == 1
    finally:
        real.close()  # the warden sees its runner's end of the pair close; its runner still lives
        os.kill(watching.pid, signal.SIGKILL)  # our child, not collected: the pid is its own
        os.waitpid(watching.pid, 0)


# A runner started with its stdio closed (a cron job, say): the socket pair may take fds 0 to 2.
STDIO_CLOSED = """
import json, os, sys, time
out = int(sys.argv[1])
for fd in (0, 1, 2):
    os.close(fd)
from inboxspec.conformance import warden
from inboxspec.conformance.process_tree import process_info
watching = warden.start()
channel = watching._channel.fileno()
time.sleep(0.3)
state = process_info(watching.pid).state
os.write(out, json.dumps({"channel": channel, "state": state}).encode())
warden.stop(watching)
"""


def test_a_runner_started_with_its_stdio_closed_has_a_warden_all_the_same() -> None:
    read, write = os.pipe()
    try:
        runner = subprocess.run([sys.executable, "-c", STDIO_CLOSED, str(write)], pass_fds=(write,),
                                timeout=60)
        os.close(write)
        write = -1
        assert runner.returncode == 0
        with os.fdopen(read, "rb") as reported:
            read = -1
            seen = json.loads(reported.read())
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
    assert seen["channel"] <= 2, "the case this test is for: the pair took a standard descriptor"
    assert seen["state"] == "S", "the warden waits for messages (it had exited, its socket overwritten)"


def test_the_signals_that_end_a_run_are_held_back_only_across_the_fork() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    watching = warden.start()
    assert watching is not None
    try:
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    finally:
        warden.stop(watching)


def test_without_proc_a_collected_roots_pid_that_another_process_has_is_not_signalled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``_terminate_group``, the ending of a tree where there is no ``/proc``, asks ``root_held`` too:
    a process leading a group of its own stands for the one the collected root's pid was given to."""
    monkeypatch.setattr(process_tree, "PROC", Path("/nonexistent-proc"))
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert process_tree.terminate(process_tree.Tree(other.pid, "t", root_held=lambda: False), 0.1) == []
        assert other.poll() is None, "signalled: another process's group"
        process_tree.terminate(process_tree.Tree(other.pid, "t", root_held=lambda: True), 0.1)
        assert other.wait(timeout=10) == -signal.SIGTERM, "held: the adapter's own group, ended"
    finally:
        other.kill()
        other.wait()

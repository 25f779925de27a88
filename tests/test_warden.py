"""The run's warden (conformance/warden.py, PROTO-PROC-5), driven directly: what it does when the
pipe from its runner ends with and without ``done``, and what it makes of lines that someone else
wrote into that pipe. ``tests/test_conform_process.py`` KILLs a real runner.

WARNING: a forged message must never name a process outside this test's own (init, say): under a
mutant that lets one through, the warden ends that process's whole session and its descendants.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inboxspec.conformance import warden

# A process whose parent is not this one, in a session of its own: named by a forged "adapter"
# message, which the warden must not believe (it prints its child's pid, then waits).
VICTIM_PARENT = ("import subprocess, time; "
                 "child = subprocess.Popen(['sleep', '60'], start_new_session=True); "
                 "print(child.pid, flush=True); time.sleep(60)")


def _ended(watching: warden.Warden) -> None:
    deadline = time.monotonic() + 30
    while os.waitpid(watching.pid, os.WNOHANG)[0] == 0:
        assert time.monotonic() < deadline, "the warden did not exit"
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def _roots(tmp_path: Path) -> tuple[Path, Path]:
    base = Path(os.path.realpath(tmp_path))
    told, forged = base / "inboxspec-fixture-told", base / "inboxspec-fixture-forged"
    for root in (told, forged):
        (root / "f1").mkdir(parents=True)
        (root / "f1" / "file").write_text("x")
    return told, forged


@pytest.fixture
def watching() -> Iterator[warden.Warden]:
    started = warden.start()
    assert started is not None
    try:
        yield started
    finally:
        warden.stop(started)


@pytest.fixture
def victim() -> Iterator[int]:
    parent = subprocess.Popen([sys.executable, "-c", VICTIM_PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait()


@pytest.mark.skipif(sys.platform != "linux", reason="the warden reads /proc")
def test_a_runner_gone_without_its_end_has_its_end_done_and_nothing_else(
        watching: warden.Warden, victim: int, tmp_path: Path) -> None:
    told, forged = _roots(tmp_path)
    adapter = subprocess.Popen(["sleep", "60"], start_new_session=True)  # as the runner starts one
    pipe = watching._pipe
    assert pipe is not None
    secret = watching._secret
    # Lines the runner did not write: no secret, a wrong secret, not JSON, a root that is a link, an
    # "adapter" that is no child of the runner, an unended line.
    link = told.parent / "inboxspec-fixture-link"
    link.symlink_to(forged)
    for line in (json.dumps(["fixtures", str(forged)]), json.dumps(["0" * 32, "fixtures", str(forged)]),
                 "not json", json.dumps([secret, "fixtures", str(link)]),
                 json.dumps([secret, "fixtures", str(forged / "f1")]),
                 json.dumps([secret, "adapter", victim, "token"])):
        os.write(pipe, line.encode() + b"\n")
    watching.tell("fixtures", str(told))
    watching.tell("adapter", adapter.pid, "token")
    os.write(pipe, json.dumps([secret, "fixtures", str(forged)]).encode())  # never ended by a newline
    os.close(pipe)  # as the kernel closes it when the runner is KILLed: no "done"
    watching._pipe = None
    _ended(watching)
    assert adapter.wait(timeout=10) == -signal.SIGTERM
    assert not told.exists()
    assert (forged / "f1" / "file").read_text() == "x"
    assert _alive(victim)


def test_a_runner_whose_end_has_run_leaves_its_warden_nothing_to_do(watching: warden.Warden,
                                                                     tmp_path: Path) -> None:
    told, _ = _roots(tmp_path)
    watching.tell("fixtures", str(told))
    warden.stop(watching)
    assert watching._pipe is None
    with pytest.raises(ChildProcessError):  # exited, and its status collected by stop
        os.waitpid(watching.pid, os.WNOHANG)
    assert (told / "f1" / "file").read_text() == "x"


@pytest.mark.parametrize("line", [
    b'["s", "done"]', b'["s", "adapter", 12, "token"]', b'["s", "fixtures", "/tmp/x"]'])
def test_each_message_of_the_runner_is_read(line: bytes) -> None:
    assert warden._message(line, "s") == json.loads(line)[1:]


@pytest.mark.parametrize("line", [
    b'["t", "done"]', b'["done"]', b'["s"]', b'["s", "done", 1]', b'["s", "adapter", "12", "token"]',
    b'["s", "adapter", 12.0, "token"]', b'["s", "adapter", false, "token"]', b'["s", "fixtures", null]',
    b'["s", "kill", 1]', b'["s", ["done"]]', b'{"s": "done"}', b'"s"', b'\xff', b''])
def test_a_line_without_the_secret_or_of_another_shape_is_ignored(line: bytes) -> None:
    assert warden._message(line, "s") is None


@pytest.mark.skipif(sys.platform != "linux", reason="the warden reads /proc")
def test_only_a_child_of_the_runner_leading_its_own_session_is_an_adapter(victim: int) -> None:
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    same_session = subprocess.Popen(["sleep", "60"])
    try:
        assert warden._is_adapter(child.pid, os.getpid())
        assert not warden._is_adapter(child.pid, os.getppid())  # another runner's
        assert not warden._is_adapter(same_session.pid, os.getpid())  # no session of its own
        assert not warden._is_adapter(victim, os.getpid())  # not a child of this process
        assert not warden._is_adapter(1, 0) and not warden._is_adapter(0, 0)
    finally:
        for process in (child, same_session):
            process.kill()
            process.wait()


def test_only_a_real_directory_named_as_a_root_is_a_fixture_root(tmp_path: Path) -> None:
    told, _ = _roots(tmp_path)
    assert warden._is_fixture_root(str(told))
    link = told.parent / "inboxspec-fixture-link"
    link.symlink_to(told)
    other = told.parent / "elsewhere"
    other.mkdir()
    for path in (str(link), str(other), str(told / "f1"), str(told / "f1" / "file"), os.path.relpath(told),
                 str(told) + "/", str(told / ".." / told.name), str(told.parent / "inboxspec-fixture-none"),
                 "\0"):
        assert not warden._is_fixture_root(path), path

"""The real worker runner with real processes: each fault, then proof that no process is left.

Every test starts workers in their own process group, shortens the runner's
deadlines through its options, and ends (pass or fail) with a fixture that
kills each group and asserts through ``/proc`` that none of its processes is
left. ``RUNNER-*`` IDs point into spec/inbox-refresh-runner.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import inboxspec.impl.inbox_refresh_runner as runner_module
from inboxspec.impl.inbox_refresh import (
    WORKER_CHANGED,
    CleanupUnresolved,
    DeadlineExceeded,
    InboxRefreshCache,
    JobResult,
    RuntimeFailure,
    SourcesChanged,
    WorkerUnavailable,
)
from inboxspec.impl.inbox_refresh_runner import ProcessJob, ProcessRunner, group_liveness, process_signature
from inboxspec.impl.inbox_refresh_source import DirectorySource

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

FAULTY = str(Path(__file__).with_name("refresh_workers") / "faulty_worker.py")
Groups = list[int | ProcessRunner]
# Short enough to keep the suite fast; the other tests keep 5 s, so a loaded
# machine starting Python slowly cannot turn their worker into a deadline.
DEADLINE_MS = 600


def make(base: Path, groups: Groups, *, argv: list[str] | None = None, files: list[Path] | None = None,
         work_ms: int = 5000) -> ProcessRunner:
    """A runner with deadlines shortened for tests, whose jobs the ``groups`` fixture cleans up."""
    runner = ProcessRunner(base, argv=argv, files=files, work_ms=work_ms, reap_ms=300, kill_grace_ms=100)
    groups.append(runner)
    return runner


def wait_gone(group: int, seconds: float = 2.0) -> bool:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if group_liveness(group) == "gone":
            return True
        time.sleep(0.02)
    return group_liveness(group) == "gone"


@pytest.fixture
def groups() -> Iterator[Groups]:
    """Process groups (or runners, for all their jobs) a test started; none survives the test."""
    started: Groups = []
    yield started
    pids = {p for entry in started
            for p in ([entry] if isinstance(entry, int) else [job.pid for job in entry.jobs])}
    for group in sorted(pids):
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    leftover = [g for g in sorted(pids) if not wait_gone(g)]
    assert not leftover, f"processes of groups {leftover} are still alive"


@pytest.fixture
def base(tmp_path: Path) -> Path:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "policy.json").write_text(json.dumps({"revision": 3, "deny": ["secret"]}))
    for n in range(3):
        record = {"id": f"c{n}", "title": f"candidate {n}", "detail": "d", "at": "2026-01-01T00:00:00.000Z"}
        (tmp_path / "inbox" / f"c{n}.json").write_text(json.dumps(record))
    return tmp_path


def faulty(base: Path, mode: str, groups: Groups, work_ms: int = 5000) -> ProcessRunner:
    return make(base, groups, argv=[sys.executable, FAULTY, mode], work_ms=work_ms)


def run_one(runner: ProcessRunner, groups: Groups) -> tuple[ProcessJob, object]:
    job = runner.launch(None)
    groups.append(job.pid)
    return job, job.outcome(timeout=5)


def through_cache(runner: ProcessRunner, base: Path, groups: Groups) -> tuple[str, dict[str, Any], list[str]]:
    """One job through the cache: how it settled, the next snapshot's status item, the log."""
    cache, lines, job = first_job(runner, base, groups)
    outcome = job.outcome(timeout=5)
    assert outcome is not None
    settled = cache.settle(job, outcome, 1).settled
    (snap,) = cache.snapshot(2)
    return settled, snap["items"][0], lines


UNAVAILABLE = "Refresh is paused; it will retry after the cooldown."
FAILED = ["amem: inbox refresh failed; bounded backoff applies"]


def cache_with(runner: ProcessRunner, base: Path) -> tuple[InboxRefreshCache, list[str]]:
    lines: list[str] = []
    return InboxRefreshCache(runner, DirectorySource(base), log=lines.append), lines


def first_job(runner: ProcessRunner, base: Path,
              groups: Groups) -> tuple[InboxRefreshCache, list[str], ProcessJob]:
    """A cache over ``base`` whose first snapshot launched a job of ``runner``'s (its group recorded
    for the clean-up), and the cache's log."""
    cache, lines = cache_with(runner, base)
    cache.snapshot(0)
    job = cache.running_job
    assert isinstance(job, ProcessJob)
    groups.append(job.pid)
    return cache, lines, job


def test_real_worker_result_is_accepted(base: Path, groups: Groups) -> None:
    """RUNNER-LAUNCH-1, RUNNER-READY-1..3, RUNNER-MSG-1: the handshake passes, the result is used."""
    runner = make(base, groups)
    cache, lines, job = first_job(runner, base, groups)
    outcome = job.outcome(timeout=10)
    assert isinstance(outcome, JobResult), outcome
    assert cache.settle(job, outcome, 10).settled == "accepted"
    (snap,) = cache.snapshot(20)
    assert [i["id"] for i in snap["items"]] == ["c0", "c1", "c2"] and snap["complete"] and lines == []
    assert job.observe_cleanup() == "gone" and wait_gone(job.pid)


def test_worker_that_ignores_term_is_killed_at_the_deadline(base: Path, groups: Groups) -> None:
    """RUNNER-DEAD-1, RUNNER-SIG-1: TERM is ignored, KILL follows the grace; the cache blocks, then
    recovers."""
    runner = faulty(base, "ignore_term", groups, work_ms=DEADLINE_MS)
    cache, lines, job = first_job(runner, base, groups)
    outcome = job.outcome(timeout=5)
    assert isinstance(outcome, DeadlineExceeded) and outcome.group == job.pid
    assert cache.settle(job, outcome, DEADLINE_MS).settled == "cleanup"
    assert lines == [f"amem: inbox group {job.pid} cleanup unresolved; snapshots will observe "
                     "recovery without signalling it."]
    assert wait_gone(job.pid)
    assert job.process.wait(timeout=5) == -signal.SIGKILL
    (snap,) = cache.snapshot(700)  # the group is observed gone: recovery, no signal sent
    assert snap["items"][0]["id"] == "inbox:refreshing" and cache.state.blocked is None


def test_grandchild_left_in_the_group_is_cleanup_unresolved(base: Path, groups: Groups) -> None:
    """RUNNER-REAP-1..3, RUNNER-SIG-2: a process left in the group blocks the cache until it is
    observed gone, and no signal goes to a group whose leader has exited."""
    runner = faulty(base, "grandchild", groups)
    cache, _lines, job = first_job(runner, base, groups)
    outcome = job.outcome(timeout=5)
    assert isinstance(outcome, CleanupUnresolved) and str(outcome) == \
        f"inbox worker group {job.pid} cleanup is unresolved"
    cache.settle(job, outcome, 400)
    (snap,) = cache.snapshot(100_000)
    assert snap["items"][0]["id"] == "inbox:unavailable" and cache.running_job is None
    assert job.observe_cleanup() == "alive"
    job.terminate()
    time.sleep(0.2)
    assert group_liveness(job.pid) == "alive"  # the leader exited: the runner signals nothing
    os.killpg(job.pid, signal.SIGKILL)  # the grandchild finally goes
    assert wait_gone(job.pid)
    cache.snapshot(100_001)
    assert cache.state.blocked is None


def test_worker_that_hangs_before_ready_hits_the_deadline(base: Path, groups: Groups) -> None:
    """RUNNER-DEAD-1: no ready, no job; the deadline ends it and TERM kills it."""
    job, outcome = run_one(faulty(base, "hang_before_ready", groups, work_ms=DEADLINE_MS), groups)
    assert isinstance(outcome, DeadlineExceeded)
    assert wait_gone(job.pid) and job.process.wait(timeout=5) == -signal.SIGTERM


@pytest.mark.parametrize("mode", ["forged_pid", "forged_group", "forged_signature"])
def test_forged_ready_is_terminated_without_a_job(base: Path, groups: Groups, mode: str) -> None:
    """RUNNER-READY-1..3: a ready that names another pid, group or signature gets TERM, not the job."""
    job, outcome = run_one(faulty(base, mode, groups, work_ms=5000), groups)
    assert isinstance(outcome, WorkerUnavailable) and str(outcome) == "inbox worker unavailable"
    assert not job.ready and job.process.returncode == -signal.SIGTERM and wait_gone(job.pid)


def test_crashing_worker_is_unavailable(base: Path, groups: Groups) -> None:
    """RUNNER-MSG-1: an exit without a result is a failure."""
    job, outcome = run_one(faulty(base, "crash", groups), groups)
    assert isinstance(outcome, WorkerUnavailable) and job.process.returncode == 3 and wait_gone(job.pid)


def test_garbage_on_the_channel_is_ignored(base: Path, groups: Groups) -> None:
    """RUNNER-MSG-3: lines that are not messages are ignored; no result means unavailable."""
    job, outcome = run_one(faulty(base, "garbage", groups), groups)
    assert isinstance(outcome, WorkerUnavailable) and job.process.returncode == 0 and wait_gone(job.pid)


def test_worker_reporting_moved_is_a_runtime_error(base: Path, groups: Groups) -> None:
    """RUNNER-HASH-2: the worker's own hash differs: restart the host."""
    job, outcome = run_one(faulty(base, "moved", groups), groups)
    assert isinstance(outcome, RuntimeFailure) and str(outcome) == WORKER_CHANGED and wait_gone(job.pid)


def test_changed_files_refuse_the_launch(base: Path, tmp_path: Path, groups: Groups) -> None:
    """RUNNER-HASH-1: a pinned file changed after the runner started: nothing is launched."""
    pinned = tmp_path / "pinned.py"
    pinned.write_text("x = 1\n")
    runner = make(base, groups, files=[pinned])
    cache, lines = cache_with(runner, base)
    pinned.write_text("x = 2\n")
    (snap,) = cache.snapshot(0)
    assert lines == [WORKER_CHANGED] and snap["items"][0]["detail"] == WORKER_CHANGED
    assert runner.jobs == []


def test_worker_sees_its_files_moved(base: Path, tmp_path: Path, groups: Groups,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNNER-HASH-2: the real worker hashes the same files and reports moved on a mismatch."""
    pinned = tmp_path / "pinned.py"
    pinned.write_text("x = 1\n")
    runner = make(base, groups, files=[pinned])
    # As if the files changed between the runner's check and the worker's own reading.
    monkeypatch.setattr(runner_module, "worker_hash", lambda files=None: "0" * 64)
    runner.hash = "0" * 64
    job, outcome = run_one(runner, groups)
    assert isinstance(outcome, RuntimeFailure) and wait_gone(job.pid)


def test_moved_interpreter_refuses_the_launch(base: Path) -> None:
    """RUNNER-HASH-1: the interpreter is gone: the seed's restart message."""
    runner = ProcessRunner(base, argv=["/nonexistent/python", "-c", "pass"])
    with pytest.raises(RuntimeFailure) as raised:
        runner.launch(None)
    assert str(raised.value) == "bun moved; restart acon serve"


def test_close_cancels_a_running_worker(base: Path, groups: Groups) -> None:
    """RUNNER-CANCEL-1: close terminates the group and proves it gone."""
    runner = faulty(base, "ignore_term", groups, work_ms=10_000)
    cache, _, job = first_job(runner, base, groups)
    time.sleep(0.2)  # let the handshake finish
    assert cache.close() is None
    assert isinstance(job.outcome(timeout=1), WorkerUnavailable) and wait_gone(job.pid)


def test_sources_changed_under_the_worker(base: Path, groups: Groups) -> None:
    """RUNNER-MSG-1: a worker that saw its sources move answers changed."""
    runner = make(base, groups)
    job = runner.launch(None)
    groups.append(job.pid)
    outcome = job.outcome(timeout=10)
    assert isinstance(outcome, JobResult)
    (base / "inbox" / "c9.json").write_text("{}")
    source = DirectorySource(base)
    assert source.source_change(outcome.sources).changed and source.source_change(outcome.sources).hard
    assert SourcesChanged().args == ("inbox sources changed",)


def test_signature_is_the_start_time() -> None:
    """RUNNER-READY-3: the signature survives reads and names this process only."""
    mine = process_signature(os.getpid())
    assert mine is not None and mine == process_signature(os.getpid())
    assert process_signature(2**22 + 1) is None


def test_failing_worker_sends_nothing_but_failed(base: Path, groups: Groups,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNNER-MSG-2: a worker whose computation fails says only that it failed."""
    (base / "inbox" / "c1.json").write_text("{not json with /secret/path")
    seen: list[dict[str, object]] = []
    handle = ProcessJob._handle

    def recording(self: ProcessJob, message: dict[str, Any]) -> None:
        seen.append(message)
        handle(self, message)

    monkeypatch.setattr(ProcessJob, "_handle", recording)
    job, outcome = run_one(make(base, groups), groups)
    assert isinstance(outcome, WorkerUnavailable) and wait_gone(job.pid)
    assert [m["type"] for m in seen] == ["ready", "failed"] and seen[-1] == {"type": "failed"}


def test_every_runner_requirement_is_named_by_a_test() -> None:
    """The runner spec's IDs are shown here, not by cases (spec/inbox-refresh-runner.md)."""
    spec = Path(__file__).resolve().parents[1] / "spec" / "inbox-refresh-runner.md"
    ids = set(re.findall(r"\*\*(RUNNER-[A-Z]+-\d+)\*\*", spec.read_text(encoding="utf-8")))
    named: set[str] = set()
    for text in re.findall(r'"""(.*?)"""', Path(__file__).read_text(encoding="utf-8"), re.S):
        for first, last in re.findall(r"(RUNNER-[A-Z]+-\d+)(?:\.\.(\d+))?", text):
            stem, number = first.rsplit("-", 1)
            named.update(f"{stem}-{n}" for n in range(int(number), int(last or number) + 1))
    assert ids and ids <= named, sorted(ids - named)


@pytest.mark.parametrize("mode", ["crash", "garbage", "forged_pid", "forged_group", "forged_signature"])
def test_failed_worker_leaves_the_seed_status(base: Path, groups: Groups, mode: str) -> None:
    """RUNNER-MSG-1, RUNNER-MSG-3: a worker that ends without a result is a failure with back-off."""
    settled, status, lines = through_cache(faulty(base, mode, groups, work_ms=5000), base, groups)
    assert (settled, status["id"], status["detail"]) == ("failure", "inbox:unavailable", UNAVAILABLE)
    assert lines == FAILED


def test_moved_worker_leaves_the_seed_status(base: Path, groups: Groups) -> None:
    """RUNNER-HASH-2: the restart message is the status detail and the log line."""
    settled, status, lines = through_cache(faulty(base, "moved", groups), base, groups)
    assert (settled, status["id"], status["detail"], lines) == (
        "runtime", "inbox:unavailable", WORKER_CHANGED, [WORKER_CHANGED])


def test_deadline_leaves_the_seed_log(base: Path, groups: Groups) -> None:
    """RUNNER-DEAD-1: a worker that never gets ready is an unresolved cleanup for the cache (its
    status then depends on whether the TERM has already ended the group: see the ignore-TERM test)."""
    runner = faulty(base, "hang_before_ready", groups, work_ms=DEADLINE_MS)
    settled, status, lines = through_cache(runner, base, groups)
    assert settled == "cleanup" and status["id"] in ("inbox:unavailable", "inbox:refreshing")
    assert len(lines) == 1 and lines[0].endswith("cleanup unresolved; snapshots will observe recovery "
                                                 "without signalling it.")


# -- a hostile worker's output (RUNNER-MSG-3, RUNNER-MSG-4) ----------------------------------------

@pytest.mark.parametrize("mode", ["result_missing_keys", "result_items_not_list", "result_item_not_object",
                                  "result_item_without_at", "result_bad_capacity"])
def test_a_result_not_in_the_computation_s_shape_is_ignored(base: Path, groups: Groups, mode: str) -> None:
    """RUNNER-MSG-4: a result whose computation lacked a key ended the runner's reader in a KeyError
    after it had cancelled the deadline, and the job never ended; items that were not a list of
    objects reached the cache, whose acceptance raised a TypeError that no failure counted, and the
    cache showed "refreshing" for good. Such a result is ignored: the worker sent nothing usable."""
    runner = faulty(base, mode, groups)
    cache, lines, job = first_job(runner, base, groups)
    outcome = job.outcome(timeout=5)
    assert isinstance(outcome, WorkerUnavailable) and str(outcome) == "inbox worker unavailable"
    assert cache.settle(job, outcome, 1).settled == "failure" and lines == FAILED
    assert cache.state.failure_count == 1 and wait_gone(job.pid)


def test_the_later_of_two_results_is_the_job_s(base: Path, groups: Groups) -> None:
    """RUNNER-MSG-4: as the seed's runner keeps the last result it was sent."""
    job, outcome = run_one(faulty(base, "results_twice", groups), groups)
    assert isinstance(outcome, JobResult) and outcome.computation.more == 99 and wait_gone(job.pid)


def test_a_line_nested_past_the_parser_is_garbage(base: Path, groups: Groups) -> None:
    """RUNNER-MSG-3: a line of 200,000 ``[`` raised a RecursionError in the reader, which ended it:
    the worker's exit was never seen and the job ended only at the work deadline."""
    job, outcome = run_one(faulty(base, "deep_then_result", groups), groups)
    assert isinstance(outcome, JobResult) and wait_gone(job.pid)


def test_a_line_past_the_bound_is_dropped_as_it_comes(base: Path, groups: Groups,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNNER-MSG-3: one line without its newline was held whole (a worker wrote 400 MiB into the
    host in 3 s). A line past ``MAX_LINE_BYTES`` is garbage, and the next line is read as ever."""
    monkeypatch.setattr(runner_module, "MAX_LINE_BYTES", 100_000)
    monkeypatch.setenv("LONG_LINE_BYTES", "100000")
    job, outcome = run_one(faulty(base, "long_line_then_result", groups), groups)
    assert isinstance(outcome, JobResult) and wait_gone(job.pid)


def test_the_reader_never_holds_more_than_a_line_s_bound() -> None:
    lines = runner_module._Lines(10)
    assert lines.feed(b"0123") == [] and lines.feed(b"456789") == []
    assert lines.feed(b"ab") == [] and len(lines._partial) == 0  # past the bound: dropped at once
    assert lines.feed(b"cd\nok\n{}") == [b"ok"]  # the long line ends at its newline, unread
    assert lines.feed(b"x" * 20) == [] and len(lines._partial) == 0
    assert lines.feed(b"\n0123456789\n") == [b"0123456789"]  # exactly the bound is a line
    assert lines.feed(b"tail") == [] and lines.end() == [b"tail"]


def test_a_process_left_holding_the_output_does_not_hide_the_exit(base: Path, groups: Groups) -> None:
    """RUNNER-REAP-1: the runner saw the exit only at the end of the output, which a child in the group
    held open (writing on): the job ended at the 5 s work deadline, not at the reap proof's end, and
    the reader stayed for as long as the child lived. The exit is seen as it comes."""
    runner = faulty(base, "child_holds_output", groups)
    job = runner.launch(None)
    groups.append(job.pid)
    outcome = job.outcome(timeout=10)
    assert isinstance(outcome, CleanupUnresolved) and job.exited_at is not None and job.cleaned_at is None
    assert job.exited_at - job.launched_at < 3  # the deadline is 5 s
    time.sleep(0.2)
    assert f"inbox-worker-{job.pid}" not in {thread.name for thread in threading.enumerate()}


def test_a_child_that_leaves_the_group_is_outside_the_proof(base: Path, groups: Groups, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """What the runner spec leaves out (as the seed does): a process that leaves the worker's group
    (``setsid``) is not in it, so the proof sees the group gone and the job takes the worker's result; holding
    the output open does not delay that either."""
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("CHILD_PID_FILE", str(pid_file))
    job, outcome = run_one(faulty(base, "escaped_child_holds_output", groups), groups)
    try:
        assert isinstance(outcome, JobResult) and job.observe_cleanup() == "gone"
        child = int(pid_file.read_text())
        assert process_signature(child) is not None  # still running, in a session of its own
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_the_spec_s_constants_are_the_runner_s() -> None:
    """spec/inbox-refresh-runner.md's Constants table states the runner's constants (a port's runner
    reads them there): each row is the constant's value."""
    page = Path(__file__).resolve().parents[1] / "spec" / "inbox-refresh-runner.md"
    spec = page.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| ([a-zA-Z ]+) \| ([^|]+) \|", spec, re.M))
    assert rows["work deadline"].strip() == f"{runner_module.WORK_MS} ms"
    assert rows["reap proof"].strip() == f"{runner_module.REAP_MS} ms"
    assert rows["TERM to KILL"].strip() == f"{runner_module.KILL_GRACE_MS} ms"
    assert rows["liveness poll"].strip() == f"{runner_module.POLL_MS} ms"
    assert rows["longest line"].strip() == (f"{runner_module.MAX_LINE_BYTES // (1 << 20)} MiB "
                                            f"({runner_module.MAX_LINE_BYTES:,} bytes)")

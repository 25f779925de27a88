"""Forked workers (``checker/forked.py``'s ``Workers``) and the exploration memo built on them.

A worker that dies mid-task must turn into an error where its answer is awaited, never into a
wait without end (a ``multiprocessing.Pool`` replaces such a worker and forgets its task, so
``inboxspec check`` waited forever). Each wait below runs in a thread joined with a bound, so a
regression fails the test instead of hanging the session.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxspec.checker import explore as explore_module
from inboxspec.checker import forked
from inboxspec.checker import refine as refine_module
from inboxspec.checker.explore import Explorations
from inboxspec.checker.forked import WorkerLost, Workers
from inboxspec.checker.refine import RefinementLost, Refinements
from inboxspec.cli import main
from inboxspec.conformance.process_tree import all_processes, process_info
from inboxspec.machines.fixtures import remove

BOUND_SECONDS = 30.0


def within_bound(wait: Callable[[], Any]) -> Any:
    """``wait()``'s value or exception, or a failed test if it has neither after ``BOUND_SECONDS``."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, wait()))
        except BaseException as error:
            outcome.append((False, error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND_SECONDS)
    assert outcome, f"still waiting after {BOUND_SECONDS} s"
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def workers_made() -> Iterator[list[Workers[Any, Any]]]:
    """The ``Workers`` a test makes, closed after it whatever happened, and checked to leave no process."""
    made: list[Workers[Any, Any]] = []
    yield made
    pids = [process.pid for workers in made for process in workers._processes]
    for workers in made:
        workers.close()
    assert not [pid for pid in pids if pid is not None and alive(pid)]


def square_or_fail(task: int) -> int:
    if task < 0:
        raise ValueError(f"negative: {task}")
    return task * task


def test_each_task_is_answered_by_key_and_a_failure_is_raised_where_it_is_asked_for(
        workers_made: list[Workers[int, int]]) -> None:
    workers = Workers(square_or_fail, [(f"t{n}", n) for n in (3, -1, 4, 5)], 2)
    workers_made.append(workers)
    assert within_bound(lambda: workers.answer("t5")) == 25
    assert within_bound(lambda: workers.answer("t3")) == 9
    with pytest.raises(ValueError, match="negative: -1"):
        within_bound(lambda: workers.answer("t-1"))
    assert "t4" in workers and "t9" not in workers
    with pytest.raises(KeyError):
        workers.answer("t9")


def die_on_minus_one(task: int) -> int:
    if task == -1:
        os.kill(os.getpid(), signal.SIGKILL)
    if task == -2:
        time.sleep(60)  # long enough that close() must end the worker working it
    if task == -3:
        time.sleep(3)  # long enough that the worker still has it when the other is killed
    return task


def test_a_worker_killed_mid_task_fails_its_task_and_every_task_not_begun(
        workers_made: list[Workers[int, int]]) -> None:
    # One worker: its death leaves the task it had and the tasks behind it unanswered.
    workers = Workers(die_on_minus_one, [("first", 1), ("killer", -1), ("after", 2)], 1)
    workers_made.append(workers)
    assert within_bound(lambda: workers.answer("first")) == 1
    with pytest.raises(WorkerLost, match="its worker ended before it answered: it was ended by SIGKILL"):
        within_bound(lambda: workers.answer("killer"))
    with pytest.raises(WorkerLost, match="it was not begun"):
        within_bound(lambda: workers.answer("after"))


def test_a_worker_killed_from_outside_while_another_works_is_reported(
        workers_made: list[Workers[int, int]]) -> None:
    workers = Workers(die_on_minus_one, [("one", -3), ("other", -3)], 2)
    workers_made.append(workers)
    victim = workers._processes[0].pid
    assert victim is not None
    time.sleep(1)  # both tasks handed out, neither answered
    os.kill(victim, signal.SIGKILL)
    outcomes = []
    for key in ("one", "other"):
        try:
            outcomes.append(within_bound(lambda key=key: workers.answer(key)))  # type: ignore[misc]
        except WorkerLost as error:
            outcomes.append(str(error))
    # The killed worker's task is lost; the other worker answers its own.
    assert sorted(outcomes, key=str) == [-3, "its worker ended before it answered: it was ended by SIGKILL"]


def test_close_does_not_reap_a_lost_worker_while_its_feeder_waits_for_its_end(
        monkeypatch: pytest.MonkeyPatch, workers_made: list[Workers[int, int]]) -> None:
    """A worker that dies is reaped by its feeder thread (``_lose``), which then says how it ended;
    ``close``, called meanwhile, waits for that instead of reaping the same child at the same time
    (``Workers._reaping``). The feeder's wait is stretched so that ``close`` comes in the middle of it."""
    feeder_waiting = threading.Event()
    waiting_now: list[threading.Thread] = []  # the thread in _ending, while it is
    overlaps: list[str] = []
    ending = forked._ending

    def slow_ending(process: multiprocessing.process.BaseProcess) -> str:
        waiting_now.append(threading.current_thread())
        feeder_waiting.set()
        try:
            time.sleep(0.5)  # long enough for close() to reap the child too, were it let
            return ending(process)
        finally:
            waiting_now.clear()

    def watched(name: str) -> Callable[..., Any]:
        method = getattr(multiprocessing.process.BaseProcess, name)

        def call(process: multiprocessing.process.BaseProcess, *args: Any, **kwargs: Any) -> Any:
            if waiting_now and threading.current_thread() not in waiting_now:
                overlaps.append(name)
            return method(process, *args, **kwargs)
        return call

    monkeypatch.setattr(forked, "_ending", slow_ending)
    for name in ("is_alive", "join", "kill", "terminate"):
        monkeypatch.setattr(multiprocessing.process.BaseProcess, name, watched(name))
    workers = Workers(die_on_minus_one, [("killer", -1)], 1)
    workers_made.append(workers)
    assert feeder_waiting.wait(BOUND_SECONDS)
    workers.close()
    assert overlaps == []
    with pytest.raises(WorkerLost, match="its worker ended before it answered: it was ended by SIGKILL"):
        within_bound(lambda: workers.answer("killer"))


ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def report_ending_handlers(_task: int) -> Any:
    return [signal.getsignal(signum) for signum in ENDING_SIGNALS]


def test_workers_take_the_default_of_ending_signals_whatever_the_callers_handlers(
        workers_made: list[Workers[int, Any]]) -> None:
    """``close`` TERMs the workers (checker/forked.py says why the default matters); Ctrl-C and a
    hang-up reach a terminal's whole process group, and end a worker at once and quietly, while
    its parent (``inboxspec check``) cleans up (tests/test_check_command.py)."""

    def unwinds(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {signum: signal.signal(signum, unwinds) for signum in ENDING_SIGNALS}
    try:
        workers = Workers(report_ending_handlers, [("a", 0), ("b", 0)], 2)
        workers_made.append(workers)
        assert within_bound(lambda: workers.answer("a")) == [signal.SIG_DFL] * len(ENDING_SIGNALS)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@pytest.mark.parametrize("signum", ENDING_SIGNALS, ids=lambda signum: signum.name)
def test_a_signal_at_a_workers_birth_ends_it_quietly(signum: signal.Signals, monkeypatch: pytest.MonkeyPatch,
                                                      capfd: pytest.CaptureFixture[str],
                                                      workers_made: list[Workers[int, Any]]) -> None:
    """A signal that reaches a worker between its fork and its first line meets the handlers it
    inherited: here ones that raise, as Python's own turns Ctrl-C into KeyboardInterrupt and its
    traceback. The fork holds the ending signals off until that first line has put the defaults back
    (``held_for_fork``), so the worker ends at once and quietly. The moment is planted: the first
    line waits."""
    first_line = forked.take_default_termination
    reached = os.pipe()

    def late(also: Any = ()) -> None:
        os.write(reached[1], b"x")
        time.sleep(1.0)
        first_line(also)

    def raises(received: int, _frame: object) -> None:
        raise RuntimeError(f"a handler inherited from the parent ran on signal {received}")

    monkeypatch.setattr(forked, "take_default_termination", late)
    previous = {ending: signal.signal(ending, raises) for ending in ENDING_SIGNALS}
    try:
        workers = Workers(square_or_fail, [("a", 2)], 1)
    finally:
        for ending, handler in previous.items():
            signal.signal(ending, handler)
    workers_made.append(workers)
    os.close(reached[1])
    assert os.read(reached[0], 1) == b"x"  # the worker is in the moment before its first line
    os.close(reached[0])
    (process,) = workers._processes
    assert process.pid is not None
    os.kill(process.pid, signum)
    # Read from the worker's loss, which its parent's thread works out: a second wait here for
    # the same child would race with that thread's to reap it.
    with pytest.raises(WorkerLost, match=f"it was ended by {signum.name}"):
        within_bound(lambda: workers.answer("a"))
    assert "Traceback" not in capfd.readouterr().err


def unpicklable(_task: int) -> Any:
    return lambda: None


def test_an_answer_that_does_not_pickle_is_an_error_not_a_lost_worker(
        workers_made: list[Workers[int, Any]]) -> None:
    workers = Workers(unpicklable, [("x", 0), ("y", 1)], 1)
    workers_made.append(workers)
    with pytest.raises(RuntimeError, match="could not be sent"):
        within_bound(lambda: workers.answer("x"))
    with pytest.raises(RuntimeError, match="could not be sent"):
        within_bound(lambda: workers.answer("y"))


def test_close_ends_workers_busy_with_a_long_task(workers_made: list[Workers[int, int]]) -> None:
    workers = Workers(die_on_minus_one, [("slow", -2), ("slow too", -2)], 2)
    workers_made.append(workers)
    time.sleep(0.5)
    began = time.monotonic()
    within_bound(workers.close)
    assert time.monotonic() - began < 10
    assert not any(process.is_alive() for process in workers._processes)
    with pytest.raises(WorkerLost, match="closed before it was answered"):
        within_bound(lambda: workers.answer("slow"))


def test_a_task_still_waiting_at_close_is_not_waited_for(workers_made: list[Workers[int, int]]) -> None:
    workers = Workers(die_on_minus_one, [("slow", -2), ("queued", 1)], 1)
    workers_made.append(workers)
    time.sleep(0.5)
    workers.close()
    with pytest.raises(WorkerLost, match="closed before it was answered"):
        within_bound(lambda: workers.answer("queued"))


def dies_exploring_the_wake_gate(jobs: Any) -> Any:
    """A worker that dies on a family of explorations led by the wake gate's default exploration.
    The tests below explore nothing but the wake gate, which makes no fixture that a worker ended
    mid-way would leave behind."""
    (name, _bounds, options), _invariants = jobs[0]
    if name == "wake-gate" and not options:
        os.kill(os.getpid(), signal.SIGKILL)
    return real_explore_in_worker(jobs)


real_explore_in_worker = explore_module._explore_in_worker


def test_the_memo_names_the_exploration_a_lost_worker_had(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explore_module, "_explore_in_worker", dies_exploring_the_wake_gate)
    with Explorations() as memo:
        memo.start([("wake-gate", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True})], workers=2)
        with pytest.raises(WorkerLost, match=r"the exploration of wake-gate .*ended by SIGKILL"):
            within_bound(lambda: memo.get("wake-gate"))


def test_check_is_unusable_when_an_exploration_worker_is_lost(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(explore_module, "_explore_in_worker", dies_exploring_the_wake_gate)
    status = within_bound(lambda: main(["check", "--machine", "wake-gate", "--workers", "2", "--json"]))
    captured = capsys.readouterr()
    assert status == 2
    message = captured.err.strip().split(": ", 1)[1]
    assert json.loads(captured.out) == {"ok": False, "unusable": message, "problems": [message]}
    assert "an exploration could not be made" in captured.err and "SIGKILL" in captured.err


def make_a_tree(hang: int) -> str:
    """A temporary tree made as a fixture is (a read-only directory with a file in it), then, for
    ``hang``, a wait that only ``close`` ends: the worker never removes the tree itself."""
    directory = tempfile.mkdtemp(prefix="inboxspec-fixture-")
    inner = Path(directory) / "read-only"
    inner.mkdir()
    (inner / "file").write_text("kept")
    inner.chmod(0o500)
    if hang:
        time.sleep(60)
    return directory


def test_close_removes_what_workers_left_in_their_temporary_directory(
        workers_made: list[Workers[int, str]]) -> None:
    """A worker ended mid-task runs no clean-up of its own (SIGTERM's default), so what its tasks made
    with ``tempfile`` must go where ``close`` removes it: a writer-proofs fixture, say."""
    workers = Workers(make_a_tree, [("done", 0), ("hangs", 1)], 2)
    workers_made.append(workers)
    made = within_bound(lambda: workers.answer("done"))
    try:
        assert Path(made).parent == Path(workers.scratch) and Path(made, "read-only", "file").exists()
        time.sleep(0.5)  # the other task has made its tree and waits
        assert len(os.listdir(workers.scratch)) == 2
        workers.close()
        assert not Path(workers.scratch).exists()
    finally:
        remove(Path(made))  # where a broken worker put it outside the scratch directory


class Unforkable:
    def start(self) -> None:
        raise OSError("no more processes")


def test_a_worker_that_cannot_be_forked_leaves_none_of_the_others(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """The second fork fails (no processes or memory left): the first worker is ended, and the
    workers' temporary directory removed, before the error reaches the caller."""
    real = forked.fork_context()
    started: list[Any] = []

    class SecondForkFails:
        def Pipe(self) -> Any:
            return real.Pipe()

        def Process(self, **kwargs: Any) -> Any:
            if started:
                return Unforkable()
            started.append(real.Process(**kwargs))
            return started[-1]

    monkeypatch.setattr(forked, "fork_context", SecondForkFails)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(OSError, match="no more processes"):
        Workers(square_or_fail, [("a", 1), ("b", 2)], 2)
    assert len(started) == 1 and not started[0].is_alive()
    assert os.listdir(tmp_path) == []


def test_an_interrupt_while_the_workers_start_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    """Ctrl-C at ``inboxspec check``'s start can land after the workers are forked, while their
    threads start: the workers are ended, the thread started joined and the temporary directory
    removed before the interrupt reaches the caller (a check ended so left its directory behind)."""
    start = threading.Thread.start
    started: list[threading.Thread] = []

    def second_is_interrupted(thread: threading.Thread) -> None:
        if started:
            raise KeyboardInterrupt
        start(thread)
        started.append(thread)

    monkeypatch.setattr(threading.Thread, "start", second_is_interrupted)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = set(multiprocessing.active_children())
    with pytest.raises(KeyboardInterrupt):
        Workers(square_or_fail, [("a", 1), ("b", 2)], 2)
    monkeypatch.undo()
    assert len(started) == 1 and not started[0].is_alive()
    assert set(multiprocessing.active_children()) == before
    assert os.listdir(tmp_path) == []


def _writer_proofs_fixture_of(config: Any) -> str:
    """The in-process fixture directory a writer-proofs case run in this process would use."""
    from inboxspec.machines import writer_proofs_driver

    with writer_proofs_driver.fixture_directory(config) as directory:
        return os.path.realpath(directory)


def test_a_worker_lays_out_its_own_writer_proofs_fixtures(workers_made: list[Workers[Any, str]]) -> None:
    # check refines writer proofs on a worker while it replays writer-proofs cases itself, and a run
    # swaps paths in its fixture: were the worker to use the fixture it inherits, each process would
    # measure the other's half-made swaps (model and reference then disagree at random).
    from inboxspec.machines.writer_proofs import standard_config

    config = standard_config({})
    mine = _writer_proofs_fixture_of(config)
    assert _writer_proofs_fixture_of(config) == mine  # kept for this process's later runs
    workers = Workers(_writer_proofs_fixture_of, [("theirs", config)], 1)
    workers_made.append(workers)
    theirs = workers.answer("theirs")
    assert theirs != mine and theirs.startswith(os.path.realpath(workers.scratch) + os.sep)
    assert os.path.isdir(mine) and _writer_proofs_fixture_of(config) == mine  # the worker left it be


def test_check_refines_on_a_worker_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # Depth 2: what is shown is where the refinement is made, and that it is the caller's own; the
    # check's depth (3) takes writer proofs ten times as long, on fixture trees walked at every step.
    expected = {name: refine_module.refine(name, 2) for name in ("wake-gate", "writer-proofs")}
    with Refinements(2) as refinements:
        refinements.start(list(expected), workers=2)
        # Made on the worker, forked before this: the caller's own refine is never called.
        monkeypatch.setattr(refine_module, "refine", lambda *args: pytest.fail("refined in the caller"))
        assert {name: refinements.get(name) for name in expected} == expected
    assert all(result.sequences > 0 and not result.mismatch for result in expected.values())


def dies_refining(task: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_lost_refinement_worker_is_named_and_makes_check_unusable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(refine_module, "_refine_in_worker", dies_refining)
    with Refinements(3) as refinements:
        refinements.start(["wake-gate"], workers=2)
        with pytest.raises(RefinementLost, match=r"the refinement of wake-gate: .*ended by SIGKILL"):
            within_bound(lambda: refinements.get("wake-gate"))
    status = within_bound(lambda: main(["check", "--machine", "wake-gate", "--workers", "2", "--json"]))
    captured = capsys.readouterr()
    assert status == 2
    message = captured.err.strip().split(": ", 1)[1]
    assert json.loads(captured.out) == {"ok": False, "unusable": message, "problems": [message]}
    assert "a refinement could not be made: the refinement of wake-gate" in captured.err


def _running(pid: int) -> bool:
    info = process_info(pid)
    return info is not None and info.state != "Z"


def _children(pid: int) -> set[int]:
    """The running processes whose parent is ``pid``."""
    return {info.pid for info in all_processes().values() if info.ppid == pid and info.state != "Z"}


def _outliving(pids: Collection[int], seconds: float) -> list[int]:
    """Those of ``pids`` still running after ``seconds`` (KILLed then, so that a failing test leaves
    nothing behind)."""
    deadline = time.monotonic() + seconds
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = [pid for pid in pids if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize(("command", "forks"), [
    (["check", "--workers", "2"], 3),  # two workers for the explorations, one for the refinements
    (["explore", "host", "--workers", "2"], 2),  # the sharded search's two shards
], ids=["check", "explore"])
def test_a_command_killed_outright_leaves_no_forked_process(command: list[str], forks: int,
                                                             tmp_path: Path) -> None:
    """``forked.end_with_parent``: a parent KILLed (the OOM killer, a CI job's hard limit) runs no
    clean-up, and the check's workers used to wait forever for their next task; now the kernel ends
    them. (A sharded search's shards also watch their coordinator's pid while they wait for a
    message, ``_Shard.wait``, so they ended before too, at their next wait; now they end at once.)"""
    process = subprocess.Popen([sys.executable, "-m", "inboxspec", *command], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 60
        while len(forked_processes := _children(process.pid)) < forks:
            assert process.poll() is None, "the command ended before it had forked"
            assert time.monotonic() < deadline, f"only {len(forked_processes)} of {forks} processes forked"
            time.sleep(0.01)
        time.sleep(0.5)  # past each forked process's first lines, into its work
    finally:
        process.kill()
        process.wait(timeout=30)
    assert _outliving(forked_processes, 10) == [], "forked processes outlived their parent"


PARENT_WITHOUT_THE_SIGNAL = """
import sys, time
from inboxspec.checker import forked
forked.end_with_parent = lambda: None  # as where the kernel has no parent-death signal
workers = forked.Workers(time.sleep, [("a", 1.0), ("b", 1.0), ("c", 1.0)], 2)
print(*(process.pid for process in workers._processes), flush=True)
time.sleep(600)
"""


def test_without_the_death_signal_a_killed_parents_workers_end_after_their_task(tmp_path: Path) -> None:
    """``forked._serve``: a worker holds no end of its own pipe but its own, so once its parent is
    gone it reads the pipe's end after its task, and ends (it used to wait for a task forever). The
    KILLed parent's workers' directory stays where it was made: here, in the test's own."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT_WITHOUT_THE_SIGNAL], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_running(pid) for pid in pids)
    finally:
        parent.kill()
        parent.wait(timeout=30)
    # A task of 1 s each, and the next one never sent.
    assert _outliving(pids, 15) == [], "workers outlived their parent"
    assert [entry.name[:18] for entry in tmp_path.iterdir()] == ["inboxspec-workers-"]

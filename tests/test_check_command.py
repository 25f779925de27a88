"""`inboxspec check`, the main job: green on the tree, red when the reference or a model is wrong."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.check import (
    REFINE_DEPTH,
    YOUNG_COLLECTION_EVERY,
    check_configurations,
    rarer_young_collections,
    run_check,
    started_check,
)
from inboxspec.checker.explore import Explorations, available_cores
from inboxspec.checker.refine import refine
from inboxspec.cli import main
from inboxspec.conformance import process_tree
from inboxspec.conformance.casefiles import lint, registered_case_dirs
from inboxspec.conformance.interrupts import RunInterrupted, raising_on_signals
from inboxspec.conformance.progress import ERASE_LINE, REDRAW_EVERY_S, SHOW_AFTER_S, Progress
from inboxspec.impl import wake_gate as impl
from inboxspec.model.wake_gate import WakeGateChart
from tests.session_shared import SharedExplorations
from tests.spies import signalled_while_writing
from tests.stalled_pipe import needs_pipe_sizes, stalled_pipe
from tests.test_conform_progress import run_on_a_terminal
from tests.test_refine import raising_on_the_third_step

# The machines whose whole check the tests run: every registered one but the host. The host's
# check explores it at its default bounds five times (by default and with each option, about 100
# of the check's 130 processor seconds, more than the rest of a test run can spare), for its
# manifest, its findings at the default bounds, and its generated cases (whose traces are the
# shortest over those five explorations): those are the main job's own, which CI runs whole after
# the tests (`.ci/run`) and a newcomer runs with the README's first command. The tests check the
# host's other parts: its findings and lassos at smaller bounds (test_host_findings.py), its cases
# and projections (test_host_cases.py, test_projected_cases.py), and its refinement (below).
CHECKED_WHOLE = [name for name in machines.names() if name != "host"]


def test_check_is_green_and_reports_every_part(explorations: SharedExplorations) -> None:
    """The main job's report over every machine but the host (``CHECKED_WHOLE`` says why), from the
    session's shared explorations (the command line's own report is tested on one machine below)."""
    with machines.only(CHECKED_WHOLE):
        explorations.prefetch(check_configurations(), available_cores())
        report = json.loads(json.dumps(run_check(explorations=explorations)))  # as `--json` prints it
    assert report["ok"] is True, report["explorer"]["problems"] or report["spec_drift"]
    tally = report["machines"]["wake-gate"]
    assert tally["passed"] == tally["cases"] > 70 and tally["requirements"] > 30
    assert report["explorer"]["explorations"]["wake-gate"]["distinct_states"] > 0
    assert report["explorer"]["findings"]["wake-gate"] == {f"WAKE-F{n}": True for n in range(1, 5)}
    # Each part named, so that a red check says which: spec sections, generated
    # cases, manifests, findings and refinement for every machine checked.
    assert report["spec_drift"] == [], "run `inboxspec spec generate`"
    assert report["explorer"]["problems"] == []
    assert set(report["machines"]) == set(report["explorer"]["explorations"]) == set(CHECKED_WHOLE)
    assert len(CHECKED_WHOLE) == len(machines.names()) - 1


@pytest.mark.parametrize("young", [700, 0, 50_000])
def test_the_check_collects_its_youngest_generation_less_often_and_puts_the_setting_back(young: int) -> None:
    """Every YOUNG_COLLECTION_EVERY allocations or less often, while the check runs; automatic
    collection turned off (0) stays off; the caller's setting is back afterwards, even on an error."""
    before = gc.get_threshold()
    try:
        gc.set_threshold(young, 9, 8)
        with pytest.raises(KeyError), rarer_young_collections():
            assert gc.get_threshold() == ((max(young, YOUNG_COLLECTION_EVERY) if young else 0), 9, 8)
            raise KeyError("planted")
        assert gc.get_threshold() == (young, 9, 8)
    finally:
        gc.set_threshold(*before)


def test_a_started_check_runs_with_the_rarer_young_collections() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with machines.only(["wake-gate"]), started_check(1, Progress({}, enabled=False)):
            assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_the_host_refines_as_the_check_refines_it() -> None:
    """The host's refinement at the check's depth and the default bounds (test_refine.py refines it
    at smaller bounds): the one part of the host's check that needs no exploration."""
    refinement = refine("host", REFINE_DEPTH)
    assert refinement.mismatch == [] and refinement.steps > 1000


def test_a_changed_reference_rule_fails_the_check(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(impl, "is_rapid", lambda last, now, rules: last is not None
                        and now - last <= rules.floor_ms)
    assert main(["check", "--machine", "wake-gate"]) == 1
    output = capsys.readouterr().out
    assert "FAIL wake-gate/defaults" in output and "check: FAILED" in output


def test_a_changed_model_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def cap_off_by_one(self: Any) -> bool:
        return bool(self.streak <= self.max_streak)

    monkeypatch.setattr(WakeGateChart, "counted_wake_under_cap", cap_off_by_one)
    report = run_check(["wake-gate"])
    assert report["ok"] is False
    assert report["machines"]["wake-gate"]["model_failed"] > 0
    assert any("manifest" in p or "disagree" in p for p in report["explorer"]["problems"])


def test_a_reference_that_raises_fails_the_check_in_every_part_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # The refinement runs on a forked worker (two cores or more), which the planted reference reaches.
    entry = machines.get("wake-gate")
    raising = replace(entry, run_case=raising_on_the_third_step(entry.run_case))
    monkeypatch.setitem(machines.REGISTRY, "wake-gate", raising)
    assert main(["check", "--machine", "wake-gate"]) == 1
    output = capsys.readouterr().out
    raised = '{"raised": "ReferenceFault: planted over two lines xxx'
    lines = output.splitlines()
    assert any(line.startswith("FAIL wake-gate/") and raised in line for line in lines)  # a case
    assert any(line.startswith("explorer: WAKE-F") and "its trace is no case" in line for line in lines)
    generated = "explorer: wake-gate: wake-gate/generated/"
    assert any(line.startswith(generated) and raised in line for line in lines)
    assert any(line.startswith("explorer: wake-gate: model and reference disagree") and raised in line
               for line in lines)  # the refinement
    assert lines[-1] == "check: FAILED" and "Traceback" not in output


def test_check_of_one_machine_reports_that_machine_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--machine", "wake-gate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["machines"]) == {"wake-gate"}
    assert set(report["explorer"]["explorations"]) == {"wake-gate"}


def test_check_of_an_unknown_machine_cannot_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--machine", "no-such-machine"]) == 2
    assert "unknown machine" in capsys.readouterr().err


# The environment variable whose token marks the processes of one command a test starts.
PROBE = "INBOXSPEC_CHECK_PROBE"


def with_token(token: str) -> list[int]:
    """The live processes whose environment carries ``token`` under PROBE (a command and the
    workers it forked)."""
    return [info.pid for info in process_tree.all_processes().values()
            if info.state != "Z" and process_tree.has_token(info.pid, PROBE, token)]


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "to_the_group"), [
    (signal.SIGTERM, False),  # a CI job's timeout, to the main job's process
    (signal.SIGINT, True),  # Ctrl-C, and a hang-up, reach the terminal's whole process group
    (signal.SIGHUP, True),
], ids=lambda value: value.name if isinstance(value, signal.Signals) else ("group" if value else "process"))
def test_a_signal_ends_the_check_with_nothing_left_running(signum: signal.Signals, to_the_group: bool,
                                                           tmp_path: Path) -> None:
    """The main job ends at once with 128 plus the signal, quietly (no worker prints a traceback), its
    exploration workers and their temporary files gone (a worker used to go on until its exploration
    ended)."""
    token = secrets.token_hex(8)
    environment = {**os.environ, PROBE: token, "TMPDIR": str(tmp_path)}
    argv = [sys.executable, "-m", "inboxspec", "check", "--machine", "host", "--workers", "2"]
    check = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(with_token(token)) < 3 and time.monotonic() < deadline:  # the check and two workers
            time.sleep(0.1)
        assert len(with_token(token)) >= 3, "the check never started its workers"
        if to_the_group:
            os.killpg(check.pid, signum)
        else:
            check.send_signal(signum)
        _out, err = check.communicate(timeout=30)
        assert check.returncode == 128 + signum
        assert f"ended by {signum.name} before it finished" in err
        assert "Traceback" not in err
        assert with_token(token) == []
        assert [entry for entry in os.listdir(tmp_path) if entry.startswith("inboxspec-")] == []
    finally:
        check.kill()
        for pid in with_token(token):
            os.kill(pid, signal.SIGKILL)


# A check that lasts past SHOW_AFTER_S and a few redraws even on a machine twice as fast as this one
# (5.5 s here), in half the processor time of peer delivery's on two workers: one machine's, each part
# in turn in one process (tests/test_check_time.py covers the workers' count of explorations).
LONG_ENOUGH = ("--machine", "idle-subscriptions", "--workers", "1")


@pytest.mark.slow
def test_check_on_a_terminal_shows_its_progress_and_a_piped_check_shows_none() -> None:
    """The main job runs a minute and more: on a terminal it says how far it has got (cases replayed,
    explorations made, the phase), on stderr, erased before the report; piped, not a byte of it."""
    code, stdout, terminal = run_on_a_terminal(*LONG_ENOUGH, "--json", command="check")
    assert code == 0 and json.loads(stdout)["ok"] is True, terminal
    with machines.only(["idle-subscriptions"]):
        cases = sum(1 for case in lint(registered_case_dirs()).loaded)
        explorations = len({Explorations().key(c) for c in check_configurations()})
    drawn = [line for line in terminal.split(ERASE_LINE) if line]
    shape = re.compile(r"(\d+\.\d)s  cases (\d+)/(\d+)  explorations (\d+)/(\d+)  (.+)")
    matched = [shape.fullmatch(line) for line in drawn]
    assert drawn and all(matched), drawn
    assert {(int(m[3]), int(m[5])) for m in matched if m} == {(cases, explorations)}
    assert float(drawn[0].split("s")[0]) >= SHOW_AFTER_S
    # Which phases are drawn depends on timing (nothing is, in the first two seconds), but those that
    # are come in the order the check takes them.
    order = ["linting the cases", "replaying the cases", "refining idle-subscriptions",
             "comparing the manifests", "checking the findings", "checking the forever-properties",
             "comparing the generated cases", "comparing the projected cases",
             "comparing the spec's generated sections"]
    shown = [order.index(m[6]) for m in matched if m]
    assert shown == sorted(shown) and shown[-1] == len(order) - 1, [m[6] for m in matched if m]
    last = matched[-1]
    assert last is not None and (int(last[2]), int(last[4])) == (cases, explorations)
    assert terminal.endswith(ERASE_LINE)
    assert "\r" not in stdout and "\x1b" not in stdout

    # Piped, the same check, which the drawing above shows long enough to be drawn on.
    began = time.monotonic()
    piped = subprocess.run([sys.executable, "-m", "inboxspec", "check", *LONG_ENOUGH],
                           capture_output=True, text=True, timeout=300)
    lasted = time.monotonic() - began
    assert lasted > SHOW_AFTER_S + REDRAW_EVERY_S, f"{lasted:.1f} s: too short to be drawn on"
    assert piped.returncode == 0 and piped.stderr == ""
    assert "\r" not in piped.stdout and "\x1b" not in piped.stdout


class _SignalsItselfWhenCollected:
    """An object whose finalizer sends this process SIGTERM and then runs on: the handler raises in
    the finalizer, where Python drops exceptions (as in python-statemachine's engines' __del__)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10_000):  # bytecode for the handler to run in
            pass


def test_an_interrupt_dropped_in_a_finalizer_is_raised_again_at_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A signal landing in a finalizer ended nothing: the check went on and said ok with exit 0
    (``raising_on_signals``). It is sent again when Python drops it, and lands in the run itself."""
    reached: list[bool] = []
    hook = sys.unraisablehook
    with pytest.raises(RunInterrupted) as raised, raising_on_signals():
        dropped = _SignalsItselfWhenCollected()
        del dropped
        deadline = time.monotonic() + 5  # far longer than RESEND_AFTER_S
        while time.monotonic() < deadline:
            pass
        reached.append(True)
    assert raised.value.signal_name == "SIGTERM" and raised.value.exit_code == 143
    assert reached == []  # raised in the run at once, not at the end of it
    assert "Exception ignored" not in capsys.readouterr().err
    assert sys.unraisablehook is hook


def test_an_interrupt_swallowed_on_its_way_is_raised_when_the_run_ends() -> None:
    with pytest.raises(RunInterrupted, match="SIGTERM"), raising_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                pass
        except RunInterrupted:
            pass  # as an over-broad handler in code the run calls might


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_signal_while_the_report_is_written_cuts_it_with_a_word_and_no_traceback(
        as_json: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The check's report was written after its signal handlers were gone: SIGINT then printed a
    KeyboardInterrupt traceback over a report cut short (and under --json, a second report)."""
    signalled_while_writing(monkeypatch, signal.SIGINT, 50)
    assert main(["check", "--machine", "wake-gate", *(["--json"] if as_json else [])]) == 130
    captured = capsys.readouterr()
    assert len(captured.out) == 50
    assert captured.err.endswith("inboxspec check: ended by SIGINT while its report was written: the report "
                                 "is cut\n")
    assert "Traceback" not in captured.err


@needs_pipe_sizes
@pytest.mark.parametrize("command", [
    # Done within the second, then held on their report: the handler raised inside its write.
    ("check", "--machine", "wake-gate", "--workers", "1"),
    ("check", "--machine", "wake-gate", "--workers", "1", "--json"),
    # Still exploring (some 10 s of the host on one worker): the handler raised inside the work.
    ("explore", "host", "--workers", "1", "--json"),
], ids=["check-report", "check-json-report", "explore-json-working"])
def test_a_command_whose_output_is_a_stalled_pipe_still_ends_on_a_signal(command: tuple[str, ...]) -> None:
    """A command that a signal ends (here before it finished) writes its last words, the unusable
    report on stdout and a line on stderr, where no signal was recorded any more: into a reader that
    had stopped taking (`2>&1 | pager`), they blocked for good, and one SIGTERM never ended it. They
    are cut after the grace, as a report is."""
    with stalled_pipe() as writing:
        process = subprocess.Popen([sys.executable, "-m", "inboxspec", *command], stdout=writing,
                                   stderr=writing)
        try:
            time.sleep(1.5)  # its handlers set, whichever it is doing
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=4 * process_tree.KILL_GRACE_S + 5)
        finally:
            process.kill()
            process.wait()
    assert code == 128 + signal.SIGTERM


def test_a_hang_up_the_check_was_started_ignoring_ends_none_of_its_workers() -> None:
    """PROTO-SIG-1's ignored signal, for the check's forked workers (found by the review of that change):
    a worker set SIGHUP to its default whatever it inherited, so under nohup a terminal's hang-up, which
    reaches the whole process group, ended the workers and the check said an exploration could not be
    made. They keep it ignored as the check does; SIGTERM still ends the check."""
    ignoring_sighup = ("import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
                       "os.execv(sys.argv[1], sys.argv[1:])")
    check = subprocess.Popen([sys.executable, "-c", ignoring_sighup, sys.executable, "-m", "inboxspec",
                              "check", "--machine", "host", "--workers", "2"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(2)  # the workers are exploring
        os.killpg(check.pid, signal.SIGHUP)  # as a terminal sends it: to the whole group
        time.sleep(0.5)
        assert check.poll() is None, check.communicate()[1][-500:]
        os.killpg(check.pid, signal.SIGTERM)
        _out, err = check.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(check.pid, signal.SIGKILL)
        check.wait()
    assert check.returncode == 128 + signal.SIGTERM, err[-500:]

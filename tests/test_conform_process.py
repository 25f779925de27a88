"""The runner's process side: the adapter's tree, signals, seeds, arguments (issue 16).

Each defect is reproduced as a user meets it: ``inboxspec conform`` run as a
subprocess against an adapter script of ``tests/adapters/``. What survives a
run is looked up in ``/proc``: every leftover process records its pid and
start time (``tests/adapters/leftover.py``), and every run gets a token of its
own in its environment. Each test names the requirements of
spec/conformance-protocol.md it shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance import process_tree
from inboxspec.conformance.process_tree import KILL_GRACE_S, all_processes, has_token
from inboxspec.conformance.runner import PROTOCOL_VERSION
from tests.adversarial_adapters import CORPUS, EVERY_LEFTOVER, TRIGGER_ID, Attack
from tests.report_schema import checked_report
from tests.stalled_pipe import needs_pipe_sizes, stalled_pipe

pytestmark = pytest.mark.slow

ADAPTERS = Path(__file__).parent / "adapters"
HOSTILE = ADAPTERS / "hostile_adapter.py"
REFERENCE = f"{sys.executable} -m inboxspec.conformance.adapter"
PROBE = "INBOXSPEC_TEST_PROBE"
# --machine with a --run of its cases: that machine's case files alone are loaded.
WAKE_GATE = ("--machine", "wake-gate")
CASES_WITH_TRIGGER = (*WAKE_GATE, "--run", "wake-gate/a*", "--timeout", "60")
# A writer-proofs case well into the machine's cases: the ones before it have passed when it hangs.
WRITER_TRIGGER = "writer-proofs/floor-checked-first"
# The bundled case file that holds it: seven cases before it, fourteen after, each with its fixture
# directory. The machine's 267 cases gave no start the 22 do not, in 14.6 processor seconds for the
# six scenarios against 10.6.
WRITER_CASES = ADAPTERS.parent.parent / "conformance" / "cases" / "writer-proofs" / "active.json"


class Run:
    """One ``inboxspec conform`` subprocess with its own TMPDIR and probe token."""

    def __init__(self, scratch: Path) -> None:
        _RUNS.append(self)
        self.scratch = scratch
        self.tmpdir = scratch / "tmp"
        self.tmpdir.mkdir(exist_ok=True)
        self.token = secrets.token_hex(8)
        self.record = scratch / "record"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "TMPDIR": str(self.tmpdir), PROBE: self.token}

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "inboxspec", "conform", "--json", *args]

    def __call__(self, *args: str, timeout: float = 120) -> tuple[int, dict[str, Any] | None, str]:
        process = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=timeout,
                                 env=self.env)
        return process.returncode, _report(process.stdout), process.stdout + process.stderr

    def hostile(self, *options: str) -> str:
        return f"{sys.executable} {HOSTILE} --record {self.record} " + " ".join(options)

    def survivors(self) -> list[str]:
        """Every process of this run still alive: recorded leftovers, and anything with its token.

        Each is KILLed once found, so that a failing test leaves nothing behind either.
        """
        alive = [(pid, kind) for pid, start, kind in _records(self.record) if _running(pid, start)]
        alive += [(pid, "token") for pid in self.token_holders()]
        for pid, _ in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return [f"{pid} ({kind})" for pid, kind in alive]

    def token_holders(self) -> list[int]:
        """Every running process (this one aside) with this run's probe token in its environment."""
        return [pid for pid in all_processes() if pid != os.getpid() and has_token(pid, PROBE, self.token)
                and _running(pid, None)]

    def restarts_saw_alive(self) -> list[Any]:
        """What each start of the hostile adapter found still alive of the starts before it."""
        path = Path(f"{self.record}.restarts")
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def fixture_dirs(self) -> list[str]:
        return sorted(entry for entry in os.listdir(self.tmpdir) if entry.startswith("inboxspec-"))


_RUNS: list[Run] = []


@pytest.fixture(autouse=True)
def _end_survivors() -> Iterator[None]:
    """Whatever a test asserted, what its runs left alive is ended after it."""
    yield
    while _RUNS:
        _RUNS.pop().survivors()


def _report(stdout: str) -> dict[str, Any] | None:
    try:
        report = checked_report(json.loads(stdout))
    except json.JSONDecodeError:
        return None
    return report if isinstance(report, dict) else None


def _records(path: Path) -> list[tuple[int, str, str]]:
    if not path.exists():
        return []
    return [(int(pid), start, kind) for pid, start, kind in
            (line.split() for line in path.read_text().splitlines())]


def _running(pid: int, starttime: str | None) -> bool:
    """This very process (not one that reused its pid) is alive and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[0] != b"Z" and (starttime is None or fields[19].decode() == starttime)


def outcome(report: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["id"] == case_id)


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


# -- The adapter's tree is gone, whatever ends the run --------------------------------------------

SCENARIOS = ("end-of-run", "crash", "timeout", "SIGINT", "SIGTERM", "SIGHUP")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_process_of_the_adapter_survives(scenario: str, tmp_path: Path) -> None:
    """PROTO-PROC-1, PROTO-PROC-2, PROTO-PROC-3, PROTO-PROC-6, PROTO-SIG-1, PROTO-FIX-1 (defects 3, 6, 8).

    The adapter leaves one process of every kind behind (leftover.py), on every
    start; writer-proofs cases give every request a fixture directory. After the
    run, none of the processes is alive, the restarted adapter found none of
    its predecessor's alive when it started, and no fixture directory is left.
    """
    run = Run(tmp_path)
    options = [*EVERY_LEFTOVER, f"--trigger={WRITER_TRIGGER}", f"--once={tmp_path / 'once'}", "--litter"]
    common = ("--machine", "writer-proofs", "--cases", str(WRITER_CASES))
    began = time.monotonic()
    if scenario in SCENARIOS[:3]:
        action = {"end-of-run": "none", "crash": "exit", "timeout": "hang"}[scenario]
        timeout = "2" if scenario == "timeout" else "60"
        code, report, output = run("--adapter", run.hostile(*options, f"--on-trigger={action}"),
                                   *common, "--timeout", timeout)
        assert report is not None and "Traceback" not in output, output
        trigger = outcome(report, WRITER_TRIGGER)
        if scenario == "end-of-run":
            assert code == 0 and report["ok"] is True, output
        else:
            expected = "crashed" if scenario == "crash" else "timeout"
            assert code == 1 and trigger["detail"].startswith(expected), trigger
            assert report["totals"]["error"] == 1 and report["restarts"] == 1
        # An adapter that exits with its children on the pipes is crashed at once, not after a
        # --timeout of 60 s (defect 3); stopping an adapter with such children does not hang.
        assert time.monotonic() - began < 30
        saw = run.restarts_saw_alive()
        assert saw == [[]] * (1 + report["restarts"]), saw
    else:
        hanging = tmp_path / "hanging"
        process = subprocess.Popen(
            run.argv("--adapter", run.hostile(*options, "--on-trigger=hang", f"--hanging={hanging}"),
                     *common, "--timeout", "60", "--window", "1"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run.env)
        _wait_for(hanging, 60)
        assert run.fixture_dirs(), "the hanging case has its fixture directory"
        process.send_signal(getattr(signal, scenario))
        stdout, stderr = process.communicate(timeout=30)
        assert time.monotonic() - began < 60
        assert "Traceback" not in stderr, stderr
        assert process.returncode == 128 + getattr(signal, scenario), stderr
        report = _report(stdout)
        assert report is not None and report["ok"] is False and report["interrupted"] == scenario, stdout
        passed_before = [r["id"] for r in report["results"]]
        assert len(passed_before) >= 7 and WRITER_TRIGGER not in passed_before, passed_before
        assert report["totals"]["pass"] == len(passed_before)
        assert f"interrupted by {scenario}" in stderr
    kinds = {kind for _, _, kind in _records(run.record)}
    assert kinds == {option.split("=")[1] for option in EVERY_LEFTOVER}, "every leftover started"
    assert run.survivors() == []
    assert run.fixture_dirs() == []
    # What the adapter left in its temporary directory, made inside the run's private root, went
    # with the root, however the run ended (PROTO-PROC-6): before, it stayed in the TMPDIR.
    litter = Path(f"{run.record}.litter").read_text().split()
    assert len(litter) == 1 and litter[0].startswith(f"{run.tmpdir}/inboxspec-"), litter
    assert not os.path.lexists(litter[0])
    assert os.listdir(run.tmpdir) == [], os.listdir(run.tmpdir)


def test_a_fixture_lost_mid_run_ends_the_run_with_the_results_so_far(tmp_path: Path) -> None:
    """PROTO-FIX-1, PROTO-RUN-6: an adapter that replaces the run's private root makes every later
    fixture impossible to lay out. The run ends there, unusable, and still reports every case answered
    before (it lost them all), the case that replaced the root included; the moved root is removed
    where it went, and what the adapter made at the root's name is left alone."""
    run = Run(tmp_path)
    adapter = run.hostile(f"--trigger={WRITER_TRIGGER}", "--on-trigger=replace-root")
    code, report, output = run("--adapter", adapter, "--machine", "writer-proofs",
                               "--cases", str(WRITER_CASES), "--window", "1")
    assert code == 2 and report is not None and "Traceback" not in output, output
    assert report["ok"] is False and "fixture root" in report["unusable"], report.get("unusable")
    assert report["problems"] == [report["unusable"]]
    answered = [r["id"] for r in report["results"]]
    assert len(answered) >= 8 and answered[-1] == WRITER_TRIGGER, answered
    assert all(r["outcome"] == "pass" for r in report["results"]), report["results"]
    (left,) = run.fixture_dirs()  # the adapter's directory at the root's name, not the run's
    assert os.listdir(run.tmpdir / left) == [] and not left.endswith(".moved")
    assert run.survivors() == []


# The runner as nohup starts it: SIGHUP ignored, which an exec keeps.
IGNORING_SIGHUP = ("import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
                   "os.execv(sys.argv[1], sys.argv[1:])")


def test_a_signal_the_runner_was_started_ignoring_stays_ignored(tmp_path: Path) -> None:
    """PROTO-SIG-1: under nohup, which starts a command with SIGHUP ignored so that it outlives its
    terminal, the runner put its own handler in place of the ignoring, and the terminal's hang-up
    ended the run nohup was asked to keep going. An ignored signal stays ignored; the others still
    end the run."""
    run = Run(tmp_path)
    hanging = tmp_path / "hanging"
    adapter = run.hostile(f"--trigger={WRITER_TRIGGER}", "--on-trigger=hang", f"--hanging={hanging}")
    argv = run.argv("--adapter", adapter, "--machine", "writer-proofs", "--cases", str(WRITER_CASES),
                    "--timeout", "60")
    process = subprocess.Popen([sys.executable, "-c", IGNORING_SIGHUP, *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=run.env)
    try:
        _wait_for(hanging, 60)  # the run is under way, past the point where the runner sets its handlers
        process.send_signal(signal.SIGHUP)
        time.sleep(0.3)  # six times the 50 ms in which a handled signal ends the wait for a reply
        assert process.poll() is None, "SIGHUP, which the runner was started ignoring, ended the run"
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, stderr
    report = _report(stdout)
    assert report is not None and report["interrupted"] == "SIGTERM", stdout
    assert run.survivors() == [] and run.fixture_dirs() == []


@needs_pipe_sizes
def test_a_run_whose_stdout_and_stderr_share_a_stalled_pipe_still_ends_on_a_signal(tmp_path: Path) -> None:
    """PROTO-SIG-1, PROTO-REPORT-2: `conform ... 2>&1 | reader` with a reader that stopped taking
    (a pager left on its first page). The report was cut after the grace, and the line on stderr
    that says so then blocked on the same full pipe: the runner never ended. Every line of the
    runner's own on stderr is written as a report is, and a reader that does not take one within
    the grace after a signal loses it."""
    run = Run(tmp_path)
    with stalled_pipe() as writing:
        process = subprocess.Popen(run.argv("--adapter", REFERENCE, *CASES_WITH_TRIGGER),
                                   stdout=writing, stderr=writing, env=run.env)
        try:
            time.sleep(1)  # in the run, or blocked on its report: either way a full pipe is all it has
            signalled = time.monotonic()
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=4 * KILL_GRACE_S + 5)
            took = time.monotonic() - signalled
        finally:
            process.kill()
            process.wait()
    assert code == 128 + signal.SIGTERM
    # One grace in all: the line after the report's cut gets none of its own (it had a second more).
    assert took < 2 * KILL_GRACE_S, took
    assert run.survivors() == [] and run.fixture_dirs() == []


def test_a_signal_ends_the_matrix_with_nothing_left_running_and_nothing_written(tmp_path: Path) -> None:
    """PROTO-SIG-1 and PROTO-PROC-1 for ``matrix``, which runs adapters as ``conform`` does (SIGTERM
    here; ``conform``'s tests send all three, through the same handlers, ``contained_runs``): the
    adapter's tree and its fixture directories gone, 128 plus the signal, no later adapter started,
    and no partial table printed, written or put into its file. It used to die at once, leaving
    the adapter's children and the hanging case's fixture directory behind."""
    run = Run(tmp_path)
    hanging = tmp_path / "hanging"
    first = run.hostile(*EVERY_LEFTOVER, f"--trigger={WRITER_TRIGGER}", "--on-trigger=hang",
                        f"--hanging={hanging}")
    second_record = tmp_path / "second-record"
    second = f"{sys.executable} {HOSTILE} --record {second_record}"
    into = tmp_path / "matrix.md"
    into.write_text("before\n<!-- begin: inboxspec matrix (generated; do not edit by hand) -->\n"
                    "<!-- end: inboxspec matrix -->\n")
    written = into.read_bytes()
    argv = [sys.executable, "-m", "inboxspec", "matrix", "--adapter", first, "--adapter", second,
            "--machine", "writer-proofs", "--timeout", "60", "--window", "1",
            "--json", str(tmp_path / "matrix.json"), "--markdown", str(tmp_path / "matrix-copy.md"),
            "--into", str(into)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run.env)
    _wait_for(hanging, 60)
    assert run.fixture_dirs(), "the hanging case has its fixture directory"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted by SIGTERM: no matrix printed or written" in stderr and "Traceback" not in stderr
    assert stdout == "" and into.read_bytes() == written
    assert not (tmp_path / "matrix.json").exists() and not (tmp_path / "matrix-copy.md").exists()
    assert not second_record.exists(), "the second adapter never starts"
    assert run.survivors() == []
    assert run.fixture_dirs() == []


def test_children_that_closed_their_stdio_are_gone_after_the_run(tmp_path: Path) -> None:
    """PROTO-PROC-1 (defect 8): a child with its stdio on /dev/null is invisible to the pipes."""
    run = Run(tmp_path)
    code, report, output = run("--adapter", run.hostile("--spawn=closed-stdio", "--spawn=daemon"),
                               *WAKE_GATE, "--run", "wake-gate/f1-*")
    assert code == 0 and report is not None, output
    assert len(_records(run.record)) == 2
    assert run.survivors() == []


def test_an_adapter_that_ignores_term_is_killed_after_the_grace(tmp_path: Path) -> None:
    """PROTO-PROC-2: TERM first, KILL after the grace; the run waits no longer than that."""
    from inboxspec.conformance.process_tree import KILL_GRACE_S

    run = Run(tmp_path)
    began = time.monotonic()
    code, _, output = run("--adapter", run.hostile("--spawn=ignores-term"), *WAKE_GATE,
                          "--run", "wake-gate/f1-*")
    assert code == 0, output
    assert run.survivors() == []
    # Python's start-up and one grace; a run that waited on the leftover would take its hour.
    assert time.monotonic() - began < 10 + KILL_GRACE_S


@pytest.mark.parametrize("attack", CORPUS, ids=[attack.name for attack in CORPUS])
def test_adversarial_adapter_corpus(attack: Attack, tmp_path: Path) -> None:
    """Every attack of tests/adversarial_adapters.py gets its verdict, no traceback, no survivor.

    PROTO-RUN-1, PROTO-RUN-4, PROTO-FRAME-3, PROTO-VAL-3, PROTO-EXEC-1, PROTO-PROC-1.
    """
    run = Run(tmp_path)
    code, report, output = run("--adapter", attack.command(tmp_path), *attack.arguments)
    assert "Traceback" not in output, output
    assert code == attack.exit_code, output
    assert report is not None and report["ok"] is (attack.exit_code == 0), output
    if attack.trigger is not None:
        result, (expected, detail) = outcome(report, TRIGGER_ID), attack.trigger
        assert result["outcome"] == expected and result["detail"].startswith(detail), result
    if attack.errored is not None:
        assert report["totals"]["error"] == attack.errored, report["results"]
    elif attack.trigger is not None and attack.trigger[0] == "error":
        assert report["totals"]["error"] == 1, report["results"]  # the one case, none innocent
    assert run.survivors() == []


# -- Right blame (defect 12) ----------------------------------------------------------------------


@pytest.mark.parametrize("window", ["16", "1"])
def test_a_reply_with_an_answered_seq_and_another_id_blames_the_case_sent(window: str,
                                                                          tmp_path: Path) -> None:
    """PROTO-RUN-4 (defect 12): seq 1 with another case's id is a wrong reply to the case waited for.

    The case answered first (seq 1) keeps its pass, and the faulty case is not
    sent again to pass on the restarted adapter.
    """
    run = Run(tmp_path)
    faulty = f"{sys.executable} {ADAPTERS / 'faulty_adapter.py'} stale-seq announce-on-fresh-gate"
    code, report, output = run("--adapter", f"{faulty} {tmp_path / 'once'}", *WAKE_GATE,
                               "--run", "wake-gate/a*", "--window", window)
    assert code == 1 and report is not None, output
    first, second = report["results"]
    assert first["id"] == "wake-gate/announce-once-per-episode" and first["outcome"] == "pass", first
    assert second["id"] == TRIGGER_ID and second["outcome"] == "error", second
    assert second["detail"].startswith("wrong-seq"), second


# -- Seeds (defect 5) -----------------------------------------------------------------------------

REPLAY = ADAPTERS / "replay_adapter.py"


def test_a_replay_table_recorded_on_one_run_fails_the_next_unseeded_run(tmp_path: Path) -> None:
    """PROTO-FUZZ-4 (defect 5): without --seed the adapter cannot know the cases in advance.

    The replay adapter records every case it is sent with the reference's
    answer, then replays answers by the case's content. Replaying with the
    recorded run's seed passes everything (so the table works); an unseeded run
    draws another seed, and the table knows none of its cases.
    """
    run = Run(tmp_path)
    table = tmp_path / "table.json"
    args = ("--machine", "wake-gate", "--fuzz", "30")
    process = subprocess.run(run.argv("--adapter", f"{sys.executable} {REPLAY} record {table}", *args),
                             capture_output=True, text=True, timeout=120, env=run.env)
    recorded = _report(process.stdout)
    assert process.returncode == 0 and recorded is not None, process.stderr
    seed = recorded["fuzz"]["seed"]
    assert recorded["fuzz"]["seed_drawn"] is True
    assert f"fuzz seed {seed} (drawn at random; replay with --seed {seed})" in process.stderr

    replay = f"{sys.executable} {REPLAY} replay {table}"
    code, replayed, output = run("--adapter", replay, *args, "--seed", str(seed))
    assert code == 0 and replayed is not None and replayed["totals"]["pass"] == 30, output
    assert replayed["fuzz"]["seed"] == seed and replayed["fuzz"]["seed_drawn"] is False

    code, fresh, output = run("--adapter", replay, *args)
    assert code == 1 and fresh is not None, output
    assert fresh["fuzz"]["seed"] != seed
    assert fresh["totals"]["error"] >= 25, fresh["totals"]  # a repeated short trace may be known


# -- Fuzz fixtures (defect 7) ---------------------------------------------------------------------

FIXTURE_SPY = Path(__file__).parent / "adapters" / "fixture_spy_adapter.py"


def test_fuzz_removes_its_fixture_directories(tmp_path: Path) -> None:
    """PROTO-FIX-1 (defect 7): every fixture directory of a --fuzz run is gone when it ends."""
    run = Run(tmp_path)
    spy, log = FIXTURE_SPY, tmp_path / "log.jsonl"
    code, report, output = run("--adapter", f"{sys.executable} {spy} {log}", "--machine", "writer-proofs",
                               "--fuzz", "20")
    assert code == 0 and report is not None, output
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) == 20 and all(entry["exists"] for entry in seen)
    # Inside the run's TMPDIR: each directory sits in the run's private fixture root (PROTO-FIX-3).
    assert all(Path(entry["dir"]).is_relative_to(run.tmpdir) for entry in seen)
    assert not any(Path(entry["dir"]).exists() for entry in seen)
    assert run.fixture_dirs() == []


def test_an_interrupted_fuzz_run_reports_what_it_ran(tmp_path: Path) -> None:
    """PROTO-SIG-1: SIGTERM during --fuzz: the results so far, the seed, the run marked interrupted."""
    run = Run(tmp_path)
    hanging = tmp_path / "hanging"
    process = subprocess.Popen(
        run.argv("--adapter", run.hostile("--spawn=setsid", "--on-trigger=hang", "--trigger=fuzz-5-5",
                                          f"--once={tmp_path / 'once'}", f"--hanging={hanging}"),
                 "--machine", "wake-gate", "--fuzz", "50", "--seed", "5", "--window", "1"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run.env)
    _wait_for(hanging, 60)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 143 and "Traceback" not in stderr, stderr
    report = _report(stdout)
    assert report is not None and report["interrupted"] == "SIGTERM" and report["fuzz"]["seed"] == 5
    # The fifth random case hung (--once: fuzz-5-50 does not); the four before it are reported.
    assert [r["id"] for r in report["results"]] == [f"wake-gate/fuzz-5-{n}" for n in range(1, 5)]
    assert run.survivors() == []


# -- Arguments (defect 11) ------------------------------------------------------------------------

BAD_ARGUMENTS = {
    "timeout-nan": (["--timeout", "nan"], "--timeout"),
    "timeout-inf": (["--timeout", "inf"], "--timeout"),
    "timeout-negative": (["--timeout", "-1"], "--timeout"),
    "timeout-zero": (["--timeout", "0"], "--timeout"),
    "timeout-text": (["--timeout", "soon"], "--timeout"),
    "start-timeout-1e300": (["--start-timeout", "1e300"], "--start-timeout"),
    "shrink-seconds-nan": (["--shrink-seconds", "nan"], "--shrink-seconds"),
    "max-line-bytes-negative": (["--max-line-bytes", "-5"], "--max-line-bytes"),
    "window-negative": (["--window", "-1"], "--window"),
    "seed-negative": (["--seed", "-1"], "--seed"),
    "min-executed-5000-digits": (["--min-executed", "9" * 5000], "--min-executed"),
    "max-skipped-negative": (["--max-skipped", "-1"], "--max-skipped"),
    "fuzz-zero": (["--fuzz", "0"], "--fuzz"),
    "fuzz-past-the-most": (["--fuzz", "10001"], "at most 10,000 random cases per machine"),
    # Digits of another script, an underscore and spaces (int and float take them all).
    "seed-other-digits": (["--fuzz", "1", "--seed", " \u0661\u0662"], "--seed"),
    "fuzz-underscore": (["--fuzz", "1_0"], "--fuzz"),
    "timeout-spaced": (["--timeout", " 2 "], "--timeout"),
    "seed-without-fuzz": (["--seed", "5"], "without --fuzz it would do nothing"),
    "unknown-option": (["--bogus"], "unrecognized arguments"),
}
BAD_ADAPTERS = {
    "unbalanced-quote": (f"{sys.executable} -c 'print(1)", "No closing quotation"),
    "trailing-backslash": ("node adapter.mjs \\", "No escaped character"),
    "empty": ("", "the adapter command is empty"),
}


@pytest.mark.parametrize("as_json", [True, False])
@pytest.mark.parametrize("name", [*BAD_ARGUMENTS, *BAD_ADAPTERS])
def test_odd_arguments_are_an_unusable_run_with_a_report(name: str, as_json: bool, tmp_path: Path) -> None:
    """PROTO-CLI-1 (defect 11): exit 2, the problem named, JSON under --json, never a traceback."""
    if name in BAD_ARGUMENTS:
        extra, problem = BAD_ARGUMENTS[name]
        args = ["--adapter", REFERENCE, *extra]
    else:
        command, problem = BAD_ADAPTERS[name]
        args = ["--adapter", command]
    argv = [sys.executable, "-m", "inboxspec", "conform", *args, *(["--json"] if as_json else [])]
    process = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert process.returncode == 2, process.stdout + process.stderr
    assert "Traceback" not in process.stderr and problem in process.stderr, process.stderr
    if as_json:
        report = _report(process.stdout)
        assert report is not None and report["ok"] is False, process.stdout
        assert problem in report["unusable"] and report["problems"] == [report["unusable"]]
    else:
        assert process.stdout == ""


def test_a_missing_required_option_under_json_still_writes_json() -> None:
    """PROTO-CLI-1: argparse's own errors (here: no --adapter) are reported as JSON too."""
    process = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--json"],
                             capture_output=True, text=True, timeout=60)
    report = _report(process.stdout)
    assert process.returncode == 2 and report is not None and "--adapter" in report["unusable"]


# -- Shrunk cases cite real requirements ----------------------------------------------------------


@pytest.mark.parametrize("machine", ["writer-proofs", "wake-gate"])
def test_a_shrunk_config_error_cites_real_requirements_and_passes_lint(machine: str,
                                                                       tmp_path: Path) -> None:
    """PROTO-FUZZ-3: a shrunk case that reduces to a config error cites what config-error cases cite.

    It cites no placeholder, and the case file passes the linter's rules.
    """
    from inboxspec import machines
    from inboxspec.conformance.casefiles import bundled_cases_dir, case_problems, load_cases, read_case_file
    from inboxspec.conformance.fuzz import case_file, expected_case

    target = machines.get(machine)
    bundled = [c for c in load_cases([bundled_cases_dir()]) if c.machine == machine]
    invalid = next(c for c in bundled if c.id == f"{machine}/config-unknown-key")
    case = expected_case(target, f"{machine}/fuzz-9-1", "Random trace", dict(invalid.config), [],
                         "fuzz seed 9")
    assert case.expect_config_error == "invalid_config"
    document = case_file(target, case, 9, "")
    (entry,) = document["cases"]
    config_error_cases = [c for c in bundled if c.expect_config_error == "invalid_config"]
    assert entry["requirements"], "cites something"
    for requirement in entry["requirements"]:
        assert all(requirement in c.requirements for c in config_error_cases), requirement
    path = tmp_path / "found.json"
    path.write_text(json.dumps(document))
    assert case_problems(list(read_case_file(path))) == []


def test_the_protocol_page_states_the_runners_numbers() -> None:
    """PROTO-STOP-1, PROTO-PROC-2, PROTO-PROC-3, PROTO-PROC-5, PROTO-CLI-1, PROTO-FUZZ-4, PROTO-START-1,
    PROTO-REPORT-1: each number written once in code, and the spec checked against it."""
    from inboxspec.conformance.adapter_process import EXIT_POLL_S, STOP_GRACE_S
    from inboxspec.conformance.compare import KEPT_VALUE_CHARS
    from inboxspec.conformance.interrupts import exit_code
    from inboxspec.conformance.process_tree import KILL_GRACE_S
    from inboxspec.conformance.runner import (
        FUZZ_SEED_BITS,
        MAX_LISTING_WARNINGS,
        MAX_SECONDS,
        QUOTED_CHARS,
        REPORTED_IMPLEMENTATION,
    )
    from inboxspec.conformance.warden import DONE_WAIT_S
    from inboxspec.machines.held_signals import INTERRUPTING_SIGNALS
    from inboxspec.spec.index import spec_text

    text = " ".join(spec_text("conformance-protocol.md").split())
    assert f"waits up to {STOP_GRACE_S:g} seconds for the adapter to exit" in text
    assert f"after a grace of {KILL_GRACE_S:g} second" in text
    assert f"at least every {EXIT_POLL_S * 1000:g} ms" in text
    assert f"within {EXIT_POLL_S * 1000:g} ms of waiting" in text
    assert f"at most {MAX_SECONDS:g}" in text
    assert f"random source ({FUZZ_SEED_BITS} bits)" in text
    assert f"the runner waits at most {DONE_WAIT_S:g} second for it to exit" in text
    assert f"is quoted to its first {QUOTED_CHARS} characters" in text
    assert f"is at most {KEPT_VALUE_CHARS:,} characters long" in text
    assert f"names {MAX_LISTING_WARNINGS} such listings one by one" in text
    assert f"PROTO-REPORT-1: the first {QUOTED_CHARS} characters of the name" in text
    assert f"({', '.join(f'`{member}`' for member in REPORTED_IMPLEMENTATION)}), as sent" in text
    for signum in INTERRUPTING_SIGNALS:
        assert f"{exit_code(signum.name)} for {signum.name}" in text


def test_a_duplicate_reply_during_fuzz_replaces_the_reported_result(tmp_path: Path) -> None:
    """PROTO-RUN-4, PROTO-SIG-1: fuzz results are reported as they come (so that an interrupted run
    keeps them), and a later duplicate reply still replaces the result it blames."""
    run = Run(tmp_path)
    faulty = f"{sys.executable} {ADAPTERS / 'faulty_adapter.py'} duplicate fuzz-1-3 {tmp_path / 'once'}"
    code, report, output = run("--adapter", faulty, "--machine", "wake-gate", "--fuzz", "5", "--seed", "1",
                               "--window", "1", "--shrink-seconds", "5")
    assert code == 1 and report is not None, output
    assert [r["id"] for r in report["results"]] == [f"wake-gate/fuzz-1-{n}" for n in range(1, 6)]
    blamed = outcome(report, "wake-gate/fuzz-1-3")
    assert blamed["outcome"] == "error" and blamed["detail"].startswith("duplicate-reply"), blamed
    assert report["totals"]["error"] == 1 and report["totals"]["pass"] == 4


def test_an_error_of_the_runners_own_is_reported_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """PROTO-CLI-1: a bug of inboxspec's own is exit 2 and a JSON report, never a traceback."""
    from inboxspec.cli import main
    from inboxspec.conformance import runner

    def broken(directories: Any) -> Any:
        raise RuntimeError("the case loader broke")

    monkeypatch.setattr(runner, "load_cases", broken)
    code = main(["conform", "--adapter", REFERENCE, "--json"])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err
    report = json.loads(captured.out)
    assert report["ok"] is False
    assert report["unusable"] == "internal error: RuntimeError: the case loader broke"


def test_an_error_of_the_runners_own_ends_no_matrix_in_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """As conform's: a bug of inboxspec's own (or one an adapter drives it into) is exit 2 and one
    escaped line, never a traceback."""
    from inboxspec.cli import main
    from inboxspec.conformance import matrix

    def broken(commands: Any, args: Any) -> Any:
        raise RuntimeError("the matrix broke\n\x1b[2J")

    monkeypatch.setattr(matrix, "run_matrix", broken)
    code = main(["matrix", "--adapter", REFERENCE])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err and captured.out == ""
    assert captured.err == "inboxspec matrix: internal error: RuntimeError: the matrix broke\\x0a\\x1b[2J\n"


def test_a_second_signal_while_the_run_ends_is_ignored(tmp_path: Path) -> None:
    """PROTO-SIG-1: the end of an interrupted run (here a leftover that ignores TERM holds it for
    the grace) is not cut short by a second signal: the report is still written."""
    run = Run(tmp_path)
    hanging = tmp_path / "hanging"
    process = subprocess.Popen(
        run.argv("--adapter", run.hostile("--spawn=ignores-term", "--on-trigger=hang",
                                          f"--hanging={hanging}"), *CASES_WITH_TRIGGER),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run.env)
    _wait_for(hanging, 60)
    process.send_signal(signal.SIGTERM)
    time.sleep(0.3)  # within the kill grace of the leftover
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 143 and "Traceback" not in stderr, stderr
    report = _report(stdout)
    assert report is not None and report["interrupted"] == "SIGTERM", stdout
    assert run.survivors() == []


NODE_ADAPTER = Path(__file__).resolve().parent.parent / "conformance" / "ports" / "node" / "adapter.mjs"


@pytest.mark.parametrize("adapter", ["python", "node"])
def test_each_example_adapter_ends_when_its_stdin_closes(adapter: str) -> None:
    """The adapter guide's *What the runner cannot promise*: where the runner cannot set the
    parent-death signal (PROTO-PROC-4), a runner killed outright ends its adapter only by closing its
    stdin, and an adapter owes an exit within 2 seconds then: both example adapters exit, at once
    and with status 0, mid-run (after ``start``, no ``stop`` sent)."""
    if adapter == "node" and shutil.which("node") is None and not os.environ.get("CI"):
        pytest.skip("node is not installed")
    node = [shutil.which("node") or "node", str(NODE_ADAPTER)]
    command = REFERENCE.split() if adapter == "python" else node
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"cmd": "start", "version": PROTOCOL_VERSION}) + "\n")
    process.stdin.flush()
    assert "implementation" in json.loads(process.stdout.readline())
    process.stdin.close()
    try:
        assert process.wait(timeout=2 + 1) == 0  # the guide's 2 seconds, and one for a loaded machine
    finally:
        process.kill()


def test_a_runner_killed_outright_takes_its_adapter_with_it_even_one_deaf_to_stdin(tmp_path: Path) -> None:
    """PROTO-PROC-4: an adapter that never reads its stdin again (here: hung on a case) and ignores
    TERM does not outlive a runner killed outright: the kernel KILLs it at once (Linux: the
    parent-death signal), well before the warden's KILL, which comes after the grace."""
    if sys.platform != "linux":
        pytest.skip("the parent-death signal is Linux's")
    run = Run(tmp_path)
    hanging = tmp_path / "hanging"
    adapter = run.hostile("--on-trigger", "hang", f"--hanging={hanging}", "--ignore-term")
    started, process = _hung_run(run, adapter, hanging, *CASES_WITH_TRIGGER)
    process.kill()
    process.wait(timeout=30)
    deadline = time.monotonic() + KILL_GRACE_S / 2  # at once: the warden's TERM it ignores
    while _running(started, None) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _running(started, None), "the adapter outlived its runner's KILL"
    while run.token_holders() and time.monotonic() < deadline + 2:  # the warden, its work done, exits
        time.sleep(0.02)
    assert run.survivors() == []


def test_the_warden_ends_what_a_runner_killed_outright_leaves(tmp_path: Path) -> None:
    """PROTO-PROC-5: the runner KILLed mid-case, its warden ends the adapter's tree and removes the
    run's fixture root, as the runner's own end would have; what stays is the one kind the guide
    says a KILL of the runner leaves: a daemon that left the session and cleared its token, whose
    adoptive parent the runner was."""
    run = Run(tmp_path)
    hanging = tmp_path / "hanging"
    adapter = run.hostile(*EVERY_LEFTOVER, f"--trigger={WRITER_TRIGGER}", "--on-trigger=hang",
                          f"--hanging={hanging}")
    _, process = _hung_run(run, adapter, hanging, "--machine", "writer-proofs", "--cases", str(WRITER_CASES))
    assert run.fixture_dirs(), "the hanging case has its fixture directory"
    os.killpg(process.pid, signal.SIGKILL)  # its whole group, as `timeout -s KILL` does: not the warden's
    process.wait(timeout=30)
    deadline = time.monotonic() + 2 * KILL_GRACE_S + 3  # TERM, the grace, KILL; and a loaded machine
    while (run.fixture_dirs() or len(_alive_records(run)) > 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run.fixture_dirs() == []
    assert [kind for _, kind in _alive_records(run)] == ["daemon"]
    assert [entry.split()[1] for entry in run.survivors()] == ["(daemon)"]


def _hung_run(run: Run, adapter: str, hanging: Path, *args: str) -> tuple[int, subprocess.Popen[bytes]]:
    """A ``conform`` subprocess whose adapter hangs on a case: the adapter's pid, and the run."""
    process = subprocess.Popen(run.argv("--adapter", adapter, "--timeout", "60", *args),
                               start_new_session=True,  # a group of its own, for a test to KILL
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=run.env)
    deadline = time.monotonic() + 60
    while not hanging.exists():
        assert process.poll() is None, "the run ended before its adapter hung"
        assert time.monotonic() < deadline, "the adapter never reached its trigger"
        time.sleep(0.01)
    adapters = [pid for pid in run.token_holders()
                if pid != process.pid and Path(f"/proc/{pid}/cmdline").read_bytes().find(b"hostile") >= 0
                and os.getsid(pid) == pid]
    assert len(adapters) == 1, adapters
    return adapters[0], process


def _alive_records(run: Run) -> list[tuple[int, str]]:
    return [(pid, kind) for pid, start, kind in _records(run.record) if _running(pid, start)]


def test_the_parent_death_signal_is_set_only_from_the_main_thread() -> None:
    """PROTO-PROC-4: Linux sends the signal when the starting *thread* ends, so an adapter started
    from another thread would be KILLed when that thread ends, its run still going: none is set."""
    if sys.platform != "linux":
        pytest.skip("the parent-death signal is Linux's")
    assert process_tree.killed_with_this_thread() is not None
    off_main: list[object] = []
    thread = threading.Thread(target=lambda: off_main.append(process_tree.killed_with_this_thread()))
    thread.start()
    thread.join()
    assert off_main == [None]


def test_ctrl_c_outside_a_run_is_a_message_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """PROTO-SIG-1: SIGINT before the run has installed its handlers (reading the case files, say)."""
    from inboxspec.cli import main
    from inboxspec.conformance import runner

    def interrupted(directories: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "load_cases", interrupted)
    code = main(["conform", "--adapter", REFERENCE, "--json"])
    captured = capsys.readouterr()
    assert code == 130 and "Traceback" not in captured.err
    assert json.loads(captured.out)["interrupted"] == "SIGINT"


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds: Linux 5.3 and Python 3.9 on")
def test_a_process_found_is_signalled_only_while_its_pid_is_still_its_own() -> None:
    """``process_tree.signal_process``: a pid whose process started at another time than the scan
    saw is another process's now (given the pid after the scan), and is not signalled."""
    import dataclasses

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        info = process_tree.process_info(child.pid)
        assert info is not None and info.started > 0
        process_tree.signal_process(dataclasses.replace(info, started=info.started - 1), signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=0.5)  # not signalled: a later process's, as far as it can tell
        process_tree.signal_process(info, signal.SIGTERM)
        assert child.wait(timeout=10) == -signal.SIGTERM
        # Gone (collected): no error, no signal to anyone.
        process_tree.signal_process(info, signal.SIGTERM)
    finally:
        child.kill()
        child.wait()


def _three_foreign_cases(tmp_path: Path) -> Path:
    step = {"event": "tick", "args": {"now_ms": 0}, "expect": {}}
    cases = [{"id": f"wake-gate/probe-{n}", "description": f"A probe, {n}", "requirements": ["WAKE-IF-1"],
              "config": {}, "steps": [step]} for n in range(3)]
    path = tmp_path / "probe.json"
    path.write_text(json.dumps({"machine": "wake-gate", "cases": cases}, indent=2) + "\n", encoding="utf-8")
    return path


def test_a_signal_while_the_cases_are_checked_ends_the_run_as_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-SIG-1 before any adapter starts: a signal that comes while the cases are checked ends the
    check at the next case and the run as interrupted (exit 128 + its number), even when the check
    found a problem meanwhile. It was recorded and then lost: the run went on checking a large file
    for as long as that took, and ended with the problem's exit 2."""
    from inboxspec.conformance import interface_lint
    from tests.in_process import run_command

    checked: list[str] = []
    real = interface_lint.case_instance

    def signalled(case: Any) -> Any:
        checked.append(case.id)
        os.kill(os.getpid(), signal.SIGTERM)  # recorded by the run's handler, as one from outside
        return real(case)

    monkeypatch.setattr(interface_lint, "case_instance", signalled)
    done = run_command("conform", "--adapter", REFERENCE, "--cases", str(_three_foreign_cases(tmp_path)))
    assert done.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM before any case ran" in done.stderr
    assert checked == ["wake-gate/probe-0"]

    from inboxspec.conformance import runner
    from inboxspec.conformance.casefiles import CaseFileError

    def found_a_problem(*_args: Any, **_kwargs: Any) -> list[str]:
        os.kill(os.getpid(), signal.SIGTERM)
        raise CaseFileError("probe.json: a problem found as the signal came")

    monkeypatch.setattr(runner, "load_cases", found_a_problem)
    done = run_command("conform", "--adapter", REFERENCE, "--cases", str(_three_foreign_cases(tmp_path)))
    assert done.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM before any case ran" in done.stderr


@pytest.mark.parametrize("json_report", [False, True], ids=["text", "json"])
def test_a_signal_while_the_report_is_written_lets_it_finish_then_ends_the_run_as_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_report: bool) -> None:
    """PROTO-REPORT-2: a signal that comes while the report is written was recorded and lost: the
    run exited 0 (or 2 after problems) as if none had come. The report is still written whole."""
    from inboxspec.conformance import compare, runner
    from tests.in_process import run_command

    writer = "print_json" if json_report else "print_report"
    monkeypatch.setattr(runner, writer, signalled_after(getattr(runner, writer)))
    as_json = ["--json"] if json_report else []
    done = run_command("conform", "--adapter", REFERENCE, *WAKE_GATE, "--run", "wake-gate/a*", *as_json)
    assert done.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM while the report was written" in done.stderr
    if json_report:
        report = checked_report(json.loads(done.stdout))
        # The report is of the run as it ended, before the signal: whole, and a pass.
        assert report["ok"] is True and report["interrupted"] is None
        assert report["totals"]["pass"] == len(report["results"]) > 0
    else:
        assert "conform: ok" in done.stdout

    # The problems of an unusable run are its report (exit 2 without the signal).
    if not json_report:
        monkeypatch.setattr(runner, "message_lines", signalled_after(compare.message_lines))
    done = run_command("conform", "--adapter", REFERENCE, "--cases", str(_three_foreign_cases(tmp_path)),
                       *as_json)
    assert done.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM while the report was written" in done.stderr
    assert "is not one of" in done.stderr  # the problem, reported whole first
    if json_report:
        assert "is not one of" in checked_report(json.loads(done.stdout))["unusable"]


def signalled_after(function: Any) -> Any:
    """``function``, sending the process SIGTERM before each call (recorded by a run's handler, as one
    from outside)."""
    def signalled(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        return function(*args, **kwargs)
    return signalled



def test_a_reader_that_the_same_signal_ended_ends_the_run_as_interrupted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C on a pipeline ends the report's reader too: the runner's write then fails, and the run
    ended as a report that could not be written (exit 2), the signal lost."""
    from inboxspec.conformance import runner
    from tests.in_process import run_command

    def reader_gone(*_args: Any, **_kwargs: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # recorded by the run's handler, as one from outside
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(runner, "print_json", reader_gone)
    done = run_command("conform", "--adapter", REFERENCE, *WAKE_GATE, "--run", "wake-gate/a*", "--json")
    assert done.returncode == 128 + signal.SIGINT
    assert done.stderr.endswith("inboxspec conform: interrupted by SIGINT while the report was written: "
                                "[Errno 32] Broken pipe\n")

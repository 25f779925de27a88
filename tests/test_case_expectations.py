"""`inboxspec cases expect`: expected outputs rewritten from the reference where the model agrees."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.cli import main
from inboxspec.conformance import expectations, interface_lint
from inboxspec.conformance.casefiles import MAX_CASE_FILE_BYTES, bundled_cases_dir, load_cases, read_case_file
from inboxspec.machines.sessions import CaseBounds, CaseTooSlow, bounded_by, bounded_outputs

SOURCE = bundled_cases_dir() / "wake-gate" / "cadence.json"


def _stale_copy(tmp_path: Path) -> tuple[Path, str, str]:
    """A copy of a bundled file with one expected streak changed; (path, original, stale text)."""
    original = SOURCE.read_text(encoding="utf-8")
    data = json.loads(original)
    step = next(s for c in data["cases"] for s in c["steps"] if "streak" in s["expect"])
    step["expect"]["streak"] += 7
    stale = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    assert stale != original
    path = tmp_path / "cadence.json"
    path.write_text(stale, encoding="utf-8")
    return path, original, stale


def test_a_stale_expectation_is_rewritten_and_nothing_else(tmp_path: Path) -> None:
    path, original, _stale = _stale_copy(tmp_path)
    assert main(["cases", "expect", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == original


def test_check_reports_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _original, stale = _stale_copy(tmp_path)
    assert main(["cases", "expect", "--check", str(path)]) == 1
    assert path.read_text(encoding="utf-8") == stale
    assert "expectations would change" in capsys.readouterr().out
    assert main(["cases", "expect", "--check", str(SOURCE)]) == 0


def test_a_model_that_disagrees_stops_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _original, stale = _stale_copy(tmp_path)
    entry = machines.get("wake-gate")

    def drifted_model(config: Any, steps: Any) -> dict[str, Any]:
        answer = entry.run_model_case(config, steps)
        if answer.get("outputs"):
            answer["outputs"][-1] = {**answer["outputs"][-1], "streak": -1}
        return answer

    drifted = dataclasses.replace(entry, run_model_case=drifted_model)
    monkeypatch.setitem(machines.REGISTRY, "wake-gate", drifted)
    with pytest.raises(expectations.ExpectationError, match="the model differs from the reference"):
        expectations.rewrite(path)
    assert main(["cases", "expect", str(path)]) == 2
    assert path.read_text(encoding="utf-8") == stale


def test_a_file_in_another_layout_is_refused_not_reformatted(tmp_path: Path) -> None:
    path = tmp_path / "cadence.json"
    text = json.dumps(json.loads(SOURCE.read_text(encoding="utf-8")), indent=4) + "\n"
    path.write_text(text, encoding="utf-8")
    assert main(["cases", "expect", str(path)]) == 2
    assert path.read_text(encoding="utf-8") == text


def test_a_lone_surrogate_stays_escaped(tmp_path: Path) -> None:
    source = bundled_cases_dir() / "idle-subscriptions" / "label.json"
    text = source.read_text(encoding="utf-8")
    assert "\\ud800" in text
    path = tmp_path / "label.json"
    path.write_text(text, encoding="utf-8")
    assert expectations.rewrite(path).text == text


def test_every_bundled_file_is_in_a_layout_the_command_writes_back() -> None:
    files = sorted(p for p in bundled_cases_dir().rglob("*.json"))
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        expectations.layout(text, json.loads(text))  # raises for a layout it would reformat


def _hostile(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / "hostile.json"
    data = json.loads(SOURCE.read_text(encoding="utf-8"))
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-zero":
        path.symlink_to("/dev/zero")
    elif kind == "too-large":
        path.write_bytes(b" " * (MAX_CASE_FILE_BYTES + 1))
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "unknown-machine":
        path.write_text(json.dumps({**data, "machine": "nosuch"}, indent=2) + "\n")
    else:  # an event the wake gate does not have
        data["cases"][0]["steps"][0]["event"] = "nosuch"
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["fifo", "link-to-zero", "too-large", "deep", "unknown-machine",
                                  "unknown-event"])
def test_a_file_that_cannot_be_read_or_linted_is_refused_with_a_line(
        kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each was a traceback (exit 1), a hang, or memory without bound: the file was read and parsed
    before the case reader's checks, and its cases were never linted."""
    path = _hostile(kind, tmp_path)
    assert main(["cases", "expect", "--check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"inboxspec cases expect: {path}: ") and "Traceback" not in err


def _questions(tmp_path: Path) -> Path:
    """A new case whose expectations are to be filled in: a step sent with a wrong-typed argument on
    purpose, then a valid one, each with ``"expect": {}``."""
    case = {"id": "wake-gate/probe-a-batch-that-is-no-list", "description": "A batch that is no list",
            "requirements": ["WAKE-IF-1"], "config": {},
            "steps": [{"event": "decide", "args": {"batch": 5, "now_ms": 0}, "expect": {}},
                      {"event": "decide", "args": {"batch": [], "now_ms": 1}, "expect": {}}]}
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"machine": "wake-gate", "cases": [case]}, indent=2) + "\n", encoding="utf-8")
    return path


def test_a_step_sent_with_bad_arguments_is_answered_not_refused(tmp_path: Path) -> None:
    """Before its output is known, a step with a wrong-typed argument is not yet an error step, so the
    interface lint refused the file and its author had to guess the error's shape; now the reference
    answers it, and the file it writes passes the lint."""
    path = _questions(tmp_path)
    assert main(["cases", "expect", str(path)]) == 0
    steps = json.loads(path.read_text(encoding="utf-8"))["cases"][0]["steps"]
    assert steps[0]["expect"] == {"error": "invalid_batch", "streak": 0}
    assert steps[1]["expect"]["streak"] == 1 and "error" not in steps[1]["expect"]
    assert main(["cases", "lint", str(tmp_path)]) != 0  # the probe cites one requirement of many ...
    assert interface_lint.problems(read_case_file(path)) == []  # ... but its steps fit the interface


def test_outputs_the_interface_does_not_define_write_nothing(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The outputs written are linted as the file they make: an output field the interface data does
    not define (a reference that drifted from it) stops the file."""
    path = _questions(tmp_path)
    before = path.read_text(encoding="utf-8")
    entry = machines.get("wake-gate")

    def drifted(config: Any, steps: Any) -> dict[str, Any]:
        answer = entry.run_case(config, steps)
        answer["outputs"][-1] = {**answer["outputs"][-1], "mood": "sleepy"}
        return answer

    monkeypatch.setitem(machines.REGISTRY, "wake-gate", dataclasses.replace(entry, run_case=drifted))
    with pytest.raises(expectations.ExpectationError, match=r"nothing written: with the reference's outputs "
                       r"it does not pass `inboxspec cases lint`: .*'mood' was unexpected"):
        expectations.rewrite(path)
    assert main(["cases", "expect", str(path)]) == 2
    assert path.read_text(encoding="utf-8") == before


def _peer_file(tmp_path: Path, cases: int, sends: int, extra: dict[str, Any] | None = None) -> Path:
    """Peer delivery cases whose every output repeats the whole held buffer: outputs that grow with
    the square of the steps, from a small file."""
    made = [{"id": f"peer-delivery/probe-held-{n}", "description": f"Held messages pile up, take {n}",
             "requirements": ["PEER-HOLD-1"], "config": {"held_cap": 2**53 - 1, "setting": "hold"},
             "steps": [{"event": "send_message", "args": {"sender": f"s{i}"}, "expect": {}}
                       for i in range(sends)],
             **(extra or {})} for n in range(cases)]
    path = tmp_path / "peer.json"
    text = json.dumps({"machine": "peer-delivery", "cases": made}, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_files_outputs_are_bounded_as_a_case_file_is(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A small file whose outputs come to more than a case file may hold is refused as its cases run,
    before the next case adds to the memory (a 386 KB file of three such cases took 2.65 GB), and a
    file whose outputs fit compact but not as written is refused rather than written (a 107 KB file
    was rewritten to 65 MB that no command reads back); nothing is written either way."""
    path = _peer_file(tmp_path, cases=3, sends=30)
    before = path.read_text(encoding="utf-8")
    written = len(expectations.rewrite(path).text.encode("utf-8"))
    one_case = written // 3
    monkeypatch.setattr(expectations, "MAX_CASE_FILE_BYTES", one_case)  # room for about one case's outputs
    with pytest.raises(expectations.ExpectationError,
                       match=r"^peer-delivery/probe-held-[12]: the outputs of this case pass [0-9,]+ bytes "
                             r"of JSON at step [0-9]+ of 30: past the .* bytes a case file holds "
                             r"\(PROTO-CASES-2\), with the outputs of the cases before it in the file; "
                             r"nothing written$"):
        expectations.rewrite(path)
    monkeypatch.setattr(expectations, "MAX_CASE_FILE_BYTES", written - 1)  # the outputs fit, compact
    with pytest.raises(expectations.ExpectationError,
                       match=rf"^nothing written: with the reference's outputs it would be {written:,} "
                             rf"bytes, past the {written - 1:,} a case file holds \(PROTO-CASES-2\)$"):
        expectations.rewrite(path)
    assert main(["cases", "expect", str(path)]) == 2
    assert path.read_text(encoding="utf-8") == before


@contextlib.contextmanager
def _a_timer_of_someone_elses() -> Iterator[list[int]]:
    """SIGPROF's timer set, and handled, by another: the deadline is then checked between steps alone
    (``sessions._interrupted_at``). Yields the signals the other's handler took."""
    fired: list[int] = []
    previous = signal.signal(signal.SIGPROF, lambda number, _frame: fired.append(number))
    try:
        signal.setitimer(signal.ITIMER_PROF, 30)
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def test_a_case_past_its_time_is_refused_between_steps(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """cases expect runs the reference in its own process, so it keeps to a deadline per case as conform
    does (a 5 MB file of host reminders, each counted over all the others, ran past two minutes); between
    steps where it cannot set the alarm that cuts a step off."""
    path = _peer_file(tmp_path, cases=1, sends=3)
    before = path.read_text(encoding="utf-8")
    with _a_timer_of_someone_elses():
        assert main(["cases", "expect", "--timeout", "1e-9", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"inboxspec cases expect: {path}: peer-delivery/probe-held-0: this case was still running "
                   f"at its deadline, after step 1 of 3 (--timeout 1e-09 s); nothing written\n")
    assert path.read_text(encoding="utf-8") == before
    assert main(["cases", "expect", "--timeout", "0", str(path)]) == 2  # refused as an argument
    assert "--timeout: must be a number of seconds above 0" in capsys.readouterr().err
    assert main(["cases", "expect", str(path)]) == 0  # at the default, the case runs


def test_one_step_past_the_deadline_is_cut_off_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The deadline bounds a single step too, not only the time between steps: one step of a case file
    (a peer delivery recipient_suffix over 60,000 recipients, say) ran for 18 s past a --timeout of 2,
    and a larger one for hours. Here the reference's send runs for a minute unless interrupted."""
    from inboxspec.impl.peer_delivery import PeerDelivery

    def a_minute(*_args: Any, **_kwargs: Any) -> Any:
        end = time.monotonic() + 60
        while time.monotonic() < end:  # busy, as a quadratic loop is: no system call to return from
            pass
        raise AssertionError("the step was not interrupted at the deadline")

    monkeypatch.setattr(PeerDelivery, "send_message", a_minute)
    path = _peer_file(tmp_path, cases=1, sends=1)
    before = path.read_text(encoding="utf-8")
    (tmp_path / "next").mkdir()
    after = _peer_file(tmp_path / "next", cases=1, sends=0)
    after_before = after.read_text(encoding="utf-8")
    previous = signal.getsignal(signal.SIGPROF)
    assert main(["cases", "expect", "--timeout", "0.5", str(path), str(after)]) == 2
    # A step cut off may leave what it was changing half changed in this process (a shared fixture's
    # paths still swapped), so the files after it are not read: their expectations would come from that.
    assert capsys.readouterr().err == (
        f"inboxspec cases expect: {path}: peer-delivery/probe-held-0: this case was still running at its "
        f"deadline, in its first step or the build of its config (--timeout 0.5 s); nothing written\n"
        f"inboxspec cases expect: not read, as a case was cut off inside a step: {after}\n")
    assert path.read_text(encoding="utf-8") == before
    assert after.read_text(encoding="utf-8") == after_before
    # The alarm is put back as it was found: no timer left running, the handler restored.
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGPROF) is previous


def test_a_step_that_spends_its_time_in_system_calls_is_cut_off_too() -> None:
    """The alarm counts processor time in system mode as well as in user mode: a step that reads or lays
    out files spends most of its time in the kernel, and under the virtual timer (user time alone) such a
    step ran on for many times its deadline."""

    def reading(step: Mapping[str, Any]) -> dict[str, Any]:
        end = time.monotonic() + 20
        with open("/dev/zero", "rb", buffering=0) as zeros:
            while time.monotonic() < end:  # almost all of it in the kernel, filling the buffer
                zeros.read(1 << 22)
        raise AssertionError("the step was not interrupted at the deadline")

    began = time.monotonic()
    with pytest.raises(CaseTooSlow, match=r"^this case was still running at its deadline, in its first"), \
            bounded_by(CaseBounds(deadline=time.monotonic() + 0.5)):
        bounded_outputs([{"n": 1}], reading)
    assert time.monotonic() - began < 10


def test_the_deadline_inside_a_step_leaves_a_timer_it_finds_alone() -> None:
    """A processor-time timer someone else set (a sampling profiler's, say) is neither replaced nor cancelled:
    the deadline is then checked between steps alone."""
    with _a_timer_of_someone_elses() as fired:
        with bounded_by(CaseBounds(deadline=time.monotonic() + 0.01)):
            time.sleep(0.05)
        assert 0 < signal.getitimer(signal.ITIMER_PROF)[0] <= 30.1  # the system rounds it to its ticks
        assert fired == []


@pytest.mark.parametrize("machine", ["wake-gate", "writer-proofs"])
def test_the_reference_and_the_model_keep_the_deadline(machine: str) -> None:
    """Each of the two case runners is held to the deadline between its steps (where no alarm cuts a
    step off), and inside them: the model runs only a case the reference answered in time, but may be
    slower (the writer proofs have runners of their own on both sides)."""
    case = next(c for c in load_cases([bundled_cases_dir() / machine])
                if len(c.steps) >= 2 and c.expect_config_error is None
                and not any("error" in step["expect"] for step in c.steps))
    entry = machines.get(machine)
    for run in (entry.run_case, entry.run_model_case):
        assert run(case.config, case.inputs) == case.expected
        with _a_timer_of_someone_elses(), bounded_by(CaseBounds(deadline=0.0)), \
                pytest.raises(CaseTooSlow, match=r"after step 1 of "):
            run(case.config, case.inputs)
        # With the alarm as well, the first to notice tells: the alarm inside a step, or the check after it.
        with pytest.raises(CaseTooSlow, match=r"at its deadline, (in |after step 1 of )"), \
                bounded_by(CaseBounds(deadline=0.0)):
            run(case.config, case.inputs)


def test_a_step_cut_off_is_named_by_its_number() -> None:
    """The message of a case cut off inside a step names the step, as the steps done say."""

    def second_step_spins(step: Mapping[str, Any]) -> dict[str, Any]:
        while step["n"] == 2:  # until the alarm
            pass
        return {}

    with pytest.raises(CaseTooSlow, match=r"^this case was still running at its deadline, in step 2 of 3$"), \
            bounded_by(CaseBounds(deadline=time.monotonic() + 0.5)):
        bounded_outputs([{"n": 1}, {"n": 2}, {"n": 3}], second_step_spins)


def test_a_config_the_reference_refuses_or_builds_after_all(tmp_path: Path) -> None:
    """A case's expected config error and its steps are checked against the reference's answer both
    ways: a case with steps whose config the reference refuses is refused (it was written with both,
    which cases lint refuses), and so is one without steps that expects a config error the reference
    does not give (it was reported changed at every run, and never written)."""
    refused = tmp_path / "host.json"  # a part config is an object to the interface lint: the host checks it
    case = {"id": "host/probe-a-bad-part-config", "description": "A gate config the gate refuses",
            "requirements": ["HOST-IF-1"], "config": {"wake_gate": {"max_streak": -1}},
            "steps": [{"event": "tick", "expect": {}}]}
    refused.write_text(json.dumps({"machine": "host", "cases": [case]}, indent=2) + "\n", encoding="utf-8")
    with pytest.raises(expectations.ExpectationError,
                       match=r"^host/probe-a-bad-part-config: the reference refuses its config "
                             r"\(invalid_config\), so no step runs: a case that expects a config error has "
                             r"no steps; nothing written$"):
        expectations.rewrite(refused)
    builds = _peer_file(tmp_path, cases=1, sends=0, extra={"expect_config_error": "invalid_config"})
    before = builds.read_text(encoding="utf-8")
    with pytest.raises(expectations.ExpectationError, match=r"^nothing written: with the reference's outputs "
                       r"it does not pass `inboxspec cases lint`: .*probe-held-0: a case has steps, or "
                       r"expect_config_error and no steps"):
        expectations.rewrite(builds)
    assert main(["cases", "expect", "--check", str(builds)]) == 2
    assert builds.read_text(encoding="utf-8") == before


@pytest.mark.parametrize("meanwhile", ["file-saved", "folder-made-a-link"])
def test_a_file_or_folder_changed_while_the_cases_run_is_not_written(
        meanwhile: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Found by an attack on the commands: the file was read twice and written back by its name minutes
    later, so an edit saved meanwhile was lost without a word (or gave a traceback, or one version's
    outputs under the other's steps), and a folder made a link meanwhile took the write outside it.
    The command reads the file once and writes nothing when the file or its folder changed."""
    folder = tmp_path / "cases"
    folder.mkdir()
    path, _original, stale = _stale_copy(folder)
    elsewhere = tmp_path / "elsewhere"
    entry = machines.get("wake-gate")
    changed: list[bool] = []

    def run_case(config: Any, steps: Any) -> Any:
        if not changed:  # once, while the first case runs
            changed.append(True)
            if meanwhile == "file-saved":
                path.write_text(stale + " ", encoding="utf-8")  # an editor's save
            else:
                folder.rename(elsewhere)
                folder.symlink_to(elsewhere)
        return entry.run_case(config, steps)

    monkeypatch.setitem(machines.REGISTRY, "wake-gate", dataclasses.replace(entry, run_case=run_case))
    assert main(["cases", "expect", str(path)]) == 2
    captured = capsys.readouterr()
    assert "nothing written: it, or the folder it is in, changed while its cases ran" in captured.err
    assert "expectations changed" not in captured.out
    kept = elsewhere / path.name if meanwhile == "folder-made-a-link" else path
    assert kept.read_text(encoding="utf-8") == (stale + " " if meanwhile == "file-saved" else stale)

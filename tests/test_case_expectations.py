"""`inboxspec cases expect`: expected outputs rewritten from the reference where the model agrees."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.cli import main
from inboxspec.conformance import expectations, interface_lint
from inboxspec.conformance.casefiles import MAX_CASE_FILE_BYTES, bundled_cases_dir, read_case_file

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

"""`inboxspec check`, the main job: green on the tree, red when the reference or a model is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.check import check_configurations, run_check
from inboxspec.checker.explore import available_cores
from inboxspec.cli import main
from inboxspec.impl import wake_gate as impl
from inboxspec.model.wake_gate import WakeGateChart
from tests.session_shared import SharedExplorations


def test_check_is_green_and_reports_every_part(explorations: SharedExplorations) -> None:
    """The main job's report over every machine, from the session's shared explorations (the
    command line's own report is tested on one machine below; CI runs ``inboxspec check`` whole)."""
    explorations.prefetch(check_configurations(), available_cores())
    report = json.loads(json.dumps(run_check(explorations=explorations)))  # as `--json` prints it
    assert report["ok"] is True
    tally = report["machines"]["wake-gate"]
    assert tally["passed"] == tally["cases"] > 70 and tally["requirements"] > 30
    assert report["explorer"]["explorations"]["wake-gate"]["distinct_states"] > 0
    assert report["explorer"]["findings"]["wake-gate"] == {f"WAKE-F{n}": True for n in range(1, 5)}
    # Each part named, so that a red check says which: spec sections, generated
    # cases, manifests, findings and refinement for every registered machine.
    assert report["spec_drift"] == [], "run `inboxspec spec generate`"
    assert report["explorer"]["problems"] == []
    assert set(report["machines"]) == set(report["explorer"]["explorations"]) == set(machines.names())


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


def test_check_of_one_machine_reports_that_machine_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--machine", "wake-gate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["machines"]) == {"wake-gate"}
    assert set(report["explorer"]["explorations"]) == {"wake-gate"}


def test_check_of_an_unknown_machine_cannot_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--machine", "no-such-machine"]) == 2
    assert "unknown machine" in capsys.readouterr().err

"""Generated cases: the coverage explorations fill in what the default bounds leave unreached.

A variant of the toy lease (``tests/toy_machine.py``) keeps ``renew`` out of
its alphabet at its default bounds, as the host keeps its hand and reminders
out, and declares a coverage exploration that lets it in.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.check import run_check
from inboxspec.checker import refine, spec_sections
from inboxspec.checker.explore import Explorations
from inboxspec.checker.generated_cases import generate, sources, write_or_check
from inboxspec.checker.manifest import write_manifest
from inboxspec.machines.frame import Action, Bounds
from tests import toy_machine


class RenewBoundedLease(toy_machine.LeaseExplorer):
    """The toy lease with a ``renew`` bound: at 0 (the default) nobody renews."""

    default_bounds: Mapping[str, str] = {"renew": "0"}
    coverage_bounds: tuple[Mapping[str, str], ...] = ({"renew": "1"},)

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        return {"renew": int({**self.default_bounds, **raw}["renew"])}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        return [a for a in super().alphabet(bounds) if a.event != "renew" or bounds["renew"]]

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        # The bound shows in the config, so that a case tells which exploration it came from.
        return {**super().config(bounds, options), "renew": bounds["renew"]}


class WithoutCoverage(RenewBoundedLease):
    coverage_bounds: tuple[Mapping[str, str], ...] = ()


def register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explorer: Any) -> None:
    entry = replace(toy_machine.make_machine(tmp_path), explorer=explorer)
    monkeypatch.setattr(machines, "REGISTRY", {entry.name: entry})


def by_id(file: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["id"]: case for case in file["cases"]}


def test_a_transition_only_a_coverage_exploration_reaches_gets_a_case(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register(tmp_path, monkeypatch, RenewBoundedLease())
    file, problems = generate("toy-lease", Explorations())
    cases = by_id(file)
    # Renewing a held lease (extend) and a free one (refuse) exist only with renew=1.
    extend, refuse = cases["toy-lease/generated/held-renew-0"], cases["toy-lease/generated/free-renew-0"]
    assert [s["event"] for s in extend["steps"]] == ["acquire", "renew"]
    assert extend["steps"][-1]["expect"] == {"renewed": True}
    assert refuse["steps"] == [{"event": "renew", "expect": {"renewed": False}}]
    assert extend["config"] == refuse["config"] == {"renew": 1}
    # What the default bounds reach keeps its case there, though the coverage exploration reaches it too.
    assert cases["toy-lease/generated/free-acquire-0"]["config"] == {"renew": 0}
    assert cases["toy-lease/generated/held-advance-0"]["config"] == {"renew": 0}
    # A coverage exploration runs at the default options: a refused renewal of a held lease needs
    # cap_renewals too, so it stays unreached, and is said to be.
    assert "toy-lease/generated/held-renew-1" not in cases
    assert problems == ["toy-lease: no exploration reaches held --renew / refuse_renewal--> held"]


def test_a_machine_without_coverage_bounds_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register(tmp_path / "with", monkeypatch, RenewBoundedLease())
    covered, _ = generate("toy-lease", Explorations())
    register(tmp_path / "without", monkeypatch, WithoutCoverage())
    assert sources("toy-lease")[1] == []
    memo = Explorations()
    file, problems = generate("toy-lease", memo)
    # Only the default bounds, with no option and with each option on, are explored ...
    assert memo.runs == 1 + len(WithoutCoverage.options)
    # ... every transition they reach has the very case it has beside a coverage exploration,
    # and the renewals they do not reach have none, each reported.
    assert list(by_id(file).values()) == [case for case in covered["cases"] if case["config"]["renew"] == 0]
    assert not any("renew" in case_id for case_id in by_id(file))
    assert len(problems) == 3 and all("--renew" in problem for problem in problems)


def test_check_runs_each_generated_case_once_a_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `check` replays the case files, then regenerates the generated cases to compare them with the
    # files: the regeneration reads the runs the replay made instead of running them again.
    register(tmp_path, monkeypatch, toy_machine.LeaseExplorer())
    entry = machines.get("toy-lease")
    write_or_check(write=True, only=["toy-lease"])
    write_manifest("toy-lease")
    spec_sections.generate(tmp_path / "spec", write=True)
    runs: Counter[tuple[str, str]] = Counter()

    def counted(side: str, runner: Any) -> Any:
        def run(config: Any, steps: Any) -> Any:
            runs[(side, json.dumps([config, list(steps)], sort_keys=True))] += 1
            return runner(config, steps)
        return run

    monkeypatch.setitem(machines.REGISTRY, "toy-lease", replace(
        entry, run_case=counted("reference", entry.run_case),
        run_model_case=counted("model", entry.run_model_case)))
    # Refinement runs its own sequences, a one-letter generated case among them: left out here.
    monkeypatch.setattr(refine, "refine", lambda name, depth: refine.Refinement(name, depth, {}))
    report = run_check(workers=1)
    assert report["ok"], report
    generated = json.loads(entry.generated_cases.read_text(encoding="utf-8"))["cases"]
    for case in generated:
        inputs = [{k: v for k, v in s.items() if k != "expect"} for s in case["steps"]]
        key = json.dumps([case["config"], inputs], sort_keys=True)
        assert (runs[("reference", key)], runs[("model", key)]) == (1, 1), case["id"]


@pytest.mark.parametrize("planted", ["fifo", "link-to-dev-zero", "linked-directory"])
def test_a_generated_file_that_is_no_regular_file_in_the_case_directory_is_a_problem(
        planted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack on the commands: a FIFO where the generated cases belong hung `check` (the
    main job) and `cases generate`, a link there to /dev/zero filled the memory, and a link in place of
    the `generated` directory had `cases generate` write in the link's target. Each is a problem now,
    named, and nothing is written or read through it."""
    register(tmp_path, monkeypatch, RenewBoundedLease())
    entry = machines.get("toy-lease")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    entry.generated_cases.parent.mkdir(parents=True, exist_ok=True)
    if planted == "fifo":
        os.mkfifo(entry.generated_cases)
    elif planted == "link-to-dev-zero":
        entry.generated_cases.symlink_to("/dev/zero")
    else:
        entry.generated_cases.parent.rmdir()
        entry.generated_cases.parent.symlink_to(elsewhere)
    for write in (False, True):
        problems = write_or_check(write=write, only=["toy-lease"])
        named = entry.generated_cases.parent if planted == "linked-directory" else entry.generated_cases
        assert any(problem.startswith(f"{named}: ") for problem in problems), problems
    assert list(elsewhere.iterdir()) == []
    assert planted == "linked-directory" or not entry.generated_cases.is_file()

"""Explorations on several cores give exactly what one process gives."""

from __future__ import annotations

import pytest

from inboxspec import machines
from inboxspec.checker.explore import Configuration, Exploration, Explorations
from inboxspec.cli import main


def _same(left: Exploration, right: Exploration) -> None:
    assert left.summary() | {"seconds": 0, "states_per_second": 0} == \
        right.summary() | {"seconds": 0, "states_per_second": 0}
    assert left.violations == right.violations and left.coverage == right.coverage
    assert left.lassos == right.lassos
    assert {t.key for t in left.all_transitions} == {t.key for t in right.all_transitions}


def test_a_pool_of_workers_explores_what_the_caller_would() -> None:
    configurations: list[Configuration] = [
        ("wake-gate", {}, {}), ("wake-gate", {}, {"reject_empty_batch": True}), ("writer-proofs", {}, {})]
    with Explorations() as pooled:
        pooled.start(configurations, workers=2)
        assert len(pooled._pending) == 3  # handed to the workers, not run here
        results = [pooled.get(*c) for c in configurations]
        assert pooled.runs == 3
    sequential = Explorations()
    for configuration, result in zip(configurations, results, strict=True):
        _same(result, sequential.get(*configuration))
    assert machines.get("wake-gate")  # the registry is untouched


def test_check_takes_a_worker_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--workers", "0"]) == 2
    assert "positive whole number" in capsys.readouterr().err

"""Explorations on several cores give exactly what one process gives."""

from __future__ import annotations

import pytest

from inboxspec import machines
from inboxspec.checker.explore import (
    Configuration,
    Exploration,
    Explorations,
    available_cores,
    default_workers,
    explore,
)
from inboxspec.checker.parallel import explore_on_workers
from inboxspec.cli import main
from inboxspec.machines.frame import forever_properties


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


@pytest.mark.parametrize("name", sorted(machines.names()))
def test_two_workers_find_exactly_what_one_process_finds(name: str, explorations: Explorations) -> None:
    """Counts, depth, the first violation of each invariant and the first step to each chart
    transition, with the breadth-first prefixes: the same shortest traces, on every machine."""
    entry = machines.get(name)
    configurations: list[dict[str, bool]] = [{}, *({option: True} for option in entry.explorer.options[:1])]
    for options in configurations:
        alone = explorations.get(name, options=options)
        if forever_properties(entry.explorer):
            # The cycle pass needs the whole graph in one process: the search stays in one.
            assert explore(name, options=options, workers=2).lassos == alone.lassos
            continue
        _same(explore_on_workers(name, None, options, 2), alone)


def test_more_workers_than_cores_find_what_one_process_finds(explorations: Explorations) -> None:
    """One worker more than there are cores, so that the levels are cut into other chunks too, on
    the machine with the most states per level (inbox-refresh: 17,280 states in 21 levels)."""
    workers = available_cores() + 1
    _same(explore_on_workers("inbox-refresh", None, None, workers), explorations.get("inbox-refresh"))


def test_explore_takes_a_worker_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "writer-proofs", "--workers", "x"]) == 2
    assert "positive whole number" in capsys.readouterr().err
    assert default_workers("peer-delivery") == 1  # 12,822 states at the default bounds: small
    assert default_workers("peer-delivery", {"held_cap": "3"}) == available_cores()

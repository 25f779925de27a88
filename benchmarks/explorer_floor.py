"""Where an explored step's time goes: the chart's own code against the search around it.

For each machine at its default bounds, the steps of its exploration (every letter offered
in every reachable state, as ``checker/explore.py`` fires them) are taken again in four
cumulative stages, each timed in processor seconds (medians of several samples, the
stages alternating within a sample so that load on the machine hits them alike):

- ``load``: the snapshot written onto the chart's data (``Explorer.load``);
- ``+ fire``: and the letter fired, the chart's own guards and actions
  (``checker/compiled.py``'s generated function);
- ``+ store``: and the state reached stored as a snapshot (``Explorer.store``);
- ``explore``: the whole search (``explore``): the stages above, the seen-set, the
  invariants, coverage and, for a machine with forever-properties, the cycle pass;
- ``search alone``: the whole search again, each step's outcome (the transition fired,
  the snapshot reached, the output) replayed in order from a first search instead of
  taken: everything but the steps. Not cumulative: it is what ``explore`` spends beside
  ``+ store``.

Each is printed as transitions per processor second and as its share of the whole
search. ``+ fire`` less ``load`` is the time of the model charts' own methods, which
the explorer must run (it explores the charts themselves, not a copy): the rate the
search could reach if everything else were free is the rate of ``+ fire``; the rate it
could reach if the steps were free is the rate of ``search alone``. A machine whose search
alone runs below a target rate cannot reach it by faster steps (the host, at about 200k
transitions per processor second against 300k).

The yardstick of ``benchmarks/calibration.py`` follows the table.

Usage: python benchmarks/explorer_floor.py [--samples N] [--machine NAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

from calibration import yardstick_line

from inboxspec import machines
from inboxspec.checker import explore as explore_module
from inboxspec.checker.compiled import take_step
from inboxspec.checker.explore import edges, explore, set_up


def _stages(name: str) -> dict[str, Callable[[], int]]:
    """Per stage, a function that takes every step of the exploration once and returns their count."""
    explorer, _parsed, _chosen, chart, data, actions = set_up(name, None, None)
    bound = [chart.bind(a.event, a.kwargs) for a in actions]
    steps = list(edges(name))  # (pre, letter index), in the search's order: state by state
    load, store = explorer.load, explorer.store

    def loaded() -> int:
        for pre, _index in steps:
            load(data, pre)
        return len(steps)

    def fired() -> int:
        for pre, index in steps:
            load(data, pre)
            bound[index][pre[0]](data)  # type: ignore[index]
        return len(steps)

    def stored() -> int:
        for pre, index in steps:
            load(data, pre)
            store(data, bound[index][pre[0]](data).target)  # type: ignore[index]
        return len(steps)

    def explored() -> int:
        return explore(name).transitions

    outcomes: list[tuple[Any, Any, Any]] = []
    with _steps(recorded_into=outcomes):
        first = explore(name)

    def searched_alone() -> int:
        with _steps(replayed_from=outcomes):
            again = explore(name)
        assert (again.states, again.transitions) == (first.states, first.transitions)
        return again.transitions

    return {"load": loaded, "+ fire": fired, "+ store": stored, "explore": explored,
            "search alone": searched_alone}


def _steps(recorded_into: list[Any] | None = None, replayed_from: list[Any] | None = None) -> Any:
    """While it is entered, the search's every step (``explore``'s ``take_step``, or its step memo's
    ``step`` for a machine with a memo, such as the host's) is recorded, in the order taken, into
    ``recorded_into``; or taken from ``replayed_from``, so recorded, and not fired. (A search takes its
    steps in one order, given the same machine, bounds and options.)

    The search is handed a memo always, this one: its ``step`` is the loop's one call per step taken,
    whether the machine has a memo or not (a memo's own firings are then inside the step recorded)."""
    real_memo = explore_module.search_memo

    def memo(explorer: Any, data: Any, bounds: Any, options: Any, actions: Any) -> Any:
        if replayed_from is not None:
            outcome = iter(replayed_from).__next__

            def step(index: int, pre: Any, fire: Any) -> tuple[Any, Any, Any]:
                return outcome()  # type: ignore[no-any-return]
            return _Memo(step)
        assert recorded_into is not None
        inner = real_memo(explorer, data, bounds, options, actions)
        load, store = explorer.load, explorer.store

        def recorded(index: int, pre: Any, fire: Any) -> tuple[Any, Any, Any]:
            result = take_step(data, pre, fire, load, store) if inner is None \
                else inner.step(index, pre, fire)
            recorded_into.append(result)
            return result
        return _Memo(recorded)
    return mock.patch.object(explore_module, "search_memo", memo)


class _Memo:
    """A step memo whose ``step`` is the function given."""

    def __init__(self, step: Callable[[int, Any, Any], tuple[Any, Any, Any]]) -> None:
        self.step = step


def _cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    began = time.process_time()
    result = run()
    return time.process_time() - began, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--machine", action="append", default=None,
                        help="a machine to measure (repeatable; default: every machine but the host, "
                             "whose exploration takes half a minute a sample)")
    args = parser.parse_args()
    names = args.machine or [n for n in machines.names() if n != "host"]
    print("processor time per stage of an explored step, cumulative (medians of "
          f"{args.samples} samples); rates in transitions per processor second")
    print(f"   {'machine':<20}{'transitions':>12}" + "".join(
        f"{stage:>18}" for stage in ("load", "+ fire", "+ store", "explore", "search alone")))
    for name in names:
        stages = _stages(name)
        seconds: dict[str, list[float]] = {stage: [] for stage in stages}
        counts: dict[str, int] = {}
        for _ in range(args.samples):
            for stage, run in stages.items():
                spent, counts[stage] = _cpu(run)
                seconds[stage].append(spent)
        transitions = counts["explore"]
        assert len(set(counts.values())) == 1, counts  # every stage took the search's steps
        whole = statistics.median(seconds["explore"])
        cells = []
        for stage in stages:
            spent = statistics.median(seconds[stage])
            rate = transitions / spent if spent else float("inf")
            cells.append(f"{rate:>10,.0f} ({spent / whole:>4.0%})")
        print(f"   {name:<20}{transitions:>12,}" + "".join(f"{cell:>18}" for cell in cells))
    print(yardstick_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

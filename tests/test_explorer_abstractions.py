"""Each abstraction an explorer description makes is exact: the states it merges, the chart cannot tell apart.

The inbox-refresh description stores failure counts from ``FAILURES_COLLAPSED``
on as that count (``collapsed_failures``). That is exact only while every count
it merges gives the same next back-off, and only zero is read on its own. The
check below does not trust the formula: in every reachable state of a bounded
exploration, it puts each count of a merged class in turn, fires every letter
on the chart itself, and compares what the chart does (control state, output,
stored successor). A collapse that merges counts the chart tells apart is
reported, as the broken collapse in the last test shows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import cast

import pytest

from inboxspec import machines
from inboxspec.checker.compiled import CompiledChart
from inboxspec.checker.explore import edges
from inboxspec.conformance.compare import canonical
from inboxspec.machines import inbox_refresh
from inboxspec.model.inbox_refresh import MAX_FAILURES

# A cycle of failing jobs, so that reachable states back off (the counts themselves are put in by the check).
FAILING = {"jobs": "unavailable,cleanup", "horizon_ms": "60000"}


def merged_classes(collapse: Callable[[int], int]) -> list[list[int]]:
    classes: dict[int, list[int]] = defaultdict(list)
    for count in range(MAX_FAILURES + 1):
        classes[collapse(count)].append(count)
    return [members for members in classes.values() if len(members) > 1]


def collapse_counterexamples(bounds: dict[str, str]) -> list[str]:
    """What the chart tells apart among failure counts that ``collapsed_failures`` merges."""
    entry = machines.get("inbox-refresh")
    explorer = entry.explorer
    parsed = explorer.parse_bounds(bounds)
    chart = CompiledChart(entry.chart)
    data = chart.blank()
    explorer.constants(data, parsed, {})
    actions = list(explorer.alphabet(parsed))
    fire = [chart.bind(action.event, action.kwargs) for action in actions]
    classes = merged_classes(inbox_refresh.collapsed_failures)
    problems = [f"counts {members} are merged with zero, which the chart reads on its own"
                for members in classes if 0 in members]
    states = {cast(inbox_refresh.RefreshSnapshot, pre) for pre, _letter in edges("inbox-refresh", bounds)}
    for pre in sorted(states, key=repr):
        for index, action in enumerate(actions):
            for members in classes:
                first = None
                for count in members:
                    explorer.load(data, pre._replace(failures=count))
                    fired = fire[index][pre.control](data)
                    seen = (fired.target, canonical(data.output), explorer.store(data, fired.target))
                    if first is None:
                        first = (count, seen)
                    elif seen != first[1]:
                        problems.append(f"{action.label} from {pre.control}: failures {first[0]} and {count} "
                                        f"differ: {first[1][2]} vs {seen[2]}")
                        break
        if len(problems) > 3:
            break
    return problems


def test_the_failure_collapse_merges_the_counts_of_a_saturated_back_off() -> None:
    assert merged_classes(inbox_refresh.collapsed_failures) == [
        list(range(inbox_refresh.FAILURES_COLLAPSED, MAX_FAILURES + 1))]


def test_the_failure_collapse_is_exact_on_the_chart() -> None:
    assert collapse_counterexamples(FAILING) == []


@pytest.mark.parametrize("broken", [lambda count: min(count, 5), lambda count: min(count, 1) * 3])
def test_a_broken_collapse_is_reported(broken: Callable[[int], int], monkeypatch: pytest.MonkeyPatch) -> None:
    """The check fails when the abstraction stops being exact: here, merging counts whose back-offs differ."""
    monkeypatch.setattr(inbox_refresh, "collapsed_failures", broken)
    assert collapse_counterexamples(FAILING)

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

from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.compiled import CompiledChart
from inboxspec.machines import inbox_refresh
from inboxspec.model.inbox_refresh import MAX_FAILURES

# A cycle of failing jobs, so that reachable states back off (the counts themselves are put in by the check).
FAILING = {"jobs": "unavailable,cleanup", "horizon_ms": "60000"}


def merged_classes(collapse: Callable[[int], int]) -> list[list[int]]:
    classes: dict[int, list[int]] = defaultdict(list)
    for count in range(MAX_FAILURES + 1):
        classes[collapse(count)].append(count)
    return [members for members in classes.values() if len(members) > 1]


# Given a reachable snapshot: families of concrete states built on it, each family
# states that the description stores as one.
Families = Callable[[Any], list[list[Any]]]


def abstraction_counterexamples(machine: str, bounds: dict[str, str], families: Families,
                                with_clock_letters: bool = True) -> list[str]:
    """Where the chart tells apart concrete states that the description merges.

    For every state reachable at ``bounds``, each state of each family built on
    it is loaded in turn and every letter fired on the chart itself; the control
    state reached, the output and the stored successor must be the same across a
    family. Without
    ``with_clock_letters``, the letters of ``unobservable_events`` (time moves,
    whose successors the description only argues about through reachability)
    are left out.

    The states are reached breadth-first, as the explorer reaches them, by the
    reachable state's own steps (every letter it is offered), so that a broken
    abstraction shows within the first few (the search stops after four
    problems); what a state of several families does is worked out once.
    """
    entry = machines.get(machine)
    explorer = entry.explorer
    parsed = explorer.parse_bounds(bounds)
    chart = CompiledChart(entry.chart)
    data = chart.blank()
    explorer.constants(data, parsed, {})
    letters = list(explorer.alphabet(parsed))
    fire = [chart.bind(letter.event, letter.kwargs) for letter in letters]
    compared = [index for index, letter in enumerate(letters)
                if with_clock_letters or letter.event not in explorer.unobservable_events]

    def step(member: Any, index: int) -> tuple[str, Any, Any]:
        """The control state reached from ``member`` by letter ``index``, its output, the stored successor."""
        explorer.load(data, member)
        fired = fire[index][member[0]](data)
        return fired.target, data.output, explorer.store(data, fired.target)

    def printed(outcome: tuple[str, Any, Any]) -> tuple[str, str, Any]:
        """``outcome`` with its output as its ``repr``: outputs that print alike are equal as canonical
        JSON too (same keys, values and types: ``True``, ``1`` and ``1.0`` print apart), so comparing
        prints misses no difference that a port could see, and takes a third of the time."""
        target, output, successor = outcome
        return target, repr(output), successor

    problems: list[str] = []
    start = explorer.initial(parsed)
    seen = {start}
    frontier = deque([start])
    while frontier and len(problems) <= 3:
        pre = frontier.popleft()
        offered = [index for index, letter in enumerate(letters) if letter.offered(pre)]
        own = {index: step(pre, index) for index in dict.fromkeys([*offered, *compared])}
        for index in offered:
            successor = own[index][2]
            if successor not in seen:
                seen.add(successor)
                frontier.append(successor)
        known: dict[Any, list[tuple[str, str, Any]]] = {}
        for family in families(pre):
            for member in family:
                if member not in known:
                    known[member] = [printed(own[index] if member == pre else step(member, index))
                                     for index in compared]
            for position, index in enumerate(compared):
                outcomes = [known[member][position] for member in family]
                if any(other != outcomes[0] for other in outcomes[1:]):
                    problems.append(f"{letters[index].label} from {pre}: {outcomes}")
    return problems


def failure_families(pre: Any) -> list[list[Any]]:
    """The state with each failure count of a class that ``collapsed_failures`` merges."""
    return [[pre._replace(failures=count) for count in members]
            for members in merged_classes(inbox_refresh.collapsed_failures)]


def collapse_counterexamples(bounds: dict[str, str]) -> list[str]:
    """What the chart tells apart among failure counts that ``collapsed_failures`` merges."""
    classes = merged_classes(inbox_refresh.collapsed_failures)
    zero = [f"counts {members} are merged with zero, which the chart reads on its own"
            for members in classes if 0 in members]
    return zero + abstraction_counterexamples("inbox-refresh", bounds, failure_families)


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


WAKE_FLOORS = (30_000, 0)  # the default bounds' floors


def age_families(pre: Any) -> list[list[Any]]:
    """The state with each probe age that the description stores as its own age.

    The probes sit on and beside every boundary, far below and far above them,
    so an interval that wrongly spans a boundary holds two probes the chart
    tells apart.
    """
    from inboxspec.machines import wake_gate

    if pre.age is None:
        return []
    boundaries = tuple(sorted({0, *WAKE_FLOORS}))
    probes = sorted({-10 * max(boundaries) - 1, -2, -1, 10 * max(boundaries),
                     *(b + delta for b in boundaries for delta in (-1, 0, 1))})
    stored = wake_gate._canonical_age(pre.age, boundaries)
    return [[pre._replace(age=age) for age in probes if wake_gate._canonical_age(age, boundaries) == stored]]


def test_the_wake_gate_age_intervals_behave_alike() -> None:
    """Ages between the same two neighbouring boundaries decide alike (machines/wake_gate.py).

    Clock moves are left out: an age at the end of its interval moves into the
    next one, and the description argues only that every interval is reached.
    """
    bounds = {"floors": ",".join(str(f) for f in WAKE_FLOORS)}
    assert abstraction_counterexamples("wake-gate", bounds, age_families, with_clock_letters=False) == []


def test_a_broken_age_interval_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """An interval that spans the floor is not exact, and the check says so."""
    from inboxspec.machines import wake_gate

    def one_interval_from_zero(age: int | None, boundaries: tuple[int, ...]) -> int | None:
        return None if age is None else -1 if age < 0 else 0

    monkeypatch.setattr(wake_gate, "_canonical_age", one_interval_from_zero)
    bounds = {"floors": ",".join(str(f) for f in WAKE_FLOORS)}
    assert abstraction_counterexamples("wake-gate", bounds, age_families, with_clock_letters=False)


# A held entry held for review is never judged again, so the description drops its
# sender's mode and attestation (machines/peer_delivery.py's store).
FORGOTTEN = (("y", "valid"), ("x", "garbage"), (None, "garbage"))


def review_families(pre: Any) -> list[list[Any]]:
    """The state with other modes and attestations where the description forgets them."""
    from inboxspec.machines import peer_delivery

    forgets = peer_delivery.FORGETS_JUDGEMENT_INPUTS  # read at call time: the broken test widens it
    if not any(entry.cause in forgets for entry in pre.held):
        return []
    return [[pre, *(pre._replace(held=tuple(entry._replace(sender_mode=mode, attestation=attestation)
                                            if entry.cause in forgets else entry for entry in pre.held))
                    for mode, attestation in FORGOTTEN)]]


PEER_BOUNDS = {"held_cap": "2", "box_cap": "1", "senders": "a"}


def test_peer_delivery_forgets_only_what_a_review_hold_never_reads() -> None:
    assert abstraction_counterexamples("peer-delivery", PEER_BOUNDS, review_families) == []


def test_forgetting_what_a_hold_still_reads_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forgetting the mode of every held entry, not only review ones, merges states the chart tells apart."""
    from inboxspec.machines import peer_delivery

    monkeypatch.setattr(peer_delivery, "FORGETS_JUDGEMENT_INPUTS",
                        (*peer_delivery.FORGETS_JUDGEMENT_INPUTS, "inbound-hold", "starting-up"))
    assert abstraction_counterexamples("peer-delivery", PEER_BOUNDS, review_families)


def refresh_families(pre: Any) -> list[list[Any]]:
    """Concrete inbox-refresh states that ``store`` writes as ``pre`` (machines/inbox_refresh.py's docstring).

    A passed back-off is 0 and a passed spacing forgets the last launch; remembered
    counters are "same as now" (0) or "older" (-1), whatever older value they had;
    launches count modulo the job cycle.
    """
    families = []
    if pre.retry_at == 0:
        families.append([pre, pre._replace(retry_at=pre.now), pre._replace(retry_at=max(0, pre.now - 1))])
    if pre.last_launch is None:  # last launches the description calls long enough ago
        launches = [at for at in (pre.now, pre.now - 1, pre.now - 30_000, pre.now - 40_000)
                    if at >= 0 and inbox_refresh.spacing_passed(pre.now, at, pre.last_duration)]
        families.append([pre, *(pre._replace(last_launch=at) for at in launches)])
    older = {name: tuple(-3 if part == -1 else part for part in getattr(pre, name))
             for name in ("cache_sources", "observed") if getattr(pre, name) and -1 in getattr(pre, name)}
    if older:
        families.append([pre, pre._replace(**older)])
    if pre.policy == -1:
        families.append([pre, pre._replace(policy=-3)])
    cycle = len(REFRESH_BOUNDS["jobs"].split(","))
    families.append([pre, pre._replace(launches=pre.launches + cycle)])
    return families


REFRESH_BOUNDS = {"jobs": "result,cleanup", "horizon_ms": "60000"}  # the default bounds


def test_inbox_refresh_stores_passed_deadlines_and_old_counters_exactly() -> None:
    assert abstraction_counterexamples("inbox-refresh", REFRESH_BOUNDS, refresh_families) == []


def test_a_spacing_the_chart_does_not_keep_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A description that thinks the spacing is always over forgets launches the chart still waits on."""
    monkeypatch.setattr(inbox_refresh, "spacing_passed", lambda now, last_launch, last_duration: True)
    assert abstraction_counterexamples("inbox-refresh", REFRESH_BOUNDS, refresh_families)


def idle_families(pre: Any) -> list[list[Any]]:
    """Idle data that ``store`` drops where no later event reads it (machines/idle_subscriptions.py).

    The last turn's finish and detail outside ``settling`` and ``backing_off``
    (the default options: no ``fire_when_already_idle``), the close time outside
    ``exited`` and the held count once closed.
    """
    families = []
    if pre.state not in ("settling", "backing_off"):
        families.append([pre, pre._replace(finish_age=2, detail="an older turn")])
    if pre.state != "exited":
        families.append([pre, pre._replace(closed_age=1)])
    if pre.state in ("exited", "shut_down"):
        families.append([pre, pre._replace(held=1)])
    return families


def test_idle_subscriptions_drops_only_what_no_later_event_reads() -> None:
    assert abstraction_counterexamples("idle-subscriptions", {}, idle_families) == []


def test_dropping_the_finish_while_settling_would_be_reported() -> None:
    """The same check, on data a fire still reads: the finish and detail while settling."""

    def settling_finish(pre: Any) -> list[list[Any]]:
        if pre.state != "settling":
            return []
        return [[pre, pre._replace(finish_age=2, detail="an older turn")]]

    assert abstraction_counterexamples("idle-subscriptions", {}, settling_finish)

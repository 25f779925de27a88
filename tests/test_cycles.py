"""Forever-properties on cycles of the explored graph (``checker/cycles.py``).

A toy composition of two chatty sessions lives only here. Each session has a
streak with a cap; a message from one wakes the other (a counted wake) while
the receiver's streak is under the cap. The planted bug (option
``plant_ping_pong`` off by default, so the tests name it) lets a session's
turn end lower both streaks by one once both have reached the cap: then the two
sessions can wake each other forever without any user input, which the cycle
check must find and show as a lasso. Without the plant it must find nothing.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import random
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from statemachine import State

from inboxspec import machines
from inboxspec.check import run_check
from inboxspec.checker.cycles import (
    Edge,
    find_lasso,
    find_lassos,
    marks_inside_components,
    strongly_connected_components,
)
from inboxspec.checker.explore import Lasso, explore
from inboxspec.checker.findings import check_forever
from inboxspec.checker.traces import describe_lasso, to_itf_lasso
from inboxspec.cli import main
from inboxspec.machines.frame import (
    Action,
    Bounds,
    ForeverProperty,
    Invariant,
    Machine,
    any_step,
    forever_properties,
)
from inboxspec.model.chart import ModelChart, stay

CAP = 3


class PingPongChart(ModelChart["PingPongChart"]):
    only = State(initial=True)
    _all = (only,)

    ping = stay(_all, cond="b_under_cap", on="wake_b") | stay(_all, on="refuse")
    pong = stay(_all, cond="a_under_cap", on="wake_a") | stay(_all, on="refuse")
    end_turn = stay(_all, cond="planted_reset_applies", on="planted_reset") | stay(_all, on="end_quietly")
    user_a = stay(_all, on="user_wakes_a")

    def __init__(self, plant: bool = False) -> None:
        self.plant, self.a, self.b = plant, 0, 0
        self.output: dict[str, Any] = {}
        super().__init__()

    def b_under_cap(self) -> bool:
        return bool(self.b < CAP)

    def a_under_cap(self) -> bool:
        return bool(self.a < CAP)

    def planted_reset_applies(self) -> bool:
        return bool(self.plant and self.a >= CAP and self.b >= CAP)

    def wake_b(self) -> None:
        self.b += 1
        self.output = {"wake": True, "counted": True}

    def wake_a(self) -> None:
        self.a += 1
        self.output = {"wake": True, "counted": True}

    def refuse(self) -> None:
        self.output = {"wake": False, "counted": False}

    def planted_reset(self) -> None:
        self.a = self.b = CAP - 1
        self.output = {"reset": True}

    def end_quietly(self) -> None:
        self.output = {"reset": False}

    def user_wakes_a(self) -> None:
        self.a = 0
        self.output = {"wake": True, "counted": False}


def _no_user_input(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    return action.event != "user_a"


def _counted_wake(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    return bool(out.get("counted"))


class PingPongExplorer:
    variables: tuple[str, ...] = ("control", "a", "b")
    default_bounds: Mapping[str, str] = {}
    options: tuple[str, ...] = ("plant_ping_pong",)
    unobservable_events: frozenset[str] = frozenset()
    invariants: tuple[Invariant, ...] = ()
    forever = (ForeverProperty("no_ping_pong_forever", ("TOY-PING-1",), every_step=_no_user_input,
                               some_step=_counted_wake),)

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        return {}

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        return [Action(e, e) for e in ("ping", "pong", "end_turn", "user_a")]

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {"plant": options.get("plant_ping_pong", False)}

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        data.plant = options.get("plant_ping_pong", False)

    def initial(self, bounds: Bounds) -> tuple[Any, ...]:
        return ("only", 0, 0)

    def load(self, data: Any, snapshot: tuple[Any, ...]) -> None:
        _control, data.a, data.b = snapshot

    def store(self, data: Any, state: str) -> tuple[Any, ...]:
        return (state, data.a, data.b)

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        return {}

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        return [{"event": action.event} for _pre, action, _post in trace]


def _no_runner(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The toy composition is explored only: it builds (the explorer asks, with no steps, whether the
    configuration of its bounds is one a port may build) and runs no step."""
    if steps:
        raise AssertionError("the toy composition is explored only")
    return {"outputs": []}


@pytest.fixture
def ping_pong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    entry = Machine(name="toy-ping-pong", title="toy ping-pong", seed="none", spec=tmp_path / "spec.md",
                    cases=tmp_path / "cases", manifest=tmp_path / "manifest.json", chart=PingPongChart,
                    run_case=_no_runner, run_model_case=_no_runner, features=(),
                    explorer=PingPongExplorer(), fuzz=lambda rng: ({}, []))
    monkeypatch.setattr(machines, "REGISTRY", {entry.name: entry})
    return entry


def _assert_is_a_bad_lasso(lasso: Lasso, initial: Any) -> None:
    steps = [*lasso.prefix, *lasso.loop]
    assert steps[0][0] == initial if steps else True
    for (_pre, _action, post, _out), (next_pre, _a, _p, _o) in itertools.pairwise(steps):
        assert post == next_pre  # consecutive steps
    assert lasso.loop[-1][2] == lasso.loop[0][0]  # the loop closes
    assert all(action.event != "user_a" for _pre, action, _post, _out in lasso.loop)
    assert any(out["counted"] for _pre, _action, _post, out in lasso.loop if out)


def test_the_cycle_check_catches_the_planted_ping_pong(ping_pong: Machine) -> None:
    planted = explore("toy-ping-pong", options={"plant_ping_pong": True})
    assert set(planted.lassos) == {"no_ping_pong_forever"}
    _assert_is_a_bad_lasso(planted.lassos["no_ping_pong_forever"], ("only", 0, 0))


def test_without_the_plant_no_cycle_is_reported(ping_pong: Machine) -> None:
    clean = explore("toy-ping-pong")
    assert clean.lassos == {} and clean.forever_checked == ("no_ping_pong_forever",)
    assert clean.states == (CAP + 1) ** 2  # every pair of streaks is reachable, and none loops


Graph = dict[Any, list[tuple[Any, bool]]]


def _distances(ping_pong_options: dict[str, bool]) -> tuple[dict[Any, int], Graph]:
    """An independent search: BFS distances, and the allowed graph with marked edges."""
    chart = PingPongChart(plant=ping_pong_options.get("plant_ping_pong", False))
    distance = {("only", 0, 0): 0}
    allowed: Graph = collections.defaultdict(list)
    queue = collections.deque([("only", 0, 0)])
    while queue:
        state = queue.popleft()
        for event in ("ping", "pong", "end_turn", "user_a"):
            chart.a, chart.b = state[1], state[2]
            chart.send(event)
            after = ("only", chart.a, chart.b)
            if event != "user_a":
                allowed[state].append((after, bool(chart.output.get("counted"))))
            if after not in distance:
                distance[after] = distance[state] + 1
                queue.append(after)
    return distance, allowed


def _reachable(allowed: dict[Any, list[tuple[Any, bool]]], source: Any) -> set[Any]:
    seen, stack = {source}, [source]
    while stack:
        for target, _marked in allowed[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_the_lasso_prefix_is_shortest(ping_pong: Machine) -> None:
    options = {"plant_ping_pong": True}
    lasso = explore("toy-ping-pong", options=options).lassos["no_ping_pong_forever"]
    distance, allowed = _distances(options)
    # A state is on a bad cycle when it reaches a marked edge whose target reaches it back.
    on_bad_cycle = {s for s in distance
                    if any(marked and s in _reachable(allowed, target)
                           for u in _reachable(allowed, s) for target, marked in allowed[u])}
    assert on_bad_cycle and ("only", 0, 0) not in on_bad_cycle  # the prefix is not trivially empty
    assert len(lasso.prefix) == min(distance[s] for s in on_bad_cycle) == 4
    assert lasso.loop[0][0] in on_bad_cycle


def test_lasso_text_and_itf(ping_pong: Machine) -> None:
    result = explore("toy-ping-pong", options={"plant_ping_pong": True})
    lasso = result.lassos["no_ping_pong_forever"]
    lines = describe_lasso(lasso.prefix, lasso.loop, PingPongExplorer.variables)
    assert len(lines) == len(lasso.prefix) + len(lasso.loop) + 2
    assert lines[len(lasso.prefix)].strip().startswith(f"-- loop: steps {len(lasso.prefix) + 1}-")
    itf = to_itf_lasso("toy-ping-pong", PingPongExplorer.variables, lasso.prefix, lasso.loop,
                       "no_ping_pong_forever", ("only", 0, 0))
    # The loop index names the state the last record returns to, which is not repeated.
    assert itf["loop"] == len(lasso.prefix)
    assert len(itf["states"]) == len(lasso.prefix) + len(lasso.loop)
    looped = itf["states"][itf["loop"]]
    assert (looped["a"], looped["b"]) == tuple({"#bigint": str(v)} for v in lasso.loop[0][0][1:])
    assert itf["#meta"]["loop_closing_action"] == lasso.loop[-1][1].label


def test_cli_reports_and_emits_a_lasso(ping_pong: Machine, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    itf = tmp_path / "lasso.itf.json"
    # Not a finding: a cycle under the plant is unexpected, so the exit status is 1.
    assert main(["explore", "toy-ping-pong", "--option", "plant_ping_pong=true", "--json",
                 "--emit-itf", str(itf)]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["unexpected_violations"] == ["no_ping_pong_forever"]
    assert summary["lassos"]["no_ping_pong_forever"]["prefix"] == 4
    assert json.loads(itf.read_text())["loop"] == 4
    assert main(["explore", "toy-ping-pong", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["forever_violated"] == []


def test_check_forever_flags_a_property_that_fails_unexpectedly(ping_pong: Machine,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (clean,) = check_forever()
    assert clean.ok and not clean.fails_by_default
    monkeypatch.setattr(PingPongChart, "planted_reset_applies", lambda self: self.a >= CAP and self.b >= CAP)
    (broken,) = check_forever()
    assert not broken.ok and broken.fails_by_default and broken.lasso


class _LassosByOption:
    """An exploration memo that answers each configuration with the lassos it is told: a cycle in
    the default exploration and with each option named in ``cyclic``."""

    def __init__(self, lasso: Lasso, cyclic: set[str], bounds: Mapping[str, Any]) -> None:
        self.lasso, self.cyclic, self.bounds = lasso, cyclic, bounds

    def get(self, name: str, bounds: Mapping[str, str] | None = None,
            options: Mapping[str, bool] | None = None) -> Any:
        on = [option for option, value in (options or {}).items() if value]
        looping = not on or any(option in self.cyclic for option in on)
        return types.SimpleNamespace(lassos={"no_ping_pong_forever": self.lasso} if looping else {},
                                     bounds=self.bounds, options=dict(options or {}))


@pytest.mark.parametrize("cyclic", [set(), {"fix_a"}, {"fix_b"}, {"fix_a", "fix_b"}])
def test_check_forever_asks_every_option_that_fixes_a_finding(ping_pong: Machine,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               cyclic: set[str]) -> None:
    """A finding's forever-property must hold with its option and with each of its ``also_fixed_by``
    (HOST-F2's two readings of the fix): an option that leaves the cycle fails the check, named."""
    (prop,) = forever_properties(ping_pong.explorer)
    finding = dataclasses.replace(prop, finding="TOY-F9", option="fix_a", also_fixed_by=("fix_b",))
    monkeypatch.setattr(ping_pong.explorer, "forever", (finding,))
    planted = explore("toy-ping-pong", options={"plant_ping_pong": True})
    lasso = planted.lassos["no_ping_pong_forever"]
    (result,) = check_forever(_LassosByOption(lasso, cyclic, planted.bounds))  # type: ignore[arg-type]
    assert result.fails_by_default and result.expected_to_fail
    assert result.holds_with_option is ("fix_a" not in cyclic)
    assert result.also_fixed_by == {"fix_b": "fix_b" not in cyclic}
    assert result.ok is (not cyclic)
    assert result.options_failing() == sorted(cyclic)
    assert result.as_json()["also_fixed_by"] == {"fix_b": "fix_b" not in cyclic}
    assert finding.expected_to_fail_under({}) and not finding.expected_to_fail_under({"fix_b": True})


def _counting_lowered_streaks_as_ordinary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wake gate's property with a host lowering the streak taken as an ordinary step."""
    from inboxspec.machines import wake_gate

    explorer = machines.get("wake-gate").explorer
    (prop,) = forever_properties(explorer)
    assert prop.allowed_letters is wake_gate._no_user_input_or_reset
    ordinary = dataclasses.replace(prop, every_step=any_step, expected_to_fail=True)
    monkeypatch.setattr(explorer, "forever", (ordinary,))


def test_the_wake_gate_ping_pong_needs_a_host_lowering_the_streak(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 000's promise at the default bounds holds within one gate; the only cycle with a
    counted wake lowers the streak by `set_streak 0`, a reset by another name (WAKE-HOST-1)."""
    assert explore("wake-gate").lassos == {}
    assert explore("wake-gate").forever_checked == ("no_ping_pong_forever",)
    _counting_lowered_streaks_as_ordinary(monkeypatch)
    loop = explore("wake-gate").lassos["no_ping_pong_forever"].loop
    assert any(action.label == "set_streak 0" for _pre, action, _post, _out in loop)
    assert explore("wake-gate", {"streaks": "11"}).lassos == {}


# -- the components pass on its own ---------------------------------------------------

def _naive_components(successors: Sequence[Sequence[Edge]]) -> list[set[int]]:
    reach = [set() for _ in successors]  # type: list[set[int]]
    for source in range(len(successors)):
        seen, stack = {source}, [source]
        while stack:
            for target, _letter, _marked in successors[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        reach[source] = seen
    return [{t for t in reach[s] if s in reach[t]} for s in range(len(successors))]


def test_components_agree_with_a_naive_search_on_random_graphs() -> None:
    rng = random.Random(19)
    for _ in range(200):
        count = rng.randint(1, 12)
        graph = [[(rng.randrange(count), 0, False) for _ in range(rng.randint(0, 3))] for _ in range(count)]
        component = strongly_connected_components(graph)
        naive = _naive_components(graph)
        for state in range(count):
            assert {t for t in range(count) if component[t] == component[state]} == naive[state]


def test_a_long_cycle_needs_no_recursion() -> None:
    """A cycle of 200,000 states: a recursive Tarjan would pass Python's recursion limit."""
    count = 200_000
    graph: list[list[Edge]] = [[((s + 1) % count, 0, s == count - 1)] for s in range(count)]
    tree: list[tuple[int, int] | None] = [None, *((s - 1, 0) for s in range(1, count))]
    path = find_lasso(graph, tree)
    assert path is not None and path.prefix == [] and len(path.loop) == count
    graph[count - 1] = [(count - 1, 0, False)]  # the marked step removed: a self-loop, unmarked
    assert find_lasso(graph, tree) is None


def test_check_reports_the_wake_gate_cycle_and_fails_when_it_is_not_expected(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--machine", "wake-gate", "--json"]) == 0
    forever = json.loads(capsys.readouterr().out)["explorer"]["forever"]["wake-gate"]
    reported = forever["no_ping_pong_forever"]
    assert reported["ok"] and not reported["fails_by_default"] and not reported["expected_to_fail"]
    _counting_lowered_streaks_as_ordinary(monkeypatch)  # a cycle appears ...
    explorer = machines.get("wake-gate").explorer
    (prop,) = forever_properties(explorer)
    monkeypatch.setattr(explorer, "forever", (dataclasses.replace(prop, expected_to_fail=False),))
    report = run_check(["wake-gate"])  # ... and check fails when it was not expected
    assert not report["ok"]
    assert any("no_ping_pong_forever has a cycle" in p for p in report["explorer"]["problems"])


def test_properties_that_share_a_subgraph_find_the_lassos_they_find_alone() -> None:
    """One components pass for several properties (``find_lassos``, each with its mark bit) gives
    each the lasso its own subgraph, marked for it alone, gives."""
    rng = random.Random(23)
    for _ in range(300):
        count = rng.randint(1, 14)
        shared: list[list[Edge]] = [[(rng.randrange(count), rng.randrange(3), rng.randrange(8))
                                     for _ in range(rng.randint(0, 3))] for _ in range(count)]
        tree: list[tuple[int, int] | None] = [None, *((rng.randrange(s), 0) for s in range(1, count))]
        together = find_lassos(shared, tree, [1, 2, 4])
        for bit, path in enumerate(together):
            alone = [[(target, letter, bool(marks >> bit & 1)) for target, letter, marks in edges]
                     for edges in shared]
            assert path == find_lasso(alone, tree)


def test_the_marks_inside_each_component_are_those_a_naive_search_finds() -> None:
    """``marks_inside_components``, which every mask's lasso reads: per component, the union of the
    marks of the steps that stay inside it, found here from each state's naive reach instead."""
    rng = random.Random(29)
    for _ in range(300):
        count = rng.randint(1, 14)
        graph: list[list[Edge]] = [[(rng.randrange(count), 0, rng.choice((0, 0, 1, 2, 4, 6)))
                                    for _ in range(rng.randint(0, 3))] for _ in range(count)]
        component = strongly_connected_components(graph)
        naive = _naive_components(graph)
        expected: dict[int, int] = {}
        for source, edges in enumerate(graph):
            for target, _letter, marks in edges:
                if marks and target in naive[source]:
                    expected[component[source]] = expected.get(component[source], 0) | marks
        assert marks_inside_components(graph, component) == expected
        tree: list[tuple[int, int] | None] = [None, *((rng.randrange(s), 0) for s in range(1, count))]
        for mask, path in zip((1, 2, 4), find_lassos(graph, tree, (1, 2, 4)), strict=True):
            assert (path is None) == (not any(marks & mask for marks in expected.values()))


def test_unmarked_self_loops_change_no_lasso() -> None:
    """The searches leave out an unmarked step from a state to itself (``checker/cycles.py``,
    "Self-loops"): on random graphs with many self-loops, marked and not, every mask's lasso is
    the same without the unmarked ones."""
    rng = random.Random(23)
    for _ in range(300):
        count = rng.randint(1, 10)
        graph: list[list[Edge]] = []
        for state in range(count):
            edges: list[Edge] = []
            for letter in range(rng.randint(0, 5)):
                target = state if rng.random() < 0.5 else rng.randrange(count)
                edges.append((target, letter, rng.choice([0, 0, 0, 1, 2, 3])))
            graph.append(edges)
        tree: list[tuple[int, int] | None] = [None, *((rng.randrange(s), 0) for s in range(1, count))]
        trimmed = [[e for e in edges if e[2] or e[0] != state] for state, edges in enumerate(graph)]
        assert find_lassos(trimmed, tree, (1, 2)) == find_lassos(graph, tree, (1, 2))

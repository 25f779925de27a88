"""Breadth-first explicit-state exploration of a model chart.

Every reachable snapshot within the machine's bounds is visited once (the
snapshot tuple is its own canonical fingerprint). Each step fires the chart's
own transitions through :mod:`inboxspec.checker.compiled`, and every named
invariant is checked on every step. Because the search is breadth-first, the
first violation found of an invariant is one of the shortest, and so is the
first trace to each chart transition, which is what generated cases use.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inboxspec.checker import wake_gate
from inboxspec.checker.compiled import CompiledChart, CompiledTransition
from inboxspec.model.wake_gate import WakeGateChart

Snapshot = Any
Step = tuple[Snapshot, Any, Snapshot, "dict[str, Any] | None"]


@dataclass(frozen=True)
class Machine:
    """One explorable machine: its chart and its explorer description module."""

    name: str
    chart: CompiledChart
    description: Any  # a module with the wake_gate.py interface


MACHINES: dict[str, Callable[[], Machine]] = {
    "wake-gate": lambda: Machine("wake-gate", CompiledChart(WakeGateChart), wake_gate),
}


def machine(name: str) -> Machine:
    try:
        return MACHINES[name]()
    except KeyError:
        raise ValueError(f"unknown machine {name!r}; known: {', '.join(MACHINES)}") from None


@dataclass
class Exploration:
    machine: str
    bounds: dict[str, Any]
    options: dict[str, bool]
    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    violations: dict[str, list[Step]] = field(default_factory=dict)
    coverage: dict[tuple[str, str, int], list[Step]] = field(default_factory=dict)
    all_transitions: tuple[CompiledTransition, ...] = ()

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else float("inf")

    def summary(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "bounds": {k: list(v) if isinstance(v, tuple) else v for k, v in self.bounds.items()},
            "options": self.options,
            "distinct_states": self.states,
            "transitions": self.transitions,
            "max_depth": self.max_depth,
            "seconds": round(self.seconds, 4),
            "states_per_second": round(self.states_per_second),
            "violated": sorted(self.violations),
            "chart_transitions_covered": f"{len(self.coverage)}/{len(self.all_transitions)}",
        }


def explore(name: str, bounds: dict[str, str] | None = None, options: dict[str, bool] | None = None,
            progress: Callable[[int, int, float], None] | None = None) -> Exploration:
    target = machine(name)
    spec = target.description
    parsed = spec.parse_bounds(bounds or {})
    options = dict(options or {})
    unknown = sorted(set(options) - set(spec.OPTIONS))
    if unknown:
        raise ValueError(f"unknown {name} option(s): {', '.join(unknown)}; known: {', '.join(spec.OPTIONS)}")
    chart = target.chart
    data = chart.blank()
    spec.constants(data, parsed, options)
    actions = spec.alphabet(parsed)
    bound = [None if a.clock is not None else chart.bind(a.event, a.kwargs) for a in actions]
    invariants = spec.INVARIANTS
    cap = parsed.get("max_streak")

    result = Exploration(name, parsed, options, all_transitions=chart.transitions)
    start = spec.initial(parsed)
    # Per control state, per letter: the chart transitions with arguments bound,
    # and the invariants that concern the letter (shared, so a violated one is dropped everywhere).
    active_by_letter = [[inv for inv in invariants if inv.applies(a)] for a in actions]
    bound = [None if a.clock is not None else chart.bind(a.event, a.kwargs) for a in actions]
    letters = {
        state: [(index, action, action.clock, None if b is None else b[state], active_by_letter[index])
                for index, (action, b) in enumerate(zip(actions, bound, strict=True))]
        for state in chart.states
    }
    load, store, move_clock = spec.load, spec.store, spec.move_clock
    coverage, violations = result.coverage, result.violations
    # parent[s] = (previous snapshot, letter index): the BFS tree, which gives shortest traces.
    parent: dict[Snapshot, tuple[Snapshot, int] | None] = {start: None}
    frontier = collections.deque([(start, 0)])
    deepest = 0
    began = last_report = time.perf_counter()
    while frontier:
        pre, pre_depth = frontier.popleft()
        next_depth = pre_depth + 1
        state = pre[0]
        for index, action, clock, rows, active in letters[state]:
            if clock is not None:
                post = move_clock(pre, clock)
            else:
                load(data, pre)
                fired = rows(data)
                post, output = store(data, fired.target), data.output
                # Only the last step is kept here; the BFS tree gives the rest afterwards.
                if fired.key not in coverage:
                    coverage[fired.key] = [(pre, action, post, output)]
                for invariant in active:
                    if not invariant.holds(pre, post, output, cap):
                        # The first violation met is a shortest one: record it, check no further.
                        violations[invariant.name] = [(pre, action, post, output)]
                        for letter_invariants in active_by_letter:
                            if invariant in letter_invariants:
                                letter_invariants.remove(invariant)
            if post not in parent:
                parent[post] = (pre, index)
                deepest = next_depth
                frontier.append((post, next_depth))
        if progress is not None and time.perf_counter() - last_report > 0.25:
            last_report = time.perf_counter()
            progress(len(parent), next_depth, last_report - began)
    result.seconds = time.perf_counter() - began
    for steps in (*coverage.values(), *violations.values()):
        steps[:0] = _trace(parent, actions, steps[0][0])
    result.states = len(parent)
    result.transitions = result.states * len(actions)
    result.max_depth = deepest
    return result


def _trace(parent: dict[Snapshot, tuple[Snapshot, int] | None], actions: list[Any],
           end: Snapshot) -> list[Step]:
    """The BFS path to ``end``, as steps (outputs are filled in by ``replay`` when needed)."""
    path: list[Step] = []
    node = end
    while (link := parent[node]) is not None:
        previous, index = link
        path.append((previous, actions[index], node, None))
        node = previous
    path.reverse()
    return path


def edges(name: str, bounds: dict[str, str] | None = None, options: dict[str, bool] | None = None,
          via: str = "compiled") -> dict[tuple[Snapshot, int], tuple[Snapshot, Any]]:
    """The whole reachable transition relation, built either through the compiled
    view or through plain python-statemachine ``send()`` on a real chart.

    It exists to compare the two (tests) and to time plain dispatch (benchmarks);
    the explorer itself uses the compiled view.
    """
    target = machine(name)
    spec = target.description
    parsed = spec.parse_bounds(bounds or {})
    options = dict(options or {})
    actions = spec.alphabet(parsed)
    if via == "compiled":
        data = target.chart.blank()
        spec.constants(data, parsed, options)
        bound = {a.label: target.chart.bind(a.event, a.kwargs) for a in actions if a.clock is None}

        def fire(pre: Snapshot, action: Any) -> tuple[Snapshot, Any]:
            spec.load(data, pre)
            fired = bound[action.label][pre[0]](data)
            return spec.store(data, fired.target), data.output
    elif via == "dispatch":
        real = target.chart.chart(**spec.chart_arguments(parsed, options))

        def fire(pre: Snapshot, action: Any) -> tuple[Snapshot, Any]:
            real.current_state_value = pre[0]
            spec.load(real, pre)
            real.send(action.event, **action.kwargs)
            (state,) = real.configuration
            return spec.store(real, state.id), real.output
    else:
        raise ValueError(f"via must be 'compiled' or 'dispatch', not {via!r}")
    relation: dict[tuple[Snapshot, int], tuple[Snapshot, Any]] = {}
    start = spec.initial(parsed)
    seen = {start}
    frontier = collections.deque([start])
    while frontier:
        pre = frontier.popleft()
        for index, action in enumerate(actions):
            post, output = ((spec.move_clock(pre, action.clock), None) if action.clock is not None
                            else fire(pre, action))
            relation[(pre, index)] = (post, output)
            if post not in seen:
                seen.add(post)
                frontier.append(post)
    return relation

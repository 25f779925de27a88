"""A python-statemachine chart, read once and fired directly on snapshot data.

The explorer must explore the charts in ``model/`` themselves, not a second
transition function that could drift from them. Plain ``send()`` dispatch is
too slow for exhaustive exploration (a few thousand events a second), so this
module reads each chart's definition once (its states, and per state and event
the ordered transitions with their ``cond``/``unless`` guards and ``on``
actions), generates for each (state, event, arguments) a small function that
applies python-statemachine's selection rule, and calls the chart's *own*
guard and action methods on a plain object holding one snapshot's data.

Only what the models use is supported: flat charts, guards and actions named
by method, event keyword arguments injected by parameter name, and class
constants and properties that those methods read. Anything else (entry/exit
callbacks, validators, boolean guard expressions, compound states, eventless
transitions, delayed events) is refused when the chart is compiled, so a
model that outgrows the compiler fails loudly instead of being explored
wrongly.
``tests/test_checker.py`` shows that this view and ``send()`` agree on every
transition.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

from statemachine import StateChart

from inboxspec.model.chart import data_class, selection_source


@functools.lru_cache(maxsize=4096)  # generated texts are few: a bound, not a budget
def _compiled(source: str) -> CodeType:
    return compile(source, "<generated>", "exec")


def generated_function(lines: Sequence[str], namespace: dict[str, Any], name: str) -> Any:
    """The function ``name`` that the source ``lines`` define, its names looked up in ``namespace``.

    The source is compiled once per text: generated sources differ mostly in the values their
    names stand for, not in their text (an invariant check of three invariants, say, is one text
    for any three), and compiling costs about twenty times what running the ``def`` does. An
    exploration that regenerates its checks at each violation, and a small one, paid most of its
    time compiling."""
    exec(_compiled("\n".join(lines)), namespace)
    return namespace[name]


class ChartNotCompilable(Exception):
    """The chart uses a python-statemachine feature the compiled view does not support."""




@dataclass(frozen=True)
class Callback:
    function: Callable[..., Any]
    parameters: tuple[str, ...]  # event keyword arguments it takes, in order
    expected: bool = True  # for guards: True for `cond`, False for `unless`


# Compared and hashed by identity: each is one object of its compiled chart (the explorer
# keeps the ones it has met in a set; ``key`` names one across charts).
@dataclass(frozen=True, eq=False)
class CompiledTransition:
    source: str
    target: str
    event: str
    index: int  # position among the transitions of (source, event): which guard outcome fired
    guards: tuple[Callback, ...]
    actions: tuple[Callback, ...]
    key: tuple[str, str, int] = ("", "", 0)  # (source, event, index), filled in by __post_init__

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.source, self.event, self.index))

    def describe(self) -> str:
        guards = [("" if g.expected else "!") + g.function.__name__ for g in self.guards]
        actions = [a.function.__name__ for a in self.actions]
        guard_text = f" [{' and '.join(guards)}]" if guards else ""
        action_text = f" / {', '.join(actions)}" if actions else ""
        return f"{self.source} --{self.event}{guard_text}{action_text}--> {self.target}"


class CompiledChart:
    def __init__(self, chart: type[StateChart[Any]]) -> None:
        self.chart = chart
        self.initial: str = chart.initial_state.id
        self.states: tuple[str, ...] = tuple(s.id for s in chart.states_map.values())
        self.table: dict[tuple[str, str], tuple[CompiledTransition, ...]] = {}
        for declared in chart._events:
            # The explorer fires every event at once; a delay would be a timer
            # outside the chart, and time belongs to the chart's own events.
            if declared.delay:
                raise ChartNotCompilable(f"{chart.__name__}: event {declared.id!r} is delayed "
                                         f"({declared.delay} ms); delayed events are not supported")
        for state in chart.states_map.values():
            if state.states or getattr(state, "parallel", False):
                raise ChartNotCompilable(f"{chart.__name__}.{state.id}: compound states")
            self._refuse_defined(state.enter, f"entry callbacks on {state.id}")
            self._refuse_defined(state.exit, f"exit callbacks on {state.id}")
            per_event: dict[str, list[CompiledTransition]] = {}
            for transition in state.transitions:
                if transition.is_eventless:
                    # It would fire on its own after any event: a step the
                    # explorer's one-event-one-transition view cannot show.
                    raise ChartNotCompilable(f"{chart.__name__}: {state.id} --> {transition.target.id} is "
                                             f"an eventless transition; they are not supported")
                self._refuse_defined(transition.validators, f"validators on {state.id}")
                self._refuse_defined(transition.before, f"before callbacks on {state.id}")
                self._refuse_defined(transition.after, f"after callbacks on {state.id}")
                guards = tuple(self._callback(s, expected=bool(s.expected_value))
                               for s in transition.cond if self._defined(s))
                actions = tuple(self._callback(s) for s in transition.on if self._defined(s))
                if not actions:
                    # The explorer reads each step's output from the action that ran;
                    # a transition without one would show the previous step's output.
                    raise ChartNotCompilable(f"{chart.__name__}: {state.id} --{transition.events}--> "
                                             f"{transition.target.id} has no action")
                # The event's name as a plain str: python-statemachine's Event is a str that
                # carries its chart with it, some 30 to 90 kB pickled, and a parallel
                # exploration sends a transition's key (with its event) back from every chunk.
                for event in map(str, transition.events):
                    rows = per_event.setdefault(event, [])
                    rows.append(CompiledTransition(state.id, transition.target.id, event,
                                                   len(rows), guards, actions))
            for event, rows in per_event.items():
                self.table[(state.id, event)] = tuple(rows)
        self.transitions: tuple[CompiledTransition, ...] = tuple(
            row for rows in self.table.values() for row in rows)

    def _defined(self, spec: Any) -> bool:
        # Convention names (on_transition, on_decide, ...) apply only when the chart defines them.
        return not spec.is_convention or hasattr(self.chart, spec.attr_name)

    def _refuse_defined(self, specs: Any, what: str) -> None:
        if any(self._defined(s) for s in specs):
            raise ChartNotCompilable(f"{self.chart.__name__}: {what} are not supported")

    def _callback(self, spec: Any, expected: bool = True) -> Callback:
        name = spec.func
        function = getattr(self.chart, name, None) if isinstance(name, str) else None
        if not callable(function):
            raise ChartNotCompilable(f"{self.chart.__name__}: callback {name!r} is not a method")
        parameters = list(inspect.signature(function).parameters)[1:]
        return Callback(function, tuple(parameters), expected)

    def blank(self) -> Any:
        """An object to hold one snapshot's data, with the chart's own methods and no engine.

        It is an instance of a plain class carrying what the chart's class body
        (and those of its chart base classes) define: methods, properties and
        class constants, but not the states, events and transitions, nor what
        python-statemachine itself adds. Data writes then skip
        StateChart.__setattr__ (which only guards against shadowing a state
        name, and costs a third of the time).
        """
        return data_class(self.chart, f"{self.chart.__name__}Data")()

    def bind(self, event: str, kwargs: Mapping[str, Any]) -> dict[str, Callable[[Any], CompiledTransition]]:
        """Per source state, one generated function that fires ``event`` with these arguments.

        The function tests the state's transitions for the event in document
        order, as python-statemachine does, runs the first enabled one's actions
        on ``data`` and returns the transition. Generating it (as dataclasses
        generates ``__init__``) removes the interpretive loop from the explorer's
        inner loop; the arguments are bound once, as constants.
        """
        return {state: _generate(self.chart.__name__, state, event,
                                 self.table.get((state, event), ()), kwargs)
                for state in self.states}

class NoTransition(ChartNotCompilable):
    """No transition of the event is enabled in the state (the charts forbid that)."""


def _generate(chart: str, state: str, event: str, rows: tuple[CompiledTransition, ...],
              kwargs: Mapping[str, Any]) -> Callable[[Any], CompiledTransition]:
    namespace: dict[str, Any] = {"NoTransition": NoTransition}
    constants: dict[int, str] = {}

    def constant(value: Any) -> str:
        name = constants.setdefault(id(value), f"k{len(constants)}")
        namespace[name] = value
        return name

    def call(callback: Callback) -> str:
        arguments = ", ".join(["data", *(constant(kwargs[p]) for p in callback.parameters)])
        return f"{constant(callback.function)}({arguments})"

    message = f"{chart}: no transition for {event} in {state}"
    refusal = f"raise NoTransition({constant(message)})"
    lines = ["def fire(data):", *selection_source(rows, call, constant, refusal)]
    function: Callable[[Any], CompiledTransition] = generated_function(lines, namespace, "fire")
    return function


def take_step(data: Any, pre: Any, fire: Callable[[Any], Any], load: Callable[[Any, Any], None],
              store: Callable[[Any, Any], Any]) -> tuple[Any, Any, Any]:
    """One explored step, as the serial and the parallel search both take it: load the snapshot
    ``pre`` into ``data``, fire the letter, store the state reached. Returns (the transition
    fired, the snapshot reached, the chart's output)."""
    load(data, pre)
    fired = fire(data)
    return fired, store(data, fired.target), data.output

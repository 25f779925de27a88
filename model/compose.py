"""A model chart used as a part of another: its own transitions, fired on plain data.

The host chart (``model/host.py``) composes the charts of the machines it is
built from. Plain python-statemachine ``send()`` costs a few hundred
microseconds an event and building a chart more, which an exhaustive
exploration of the host cannot pay per step, so a :class:`Part` reads a
chart's definition once (per state and event, its transitions in document
order with their ``cond``/``unless`` guards and ``on`` actions) and fires it
on a plain object holding that chart's data: the first transition whose
guards all pass runs its actions, which is python-statemachine's selection
rule for the flat, callback-only charts of ``model/``. The guards and actions
are the part chart's own methods, so the part behaves as its chart does;
``tests/test_host_lockstep.py`` compares the host built this way with the
reference, and ``Part.fire`` refuses an event the chart has no enabled
transition for, as the pinned charts do.

This module imports nothing from ``inboxspec.impl``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statemachine import Event, State, StateChart
from statemachine.transition import Transition
from statemachine.transition_list import TransitionList

from .chart import ModelChart


class _Bare(ModelChart["_Bare"]):
    only = State(initial=True)
    nothing = only.to.itself(internal=True, on="nop")

    def nop(self) -> None:
        pass


_ENGINE = frozenset(dir(StateChart)) | frozenset(vars(_Bare))
_DEFINITIONS = (State, Event, Transition, TransitionList)


class NoTransition(Exception):
    """The part chart has no enabled transition for the event in its state."""


@dataclass(frozen=True)
class _Call:
    function: Callable[..., Any]
    parameters: tuple[str, ...]
    defaults: frozenset[str]  # parameters with a default, which an absent argument leaves to it
    expected: bool = True

    def __call__(self, data: Any, kwargs: dict[str, Any]) -> Any:
        for name in self.parameters:
            if name not in kwargs and name not in self.defaults:
                raise TypeError(f"{self.function.__name__} needs the argument {name!r}")
        return self.function(data, **{p: kwargs[p] for p in self.parameters if p in kwargs})


@dataclass(frozen=True)
class _Row:
    guards: tuple[_Call, ...]
    actions: tuple[_Call, ...]
    target: str


class Part:
    """One chart class, read once; ``fire`` runs one event on one part's data."""

    def __init__(self, chart: type[StateChart[Any]], *args: Any, **kwargs: Any) -> None:
        """``args`` and ``kwargs`` build one real chart, whose data is the template of ``data``."""
        self.chart = chart
        self.initial: str = chart.initial_state.id
        self.rows: dict[tuple[str, str], tuple[_Row, ...]] = {}
        for state in chart.states_map.values():
            per_event: dict[str, list[_Row]] = {}
            for transition in state.transitions:
                guards = tuple(
                    self._call(s, bool(s.expected_value)) for s in transition.cond if self._defined(s)
                )
                actions = tuple(self._call(s) for s in transition.on if self._defined(s))
                for event in transition.events:
                    per_event.setdefault(event, []).append(_Row(guards, actions, transition.target.id))
            for event, rows in per_event.items():
                self.rows[(state.id, event)] = tuple(rows)
        real = chart(*args, **kwargs)
        states = {s.id for s in chart.states_map.values()}
        template = {
            name: value
            for name, value in vars(real).items()
            if name not in _ENGINE
            and name not in states
            and not name.startswith("_")
            and name not in ("model", "history_values", "state_field", "start_configuration_values")
        }
        carried: dict[str, Any] = {}
        for klass in reversed(chart.__mro__):
            if not (isinstance(klass, type) and issubclass(klass, StateChart)) or klass is StateChart:
                continue
            for name, value in vars(klass).items():
                if name.startswith("__") or name in _ENGINE or isinstance(value, _DEFINITIONS):
                    continue
                carried[name] = value
        self._holder = type(f"{chart.__name__}Part", (), carried)
        self._template = template

    def _defined(self, spec: Any) -> bool:
        return not spec.is_convention or hasattr(self.chart, spec.attr_name)

    def _call(self, spec: Any, expected: bool = True) -> _Call:
        function = getattr(self.chart, spec.func)
        signature = inspect.signature(function)
        parameters = tuple(list(signature.parameters)[1:])
        defaults = frozenset(
            name for name, p in signature.parameters.items() if p.default is not inspect.Parameter.empty
        )
        return _Call(function, parameters, defaults, expected)

    def data(self) -> Any:
        """A fresh part: the chart's data as its constructor left it."""
        holder = self._holder()
        holder.__dict__.update(copy.deepcopy(self._template))
        return holder

    def loaded(self, fields: dict[str, Any]) -> Any:
        """A part whose data is the template's, with ``fields`` written over it (no copy: the
        caller gives fresh values for every mutable field, as an explorer's ``load`` does)."""
        holder = self._holder()
        holder.__dict__.update(self._template)
        holder.__dict__.update(fields)
        return holder

    def fire(self, data: Any, state: str, event: str, **kwargs: Any) -> str:
        """Run ``event`` in ``state`` on ``data``; the state it leads to. ``data.output`` is its output."""
        for row in self.rows.get((state, event), ()):
            if all(bool(guard(data, kwargs)) is guard.expected for guard in row.guards):
                for action in row.actions:
                    action(data, kwargs)
                return row.target
        raise NoTransition(f"{self.chart.__name__}: no transition for {event} in {state}")

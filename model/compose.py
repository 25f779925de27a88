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
are the part chart's own methods, called by small functions generated once per
state, event and names of the arguments, so the part behaves as its chart does;
``tests/test_compose.py`` compares a part with its chart's ``send()``,
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

from statemachine import StateChart

from .chart import ENGINE_ATTRIBUTES, data_class, selection_source


class NoTransition(Exception):
    """The part chart has no enabled transition for the event in its state."""


@dataclass(frozen=True)
class _Call:
    function: Callable[..., Any]
    parameters: tuple[str, ...]
    defaults: frozenset[str]  # parameters with a default, which an absent argument leaves to it
    expected: bool = True

    def source(self, given: tuple[str, ...], constant: Callable[[Any], str]) -> str:
        """The call as ``fire``'s generated code makes it, when the event's arguments are named
        ``given``: each parameter from ``kwargs`` by name, a missing one left to its default
        (a missing one without a default raises TypeError when the call is reached)."""
        missing = [p for p in self.parameters if p not in given and p not in self.defaults]
        if missing:
            message = f"{self.function.__name__} needs the argument {missing[0]!r}"
            return f"{constant(_refuse)}({constant(message)})"
        arguments = ", ".join(["data", *(f"{p}=kwargs[{p!r}]" for p in self.parameters if p in given)])
        return f"{constant(self.function)}({arguments})"


def _refuse(message: str) -> Any:
    raise TypeError(message)


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
            if name not in ENGINE_ATTRIBUTES
            and name not in states
            and not name.startswith("_")
            and name not in ("model", "history_values", "state_field", "start_configuration_values")
        }
        # The class of a part's data: the chart's methods and class constants, without the engine.
        self.holder = data_class(chart, f"{chart.__name__}Part")
        self._template = template
        # ``fire``'s generated functions, by (state, event, names of the arguments).
        self._firings: dict[tuple[str, str, tuple[str, ...]], Callable[[Any, dict[str, Any]], str]] = {}

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
        holder = self.holder()
        holder.__dict__.update(copy.deepcopy(self._template))
        return holder

    def merged(self, fields: dict[str, Any]) -> dict[str, Any]:
        """The template's data with ``fields`` written over it, as one dict (for ``holding``)."""
        return {**self._template, **fields}

    def holding(self, merged: dict[str, Any]) -> Any:
        """A part whose data is a copy of the dict ``merged`` (the values themselves are shared:
        the caller gives fresh values for the mutable fields it shares)."""
        holder = self.holder()
        holder.__dict__ = merged.copy()
        return holder

    def fire(self, data: Any, state: str, event: str, **kwargs: Any) -> str:
        """Run ``event`` in ``state`` on ``data``; the state it leads to. ``data.output`` is its output.

        The transitions for ``event`` in ``state`` are tested in document order, and the
        first whose guards all pass runs its actions. That is done by a small function
        generated once per state, event and names of the arguments (``_generate``), which
        calls the guards and actions with the arguments they take, as ``checker/compiled.py``
        does for a whole chart."""
        key = (state, event, tuple(kwargs))
        firing = self._firings.get(key)
        if firing is None:
            firing = self._firings[key] = self._generate(state, event, key[2])
        return firing(data, kwargs)

    def _generate(self, state: str, event: str,
                  given: tuple[str, ...]) -> Callable[[Any, dict[str, Any]], str]:
        namespace: dict[str, Any] = {}

        def constant(value: Any) -> str:
            name = f"k{len(namespace)}"
            namespace[name] = value
            return name

        message = f"{self.chart.__name__}: no transition for {event} in {state}"
        lines = ["def fire(data, kwargs):", *selection_source(
            self.rows.get((state, event), ()), lambda c: c.source(given, constant),
            lambda row: constant(row.target), f"raise {constant(NoTransition)}({constant(message)})")]
        exec("\n".join(lines), namespace)
        firing: Callable[[Any, dict[str, Any]], str] = namespace["fire"]
        return firing

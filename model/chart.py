"""What every model chart shares: python-statemachine's behaviour flags, pinned, ``stay``, the
selection rule that fires a chart's event as generated code (``selection_source``), and a restart
that gives a case a chart another case left, as built afresh (``ModelChart.restarted``).

The flags are pinned here once, not left to the library's defaults, because each
changes what a chart means:

- ``allow_event_without_transition = False``: an event with no enabled
  transition is a model bug, not a silent no-op;
- ``enable_self_transition_entries = False``: a self-transition does not re-run
  entry actions;
- ``atomic_configuration_update = False`` and ``catch_errors_as_events = False``:
  callback errors propagate instead of becoming ``error.execution`` events.

This module does not import ``inboxspec.impl``, like every model module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from statemachine import Event, State, StateChart
from statemachine.graph import iterate_states_and_transitions
from statemachine.transition import Transition
from statemachine.transition_list import TransitionList

ChartType = TypeVar("ChartType", bound="ModelChart[Any]")


class ModelChart(StateChart[ChartType]):
    """The base of every model chart: it defines no states, only the pinned flags, and
    :meth:`restarted`."""

    allow_event_without_transition = False
    enable_self_transition_entries = False
    atomic_configuration_update = False
    catch_errors_as_events = False

    # While ``restarted`` runs the chart's own constructor again: then ``__init__`` below does not
    # build the chart anew, it only puts the control state back.
    _restarting = False

    def __init__(self) -> None:
        """Each chart's constructor sets its data, then calls this. The first time, python-statemachine
        builds the chart: it resolves every callback to this instance's methods, the most part of a
        chart's cost (about a millisecond); the attributes it sets are remembered, as the chart's
        machinery. On a restart (``restarted``), the constructor has set the data anew; the resolved
        callbacks are the methods the chart's classes still define (``why_not_restartable``), so they
        hold, and only the control state and the engine are new."""
        if not self._restarting:
            data = frozenset(vars(self))
            super().__init__()
            self._definition = _definition(type(self))
            self._restart_hazard = _restart_hazard(self, data)
            self._machinery = frozenset(vars(self)) - data | {"_machinery"}
            return
        del self._restarting
        self.history_values = {}
        self.current_state_value = None
        self._engine = self._get_engine()  # type: ignore[no-untyped-call]
        self._engine.start()

    def restarted(self, *args: Any, **kwargs: Any) -> ChartType:
        """This chart as ``type(self)(*args, **kwargs)`` would build it, without building it again.

        Every attribute but the library's machinery is removed first, so that nothing a run set (an
        output, a cached value, an attribute a constructor sets on one branch only) survives; then the
        chart's own constructor runs again, so the data are set by the one definition that sets them.
        ``tests/test_chart_restart.py`` replays every bundled case on a restarted chart and on a new
        one, and compares every output.

        Refused (ValueError) when ``why_not_restartable`` says why not."""
        why = self.why_not_restartable()
        if why is not None:
            raise ValueError(f"{type(self).__name__} cannot be restarted: {why}; build one anew")
        for name in set(vars(self)) - self._machinery:
            delattr(self, name)
        self._restarting = True
        type(self).__init__(self, *args, **kwargs)
        return self  # type: ignore[return-value]

    def why_not_restartable(self) -> str | None:
        """Why a restart would not give the chart built afresh, or None. Two reasons, checked when the
        chart was built (``_restart_hazard``): a callback that python-statemachine bound to the
        chart's data, and entry or exit callbacks, which run while the library builds the chart, so
        that what they set is taken for its machinery. And one checked now: a class of the chart that
        defines anything else than it did when the chart was built (a test's patch), since the
        library resolved each callback to a method then."""
        if self._restart_hazard is not None:
            return self._restart_hazard
        if _definition(type(self)) != self._definition:
            return "its classes have changed since it was built"
        return None

    def __getstate__(self) -> dict[str, Any]:
        """python-statemachine's state, less the definition kept for ``why_not_restartable``: it holds
        the classes' own namespaces, which neither pickle nor copy. An unpickled or copied chart is
        built when python-statemachine resolves its callbacks again (``__setstate__``)."""
        state: dict[str, Any] = super().__getstate__()  # type: ignore[no-untyped-call]
        state.pop("_definition", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._definition = _definition(type(self))


# Where the classes that python-statemachine and Python itself give every chart come from: the
# others are the chart's own (``_definition``).
_LIBRARY_MODULES = frozenset({"statemachine", "builtins", "typing"})


def _definition(chart: type[Any]) -> tuple[dict[str, Any], ...]:
    """What a chart's own classes define (every class of its MRO but python-statemachine's, Python's
    and ``typing``'s): the names and the objects they name (methods compare by identity)."""
    return tuple(dict(vars(klass)) for klass in chart.__mro__
                 if klass.__module__.partition(".")[0] not in _LIBRARY_MODULES)


def _restart_hazard(chart: ModelChart[Any], data: frozenset[str]) -> str | None:
    """Why ``chart``, just built with the attributes ``data`` set before python-statemachine built it,
    cannot be restarted exactly (``ModelChart.why_not_restartable``), or None."""
    for state in chart.states_map.values():
        for spec in (*state.enter, *state.exit):
            if not spec.is_convention or hasattr(type(chart), spec.attr_name):
                return f"state {state.id} has entry or exit callbacks"
    for visited in (*iterate_states_and_transitions(chart.states), chart):
        for spec in visited._specs:
            name = spec.attr_name if isinstance(spec.attr_name, str) else None
            if name is not None and name in data:
                return f"its callback {name!r} names data, which python-statemachine bound when it was built"
    return None


class _Bare(ModelChart["_Bare"]):
    """A chart with nothing of its own: its class holds what python-statemachine puts on every chart
    class (``ENGINE_ATTRIBUTES``)."""

    only = State(initial=True, final=True)


# What python-statemachine puts on a chart class and instance, and what ``ModelChart`` adds: never
# the chart's data (``data_class``; ``model/compose.py``'s parts' templates).
ENGINE_ATTRIBUTES = frozenset(dir(StateChart)) | frozenset(vars(ModelChart)) | frozenset(vars(_Bare))
_DEFINITION_TYPES = (State, Event, Transition, TransitionList)


def data_class(chart: type[StateChart[Any]], name: str) -> type:
    """A plain class named ``name`` carrying what the chart's class body (and those of its chart base
    classes) define: methods, properties and class constants, but not the states, events and
    transitions, nor the engine's attributes. An instance holds one chart's data without the engine:
    the explorer fires the chart's own methods on it (``checker/compiled.py``), and so does a
    composed chart's part (``model/compose.py``)."""
    carried: dict[str, Any] = {}
    for klass in reversed(chart.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, StateChart)) or klass is StateChart:
            continue
        for attribute, value in vars(klass).items():
            # Dunder methods (``__init__`` above all) belong to the engine, not to the data.
            if (attribute.startswith("__") or attribute in ENGINE_ATTRIBUTES
                    or isinstance(value, _DEFINITION_TYPES)):
                continue
            carried[attribute] = value
    return type(name, (), carried)


def stay(states: Sequence[State], **kwargs: Any) -> TransitionList:
    """A self-transition on every state: the event leaves the control state as it is."""
    result = TransitionList()
    for state in states:
        result = result | state.to.itself(internal=True, **kwargs)
    return result


class _Guard(Protocol):
    @property
    def expected(self) -> bool: ...  # True for a ``cond``, False for an ``unless``


class _Row(Protocol):
    """One transition of a (state, event), as a generator of firing code reads it."""

    @property
    def guards(self) -> Sequence[_Guard]: ...

    @property
    def actions(self) -> Sequence[Any]: ...


def selection_source(rows: Sequence[_Row], call: Callable[[Any], str], result: Callable[[Any], str],
                     refusal: str) -> list[str]:
    """The body of a generated firing function: python-statemachine's selection rule.

    The transitions ``rows`` of one (state, event) are tested in document order, and the
    first whose guards all pass (a ``cond`` true, an ``unless`` false) runs its actions in
    order and returns ``result(row)``; when none is enabled, ``refusal`` (a statement) runs.
    ``call`` gives the source of one guard's or action's call. Both generators of firing code
    build on it: the explorer's view of a whole chart (``checker/compiled.py``) and a
    composed machine's parts (``model/compose.py``).
    """
    lines: list[str] = []
    for row in rows:
        tests = [call(g) if g.expected else f"not {call(g)}" for g in row.guards]
        indent = "    "
        if tests:
            lines.append(f"    if {' and '.join(tests)}:")
            indent = "        "
        lines.extend(f"{indent}{call(a)}" for a in row.actions)
        lines.append(f"{indent}return {result(row)}")
        if not tests:
            return lines  # an unguarded transition always fires; later ones are unreachable
    lines.append(f"    {refusal}")
    return lines

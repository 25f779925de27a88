"""What every model chart shares: python-statemachine's behaviour flags, pinned, and ``stay``.

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

from collections.abc import Sequence
from typing import Any, TypeVar

from statemachine import State, StateChart
from statemachine.transition_list import TransitionList

ChartType = TypeVar("ChartType", bound="ModelChart[Any]")


class ModelChart(StateChart[ChartType]):
    """The base of every model chart: it defines no states, only the pinned flags."""

    allow_event_without_transition = False
    enable_self_transition_entries = False
    atomic_configuration_update = False
    catch_errors_as_events = False


def stay(states: Sequence[State], **kwargs: Any) -> TransitionList:
    """A self-transition on every state: the event leaves the control state as it is."""
    result = TransitionList()
    for state in states:
        result = result | state.to.itself(internal=True, **kwargs)
    return result

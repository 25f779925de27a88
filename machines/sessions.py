"""The case runners every driver shares: the reference's and the model's.

A driver keeps what differs between machines: how a config builds the
reference (or the chart) and how one step becomes calls and an output. The
loop over the steps, and the ``config_error`` result when the config is
rejected, are written once here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from inboxspec.impl.errors import InboxSpecError

Target = TypeVar("Target")


def run_reference_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]],
                       build: Callable[[Mapping[str, Any]], Target],
                       apply_step: Callable[[Target, Mapping[str, Any]], dict[str, Any]],
                       rejects: type[InboxSpecError]) -> dict[str, Any]:
    """``{"outputs": [...]}``, one output a step, or ``{"config_error": code}`` when ``build``
    raises the machine's typed error (``rejects``): then no step runs."""
    try:
        target = build(config)
    except rejects as error:
        return {"config_error": error.code}
    return {"outputs": [apply_step(target, step) for step in steps]}


class ModelSession(ABC):
    """Valid steps applied to a machine's model chart, in the reference's output shape.

    The model has no input validation (it describes behaviour, not parsing), so
    it has no fault order either: callers give it only configs and steps the
    reference accepts, and an invalid step is a caller's bug with an undefined
    result. The errors a chart does output (a ticket that is not held, say) are
    behaviour, and each machine's session says which.
    """

    @abstractmethod
    def __init__(self, config: Mapping[str, Any]) -> None:
        """Build the chart from a case's ``config``."""

    @abstractmethod
    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        """Send one step's event(s) to the chart and return its output."""

    @classmethod
    def run_case(cls, config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The model's case runner (``Machine.run_model_case``)."""
        session = cls(config)
        return {"outputs": [session.apply(step) for step in steps]}

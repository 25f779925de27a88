"""The step bookkeeping every lockstep test shares.

A lockstep test is a Hypothesis rule-based state machine whose rules are the
spec's event names. Each rule builds one step and hands it to ``_step``, which
applies it to the model session and to the reference, records it (with the
model's output as its expectation: the model is the description a case pins),
notes both outputs, and, when they differ, notes the trace so far as a
ready-to-commit conformance case. ``outputs_agree`` compares the two as JSON,
the way ``conform`` compares: in Python ``True == 1`` and ``1 == 1.0``.

A test subclass sets ``machine``, calls ``start`` from its ``@initialize`` rule
and adds only what differs: its rules and its state invariants. An event that
takes no argument is a rule written ``reset = event_rule("reset")``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from hypothesis import note
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from inboxspec.conformance.casefiles import case_from_trace
from inboxspec.conformance.compare import canonical
from inboxspec.machines.frame import case_step

Output = dict[str, Any]


class Applies(Protocol):
    def apply(self, step: Mapping[str, Any]) -> Output: ...


class Lockstep(RuleBasedStateMachine):
    machine: ClassVar[str]  # the registry name, for the counterexample case
    notes_counterexample_case: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.trace: list[dict[str, Any]] = []
        self.model_output: Output | None = None
        self.impl_output: Output | None = None

    def start(self, config: dict[str, Any], model: Applies,
              reference: Callable[[Mapping[str, Any]], Output]) -> None:
        """Begin a run: ``model`` is the model session, ``reference`` applies one step to the reference."""
        note(f"config = {json.dumps(config)}")
        self.config = config
        self.model_session = model
        self.apply_reference = reference

    def _step(self, event: str, **args: Any) -> None:
        step = case_step(event, args)
        self.model_output = self.model_session.apply(step)
        self.impl_output = self.apply_reference(step)
        self.trace.append({**step, "expect": self.model_output})
        note(f"{event} {json.dumps(args)} -> model {canonical(self.model_output)} / "
             f"impl {canonical(self.impl_output)}")
        if self.notes_counterexample_case and canonical(self.model_output) != canonical(self.impl_output):
            case = case_from_trace(self.machine, "lockstep-counterexample", self.config, self.trace)
            note("as a conformance case:\n" + json.dumps(case, indent=2))

    @precondition(lambda self: self.model_output is not None)
    @invariant()
    def outputs_agree(self) -> None:
        assert canonical(self.model_output) == canonical(self.impl_output)


def event_rule(event: str) -> Any:
    """A rule that sends ``event`` without arguments; the rule reads as the event in a trace."""

    def send(self: Lockstep) -> None:
        self._step(event)

    send.__name__ = send.__qualname__ = event
    return rule()(send)

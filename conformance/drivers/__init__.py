"""Drivers run one conformance case against the reference implementation.

A driver turns a case's JSON config and step inputs into calls on
``inboxspec.impl`` and encodes what comes back in the suite's output shape.
The reference adapter, ``inboxspec check`` and the lockstep tests all go
through the same driver, so there is one encoding of every output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inboxspec.conformance.drivers import idle_subscriptions, wake_gate

# A case runner takes (config, steps without expectations) and returns either
# {"outputs": [...]} or {"config_error": code}.
CaseRunner = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]]], dict[str, Any]]

DRIVERS: dict[str, CaseRunner] = {
    "wake-gate": wake_gate.run_case,
    "idle-subscriptions": idle_subscriptions.run_case,
}

# The same cases replayed on the model charts (valid-input cases only).
MODEL_DRIVERS: dict[str, CaseRunner] = {
    "wake-gate": wake_gate.run_model_case,
}

FEATURES: dict[str, list[str]] = {
    "wake-gate": wake_gate.FEATURES,
    "idle-subscriptions": idle_subscriptions.FEATURES,
}

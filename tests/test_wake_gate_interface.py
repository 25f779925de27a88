"""The interface data (spec/wake-gate.interface.json, whose tables the spec shows) and the
code that implements it name the same things.

A port author reads the tables in spec/wake-gate.md (WAKE-IF-1, WAKE-IF-2,
WAKE-IF-5), generated from the data; the reference reads its own constants.
These tests fail when one of them gains or loses a key, an event or an error
code without the other.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import cast

from statemachine.event import Event

from inboxspec.impl.wake_gate import CONFIG_KEYS, GateOptions, WakeGateError, WakePolicy
from inboxspec.machines.wake_gate_driver import INTERFACE, apply_step
from inboxspec.model.wake_gate import WakeGateChart
from inboxspec.spec.index import machine_spec_text

SPEC = machine_spec_text("wake-gate")


def section(start: str, stop: str) -> str:
    return SPEC[SPEC.index(start):SPEC.index(stop, SPEC.index(start))]


def test_config_keys_and_options_are_the_reference_ones() -> None:
    assert {key.name for key in INTERFACE.config_keys} == set(CONFIG_KEYS)
    assert set(INTERFACE.options) == {f.name for f in fields(GateOptions)}


def test_the_events_are_the_chart_events() -> None:
    # On the class, `events` is the metaclass's list of events; mypy sees the instance property.
    events = cast("list[Event]", WakeGateChart.events)
    chart_events = {e.id for e in events} - {"elapse"}  # time is now_ms in a case
    assert chart_events == set(INTERFACE.events)


def test_every_error_code_the_spec_lists_is_one_the_reference_raises() -> None:
    def subclasses(cls: type[WakeGateError]) -> list[type[WakeGateError]]:
        return [cls, *(c for sub in cls.__subclasses__() for c in subclasses(sub))]

    raised = {c.code for c in subclasses(WakeGateError)[1:]}
    assert {code for code, _meaning in INTERFACE.errors} == raised
    invalid_input = section("## Invalid input", "- **WAKE-ERR-1**")
    listed = set(re.findall(r"`((?:invalid|empty)_[a-z]+)`", invalid_input))
    fault_order = set(re.findall(r"`((?:invalid|empty)_[a-z]+)`", " ".join(INTERFACE.fault_order)))
    assert listed == raised and fault_order == raised - {"invalid_config", "invalid_streak", "invalid_floor"}
    codes = {argument.code for event in INTERFACE.events.values() for argument in event.arguments}
    assert codes <= raised


def test_an_absent_plugin_pending_is_false_and_a_null_one_is_rejected() -> None:
    """WAKE-IF-3, through the reference driver: only the empty-batch option tells false from true."""
    def step(args: dict[str, object]) -> dict[str, object]:
        return apply_step(WakePolicy(options={"reject_empty_batch": True}), {"event": "decide", "args": args})

    assert step({"batch": [], "now_ms": 0}) == {"error": "empty_batch", "streak": 0}
    assert step({"batch": [], "now_ms": 0, "plugin_pending": True})["wake"] is True
    assert step({"batch": [], "now_ms": 0, "plugin_pending": None}) == {"error": "invalid_batch", "streak": 0}

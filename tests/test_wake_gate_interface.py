"""The spec's Interface tables and the code that implements them name the same things.

A port author reads the tables in spec/wake-gate.md (WAKE-IF-1, WAKE-IF-2,
WAKE-IF-5); the reference reads its own constants. These tests fail when one
of them gains or loses a key, an argument or an error code without the other.
"""

from __future__ import annotations

import re
from typing import cast

from statemachine.event import Event

from inboxspec.impl.wake_gate import CONFIG_KEYS, GateOptions, WakeGateError, WakePolicy
from inboxspec.machines.wake_gate_driver import EVENT_ARGUMENTS, apply_step
from inboxspec.model.wake_gate import WakeGateChart
from inboxspec.spec.index import machine_spec_text

SPEC = machine_spec_text("wake-gate")


def section(start: str, stop: str) -> str:
    return SPEC[SPEC.index(start):SPEC.index(stop, SPEC.index(start))]


def table_rows(text: str) -> list[list[str]]:
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.strip().startswith("|")]
    return rows[2:]  # past the header and its rule


def test_config_table_names_the_reference_config_keys_and_options() -> None:
    text = section("**WAKE-IF-1**", "### Events and arguments")
    keys = {row[0].strip("`") for row in table_rows(text)}
    assert keys == set(CONFIG_KEYS)
    listing = text.split("`options` is a nested object")[1].split("each `true`")[0]
    assert set(re.findall(r"`([a-z_]+)`", listing)) == set(GateOptions.__dataclass_fields__)


def test_events_table_names_the_driver_arguments_and_the_chart_events() -> None:
    rows = table_rows(section("**WAKE-IF-2**", "**WAKE-IF-3**"))
    table: dict[str, set[str]] = {}
    event = ""
    for row in rows:
        event = row[0].strip("`") or event
        table.setdefault(event, set())
        if row[1] != "none":
            table[event].add(row[1].strip("`"))
    assert table == {name: set(arguments) for name, arguments in EVENT_ARGUMENTS.items()}
    # On the class, `events` is the metaclass's list of events; mypy sees the instance property.
    events = cast("list[Event]", WakeGateChart.events)
    chart_events = {e.id for e in events} - {"elapse"}  # time is now_ms in a case
    assert chart_events == set(table)


def test_every_error_code_the_spec_lists_is_one_the_reference_raises() -> None:
    def subclasses(cls: type[WakeGateError]) -> list[type[WakeGateError]]:
        return [cls, *(c for sub in cls.__subclasses__() for c in subclasses(sub))]

    raised = {c.code for c in subclasses(WakeGateError)[1:]}
    invalid_input = section("## Invalid input", "- **WAKE-ERR-1**")
    listed = set(re.findall(r"`((?:invalid|empty)_[a-z]+)`", invalid_input))
    fault_order = set(re.findall(r"`((?:invalid|empty)_[a-z]+)`", section("**WAKE-IF-5**", "## Glossary")))
    assert listed == raised and fault_order == raised - {"invalid_config", "invalid_streak", "invalid_floor"}


def test_an_absent_plugin_pending_is_false_and_a_null_one_is_rejected() -> None:
    """WAKE-IF-3, through the reference driver: only the empty-batch option tells false from true."""
    def step(args: dict[str, object]) -> dict[str, object]:
        return apply_step(WakePolicy(options={"reject_empty_batch": True}), {"event": "decide", "args": args})

    assert step({"batch": [], "now_ms": 0}) == {"error": "empty_batch", "streak": 0}
    assert step({"batch": [], "now_ms": 0, "plugin_pending": True})["wake"] is True
    assert step({"batch": [], "now_ms": 0, "plugin_pending": None}) == {"error": "invalid_batch", "streak": 0}

"""The interface data's parts and null-is-absent arguments, as idle subscriptions uses them
(spec/idle-subscriptions.interface.json): both halves are described, a null that means absent
takes the default, and bad uses are typed errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inboxspec.machines import interface
from inboxspec.spec import interface_tables

IDLE = interface.load("idle-subscriptions")


def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(interface.interface_text("idle-subscriptions"))
    return data


def test_the_data_describes_both_halves_and_the_helpers() -> None:
    assert set(IDLE.parts) == {"requester", "target", "helpers"}
    by_part = {part: {e.name for e in IDLE.events.values() if part in e.part_of} for part in IDLE.parts}
    assert {"subscribe", "receive_notice", "advance"} == by_part["requester"]
    assert {"add_subscriber", "turn_started", "turn_finished", "set_held", "exit", "shutdown",
            "advance"} == by_part["target"]
    assert by_part["helpers"] == {e.name for e in IDLE.events.values() if e.pure}
    assert all(event.part_of for event in IDLE.events.values())
    assert all(key.part_of for key in IDLE.config_keys)


def test_a_null_that_means_absent_takes_the_default() -> None:
    clock = IDLE.events["format_clock"]
    given = {"epoch_ms": 5, "utc_offset_min": None}
    assert clock.with_defaults(given) == {"epoch_ms": 5, "utc_offset_min": 0}
    # A required argument's null is kept, for its own check to reject.
    assert IDLE.events["advance"].with_defaults({"now_ms": None}) == {"now_ms": None}


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["events"][0].update(part_of=["nowhere"]), "unknown part"),
    (lambda d: d["config"]["keys"][0].update(part_of=["nowhere"]), "unknown part"),
    (lambda d: d["events"][0]["arguments"][0].update(null_is_absent=True), "null cannot mean absent"),
])
def test_bad_parts_and_nulls_are_typed_errors(change: Any, message: str) -> None:
    data = raw()
    change(data)
    with pytest.raises(interface.InterfaceError, match=message):
        interface.parse(data)


def test_only_a_machine_with_parts_gets_a_part_column() -> None:
    idle = interface_tables.sections(IDLE)
    assert "idle-subscriptions-interface-parts" in idle
    assert idle["idle-subscriptions-interface-events"].startswith(
        "| event | argument | type | when absent | bad value | part |")
    peer = interface_tables.sections(interface.load("peer-delivery"))
    assert not any(name.endswith("-parts") for name in peer)
    header = "| event | argument | type | when absent | bad value |\n"
    assert peer["peer-delivery-interface-events"].startswith(header)

"""The interface data files (spec/<machine>.interface.json): they match their schema, a bad one
is a typed InterfaceError naming the problem, the spec's Interface tables follow the data, and
the Node port's shipped copies are the spec's files."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.spec_sections import port_interface_copies
from inboxspec.machines import interface
from inboxspec.spec import interface_tables

# Every machine that has interface data.
MACHINES = tuple(entry.name for entry in machines.all_machines() if entry.interface is not None)


def raw(machine: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(interface.interface_text(machine))
    return data


@pytest.mark.parametrize("machine", MACHINES)
def test_each_machine_has_valid_interface_data_on_its_registry_entry(machine: str) -> None:
    entry = machines.get(machine)
    assert entry.interface is not None and entry.interface.machine == machine
    assert entry.interface == interface.parse(raw(machine))


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["events"][0]["arguments"].append({"name": "x", "type": "no_such_type"}), "unknown type"),
    (lambda d: d["types"].update(bad={"label": "b", "schema": {"$vocabulary": "nope"}})
     or d["config"]["keys"].append({"name": "k", "type": "bad"}), "unknown list vocabulary 'nope'"),
    (lambda d: d.update(surprise=1), "Additional properties"),
    (lambda d: d["events"].append(copy.deepcopy(d["events"][0])), "listed twice"),
    (lambda d: d["events"][0]["arguments"].append({"name": "y", "type": "boolean", "required": True,
                                                    "default": False}), "required and has a default"),
    (lambda d: d["config"].update(options_vocabulary="missing"), "no list vocabulary 'missing'"),
])
def test_bad_interface_data_is_a_typed_error(change: Any, message: str) -> None:
    data = raw("peer-delivery")
    change(data)
    with pytest.raises(interface.InterfaceError, match=message):
        interface.parse(data)


def _reorder_kinds(data: dict[str, Any]) -> None:
    kinds = data["vocabularies"]["record_types"]
    kinds[0], kinds[1] = kinds[1], kinds[0]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["vocabularies"]["record_types"].append("nap"), "not the vocabulary 'record_types'"),
    (_reorder_kinds, "not the vocabulary 'record_types'"),
    (lambda d: d["output_records"].update(kinds="phases"), "not the vocabulary 'phases'"),
    (lambda d: d["output_records"].update(kinds="nowhere"), "no list vocabulary 'nowhere'"),
    (lambda d: d["output_records"]["shapes"]["wake"].reverse(), "'wake' record's first field is not 'type'"),
    (lambda d: d["output_records"].update(field="records"), "field 'records' is no event's output"),
])
def test_bad_output_records_are_a_typed_error(change: Any, message: str) -> None:
    """The record kinds are written twice in the host's data (the vocabulary and the shapes):
    they must agree, order included, and the field must be an output."""
    data = raw("host")
    change(data)
    with pytest.raises(interface.InterfaceError, match=message):
        interface.parse(data)


def test_the_record_list_follows_the_data() -> None:
    data = raw("host")
    data["output_records"]["shapes"]["reminder"].append("text")
    after = interface_tables.sections(interface.parse(data))["host-interface-output-records"]
    assert '- `reminder`: `{"type", "session", "due_ms", "text"}`;' in after.splitlines()


def test_not_an_object_is_a_typed_error() -> None:
    bad: object
    for bad in (None, [], "x", 3):
        with pytest.raises(interface.InterfaceError):
            interface.parse(bad)


def test_the_tables_follow_the_data() -> None:
    """A new argument, default and vocabulary word appear in the generated sections."""
    data = raw("peer-delivery")
    send = next(e for e in data["events"] if e["name"] == "send_message")
    send["arguments"].append({"name": "probe_verdict", "type": "boolean", "default": False,
                              "code": "invalid_message"})
    data["vocabularies"]["drop_reasons"].append("probe-reason")
    before = interface_tables.sections(interface.load("peer-delivery"))
    after = interface_tables.sections(interface.parse(data))
    assert "`probe_verdict`" not in before["peer-delivery-interface-events"]
    row = "|  | `probe_verdict` | boolean | `false` | `invalid_message` |"
    assert row in after["peer-delivery-interface-events"]
    assert '"probe-reason"' in after["peer-delivery-interface-vocabularies"]
    assert '"probe-reason"' not in before["peer-delivery-interface-vocabularies"]


def test_a_machine_documents_every_event_of_its_interface_data() -> None:
    for machine in MACHINES:
        tables = interface_tables.sections(interface.load(machine))
        for event in interface.load(machine).events:
            assert f"`{event}`" in tables[f"{machine}-interface-events"], (machine, event)
            assert f"`{event}`" in tables[f"{machine}-interface-outputs"], (machine, event)


def test_the_node_port_ships_the_spec_files_unchanged() -> None:
    copies = port_interface_copies()
    assert {f"{m}.interface.json" for m in MACHINES} <= {path.name for path in copies}
    for path, text in copies.items():
        assert path.read_text(encoding="utf-8") == text, f"{path} drifted: run inboxspec spec generate"


@pytest.mark.parametrize("machine", MACHINES)
def test_defaults_and_argument_order_come_from_the_data(machine: str) -> None:
    data = interface.load(machine)
    for event in data.events.values():
        merged = event.with_defaults({"zz_unknown": 1})
        defaults = [a.name for a in event.arguments if a.has_default]
        assert list(merged) == [*defaults, "zz_unknown"]
        if defaults:
            merged[defaults[0]] = "changed"  # a fresh copy each time: the data is not touched
            assert event.defaults()[defaults[0]] != "changed"

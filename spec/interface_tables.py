"""The Interface tables of a machine's spec document, generated from its interface data.

``checker/spec_sections.py`` writes them between ``<!-- BEGIN GENERATED:
<machine>-interface-... -->`` markers and ``inboxspec spec generate --check``
reports drift, as for the diagrams. The tables give the names, types and
defaults (``spec/<machine>.interface.json``); the prose around them keeps the
meaning.
"""

from __future__ import annotations

import json
from typing import Any

from inboxspec.machines.interface import Interface, Parameter


def _code(value: str) -> str:
    return f"`{value}`"


def _json(value: Any) -> str:
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _absent(parameter: Parameter) -> str:
    if parameter.required:
        return f"rejected: `{parameter.code}`" if parameter.code else "required"
    if parameter.has_default:
        also_null = parameter.null_is_absent and parameter.default is not None
        return _json(parameter.default) + (" (null too)" if also_null else "")
    return parameter.when_absent or "optional"


def _parts(interface: Interface, part_of: tuple[str, ...]) -> str:
    """The part column's cell; a machine without parts has no part column."""
    return f" {', '.join(part_of) or '(all)'} |" if interface.parts else ""


# A config key the conformance runner handles (``runner`` in the data): what its rows say.
RUNNER_KEY = {"supplies": " (the runner's)", "checks": ""}
RUNNER_NULL = {"supplies": "never sent", "checks": "checked by the runner"}
# A parameter naming paths the machine reads (``reads_paths``): what its type column adds.
READS_PATHS = "; read (PROTO-FIX-5)"


def _type_label(parameter: Parameter) -> str:
    """A parameter's type as a table's type column prints it."""
    return parameter.label + (READS_PATHS if parameter.reads_paths else "")


def _null(interface: Interface, key: Parameter) -> str:
    if key.runner is not None:
        return RUNNER_NULL[key.runner]
    return "accepted" if key.nullable else f"`{interface.config_error}`"


def config_table(interface: Interface) -> str:
    part = (" part |", "---|") if interface.parts else ("", "")
    rows = [f"| key | type | default | null |{part[0]}", f"|---|---|---|---|{part[1]}"]
    for key in interface.config_keys:
        name = _code(key.name) + (RUNNER_KEY[key.runner] if key.runner else "")
        rows.append(f"| {name} | {_type_label(key)} | {_absent(key)} | {_null(interface, key)} |"
                    f"{_parts(interface, key.part_of)}")
    return "\n".join(rows) + "\n"


def events_table(interface: Interface) -> str:
    """One row per argument: its type, what its absence means and the code of a bad value
    (and, for a machine with parts, the parts its event belongs to; when an event has its own,
    the code of an unknown argument name)."""
    own = any(e.extra_argument_error for e in interface.events.values())
    part = (" part |", "---|") if interface.parts else ("", "")
    head = "| event | argument | type | when absent | bad value |"
    rule = "|---|---|---|---|---|"
    if own:
        head, rule = head + " unknown argument |", rule + "---|"
    rows = [head + part[0], rule + part[1]]
    for event in interface.events.values():
        name = _code(event.name) + (" (pure)" if event.pure else "") + (" (harness)" if event.harness else "")
        parts = _parts(interface, event.part_of)
        unknown = ""
        if own:
            code = interface.unknown_argument_code(event.name)
            unknown = f" {_code(code) if code else '(none)'} |"
        if not event.arguments:
            rows.append(f"| {name} | none | | | |{unknown}{parts}")
        for index, argument in enumerate(event.arguments):
            absent = _absent(argument) + ("; when given, the only argument" if argument.alone else "")
            rows.append(f"| {name if index == 0 else ''} | {_code(argument.name)} | {_type_label(argument)} "
                        f"| {absent} | {_code(argument.code) if argument.code else '(none)'} |"
                        f"{unknown if index == 0 else (' |' if own else '')}"
                        f"{parts if index == 0 else (' |' if parts else '')}")
    return "\n".join(rows) + "\n"


def parts_table(interface: Interface) -> str:
    rows = ["| part | what it is | events |", "|---|---|---|"]
    for name, meaning in interface.parts.items():
        events = [_code(e.name) for e in interface.events.values() if name in e.part_of]
        rows.append(f"| {_code(name)} | {meaning} | {', '.join(events) or '(none)'} |")
    return "\n".join(rows) + "\n"


def records_table(interface: Interface) -> str:
    """One row per field of each record that a config key or an argument carries."""
    rows = ["| record | field | type | when absent | null |", "|---|---|---|---|---|"]
    for record in interface.records.values():
        for index, field in enumerate(record.fields):
            absent = _absent(field)
            if field.only_for is not None and not field.required:
                on, values = field.only_for
                absent = (f"required exactly when `{on}` is {' or '.join(_json(v) for v in values)}; "
                          f"else must be absent")
            rows.append(f"| {_code(record.name) if index == 0 else ''} | {_code(field.name)} | {field.label} "
                        f"| {absent} | {'accepted' if field.nullable else f'`{interface.config_error}`'} |")
    return "\n".join(rows) + "\n"


def outputs_table(interface: Interface) -> str:
    rows = ["| step | output fields |", "|---|---|"]
    for event in interface.events.values():
        fields = interface.output_fields(event.name, error=False)
        rows.append(f"| {_code(event.name)} | {', '.join(map(_code, fields)) or '(none)'} |")
    stateful = [e for e in interface.events.values() if not e.pure]
    pure = [e for e in interface.events.values() if e.pure]
    if stateful:
        fields = interface.output_fields(stateful[0].name, error=True)
        which = " of a stateful event" if pure else ""
        rows.append(f"| any rejected step{which} | {', '.join(map(_code, fields))} |")
    if pure:
        fields = interface.output_fields(pure[0].name, error=True)
        rows.append(f"| any rejected step of a pure event | {', '.join(map(_code, fields))} |")
    return "\n".join(rows) + "\n"


def output_records_list(interface: Interface) -> str:
    """Per kind of record in the output field that lists them, its exact fields."""
    records = interface.output_records
    assert records is not None
    return "".join(f"- {_code(kind)}: `{{{', '.join(json.dumps(name) for name in fields)}}}`;\n"
                   for kind, fields in records.shapes.items())


def errors_table(interface: Interface) -> str:
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| {_code(code)} | {meaning} |" for code, meaning in interface.errors]
    return "\n".join(rows) + "\n"


def vocabularies_table(interface: Interface) -> str:
    rows = ["| vocabulary | members |", "|---|---|"]
    for name, words in interface.vocabularies.items():
        if isinstance(words, list):
            members = ", ".join(_json(w) for w in words)
        else:
            members = "; ".join(f"{_json(k)}: {_json(v)}" for k, v in words.items())
        rows.append(f"| {_code(name)} | {members} |")
    return "\n".join(rows) + "\n"


def fault_order_list(interface: Interface) -> str:
    return "".join(f"{index}. {step}\n" for index, step in enumerate(interface.fault_order, 1))


def sections(interface: Interface) -> dict[str, str]:
    """Every generated Interface section of one machine, by marker name."""
    name = interface.machine
    parts = {f"{name}-interface-parts": parts_table(interface)} if interface.parts else {}
    records = {f"{name}-interface-records": records_table(interface)} if interface.records else {}
    output_records = ({f"{name}-interface-output-records": output_records_list(interface)}
                      if interface.output_records else {})
    return {
        **parts,
        **records,
        **output_records,
        f"{name}-interface-config": config_table(interface),
        f"{name}-interface-events": events_table(interface),
        f"{name}-interface-outputs": outputs_table(interface),
        f"{name}-interface-errors": errors_table(interface),
        f"{name}-interface-fault-order": fault_order_list(interface),
        f"{name}-interface-vocabularies": vocabularies_table(interface),
    }

"""A machine's interface as data: ``spec/<machine>.interface.json``.

The prose spec keeps the meaning of each config key, argument and output; the
interface file keeps their names, types and defaults, once, in a form a port
author's adapter can load as well (``spec/interface.schema.json`` defines it).
Everything that needs those facts reads them from here: the drivers' argument
handling, the explorers' alphabets and fuzz grammars, the lockstep strategies,
the generated Interface tables of the spec (``checker/spec_sections.py``) and
the per-machine case schema of ``cases lint`` (``conformance/interface_lint.py``).

A machine without an interface file has ``Machine.interface`` None; adding one
is writing the file.
"""

from __future__ import annotations

import functools
import itertools
import json
import marshal
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jsonschema

from inboxspec.impl.values import refuse_unknown_arguments
from inboxspec.machines import schema_dialect

SCHEMA_FILE = "interface.schema.json"


# The types a parameter that ``reads_paths`` may have: a path, or a list of paths (what
# conformance/confinement.py reads of its value).
PATH_SCHEMAS = ({"type": "string"}, {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string"}})


class InterfaceError(ValueError):
    """An interface file that is missing, not JSON, or does not match its schema."""


@dataclass(frozen=True)
class Parameter:
    """A config key or an event argument."""

    name: str
    type: str  # a key of the file's `types`
    label: str  # the type as the spec's tables print it
    schema: Mapping[str, Any]  # the JSON Schema of a value (null added when nullable)
    nullable: bool
    has_default: bool
    default: Any
    required: bool
    when_absent: str | None
    code: str | None
    null_is_absent: bool = False  # null is accepted and taken as absent: the default applies
    part_of: tuple[str, ...] = ()  # the machine's parts it belongs to (keys of Interface.parts)
    runner: str | None = None  # a config key the runner "supplies" or "checks" (None: neither)
    alone: bool = False  # when given, no other argument may be
    only_for: tuple[str, tuple[str, ...]] | None = None  # a record field present exactly for these values
    world: bool = False  # a config key of the scripted world, which the adapter reads itself
    # The machine reads the filesystem at the paths the value names (PROTO-FIX-5: a case from outside
    # the bundled suite names only paths inside its fixture here; conformance/confinement.py).
    reads_paths: bool = False

    @functools.cached_property
    def schema_text(self) -> str:
        """``schema`` as ``_first_fault`` keys it, written once (the data never changes)."""
        return _schema_text(self.schema)

    @property
    def absent_label(self) -> str:
        """What absence means, as the spec's tables print it."""
        if self.required:
            return f"required ({self.code})" if self.code else "required"
        if self.has_default:
            return f"default `{json.dumps(self.default)}`"
        return self.when_absent or "optional"


def defaults_of(parameters: tuple[Parameter, ...]) -> dict[str, Any]:
    """The value each parameter with a default takes when absent, as a fresh copy, so that a
    caller may change it without changing the data."""
    return {p.name: _fresh(p.default) for p in parameters if p.has_default}


def _fresh(value: Any) -> Any:
    """A copy of a JSON value that shares nothing mutable with it (a scalar is its own copy)."""
    return value if value is None or type(value) in (str, int, float, bool) else json.loads(json.dumps(value))


@dataclass(frozen=True)
class Record:
    """A named object that a config key or an argument carries (a scripted job, say)."""

    name: str
    description: str
    fields: tuple[Parameter, ...]
    schema: Mapping[str, Any]  # the JSON Schema of one such object

    def field(self, name: str) -> Parameter:
        return next(f for f in self.fields if f.name == name)

    def defaults(self) -> dict[str, Any]:
        """The value each field with a default takes when absent (a fresh copy)."""
        return defaults_of(self.fields)

    def with_defaults(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """``raw`` over the defaults; fields without a default stay absent when absent."""
        return {**self.defaults(), **raw}


@dataclass(frozen=True)
class OutputRecords:
    """An output field that lists records of several kinds (the host's ``events``): per kind, in
    the order of the vocabulary that names the kinds, the record's exact fields, its kind field
    first."""

    field: str
    kind_field: str
    shapes: Mapping[str, tuple[str, ...]]

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the field: a list of records, each of a kind with exactly its fields."""
        return {"type": "array", "items": {
            "type": "object",
            "required": [self.kind_field],
            "properties": {self.kind_field: {"enum": list(self.shapes)}},
            "allOf": [{"if": {"properties": {self.kind_field: {"const": kind}}},
                       "then": {"required": list(fields),
                                "properties": {name: True for name in fields},
                                "additionalProperties": False}}
                      for kind, fields in self.shapes.items()],
        }}


def _output_records(data: Mapping[str, Any], events: Mapping[str, Event]) -> OutputRecords | None:
    raw = data.get("output_records")
    if raw is None:
        return None
    machine, kinds = data["machine"], data["vocabularies"].get(raw["kinds"])
    if not isinstance(kinds, list):
        raise InterfaceError(f"{machine}: output_records names no list vocabulary {raw['kinds']!r}")
    # WARNING: the kinds are written twice in the file (the vocabulary, and the shapes' names)
    # because the vocabulary table prints them; they are checked equal here, order included.
    if list(raw["shapes"]) != kinds:
        raise InterfaceError(f"{machine}: output_records' shapes name {list(raw['shapes'])}, "
                             f"not the vocabulary {raw['kinds']!r}: {kinds}")
    for kind, fields in raw["shapes"].items():
        if fields[0] != raw["kind_field"]:
            raise InterfaceError(f"{machine}: the {kind!r} record's first field is not {raw['kind_field']!r}")
    if not any(raw["field"] in event.outputs for event in events.values()):
        raise InterfaceError(f"{machine}: output_records' field {raw['field']!r} is no event's output")
    return OutputRecords(field=raw["field"], kind_field=raw["kind_field"],
                         shapes={kind: tuple(fields) for kind, fields in raw["shapes"].items()})


@dataclass(frozen=True)
class Event:
    name: str
    pure: bool
    arguments: tuple[Parameter, ...]
    outputs: tuple[str, ...]
    part_of: tuple[str, ...] = ()  # the machine's parts it belongs to (keys of Interface.parts)
    harness: bool = False  # a harness step that changes the world between events, not a machine event
    extra_argument_error: str | None = None  # this event's own code for an unknown name
    world: bool = False  # an event of the scripted world, which the adapter plays itself

    # Worked out once: the drivers read them at every step, and an event's data never changes.
    @functools.cached_property
    def argument_names(self) -> tuple[str, ...]:
        """In the order their faults are checked."""
        return tuple(a.name for a in self.arguments)

    @functools.cached_property
    def _null_is_absent(self) -> frozenset[str]:
        return frozenset(a.name for a in self.arguments if a.null_is_absent)

    def argument(self, name: str) -> Parameter:
        return next(a for a in self.arguments if a.name == name)

    def defaults(self) -> dict[str, Any]:
        """The value each argument with a default takes when absent (a fresh copy)."""
        return defaults_of(self.arguments)

    def with_defaults(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` over the defaults, in the event's argument order (other names after);
        arguments without a default stay absent when absent, and a null that means
        absent (``null_is_absent``) takes the default."""
        given = {name: value for name, value in args.items()
                 if not (value is None and name in self._null_is_absent)}
        merged = {**self.defaults(), **given}
        ordered = {name: merged[name] for name in self.argument_names if name in merged}
        return {**ordered, **{name: value for name, value in merged.items() if name not in ordered}}


def option_feature(name: str) -> str:
    """The feature tag of the finding option ``name``: a case that turns the option on carries it,
    and a port that has not built the option lists it as unsupported, so that the case is skipped
    (spec/conformance-protocol.md, PROTO-START-1; each machine's spec names its tags). The one
    place in the code where the tag is spelt."""
    return f"option:{name}"


def features_for_options(options: Mapping[str, Any]) -> list[str]:
    """The tags a config's ``options`` object needs: one per option set to true, in its order."""
    return [option_feature(name) for name, on in options.items() if on is True]


@dataclass(frozen=True)
class Interface:
    machine: str
    config_error: str
    config_keys: tuple[Parameter, ...]
    options_vocabulary: str | None
    extra_argument_error: str | None
    events: Mapping[str, Event]
    state_fields: tuple[str, ...]
    error_outputs: tuple[str, ...]
    errors: tuple[tuple[str, str], ...]  # (code, meaning), in the spec's order
    fault_order: tuple[str, ...]
    vocabularies: Mapping[str, Any]
    raw: Mapping[str, Any]  # the file as read
    parts: Mapping[str, str] = field(default_factory=dict)  # part name -> what it is
    records: Mapping[str, Record] = field(default_factory=dict)
    output_records: OutputRecords | None = None

    def vocabulary(self, name: str) -> tuple[str, ...]:
        """A list vocabulary, in the file's order."""
        words = self.vocabularies[name]
        if not isinstance(words, list):
            raise KeyError(f"{self.machine}: vocabulary {name!r} is not a list")
        return tuple(words)

    @property
    def options(self) -> tuple[str, ...]:
        return self.vocabulary(self.options_vocabulary) if self.options_vocabulary else ()

    @property
    def option_features(self) -> tuple[str, ...]:
        """The feature tag of each of the machine's options, in the vocabulary's order: a bundled
        machine's features (``frame.bundled_features``)."""
        return tuple(option_feature(name) for name in self.options)

    def config_key(self, name: str) -> Parameter:
        return next(k for k in self.config_keys if k.name == name)

    def config_defaults(self) -> dict[str, Any]:
        return defaults_of(self.config_keys)

    def config_with_defaults(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**self.config_defaults(), **config}

    def unknown_argument_code(self, event: str) -> str | None:
        """The code of an argument name ``event`` does not define."""
        return self.events[event].extra_argument_error or self.extra_argument_error

    def config_fault(self, config: object, *, world_only: bool = False) -> str | None:
        """What is wrong with a config by the data (unknown keys, wrong types, records
        included; integers are JSON integers, never booleans or floats), or None. With
        ``world_only`` the values of the keys that are not the scripted world's are left to
        the machine under test, which checks its own."""
        keys = [k for k in self.config_keys if k.world or not world_only]
        fault = _first_fault(self._config_names_schema, config, self._config_names_text)
        if fault is not None or not isinstance(config, Mapping):
            return fault
        for key in keys:
            if key.name in config:
                fault = _first_fault(key.schema, config[key.name], key.schema_text)
                if fault is not None:
                    return f"{key.name} must be {key.label}: {fault}"
        return None

    def argument_fault(self, event: str, args: Mapping[str, Any], *,
                       values: bool = True) -> tuple[str | None, str] | None:
        """The first fault of a step's arguments by the data, in fault order, as (code,
        message): an unknown name, then each argument in the event's order (absent and
        required, a bad value, or given beside an ``alone`` one). None when there is none.
        Without ``values`` only names and absence are checked: the values are left to the
        machine under test, which checks its own."""
        entry = self.events[event]
        try:
            refuse_unknown_arguments(event, args, entry.argument_names, ValueError)
        except ValueError as unknown:
            return self.unknown_argument_code(event), str(unknown)
        for argument in entry.arguments:
            if argument.name not in args:
                if argument.required:
                    return argument.code, f"{event} needs {argument.name}"
                continue
            if not values:
                continue
            fault = _first_fault(argument.schema, args[argument.name], argument.schema_text)
            if fault is not None:
                return argument.code, f"{event}: {argument.name} must be {argument.label}: {fault}"
            if argument.alone and len(args) > 1:
                return argument.code, f"{event}: {argument.name} takes no other argument beside it"
        return None

    @functools.cached_property
    def _config_names_schema(self) -> dict[str, Any]:
        """A config: an object naming only the config keys."""
        return {"type": "object", "properties": {k.name: True for k in self.config_keys},
                "additionalProperties": False}

    @functools.cached_property
    def _config_names_text(self) -> str:
        return _schema_text(self._config_names_schema)

    def output_fields(self, event: str, *, error: bool) -> tuple[str, ...]:
        """The fields of one step's output: a valid one, or a rejected one (``error``)."""
        entry = self.events[event]
        state = () if entry.pure else self.state_fields
        return (*(self.error_outputs if error else entry.outputs), *state)

    def case_schema(self) -> dict[str, Any]:
        """The JSON Schema of one case of this machine, generated from the interface.

        A step whose expected output is an error (``expect`` has ``error``) may
        send any arguments: invalid-input cases send unknown names and wrong
        types on purpose. Every other step must name only the event's
        arguments, each of its type, and give every required one; every
        expected output must name only the event's output fields, and each record in the field
        of ``output_records`` must be of a known kind with exactly that kind's fields.
        """
        step_rules: list[dict[str, Any]] = []
        for event in self.events.values():
            valid_args: dict[str, Any] = {
                "type": "object",
                "properties": {a.name: a.schema for a in event.arguments},
                "required": [a.name for a in event.arguments if a.required],
                "additionalProperties": False,
            }
            alone = [{"if": {"required": [a.name]}, "then": {"maxProperties": 1}}
                     for a in event.arguments if a.alone]
            if alone:
                valid_args["allOf"] = alone
            valid_expect = _exact_fields(self.output_fields(event.name, error=False))
            if self.output_records is not None and self.output_records.field in valid_expect["properties"]:
                valid_expect["properties"][self.output_records.field] = self.output_records.schema
            error_expect = _exact_fields(self.output_fields(event.name, error=True))
            # An error is one of the machine's codes (``errors``): any other no port may answer.
            error_expect["properties"]["error"] = {"enum": [code for code, _meaning in self.errors]}
            step_rules.append({
                "if": {"properties": {"event": {"const": event.name}}, "required": ["event"]},
                "then": {
                    "if": {"properties": {"expect": {"type": "object", "required": ["error"]}},
                           "required": ["expect"]},
                    "then": {"properties": {"expect": error_expect}},
                    "else": {"properties": {"args": valid_args, "expect": valid_expect}},
                },
            })
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"A {self.machine} case, as its interface data defines it",
            "type": "object",
            "if": {"not": {"required": ["expect_config_error"]}},
            "then": {"properties": {"config": {
                "type": "object",
                # A key the runner supplies is never a case's; one it checks (a fixture) has
                # its own schema there, so only its type is checked here.
                "properties": {k.name: k.schema for k in self.config_keys if k.runner != "supplies"},
                "required": [k.name for k in self.config_keys if k.required],
                "additionalProperties": False,
            }}},
            "properties": {
                # A machine has one config error (``config.error``): any other code no port may answer.
                "expect_config_error": {"const": self.config_error},
                "steps": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"event": {"enum": list(self.events)}},
                    "allOf": step_rules,
                }},
            },
        }


def _exact_fields(fields: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: True for name in fields}, "additionalProperties": False}


def _strict_integers(checker: Any, instance: object) -> bool:
    return type(instance) is int


def _part_of(raw: Mapping[str, Any], parts: Mapping[str, str], machine: str) -> tuple[str, ...]:
    unknown = [name for name in raw.get("part_of", ()) if name not in parts]
    if unknown:
        raise InterfaceError(f"{machine}: {raw['name']} names the unknown part(s) {', '.join(unknown)}")
    return tuple(raw.get("part_of", ()))


_STRICT = schema_dialect.extended_validator(
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integers))


@functools.lru_cache(maxsize=256)
def _strict_validator(schema_text: str) -> Any:
    return _STRICT(json.loads(schema_text))


def _schema_text(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True)


# The most errors of one value ``_first_fault`` reads before it names the first by path.
FAULTS_READ = 100


def _first_fault(schema: Mapping[str, Any], value: object, schema_text: str | None = None) -> str | None:
    """The first way ``value`` departs from ``schema`` (integers are ``int``, never bool or float).
    ``schema_text``, when given, is ``_schema_text(schema)`` written once by the caller.

    Remembered per schema and value: a case runner validates the same config on every run
    (refinement runs one config thousands of times), and validation is most of a short run.
    """
    if schema_text is None:
        schema_text = _schema_text(schema)
    key = json_key(value)
    if key is not None and (schema_text, key) in _FAULTS:
        return _FAULTS[(schema_text, key)]
    validator = _strict_validator(schema_text)
    # The first of the first FAULTS_READ errors found, by path: a value can hold an error per two
    # bytes (a list of millions of numbers where strings belong), and jsonschema's error objects
    # take kilobytes each (16 MiB of them asked for 26 GB).
    errors = sorted(itertools.islice(validator.iter_errors(value), FAULTS_READ),
                    key=lambda e: [str(p) for p in e.absolute_path])
    fault = f"at {errors[0].json_path}: {errors[0].message[:200]}" if errors else None
    if key is not None and rememberable(value):  # see json_key's WARNING
        if len(_FAULTS) >= _FAULTS_KEPT:
            _FAULTS.clear()
        _FAULTS[(schema_text, key)] = fault
    return fault


_FAULTS: dict[tuple[str, Any], str | None] = {}
_FAULTS_KEPT = 4096


def json_key(value: object) -> bytes | None:
    """A hashable stand-in for a value: its bytes in ``marshal``'s format 2, or None where marshal
    refuses it (subclasses of its types included: a ``str`` or ``IntEnum`` subclass, which the
    validator may tell apart from its base).

    Written in C, one pass, where a walk in Python cost more than the validation it saved on a
    large config. Two JSON values (see :func:`rememberable`) with the same bytes are the same value:
    marshal writes each object's exact type (``True`` is not ``1``, ``1.0`` is not ``1``, a list is
    not a tuple, a key's type is kept), a float's every bit (``-0.0`` is not ``0.0``) and a dict's
    keys in order (which orders the errors), and format 2 writes no references, so the bytes do not
    depend on which objects are shared.

    WARNING: a memo keyed by it stores only what it worked out for a value that is
    :func:`rememberable`. Other values can share bytes (a ``bytes`` and a ``bytearray``; one NaN
    object twice and two NaN objects, which jsonschema compares by identity first), but never with
    a rememberable value, whose bytes hold no buffer, set or other type that is not JSON, and no
    float with a NaN's bits; so a lookup that finds an entry has found the same JSON value.
    ``_first_fault``, ``machines/itemwise.py`` and ``checker/traces.py`` keep to this.
    """
    try:
        return marshal.dumps(value, 2)  # type: ignore[arg-type]  # refused below if not marshallable
    except Exception:  # whatever a value built in Python raises: it is not remembered
        return None


def rememberable(value: object) -> bool:
    """Whether ``value`` is JSON that a memo keyed by :func:`json_key` may store: ``json.dumps``
    refuses the rest (buffers, sets, other objects, a cycle, NaN and the infinities)."""
    try:
        json.dumps(value, allow_nan=False)
    except Exception:
        return False
    return True


class _Expander:
    """Type schemas with ``{"$vocabulary": NAME}`` replaced by its enum and ``{"$record": NAME}``
    by the object schema its fields give."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.machine = data["machine"]
        self.types = data["types"]
        self.vocabularies = data["vocabularies"]
        self.raw_records: Mapping[str, Any] = data.get("records", {})
        self.parts: Mapping[str, str] = data.get("parts", {})
        self.records: dict[str, Record] = {}
        self._building: set[str] = set()

    def expand(self, schema: Any) -> Any:
        if isinstance(schema, dict):
            if set(schema) == {"$vocabulary"}:
                name = schema["$vocabulary"]
                words = self.vocabularies.get(name)
                if not isinstance(words, list):
                    raise InterfaceError(f"{self.machine}: a type names the unknown list vocabulary {name!r}")
                return {"enum": list(words)}
            if set(schema) == {"$record"}:
                return dict(self.record(schema["$record"]).schema)
            return {key: self.expand(value) for key, value in schema.items()}
        if isinstance(schema, list):
            return [self.expand(item) for item in schema]
        return schema

    def record(self, name: str) -> Record:
        if name in self.records:
            return self.records[name]
        raw = self.raw_records.get(name)
        if raw is None:
            raise InterfaceError(f"{self.machine}: a type names the unknown record {name!r}")
        if name in self._building:
            raise InterfaceError(f"{self.machine}: record {name!r} contains itself")
        self._building.add(name)
        fields = tuple(self.parameter(f) for f in raw["fields"])
        names = {f.name for f in fields}
        if len(names) != len(fields):
            raise InterfaceError(f"{self.machine}: record {name!r} lists a field twice")
        conditions: list[dict[str, Any]] = []
        for f in fields:
            if f.only_for is not None:
                on, values = f.only_for
                if on not in names:
                    raise InterfaceError(f"{self.machine}: {name}.{f.name} depends on no field {on!r}")
                conditions.append({"if": {"properties": {on: {"enum": list(values)}}, "required": [on]},
                                   "then": {"required": [f.name]}, "else": {"not": {"required": [f.name]}}})
        schema: dict[str, Any] = {"type": "object", "properties": {f.name: f.schema for f in fields},
                                  "required": [f.name for f in fields if f.required],
                                  "additionalProperties": False}
        if conditions:
            schema["allOf"] = conditions
        self._building.discard(name)
        record = Record(name=name, description=raw.get("description", ""), fields=fields, schema=schema)
        self.records[name] = record
        return record

    def parameter(self, raw: Mapping[str, Any]) -> Parameter:
        return _parameter(raw, self.types, self)


def _parameter(raw: Mapping[str, Any], types: Mapping[str, Any], expander: _Expander) -> Parameter:
    machine = expander.machine
    if raw["type"] not in types:
        raise InterfaceError(f"{machine}: {raw['name']} has the unknown type {raw['type']!r}")
    kind = types[raw["type"]]
    schema = expander.expand(kind["schema"])
    nullable = bool(raw.get("nullable", False))
    null_is_absent = bool(raw.get("null_is_absent", False))
    if null_is_absent and raw.get("required"):
        raise InterfaceError(f"{machine}: {raw['name']} is required, so null cannot mean absent")
    if nullable or null_is_absent:
        schema = {"anyOf": [schema, {"type": "null"}]}
    # A type that already takes any value (an empty schema) takes null without saying so.
    label = kind["label"] + (" or null" if (nullable or null_is_absent) and kind["schema"] else "")
    if raw.get("required") and "default" in raw:
        raise InterfaceError(f"{machine}: {raw['name']} is required and has a default")
    only_for = raw.get("only_for")
    if raw.get("reads_paths") and kind["schema"] not in PATH_SCHEMAS:
        raise InterfaceError(f"{machine}: {raw['name']} reads paths, so its type must be a string or a list "
                             f"of strings, not {kind['schema']}")
    return Parameter(name=raw["name"], type=raw["type"], label=label, schema=schema, nullable=nullable,
                     has_default="default" in raw, default=raw.get("default"),
                     required=bool(raw.get("required", False)), when_absent=raw.get("when_absent"),
                     code=raw.get("code"), null_is_absent=null_is_absent,
                     part_of=_part_of(raw, expander.parts, machine), runner=raw.get("runner"),
                     alone=bool(raw.get("alone", False)),
                     only_for=None if only_for is None else (only_for["field"], tuple(only_for["values"])),
                     world=bool(raw.get("world", False)), reads_paths=bool(raw.get("reads_paths", False)))


def interface_text(machine: str) -> str:
    """The interface file of a machine, as shipped in ``inboxspec.spec``."""
    path = resources.files("inboxspec.spec").joinpath(f"{machine}.interface.json")
    if not path.is_file():
        raise InterfaceError(f"{machine}: no interface file {machine}.interface.json in spec/")
    return path.read_text(encoding="utf-8")


def has_interface(machine: str) -> bool:
    return resources.files("inboxspec.spec").joinpath(f"{machine}.interface.json").is_file()


@functools.cache
def interface_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        resources.files("inboxspec.spec").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    return schema


def parse(data: Any) -> Interface:
    """An interface from its parsed JSON; InterfaceError naming the first problem."""
    errors = sorted(schema_dialect.validator_for(interface_schema()).iter_errors(data),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise InterfaceError(f"interface data: at {errors[0].json_path}: {errors[0].message[:300]}")
    machine = data["machine"]
    vocabularies = data["vocabularies"]
    expander = _Expander(data)
    records = {name: expander.record(name) for name in data.get("records", {})}
    parts: Mapping[str, str] = expander.parts
    events = {}
    for raw in data["events"]:
        if raw["name"] in events:
            raise InterfaceError(f"{machine}: event {raw['name']} is listed twice")
        events[raw["name"]] = Event(
            name=raw["name"], pure=bool(raw.get("pure", False)),
            arguments=tuple(expander.parameter(a) for a in raw["arguments"]),
            outputs=tuple(raw["outputs"]), extra_argument_error=raw.get("extra_argument_error"),
            world=bool(raw.get("world", False)), part_of=_part_of(raw, parts, machine),
            harness=bool(raw.get("harness", False)))
    options_vocabulary = data["config"].get("options_vocabulary")
    if options_vocabulary is not None and not isinstance(vocabularies.get(options_vocabulary), list):
        raise InterfaceError(f"{machine}: no list vocabulary {options_vocabulary!r} for the options")
    return Interface(
        machine=machine,
        config_error=data["config"]["error"],
        config_keys=tuple(expander.parameter(k) for k in data["config"]["keys"]),
        options_vocabulary=options_vocabulary,
        extra_argument_error=data.get("extra_argument_error"),
        events=events,
        state_fields=tuple(data.get("state_fields", ())),
        error_outputs=tuple(data["error_outputs"]),
        errors=tuple((e["code"], e["meaning"]) for e in data["errors"]),
        fault_order=tuple(data["fault_order"]),
        vocabularies=vocabularies,
        raw=data,
        parts=parts,
        records=records,
        output_records=_output_records(data, events),
    )


@functools.cache
def load(machine: str) -> Interface:
    """The interface of a bundled machine (read once)."""
    try:
        data = json.loads(interface_text(machine))
    except json.JSONDecodeError as error:
        raise InterfaceError(f"{machine}.interface.json is not JSON: {error}") from error
    interface = parse(data)
    if interface.machine != machine:
        raise InterfaceError(f"{machine}.interface.json describes {interface.machine!r}")
    return interface

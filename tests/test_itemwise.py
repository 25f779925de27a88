"""The itemwise validator gives exactly jsonschema's errors over the whole schema (machines/itemwise.py).

It validates a document's frame once and each distinct item of one array once, narrowed for a case's
steps to the rules of the step's own event. These tests compare its every error, path and message,
with jsonschema's ``iter_errors`` over the whole schema: on every bundled case and fixture, on broken
variants of them, and on steps and entries that hypothesis writes.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inboxspec import machines
from inboxspec.conformance import interface_lint
from inboxspec.conformance.casefiles import Case, lint, registered_case_dirs
from inboxspec.machines import fixtures, itemwise
from inboxspec.machines import interface as interface_data
from inboxspec.machines.itemwise import Error, ItemwiseValidator, json_path


def _whole(schema: dict[str, Any], document: Any) -> list[Error]:
    """jsonschema over the whole schema, sorted as the linter sorted it before the split."""
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document),
                    key=lambda e: [str(p) for p in e.absolute_path])
    return [(tuple(e.absolute_path), e.message) for e in errors]


@functools.cache
def _bundled_cases() -> list[Case]:
    """The bundled cases, linted when a test first asks (not while the module is collected: every
    xdist worker collects every module, and the lint takes seconds)."""
    return lint(registered_case_dirs()).loaded


# Read without importing a machine (collection): a bundled machine has interface data when its file exists.
_MACHINES = sorted(name for name in machines.names() if interface_data.has_interface(name))


def _case_schema(machine: str) -> dict[str, Any]:
    interface = machines.get(machine).interface
    assert interface is not None
    return interface.case_schema()


def _validator(machine: str) -> ItemwiseValidator:
    found = interface_lint._validator(machine)
    assert found is not None
    return found


@pytest.mark.parametrize("machine", _MACHINES)
def test_every_bundled_case_has_the_whole_schemas_errors(machine: str) -> None:
    schema, validator = _case_schema(machine), _validator(machine)
    cases = [c for c in _bundled_cases() if c.machine == machine]
    assert cases
    for case in cases:
        instance = interface_lint.case_instance(case)
        assert validator.errors(instance) == _whole(schema, instance), case.id


def _broken_steps(step: dict[str, Any], events: list[str]) -> list[Any]:
    """Ways a step can be wrong: each one a plausible slip of a case author, or an attacker's."""
    other = next(e for e in events if e != step.get("event"))
    return [
        {**step, "event": other},  # another event's arguments and output
        {**step, "event": "no_such_event"},
        {**step, "event": 3},
        {k: v for k, v in step.items() if k != "event"},
        {**step, "args": {**step.get("args", {}), "unknown_name": 1}},
        {**step, "args": {name: [value] for name, value in step.get("args", {}).items()}},
        {**step, "args": "not an object"},
        {**step, "expect": {**step.get("expect", {}), "error": "x"}},
        {**step, "expect": {"unexpected_field": True}},
        {**step, "expect": []},
        "not a step",
        None,
    ]


@pytest.mark.parametrize("machine", _MACHINES)
def test_broken_steps_and_configs_have_the_whole_schemas_errors(machine: str) -> None:
    schema, validator = _case_schema(machine), _validator(machine)
    events = list(schema["properties"]["steps"]["items"]["properties"]["event"]["enum"])
    case = next(c for c in _bundled_cases()
                if c.machine == machine and c.steps and "error" not in c.steps[0]["expect"])
    instance = interface_lint.case_instance(case)
    broken_documents: list[Any] = [
        {**instance, "steps": [*instance["steps"], *_broken_steps(dict(instance["steps"][0]), events)]},
        {**instance, "config": {**instance["config"], "no_such_key": 1}},
        {**instance, "config": "not an object"},
        {**instance, "steps": "not a list"},
        {"steps": []},
        [],
    ]
    for position, document in enumerate(broken_documents):
        whole = _whole(schema, document)
        # Each is broken, but for the case without a config, which a case may leave out.
        assert bool(whole) == (position != 4), document
        assert validator.errors(copy.deepcopy(document)) == whole
        assert validator.errors(document) == whole  # again: now from the remembered items


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), machine=st.sampled_from(_MACHINES))
def test_written_steps_have_the_whole_schemas_errors(data: st.DataObject, machine: str) -> None:
    schema, validator = _case_schema(machine), _validator(machine)
    events = schema["properties"]["steps"]["items"]["properties"]["event"]["enum"]
    real = [c for c in _bundled_cases() if c.machine == machine and c.steps]
    base = data.draw(st.sampled_from(real)).steps
    step = data.draw(st.one_of(
        st.sampled_from(list(base)),
        st.fixed_dictionaries({"event": st.sampled_from(events) | st.text(max_size=3)},
                              optional={"args": st.dictionaries(st.text(max_size=6), _JSON, max_size=3),
                                        "expect": st.dictionaries(st.text(max_size=6), _JSON, max_size=3)}),
        _JSON,
    ))
    document = {"config": data.draw(st.sampled_from(real)).config, "steps": [step, *base[:1]]}
    assert validator.errors(document) == _whole(schema, document)


# Values a first pass could take for others: a bool for an integer, an integral float, a text of
# digits, a one-item list, and the edges of the integers the interfaces bound.
_CONFUSABLE: st.SearchStrategy[Any] = st.sampled_from(
    [True, False, 0, 1, -1, 1.0, 0.5, "1", "", None, [], {}, [1], 2**53, 2**53 - 1, -(2**53), 10**30])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), machine=st.sampled_from(_MACHINES))
def test_a_real_step_with_one_value_changed_has_the_whole_schemas_errors(data: st.DataObject,
                                                                         machine: str) -> None:
    """Each part's first pass (fastjsonschema) may skip jsonschema only where jsonschema accepts too:
    bundled steps with one argument or expected value replaced, mostly by a value of a look-alike
    type, give the errors jsonschema gives over the whole schema."""
    schema, validator = _case_schema(machine), _validator(machine)
    real = [c for c in _bundled_cases() if c.machine == machine and c.steps]
    step = copy.deepcopy(dict(data.draw(st.sampled_from(real)).steps[0]))
    part = data.draw(st.sampled_from([key for key in ("args", "expect") if step.get(key)] or ["args"]))
    values = step.setdefault(part, {})
    name = data.draw(st.sampled_from(sorted(values)) if values else st.just("x"))
    values[name] = data.draw(_CONFUSABLE | _JSON)
    document = {"config": data.draw(st.sampled_from(real)).config, "steps": [step]}
    assert validator.errors(document) == _whole(schema, document)


def _fixtures() -> list[Any]:
    return [case.config["fixture"] for case in _bundled_cases()
            if isinstance(case.config.get("fixture"), dict)]


def test_every_bundled_fixture_and_broken_ones_have_the_whole_schemas_errors() -> None:
    schema, validator = fixtures.schema(), fixtures._validator()
    bundled = _fixtures()
    assert bundled
    entry = bundled[0]["entries"][0]
    broken = [
        {"entries": [entry, {**entry, "type": "socket"}]},
        {"entries": [{k: v for k, v in entry.items() if k != "path"}]},
        {"entries": [{**entry, "extra": 1}, "not an entry", None]},
        {"entries": [{"path": "a", "type": "file", "text": "x", "base64": "eA=="}]},
        {"entries": [{"path": "/abs", "type": "dir", "mode": "9"}]},
        {"entries": "not a list"},
        {"entries": [], "extra": True},
        [],
    ]
    for fixture in [*bundled, *broken, *broken]:
        assert validator.errors(fixture) == _whole(schema, fixture)
    assert all(_whole(schema, fixture) for fixture in broken)


@settings(max_examples=60, deadline=None)
@given(entry=st.fixed_dictionaries(
    {"path": st.sampled_from(["a", "/a", "", "a/b"]) | st.text(max_size=3),
     "type": st.sampled_from(["dir", "file", "symlink", "hardlink", "fifo", "x"])},
    optional={"mode": st.sampled_from(["0755", "755", "04755"]), "text": _JSON, "base64": _JSON,
              "target": _JSON}) | _JSON)
def test_written_entries_have_the_whole_schemas_errors(entry: Any) -> None:
    fixture = {"entries": [entry]}
    assert fixtures._validator().errors(fixture) == _whole(fixtures.schema(), fixture)


_ITEMS_OF_A: dict[str, Any] = {"type": "array", "items": {"type": "string", "minLength": 3}}


@pytest.mark.parametrize(("schema", "why"), [
    ({"properties": {"a": {"type": "array", "items": True, "prefixItems": [True]}}}, "prefixItems"),
    ({"properties": {"a": {"type": "array", "items": True, "unevaluatedItems": False}}}, "unevaluatedItems"),
    ({"properties": {"a": {"type": "array"}}}, "no properties.a.items"),
    ({"properties": {"a": {"items": {"$ref": "#/properties/b"}}, "b": {"type": "string"}}},
     "does not name one of the root's $defs"),
    ({"properties": {"a": {"items": {"$ref": "#"}}}}, "does not name one of the root's $defs"),
    ({"properties": {"a": {"items": {"$ref": "#/$defs/x", "$defs": {"x": True}}}}, "$defs": {"x": True}},
     "$defs of its own"),
    ({"$dynamicAnchor": "n", "properties": {"a": {"items": {"$dynamicRef": "#n"}}}},
     "it uses $dynamicAnchor"),
    ({"properties": {"a": {"items": {"$dynamicRef": "#n"}}}}, "it uses $dynamicRef"),
    ({"properties": {"a": {"items": {"$id": "https://example.invalid/item"}}}}, "$id of its own"),
    ({"properties": {"a": _ITEMS_OF_A}, "allOf": [{"properties": {"a": {"items": {"maxLength": 0}}}}]},
     "another subschema also speaks of properties.a"),
    ({"properties": {"a": _ITEMS_OF_A}, "patternProperties": {"^a$": {"items": {"maxLength": 0}}}},
     "patternProperties also reaches a"),
])
def test_a_schema_where_items_do_not_stand_alone_is_refused(schema: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        ItemwiseValidator(schema, "a")


def test_a_refused_schema_would_have_split_wrongly() -> None:
    # The last two refusals above, split anyway: the ties at one path come out in another order.
    schema = {"properties": {"a": _ITEMS_OF_A}, "allOf": [{"properties": {"a": {"items": {"maxLength": 0}}}}]}
    document = {"a": ["ab"]}
    frame = {"properties": {"a": {"type": "array"}}, "allOf": schema["allOf"]}
    item_errors = [(("a", 0, *path), message) for path, message in _whole(_ITEMS_OF_A["items"], "ab")]
    split = sorted([*_whole(frame, document), *item_errors],
                   key=lambda error: [str(part) for part in error[0]])
    assert split != _whole(schema, document)


def test_the_memo_starting_again_changes_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(itemwise, "_REMEMBERED", 3)
    machine = _MACHINES[0]
    validator = ItemwiseValidator(_case_schema(machine), "steps", interface_lint._own_event_rule)
    cases = [c for c in _bundled_cases() if c.machine == machine][:20]
    for case in [*cases, *cases]:
        instance = interface_lint.case_instance(case)
        broken = {**instance, "steps": [*instance["steps"], {"event": "no_such_event"}, 7]}
        assert validator.errors(broken) == _whole(_case_schema(machine), broken), case.id
        assert len(validator._known) <= 3


def test_a_narrowed_step_keeps_only_the_rules_that_can_apply() -> None:
    # The narrowing is what makes a step cheap: a step of one event meets one rule, not one per event.
    machine = _MACHINES[0]
    items = _case_schema(machine)["properties"]["steps"]["items"]
    events = items["properties"]["event"]["enum"]
    key, narrowed = interface_lint._own_event_rule({"event": events[0]}, items)
    assert key == ("event", events[0]) and len(narrowed["allOf"]) == 1 < len(items["allOf"])
    unknown = interface_lint._own_event_rule({"event": "nope"}, items)
    assert unknown == (("another event",), {**items, "allOf": []})
    assert interface_lint._own_event_rule({"event": ""}, items)[0] == ("another event",)
    assert interface_lint._own_event_rule({"event": 1}, items) == (None, items)
    assert interface_lint._own_event_rule("tick", items) == (None, items)
    # A rule of another shape, and an event's rule with an else, can give any step an error: kept.
    other = {"if": {"required": ["args"]}, "then": {"required": ["expect"]}}
    with_else = {**items["allOf"][1], "else": {"required": ["expect"]}}
    synthetic = {**items, "allOf": [*items["allOf"], other, with_else]}
    _key, kept = interface_lint._own_event_rule({"event": events[0]}, synthetic)
    assert kept["allOf"] == [items["allOf"][0], other, with_else]
    step = {"event": events[0], "args": {}}
    narrowed_errors = [e.message for e in jsonschema.Draft202012Validator(kept).iter_errors(step)]
    whole_errors = [e.message for e in jsonschema.Draft202012Validator(synthetic).iter_errors(step)]
    assert narrowed_errors == whole_errors
    assert narrowed_errors  # the kept rules do give this step errors


def test_json_path_is_jsonschemas() -> None:
    error = next(jsonschema.Draft202012Validator(
        {"properties": {"a b": {"items": {"properties": {"c'd": {"type": "string"}}}}}}
    ).iter_errors({"a b": [{"c'd": 1}]}))
    assert json_path(tuple(error.absolute_path)) == error.json_path

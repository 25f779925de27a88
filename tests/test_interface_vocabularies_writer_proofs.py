"""Every vocabulary constant and default of the writer proofs' reference (impl/) and model (model/)
equals the interface data (spec/writer-proofs.interface.json), and so do the events the harness
pieces name: the fixture-changing events, the lockstep's rules and the explorer's alphabet.

impl and model stay two independent descriptions with their own constants; this test ties them
to the one written list. Words a description writes inline (the model's causes and phases, the
preview's difference states) are checked in its source: every word the machine mints appears.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.impl import writer_fs, writer_harness
from inboxspec.impl import writer_proofs as impl
from inboxspec.impl.writer_proofs import InvalidConfig, Options, WriterProofs
from inboxspec.machines import fixtures, interface
from inboxspec.machines import writer_proofs as explorer
from inboxspec.model import writer_proofs as model
from inboxspec.spec import interface_tables
from tests.test_writer_proofs_lockstep import WriterProofsLockstep

DATA = interface.load("writer-proofs")
MACHINE_EVENTS = tuple(name for name, event in DATA.events.items() if not event.harness)


def option_names(options: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(options))


def test_the_registry_entry_holds_the_data() -> None:
    entry = machines.get("writer-proofs")
    assert entry.interface == DATA
    assert entry.features == tuple(f"option:{name}" for name in DATA.options)


def test_reference_constants_equal_the_data() -> None:
    assert DATA.vocabulary("categories") == impl.CATEGORIES
    assert DATA.vocabulary("causes") == impl.CAUSES
    assert DATA.vocabulary("phases") == impl.PHASES
    assert DATA.vocabulary("renewal_states") == impl.RENEWAL_STATES
    assert list(impl.FAILURE_DETAILS.items()) == list(DATA.vocabularies["details"].items())
    assert DATA.vocabularies["renewal_messages"] == impl.RENEWAL_MESSAGES
    assert DATA.vocabulary("detail_precedence") == writer_fs.PRECEDENCE
    assert set(writer_fs.PRECEDENCE) < set(impl.FAILURE_DETAILS)
    assert option_names(Options) == DATA.options


def test_reference_config_keys_equal_the_data() -> None:
    """The session's keys and the runner's, which the harness takes out first (WRITER-IF-1)."""
    assert tuple(key.name for key in DATA.config_keys if key.runner is None) == impl.CONFIG_KEYS
    assert tuple(key.name for key in DATA.config_keys if key.runner) == writer_harness.RUNNER_KEYS
    required = {key.name for key in DATA.config_keys if key.required}
    assert required < set(impl.CONFIG_KEYS)
    session = WriterProofs.from_config(writer_fs.FilesystemEnvironment(), {"home": "/h", "own_root": "/o"})
    assert session.options == Options.from_mapping(DATA.config_key("options").default)


def test_the_harness_swap_step_equals_the_data() -> None:
    """The swap moments, and swap_paths' arguments in the data's order (its fault order), the
    required ones without a default (WRITER-IF-2, WRITER-IF-6)."""
    assert DATA.vocabulary("swap_moments") == writer_harness.SWAP_MOMENTS
    (harness,) = (event for event in DATA.events.values() if event.harness)
    assert harness.name == "swap_paths"
    fields = dataclasses.fields(writer_harness.SwapPaths)
    assert tuple(f.name for f in fields) == harness.argument_names
    for argument, f in zip(harness.arguments, fields, strict=True):
        assert argument.required == (f.default is dataclasses.MISSING), argument.name
        assert argument.code == "invalid_argument"


def test_reference_options_accept_exactly_the_data_options() -> None:
    for name in DATA.options:
        assert getattr(Options.from_mapping({name: True}), name) is True
    with pytest.raises(InvalidConfig):
        Options.from_mapping({"attest_requires_fence": True})


@pytest.mark.parametrize("event", ["preview", "initial"])
def test_reference_defaults_equal_the_data(event: str) -> None:
    (argument,) = DATA.events[event].arguments
    parameter = inspect.signature(getattr(WriterProofs, event)).parameters[argument.name]
    assert list(parameter.default) == argument.default


def test_model_constants_equal_the_data() -> None:
    assert DATA.vocabulary("categories") == model.CATEGORIES
    assert list(model.DETAILS.items()) == list(DATA.vocabularies["details"].items())
    assert DATA.vocabularies["renewal_messages"] == model.RENEWAL
    assert option_names(model.WriterProofsModelOptions) == DATA.options


def string_literals(module: ModuleType) -> set[str]:
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    return {node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


MINTED = [(module, vocabulary) for module in (impl, model)
          for vocabulary in ("phases", "causes", "renewal_states", "difference_states")]


@pytest.mark.parametrize(("module", "vocabulary"), MINTED,
                         ids=[f"{m.__name__.rsplit('.', 2)[-2]}-{v}" for m, v in MINTED])
def test_every_minted_word_is_written_in_the_description(module: ModuleType, vocabulary: str) -> None:
    words = set(DATA.vocabulary(vocabulary))
    assert words <= string_literals(module), sorted(words - string_literals(module))


def test_the_fixture_changing_events_are_the_harness_events() -> None:
    harness = {name for name, event in DATA.events.items() if event.harness}
    assert set(fixtures.FIXTURE_CHANGING_EVENTS["writer-proofs"]) == harness


def test_the_lockstep_has_a_rule_for_every_machine_event() -> None:
    rules = {name for name in dir(WriterProofsLockstep)
             if hasattr(getattr(WriterProofsLockstep, name), "hypothesis_stateful_rule")}
    assert rules == set(MACHINE_EVENTS)


def test_the_explorer_alphabets_send_only_machine_events_with_known_arguments() -> None:
    machine = explorer.WriterProofsExplorer()
    assert {event for event, _, _ in explorer.LEAN} <= set(MACHINE_EVENTS)
    assert set(explorer.ARRANGEMENTS) >= {name for _, _, name in explorer.LEAN}
    for alphabet in ("lean", "full"):
        letters = machine.alphabet(machine.parse_bounds({"alphabet": alphabet}))
        assert {letter.event for letter in letters} == set(MACHINE_EVENTS), alphabet
        for letter in letters:
            arguments = set(letter.kwargs) - {"world", "arrangement"}
            assert arguments <= set(DATA.events[letter.event].argument_names), letter


def test_the_spec_documents_every_event_and_the_harness_step() -> None:
    tables = interface_tables.sections(DATA)
    for event in DATA.events:
        assert f"`{event}`" in tables["writer-proofs-interface-events"], event
        assert f"`{event}`" in tables["writer-proofs-interface-outputs"], event
    assert "`swap_paths` (harness)" in tables["writer-proofs-interface-events"]
    assert "`fixture_dir` (the runner's)" in tables["writer-proofs-interface-config"]


def test_the_case_schema_leaves_the_runners_key_out_and_requires_the_required_keys() -> None:
    config = DATA.case_schema()["then"]["properties"]["config"]
    assert "fixture_dir" not in config["properties"] and "fixture" in config["properties"]
    assert config["required"] == ["home", "own_root"]


# -- the Node port loads the same data ----------------------------------------------------------

PORT = Path(__file__).resolve().parent.parent / "conformance" / "ports" / "node"
NODE = shutil.which("node")


def _port_copy(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """The port's modules beside a changed copy of the interface data."""
    for module in PORT.glob("*.mjs"):
        shutil.copy(module, tmp_path / module.name)
    (tmp_path / "interface").mkdir()
    for copy in (PORT / "interface").glob("*.interface.json"):
        shutil.copy(copy, tmp_path / "interface" / copy.name)
    data = json.loads(interface.interface_text("writer-proofs"))
    change(data)
    (tmp_path / "interface" / "writer-proofs.interface.json").write_text(json.dumps(data))
    return tmp_path / "writer-proofs.mjs"


def _node(module: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = f"import * as port from {json.dumps(module.as_uri())}; {body}"
    return subprocess.run([NODE or "node", "--input-type=module", "-e", script],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_node_port_takes_its_arguments_and_options_from_the_data(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        hold = next(e for e in data["events"] if e["name"] == "hold_fences")
        hold["arguments"].append({"name": "probe_argument", "type": "paths", "default": []})
        data["vocabularies"]["options"].append("probe_option")

    module = _port_copy(tmp_path, change)
    config = {"home": "/nowhere", "own_root": "/nowhere", "options": {"probe_option": True}}
    steps = [{"event": "hold_fences", "args": {"probe_argument": []}}]
    result = _node(module, "process.stdout.write(JSON.stringify([port.FEATURES, port.runCase("
                           f"{json.dumps(config)}, {json.dumps(steps)})]));")
    assert result.returncode == 0, result.stderr
    features, outcome = json.loads(result.stdout)
    assert features == [f"option:{name}" for name in (*DATA.options, "probe_option")]
    assert outcome == {"outputs": [{"fences": True, "context": None}]}


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize(("vocabulary", "constant"), [
    ("categories", "PLACEMENT_WRITER_ROOT_CATEGORIES"), ("causes", "PLACEMENT_WRITER_CAUSE_CLASSES"),
    ("detail_precedence", "the detail precedence"), ("renewal_states", "the renewal states"),
])
def test_a_stale_node_constant_fails_when_the_module_loads(tmp_path: Path, vocabulary: str,
                                                            constant: str) -> None:
    module = _port_copy(tmp_path, lambda data: data["vocabularies"][vocabulary].append("probe-word"))
    result = _node(module, "")
    assert result.returncode != 0 and constant in result.stderr, result.stderr

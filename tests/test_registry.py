"""Every registered machine has everything the frame expects of it.

This is the executable twin of docs/adding-a-machine.md: each check below
carries the tag of one checklist item there (``[spec]``, ``[cases]``, ...),
and a test keeps the two lists equal.
"""

from __future__ import annotations

import json
import pickle
import random
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.compiled import CompiledChart
from inboxspec.checker.spec_sections import marked_sections
from inboxspec.conformance.casefiles import load_cases
from inboxspec.conformance.compare import canonical
from inboxspec.machines.frame import Machine, forever_properties
from inboxspec.spec import index as spec_index
from inboxspec.spec import interface_tables

ROOT = Path(__file__).resolve().parent.parent
CHECKLIST = ROOT / "docs" / "adding-a-machine.md"


def check_spec(entry: Machine) -> None:
    assert entry.spec.exists() and spec_index.requirements(entry.name)
    assert entry.seed in entry.spec.read_text(encoding="utf-8"), "the spec names its seed file"


def check_interface(entry: Machine) -> None:
    text = entry.spec.read_text(encoding="utf-8")
    assert re.search(r"^## Interface", text, re.MULTILINE), "an Interface section"
    assert re.search(r"^## Glossary", text, re.MULTILINE), "a glossary"


def check_model(entry: Machine) -> None:
    chart = CompiledChart(entry.chart)  # compiles: flat, named guards and actions
    assert chart.transitions
    for flag, pinned in (("allow_event_without_transition", False), ("catch_errors_as_events", False)):
        assert getattr(entry.chart, flag) is pinned, f"{flag} is pinned"


def check_cases(entry: Machine) -> None:
    cases = load_cases([entry.cases])
    assert len(cases) > len(spec_index.requirements(entry.name)) // 2
    assert {c.machine for c in cases} == {entry.name}


def check_drivers(entry: Machine) -> None:
    """The reference and the model answer the same valid case alike."""
    case = next(c for c in load_cases([entry.cases]) if c.expect_config_error is None
                and not any("error" in s["expect"] for s in c.steps))
    reference = entry.run_case(case.config, case.inputs)
    model = entry.run_model_case(case.config, case.inputs)
    assert canonical(reference) == canonical(model) == canonical(case.expected)


def check_fuzz(entry: Machine) -> None:
    config, steps = entry.fuzz(random.Random(7))
    assert steps and entry.fuzz(random.Random(7)) == (config, steps), "deterministic for a seed"
    assert "outputs" in entry.run_case(config, steps)


def check_explorer(entry: Machine) -> None:
    explorer = entry.explorer
    assert explorer.invariants, "at least one invariant"
    for invariant in explorer.invariants:
        assert invariant.requirements and all(
            r in spec_index.requirements(entry.name) for r in invariant.requirements), invariant.name
        assert (invariant.finding is None) == (invariant.option is None)
        if invariant.option is not None:
            assert invariant.option in explorer.options
    for prop in forever_properties(explorer):
        assert (prop.finding is None) == (prop.option is None) or prop.expected_to_fail, prop.name
        assert set(prop.fixing_options) <= set(explorer.options), prop.name
        assert len(set(prop.fixing_options)) == len(prop.fixing_options), prop.name
        assert not prop.also_fixed_by or prop.option is not None, prop.name
    parsed = explorer.parse_bounds({})
    assert explorer.alphabet(parsed) and explorer.initial(parsed)
    # Explorations in worker processes send their traces back, letters included (Action.when).
    start = explorer.initial(parsed)
    for letter in explorer.alphabet(parsed):
        copy = pickle.loads(pickle.dumps(letter))
        assert copy == letter and copy.offered(start) == letter.offered(start), letter.label


def check_manifest(entry: Machine) -> None:
    row: dict[str, Any] = json.loads(entry.manifest.read_text(encoding="utf-8"))
    assert {"distinct_states", "transitions", "max_depth", "expected_failures"} <= set(row)
    findings = {i.name for i in entry.explorer.invariants if i.finding is not None}
    assert set(row["expected_failures"]) == findings, "exactly the findings' properties fail by default"


def check_generated(entry: Machine) -> None:
    generated = json.loads(entry.generated_cases.read_text(encoding="utf-8"))
    assert generated["machine"] == entry.name and generated["cases"]


def check_drift(entry: Machine) -> None:
    sections = {m.name for m in marked_sections(entry.spec.read_text(encoding="utf-8"))}
    expected = {f"{entry.name}-{part}" for part in ("diagram", "table", "findings", "files")}
    if entry.interface is not None:  # its Interface tables, generated from the interface data
        expected |= set(interface_tables.sections(entry.interface))
    assert sections == expected


def check_findings(entry: Machine) -> None:
    documented = {f.id for f in spec_index.findings(entry.name)}
    explored = {i.finding for i in entry.explorer.invariants if i.finding is not None}
    assert explored <= documented, "every finding's property names a finding of the spec"


def check_node_port(entry: Machine) -> None:
    port = ROOT / "conformance" / "ports" / "node"
    assert f'"{entry.name}"' in (port / "adapter.mjs").read_text(encoding="utf-8")
    assert (port / f"{entry.name}.mjs").exists()


def check_tests(entry: Machine) -> None:
    stem = entry.name.replace("-", "_")
    assert (ROOT / "tests" / f"test_{stem}_lockstep.py").exists()


CHECKS = {
    "spec": check_spec,
    "interface": check_interface,
    "model": check_model,
    "cases": check_cases,
    "drivers": check_drivers,
    "fuzz": check_fuzz,
    "explorer": check_explorer,
    "manifest": check_manifest,
    "generated": check_generated,
    "drift": check_drift,
    "findings": check_findings,
    "node-port": check_node_port,
    "tests": check_tests,
}


@pytest.mark.parametrize("name", machines.names())
@pytest.mark.parametrize("item", sorted(CHECKS))
def test_registered_machine_is_complete(name: str, item: str) -> None:
    CHECKS[item](machines.get(name))


def test_checklist_doc_matches_this_test() -> None:
    tags = re.findall(r"^\d+\. \*\*\[([a-z-]+)\]\*\*", CHECKLIST.read_text(encoding="utf-8"), re.MULTILINE)
    assert tags and sorted(tags) == sorted(CHECKS) and len(tags) == len(set(tags))


def test_each_registered_name_is_its_modules_machine() -> None:
    assert [machines.get(name).name for name in machines.MODULES] == list(machines.MODULES)
    assert machines.names() == sorted(machines.MODULES)


def test_a_module_registered_under_another_name_is_refused() -> None:
    registry = machines.Registry({"not-the-wake-gate": machines.MODULES["wake-gate"]})
    assert "not-the-wake-gate" in registry
    with pytest.raises(RuntimeError, match="registers 'wake-gate' under the name 'not-the-wake-gate'"):
        registry["not-the-wake-gate"]


def test_the_registry_is_a_mapping_that_reads_a_machine_when_asked() -> None:
    registry = machines.Registry(machines.MODULES)
    wake_gate = machines.get("wake-gate")
    assert list(registry) == list(machines.MODULES) and len(registry) == len(machines.MODULES)
    assert registry["wake-gate"] is wake_gate
    registry["toy"] = wake_gate
    registry["host"] = wake_gate  # replaces an entry not read yet
    assert registry["host"] is wake_gate and list(registry)[-1] == "toy"
    del registry["toy"], registry["peer-delivery"]
    assert "toy" not in registry and "peer-delivery" not in registry
    assert len(registry) == len(machines.MODULES) - 1
    with pytest.raises(KeyError):
        registry["peer-delivery"]
    with pytest.raises(KeyError):
        del registry["toy"]


# What a process that reads one machine imports: the machines' modules it imported, printed.
ONE_MACHINE = """
import json, sys
from inboxspec import machines
machines.get(sys.argv[1])
print(json.dumps(sorted(m for m in machines.MODULES.values() if m in sys.modules)))
"""

CONFORM_ONE_MACHINE = """
import contextlib, io, json, sys
from inboxspec.cli import main
from inboxspec import machines
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["conform", "--adapter", sys.argv[1], "--machine", "wake-gate",
                 "--run", "wake-gate/defaults"])
print(json.dumps([code, sorted(m for m in [*machines.MODULES.values(), "statemachine"] if m in sys.modules)]))
"""


def test_a_process_that_reads_one_machine_imports_that_machine_alone() -> None:
    """``inboxspec conform --machine NAME`` and the adapters start a process per run: the other
    machines' modules are not imported. The runner imports none, nor the chart library: it reads a
    machine's case directory and spec document (``machines.cases_dir``, ``machines.spec_document``),
    not its entry, which imported the machine's model and reference, some 45 ms of every run's start."""

    def imported(script: str, *args: str) -> Any:
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert imported(ONE_MACHINE, "wake-gate") == ["inboxspec.machines.wake_gate"]
    assert imported(ONE_MACHINE, "writer-proofs") == ["inboxspec.machines.writer_proofs"]
    adapter = f"{sys.executable} -m inboxspec.conformance.adapter"
    assert imported(CONFORM_ONE_MACHINE, adapter) == [0, []]


# What the reference adapter's start imports: the machines' modules it imported, printed after its reply.
ADAPTER_START = """
import json, sys
from inboxspec import machines
from inboxspec.conformance import adapter
reply = adapter.handle({"cmd": "start"})
print(json.dumps([reply["features"], sorted(m for m in machines.MODULES.values() if m in sys.modules)]))
"""


def test_the_reference_adapters_start_lists_every_machines_features_and_imports_none() -> None:
    """The start reply lists each machine's features as its entry has them, read from the interface
    data (``machines.features``): a run of one machine then imports that machine alone, in the
    adapter as in the runner."""
    done = subprocess.run([sys.executable, "-c", ADAPTER_START], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    features, imported = json.loads(done.stdout)
    assert imported == []
    assert features == {name: list(machines.get(name).features) for name in machines.names()}
    assert all(features.values())  # every bundled machine has options


def test_features_of_a_machine_read_or_set_are_its_entrys(monkeypatch: pytest.MonkeyPatch) -> None:
    wake_gate = machines.get("wake-gate")
    monkeypatch.setitem(machines.REGISTRY, "host", replace(wake_gate, features=("option:planted",)))
    assert machines.features("host") == ("option:planted",)
    assert machines.features("wake-gate") == wake_gate.features
    with pytest.raises(machines.UnknownMachine):
        machines.features("no-such-machine")


@pytest.mark.parametrize("name", machines.names())
def test_what_the_registry_reads_unimported_is_each_entrys(name: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The WARNING of ``machines._unread_or_entry``: each reader gives, for a machine whose module is not
    imported yet, what its entry holds."""
    monkeypatch.setattr(machines, "REGISTRY", machines.Registry(machines.MODULES))  # nothing read yet
    unread = (machines.features(name), machines.cases_dir(name), machines.spec_document(name))
    assert isinstance(machines.REGISTRY, machines.Registry) and machines.REGISTRY.unread(name)
    entry = machines.get(name)
    assert unread == (entry.features, entry.cases, entry.spec)


def test_what_the_registry_reads_of_a_machine_set_is_its_entrys(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    wake_gate = machines.get("wake-gate")
    monkeypatch.setitem(machines.REGISTRY, "host", replace(wake_gate, cases=tmp_path, spec=tmp_path / "s.md"))
    assert (machines.cases_dir("host"), machines.spec_document("host")) == (tmp_path, tmp_path / "s.md")

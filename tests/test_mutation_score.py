"""benchmarks/mutation_score.py kills what it should, and its list of equivalents does not rot.

The whole score takes a minute or two (a documented command, see the README);
these tests run a handful of mutants.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inboxspec import machines

ROOT = Path(__file__).resolve().parents[1]


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_score", ROOT / "benchmarks" / "mutation_score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_score"] = module
    spec.loader.exec_module(module)
    return module


mutation_score = _benchmark()
WAKE = "inboxspec.impl.wake_gate"


def test_finds_the_reference_modules_through_the_registry() -> None:
    assert mutation_score.implementation_modules(machines.get("wake-gate")) == [WAKE]


@pytest.mark.parametrize("mutant", [
    f"{WAKE}:is_rapid:Lt->LtE#1",  # the floor boundary: a self-wake exactly one floor later
    f"{WAKE}:decide:False->True#4",  # a counted wake leaves the refusal flag set (survivors.json)
])
def test_the_bundled_cases_kill_a_known_mutant(mutant: str) -> None:
    result = mutation_score.score("wake-gate", only=[mutant])
    assert [m.id for m, _ in result.killed] == [mutant], result.as_json()


def test_a_listed_equivalent_survives() -> None:
    mutant = f"{WAKE}:is_rapid:return-None#2"  # None for False, used only as a condition
    result = mutation_score.score("wake-gate", only=[mutant])
    assert [m.id for m, _ in result.equivalent] == [mutant] and not result.killed


@pytest.mark.parametrize("machine", machines.names())
def test_every_listed_equivalent_is_a_mutant_with_a_reason(machine: str) -> None:
    known = {m.id for m in mutation_score.mutation_targets(machines.get(machine))}
    path = mutation_score.EQUIVALENTS_DIR / f"{machine}.json"
    if not path.exists():
        pytest.skip(f"no equivalent mutants listed for {machine}")
    entries = json.loads(path.read_text())["equivalent"]
    assert all(len(e["reason"]) > 20 for e in entries)
    assert not [e["id"] for e in entries if e["id"] not in known]


def test_mutants_do_not_leak_into_the_parent() -> None:
    from inboxspec.impl import wake_gate

    before = wake_gate.is_rapid
    mutation_score.score("wake-gate", only=[f"{WAKE}:is_rapid:Lt->LtE#1"])
    assert wake_gate.is_rapid is before
    assert wake_gate.is_rapid(0, 30_000, wake_gate.GateRules(1, 30_000, wake_gate.GateOptions())) is False


def test_a_machine_the_fresh_registry_lacks_is_a_harness_error(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a false kill: mutants run in a fresh import, where a test's machine is unknown."""
    from tests import toy_machine

    entry = toy_machine.make_machine(tmp_path)
    monkeypatch.setitem(machines.REGISTRY, entry.name, entry)
    (first, *_) = mutation_score.mutation_targets(entry)
    assert first.module == "tests.toy_machine"
    with pytest.raises(mutation_score.MutationHarnessError):
        mutation_score.score("toy-lease", only=[first.id])

"""The machine frame is generic: a new machine is new files plus one registry entry.

A toy machine (``tests/toy_machine.py``) is registered in the registry for
the length of a test, and runs through every tool that reads the registry:
explore, findings, refine, generated cases, the spec sections, the manifest
and ``check``. The compiled chart view's refusals are tested here too.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from statemachine import Event, State, StateChart

from inboxspec import machines
from inboxspec.check import run_check
from inboxspec.checker import spec_sections
from inboxspec.checker.compiled import ChartNotCompilable, CompiledChart
from inboxspec.checker.explore import Explorations, edges, explore
from inboxspec.checker.findings import check_findings
from inboxspec.checker.generated_cases import write_or_check
from inboxspec.checker.manifest import check_manifest, write_manifest
from inboxspec.checker.refine import refine
from inboxspec.cli import main
from inboxspec.machines.frame import HashedOnce
from tests import toy_machine


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A temporary registry holding the toy alone: every tool then works on it
    (and `check` costs the toy's time, not every real machine's)."""
    entry = toy_machine.make_machine(tmp_path)
    monkeypatch.setattr(machines, "REGISTRY", {entry.name: entry})
    return entry


@pytest.fixture
def toy_among_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The toy registered beside the real machines: one more entry, nothing else."""
    entry = toy_machine.make_machine(tmp_path)
    monkeypatch.setitem(machines.REGISTRY, entry.name, entry)
    return entry


def test_toy_machine_runs_through_every_tool(toy: Any, tmp_path: Path) -> None:
    # explore: the timer moves through the chart's own `advance` event.
    result = explore("toy-lease")
    uncovered = {t.key for t in result.all_transitions} - set(result.coverage)
    assert result.states > 3 and uncovered == {("held", "renew", 1)}  # a refusal needs the option
    assert set(result.violations) == {"renewals_are_bounded"}
    capped = explore("toy-lease", options={"cap_renewals": True})
    assert capped.violations == {} and ("held", "renew", 1) in capped.coverage

    # findings: fails by default with a shortest trace, holds with its option.
    (finding,) = [f for f in check_findings() if f.machine == "toy-lease"]
    assert finding.ok and len(finding.trace) == 4  # acquire, then three renewals

    # refine: the model and the toy's reference agree on every 4-letter sequence.
    assert refine("toy-lease", 4).mismatch == []
    assert refine("toy-lease", 4, {"cap_renewals": True}).mismatch == []

    # generated cases, manifest and spec sections, written then checked current.
    assert any("stale" in p for p in write_or_check(write=False, only=["toy-lease"]))
    write_or_check(write=True, only=["toy-lease"])
    generated = json.loads(toy.generated_cases.read_text())
    assert {c["id"] for c in generated["cases"]} >= {"toy-lease/generated/held-advance-0"}
    write_manifest("toy-lease")
    spec_sections.generate(tmp_path / "spec", write=True)
    assert "held --advance" not in toy.spec.read_text()  # the table is a table, not a trace
    assert "| held | advance | lease_ran_out | expire | free | TOY-TIME-1 |" in toy.spec.read_text()

    # check: the toy's cases pass on its reference and its model, and nothing drifted.
    report = run_check()
    assert report["ok"], report
    assert report["machines"]["toy-lease"]["cases"] == 2 + len(generated["cases"])
    assert report["machines"]["toy-lease"]["model_failed"] == 0


def test_check_explores_each_distinct_configuration_once(toy: Any, tmp_path: Path) -> None:
    write_or_check(write=True, only=["toy-lease"])
    write_manifest("toy-lease")
    spec_sections.generate(tmp_path / "spec", write=True)
    report = run_check()
    distinct = sum(1 + len(m.explorer.options) for m in machines.all_machines())
    assert report["explorer"]["distinct_explorations"] == distinct


def test_a_broken_toy_reference_fails_check_and_refine(toy: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write_or_check(write=True, only=["toy-lease"])
    write_manifest("toy-lease")
    spec_sections.generate(tmp_path / "spec", write=True)
    monkeypatch.setattr(toy_machine, "TTL_MS", 101)  # the reference reads it; the chart has its own
    assert refine("toy-lease", 4).mismatch
    report = run_check()  # a problem in the report, not an uncaught exception
    assert not report["ok"]
    assert any("model and reference disagree" in p for p in report["explorer"]["problems"])
    assert any("the model and the reference disagree at steps" in p for p in report["explorer"]["problems"])


def test_a_machine_without_a_manifest_is_a_problem_not_a_crash(toy: Any) -> None:
    problems, _ = check_manifest(Explorations())
    assert any("toy-lease: no manifest" in p for p in problems)


def test_cli_lists_registered_machines(toy_among_the_rest: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "toy-lease", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["machine"] == "toy-lease"
    assert "toy-lease" in machines.names() and "wake-gate" in machines.names()


def test_unknown_machine_is_a_typed_error() -> None:
    with pytest.raises(machines.UnknownMachine, match="known: "):
        machines.get("no-such-machine")


# -- the compiled view's limits ------------------------------------------------------

def test_eventless_transitions_are_refused() -> None:
    class Eventless(StateChart):  # type: ignore[type-arg]
        idle = State(initial=True)
        busy = State()
        go = idle.to(busy, on="note") | busy.to(idle, on="note")
        idle.to(busy, cond="ready", on="note")

        def note(self) -> None: ...

        def ready(self) -> bool:
            return False

    with pytest.raises(ChartNotCompilable, match="eventless"):
        CompiledChart(Eventless)


def test_delayed_events_are_refused() -> None:
    class Delayed(StateChart):  # type: ignore[type-arg]
        idle = State(initial=True)
        busy = State()
        go = Event(idle.to(busy, on="note") | busy.to(idle, on="note"), delay=100)

        def note(self) -> None: ...

    with pytest.raises(ChartNotCompilable, match="delayed"):
        CompiledChart(Delayed)


class WithConstants(StateChart):  # type: ignore[type-arg]
    allow_event_without_transition = False
    LIMIT = 2

    low = State(initial=True)
    high = State()
    bump = low.to(high, cond="at_limit", on="record") | low.to.itself(internal=True, on="record") | \
        high.to.itself(internal=True, on="record")

    def __init__(self) -> None:
        self.count = 0
        self.output: dict[str, Any] = {}
        super().__init__()

    @property
    def next_count(self) -> int:
        return self.count + 1

    def at_limit(self) -> bool:
        return self.next_count >= self.LIMIT

    def record(self) -> None:
        self.count = self.next_count
        self.output = {"count": self.count}


def test_class_constants_and_properties_are_carried() -> None:
    chart = CompiledChart(WithConstants)
    data = chart.blank()
    data.count = 1
    fire = chart.bind("bump", {})
    assert fire["low"](data).target == "high" and data.output == {"count": 2}
    # Engine flags and definitions stay on the chart, not on the data.
    assert not hasattr(data, "allow_event_without_transition") and not hasattr(data, "low")


def test_compiled_view_agrees_with_send_on_the_toy(toy: Any) -> None:
    for options in ({}, {"cap_renewals": True}):
        assert edges("toy-lease", options=options) == edges("toy-lease", options=options, via="dispatch")


class _Pair(NamedTuple):
    name: str
    nested: tuple[tuple[int, str], ...]


class HashedPair(HashedOnce, _Pair):
    pass


def test_a_hashed_once_snapshot_hashes_and_compares_as_its_tuple() -> None:
    first = HashedPair("a", ((1, "x"), (2, "y")))
    twin = HashedPair("a", ((1, "x"), (2, "y")))
    plain = _Pair("a", ((1, "x"), (2, "y")))
    assert hash(first) == hash(twin) == hash(plain) == hash(tuple(plain))
    assert first == twin == plain and first != HashedPair("a", ((1, "x"),))
    assert len({first, twin, plain}) == 1
    renamed = first._replace(name="b")
    assert type(renamed) is HashedPair and hash(renamed) == hash(("b", first.nested))


def test_a_kept_hash_is_never_pickled() -> None:
    """A hash of text differs between processes unless they share a hash seed: an unpickled snapshot
    works its hash out anew, and a snapshot pickled in one such process reads alike in another."""
    kept = HashedPair("a", ((1, "x"),))
    hash(kept)
    assert "_hash" in kept.__dict__
    revived = pickle.loads(pickle.dumps(kept))
    assert revived == kept and type(revived) is HashedPair and revived.__dict__ == {}
    program = ("import pickle, sys; from tests.test_machine_frame import HashedPair; "
               "v = pickle.loads(sys.stdin.buffer.read()); print(hash(v) == hash(tuple(v)))")
    for seed in ("1", "2"):
        answer = subprocess.run([sys.executable, "-c", program], input=pickle.dumps(kept),
                                capture_output=True, check=True, cwd=Path(__file__).parent.parent,
                                env={**os.environ, "PYTHONHASHSEED": seed})
        assert answer.stdout.strip() == b"True"

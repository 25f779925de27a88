"""Projected cases (``checker/projected_cases.py``): each host case as cases of the machines it composes.

The files under ``conformance/cases/<machine>/host/`` are current; each
projected trace agrees with what the host case itself shows of that machine
(its wake and refusal records, its receipts, its idle answers); the model of
each machine agrees on them; and drift, a host case without projections, and
a host call the tables do not know are all caught.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec import machines
from inboxspec.checker import projected_cases
from inboxspec.conformance import casefiles
from inboxspec.conformance.casefiles import read_case_file
from inboxspec.impl.host import Host
from inboxspec.machines import host_driver

GENERATED = {path: json.loads(text) for path, text in projected_cases.generate().items()}
HOST_CASES = [case for path in projected_cases.host_case_files() for case in read_case_file(path)]


def _projected(machine: str, host_case: str, session: str, sessions: list[str]) -> list[dict[str, Any]]:
    part = projected_cases.session_id_parts(sessions)[session]
    wanted = f"{machine}/host/{host_case.removeprefix('host/')}/{part}"
    for content in GENERATED.values():
        for case in content["cases"]:
            if case["id"] == wanted:
                steps: list[dict[str, Any]] = case["steps"]
                return steps
    return []


def _case_id_pattern() -> str:
    schema = json.loads((Path(casefiles.__file__).parent / "schemas" / "case-file.schema.json").read_text())
    pattern: str = schema["$defs"]["case"]["properties"]["id"]["pattern"]
    return pattern


@given(st.lists(st.one_of(st.text(max_size=6), st.sampled_from(["session-1", "session-2", "s1", "É"])),
                min_size=2, max_size=8, unique=True))
def test_each_session_of_a_case_has_its_own_id_part(addresses: list[str]) -> None:
    """Whatever the addresses (an accent composed and decomposed, lone surrogates, capitals, and
    addresses that are already ``session-N``), the projected cases of two sessions never share an
    id, and each id is one the case-file schema takes."""
    parts = projected_cases.session_id_parts(addresses)
    assert len(set(parts.values())) == len(addresses)
    assert all(re.fullmatch(_case_id_pattern(), f"wake-gate/host/probe/{part}") for part in parts.values())


def test_the_projections_are_current() -> None:
    assert projected_cases.write_or_check(write=False) == []


def test_every_composed_machine_gets_projections() -> None:
    composed = {p.machine for p in projected_cases.PARTS}
    assert {content["machine"] for content in GENERATED.values()} == composed


@pytest.mark.parametrize("case", HOST_CASES, ids=[c.id for c in HOST_CASES])
def test_the_projections_show_what_the_host_case_shows(case: Any) -> None:
    """The gate's decisions are the host's wake and refusal records; peer delivery's receipts are
    the host's receipt records; the idle halves' answers are the host's answer records."""
    if case.expect_config_error is not None:
        return
    records = [e for step in case.steps for e in step["expect"].get("events", [])]
    sessions = case.config.get("sessions", ["s1", "s2"])
    for session in sessions:
        decisions = [s["expect"] for s in _projected("wake-gate", case.id, session, sessions)
                     if s["event"] == "decide"]
        assert [(d["lane"], d["wake"]) for d in decisions] == [
            (r["lane"], r["type"] == "wake") for r in records
            if r["type"] in ("wake", "refusal") and r["session"] == session]
        receipts = [(r["ticket"], r["state"], r["cause"], r["reason"])
                    for s in _projected("peer-delivery", case.id, session, sessions)
                    for r in s["expect"].get("receipts", [])]
        assert receipts == [(r["ticket"], r["state"], r["cause"], r["reason"])
                            for r in records if r["type"] == "receipt" and r["recipient"] == session]
        answers = [(a["to"], a["subscription"], a["kind"])
                   for s in _projected("idle-subscriptions", case.id, session, sessions)
                   for a in s["expect"].get("sent", [])]
        assert answers == [(r["to"], r["subscription"], r["kind"])
                           for r in records if r["type"] == "answer" and r["from"] == session]


def _cases() -> list[dict[str, Any]]:
    return [case for content in GENERATED.values() for case in content["cases"]]


@pytest.mark.parametrize("case", _cases(), ids=[c["id"] for c in _cases()])
def test_the_model_agrees(case: dict[str, Any]) -> None:
    if any("error" in s["expect"] for s in case["steps"]):
        return
    entry = machines.get(case["id"].split("/", 1)[0])
    steps = [{k: v for k, v in s.items() if k != "expect"} for s in case["steps"]]
    assert entry.run_model_case(case["config"], steps)["outputs"] == [s["expect"] for s in case["steps"]]


def test_drift_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host case that changes leaves its projections stale; one that goes away leaves them orphaned."""
    source = projected_cases.host_case_files()
    edited = tmp_path / "watcher.json"
    shutil.copy(next(p for p in source if p.name == "watcher.json"), edited)
    content = json.loads(edited.read_text(encoding="utf-8"))
    content["cases"][1]["steps"][0]["args"]["text"] = "something else"
    edited.write_text(json.dumps(content), encoding="utf-8")
    monkeypatch.setattr(projected_cases, "host_case_files",
                        lambda: [edited if p.name == "watcher.json" else p for p in source])
    problems = projected_cases.write_or_check(write=False)
    assert any("wake-gate/host/watcher.json: projected cases are stale" in p for p in problems)
    monkeypatch.setattr(projected_cases, "host_case_files",
                        lambda: [p for p in source if p.name != "turns.json"])
    problems = projected_cases.write_or_check(write=False)
    assert any("peer-delivery/host/turns.json: no host case projects here" in p for p in problems)


def test_a_call_without_a_row_is_refused() -> None:
    host = Host.from_config({})
    with projected_cases.recording(host), pytest.raises(KeyError, match="set_dialog_expiry"):
        host.sessions["s1"].delivery.set_dialog_expiry("5m")


def test_a_narrowed_registry_checks_what_it_holds() -> None:
    """`check --machine NAME`: without the host there is nothing to project; with it, only NAME's."""
    with machines.only(["wake-gate"]):
        assert projected_cases.generate() == {}
        assert projected_cases.write_or_check(write=False) == []
    with machines.only(["host", "wake-gate"]):
        assert {content["machine"] for content in
                (json.loads(text) for text in projected_cases.generate().values())} == {"wake-gate"}


@pytest.mark.parametrize("seed", range(40))
def test_fuzzed_host_traces_project_onto_the_models(seed: int) -> None:
    """Beyond the bundled host cases: the traces of random host runs (``conform --fuzz``'s grammar),
    projected, are answered alike by each machine's reference and model."""
    config, steps = host_driver.fuzz(random.Random(seed))
    for case in projected_cases.project_steps(f"fuzz-{seed}", config, steps):
        if any("error" in s["expect"] for s in case["steps"]):
            continue
        entry = machines.get(case["id"].split("/", 1)[0])
        inputs = [{k: v for k, v in s.items() if k != "expect"} for s in case["steps"]]
        assert entry.run_model_case(case["config"], inputs)["outputs"] == [s["expect"] for s in case["steps"]]


def test_a_linked_host_directory_is_neither_written_nor_emptied(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack on the commands: with a machine's `host` case directory a link to another
    directory, `cases project` deleted every `.json` file there (stale projections, it thought) and
    wrote its files in their place. The link is a problem now, and the other directory is untouched."""
    wake_gate = machines.get("wake-gate")
    cases = tmp_path / "wake-gate"
    shutil.copytree(wake_gate.cases, cases, ignore=shutil.ignore_patterns("host"))
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "settings.json").write_text("{}", encoding="utf-8")
    (cases / projected_cases.HOST).symlink_to(victim)
    monkeypatch.setitem(machines.REGISTRY, "wake-gate", dataclasses.replace(wake_gate, cases=cases))
    for write in (False, True):
        problems = projected_cases.write_or_check(write=write)
        linked = f"{cases / projected_cases.HOST}: a symbolic link"
        assert any(problem.startswith(linked) for problem in problems), problems
    assert [path.name for path in victim.iterdir()] == ["settings.json"]

"""The files the checker keeps beside the machines, read and written as the case files are: a manifest
(``checker/manifest.py``) and the Node port's copies of the interface data (``spec_sections``). A
checkout may hold anything where they belong (found by an attack on the commands)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from inboxspec import machines
from inboxspec.checker.manifest import COUNTS, load_manifest, write_manifest
from inboxspec.checker.spec_sections import interface_copy_drifts
from inboxspec.machines.frame import Machine
from tests import toy_machine
from tests.in_process import run_command


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    entry = toy_machine.make_machine(tmp_path / "toy")
    monkeypatch.setitem(machines.REGISTRY, entry.name, entry)
    return entry


HOSTILE = {
    "fifo": None,
    "link-to-dev-zero": None,
    "not-json": "not json",
    "bounds-a-list": json.dumps({"bounds": [], "distinct_states": 1}),
    "count-as-text": json.dumps({"distinct_states": "1"}),
    "bound-as-text": json.dumps({"bounds": {"capacity": "x"}}),
    "bound-as-a-number": json.dumps({"bounds": {"capacity": 10}}),
    "bound-as-null": json.dumps({"bounds": {"capacity": None}}),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_manifest_that_is_not_one_is_a_named_error(kind: str, toy: Machine) -> None:
    """A FIFO there hung `explore`, a link to /dev/zero filled its memory, counts or bounds of the wrong
    type ended it in a TypeError traceback or blamed a bound the user never gave, and text that is not
    JSON named no file."""
    if kind == "fifo":
        os.mkfifo(toy.manifest)
    elif kind == "link-to-dev-zero":
        toy.manifest.symlink_to("/dev/zero")
    else:
        text = HOSTILE[kind]
        assert text is not None
        toy.manifest.write_text(text, encoding="utf-8")
    done = run_command("explore", toy.name, "--json")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"inboxspec explore: {toy.manifest}: " in done.stderr, done.stderr


def test_writing_a_manifest_replaces_a_link_and_leaves_its_target(toy: Machine,
                                                                  tmp_path: Path) -> None:
    """`explore --write-manifest` wrote through a link at the manifest's name, into its target."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    toy.manifest.symlink_to(victim)
    write_manifest(toy.name)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not toy.manifest.is_symlink() and load_manifest(toy) is not None


def test_an_interface_copy_that_is_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    """`spec generate` wrote a copy of the interface data through a link at its name, into a file outside
    the tree; and through a link in place of its folder."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    copy = tmp_path / "port" / "interface" / "toy.interface.json"
    copy.parent.mkdir(parents=True)
    copy.symlink_to(victim)
    assert [drift.document for drift in interface_copy_drifts({copy: "{}\n"}, write=True)] == [copy]
    assert victim.read_text(encoding="utf-8") == "precious" and copy.read_text(encoding="utf-8") == "{}\n"
    assert interface_copy_drifts({copy: "{}\n"}, write=False) == []
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    copy.unlink()
    copy.parent.rmdir()
    copy.parent.symlink_to(elsewhere)
    with pytest.raises(ValueError, match="a symbolic link or not a directory"):
        interface_copy_drifts({copy: "{}\n"}, write=True)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("bound", [10, None, ["10"]], ids=["number", "null", "list"])
def test_a_bound_that_is_no_text_in_a_real_machines_manifest_is_a_named_error(
        bound: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound written as a number where the command line's text belongs passed the manifest's check,
    and the wake gate's reading of its bounds ended explore and check in a TypeError traceback (found by
    the attack on the fixes)."""
    wake_gate = machines.get("wake-gate")
    manifest = tmp_path / "wake-gate.json"
    written = {"bounds": {"max_streak": bound}, "distinct_states": 240}
    manifest.write_text(json.dumps(written), encoding="utf-8")
    monkeypatch.setitem(machines.REGISTRY, "wake-gate", dataclasses.replace(wake_gate, manifest=manifest))
    done = run_command("explore", "wake-gate", "--json")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"inboxspec explore: {manifest}: not a manifest" in done.stderr, done.stderr


def test_the_counts_a_manifest_is_checked_for_are_those_it_records(toy: Machine) -> None:
    """``COUNTS``'s WARNING: each is written by ``manifest_row`` as an integer."""
    row = write_manifest(toy.name)
    assert all(type(row[count]) is int for count in COUNTS)
    assert {key for key, value in row.items() if type(value) is int} == set(COUNTS)

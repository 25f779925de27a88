"""The generated list of a machine's files that ends its spec (spec/machine_files.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from inboxspec import machines
from inboxspec.checker import spec_sections
from inboxspec.spec import machine_files

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", machines.names())
def test_every_spec_ends_with_its_files_and_each_listed_path_exists(name: str) -> None:
    entry = machines.get(name)
    text = entry.spec.read_text(encoding="utf-8")
    assert text.rstrip().endswith(f"<!-- END GENERATED: {name}-files -->"), "the list ends the spec"
    listed = re.findall(r"^- [^:]+: `([^`]+)`", machine_files.section(entry), re.MULTILINE)
    assert listed, name
    for relative in listed:
        assert (ROOT / relative.rstrip("/")).exists(), relative
    snake = name.replace("-", "_")
    for expected in (f"spec/{name}.md", f"model/{snake}.py", f"impl/{snake}.py", f"machines/{snake}.py",
                     f"machines/{snake}_driver.py", f"conformance/cases/{name}/",
                     f"conformance/ports/node/{name}.mjs", f"checker/manifests/{name}.json"):
        assert expected in listed, (name, expected)
    tests = [path for path in listed if path.startswith("tests/")]
    assert f"tests/test_{snake}_lockstep.py" in tests
    assert all(snake in path for path in tests), tests


def test_the_reference_modules_follow_relative_imports_inside_impl() -> None:
    # impl/wake_gate.py reaches impl/errors.py, impl/options.py and impl/values.py only by
    # `from .errors import ...` and the like.
    driver = ROOT / "machines" / "wake_gate_driver.py"
    entry = machines.get("wake-gate")
    modules = machine_files.modules_within(machine_files.IMPL_PACKAGE, "impl", driver, entry)
    assert [path.relative_to(ROOT).as_posix() for path in modules] == [
        "impl/errors.py", "impl/options.py", "impl/values.py", "impl/wake_gate.py"]


def test_modules_named_after_the_machine_are_listed_though_the_driver_does_not_import_them() -> None:
    listed = machine_files.section(machines.get("inbox-refresh"))
    assert "`impl/inbox_refresh_worker.py`" in listed
    assert "`spec/inbox-refresh-runner.md`" in listed


def test_tests_and_benchmarks_are_found_by_the_machine_name(tmp_path: Path) -> None:
    # A checkout of its own, so that no file is written into the tree other tests read.
    for folder in ("spec", "tests", "benchmarks", "impl"):
        (tmp_path / folder).mkdir()
    for name in ("tests/test_wake_gate_new.py", "tests/wake_gate_helpers.py", "tests/test_peer_delivery_x.py",
                 "benchmarks/wake_gate_speed.py", "benchmarks/peer_delivery_speed.py"):
        (tmp_path / name).write_text("", encoding="utf-8")
    entry = dataclasses.replace(machines.get("wake-gate"), spec=tmp_path / "spec" / "wake-gate.md")
    found = {(role, path.relative_to(tmp_path).as_posix())
             for role, path in machine_files.files(entry) if path.is_relative_to(tmp_path)}
    assert {("test", "tests/test_wake_gate_new.py"), ("test", "tests/wake_gate_helpers.py"),
            ("benchmark", "benchmarks/wake_gate_speed.py")} <= found
    assert not any("peer_delivery" in path for _, path in found)


def test_an_installed_package_without_tests_keeps_the_written_list(tmp_path: Path) -> None:
    entry = machines.get("wake-gate")
    (tmp_path / "spec").mkdir()
    moved = dataclasses.replace(entry, spec=tmp_path / "spec" / "wake-gate.md")
    assert not machine_files.in_checkout(moved)
    assert machine_files.in_checkout(entry)
    with machines.only(["wake-gate"]):
        machines.REGISTRY["wake-gate"] = moved
        try:
            generated = spec_sections.sections()
        finally:
            machines.REGISTRY["wake-gate"] = entry
    assert "wake-gate-files" not in generated
    assert "wake-gate-diagram" in generated

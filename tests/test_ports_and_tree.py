"""Whole-tree checks: the generated spec is current, the protocol's requirements are each
demonstrated, and the code is lint- and type-clean. (The Node port's run over every case is the
README matrix's test, tests/test_conform_matrix.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inboxspec.checker.spec_sections import generate
from inboxspec.spec.index import REQUIREMENT, spec_text

ROOT = Path(__file__).resolve().parent.parent


def test_drift_is_detected(tmp_path: Path) -> None:
    document = tmp_path / "wake-gate.md"
    document.write_text(spec_text("wake-gate.md").replace("stateDiagram-v2", "stateDiagram-v1"))
    assert [d.section for d in generate(tmp_path, write=False)] == ["wake-gate-diagram"]


def test_every_protocol_requirement_is_demonstrated_by_a_runner_test() -> None:
    ids = [m["id"] for m in REQUIREMENT.finditer(spec_text("conformance-protocol.md"))]
    # The runner's fault tests, and the adapters' malformed-request tests.
    runner_tests = "\n".join(p.read_text() for p in sorted((ROOT / "tests").glob("test_conform_*.py")))
    missing = [i for i in ids if not re.search(rf"\b{i}\b", runner_tests)]
    assert ids and not missing, missing


@pytest.mark.slow
def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    process = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True)
    assert process.returncode == 0, process.stdout


@pytest.mark.slow
def test_mypy_strict_is_clean_on_every_package() -> None:
    # `-p inboxspec` checks the installed package: through the strict editable
    # install's link tree, every folder of the repository as `inboxspec.*`.
    process = subprocess.run([sys.executable, "-m", "mypy", "--strict", "-p", "inboxspec"],
                             capture_output=True, text=True, cwd=ROOT)
    assert process.returncode == 0, process.stdout
    checked = re.search(r"in (\d+) source files", process.stdout)
    # Every module of every folder is checked (not just those an import reaches).
    modules = sum(1 for folder in ("cli", "impl", "model", "machines", "checker", "conformance", "spec")
                  for _ in (ROOT / folder).rglob("*.py"))
    assert checked and int(checked[1]) >= modules, process.stdout


@pytest.mark.slow
def test_mypy_strict_is_clean_on_the_tests_and_the_benchmarks() -> None:
    # Run from the repository root, where `tests` is imported as the `tests` package.
    process = subprocess.run([sys.executable, "-m", "mypy", "--strict", "tests", "benchmarks"],
                             capture_output=True, text=True, cwd=ROOT)
    assert process.returncode == 0, process.stdout
    checked = re.search(r"in (\d+) source files", process.stdout)
    # Every test module is checked, the adapters the conformance tests run included, and every benchmark.
    modules = sum(1 for folder in ("tests", "benchmarks") for _ in (ROOT / folder).rglob("*.py"))
    assert checked and int(checked[1]) >= modules, process.stdout

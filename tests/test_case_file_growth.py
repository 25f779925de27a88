"""``benchmarks/case_file_growth.py`` measures what it says: each shape's case runs without an error (a
shape that failed at its first step would measure nothing), and the script prints a row per shape."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inboxspec import machines

ROOT = Path(__file__).resolve().parent.parent


def _benchmark() -> ModuleType:
    """The script, loaded as a module (it imports benchmarks/calibration.py beside it)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    script = ROOT / "benchmarks" / "case_file_growth.py"
    spec = importlib.util.spec_from_file_location("case_file_growth", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


case_file_growth = _benchmark()


@pytest.mark.parametrize("shape", sorted(case_file_growth.REFERENCE))
def test_each_reference_shape_runs_its_steps_without_an_error(shape: str) -> None:
    machine, make, _base = case_file_growth.REFERENCE[shape]
    config, steps = make(8)
    result = machines.get(machine).run_case(config, steps)
    assert "config_error" not in result
    assert len(result["outputs"]) == len(steps)
    assert [output for output in result["outputs"] if "error" in output] == []


def test_the_script_prints_a_row_per_shape() -> None:
    process = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "case_file_growth.py"), "--scale", "0.01"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT / "benchmarks")
    assert process.returncode == 0, process.stderr
    # The model's and the Node port's rows are the reference's shapes again (the suite runs where node
    # is installed).
    shapes = [*case_file_growth.RUNNER, *case_file_growth.REFERENCE,
              *(f"{shape}, model" for shape in case_file_growth.REFERENCE),
              *(f"{shape}, Node port" for shape in case_file_growth.REFERENCE)]
    rows = [line for line in process.stdout.splitlines() if any(line.strip().startswith(s) for s in shapes)]
    assert len(rows) == len(shapes)
    for group in (", model", ", Node port"):
        assert len([row for row in rows if group in row]) == len(case_file_growth.REFERENCE)
    assert all(float(row.split()[-1]) == float(row.split()[-1]) for row in rows)  # a number, not NaN

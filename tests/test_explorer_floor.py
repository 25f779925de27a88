"""``benchmarks/explorer_floor.py`` takes the steps the search takes, in each of its stages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_each_stage_takes_every_step_of_the_exploration() -> None:
    # The benchmark asserts that its stages took as many steps as the search fired, and prints
    # one row per machine: the wake gate's default exploration fires 3,600 letters.
    process = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "explorer_floor.py"), "--machine", "wake-gate",
         "--samples", "1"], capture_output=True, text=True, timeout=120, check=False)
    assert process.returncode == 0, process.stderr
    (row,) = [line.split() for line in process.stdout.splitlines() if line.split()[:1] == ["wake-gate"]]
    assert row[1] == "3,600"
    assert len([cell for cell in row if cell.endswith("%)")]) == 5  # four stages, and the search alone
    # The machine's speed beside the figures (benchmarks/calibration.py), for reading them on another day.
    (yardstick,) = [line for line in process.stdout.splitlines() if line.startswith("yardstick: ")]
    assert float(yardstick.split(" took ")[1].split()[0]) > 0

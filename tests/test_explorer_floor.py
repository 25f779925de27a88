"""``benchmarks/explorer_floor.py`` takes the steps the search takes, in each of its stages."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from inboxspec.checker import explore as explore_module
from inboxspec.checker.explore import explore
from inboxspec.machines.host_steps import HostStepMemo

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


def _benchmark() -> ModuleType:
    """The script, loaded as a module (it imports benchmarks/calibration.py beside it)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("explorer_floor", ROOT / "benchmarks" / "explorer_floor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_search_alone_replays_every_step_and_fires_none() -> None:
    # The host takes its steps through its step memo, the others through take_step (the test above):
    # the replay must stand in for both, or the host's search alone fires (or, as it once did, fails
    # on a replayed outcome handed to the memo's own firing).
    floor = _benchmark()
    name, bounds = "host", {"subscriptions": "0", "forgeries": "0", "box_cap": "0"}
    outcomes: list[Any] = []
    with floor._steps(recorded_into=outcomes):
        first = explore(name, bounds)
    assert len(outcomes) == first.transitions
    with floor._steps(replayed_from=outcomes), \
            mock.patch.object(explore_module, "take_step", side_effect=AssertionError("fired")), \
            mock.patch.object(HostStepMemo, "step", side_effect=AssertionError("fired by the memo")):
        again = explore(name, bounds)
    assert (again.states, again.transitions, again.coverage.keys()) == \
        (first.states, first.transitions, first.coverage.keys())

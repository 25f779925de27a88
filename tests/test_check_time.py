"""``benchmarks/check_time.py`` accounts for the whole check: each exploration, phase and process."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from inboxspec import machines
from inboxspec.check import check_configurations
from inboxspec.checker.explore import Explorations

ROOT = Path(__file__).resolve().parent.parent


def test_the_figures_cover_the_whole_check() -> None:
    process = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "check_time.py"), "--machine", "wake-gate",
         "--workers", "2", "--runs", "2", "--json"], capture_output=True, text=True, timeout=300, check=False)
    assert process.returncode == 0, process.stderr
    runs = json.loads(process.stdout)["runs"]
    assert json.loads(process.stdout)["yardstick_s"] > 0  # benchmarks/calibration.py, beside the figures
    assert len(runs) == 2
    memo = Explorations()
    with machines.only(["wake-gate"]):
        expected = sorted({json.dumps(memo.key(c)) for c in check_configurations()})
        for run in runs:
            assert run["ok"] and run["machines"] == ["wake-gate"]
            rows = run["explorations"]
            # One row per distinct exploration the check asks for, each a real one, ended within the run.
            found = [json.dumps(memo.key(("wake-gate", r["bounds"], r["options"]))) for r in rows]
            assert sorted(found) == expected
            assert all(r["states"] > 0 and r["transitions"] > 0 for r in rows)
            # The options' explorations took steps from the default's record; the default fired all.
            assert all((r["steps_reused"] > 0) == bool(r["options"]) for r in rows)
            assert all(0 < r["ended_s"] <= run["wall_s"] for r in rows)
            # The phases follow one another from the start to the end of the run.
            phases = run["phases"]
            assert [p["phase"] for p in phases][:2] == ["set-up", "linting the cases"]
            assert "comparing the manifests" in [p["phase"] for p in phases]
            assert abs(sum(p["wall_s"] for p in phases) - run["wall_s"]) < 0.25
            assert all(phase["began_s"] <= later["began_s"] for phase, later in itertools.pairwise(phases))
            cpu = [*run["main_cpu_s"].values(), *run["workers_cpu_s"].values()]
            assert sum(cpu) == pytest.approx(run["total_cpu_s"], abs=0.01)
            assert run["workers_cpu_s"]["user"] > 0  # the explorations ran in the workers
            assert run["floor_s"] == pytest.approx(run["total_cpu_s"] / 2, abs=0.01)

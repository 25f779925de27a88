"""Running the CrossHair command line, for every machine's contract tests.

Each machine's ``tests/test_*crosshair*.py`` checks its reference's PEP 316
contracts and shows each one catching a broken copy of the module. The copy
lives in a temporary folder put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

CROSSHAIR = shutil.which("crosshair") or str(Path(sys.executable).with_name("crosshair"))
# Seconds per condition, for every machine unless its test says otherwise; CI keeps it bounded.
BUDGET = os.environ.get("INBOXSPEC_CROSSHAIR_BUDGET", "1")


def run_crosshair(*targets: str, budget: str, cwd: Path | None = None,
                  extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``crosshair check`` on ``targets`` with ``budget`` seconds per condition."""
    env = dict(os.environ)
    if cwd is not None:
        env["PYTHONPATH"] = str(cwd) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [CROSSHAIR, "check", "--analysis_kind=PEP316", f"--per_condition_timeout={budget}", *extra, *targets],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=900,
    )


def broken_copy(source: str, fragment: str, broken: str) -> str:
    """``source`` with its one ``fragment`` replaced by ``broken``, importable from outside the
    package: the copy lives in a temporary folder, so ``from .x import`` becomes absolute."""
    assert source.count(fragment) == 1, f"mutation anchor drifted: {fragment!r}"
    return re.sub(r"^from \.(\w*) import", lambda m: f"from inboxspec.impl{'.' if m[1] else ''}{m[1]} import",
                  source.replace(fragment, broken), flags=re.MULTILINE)


def contract_line(source: str, marker: str) -> int:
    """The 1-based line of a contract's condition: the line after ``# marker``, or the
    ``post:`` line that starts with ``marker``."""
    for index, line in enumerate(source.splitlines()):
        if line.strip() == f"# {marker}":
            return index + 2
        if line.strip().startswith(marker):
            return index + 1
    raise AssertionError(f"no contract {marker!r}")


def failing_lines(output: str, module: str) -> set[int]:
    """The lines of ``module``'s file that CrossHair reported a counterexample on."""
    return {int(n) for n in re.findall(rf"{re.escape(module)}\.py:(\d+): error", output)}


def assert_contracts_hold(*targets: str, budget: str = BUDGET) -> None:
    """CrossHair finds no counterexample to any contract of ``targets``."""
    result = run_crosshair(*targets, budget=budget)
    assert result.returncode == 0, result.stdout + result.stderr


def counterexamples(*targets: str, cwd: Path, budget: str = BUDGET) -> str:
    """CrossHair's report on the broken copies in ``cwd``, which must hold a counterexample."""
    result = run_crosshair(*targets, budget=budget, cwd=cwd)
    assert result.returncode == 1, result.stdout + result.stderr
    return result.stdout


def assert_counterexample_on(mutant: str, module: str, function: str, line: int, cwd: Path,
                             budget: str = BUDGET) -> None:
    """The broken copy ``mutant``, saved as ``module`` in ``cwd``, has a counterexample to its
    ``function``'s contract on ``line``."""
    (cwd / f"{module}.py").write_text(mutant, "utf-8")
    report = counterexamples(f"{module}.{function}", cwd=cwd, budget=budget)
    assert line in failing_lines(report, module), report

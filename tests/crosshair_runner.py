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

"""Running the CrossHair command line, for every machine's contract tests.

Each machine's ``tests/test_*crosshair*.py`` checks its reference's PEP 316
contracts and shows each one catching a broken copy of the module. The copy
lives in a temporary folder put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
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

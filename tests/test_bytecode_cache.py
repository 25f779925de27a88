"""The session's shared bytecode cache (tests/bytecode_cache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.bytecode_cache import share_a_bytecode_cache


def test_an_environment_that_writes_no_bytecode_gets_a_cache_of_its_own(tmp_path: Path) -> None:
    environment = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"}
    assert share_a_bytecode_cache(environment, str(tmp_path))
    assert environment == {"PYTHONPYCACHEPREFIX": str(tmp_path), "PATH": "/bin"}


def test_an_environment_that_writes_bytecode_is_left_as_it_is(tmp_path: Path) -> None:
    for environment in ({}, {"PYTHONDONTWRITEBYTECODE": ""}, {"PYTHONPYCACHEPREFIX": "/elsewhere"}):
        before = dict(environment)
        assert not share_a_bytecode_cache(environment, str(tmp_path))
        assert environment == before


def test_a_process_started_with_the_changed_environment_keeps_the_package_bytecode(tmp_path: Path) -> None:
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    environment.pop("PYTHONPYCACHEPREFIX", None)
    assert share_a_bytecode_cache(environment, str(tmp_path))
    # Every machine read, so every machine's module imported (the registry imports one when it is read).
    script = "import inboxspec.machines as m; m.all_machines()"
    subprocess.run([sys.executable, "-c", script], env=environment, check=True, timeout=60)
    kept = {path.name for path in tmp_path.rglob("*.pyc")}
    assert f"host.cpython-{sys.version_info[0]}{sys.version_info[1]}.pyc" in kept, sorted(kept)[:10]

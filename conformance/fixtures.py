"""Filesystem fixtures for the runner: one fresh materialisation per ``run`` request (PROTO-FIX-1).

The tree format and its materialisation live in ``machines/fixtures.py`` (the in-process drivers
need them too); this module adds the runner's pool of temporary directories.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inboxspec.machines.fixtures import (
    DIRECTORY_MODE,
    PLACEHOLDER,
    FixtureError,
    materialise,
    materialised,
    remove,
    swap,
)

__all__ = ["PLACEHOLDER", "FixtureError", "FixturePool", "materialise", "materialised", "remove", "swap"]


class FixturePool:
    """The runner's temporary directories: one per ``run`` request sent, all removed at the end."""

    def __init__(self) -> None:
        self.directories: list[Path] = []

    def directory_for(self, fixture: Mapping[str, Any]) -> str:
        directory = Path(os.path.realpath(tempfile.mkdtemp(prefix="inboxspec-fixture-")))
        self.directories.append(directory)
        os.chmod(directory, DIRECTORY_MODE)
        materialise(fixture, directory)
        return str(directory)

    def close(self) -> None:
        for directory in self.directories:
            remove(directory)
        self.directories.clear()

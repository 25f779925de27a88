"""Filesystem fixtures: a case's declarative tree, materialised in a temporary directory.

This module holds what both the runner (``conformance/fixtures.py``) and the in-process drivers of
machines that read real files need; it lives here because ``machines/`` may not import
``conformance/`` (tests/test_import_graph.py).

A machine whose behaviour depends on real files (the writer proofs measure real installs) describes
the files a case needs in its ``config.fixture`` (``schemas/fixture.schema.json``). The runner
materialises that description in a fresh temporary directory for every ``run`` request and passes
the directory's real path as the request's ``case.fixture_dir``; ports never build fixtures
themselves (spec/conformance-protocol.md, *Filesystem fixtures*).

Every ``{fixture}`` in a file's ``text`` becomes the fixture directory's path, so that files such as
a receipt can name other files of the fixture. The path is checked to need no escaping inside a JSON
string, so a substituted JSON file stays valid.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema

PLACEHOLDER = "{fixture}"
DIRECTORY_MODE = 0o755
FILE_MODE = 0o644


class FixtureError(ValueError):
    """A fixture description that cannot be materialised."""


def schema() -> dict[str, Any]:
    text = resources.files("inboxspec.conformance").joinpath("schemas/fixture.schema.json")
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded


def _safe_relative(path: str) -> PurePosixPath:
    relative = PurePosixPath(path)
    if relative.is_absolute() or not relative.parts or any(p in ("", ".", "..") for p in relative.parts):
        raise FixtureError(f"fixture path {path!r} must be relative, without '.' or '..'")
    return relative


def _mode(entry: Mapping[str, Any], default: int) -> int:
    raw = entry.get("mode")
    return default if raw is None else int(raw, 8)


def _check_directory_path(directory: str) -> None:
    if any(c in directory for c in '"\\') or any(ord(c) < 0x20 for c in directory):
        raise FixtureError(f"fixture directory {directory!r} needs escaping inside JSON")


def materialise(fixture: Mapping[str, Any], directory: Path) -> None:
    """Write ``fixture`` into the existing, empty ``directory`` (a real path)."""
    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(fixture), key=str)
    if errors:
        raise FixtureError(f"fixture: {errors[0].message}")
    base = str(directory)
    _check_directory_path(base)
    modes: list[tuple[Path, int]] = []
    for entry in fixture["entries"]:
        relative = _safe_relative(entry["path"])
        target = directory.joinpath(*relative.parts)
        for parent in reversed(target.relative_to(directory).parents[:-1]):
            folder = directory / parent
            if not folder.exists():
                folder.mkdir()
                os.chmod(folder, DIRECTORY_MODE)
        kind = entry["type"]
        if kind == "dir":
            target.mkdir(exist_ok=True)
            modes.append((target, _mode(entry, DIRECTORY_MODE)))
        elif kind == "file":
            if "base64" in entry:
                data = base64.b64decode(entry["base64"], validate=True)
            else:
                data = entry.get("text", "").replace(PLACEHOLDER, base).encode("utf-8")
            target.write_bytes(data)
            modes.append((target, _mode(entry, FILE_MODE)))
        elif kind == "symlink":
            os.symlink(entry["target"].replace(PLACEHOLDER, base), target)
        elif kind == "hardlink":
            os.link(directory.joinpath(*_safe_relative(entry["target"]).parts), target)
        elif kind == "fifo":
            os.mkfifo(target)
            modes.append((target, _mode(entry, FILE_MODE)))
    # Modes last and deepest first, so a read-only directory never blocks writing its children.
    for path, mode in sorted(modes, key=lambda item: len(item[0].parts), reverse=True):
        os.chmod(path, mode)


def _make_removable(directory: Path) -> None:
    for root, dirs, _files in os.walk(directory):
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)


def remove(directory: Path) -> None:
    if directory.exists():
        os.chmod(directory, stat.S_IRWXU)
        _make_removable(directory)
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def materialised(fixture: Mapping[str, Any]) -> Iterator[str]:
    """A fresh temporary directory holding ``fixture``; yields its real path, removes it afterwards."""
    directory = Path(os.path.realpath(tempfile.mkdtemp(prefix="inboxspec-fixture-")))
    try:
        os.chmod(directory, DIRECTORY_MODE)
        materialise(fixture, directory)
        yield str(directory)
    finally:
        remove(directory)


def swap(directory: str, first: str, second: str) -> None:
    """Exchange two paths inside a fixture directory (the writer proofs' ``swap_paths`` step).

    When one of the two does not exist, the other is moved to its place.
    """
    base = Path(directory)
    a = base.joinpath(*_safe_relative(first).parts)
    b = base.joinpath(*_safe_relative(second).parts)
    parking = base / ".swap-parking"
    a_exists, b_exists = os.path.lexists(a), os.path.lexists(b)
    if not a_exists and not b_exists:
        raise FileNotFoundError(f"neither {first!r} nor {second!r} exists")
    if a_exists:
        os.rename(a, parking)
    if b_exists:
        os.rename(b, a)
    if a_exists:
        os.rename(parking, b)

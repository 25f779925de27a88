"""conformance/fixtures.py: declarative trees materialised on real files (PROTO-FIX-1)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from inboxspec.conformance.fixtures import FixtureError, FixturePool, materialise, materialised, swap

TREE = {
    "entries": [
        {"path": "a/b/file.txt", "type": "file", "text": "root is {fixture}", "mode": "0640"},
        {"path": "a/ro", "type": "dir", "mode": "0555"},
        {"path": "a/ro/inside", "type": "file", "base64": "/w==", "mode": "04755"},
        {"path": "link", "type": "symlink", "target": "{fixture}/a"},
        {"path": "hard", "type": "hardlink", "target": "a/b/file.txt"},
        {"path": "pipe", "type": "fifo"},
    ]
}


def test_materialise_writes_every_kind_with_its_mode() -> None:
    with materialised(TREE) as directory:
        root = Path(directory)
        assert directory == os.path.realpath(directory)
        assert (root / "a/b/file.txt").read_text() == f"root is {directory}"
        assert stat.S_IMODE(os.stat(root / "a/b/file.txt").st_mode) == 0o640
        assert stat.S_IMODE(os.stat(root / "a/b").st_mode) == 0o755
        assert stat.S_IMODE(os.stat(root / "a/ro").st_mode) == 0o555
        assert stat.S_IMODE(os.stat(root / "a/ro/inside").st_mode) == 0o4755
        assert (root / "a/ro/inside").read_bytes() == b"\xff"
        assert os.readlink(root / "link") == f"{directory}/a"
        assert os.stat(root / "hard").st_nlink == 2
        assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)
    assert not Path(directory).exists()


@pytest.mark.parametrize("path", ["/abs", "../up", "a/../../b", "."])
def test_paths_stay_inside_the_fixture(tmp_path: Path, path: str) -> None:
    with pytest.raises(FixtureError):
        materialise({"entries": [{"path": path, "type": "dir"}]}, tmp_path)


def test_schema_is_enforced(tmp_path: Path) -> None:
    with pytest.raises(FixtureError):
        materialise({"entries": [{"path": "x", "type": "socket"}]}, tmp_path)


def test_pool_gives_a_fresh_directory_each_time_and_removes_them() -> None:
    pool = FixturePool()
    first, second = pool.directory_for(TREE), pool.directory_for(TREE)
    assert first != second and Path(first, "pipe").exists()
    pool.close()
    assert not Path(first).exists() and not Path(second).exists()


def test_swap_exchanges_and_moves() -> None:
    with materialised(
        {"entries": [{"path": "x", "type": "file", "text": "x"}, {"path": "y", "type": "file", "text": "y"}]}
    ) as directory:
        swap(directory, "x", "y")
        assert Path(directory, "x").read_text() == "y" and Path(directory, "y").read_text() == "x"
        swap(directory, "x", "z")
        assert not Path(directory, "x").exists() and Path(directory, "z").read_text() == "y"
        with pytest.raises(FileNotFoundError):
            swap(directory, "x", "w")

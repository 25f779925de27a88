"""Every command makes its temporary directories in memory when the user chose no place for them
(``cli/temporary.py``): in a writable tmpfs that no other user can move them out of, and nowhere
else; TMPDIR, TEMP, TMP or a ``tempfile.tempdir`` set beforehand is always the place."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import pytest

from inboxspec import cli, temporary


def _mounts(tmp_path: Path, *lines: str) -> str:
    table = tmp_path / "mounts"
    table.write_text("".join(f"{line}\n" for line in lines))
    return str(table)


free_bytes = temporary.free_bytes  # as the module has it, before a test replaces it


@pytest.fixture
def point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A directory to be the memory directory, on a filesystem with just enough free space."""
    directory = tmp_path / "shm"
    directory.mkdir(mode=0o700)
    monkeypatch.setattr(temporary, "free_bytes", lambda directory: temporary.MIN_FREE_BYTES)
    return str(directory)


def test_a_writable_tmpfs_mount_point_is_the_memory_directory(tmp_path: Path, point: str) -> None:
    table = _mounts(tmp_path, "sysfs /sys sysfs rw 0 0", f"tmpfs {point} tmpfs rw,nosuid 0 0")
    assert temporary.memory_directory(point, table) == point
    # The mount a path reaches is the last one on it.
    assert temporary.memory_directory(
        point, _mounts(tmp_path, f"/dev/vda {point} ext4 rw 0 0", f"tmpfs {point} tmpfs rw 0 0")) == point


@pytest.mark.parametrize("lines", [
    pytest.param(("/dev/vda / ext4 rw 0 0",), id="not mounted on its own"),
    pytest.param(("/dev/vda {point} ext4 rw,relatime 0 0",), id="a disk"),
    pytest.param(("tmpfs {point} tmpfs ro,nosuid 0 0",), id="read-only"),
    pytest.param(("tmpfs {point} tmpfs rw 0 0", "/dev/vda {point} ext4 rw 0 0"), id="a disk mounted over it"),
    pytest.param(("tmpfs {point}/below tmpfs rw 0 0",), id="only a directory below it"),
])
def test_anything_else_is_not(tmp_path: Path, point: str, lines: tuple[str, ...]) -> None:
    table = _mounts(tmp_path, *(line.format(point=point) for line in lines))
    assert temporary.memory_directory(point, table) is None


def test_a_directory_others_could_move_our_directories_out_of_is_not(tmp_path: Path, point: str) -> None:
    table = _mounts(tmp_path, f"tmpfs {point} tmpfs rw 0 0")
    os.chmod(point, 0o777)
    assert temporary.memory_directory(point, table) is None
    os.chmod(point, 0o1777)  # sticky, as /tmp and /dev/shm are: only the owner moves an entry
    assert temporary.memory_directory(point, table) == point


def test_a_link_or_a_file_in_its_place_or_no_mount_table_is_not(tmp_path: Path, point: str) -> None:
    link = tmp_path / "link"
    link.symlink_to(point)
    assert temporary.memory_directory(str(link), _mounts(tmp_path, f"tmpfs {link} tmpfs rw 0 0")) is None
    plain = tmp_path / "plain"
    plain.write_text("")
    assert temporary.memory_directory(str(plain), _mounts(tmp_path, f"tmpfs {plain} tmpfs rw 0 0")) is None
    assert temporary.memory_directory(point, str(tmp_path / "no-such-table")) is None


@pytest.fixture
def unchosen(monkeypatch: pytest.MonkeyPatch, point: str) -> str:
    """No place chosen by the user, and ``point`` the memory directory."""
    for name in temporary.CHOSEN_BY:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(temporary, "memory_directory", lambda: point)
    return point


def test_unchosen_the_directories_are_made_in_memory_while_it_runs(unchosen: str) -> None:
    before = tempfile.gettempdir()
    tempfile.tempdir = None  # gettempdir remembers what it found
    with temporary.temporary_directories_in_memory() as directory:
        assert directory == unchosen == tempfile.gettempdir()
        made = tempfile.mkdtemp()
        assert Path(made).parent == Path(unchosen)
        os.rmdir(made)
    assert tempfile.tempdir is None
    assert tempfile.gettempdir() == before


@pytest.mark.parametrize("variable", temporary.CHOSEN_BY)
def test_a_place_the_user_chose_stays_the_place(unchosen: str, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path, variable: str) -> None:
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.setenv(variable, str(chosen))
    with temporary.temporary_directories_in_memory() as directory:
        assert directory == tempfile.gettempdir() == str(chosen)
    monkeypatch.delenv(variable)
    tempfile.tempdir = str(chosen)  # as a program that embeds inboxspec may set it
    with temporary.temporary_directories_in_memory() as directory:
        assert directory == tempfile.gettempdir() == str(chosen)
    assert tempfile.tempdir == str(chosen)


def test_every_command_runs_with_them_in_memory(unchosen: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def lint(args: argparse.Namespace) -> int:
        seen.append(tempfile.gettempdir())
        return 0

    monkeypatch.setattr(cli, "_cases_lint", lint)
    assert cli.main(["cases", "lint"]) == 0
    assert seen == [unchosen]
    assert tempfile.tempdir is None


def test_a_small_one_is_not(tmp_path: Path, point: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _mounts(tmp_path, f"tmpfs {point} tmpfs rw 0 0")
    assert temporary.memory_directory(point, table) == point
    monkeypatch.setattr(temporary, "free_bytes", lambda directory: temporary.MIN_FREE_BYTES - 1)
    assert temporary.memory_directory(point, table) is None
    assert 0 < free_bytes(point) == os.statvfs(point).f_bavail * os.statvfs(point).f_frsize
    assert free_bytes(str(Path(point) / "no-such-directory")) == 0

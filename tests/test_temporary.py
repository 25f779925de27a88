"""``inboxspec check`` makes its temporary directories in memory when the user chose no place for
them (``cli/temporary.py``): in a writable tmpfs mount point that no other user can move them out
of, and nowhere else; TMPDIR, TEMP, TMP or a ``tempfile.tempdir`` set beforehand is always the
place, and ``conform`` leaves them where ``tempfile`` puts them."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from inboxspec import check, cli, machines, temporary
from inboxspec.machines import fixtures

free_bytes = temporary.free_bytes  # as the module has it, before a test replaces it


@pytest.fixture
def point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A directory to be the memory directory, on a filesystem with just enough free space."""
    directory = tmp_path / "shm"
    directory.mkdir(mode=0o700)
    monkeypatch.setattr(temporary, "free_bytes", lambda directory: temporary.MIN_FREE_BYTES)
    return str(directory)


def _device(path: str) -> str:
    device = os.lstat(path).st_dev
    return f"{os.major(device)}:{os.minor(device)}"


def _line(point: str, filesystem: str = "tmpfs", options: str = "rw,relatime", device: str = "") -> str:
    """A line of /proc/self/mountinfo mounting ``filesystem`` on ``point`` (its own device by default)."""
    return f"25 24 {device or _device(point)} / {point} {options} shared:7 - {filesystem} {filesystem} rw"


def _table(tmp_path: Path, *lines: str) -> str:
    table = tmp_path / "mountinfo"
    table.write_text("".join(f"{line}\n" for line in lines))
    return str(table)


def test_a_writable_tmpfs_mount_point_is_the_memory_directory(tmp_path: Path, point: str) -> None:
    table = _table(tmp_path, "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw", _line(point))
    assert temporary.memory_directory(point, table) == point
    # The mount a path reaches is the last one on it.
    table = _table(tmp_path, _line(point, "ext4", device="254:0"), _line(point))
    assert temporary.memory_directory(point, table) == point


@pytest.mark.parametrize("lines", [
    pytest.param(lambda p: ["27 1 254:0 / / rw,relatime - ext4 /dev/vda rw"], id="not mounted on its own"),
    pytest.param(lambda p: [_line(p, "ext4")], id="a disk"),
    pytest.param(lambda p: [_line(p, options="ro,nosuid")], id="read-only"),
    pytest.param(lambda p: [_line(p), _line(p, "ext4")], id="a disk mounted over it"),
    pytest.param(lambda p: [_line(p, device="0:9999")], id="hidden by a mount over a parent"),
    pytest.param(lambda p: [_line(p).replace(" - tmpfs tmpfs rw", "")], id="a line without its type"),
    pytest.param(lambda p: [_line(f"{p}/below", device="0:23")], id="only a directory below it"),
])
def test_anything_else_is_not(tmp_path: Path, point: str, lines: Any) -> None:
    assert temporary.memory_directory(point, _table(tmp_path, *lines(point))) is None


@pytest.mark.parametrize(("mode", "taken"), [(0o700, True), (0o755, True), (0o1777, True), (0o1770, True),
                                             (0o777, False), (0o770, False), (0o730, False), (0o702, False)])
def test_a_directory_others_could_move_our_directories_out_of_is_not(
        tmp_path: Path, point: str, mode: int, taken: bool) -> None:
    table = _table(tmp_path, _line(point))
    os.chmod(point, mode)
    assert temporary.memory_directory(point, table) == (point if taken else None)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_directory_of_another_user_is_not_even_when_sticky(tmp_path: Path, point: str) -> None:
    table = _table(tmp_path, _line(point))
    os.chmod(point, 0o1777)
    os.chown(point, 4242, -1)  # its owner may move what is in it
    assert temporary.memory_directory(point, table) is None
    os.chown(point, 0, -1)
    assert temporary.memory_directory(point, table) == point


def test_a_link_or_a_file_in_its_place_or_no_mount_table_is_not(tmp_path: Path, point: str) -> None:
    link = tmp_path / "link"
    link.symlink_to(point)
    table = _table(tmp_path, _line(point).replace(f" {point} ", f" {link} "))
    assert temporary.memory_directory(str(link), table) is None
    plain = tmp_path / "plain"
    plain.write_text("")
    assert temporary.memory_directory(str(plain), _table(tmp_path, _line(str(plain)))) is None
    assert temporary.memory_directory(point, str(tmp_path / "no-such-table")) is None


def test_a_small_one_is_not(tmp_path: Path, point: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path, _line(point))
    assert temporary.memory_directory(point, table) == point
    monkeypatch.setattr(temporary, "free_bytes", lambda directory: temporary.MIN_FREE_BYTES - 1)
    assert temporary.memory_directory(point, table) is None
    assert 0 < free_bytes(point) == os.statvfs(point).f_bavail * os.statvfs(point).f_frsize
    assert free_bytes(str(Path(point) / "no-such-directory")) == 0


def test_this_machines_own_table_reads() -> None:
    """The real table parses: /dev/shm is either taken or not, and never raises."""
    assert temporary.memory_directory() in (temporary.MEMORY_DIRECTORY, None)


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
        assert directory is None and tempfile.gettempdir() == str(chosen)
    monkeypatch.delenv(variable)
    tempfile.tempdir = str(chosen)  # as a program that embeds inboxspec may set it
    with temporary.temporary_directories_in_memory() as directory:
        assert directory is None and tempfile.gettempdir() == str(chosen)
    assert tempfile.tempdir == str(chosen)


def test_check_runs_with_them_in_memory_and_other_commands_do_not(
        unchosen: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def run_check(*args: Any, **kwargs: Any) -> Any:
        seen.append(tempfile.gettempdir())
        raise machines.UnknownMachine("no-such-machine")  # check's own exit 2, after the directory is seen

    def lint(args: argparse.Namespace) -> int:
        seen.append(tempfile.gettempdir())
        return 0

    monkeypatch.setattr(check, "run_check", run_check)
    monkeypatch.setattr(cli, "_cases_lint", lint)
    assert cli.main(["check"]) == 2
    assert tempfile.tempdir is None
    assert cli.main(["cases", "lint"]) == 0
    assert seen[0] == unchosen and seen[1] != unchosen


LAID_OUT = """
import atexit, sys
from inboxspec.cli import main
from inboxspec.machines import fixtures
lay_out = fixtures.FixtureRoot.lay_out
made = []
def noting(self, *args, **kwargs):
    made.append(lay_out(self, *args, **kwargs))
    return made[-1]
fixtures.FixtureRoot.lay_out = noting
code = main(["check", "--machine", "writer-proofs"])
atexit.register(lambda: print("\\n".join(made)))  # the last said: after the fixtures' own clean-up
sys.exit(code)
"""


@pytest.mark.skipif(temporary.memory_directory() is None, reason="no memory filesystem at /dev/shm here")
def test_a_check_with_no_place_chosen_lays_its_fixtures_out_in_memory_and_leaves_none(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if name not in temporary.CHOSEN_BY}
    done = subprocess.run([sys.executable, "-c", LAID_OUT], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    made = [Path(line) for line in done.stdout.splitlines() if line.startswith("/")]
    assert made and all(path.is_relative_to(temporary.MEMORY_DIRECTORY) for path in made)
    assert not [path for path in made if path.exists() or path.parent.exists()]


def _no_space(*args: Any, **kwargs: Any) -> Any:
    raise OSError(28, "No space left on device")


def _none_usable(*args: Any, **kwargs: Any) -> Any:
    raise FileNotFoundError(2, "No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp']")


def _no_fixture(*args: Any, **kwargs: Any) -> Any:
    raise fixtures.FixtureError("cannot create a fixture directory: [Errno 28] No space left on device")


@pytest.mark.parametrize(("where", "failing"), [
    pytest.param("tempfile.mkdtemp", _no_space, id="the workers' directory"),
    pytest.param("tempfile.gettempdir", _none_usable, id="no usable directory"),
    pytest.param("lay_out", _no_fixture, id="a fixture directory"),
])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_check_whose_temporary_directories_cannot_be_made_is_unusable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], where: str, failing: Any,
        as_json: bool) -> None:
    """A full or unwritable temporary directory (a shared /dev/shm that another user filled, say)
    ends the check with exit 2 and one line saying so, never a traceback."""
    if where == "lay_out":
        monkeypatch.setattr(fixtures.FixtureRoot, "lay_out", failing)
    else:
        monkeypatch.setattr(tempfile, where.split(".")[1], failing)
    code = cli.main(["check", "--machine", "writer-proofs", *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in out + err
    assert "inboxspec check: its temporary directories could not be made: " in err
    said = "No usable temporary directory" if where == "tempfile.gettempdir" else "No space left on device"
    assert said in err
    if as_json:
        assert "could not be made" in json.loads(out)["unusable"]


def test_a_check_whose_fixtures_would_live_in_too_long_a_path_is_unusable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A private root longer than ``MAX_ROOT_BYTES`` (a TMPDIR of 4,008 characters made the writer
    proofs' reference measure its own fixtures as unreadable: a false FAILED, or a traceback) is
    refused before a fixture is laid out, and the refused root is removed."""
    deep = tmp_path
    while len(str(deep).encode()) <= fixtures.MAX_ROOT_BYTES:
        deep = deep / ("d" * 200)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with pytest.raises(fixtures.FixtureError, match=f"longer than {fixtures.MAX_ROOT_BYTES} bytes"):
        fixtures.FixtureRoot().lay_out({"entries": []})
    assert list(deep.iterdir()) == []
    assert cli.main(["check", "--machine", "writer-proofs"]) == 2
    assert "its temporary directories could not be made: fixture directories would live in a path longer" \
        in capsys.readouterr().err
    assert list(deep.iterdir()) == []

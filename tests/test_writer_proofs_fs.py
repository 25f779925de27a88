"""The real filesystem edge on real temporary trees (WRITER-MEAS-*, WRITER-PIN-*, WRITER-HOME-*).

Changes *during* a measurement go through the measurement's test hook, which runs between its
two passes; a case cannot express them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from inboxspec.impl import writer_fs
from inboxspec.impl.writer_fs import FilesystemEnvironment, measure_root, measure_writers
from inboxspec.impl.writer_proofs import (
    PlacementWriterContextError,
    WriterMeasurementError,
    WriterProofs,
)


def install(root: Path, version: str = "0.22.0", name: str = "@staix/agent-mem") -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "package.json").write_text(json.dumps({"name": name, "version": version}))
    (root / "bin" / "amem.js").write_text("#!/usr/bin/env node\n")
    (root / "src" / "index.ts").write_text("export {};\n")
    for path in (root, root / "bin", root / "src"):
        os.chmod(path, 0o755)
    for path in (root / "package.json", root / "bin" / "amem.js", root / "src" / "index.ts"):
        os.chmod(path, 0o644)
    return root


def detail_of(root: Path) -> str:
    with pytest.raises(WriterMeasurementError) as caught:
        measure_root(str(root))
    return caught.value.detail


def chmod(mode: int, name: str) -> Callable[[Path], None]:
    return lambda root: os.chmod(root / name, mode)


def version(text: str) -> Callable[[Path], object]:
    return lambda root: (root / "package.json").write_text(
        json.dumps({"name": "@staix/agent-mem", "version": text})
    )


def package_json_symlink(root: Path) -> None:
    (root / "package.json").rename(root / "real.json")
    os.symlink("real.json", root / "package.json")


# A breaker's return value (the byte count of ``write_text``, say) is ignored.
BROKEN: dict[str, tuple[Callable[[Path], object], str]] = {
    "group-writable file": (chmod(0o664, "src/index.ts"), "writable-runtime"),
    "world-writable directory": (chmod(0o757, "src"), "writable-runtime"),
    "setgid directory": (chmod(0o2755, "src"), "unsafe-runtime"),
    "symlink inside": (lambda r: os.symlink("index.ts", r / "src" / "alias.ts"), "unsafe-runtime"),
    "dangling symlink": (lambda r: os.symlink("nowhere", r / "gone"), "unsafe-runtime"),
    "fifo": (lambda r: os.mkfifo(r / "src" / "pipe"), "unsafe-runtime"),
    "hard link": (lambda r: os.link(r / "src" / "index.ts", r / "src" / "copy.ts"), "unsafe-runtime"),
    "missing bin/amem.js": (lambda r: (r / "bin" / "amem.js").unlink(), "missing-runtime"),
    "0.20.9": (version("0.20.9"), "below-minimum"),
    "0.21.0-rc.1": (version("0.21.0-rc.1"), "invalid-version"),
    "v0.21.0": (version("v0.21.0"), "invalid-version"),
    "0.21": (version("0.21"), "invalid-version"),
    "wrong name": (
        lambda r: (r / "package.json").write_text('{"name": "amem", "version": "0.22.0"}'),
        "wrong-package",
    ),
    "package.json a symlink": (package_json_symlink, "unsafe-runtime"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_fault_has_its_detail(tmp_path: Path, name: str) -> None:
    """WRITER-MEAS-5, WRITER-MEAS-6, WRITER-VER-1."""
    root = install(tmp_path / "w")
    breaker, detail = BROKEN[name]
    breaker(root)
    assert detail_of(root) == detail


def test_bound_on_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """WRITER-MEAS-3 (with the bound lowered, so the test stays small)."""
    root = install(tmp_path / "w")
    monkeypatch.setattr(writer_fs, "MAX_ENTRIES", 5)
    assert detail_of(root) == "bound"


def test_roots_level_rules(tmp_path: Path) -> None:
    """WRITER-MEAS-2, WRITER-MEAS-3: index of the failing root; duplicates report the later one."""
    a = install(tmp_path / "a")
    os.symlink(a, tmp_path / "link")
    cases = {
        (): ("invalid-inventory", None),
        ("relative",): ("invalid-inventory", 0),
        (str(a), str(tmp_path / "link")): ("invalid-inventory", 1),
        (str(a), str(tmp_path / "missing")): ("unreadable", 1),
        (str(a / "package.json"),): ("invalid-inventory", 0),
    }
    for roots, (detail, index) in cases.items():
        with pytest.raises(WriterMeasurementError) as caught:
            measure_writers(list(roots))
        assert (caught.value.detail, caught.value.root_index) == (detail, index), roots
    assert measure_writers([str(tmp_path / "link")]).roots[0].root == str(a)


def test_file_rewritten_during_measurement_is_changed(tmp_path: Path) -> None:
    """WRITER-MEAS-7: through the hook between the two passes."""
    root = install(tmp_path / "w")

    def rewrite() -> None:
        (root / "src" / "index.ts").write_text("export const x = 1;\n")

    with pytest.raises(WriterMeasurementError) as caught:
        measure_root(str(root), between=rewrite)
    assert caught.value.detail == "changed"


def test_mtime_only_change_during_measurement_is_changed(tmp_path: Path) -> None:
    """WRITER-MEAS-7."""
    root = install(tmp_path / "w")
    target = root / "bin" / "amem.js"
    with pytest.raises(WriterMeasurementError):
        measure_root(str(root), between=lambda: os.utime(target, ns=(1, 1)))


def test_identical_replacement_between_measurements_keeps_the_pin(tmp_path: Path) -> None:
    """WRITER-PIN-1: the pin covers content and modes, not inodes or times."""
    root = install(tmp_path / "w")
    before = measure_root(str(root)).pin
    index = root / "src" / "index.ts"
    text = index.read_text()
    index.unlink()
    index.write_text(text)
    os.chmod(index, 0o644)
    os.utime(index, ns=(5, 5))
    assert measure_root(str(root)).pin == before
    os.chmod(index, 0o600)
    assert measure_root(str(root)).pin != before


def _home(tmp_path: Path, receipt: list[str]) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "formats.json").write_text('{"readerFloor": "0.22.0"}')
    (home / "setup-receipt.json").write_text(json.dumps({"writerRoots": receipt}))
    return home


def test_running_cli_moved_between_required_reads(tmp_path: Path) -> None:
    """WRITER-COMP-4: the running CLI root (a symlink) points elsewhere after the measurement."""
    install(tmp_path / "v1")
    install(tmp_path / "v2", "0.22.1")
    current = tmp_path / "current"
    os.symlink(tmp_path / "v1", current)
    home = _home(tmp_path, [])

    def repoint() -> None:
        current.unlink()
        os.symlink(tmp_path / "v2", current)

    proofs = WriterProofs(FilesystemEnvironment(between=repoint), str(home), str(current))
    with pytest.raises(PlacementWriterContextError) as caught:
        proofs.initial([str(current)])
    assert (caught.value.category, caught.value.cause_class, caught.value.detail) == (
        "running CLI",
        "changed",
        "changed",
    )


def test_receipt_changed_between_required_reads(tmp_path: Path) -> None:
    """WRITER-COMP-4."""
    cli = install(tmp_path / "cli")
    other = install(tmp_path / "other")
    home = _home(tmp_path, [])

    def grow() -> None:
        (home / "setup-receipt.json").write_text(json.dumps({"writerRoots": [str(other)]}))

    proofs = WriterProofs(FilesystemEnvironment(between=grow), str(home), str(cli))
    with pytest.raises(PlacementWriterContextError) as caught:
        proofs.initial([str(cli), str(other)])
    assert (caught.value.category, caught.value.cause_class) == ("setup receipt", "changed")


@pytest.mark.parametrize(("edit", "cause"), [("rewrite", "changed"), ("remove", "missing")])
def test_locator_not_current(tmp_path: Path, edit: str, cause: str) -> None:
    """WRITER-HOME-4: the still-current check reads the locator again after the measurement."""
    cli = install(tmp_path / "cli")
    home = _home(tmp_path, [])
    pin = measure_root(str(cli)).pin
    locator = home / "sync-placement-writer-roots.json"
    document = {
        "roots": [str(cli)],
        "writers": [{"writerId": str(cli), "version": "0.22.0", "pin": pin}],
        "activation": {"generation": 1, "renewal": None},
    }
    locator.write_text(json.dumps(document))

    def touch() -> None:
        if edit == "rewrite":
            locator.write_text(json.dumps({**document, "activation": {"generation": 2, "renewal": None}}))
        else:
            locator.unlink()

    proofs = WriterProofs(FilesystemEnvironment(between=touch), str(home), str(cli))
    with pytest.raises(PlacementWriterContextError) as caught:
        proofs.active()
    assert (caught.value.category, caught.value.cause_class) == ("active locator", cause)


def test_a_file_grown_while_it_is_read_is_read_no_further_than_one_byte_past_its_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """WRITER-MEAS-7: a file that another process extended after the read pass had checked its
    descriptor was read to its new end: a sparse gigabyte cost its writer nothing and the measurement
    all its memory. Here the first read of ``src/index.ts`` extends it by 64 MiB; the read pass takes
    one byte past the walk's size, and the file is ``changed``."""
    root = install(tmp_path / "w")
    grown = root / "src" / "index.ts"
    size = grown.stat().st_size
    read = os.read
    taken: dict[int, int] = {}  # bytes read, per descriptor of the grown file

    def reading(fd: int, count: int) -> bytes:
        if not os.path.samefile(f"/proc/self/fd/{fd}", grown):
            return read(fd, count)
        if not taken:
            os.truncate(grown, 64 << 20)  # another process's write, as far as the reader can tell
        chunk = read(fd, count)
        taken[fd] = taken.get(fd, 0) + len(chunk)
        return chunk

    monkeypatch.setattr(os, "read", reading)  # the os module writer_fs reads with
    with pytest.raises(WriterMeasurementError) as caught:
        measure_root(str(root))
    assert caught.value.detail == "changed"
    assert max(taken.values()) == size + 1

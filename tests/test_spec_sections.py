"""The generated sections of the spec documents: read in one pass, their markers paired, and a spec
directory as hostile as any input (``spec generate --spec-dir``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from inboxspec import machines
from inboxspec.checker.spec_sections import BrokenMarkers, marked_sections, render
from inboxspec.cli import main

BEGIN, END = "<!-- BEGIN GENERATED: {} -->", "<!-- END GENERATED: {} -->"


def b(name: str) -> str:
    return BEGIN.format(name)


def e(name: str) -> str:
    return END.format(name)


def test_sections_are_paired_and_rendered_in_place() -> None:
    text = f"intro\n{b('a')}\nold a\n{e('a')}\nmiddle\n{b('b')}\nold b\n{e('b')}"
    assert [(s.name, s.body(text)) for s in marked_sections(text)] == [("a", "old a\n"), ("b", "old b\n")]
    assert render(text, {"a": "new a\n"}) == text.replace("old a", "new a")


@pytest.mark.parametrize(("text", "problem"), [
    (f"{b('a')}\nbody\n", "BEGIN a has no END"),
    (f"body\n{e('a')}", "END a without its BEGIN"),
    (f"{b('a')}\n{b('b')}\n{e('b')}\n{e('a')}", "BEGIN b inside section a"),
    (f"{b('a')}\n{e('b')}", "END b without its BEGIN (inside section a)"),
    (f"{b('a')}\n{e('a')}\n{b('a')}\n{e('a')}", "section a appears twice"),
    (f"{b('a')} trailing\n{e('a')}", "BEGIN a is not alone at the end of its line"),
    ("\n".join([b("a")] * 32_000), "BEGIN a inside section a"),  # a pairing pattern took minutes on this
])
def test_markers_that_do_not_pair_up_are_broken(text: str, problem: str) -> None:
    with pytest.raises(BrokenMarkers, match=problem.replace("(", r"\(").replace(")", r"\)")):
        marked_sections(text)


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """A spec directory holding the wake gate's document alone (so one machine is explored)."""
    directory = tmp_path / "spec"
    directory.mkdir()
    shutil.copy(machines.get("wake-gate").spec, directory)
    return directory


def test_a_section_whose_end_is_gone_is_drift_not_a_pass(spec_copy: Path, capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """With its END marker gone, a changed table went unseen: the check said current (exit 0)."""
    document = spec_copy / "wake-gate.md"
    text = document.read_text(encoding="utf-8")
    broken = text.replace("| no_episode |", "| no_episod |", 1).replace(END.format("wake-gate-table"), "", 1)
    document.write_text(broken, encoding="utf-8")
    assert main(["spec", "generate", "--check", "--spec-dir", str(spec_copy)]) == 1
    reported = capsys.readouterr().out
    assert "generated-section markers: BEGIN wake-gate-files inside section wake-gate-table" in reported
    capsys.readouterr()
    assert main(["spec", "generate", "--spec-dir", str(spec_copy)]) == 0  # written as it is: which
    assert document.read_text(encoding="utf-8") == broken  # text is the section's is unknown


@pytest.mark.parametrize("kind", ["missing-directory", "empty-directory", "directory-document", "fifo",
                                  "not-utf8", "link-to-zero"])
def test_a_spec_directory_that_cannot_be_read_cannot_be_checked(kind: str, spec_copy: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Each was a traceback, a hang, or a pass with nothing checked."""
    document = spec_copy / "wake-gate.md"
    target = spec_copy
    if kind == "missing-directory":
        target = spec_copy / "nowhere"
    elif kind == "empty-directory":
        document.unlink()
    elif kind == "directory-document":
        document.unlink()
        document.mkdir()
    elif kind == "fifo":
        document.unlink()
        os.mkfifo(document)
    elif kind == "not-utf8":
        document.write_bytes(document.read_bytes() + b"\xff")
    else:
        document.unlink()
        document.symlink_to("/dev/zero")
    assert main(["spec", "generate", "--check", "--spec-dir", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inboxspec spec: ") and "Traceback" not in err


def test_rewriting_replaces_a_link_and_leaves_its_target(spec_copy: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    document = spec_copy / "wake-gate.md"
    outside.write_text(document.read_text(encoding="utf-8").replace("| no_episode |", "| stale |", 1),
                       encoding="utf-8")
    before = outside.read_bytes()
    document.unlink()
    document.symlink_to(outside)
    assert main(["spec", "generate", "--check", "--spec-dir", str(spec_copy)]) == 2  # a link is not read
    assert outside.read_bytes() == before

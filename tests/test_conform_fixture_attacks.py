"""Hostile case files and fixtures, run as a user runs them: ``inboxspec conform`` on a case file.

``tests/attacks/fixtures/`` is the adversarial corpus (conformance/WRITING-AN-ADAPTER.md, *Threat
model: case files and fixtures*): every file holds one case whose description says what it attempts.
A ``refused-*`` file must be refused before anything is laid out (exit 2, every problem a fixture
problem naming the file and its JSON path, PROTO-FIX-3); a ``confined-*`` file runs and passes. For
each, a canary directory beside the run's TMPDIR (the corpus's symlinks point at it) is unchanged
afterwards (contents, modes, link counts), and no fixture directory is left behind. A confined file
runs on its own, with the reference adapter and with the Node port. The refused files are refused
together, in one run with the reference adapter: the run loads every case file, reporting each
one's problems, before it lays anything out or starts any adapter, so a file that slipped through
would be a file without a problem of its own. The tests run as root in CI, as they do here: root's
disregard of modes is what makes a write through a link dangerous, so they never skip as root.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import (
    MAX_CASE_FILE_BYTES,
    MAX_RUN_CASE_BYTES,
    CaseFileError,
    read_case_bytes,
)
from inboxspec.conformance.fixtures import FixtureError, FixturePool, materialise, swap
from inboxspec.machines import fixtures as machine_fixtures
from tests.report_schema import checked_report

ATTACKS = Path(__file__).resolve().parent / "attacks" / "fixtures"
REFERENCE = f"{sys.executable} -m inboxspec.conformance.adapter"
NODE = shutil.which("node")
NODE_PORT = Path(__file__).resolve().parents[1] / "conformance" / "ports" / "node"
NODE_ADAPTER = f"node {NODE_PORT / 'adapter.mjs'}"
ADAPTERS = [
    pytest.param(REFERENCE, id="reference"),
    pytest.param(NODE_ADAPTER, id="node", marks=pytest.mark.skipif(
        NODE is None and not os.environ.get("CI"), reason="node is not installed")),
]
THROUGH_A_LINK = [*sorted(p.name for p in ATTACKS.glob("refused-*through-symlink.json")),
                  "refused-hardlink-to-outside-file.json", "refused-mode-on-the-link.json"]
ABSOLUTE_TARGET = Path("/inboxspec-attack-absolute")  # what refused-absolute.json would create


def make_canary(parent: Path) -> Path:
    """A directory outside the run's root with something of every kind a write could damage."""
    canary = parent / "canary"
    (canary / "locked").mkdir(parents=True)
    (canary / "secret").write_text("secret\n")
    (canary / "plain").write_text("plain\n")
    os.link(canary / "plain", canary / "twin")
    (canary / "locked" / "inner").write_text("inner\n")
    for path, mode in (("secret", 0o600), ("plain", 0o644), ("locked/inner", 0o600), ("locked", 0o700)):
        os.chmod(canary / path, mode)
    return canary


def snapshot(top: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry below ``top`` (and ``top``): type and mode, link count, size, content or target."""
    rows: dict[str, tuple[Any, ...]] = {}
    for folder, folders, files in os.walk(top, followlinks=False):
        for name in ["", *folders, *files] if folder == str(top) else [*folders, *files]:
            path = Path(folder, name) if name else Path(folder)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                content: Any = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                content = os.readlink(path)
            else:
                content = None
            rows[str(path.relative_to(top))] = (info.st_mode, info.st_nlink, info.st_size, content)
    return rows


def conform(tmp_path: Path, adapter: str, *args: str, tmpdir: Path | None = None,
            timeout: float = 90) -> tuple[int, dict[str, Any] | None, str]:
    """``inboxspec conform --json`` with TMPDIR at ``<tmp_path>/tmp`` (the canary sits beside it)."""
    run_tmp = tmpdir or tmp_path / "tmp"
    run_tmp.mkdir(exist_ok=True, parents=True)
    process = subprocess.run(
        [sys.executable, "-m", "inboxspec", "conform", "--json", "--adapter", adapter, *args],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, "TMPDIR": str(run_tmp)},
    )
    try:
        report = checked_report(json.loads(process.stdout))
    except json.JSONDecodeError:
        report = None
    return process.returncode, report, process.stdout + process.stderr


def assert_refused_for_its_fixture(code: int, report: dict[str, Any] | None, output: str, file: Path) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    assert report is not None and report["ok"] is False, output
    problems = report["problems"]
    assert problems, output
    # Refused for its fixture, not for some other fault of the file: each problem names the file
    # and the JSON path of the fixture part that is wrong.
    for problem in problems:
        assert problem.startswith(f"{file}: fixture: at $."), problem


def run_attack(tmp_path: Path, adapter: str, name: str) -> None:
    file = ATTACKS / name
    canary = make_canary(tmp_path)
    before = snapshot(canary)
    began = time.monotonic()
    # The corpus's links point at the canary outside the fixture on purpose: the run allows reads
    # there (PROTO-FIX-5), and what these files test is that nothing there is written.
    code, report, output = conform(tmp_path, adapter, "--cases", str(file), "--allow-outside-reads")
    assert time.monotonic() - began < 60, "the run hung"
    if name.startswith("refused-"):
        assert_refused_for_its_fixture(code, report, output, file)
    else:
        assert code == 0 and report is not None and report["totals"]["pass"] == 1, output
    assert snapshot(canary) == before, "the run changed the canary outside its root"
    assert os.listdir(tmp_path / "tmp") == [], "fixture directories were left behind"
    assert not os.path.lexists(ABSOLUTE_TARGET)


def refused_together(tmp_path: Path, names: list[str]) -> dict[str, list[str]]:
    """One run of the reference adapter on the files ``names`` of the corpus: refused (exit 2, a JSON
    report, every problem a fixture problem naming a file of ``names`` and the JSON path); each
    file's problems. The cases load file by file, and every file's problems are reported."""
    files = [ATTACKS / name for name in names]
    code, report, output = conform(tmp_path, REFERENCE, *(f"--cases={file}" for file in files))
    assert code == 2 and "Traceback" not in output, output
    assert report is not None and report["ok"] is False, output
    problems: dict[str, list[str]] = {name: [] for name in names}
    for problem in report["problems"]:
        # Refused for its fixture, not for some other fault: each problem names one of the files
        # and the JSON path of the fixture part that is wrong.
        owners = [name for name, file in zip(names, files, strict=True)
                  if problem.startswith(f"{file}: fixture: at $.")]
        assert len(owners) == 1, problem
        problems[owners[0]].append(problem)
    assert all(problems.values()), problems  # each file refused, none let through
    return problems


def test_the_corpus_holds_both_kinds() -> None:
    names = [p.name for p in ATTACKS.glob("*.json")]
    assert len([n for n in names if n.startswith("refused-")]) >= 30
    assert len([n for n in names if n.startswith("confined-")]) >= 4
    assert all(n.startswith(("refused-", "confined-")) for n in names), names


REFUSED = sorted(p.name for p in ATTACKS.glob("refused-*.json"))
CONFINED = sorted(p.name for p in ATTACKS.glob("confined-*.json"))


def test_every_refused_attack_is_refused_before_lay_out(tmp_path: Path) -> None:
    """PROTO-FIX-3: each refused file of the corpus for its own fixture, in one run; the canary is
    unchanged and nothing was laid out."""
    canary = make_canary(tmp_path)
    before = snapshot(canary)
    began = time.monotonic()
    refused_together(tmp_path, REFUSED)
    assert time.monotonic() - began < 60, "the run hung"
    assert snapshot(canary) == before, "the run changed the canary outside its root"
    assert os.listdir(tmp_path / "tmp") == [], "fixture directories were left behind"
    assert not os.path.lexists(ABSOLUTE_TARGET)


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("name", CONFINED)
def test_every_confined_attack_stays_in_its_fixture(tmp_path: Path, adapter: str, name: str) -> None:
    """PROTO-FIX-3, WRITER-SES-3: every confined attack runs, passes and touches nothing outside."""
    run_attack(tmp_path, adapter, name)


# -- defect 1: fixture lay-out followed links ---------------------------------------------------------


def test_defect_1_entries_through_a_symlink_are_refused() -> None:
    """PROTO-FIX-3: a file, an overwrite, a directory, a FIFO, a nested path, a mode change and hard
    links through a symlink out of the fixture, on writer-proofs and on wake-gate, are refused:
    each is a refused file of the corpus (test_every_refused_attack_is_refused_before_lay_out)."""
    assert len(THROUGH_A_LINK) >= 10 and "refused-wake-gate-through-symlink.json" in THROUGH_A_LINK
    assert set(THROUGH_A_LINK) <= set(REFUSED), THROUGH_A_LINK


def _through_a_link_fixture(name: str, canary: Path) -> dict[str, Any]:
    data = json.loads((ATTACKS / name).read_text())
    fixture: dict[str, Any] = data["cases"][0]["config"]["fixture"]
    for entry in fixture["entries"]:
        if entry["type"] == "symlink":
            entry["target"] = str(canary)
    return fixture


@pytest.mark.parametrize("name", THROUGH_A_LINK)
def test_defect_1_lay_out_follows_no_link_even_unchecked(tmp_path: Path, name: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-FIX-3: with the checks switched off, lay-out itself still refuses to act through the link
    (descriptors opened with O_NOFOLLOW, files created with O_EXCL), and the canary is unchanged."""
    canary = make_canary(tmp_path)
    before = snapshot(canary)
    monkeypatch.setattr(machine_fixtures, "fixture_problems", lambda *_args, **_kwargs: [])
    monkeypatch.setattr(machine_fixtures, "_VALID", set())
    directory = tmp_path / "fixture"
    directory.mkdir()
    with pytest.raises(FixtureError):
        materialise(_through_a_link_fixture(name, canary), directory)
    assert snapshot(canary) == before


# -- defect 2: swap_paths through a fixture symlink moved an outside file ------------------------------


def test_defect_2_swap_through_a_symlink_moves_nothing_outside() -> None:
    """WRITER-SES-3: swap_paths through a symlink out of the fixture gives invalid_argument; the
    outside file is neither moved in nor deleted by the cleanup: a confined file of the corpus, run
    with each adapter (test_every_confined_attack_stays_in_its_fixture)."""
    assert "confined-swap-through-symlink.json" in CONFINED


def test_defect_2_swap_walks_no_link(tmp_path: Path) -> None:
    canary = make_canary(tmp_path)
    before = snapshot(canary)
    directory = tmp_path / "fixture"
    directory.mkdir()
    (directory / "out").symlink_to(canary)
    for first, second in (("out/secret", "moved"), ("moved", "out/secret"), ("out/locked/inner", "x")):
        with pytest.raises(OSError):
            swap(str(directory), first, second)
    swap(str(directory), "out", "moved")  # the link itself moves
    assert os.readlink(directory / "moved") == str(canary) and not os.path.lexists(directory / "out")
    machine_fixtures.remove(directory)
    assert not directory.exists()
    assert snapshot(canary) == before


def test_removal_follows_no_link(tmp_path: Path) -> None:
    """Making a fixture removable (rwx for its directories) never chmods through a link."""
    canary = make_canary(tmp_path)
    os.chmod(canary / "locked", 0o500)  # a chmod to rwx through the link would show
    before = snapshot(canary)
    directory = tmp_path / "fixture"
    (directory / "ro").mkdir(parents=True)
    (directory / "ro" / "locked").symlink_to(canary / "locked")
    (directory / "ro" / "secret").symlink_to(canary / "secret")
    os.chmod(directory / "ro", 0o500)
    machine_fixtures.remove(directory)
    assert not os.path.lexists(directory)
    assert snapshot(canary) == before


DEEP_TREE_MAKER = """
import json, os, sys
from inboxspec.conformance.adapter import handle
for line in sys.stdin:
    request = json.loads(line)
    if request.get("cmd") == "stop":
        break
    reply = handle(request)
    if request.get("cmd") == "run" and "fixture_dir" in request["case"]:
        fd = os.open(request["case"]["fixture_dir"], os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(3 * sys.getrecursionlimit()):
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.close(fd)
    print(json.dumps(reply), flush=True)
"""


@pytest.mark.slow
def test_a_tree_thousands_of_levels_deep_made_by_the_adapter_ends_no_run(tmp_path: Path) -> None:
    """An adapter that makes a tree three times Python's recursion limit deep in each fixture directory
    it is given: reading the tree back and removing it ended the run in a RecursionError traceback
    (exit 1, no report), with the tree left in TMPDIR."""
    maker = tmp_path / "deep_tree_maker.py"
    maker.write_text(DEEP_TREE_MAKER)
    # One case in flight at a time: the adapter writes into directories the runner may share between
    # cases that change no fixture (PROTO-FIX-4), which it checks as it hands one out; with cases sent
    # ahead, the next case could get a shared directory before this adapter wrote into it, and crash on
    # the tree the last case left (a fault of the adapter's, which breaks PROTO-FIX-2, not the runner's).
    code, report, output = conform(tmp_path, f"{sys.executable} {maker}", "--machine", "writer-proofs",
                                   "--run", "writer-proofs/active-*", "--window", "1", timeout=300)
    assert code == 0 and report is not None and report["ok"], output
    assert "Traceback" not in output and "RecursionError" not in output
    assert os.listdir(tmp_path / "tmp") == []


# -- defect 4: a FIFO then a file at the same path blocked the runner --------------------------------


def test_defect_4_fifo_then_file_is_refused_at_once(tmp_path: Path) -> None:
    """PROTO-FIX-3: refused as a duplicate path before anything is laid out; and if it were laid out,
    the file is opened O_EXCL | O_NONBLOCK, so it fails at once rather than opening the FIFO."""
    began = time.monotonic()
    run_attack(tmp_path, REFERENCE, "refused-fifo-then-file.json")
    assert time.monotonic() - began < 30
    directory = tmp_path / "fixture"
    directory.mkdir()
    os.mkfifo(directory / "p")
    parent = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    began = time.monotonic()
    try:
        with pytest.raises(FileExistsError):
            machine_fixtures._write_file(parent, "p", b"x", 0o644)
    finally:
        os.close(parent)
    assert time.monotonic() - began < 5


# -- defect 9: invalid fixtures gave tracebacks ---------------------------------------------------------


INVALID = ["refused-dotdot.json", "refused-absolute.json", "refused-nul.json", "refused-lone-surrogate.json",
           "refused-surrogate-text.json", "refused-duplicate.json", "refused-bad-base64.json",
           "refused-bad-mode-digits.json", "refused-bad-mode-form.json", "refused-empty-component.json",
           "refused-too-deep.json", "refused-many-entries.json", "refused-many-bytes.json",
           "refused-hardlink-to-later-file.json", "refused-unknown-type.json"]


def test_defect_9_invalid_fixtures_are_unusable_case_files_with_json(tmp_path: Path) -> None:
    """PROTO-FIX-3: each is exit 2 with a JSON report naming the file and the JSON path; `cases lint`
    names the same problems."""
    problems = refused_together(tmp_path, INVALID)
    lint = subprocess.run([sys.executable, "-m", "inboxspec", "cases", "lint",
                           *(str(ATTACKS / name) for name in INVALID)],
                          capture_output=True, text=True, timeout=60)
    assert lint.returncode != 0 and "Traceback" not in lint.stdout + lint.stderr
    assert all(problem in lint.stdout + lint.stderr for found in problems.values() for problem in found)


@pytest.mark.parametrize("selection", [("--machine", "writer-proofs", "--run", "writer-proofs/setuid-file"),
                                       ("--machine", "wake-gate")])
def test_defect_9_a_tmpdir_that_needs_json_escaping_is_a_clear_unusable_run(
        selection: tuple[str, ...], tmp_path: Path) -> None:
    """PROTO-FIX-1: a TMPDIR holding a quote is refused with a message, exit 2 and a report; and so
    is it for a run whose cases have no fixture, whose adapter has its TMPDIR in the private root
    all the same (PROTO-PROC-6): no adapter starts, and no case runs."""
    strange = tmp_path / 'we"ird'
    strange.mkdir()
    code, report, output = conform(tmp_path, REFERENCE, *selection, tmpdir=strange)
    assert code == 2 and "Traceback" not in output, output
    assert report is not None and "needs escaping inside a JSON string" in report["unusable"]
    assert "results" not in report or report["results"] == [], report
    assert os.listdir(strange) == []


# -- defect 10: case directories holding things that are not case files ------------------------------


def _special_case_files(directory: Path) -> dict[str, str]:
    """Names ending in .json that are not regular files, or too large; what each one is."""
    directory.mkdir()
    (directory / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(directory / "pipe.json")
    (directory / "folder.json").mkdir()
    real = directory / "real.txt"
    real.write_text("{}")
    (directory / "link-to-file.json").symlink_to(real)
    with open(directory / "huge.json", "wb") as huge:  # sparse: no disk used, and never read
        huge.truncate(16 * 1024 * 1024 + 1)
    return {"zero.json": "a symlink", "pipe.json": "a FIFO", "folder.json": "a directory",
            "link-to-file.json": "a symlink", "huge.json": "bytes; a case file holds at most"}


def test_defect_10_case_directories_hold_only_regular_case_files(tmp_path: Path) -> None:
    """PROTO-CASES-2: a symlink to /dev/zero, a FIFO, a directory named *.json, a symlink to a file
    and a file past 16 MiB are each an unusable case file, named, found without reading them."""
    directory = tmp_path / "cases"
    kinds = _special_case_files(directory)
    began = time.monotonic()
    code, report, output = conform(tmp_path, REFERENCE, "--cases", str(directory))
    assert time.monotonic() - began < 60
    assert code == 2 and "Traceback" not in output and "MemoryError" not in output, output
    assert report is not None
    for name, kind in kinds.items():
        named = [p for p in report["problems"] if p.startswith(f"{directory / name}: ")]
        assert named and kind in named[0], (name, output)
    lint = subprocess.run([sys.executable, "-m", "inboxspec", "cases", "lint", str(directory)],
                          capture_output=True, text=True, timeout=60)
    assert lint.returncode != 0 and "Traceback" not in lint.stderr
    assert all(str(directory / name) in lint.stdout + lint.stderr for name in kinds)


def test_a_case_directory_or_file_named_through_a_symlink_is_refused_unread(tmp_path: Path) -> None:
    """A downloaded case directory that is a link to /etc had its JSON files read, and their text
    quoted in the problems; a link given for one case file is refused as a link inside a directory
    is. Both for ``conform --cases`` and ``cases lint``, without a traceback."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text('{"machine": "wake-gate", "cases": "the secret"}')
    for name, target in (("cases", outside), ("one.json", outside / "secret.json")):
        link = tmp_path / name
        link.symlink_to(target)
        code, report, output = conform(tmp_path, REFERENCE, "--cases", str(link))
        assert code == 2 and report is not None, output
        assert report["problems"] == [f"{link}: a symlink; name the case directory or file it points to"]
        lint = subprocess.run([sys.executable, "-m", "inboxspec", "cases", "lint", str(link)],
                              capture_output=True, text=True, timeout=60)
        assert lint.returncode == 2 and f"{link}: a symlink" in lint.stdout + lint.stderr  # as a missing one
        assert "the secret" not in output + lint.stdout + lint.stderr and "Traceback" not in lint.stderr


def test_case_files_past_the_run_s_total_are_refused_before_one_is_read(tmp_path: Path) -> None:
    """PROTO-CASES-2: three files, each under the per-file limit, hold more than a run loads
    together; parsed, they would take about fifty times that in memory."""
    directory = tmp_path / "cases"
    directory.mkdir()
    each = MAX_RUN_CASE_BYTES // 3 + 1
    assert each <= MAX_CASE_FILE_BYTES
    for name in ("a.json", "b.json", "c.json"):
        with open(directory / name, "wb") as sparse:  # no disk used; never read
            sparse.truncate(each)
    expected = (f"the case files hold {3 * each} bytes together; a run loads at most "
                f"{MAX_RUN_CASE_BYTES} (PROTO-CASES-2)")
    code, report, output = conform(tmp_path, REFERENCE, "--cases", str(directory))
    assert code == 2 and report is not None and report["problems"] == [expected], output
    lint = subprocess.run([sys.executable, "-m", "inboxspec", "cases", "lint", str(directory)],
                          capture_output=True, text=True, timeout=60)
    assert lint.returncode == 2 and expected in lint.stderr and "Traceback" not in lint.stderr
    (directory / "c.json").unlink()
    (directory / "c.json").symlink_to(tmp_path / "outside.json")  # counted by lstat: a link, not its target
    with open(tmp_path / "outside.json", "wb") as sparse:
        sparse.truncate(each)
    code, report, output = conform(tmp_path, REFERENCE, "--cases", str(directory))
    assert code == 2 and report is not None, output
    assert [p for p in report["problems"] if "a symlink" in p] and not [
        p for p in report["problems"] if "together" in p], report["problems"]
    (directory / "c.json").unlink()  # under the total: each file is read, and refused as not JSON
    code, report, output = conform(tmp_path, REFERENCE, "--cases", str(directory))
    assert code == 2 and report is not None and len(report["problems"]) == 2, output
    assert all("not readable JSON" in problem for problem in report["problems"]), report["problems"]


@pytest.mark.parametrize("name", ["zero.json", "pipe.json", "folder.json", "link-to-file.json", "huge.json"])
def test_defect_10_read_case_bytes_refuses_without_reading(tmp_path: Path, name: str) -> None:
    _special_case_files(tmp_path / "cases")
    began = time.monotonic()
    with pytest.raises(CaseFileError, match=str(tmp_path / "cases" / name)):
        read_case_bytes(tmp_path / "cases" / name)
    assert time.monotonic() - began < 5


# -- setuid and setgid bits -------------------------------------------------------------------------


def test_special_bits_only_where_a_requirement_needs_them(tmp_path: Path) -> None:
    """PROTO-FIX-3: setuid, setgid and sticky bits are refused in a case citing no requirement that
    needs them; the bundled WRITER-MEAS-5 case still lays out its setuid file, in a root that no
    other user can enter."""
    refused = refused_together(tmp_path, ["refused-setuid.json", "refused-setgid-dir.json",
                                          "refused-sticky.json"])
    assert all("WRITER-MEAS-5" in problems[0] for problems in refused.values()), refused
    code, report, output = conform(tmp_path, REFERENCE, "--machine", "writer-proofs",
                                   "--run", "writer-proofs/setuid-file")
    assert code == 0 and report is not None and report["totals"]["pass"] == 1, output
    pool = FixturePool()
    try:
        setuid = {"path": "s", "type": "file", "text": "x", "mode": "04755"}
        directory = pool.directory_for({"entries": [setuid]})
        assert stat.S_IMODE(os.stat(Path(directory, "s")).st_mode) == 0o4755
        root = Path(directory).parent
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    finally:
        pool.close()
    assert not os.path.lexists(directory)


# -- bounded cost: lay-out counts against --timeout (PROTO-FIX-3) -----------------------------------


def test_a_lay_out_longer_than_the_timeout_errors_its_case(tmp_path: Path) -> None:
    """A fixture within the bounds whose lay-out takes longer than --timeout ends its case as an
    error (fixture-timeout), not a hang, and leaves nothing behind."""
    entries = [{"path": f"d{i}/e", "type": "dir"} for i in range(2000)]
    config = {"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture": {"entries": entries}}
    case = {"id": "writer-proofs/slow-lay-out", "description": "4000 directories lay out slowly",
            "requirements": ["WRITER-SES-3"], "config": config,
            "steps": [{"event": "hold_fences", "expect": {"fences": True, "context": None}}]}
    file = tmp_path / "slow.json"
    file.write_text(json.dumps({"machine": "writer-proofs", "cases": [case]}))
    code, report, output = conform(tmp_path, REFERENCE, "--cases", str(file), "--timeout", "0.01")
    assert code == 1 and report is not None, output
    assert report["results"][0]["outcome"] == "error" and "fixture-timeout" in report["results"][0]["detail"]
    assert os.listdir(tmp_path / "tmp") == []
    code, report, output = conform(tmp_path, REFERENCE, "--cases", str(file), "--timeout", "60")
    assert code == 0, output  # the same fixture, given the time, lays out and passes


# -- shared and restored directories through a run (PROTO-FIX-4) -----------------------------------

DIRECTORY_SPY = """
import json, sys
from inboxspec.conformance.adapter import handle
log = open(sys.argv[1], "a")
for line in sys.stdin:
    request = json.loads(line)
    if request.get("cmd") == "stop":
        break
    reply = handle(request)
    if request.get("cmd") == "run":
        case = request["case"]
        log.write(json.dumps({"id": case["id"], "dir": case.get("fixture_dir"),
                              "fixture": json.dumps(case["config"].get("fixture"), sort_keys=True),
                              "swaps": any(s["event"] == "swap_paths" for s in case["steps"])}) + "\\n")
        log.flush()
    print(json.dumps(reply), flush=True)
"""


def test_identical_fixtures_share_a_checked_directory_through_a_run(tmp_path: Path) -> None:
    """PROTO-FIX-4: cases without swap_paths share the directory of an identical fixture; cases
    with it get one restored after an earlier such case or a fresh one, never a shared one; each
    directory a case gets holds exactly its fixture (every bundled case passes), and all are gone
    at the end."""
    spy, log = tmp_path / "spy.py", tmp_path / "log.jsonl"
    spy.write_text(DIRECTORY_SPY)
    code, report, output = conform(tmp_path, f"{sys.executable} {spy} {log}", "--machine", "writer-proofs",
                                   "--window", "1")
    assert code == 0 and report is not None, output
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(logged) == report["executed"] >= 140
    seen = [entry for entry in logged if entry["dir"] is not None]  # cases without a fixture get none
    assert len(seen) >= 140
    by_dir: dict[str, list[dict[str, Any]]] = {}
    for entry in seen:
        by_dir.setdefault(entry["dir"], []).append(entry)
    for users in by_dir.values():
        assert len({u["fixture"] for u in users}) == 1, "a directory served two different fixtures"
        assert len({u["swaps"] for u in users}) == 1, "a read-only case got a tree that swapping cases use"
    read_only = [e for e in seen if not e["swaps"]]
    assert len({e["dir"] for e in read_only}) == len({e["fixture"] for e in read_only}) < len(read_only)
    swapping = [e for e in seen if e["swaps"]]
    assert len({e["dir"] for e in swapping}) < len(swapping), "window 1: a restored tree serves the next"
    assert os.listdir(tmp_path / "tmp") == []

"""`inboxspec matrix`: several adapters side by side, per requirement area, and the README's copy."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import Case, load_cases, registered_case_dirs
from inboxspec.conformance.matrix import (
    BEGIN,
    END,
    KINDS,
    AdapterRun,
    area_of,
    as_markdown,
    build_matrix,
    replace_block,
)
from inboxspec.conformance.runner import ERROR, FAIL, PASS, SKIP, CaseResult, RunReport
from tests.in_process import run_command
from tests.report_schema import MATRIX, checked_report, report_problems, report_validator
from tests.spies import signalled_while_writing

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MIXED = f"{sys.executable} {Path(__file__).parent / 'adapters' / 'mixed_adapter.py'}"


def case(case_id: str, *requirements: str) -> Case:
    return Case("wake-gate", case_id, "A probe", requirements, (), {}, (), None, "probe.json")


LANE_BOTH = case("wake-gate/lane-both", "WAKE-LANE-1", "WAKE-LANE-2", "WAKE-FLOOR-3")
LANE_ONE = case("wake-gate/lane-one", "WAKE-LANE-3")
FLOOR = case("wake-gate/floor", "WAKE-FLOOR-1")
ODD = case("wake-gate/odd", "PLAIN")


def report(name: str, outcomes: list[tuple[Case, str]]) -> RunReport:
    return RunReport({"name": name, "version": "1.0"}, [CaseResult(c, o) for c, o in outcomes], 0, 0.1)


def test_the_area_is_the_id_up_to_its_last_dash_number() -> None:
    assert [area_of(r) for r in ("WAKE-LANE-3", "PEER-NOTE-12", "A-B-C-1", "PLAIN", "X-1a")] == [
        "WAKE-LANE", "PEER-NOTE", "A-B-C", "PLAIN", "X-1a"]


def test_cells_count_each_case_once_per_area_and_failing_requirements_name_their_adapters() -> None:
    runs = [
        AdapterRun("ref", "", report("ref", [(c, PASS) for c in (LANE_BOTH, LANE_ONE, FLOOR, ODD)])),
        AdapterRun("port", "", report("port", [(LANE_BOTH, FAIL), (LANE_ONE, ERROR), (FLOOR, SKIP),
                                               (ODD, PASS)])),
    ]
    matrix = build_matrix(runs)
    assert matrix.labels == ["ref 1.0", "port 1.0"]
    lane, floor = ("wake-gate", "WAKE-LANE"), ("wake-gate", "WAKE-FLOOR")
    assert matrix.cases == {lane: 2, floor: 2, ("wake-gate", "PLAIN"): 1}
    assert matrix.cells[lane] == {"ref 1.0": Counter({"pass": 2}),
                                  "port 1.0": Counter({"fail": 1, "error": 1})}
    assert matrix.cells[floor]["port 1.0"] == Counter({"fail": 1, "skip": 1})
    assert matrix.failing == {
        "WAKE-FLOOR-3": {"port 1.0": ["wake-gate/lane-both"]},
        "WAKE-LANE-1": {"port 1.0": ["wake-gate/lane-both"]},
        "WAKE-LANE-2": {"port 1.0": ["wake-gate/lane-both"]},
        "WAKE-LANE-3": {"port 1.0": ["wake-gate/lane-one"]},
    }
    assert matrix.exit_code == 1
    body = checked_report(json.loads(json.dumps(matrix.as_json())), MATRIX)
    assert body["machines"]["wake-gate"]["WAKE-LANE"] == {
        "cases": 2, "adapters": {"ref 1.0": {"fail": 0, "error": 0, "skip": 0, "pass": 2},
                                 "port 1.0": {"fail": 1, "error": 1, "skip": 0, "pass": 0}}}
    markdown = as_markdown(matrix)
    assert "| `wake-gate` | WAKE-LANE | 2 | ✅ 2 pass | ❌ 1 fail, 1 error |" in markdown
    assert "| `wake-gate` | ✅ 4 pass | ❌ 1 fail, 1 error, 1 skip, 1 pass |" in markdown
    assert "| WAKE-LANE-3 | port 1.0 (1 case) |" in markdown


def test_columns_are_told_apart_and_an_adapter_that_cannot_start_has_its_own() -> None:
    runs = [AdapterRun("a", "", report("same", [(FLOOR, PASS)])),
            AdapterRun("b", "", report("same", [(FLOOR, PASS)])),
            AdapterRun("c", "", unusable="the adapter did not start (no such file)")]
    matrix = build_matrix(runs)
    assert matrix.labels == ["same 1.0", "same 1.0 (2)", "adapter 3"]
    assert matrix.exit_code == 2
    markdown = as_markdown(matrix)
    assert "| `wake-gate` | ✅ 1 pass | ✅ 1 pass | unusable |" in markdown
    assert "adapter 3 could not run: the adapter did not start (no such file)" in markdown


def _warned_and_unusable() -> dict[str, Any]:
    """The JSON of a matrix of an adapter whose run was warned of and one that could not run."""
    warned = report("warned", [(FLOOR, PASS), (LANE_ONE, FAIL)])
    warned.warnings = ["the adapter exited with status 3 after stop (PROTO-STOP-1)"]
    unusable = AdapterRun("b", "", unusable="the adapter did not start (no such file)")
    matrix = build_matrix([AdapterRun("a", "", warned), unusable])
    body: dict[str, Any] = json.loads(json.dumps(matrix.as_json()))
    return body


def test_the_json_keeps_to_its_schema_with_every_kind_and_each_adapters_warnings() -> None:
    """matrix-report.schema.json: every adapter's totals name every kind (a kind no case had is 0), and
    its run's warnings are there (null for an adapter that could not run), as in the Markdown."""
    body = checked_report(_warned_and_unusable(), MATRIX)
    warned, unusable = body["adapters"]
    assert warned["totals"] == {"fail": 1, "error": 0, "skip": 0, "pass": 1}
    assert warned["warnings"] == ["the adapter exited with status 3 after stop (PROTO-STOP-1)"]
    assert unusable["totals"] is None and unusable["warnings"] is None and unusable["exit_code"] == 2
    schema = report_validator(MATRIX).schema
    assert isinstance(schema, dict) and schema["$defs"]["kinds"]["required"] == list(KINDS)
    listed = report("warned", [(FLOOR, PASS)])
    listed.warnings = ["the adapter lists machine 'x|y'"]
    runs = [AdapterRun("a", "", listed)]
    assert "warned 1.0, warning: the adapter lists machine 'x\\|y'" in as_markdown(build_matrix(runs))


def _first_adapter(body: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**body, "adapters": [{**body["adapters"][0], **changes}, *body["adapters"][1:]]}


@pytest.mark.parametrize("breaks", [
    lambda b: {**b, "table": []},  # a key no reader knows
    lambda b: _first_adapter(b, totals={"fail": 1, "pass": 1}),
    lambda b: _first_adapter(b, warnings=None),
    lambda b: _first_adapter(b, exit_code=3),
    lambda b: _first_adapter(b, unusable="no start"),  # with counts and an implementation
    lambda b: {**b, "failing_requirements": {"WAKE-LANE-3": {"warned 1.0": []}}},
    lambda b: {**b, "machines": {"wake-gate": {"WAKE-LANE": {"cases": -1, "adapters": {}}}}},
], ids=["unknown-key", "totals-without-every-kind", "ran-without-warnings", "exit-code-3",
        "unusable-with-counts", "failing-without-cases", "negative-count"])
def test_the_matrix_schema_refuses_what_a_matrix_must_not_be(breaks: Any) -> None:
    assert report_problems(breaks(_warned_and_unusable()), MATRIX)


def test_an_adapter_cannot_take_another_columns_label() -> None:
    """A third adapter named "same" with version "1.0 (2)" took the second column's label, and the
    two columns' cells and failing requirements, keyed by label, merged: the honest port showed the
    hostile one's failures."""
    runs = [AdapterRun("a", "", report("same", [(FLOOR, PASS)])),
            AdapterRun("b", "", report("same", [(FLOOR, PASS)])),
            AdapterRun("c", "", RunReport({"name": "same", "version": "1.0 (2)"}, [CaseResult(FLOOR, FAIL)],
                                          0, 0.1))]
    matrix = build_matrix(runs)
    assert matrix.labels == ["same 1.0", "same 1.0 (2)", "same 1.0 (2) (2)"]
    assert matrix.failing == {"WAKE-FLOOR-1": {"same 1.0 (2) (2)": ["wake-gate/floor"]}}
    assert "| `wake-gate` | ✅ 1 pass | ✅ 1 pass | ❌ 1 fail |" in as_markdown(matrix)


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_an_adapters_name_cannot_break_the_table_or_inject_markup() -> None:
    hostile = ("evil | cell <img src=x onerror=alert(1)> [link](http://x) *bold*\n| new row"
               " https://evil.example/login @octo-org/security")
    matrix = build_matrix([AdapterRun("a", "", report(hostile, [(FLOOR, FAIL)]))])
    markdown = as_markdown(matrix)
    tables = [line for line in markdown.splitlines() if line.startswith("|")]
    header_pipes = unescaped_pipes(tables[0])
    assert all(unescaped_pipes(line) == header_pipes for line in tables[:2])
    assert "<img" not in markdown and "[link](" not in markdown and "\n| new row" not in markdown
    # No bare address for an autolink, no @team for a mention.
    assert "https://" not in markdown and "https\\://evil.example" in markdown
    assert not re.search(r"(?<!\\)@", markdown)
    assert all(line.count("\n") == 0 for line in tables)


def test_replace_block_needs_exactly_one_pair_of_markers() -> None:
    assert replace_block(f"a\n{BEGIN}\nold\n{END}\nb", "new\n") == f"a\n{BEGIN}\n\nnew\n\n{END}\nb"
    for broken in ("no markers", f"{END}\n{BEGIN}", f"{BEGIN}\n{BEGIN}\n{END}"):
        with pytest.raises(ValueError, match="exactly one"):
            replace_block(broken, "new")


def readme_command() -> list[str]:
    """The command the README gives for its matrix (one definition: the test reads it)."""
    text = README.read_text(encoding="utf-8")
    before = text[: text.index(BEGIN)]
    (line,) = [line for line in before.splitlines() if line.startswith("inboxspec matrix ")][-1:]
    return shlex.split(line)


def _written_json(path: Path) -> Any:
    """The matrix's JSON file, once it keeps to matrix-report.schema.json."""
    return checked_report(json.loads(path.read_text(encoding="utf-8")), MATRIX)


def run_matrix(argv: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    # The README's command names `python` and `inboxspec`: this interpreter's, first on PATH.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([*argv, *extra], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=env)


@pytest.mark.slow
def test_the_readme_matrix_is_what_its_command_generates(tmp_path: Path) -> None:
    """Also the test that the reference and the Node port, as they are in the tree, each pass every
    bundled case: the README's command runs both over all of them (the packed port's own run is
    tests/test_node_port_package.py's)."""
    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("node is required in CI: the example port must run")
        pytest.skip("node is not installed")
    argv = readme_command()
    assert argv.count("--adapter") == 2 and argv[-2:] == ["--into", "README.md"]
    readme = README.read_text(encoding="utf-8")
    checked = run_matrix(argv, "--check", "--json", str(tmp_path / "m.json"),
                         "--markdown", str(tmp_path / "m.md"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    markdown = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert markdown == checked.stdout and replace_block(readme, markdown) == readme
    body = _written_json(tmp_path / "m.json")
    assert [a["implementation"]["language"].split()[0] for a in body["adapters"]] == ["python", "javascript"]
    every_case = len(load_cases(registered_case_dirs()))
    assert every_case > 1000
    for adapter in body["adapters"]:
        assert adapter["exit_code"] == 0 and adapter["warnings"] == [], adapter
        assert adapter["totals"] == {"pass": every_case, "fail": 0, "error": 0, "skip": 0}, adapter

    # --into rewrites the block, and --check finds one changed character and writes nothing: on
    # a copy, with the wake gate's cases alone (the block is the wake gate's matrix).
    copy = tmp_path / "README.md"
    copy.write_text(readme, encoding="utf-8")
    narrowed = [*argv[:-1], str(copy), "--machine", "wake-gate"]
    rewritten = run_matrix(narrowed)
    assert rewritten.returncode == 0, rewritten.stderr
    current = copy.read_text(encoding="utf-8")
    assert current == replace_block(readme, rewritten.stdout) != readme
    begin = current.index(BEGIN)
    stale = current[:begin] + current[begin:].replace("✅", "❌", 1)
    copy.write_text(stale, encoding="utf-8")
    drifted = run_matrix(narrowed, "--check")
    assert drifted.returncode == 1 and "stale" in drifted.stderr
    assert copy.read_text(encoding="utf-8") == stale


@pytest.mark.slow
def test_a_failing_and_an_unstartable_adapter_each_get_their_column(tmp_path: Path) -> None:
    result = run_matrix([sys.executable, "-m", "inboxspec", "matrix", "--machine", "wake-gate",
                         "--adapter", MIXED, "--adapter", f"{MIXED} fail=wake-gate/defaults",
                         "--adapter", str(tmp_path / "missing"), "--json", str(tmp_path / "m.json")])
    assert result.returncode == 2, result.stderr
    body = _written_json(tmp_path / "m.json")
    labels = [a["label"] for a in body["adapters"]]
    assert labels[2] == "adapter 3" and body["adapters"][2]["unusable"]
    assert labels[1] == labels[0] + " (2)"
    from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases

    (defaults,) = [c for c in load_cases([bundled_cases_dir() / "wake-gate"]) if c.id == "wake-gate/defaults"]
    assert set(body["failing_requirements"]) == set(defaults.requirements)
    assert all(list(by) == [labels[1]] for by in body["failing_requirements"].values())
    assert "unusable" in result.stdout and "Traceback" not in result.stderr


@pytest.mark.slow
def test_an_adapter_that_does_not_start_again_after_a_fault_gets_an_unusable_column(tmp_path: Path) -> None:
    """PROTO-RUN-6 in the matrix: the run a failed restart ended is unusable, as one that never started."""
    faulty = Path(__file__).parent / "adapters" / "faulty_adapter.py"
    broken = f"{sys.executable} {faulty} no-restart announce-on-fresh-gate {tmp_path / 'once'}"
    result = run_matrix([sys.executable, "-m", "inboxspec", "matrix", "--machine", "wake-gate",
                         "--adapter", MIXED, "--adapter", broken, "--json", str(tmp_path / "m.json")])
    assert result.returncode == 2, result.stderr
    body = _written_json(tmp_path / "m.json")
    assert not body["adapters"][0]["unusable"]
    assert "restart failed" in body["adapters"][1]["unusable"]
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_an_adapter_named_with_a_lone_surrogate_still_gets_its_json_file(tmp_path: Path) -> None:
    """PROTO-VAL-4: any text an adapter sent is written without failing; the JSON file is ASCII,
    with the surrogate escaped as JSON escapes it (as UTF-8 it could not be written at all)."""
    result = run_matrix([sys.executable, "-m", "inboxspec", "matrix", "--machine", "wake-gate",
                         "--adapter", f"{MIXED} 'name=evil\\ud800'", "--json", str(tmp_path / "m.json"),
                         "--markdown", str(tmp_path / "m.md")])
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.json").read_bytes().isascii()
    assert _written_json(tmp_path / "m.json")["adapters"][0]["implementation"]["name"] == "evil\ud800"
    assert "evil" in (tmp_path / "m.md").read_text(encoding="utf-8")


def _into(tmp_path: Path) -> Path:
    target = tmp_path / "target.md"
    target.write_text(f"kept above\n{BEGIN}\nold\n{END}\nkept below\n", encoding="utf-8")
    return target


@pytest.mark.slow
def test_into_keeps_the_files_permissions_and_replaces_a_link_not_its_target(tmp_path: Path) -> None:
    target = _into(tmp_path)
    target.chmod(0o600)
    link = tmp_path / "link.md"
    link.symlink_to(target)
    argv = [sys.executable, "-m", "inboxspec", "matrix", "--machine", "wake-gate", "--adapter", MIXED]
    assert run_matrix([*argv, "--into", str(target)]).returncode == 0
    assert target.stat().st_mode & 0o7777 == 0o600 and "old" not in target.read_text(encoding="utf-8")
    stale = _into(tmp_path).read_bytes()  # the target's block stale again
    assert run_matrix([*argv, "--into", str(link)]).returncode == 0
    assert not link.is_symlink() and link.stat().st_mode & 0o7777 == 0o600  # a link is not written through
    assert target.read_bytes() == stale and b"old" not in link.read_bytes()


@pytest.mark.parametrize("kind", ["fifo", "directory", "missing"])
def test_into_that_is_no_regular_file_is_refused_before_any_adapter_runs(kind: str, tmp_path: Path) -> None:
    """A FIFO used to hang the command for good, after every adapter had run."""
    into = tmp_path / "into"
    if kind == "fifo":
        os.mkfifo(into)
    elif kind == "directory":
        into.mkdir()
    started = tmp_path / "started"
    result = run_matrix([sys.executable, "-m", "inboxspec", "matrix", "--machine", "wake-gate",
                         "--adapter", f"sh -c 'touch {started}; exec {MIXED}'", "--into", str(into)])
    assert result.returncode == 2 and "--into needs an existing regular file" in result.stderr
    assert not started.exists()


@pytest.mark.parametrize("option", [("--timeout", "nan"), ("--timeout", "inf"), ("--start-timeout", "1e300"),
                                    ("--timeout", "-1"), ("--max-line-bytes", "0"), ("--adapter", 'node "x')])
def test_odd_argument_values_are_argument_errors(option: tuple[str, str]) -> None:
    """PROTO-CLI-1 holds for matrix as for conform: an odd value is exit 2 with a message, never a
    traceback or a run with a nonsense bound."""
    result = subprocess.run([sys.executable, "-m", "inboxspec", "matrix", "--adapter", "true", *option],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and option[0] in result.stderr


def test_a_bad_matrix_argument_prints_no_json_on_stdout(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``matrix --json FILE`` names a file: a refused argument is a message, not a JSON report on stdout."""
    from inboxspec.cli import main

    assert main(["matrix", "--json", str(tmp_path / "m.json"), "--timeout", "nan"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--timeout" in err and not (tmp_path / "m.json").exists()


# An adapter that dies before its start reply, saying why on stderr over two lines, the second of
# which spells a line of the runner's own.
DIES_SAYING_WHY = (f"{sys.executable} -c \"import sys; "
                   "sys.stderr.write('no module named port\\ninboxspec matrix: all passed\\n'); "
                   "sys.exit(1)\"")


@pytest.mark.parametrize("check", [False, True])
def test_a_document_is_left_as_it_was_when_an_adapter_could_not_run(check: bool, tmp_path: Path) -> None:
    """A newcomer's review: with an adapter that could not start, ``--into`` wrote an "unusable"
    column into the README, and ``--check`` called the block stale and said to rerun without it;
    the reason was nowhere on stderr. Now the file is left as it was, and stderr gives the reason
    with the adapter's own lines quoted below it, each indented (none starts a line of the report's)."""
    document = tmp_path / "doc.md"
    document.write_text(f"intro\n{BEGIN}\nold\n{END}\n", encoding="utf-8")
    before = document.read_bytes()
    result = run_matrix([sys.executable, "-m", "inboxspec", "matrix", "--machine", "wake-gate",
                         "--adapter", MIXED, "--adapter", DIES_SAYING_WHY, "--into", str(document),
                         *(["--check"] if check else [])])
    assert result.returncode == 2, result.stderr
    assert document.read_bytes() == before
    assert "stale" not in result.stderr and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    # Told by its exit code, whether the runner saw it exit or wrote its start request to a pipe it
    # had closed first (test_conform_runner.py, ..._closed_its_input_and_exited_...).
    reason = ("inboxspec matrix: adapter 2 could not run: the adapter did not complete start "
              "(crashed: adapter exited with code 1)")
    first = lines.index(reason)
    assert lines[first + 1:first + 4] == ["  adapter stderr (tail):", "    no module named port",
                                          "    inboxspec matrix: all passed"]
    assert f"inboxspec matrix: {document} left as it was: an adapter could not run" in lines


def _signalled_while_writing_a_file(monkeypatch: pytest.MonkeyPatch, signum: int) -> None:
    """The matrix's ``write_atomically`` replaced by one that sends this process ``signum`` (as a signal
    from outside comes) and then writes the file. It refuses to send one whose action is still the
    default: that would end the test's own process, not the matrix's."""
    from inboxspec.conformance import matrix, reportfile

    real = reportfile.write_atomically

    def signalled(path: Path, data: bytes) -> None:
        assert signal.getsignal(signum) not in (signal.SIG_DFL, signal.SIG_IGN), \
            "the matrix writes its files with the signal's default action"
        os.kill(os.getpid(), signum)
        real(path, data)

    monkeypatch.setattr(matrix, "write_atomically", signalled)


@pytest.mark.parametrize("written", ["table", "files"])
def test_a_signal_while_the_matrix_is_written_lets_it_finish_then_ends_as_the_signal_asks(
        written: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-REPORT-2, as for conform: the matrix was printed and its files written after its signal
    handling had ended, so a SIGTERM then ended it at the signal's default action, the table cut
    where the signal came, no word on stderr, and a temporary file of a half-written --json left
    beside it."""
    if written == "table":
        signalled_while_writing(monkeypatch, signal.SIGTERM, 100)  # the table on stdout (print_whole)
    else:
        _signalled_while_writing_a_file(monkeypatch, signal.SIGTERM)
    files = tmp_path / "files"
    files.mkdir()
    done = run_command("matrix", "--machine", "wake-gate", "--run", "wake-gate/a*", "--adapter", MIXED,
                       "--markdown", str(files / "m.md"), "--json", str(files / "m.json"))
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr.endswith("inboxspec matrix: interrupted by SIGTERM while the report was written\n")
    # Whole, as of the moment the runs ended: the table printed is the one written, and every file is.
    assert done.stdout == (files / "m.md").read_text(encoding="utf-8") and "wake-gate" in done.stdout
    report = checked_report(_written_json(files / "m.json"), MATRIX)
    assert [adapter["totals"]["pass"] for adapter in report["adapters"]] == [2]
    assert sorted(path.name for path in files.iterdir()) == ["m.json", "m.md"]


def test_a_table_its_reader_did_not_take_leaves_the_files_written(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """PROTO-REPORT-2 with a reader of stdout that takes nothing: the table is cut after the signal's
    grace. The files were written after the table, so none was (found by the review of that change);
    they are written first now, whole."""
    from inboxspec.conformance import reportfile

    real = reportfile.write_whole

    def stalled(stream: Any, text: str) -> None:
        if stream is not sys.stdout:
            real(stream, text)
            return
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
        os.kill(os.getpid(), signal.SIGTERM)
        raise reportfile.ReportCut(0)  # as the grace ends a write that its reader never took

    monkeypatch.setattr(reportfile, "write_whole", stalled)
    done = run_command("matrix", "--machine", "wake-gate", "--run", "wake-gate/a*", "--adapter", MIXED,
                       "--markdown", str(tmp_path / "m.md"), "--json", str(tmp_path / "m.json"))
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert "interrupted by SIGTERM while the report was written: the report is cut after 0 bytes" \
        in done.stderr
    assert "wake-gate" in (tmp_path / "m.md").read_text(encoding="utf-8")
    written = checked_report(_written_json(tmp_path / "m.json"), MATRIX)
    assert [adapter["totals"]["pass"] for adapter in written["adapters"]] == [2]

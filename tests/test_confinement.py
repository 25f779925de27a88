"""PROTO-FIX-5: a case from outside the bundled suite that may lead a port to read outside its fixture
is refused, unless the run allows reads outside (``conformance/confinement.py``).

Each rule is shown refusing what it must and passing what stays inside, at the JSON path it names;
``conform``, ``matrix`` and ``cases expect`` refuse such a file before any adapter starts or any
case runs, and run it with ``--allow-outside-reads``; the bundled cases, some of which read outside
on purpose, run without it; and the fuzzer's cases, which ``--fuzz`` sends without the check, stay
inside.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.conformance import confinement
from inboxspec.conformance.casefiles import Case, bundled_cases_dir, load_cases
from inboxspec.impl import writer_fs
from inboxspec.machines import fixtures, interface
from tests.in_process import run_command
from tests.spies import calls_of

REFERENCE = f"{sys.executable} -m inboxspec.conformance.adapter"
F = "{fixture}"


def problems_of(config: dict[str, Any], steps: list[dict[str, Any]] | None = None) -> list[str]:
    """The confinement problems of one writer-proofs case with this config and these steps."""
    case = {"machine": "writer-proofs", "cases": [{
        "id": "writer-proofs/probe", "description": "A probe", "requirements": ["WRITER-IF-1"],
        "config": config, "steps": steps or []}]}
    return confinement.problems(_cases(case))


def _cases(data: dict[str, Any]) -> list[Case]:
    raw = data["cases"][0]
    return [Case(machine=data["machine"], id=raw["id"], description=raw["description"],
                 requirements=tuple(raw["requirements"]), features=(), config=raw["config"],
                 steps=tuple(raw["steps"]), expect_config_error=None, source="probe.json")]


def places(found: list[str]) -> list[str]:
    """The JSON path each problem names."""
    return [problem.split(" outside reads: at ")[1].split(": ")[0] for problem in found]


CONFINED = {"home": f"{F}/home", "own_root": f"{F}/cli"}


@pytest.mark.parametrize("path, inside", [
    (F, True), (f"{F}/home", True), (f"{F}/a/b/", True), (f"{F}/./a", True),
    (f"{F}/a/../b", False), (f"{F}/..", False), (f"{F}x/home", False), (f"x{F}/home", False),
    ("/etc", False), ("home", False), ("", False), ("./cli", False), ("/dev/null/home", False),
])
def test_a_named_path_is_inside_only_below_the_fixture_without_dotdot(path: str, inside: bool) -> None:
    found = problems_of({**CONFINED, "home": path})
    assert places(found) == ([] if inside else ["$.cases[0].config.home"])
    found = problems_of({**CONFINED, "own_root": path})
    assert places(found) == ([] if inside else ["$.cases[0].config.own_root"])


def test_every_path_of_a_read_argument_is_checked_and_no_other_argument() -> None:
    steps: list[dict[str, Any]] = [{"event": "initial", "args": {"roots": [f"{F}/cli", "/usr/lib"]}},
             {"event": "preview", "args": {"requested": ["/root"]}},
             {"event": "preview"},
             {"event": "swap_paths", "args": {"first": "/etc", "second": "b"}},  # not read: WRITER-IF-6
             {"event": "initial", "args": {"roots": [f"{F}/cli"]}}]
    assert places(problems_of(CONFINED, steps)) == [
        "$.cases[0].steps[0].args.roots", "$.cases[0].steps[1].args.requested"]


@pytest.mark.parametrize("target, inside", [
    (f"{F}/cli", True), (F, True), ("cli/src", True), ("index.ts", True),
    ("/etc/passwd", False), (f"{F}/../x", False), ("../elsewhere/formats.json", False),
    ("a/../b", False), (f"{F}x", False),
])
def test_a_symlink_leads_inside_only_below_the_fixture_or_relative_without_dotdot(
        target: str, inside: bool) -> None:
    fixture = {"entries": [{"path": "cli", "type": "dir"},
                           {"path": "link", "type": "symlink", "target": target}]}
    found = problems_of({**CONFINED, "fixture": fixture})
    assert places(found) == ([] if inside else ["$.cases[0].config.fixture.entries[1].target"])


@pytest.mark.parametrize("text, inside", [
    ('{"writerRoots": ["{fixture}/cli"]}', True),
    ('{"writerRoots": ["relative/root"], "version": "1.2.3"}', True),
    ("#!/usr/bin/env node\n", True),  # no JSON string names it
    ('{"writerRoots": ["/usr/lib/node_modules/x"]}', False),
    ('{"writerRoots": ["\\/etc"]}', False),  # an escaped slash is a slash
    ('{"roots": ["{fixture}/../x"]}', False),
    ('{"/root": 1}', False),  # a key is checked too: the rule does not parse
    ('{"writerRoots": ["/etc\\q"]}', False),  # a bad escape: its raw text
    # Laid out, '\{fixture}' is '\/' and the directory's path: the reader's string is absolute.
    ('{"writerRoots": ["\\{fixture}/../../../../etc"]}', False),
    ('{"writerRoots": ["\\\\{fixture}/x"]}', False),  # an escaped backslash: refused all the same
])
def test_a_file_names_only_paths_inside_in_its_json_strings(text: str, inside: bool) -> None:
    for content in ({"text": text}, {"base64": base64.b64encode(text.encode()).decode()}):
        fixture = {"entries": [{"path": "home/setup-receipt.json", "type": "file", **content}]}
        found = problems_of({**CONFINED, "fixture": fixture})
        assert places(found) == ([] if inside else ["$.cases[0].config.fixture.entries[0]"]), content


def test_only_parameters_marked_as_read_are_checked() -> None:
    """The marks come from the interface data: writer proofs mark its four path parameters, and a
    machine that marks none has no problems, whatever its strings."""
    data = interface.load("writer-proofs")
    marked = [key.name for key in data.config_keys if key.reads_paths]
    marked += [argument.name for event in data.events.values() for argument in event.arguments
               if argument.reads_paths]
    assert marked == ["home", "own_root", "requested", "roots"]
    for name in machines.names():
        entry = machines.get(name).interface
        if name != "writer-proofs" and entry is not None:
            assert not any(key.reads_paths for key in entry.config_keys), name


def test_a_parameter_that_reads_paths_must_hold_paths() -> None:
    raw = json.loads(interface.interface_text("writer-proofs"))
    raw["config"]["keys"][2]["reads_paths"] = True  # options: an object
    with pytest.raises(interface.InterfaceError, match="options reads paths, so its type must be"):
        interface.parse(raw)


def foreign_copy(tmp_path: Path, name: str = "mutants.json", *, exact: bool = False) -> Path:
    """A bundled writer-proofs file copied outside the bundled suite: some of its cases read outside
    on purpose (``/dev/null/home``, a relative own_root). Unless ``exact``, one of them, no-fixture,
    has its home moved to ``/dev/null/elsewhere``: it then sends what no bundled case sends, and is
    checked (the others, sending what bundled cases send, are the project's own)."""
    copied = tmp_path / "cases" / name
    copied.parent.mkdir()
    text = (bundled_cases_dir() / "writer-proofs" / name).read_text()
    if not exact:
        assert text.count('"/dev/null/home"') == 1
        text = text.replace('"/dev/null/home"', '"/dev/null/elsewhere"')
    copied.write_text(text)
    return copied


def test_conform_refuses_a_foreign_file_that_reads_outside_before_the_adapter_starts(tmp_path: Path) -> None:
    copied = foreign_copy(tmp_path)
    marker = tmp_path / "started"
    spy = f"{sys.executable} -c \"import pathlib; pathlib.Path({str(marker)!r}).touch()\""
    run = run_command("conform", "--json", "--adapter", spy, "--cases", str(copied))
    assert run.returncode == 2 and "Traceback" not in run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["ok"] is False and report["problems"]
    assert all(" outside reads: at $.cases[" in problem and confinement.ALLOW_OPTION in problem
               for problem in report["problems"])
    assert f"{copied}: writer-proofs/no-fixture: outside reads: at $.cases[23].config.home: " \
           "home names '/dev/null/elsewhere'" in run.stdout
    assert {problem.split(": ")[1] for problem in report["problems"]} == {"writer-proofs/no-fixture"}
    assert not marker.exists(), "the adapter started"
    run = run_command("conform", "--json", "--adapter", REFERENCE, "--cases", str(copied),
                      confinement.ALLOW_OPTION)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["totals"]["pass"] == len(json.loads(copied.read_text())["cases"])


def test_the_bundled_cases_run_without_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some bundled cases read outside on purpose; they are the project's own, and run as ever, and
    so does an exact copy of their file outside the bundled suite (what it sends is theirs)."""
    bundled = load_cases([bundled_cases_dir() / "writer-proofs"])
    assert confinement.problems(bundled) == []
    with monkeypatch.context() as patched:  # as any other case: some read outside
        patched.setattr(confinement, "_bundled_sends", lambda machine: frozenset())
        assert confinement.problems(bundled), "no bundled case reads outside: the exemption is untested"
    run = run_command("conform", "--json", "--adapter", REFERENCE, "--machine", "writer-proofs",
                      "--run", "writer-proofs/no-fixture")
    assert run.returncode == 0 and json.loads(run.stdout)["totals"]["pass"] == 1, run.stdout + run.stderr
    copied = foreign_copy(tmp_path, exact=True)
    run = run_command("conform", "--json", "--adapter", REFERENCE, "--cases", str(copied))
    assert run.returncode == 0, run.stdout + run.stderr


def test_matrix_refuses_it_too(tmp_path: Path) -> None:
    copied = foreign_copy(tmp_path)
    run = run_command("matrix", "--adapter", REFERENCE, "--cases", str(copied))
    assert run.returncode == 2 and "outside reads: at $.cases[23].config.home" in run.stderr, run.stderr
    run = run_command("matrix", "--adapter", REFERENCE, "--cases", str(copied), confinement.ALLOW_OPTION)
    assert run.returncode == 0, run.stdout + run.stderr


def test_cases_expect_refuses_it_and_writes_nothing(tmp_path: Path) -> None:
    copied = foreign_copy(tmp_path)
    data = json.loads(copied.read_text())
    for case in data["cases"]:
        for step in case["steps"]:
            step["expect"] = {}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    copied.write_text(text)
    run = run_command("cases", "expect", str(copied))
    assert run.returncode == 2 and "may lead the reference to read outside its fixtures (PROTO-FIX-5)" \
        in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert copied.read_text() == text
    run = run_command("cases", "expect", str(copied), confinement.ALLOW_OPTION)
    assert run.returncode == 0, run.stdout + run.stderr
    assert copied.read_text() != text


def test_fuzz_takes_no_such_option_and_its_cases_stay_inside() -> None:
    run = run_command("conform", "--adapter", REFERENCE, "--fuzz", "1", "--machine", "writer-proofs",
                      confinement.ALLOW_OPTION)
    assert run.returncode == 2 and f"it does not take {confinement.ALLOW_OPTION}" in run.stderr, run.stderr
    rng = random.Random(5)
    fuzz = machines.get("writer-proofs").fuzz
    for _ in range(200):
        config, steps = fuzz(rng)
        assert problems_of(copy.deepcopy(config), steps) == [], (config, steps)


def test_a_backslash_before_the_placeholder_is_refused_and_would_lead_outside() -> None:
    """Laid out, a file's '\\{fixture}/..' becomes '\\/<directory>/..': a JSON reader takes an absolute
    path with '..' where the check, before the lay-out, saw a relative one with a bad escape. The
    reference's receipt reader shows it reaching /tmp."""
    text = '{"writerRoots": ["\\{fixture}/../../../../../../../../../../tmp"]}'
    fixture = {"entries": [{"path": "home/setup-receipt.json", "type": "file", "text": text}]}
    assert places(problems_of({**CONFINED, "fixture": fixture})) == ["$.cases[0].config.fixture.entries[0]"]
    with fixtures.materialised(fixture) as directory:
        assert writer_fs.read_setup_writer_roots(f"{directory}/home") == ["/tmp"]


class CountedPattern:
    """A compiled pattern that counts the matches tried with ``match``."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.tried = pattern, 0

    def match(self, text: str, position: int) -> re.Match[str] | None:
        self.tried += 1
        return self.pattern.match(text, position)


def test_the_literal_scan_tries_each_literal_once_and_stops_at_one_never_closed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's literals are found left to right as a JSON reader finds them: one match tried per
    literal, and none after a literal that never closes. Trying again from every later '"' took
    quadratic time on '"' followed by many '\\"' (an 8 MiB fixture file held the run for days)."""
    counted = CountedPattern(writer_fs._JSON_STRING)
    monkeypatch.setattr(writer_fs, "_JSON_STRING", counted)
    assert list(confinement._literals('{"a": ["/x", "y\\"z"]}')) == ["a", "/x", 'y"z']
    assert counted.tried == 3
    counted.tried = 0
    assert list(confinement._literals('["/x", "' + '\\"' * 1000)) == ["/x"]
    assert counted.tried == 2


def test_a_shared_fixture_is_scanned_once_for_every_case_that_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's shared fixture is one object for all the cases that name it, and its literals are
    scanned once: scanned again for each case, 40 cases naming one fixture of 1 MiB of literals took
    31 s before any adapter started. Every case that names it is still refused."""
    scanned = calls_of(monkeypatch, confinement, "_fixture_reads")
    outside = {"entries": [{"path": "cli/data.json", "type": "file", "text": '{"p": "/etc/passwd"}'}]}
    inside = {"entries": [{"path": "cli/data.json", "type": "file", "text": '{"p": "x"}'}]}
    cases: list[dict[str, Any]] = [
        {"id": f"writer-proofs/probe-{n}", "description": f"A probe, {n}", "requirements": ["WRITER-IF-1"],
         "config": {**CONFINED, "fixture": {"$fixture": "outside" if n % 2 else "inside"}},
         "steps": [{"event": "attest", "expect": {}}]}
        for n in range(6)]
    path = tmp_path / "shared.json"
    shared = {"outside": outside, "inside": inside}
    data = {"machine": "writer-proofs", "fixtures": shared, "cases": cases}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    found = confinement.problems(load_cases([path]))
    assert places(found) == [f"$.cases[{n}].config.fixture.entries[0]" for n in (1, 3, 5)]
    assert len(scanned) == 2


def test_the_first_thousand_outside_reads_are_listed() -> None:
    """A case can name a path per few bytes; listed all, 16 MiB of them would be millions of lines. The
    check lists the first MAX_LISTED_PROBLEMS, then a line saying more were left out, whether the
    paths are in one argument or in many steps."""
    from inboxspec.conformance.interface_lint import MAX_LISTED_PROBLEMS

    many = [f"/x{n}" for n in range(MAX_LISTED_PROBLEMS + 300)]
    marker = f"more problems, not listed: the first {MAX_LISTED_PROBLEMS:,} are above"
    in_one = problems_of(CONFINED, [{"event": "initial", "args": {"roots": many}}])
    in_steps = problems_of(CONFINED, [{"event": "initial", "args": {"roots": [path]}} for path in many])
    for found in (in_one, in_steps):
        assert len(found) == MAX_LISTED_PROBLEMS + 1
        assert found[-1] == marker
        assert all("outside reads" in line for line in found[:-1])
    assert places(in_steps[:2]) == ["$.cases[0].steps[0].args.roots", "$.cases[0].steps[1].args.roots"]

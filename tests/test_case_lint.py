"""The case linter: the bundled suite is clean, and each kind of bad file is caught."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance import casefiles
from inboxspec.conformance.casefiles import (
    CaseFileError,
    bundled_cases_dir,
    lint,
    read_case_file,
    share_fixtures,
)
from inboxspec.machines.fixtures import remove as remove_fixture_directory
from tests.in_process import run_command

GOOD_CASE: dict[str, Any] = {
    "id": "wake-gate/lint-probe",
    "description": "A probe case announces on a fresh gate",
    "requirements": ["WAKE-ANN-2"],
    "config": {},
    "steps": [{"event": "announce_refusal", "expect": {"announce": True, "streak": 0}}],
}


def write(tmp_path: Path, *cases: dict[str, Any], machine: str = "wake-gate") -> Path:
    (tmp_path / "probe.json").write_text(json.dumps({"machine": machine, "cases": list(cases)}))
    return tmp_path


def test_bundled_cases_are_clean_and_cover_every_requirement() -> None:
    report = lint([bundled_cases_dir()])
    assert report.ok, "\n".join(report.problems)
    covered, total = report.coverage["wake-gate"]
    assert covered == total and total > 30


def problems_for(tmp_path: Path, *cases: dict[str, Any], machine: str = "wake-gate") -> str:
    return "\n".join(lint([write(tmp_path, *cases, machine=machine)]).problems)


def mutated(**changes: Any) -> dict[str, Any]:
    case = copy.deepcopy(GOOD_CASE)
    case.update(changes)
    return case


def untagged_options(cases: list[casefiles.Case]) -> list[str]:
    """The bundled cases (config errors aside) that turn on an option of their own machine without its
    ``option:NAME`` tag, which an adapter that does not list the option would be sent anyway, though
    PROTO-START-1 and the adapter guide promise it such cases are skipped."""
    from inboxspec import machines
    from inboxspec.conformance.fuzz import features_of

    return [f"{case.id}: {tag}" for case in cases if case.expect_config_error is None
            for tag in features_of(machines.get(case.machine), case.config) if tag not in case.features]


def test_a_bundled_case_that_turns_an_option_on_carries_its_tag() -> None:
    assert untagged_options(lint([bundled_cases_dir()]).loaded) == []


def test_an_untagged_option_is_found(tmp_path: Path) -> None:
    case = {**GOOD_CASE, "config": {"options": {"announce_requires_refusal": True}}}
    assert untagged_options(lint([write(tmp_path, case)]).loaded) == [
        "wake-gate/lint-probe: option:announce_requires_refusal"]
    tagged = {**case, "features": ["option:announce_requires_refusal"]}
    assert untagged_options(lint([write(tmp_path, tagged)]).loaded) == []


def test_schema_violation_names_file_and_place(tmp_path: Path) -> None:
    bad = mutated(steps=[{"event": "announce_refusal"}])  # no expect
    assert "schema: at $.cases[0].steps[0]: 'expect' is a required property" in problems_for(tmp_path, bad)


def test_every_schema_error_is_reported_with_its_json_path(tmp_path: Path) -> None:
    """Issue 9, attack 9: an unknown key in a later case is reported beside the first error."""
    first = mutated(steps=[{"event": "announce_refusal"}])  # no expect
    later = mutated(id="wake-gate/lint-probe-2", description="A second probe case",
                    unknown_key=True)
    problems = lint([write(tmp_path, first, later)]).problems
    assert any("$.cases[0].steps[0]: 'expect' is a required property" in p for p in problems), problems
    assert any("$.cases[1]: Additional properties are not allowed ('unknown_key'" in p
               for p in problems), problems
    assert all(p.startswith(str(tmp_path / "probe.json")) for p in problems[:2])


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The data the case-file schema validates from now on, in order, with an empty schema memo."""
    seen: list[Any] = []
    errors = casefiles.schema_errors

    def counting(data: Any) -> Any:
        seen.append(data)
        return errors(data)

    monkeypatch.setattr(casefiles, "_SCHEMA_CLEAN", set())
    monkeypatch.setattr(casefiles, "schema_errors", counting)
    return seen


def test_a_file_the_schema_accepted_is_not_validated_again_and_a_changed_one_is(
        tmp_path: Path, validated: list[Any]) -> None:
    """The schema's verdict is remembered by the file's bytes: the same bytes (under any name) are
    validated once in a process, changed bytes under the same name afresh, and a refused file is
    refused each time it is read, every problem reported."""
    probe = write(tmp_path, mutated(description="A probe case read twice")) / "probe.json"
    twin = tmp_path / "twin.json"
    twin.write_bytes(probe.read_bytes())
    assert [len(list(read_case_file(path))) for path in (probe, probe, twin)] == [1, 1, 1]
    assert len(validated) == 1
    write(tmp_path, mutated(steps=[{"event": "announce_refusal"}]))  # the same name, no expect
    for _ in range(2):
        with pytest.raises(CaseFileError, match="'expect' is a required property"):
            list(read_case_file(probe))
    assert len(validated) == 3


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_not_plain_json_is_a_named_problem(tmp_path: Path, literal: str) -> None:
    """Issue 9, attack 5: a NaN in an expectation names the file; no traceback."""
    text = json.dumps({"machine": "wake-gate", "cases": [GOOD_CASE]}).replace(
        '"streak": 0', f'"streak": {literal}')
    (tmp_path / "probe.json").write_text(text)
    problems = "\n".join(lint([tmp_path]).problems)
    assert f"{tmp_path / 'probe.json'}: not plain JSON" in problems


def test_huge_integer_is_a_named_problem(tmp_path: Path) -> None:
    text = json.dumps({"machine": "wake-gate", "cases": [GOOD_CASE]}).replace(
        '"streak": 0', '"streak": ' + "9" * 5000)
    (tmp_path / "probe.json").write_text(text)
    assert "not plain JSON" in "\n".join(lint([tmp_path]).problems)


@pytest.mark.parametrize("depth", [65, 100_000])
def test_deep_nesting_is_a_named_problem(tmp_path: Path, depth: int) -> None:
    """Issue 9, attack 6: an array 100 000 levels deep is a problem of its file, not a RecursionError."""
    text = json.dumps({"machine": "wake-gate", "cases": [GOOD_CASE]}).replace(
        '"config": {}', '"config": {"deep": ' + "[" * depth + "]" * depth + "}")
    (tmp_path / "probe.json").write_text(text)
    problems = "\n".join(lint([tmp_path]).problems)
    assert "not plain JSON: nested deeper than 64 levels" in problems


def test_unreadable_json(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    assert "not readable JSON" in "\n".join(lint([tmp_path]).problems)


def test_duplicate_ids(tmp_path: Path) -> None:
    other = mutated(description="Another probe case announces on a fresh gate")
    assert "duplicate id" in problems_for(tmp_path, GOOD_CASE, other)


def test_unknown_requirement(tmp_path: Path) -> None:
    assert "WAKE-NOPE-1, which is not in spec/" in problems_for(
        tmp_path, mutated(requirements=["WAKE-NOPE-1"]))


def test_uncited_requirements_are_reported(tmp_path: Path) -> None:
    assert "WAKE-LANE-1 is cited by no case" in problems_for(tmp_path, GOOD_CASE)


def test_should_in_description(tmp_path: Path) -> None:
    bad = mutated(description="A fresh gate should announce once")
    assert "says 'should'" in problems_for(tmp_path, bad)


def test_repeated_description(tmp_path: Path) -> None:
    other = mutated(id="wake-gate/lint-probe-2")
    assert "description repeats" in problems_for(tmp_path, GOOD_CASE, other)


def test_id_must_carry_its_machine(tmp_path: Path) -> None:
    assert "id must start with 'wake-gate/'" in problems_for(tmp_path, mutated(id="other/probe"))


def test_config_error_case_has_no_steps(tmp_path: Path) -> None:
    bad = mutated(expect_config_error="invalid_config")
    assert "not both" in problems_for(tmp_path, bad)


@pytest.mark.parametrize("machine", ["no-such-machine"])
def test_unknown_machine(tmp_path: Path, machine: str) -> None:
    bad = mutated(id=f"{machine}/probe")
    assert "unknown machine" in problems_for(tmp_path, bad, machine=machine)


def test_integral_float_is_not_portable(tmp_path: Path) -> None:
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [GOOD_CASE]})
                                         .replace('"config": {}', '"config": {"max_streak": 2.0}'))
    assert "integral number written as a float (2.0)" in "\n".join(lint([tmp_path]).problems)


def test_every_schema_is_valid_under_its_declared_draft() -> None:
    import jsonschema

    schemas = sorted((bundled_cases_dir().parent / "schemas").rglob("*.json"))
    assert len(schemas) == 9  # the case file, the fixture, two reports, and five protocol messages
    for path in schemas:
        schema = json.loads(path.read_text())
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_the_schema_memo_starts_empty_again_past_its_most_files(
        tmp_path: Path, validated: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(casefiles, "MAX_REMEMBERED_CLEAN_FILES", 2)
    paths = []
    for n in range(3):
        folder = tmp_path / str(n)
        folder.mkdir()
        paths.append(write(folder, mutated(description=f"A probe case number {n}")) / "probe.json")
    for path in [*paths, paths[2]]:
        list(read_case_file(path))
    assert len(validated) == 3 and len(casefiles._SCHEMA_CLEAN) <= 2  # the third read emptied the memo
    list(read_case_file(paths[0]))
    assert len(validated) == 4  # forgotten, so validated again


def test_the_protocol_states_the_runner_s_limits() -> None:
    """PROTO-CASES-2 gives both case-file limits in bytes, PROTO-CLI-1 the most random cases and
    PROTO-CLI-2 the skip files' limits: the runner's constants are what they say."""
    from inboxspec.conformance.runner import (
        MAX_FUZZ_CASES,
        MAX_GLOB_CHARS,
        MAX_SKIP_FILE_BYTES,
        MAX_SKIP_WILDCARD_ENTRIES,
    )

    spec = " ".join((Path(__file__).parent.parent / "spec" / "conformance-protocol.md")
                    .read_text(encoding="utf-8").split())
    assert (f"A case file MUST be a regular file of at most 16 MiB ({casefiles.MAX_CASE_FILE_BYTES:,} "
            "bytes)") in spec
    assert (f"The case files of one run hold at most 32 MiB ({casefiles.MAX_RUN_CASE_BYTES:,} bytes) "
            "together") in spec
    assert f"(`--fuzz` at most {MAX_FUZZ_CASES:,}: each random case is kept" in spec
    assert f"of at most 1 MiB ({MAX_SKIP_FILE_BYTES:,} bytes), one case-id glob a line" in spec
    assert f"at most {MAX_SKIP_WILDCARD_ENTRIES:,} entries with a wildcard" in spec
    assert f"`--skip`, MUST be at most {MAX_GLOB_CHARS:,} characters" in spec
    guide = " ".join((Path(__file__).parent.parent / "conformance" / "WRITING-AN-ADAPTER.md")
                     .read_text(encoding="utf-8").split())
    assert f"may hold at most {MAX_SKIP_WILDCARD_ENTRIES:,} entries with a wildcard (PROTO-CLI-2)" in guide


def test_requirements_without_an_rfc2119_keyword_are_reported() -> None:
    from inboxspec.spec.index import keyword_problems, machine_spec_text, spec_text

    assert keyword_problems(machine_spec_text("wake-gate")) == []
    assert keyword_problems(spec_text("conformance-protocol.md")) == []
    text = "- **WAKE-X-1** The gate MUST wake.\n- **WAKE-X-2** The gate wakes,\n  always.\n"
    assert keyword_problems(text) == ["WAKE-X-2 has no MUST, SHOULD or MAY"]


# -- fixtures: checked by lint, shared by reference (PROTO-FIX-3, PROTO-FIX-4) ----------------------

WP_CONFIG = {"home": "{fixture}/home", "own_root": "{fixture}/cli"}
HOLD = [{"event": "hold_fences", "expect": {"fences": True, "context": None}}]
TREE = {"entries": [{"path": "home", "type": "dir"}, {"path": "cli/x", "type": "file", "text": "x"}]}


def wp_case(slug: str, fixture: Any, requirements: tuple[str, ...] = ("WRITER-SES-2",)) -> dict[str, Any]:
    return {"id": f"writer-proofs/{slug}", "description": f"The probe {slug} holds the fences",
            "requirements": list(requirements), "config": {**WP_CONFIG, "fixture": fixture}, "steps": HOLD}


def write_file(tmp_path: Path, content: dict[str, Any]) -> Path:
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(content))
    return path


def test_lint_checks_every_fixture_with_its_json_path(tmp_path: Path) -> None:
    """PROTO-FIX-3: lint reports fixture problems (it checked none before), each at its JSON path."""
    bad = {"entries": [{"path": "link", "type": "symlink", "target": "/etc"},
                       {"path": "link/passwd", "type": "file", "text": "x"},
                       {"path": "x", "type": "file", "base64": "%%%"}]}
    cases = [wp_case("one", TREE), wp_case("two", bad)]
    path = write_file(tmp_path, {"machine": "writer-proofs", "cases": cases})
    problems = lint([path]).problems
    expected = (f"{path}: fixture: at $.cases[1].config.fixture.entries[1].path: path 'link/passwd' lies "
                "below 'link', which is a symlink; entries are made in directories only, never "
                "through a link")
    assert expected in problems, problems
    assert any(p.startswith(f"{path}: fixture: at $.cases[1].config.fixture.entries[2].base64: ")
               for p in problems), problems
    assert not any("$.cases[0]" in p for p in problems), problems


def test_shared_fixtures_resolve_to_one_object(tmp_path: Path) -> None:
    """PROTO-FIX-4: {"$fixture": NAME} stands for the file's fixture of that name."""
    cases = [wp_case("one", {"$fixture": "tree"}), wp_case("two", {"$fixture": "tree"})]
    path = write_file(tmp_path, {"machine": "writer-proofs", "fixtures": {"tree": TREE}, "cases": cases})
    loaded = list(read_case_file(path))
    assert loaded[0].config["fixture"] == TREE and loaded[0].config["fixture"] is loaded[1].config["fixture"]
    assert loaded[0].config["home"] == "{fixture}/home"


@pytest.mark.parametrize(("content", "expected"), [
    ({"fixtures": {"tree": TREE}, "cases": [wp_case("one", {"$fixture": "other"})]},
     "fixture: at $.cases[0].config.fixture: a reference is"),
    ({"fixtures": {"tree": TREE}, "cases": [wp_case("one", {"$fixture": "tree", "extra": 1})]},
     "fixture: at $.cases[0].config.fixture: a reference is"),
    ({"fixtures": {"tree": TREE, "spare": TREE}, "cases": [wp_case("one", {"$fixture": "tree"})]},
     "fixture: at $.fixtures.spare: referenced by no case"),
    ({"fixtures": {"Bad Name": TREE}, "cases": [wp_case("one", {"$fixture": "Bad Name"})]},
     "schema: at $.fixtures"),
    ({"fixtures": {"tree": {"entries": [{"path": "s", "type": "file", "mode": "04755"}]}},
      "cases": [wp_case("one", {"$fixture": "tree"})]},
     "fixture: at $.fixtures.tree.entries[0].mode: mode 04755 sets the setuid"),
])
def test_bad_references_are_named(tmp_path: Path, content: dict[str, Any], expected: str) -> None:
    path = write_file(tmp_path, {"machine": "writer-proofs", **content})
    problems = lint([path]).problems
    assert any(p.startswith(f"{path}: ") and expected in p for p in problems), problems


def test_special_bits_follow_the_citing_case(tmp_path: Path) -> None:
    """A shared setuid fixture is fine for a case citing WRITER-MEAS-5, not for one that does not."""
    setuid = {"entries": [{"path": "s", "type": "file", "mode": "04755"}]}
    citing = wp_case("one", {"$fixture": "tree"}, ("WRITER-MEAS-5",))
    path = write_file(tmp_path, {"machine": "writer-proofs", "fixtures": {"tree": setuid}, "cases": [citing]})
    assert not [p for p in lint([path]).problems if "fixture" in p]
    inline = wp_case("two", setuid)
    citing_inline = citing | {"config": {**WP_CONFIG, "fixture": setuid}}
    path = write_file(tmp_path, {"machine": "writer-proofs", "cases": [citing_inline, inline]})
    problems = [p for p in lint([path]).problems if "fixture" in p]
    assert len(problems) == 1 and "$.cases[1].config.fixture.entries[0].mode" in problems[0], problems


def test_a_shared_fixture_is_checked_once_and_each_case_that_may_not_use_it_gets_one_line(
        tmp_path: Path) -> None:
    """1,000 cases naming one fixture of 4,096 setuid entries, none citing WRITER-MEAS-5, made four
    million problem lines and took conform past 2.7 GB."""
    setuid = {"entries": [{"path": f"f{n}", "type": "file", "mode": "04755"} for n in range(4096)]}
    cases = [wp_case(f"c{n}", {"$fixture": "tree"}) for n in range(1000)]
    path = write_file(tmp_path, {"machine": "writer-proofs", "fixtures": {"tree": setuid}, "cases": cases})
    problems = [p for p in lint([path]).problems if "fixture" in p]
    assert len(problems) == 1000
    assert all(p.endswith(f"(referenced at $.cases[{n}].config.fixture; 4095 more such problem(s))")
               for n, p in enumerate(problems)), problems[:2]
    assert "$.fixtures.tree.entries[0].mode" in problems[0]


def test_share_fixtures_keeps_every_case_as_it_was(tmp_path: Path) -> None:
    other = {"entries": [{"path": "home", "type": "dir", "mode": "0700"}]}
    cases = [wp_case("one", TREE), wp_case("two", copy.deepcopy(TREE)), wp_case("three", other)]
    content = {"machine": "writer-proofs", "cases": cases}
    shared = share_fixtures(content)
    assert shared["fixtures"] == {"one": TREE}
    assert shared["cases"][2]["config"]["fixture"] == other  # used once: stays inline
    before = list(read_case_file(write_file(tmp_path, content)))
    after = list(read_case_file(write_file(tmp_path, shared)))
    assert [c.config for c in before] == [c.config for c in after]


def test_bundled_writer_proofs_files_repeat_no_fixture() -> None:
    """The writer-proofs case files, generated ones too, write each fixture once (PROTO-FIX-4)."""
    paths = sorted((bundled_cases_dir() / "writer-proofs").rglob("*.json"))
    assert any(path.parent.name == "generated" for path in paths)
    for path in paths:
        inline = [json.dumps(c["config"]["fixture"], sort_keys=True)
                  for c in json.loads(path.read_text())["cases"]
                  if "fixture" in c["config"] and "$fixture" not in c["config"]["fixture"]]
        assert len(inline) == len(set(inline)), path


def test_lint_exits_1_for_a_file_it_rejects_and_the_runner_2(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """PROTO-FIX-2: a case's config holding fixture_dir is refused by both; lint reports a problem
    (exit 1, a check that failed), the runner cannot run (exit 2)."""
    from inboxspec.cli import main

    case = wp_case("one", TREE)
    case["config"] = {**case["config"], "fixture_dir": "/tmp/x"}
    path = write_file(tmp_path, {"machine": "writer-proofs", "cases": [case]})
    assert main(["cases", "lint", str(path.parent)]) == 1
    assert "fixture_dir" in capsys.readouterr().out
    adapter = f"{sys.executable} -m inboxspec.conformance.adapter"
    assert main(["conform", "--adapter", adapter, "--cases", str(path.parent)]) == 2


def test_a_files_schema_errors_are_listed_up_to_the_bound(tmp_path: Path) -> None:
    """PROTO-CASES-1: the first MAX_SCHEMA_ERRORS found, then a line saying there are more (a file of
    100,000 empty cases, 400 kB, has 500,000 errors: listing them all took gigabytes)."""
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [{}] * 100_000}))
    problems = lint([tmp_path]).problems
    schema_problems = [p for p in problems if ": schema: " in p]
    assert len(schema_problems) == casefiles.MAX_SCHEMA_ERRORS + 1 == 101
    assert schema_problems[-1].endswith("more than 100 errors; the first 100 found are listed")
    assert all("is a required property" in p for p in schema_problems[:-1])
    # The first found (five for each of the first 20 cases), sorted with an index read as a number.
    indices = [int(p.split("$.cases[")[1].split("]")[0]) for p in schema_problems[:-1]]
    assert indices == sorted(indices) and set(indices) == set(range(20)), indices
    (tmp_path / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [{}] * 20}))
    assert len([p for p in lint([tmp_path]).problems if ": schema: " in p]) == 100  # 5 a case, all listed
    spec = Path(__file__).resolve().parents[1] / "spec" / "conformance-protocol.md"
    # The WARNING's other place.
    assert f"the first {casefiles.MAX_SCHEMA_ERRORS} found are listed" in " ".join(spec.read_text().split())


@pytest.mark.parametrize(("replace", "by", "words"), [
    # The second id hid the first from the lint's duplicate-id rule (Python kept the last).
    ('"id": "wake-gate/lint-probe"', '"id": "wake-gate/lint-probe", "id": "wake-gate/other"',
     "not plain JSON: the key 'id' appears twice in one object"),
    ('"streak": 0', '"streak": 1e-400', "number 1e-400 underflows a double to 0"),
])
def test_a_key_twice_and_an_underflow_are_named_problems(tmp_path: Path, replace: str, by: str,
                                                          words: str) -> None:
    """PROTO-VAL-3: a key twice in one object is not plain JSON; 1e-400 was reported as an integral
    number written as a float."""
    text = json.dumps({"machine": "wake-gate", "cases": [GOOD_CASE]})
    assert replace in text
    (tmp_path / "probe.json").write_text(text.replace(replace, by))
    problems = "\n".join(lint([tmp_path]).problems)
    assert f"{tmp_path / 'probe.json'}: " in problems and words in problems, problems


def test_a_case_id_is_at_most_200_characters(tmp_path: Path) -> None:
    """A 15 MB id passed the lint, and a report printed it whole."""
    longest = "wake-gate/" + "a" * 190
    assert problems_for(tmp_path, mutated(id=longest)).count("schema:") == 0
    assert "schema: at $.cases[0].id: " in problems_for(tmp_path, mutated(id=longest + "a"))


def test_the_cases_problems_and_the_files_problems_are_listed_to_a_thousand(tmp_path: Path) -> None:
    """A line per unknown requirement, or a hundred schema errors in each of thousands of small files,
    listed 400,000 lines (2.5 GB): each list stops at its first MAX_LISTED_PROBLEMS, then a line says
    more were left out, and no file after that is read (PROTO-CASES-1)."""
    from inboxspec.conformance.interface_lint import MAX_LISTED_PROBLEMS

    marker = f"more problems, not listed: the first {MAX_LISTED_PROBLEMS:,} are above"
    unknown = [f"WAKE-NOPE-{n}" for n in range(MAX_LISTED_PROBLEMS + 200)]
    case = {"id": "wake-gate/probe", "description": "A probe citing what the spec does not hold",
            "requirements": unknown, "config": {}, "steps": [{"event": "tick", "args": {"now_ms": 0},
                                                             "expect": {}}]}
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "probe.json").write_text(json.dumps({"machine": "wake-gate", "cases": [case]}))
    with pytest.raises(CaseFileError) as cited:
        casefiles.load_cases([tmp_path / "one"])
    assert len(cited.value.problems) == MAX_LISTED_PROBLEMS + 1
    assert cited.value.problems[-1] == marker
    assert all(": cites WAKE-NOPE-" in line for line in cited.value.problems[:-1])

    many = tmp_path / "many"
    many.mkdir()
    bad = [{"id": f"wake-gate/bad-{n}"} for n in range(60)]  # five schema errors each: 100 listed a file
    for number in range(30):
        (many / f"bad-{number:02}.json").write_text(json.dumps({"machine": "wake-gate", "cases": bad}))
    with pytest.raises(CaseFileError) as schema:
        casefiles.load_cases([many])
    assert len(schema.value.problems) == MAX_LISTED_PROBLEMS + 1
    assert schema.value.problems[-1] == marker
    assert not any("bad-29.json" in line for line in schema.value.problems)  # not read
    # The linter lists them so too: it listed every file's (775 kB of files, 1.9 GB of problems).
    linted = lint([many]).problems
    assert len(linted) == MAX_LISTED_PROBLEMS + 1 and linted[-1] == marker


def test_a_tree_nested_a_thousand_deep_is_linted_without_a_traceback(tmp_path: Path) -> None:
    """The walk recursed once a level: a tree 1,100 deep ended `cases lint` in a RecursionError
    traceback, exit 1 (found by an attack on the commands). A case file at its bottom is read."""
    folder = os.open(tmp_path, os.O_RDONLY)
    for _ in range(1100):  # one level at a time: pathlib's and os.makedirs's own walks recurse too
        os.mkdir("d", dir_fd=folder)
        inner = os.open("d", os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(os.open("x.json", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder))
    os.close(folder)
    deepest = tmp_path.joinpath(*["d"] * 1100)
    try:
        done = run_command("cases", "lint", str(tmp_path))
    finally:  # removed here: pytest's own removal of old temporary directories recurses a level a frame
        remove_fixture_directory(tmp_path / "d", seconds=None)
    assert "Traceback" not in done.stderr and done.returncode == 1
    assert f"{deepest / 'x.json'}: not readable JSON" in done.stdout  # reached, read and judged

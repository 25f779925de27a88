"""The readings a port could take either way, pinned (spec/writer-proofs.md; the cases are in
``conformance/cases/writer-proofs/fidelity.json``, built by ``tests/writer_proofs_fidelity_casebook``).

Each case's intended outcome is written here by hand, apart from the recorded expectations, so a
recording that drifted from the intent fails. The filesystem edge is also driven directly, through
the measurement's hooks, where a case cannot reach.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import case_problems, read_case_file
from inboxspec.impl import writer_fs
from inboxspec.impl.writer_fs import FilesystemEnvironment, measure_root, strict_json
from inboxspec.impl.writer_harness import SwapPaths, SwapScript
from inboxspec.impl.writer_proofs import PlacementWriterContextError, WriterMeasurementError, WriterProofs
from inboxspec.machines import writer_proofs_driver
from inboxspec.machines.writer_proofs_driver import exchange_in, run_case
from tests import writer_proofs_fidelity_casebook as casebook
from tests.test_writer_proofs_fs import install

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")

# slug -> the last step's outcome: ("refusal", category, cause, detail), ("measured", roots),
# ("attested",) or ("error", code).
INTENDED: dict[str, tuple[Any, ...]] = {
    **{f"mid-read-change-with-{detail}": ("refusal", "running CLI", "unavailable", detail)
       for detail in ("writable-runtime", "missing-runtime", "wrong-package", "invalid-version",
                      "below-minimum", "unreadable", "unsafe-runtime")},
    "mid-read-change-alone": ("refusal", "running CLI", "changed", "changed"),
    "mid-read-change-of-package-json": ("refusal", "running CLI", "changed", "changed"),
    "mid-read-change-of-package-json-with-writable-runtime": (
        "refusal", "running CLI", "unavailable", "writable-runtime"),
    "identical-replacement-before-restat": ("refusal", "running CLI", "changed", "changed"),
    "identical-replacement-before-read": ("refusal", "running CLI", "changed", "changed"),
    "identical-file-between-measurements": ("attested",),
    "mid-measurement-swap-waits-for-its-moment": ("refusal", "running CLI", "changed", "changed"),
    "receipt-changed-during-measurement": ("refusal", "setup receipt", "changed", "changed"),
    "running-cli-moved-during-measurement": ("refusal", "running CLI", "changed", "changed"),
    "initial-attest-floor-gone-is-initial": ("refusal", "home floor", "missing", None, "initial"),
    "initial-attest-floor-lowered-is-initial": ("refusal", "home floor", "unavailable", None, "initial"),
    "utf8-order-beyond-the-bmp": (
        "measured", ["{fixture}/cli", "{fixture}/decl-\uff21", "{fixture}/decl-\U0001f600"]),
    "root-dotdot-after-file": ("refusal", "declared writer", "unavailable", "unreadable"),
    "own-root-dotdot-after-file": ("refusal", "running CLI", "unavailable", "unreadable"),
    "root-trailing-slash-after-file": ("refusal", "declared writer", "unavailable", "unreadable"),
    "root-with-nul": ("refusal", "declared writer", "unavailable", "invalid-inventory"),
    "own-root-with-nul": ("refusal", "running CLI", "unavailable", "unreadable"),
    "package-json-depth-64": ("measured", ["{fixture}/cli"]),
    "package-json-depth-65": ("refusal", "running CLI", "unavailable", "unreadable"),
    "package-json-depth-5000": ("refusal", "running CLI", "unavailable", "unreadable"),
    "formats-depth-65": ("refusal", "home floor", "unavailable", None),
    "nested-root-belongs-to-both": ("refusal", "running CLI", "changed", "changed"),
    "home-file-of-one-mib": ("measured", ["{fixture}/cli"]),
    "home-file-over-one-mib": ("refusal", "home floor", "unavailable", None),
    "home-file-directory": ("refusal", "home floor", "unavailable", None),
    "home-file-symlink": ("refusal", "home floor", "unavailable", None),
    "home-file-dangling-symlink": ("refusal", "home floor", "unavailable", None),
    "home-file-fifo": ("refusal", "home floor", "unavailable", None),
    "receipt-symlink": ("refusal", "setup receipt", "unavailable", "unreadable"),
    "home-with-nul": ("refusal", "setup receipt", "unavailable", "unreadable"),
    "home-with-nul-active": ("refusal", "home floor", "unavailable", None),
    "locator-fifo": ("refusal", "active locator", "unavailable", None),
    "locator-number-out-of-range-preview": ("refusal", "active locator", "unavailable", None),
    "locator-number-out-of-range-active": ("refusal", "active locator", "unavailable", None),
    "locator-number-out-of-range-attest": ("refusal", "active locator", "unavailable", None),
    "formats-integer-out-of-range": ("refusal", "home floor", "unavailable", None),
    "package-json-number-out-of-range": ("refusal", "running CLI", "unavailable", "unreadable"),
    "package-json-largest-double": ("measured", ["{fixture}/cli"]),
    "swap-during-unknown-moment": ("error", "invalid_argument"),
}


def _outcome(expect: dict[str, Any]) -> tuple[Any, ...]:
    if "refusal" in expect:
        refusal = expect["refusal"]
        return ("refusal", refusal["category"], refusal["cause"], refusal["detail"])
    if "measurement" in expect:
        return ("measured", [row["root"] for row in expect["measurement"]["roots"]])
    if "attestation" in expect:
        return ("attested",)
    return ("error", expect.get("error"))


def _cases() -> dict[str, dict[str, Any]]:
    return casebook.BOOK.written_cases()


def test_every_case_has_an_intended_outcome() -> None:
    assert sorted(_cases()) == sorted(INTENDED)


@pytest.mark.parametrize("slug", sorted(INTENDED))
def test_each_case_ends_as_intended(slug: str) -> None:
    steps = _cases()[slug]["steps"]
    intended = INTENDED[slug]
    last = steps[-1]["expect"] if intended[0] != "error" else steps[0]["expect"]
    assert _outcome(last) == intended[:4]
    if len(intended) > 4:  # the phase, where the case exists for it
        assert last["refusal"]["phase"] == intended[4]


# -- WRITER-MEAS-4 on real trees, through the hook between the walk and the read pass ------------

def _replace(path: Path) -> Callable[[], None]:
    """A new file at ``path`` (a new inode, other bytes): the read pass sees another file."""
    def replace() -> None:
        path.unlink()
        path.write_text("export const amem = false;\n")
        os.chmod(path, 0o644)
    return replace


RANKED: dict[str, Callable[[Path], object]] = {
    "writable-runtime": lambda root: os.chmod(root / "bin" / "amem.js", 0o666),
    "missing-runtime": lambda root: (root / "bin" / "amem.js").unlink(),
    "wrong-package": lambda root: (root / "package.json").write_text('{"name": "amem", "version": "0.22.0"}'),
    "invalid-version": lambda root: (root / "package.json").write_text(
        '{"name": "@staix/agent-mem", "version": "0.21.0-rc.1"}'),
    "below-minimum": lambda root: (root / "package.json").write_text(
        '{"name": "@staix/agent-mem", "version": "0.20.9"}'),
    "unreadable": lambda root: (root / "package.json").unlink(),
    "unsafe-runtime": lambda root: os.symlink("index.ts", root / "src" / "alias.ts"),
}


@pytest.mark.parametrize("detail", sorted(RANKED))
def test_a_ranked_fault_wins_over_a_change_while_reading(tmp_path: Path, detail: str) -> None:
    root = install(tmp_path / "w")
    RANKED[detail](root)
    with pytest.raises(WriterMeasurementError) as caught:
        measure_root(str(root), before_read=_replace(root / "src" / "index.ts"))
    assert caught.value.detail == detail


def test_a_change_while_reading_alone_is_changed(tmp_path: Path) -> None:
    root = install(tmp_path / "w")
    with pytest.raises(WriterMeasurementError) as caught:
        measure_root(str(root), before_read=_replace(root / "src" / "index.ts"))
    assert caught.value.detail == "changed"


def test_the_read_pass_goes_on_after_a_changed_file(tmp_path: Path) -> None:
    """A file read after the changed one is still read: its read failure ranks first."""
    root = install(tmp_path / "w")
    (root / "src" / "z-late.ts").write_text("late\n")
    os.chmod(root / "src" / "z-late.ts", 0o644)

    def change_then_break() -> None:
        _replace(root / "bin" / "amem.js")()
        os.chmod(root / "bin" / "amem.js", 0o755)
        (root / "src" / "z-late.ts").unlink()  # walked, then gone: unreadable

    with pytest.raises(WriterMeasurementError) as caught:
        measure_root(str(root), before_read=change_then_break)
    assert caught.value.detail == "unreadable"


# -- WRITER-JSON-3: depth and range, WRITER-MEAS-2: resolution -------------------------------------

@pytest.mark.parametrize("text", [
    "[" * 65 + "]" * 65, "[" * 100_000, '{"a": ' * 65 + "1" + "}" * 65,
    "[1e999]", "[-1e999]", "[" + "9" * 400 + "]", "[" + "1" * 5000 + "]",
])
def test_json_refused(text: str) -> None:
    with pytest.raises(ValueError):
        strict_json(text.encode())


@pytest.mark.parametrize("text", [
    "[" * 64 + "]" * 64, '["' + "[" * 200 + '"]', '["\\"[[[[", ' + "[" * 62 + "]" * 62 + "]",
    "[1.7976931348623157e308]", "[1" + "0" * 308 + "]",
])
def test_json_read(text: str) -> None:
    strict_json(text.encode())


def test_json_depth_is_counted_outside_the_literals_the_parser_finds() -> None:
    """WRITER-JSON-3: the depth scan finds the string literals left to right, as the parser does, and
    a literal that never closes ends the text. Searching on from each later '"' instead took
    quadratic time: about 20 minutes a read of a 1 MiB home file of '"' and many '\\"'."""
    assert list(writer_fs._outside_strings('[1, "[[", [2, "\\"]"]]')) == ["[1, ", ", [2, ", "]]"]
    assert list(writer_fs._outside_strings("[[" + '"' + '\\"' * 1000)) == ["[["]
    with pytest.raises(ValueError, match="nested more than 64"):
        strict_json(("[" * 65 + '"' + '\\"' * 1000).encode())


@pytest.mark.parametrize("suffix", ["/..", "/", "/."])
def test_a_path_through_a_regular_file_does_not_resolve(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        writer_fs.real_path(f"{tmp_path}/file{suffix}")
    assert writer_fs.real_path(f"{tmp_path}/file") == os.path.realpath(tmp_path / "file")


def test_an_out_of_range_locator_refuses_instead_of_crashing(tmp_path: Path) -> None:
    """Point 14: read_effective canonicalised outside its try, so preview and active crashed."""
    cli = install(tmp_path / "cli")
    home = tmp_path / "home"
    home.mkdir()
    (home / "formats.json").write_text('{"readerFloor": "0.22.0"}')
    (home / "sync-placement-writer-roots.json").write_text(
        json.dumps({"roots": [str(cli)], "writers": []}).replace("]}", '], "activation": {"g": 1e999}}'))
    proofs = WriterProofs(FilesystemEnvironment(), str(home), str(cli))
    for event in (proofs.preview, proofs.active):
        with pytest.raises(PlacementWriterContextError) as caught:
            event()
        assert (caught.value.category, caught.value.cause_class) == ("active locator", "unavailable")


# -- the harness's armed swap (WRITER-IF-6) --------------------------------------------------------

def test_an_armed_swap_is_performed_once_at_its_moment(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    swap = SwapScript(exchange_in(str(tmp_path)))
    swap.step(SwapPaths("a", "b", "before_restat"))
    swap.perform("before_read")
    assert (tmp_path / "a").read_text() == "a"
    swap.perform("before_restat")
    assert (tmp_path / "a").read_text() == "b"
    swap.perform("before_restat")
    assert (tmp_path / "a").read_text() == "b"


def test_an_armed_swap_of_nothing_moves_nothing(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a")
    swap = SwapScript(exchange_in(str(tmp_path)))
    swap.step(SwapPaths("x", "y", "before_read"))
    swap.perform("before_read")
    swap.step(SwapPaths("../outside", "a", "before_read"))
    swap.perform("before_read")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    assert swap.armed is None


# -- WRITER-IF-1: a case's own fixture_dir -----------------------------------------------------------

def _own_directory_case(directory: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    config = {"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture_dir": str(directory)}
    return config, [{"event": "swap_paths", "args": {"first": "precious", "second": "moved"}}]


def test_a_case_supplied_fixture_dir_is_refused_by_the_reference(tmp_path: Path) -> None:
    (tmp_path / "precious").write_text("keep")
    config, steps = _own_directory_case(tmp_path)
    assert run_case(config, steps) == {"config_error": "invalid_config"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_case_supplied_fixture_dir_is_refused_by_the_node_port(tmp_path: Path) -> None:
    (tmp_path / "precious").write_text("keep")
    config, steps = _own_directory_case(tmp_path)
    module = ROOT / "conformance" / "ports" / "node" / "writer-proofs.mjs"
    script = (f"import {{ runCase }} from {json.dumps(module.as_uri())};"
              f"process.stdout.write(JSON.stringify(runCase({json.dumps(config)}, {json.dumps(steps)})));")
    result = subprocess.run([NODE or "node", "--input-type=module", "-e", script],
                            capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(result.stdout) == {"config_error": "invalid_config"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


def test_case_lint_rejects_a_case_supplied_fixture_dir(tmp_path: Path) -> None:
    folder = tmp_path / "writer-proofs"
    folder.mkdir()
    case = {"id": "writer-proofs/own-fixture-dir", "description": "A case naming its own directory",
            "requirements": ["WRITER-IF-1"],
            "config": {"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture_dir": "/",
                       "fixture": {"entries": []}},
            "steps": [{"event": "hold_fences", "expect": {"fences": True, "context": None}}]}
    (folder / "own.json").write_text(json.dumps({"machine": "writer-proofs", "cases": [case]}))
    cases = list(read_case_file(folder / "own.json"))
    if len(cases) != 1:  # the file itself must read, or this test shows nothing about the rule
        raise RuntimeError(f"the probe case file did not read: {cases}")
    assert any("fixture_dir" in problem for problem in case_problems(cases))


def _swap_moment_steps() -> list[dict[str, Any]]:
    """Arming at each moment of the interface data, then at a moment it does not name."""
    moments = [*writer_proofs_driver.INTERFACE.vocabulary("swap_moments"), "before_walk"]
    return [{"event": "swap_paths", "args": {"first": "a", "second": "b", "during": m}} for m in moments]


SWAP_MOMENT_OUTPUTS = {"outputs": [{"context": None}, {"context": None},
                                   {"error": "invalid_argument", "context": None}]}


def test_the_driver_arms_exactly_the_swap_moments_of_the_interface_data() -> None:
    config = {"home": "{fixture}/home", "own_root": "{fixture}/cli", "fixture": {"entries": []}}
    assert run_case(config, _swap_moment_steps()) == SWAP_MOMENT_OUTPUTS


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_node_port_arms_exactly_the_swap_moments_of_the_interface_data() -> None:
    config = {"home": "{fixture}/home", "own_root": "{fixture}/cli"}
    assert _node_run(config, _swap_moment_steps()) == SWAP_MOMENT_OUTPUTS


# -- the two ports agree where the text is large or tricky (WRITER-JSON-3) ---------------------------

def _node_run(config: dict[str, Any], steps: list[dict[str, Any]]) -> Any:
    module = ROOT / "conformance" / "ports" / "node" / "writer-proofs.mjs"
    script = (f"import {{ runCase }} from {json.dumps(module.as_uri())};"
              "import fs from 'node:fs';"
              "const [config, steps] = JSON.parse(fs.readFileSync(0, 'utf8'));"
              "process.stdout.write(JSON.stringify(runCase(config, steps)));")
    result = subprocess.run([NODE or "node", "--input-type=module", "-e", script],
                            input=json.dumps([config, steps]), capture_output=True, text=True,
                            timeout=60, check=True)
    return json.loads(result.stdout)


HEAD = '{"name": "@staix/agent-mem", "version": "0.22.0", "x": '
# Each package.json, and whether it is refused (unreadable).
PACKAGES = {
    "a string of nearly 1 MiB, escapes and all":
        (HEAD + '"' + "a\\\\" * 100_000 + "b" * 700_000 + '"}', False),
    "a 16-million-character string, past 1 MiB":
        (HEAD + '"' + "a\\\\" * 4_000_000 + "b" * 4_000_000 + '"}', True),
    "brackets and escaped quotes in strings":
        (HEAD + '["\\"[[[[{{{{", "]]]", ' + "[" * 62 + "]" * 62 + "]}", False),
    "64 levels under closed siblings": (HEAD + "[" + "[], " * 100 + "[" * 62 + "]" * 62 + "]}", False),
    "65 levels under closed siblings": (HEAD + "[" + "{}, " * 100 + "[" * 63 + "]" * 63 + "]}", True),
}


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_the_ports_agree_on_a_package_json(tmp_path: Path, name: str) -> None:
    root = install(tmp_path / "w")
    text, refused = PACKAGES[name]
    (root / "package.json").write_text(text)
    home = tmp_path / "home"
    home.mkdir()
    (home / "formats.json").write_text('{"readerFloor": "0.22.0"}')
    config = {"home": "{fixture}/home", "own_root": "{fixture}/w", "fixture": {"entries": []},
              "fixture_dir": str(tmp_path)}
    steps = [{"event": "initial", "args": {"roots": ["{fixture}/w"]}}]
    reference = run_case(config, steps)
    assert _node_run(config, steps) == reference
    outcome = reference["outputs"][0]
    assert ("refusal" in outcome) == refused, outcome

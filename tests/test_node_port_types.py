"""The Node port is typed: every module under `// @ts-check`, `tsc --strict` clean, its
declarations current, and a type-level test that a wrong signature fails.

TypeScript is the port's pinned devDependency, installed by `npm ci` in conformance/ports/node
(.ci/run does). Without it these tests skip, saying so, except in CI, where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.session_shared import computed_once, scratch_directory

ROOT = Path(__file__).resolve().parent.parent
PORT = ROOT / "conformance" / "ports" / "node"
TSC = PORT / "node_modules" / "typescript" / "bin" / "tsc"
NODE = shutil.which("node")


def tsc_command() -> list[str]:
    missing = None
    if NODE is None:
        missing = "node is not installed"
    elif not TSC.is_file():
        missing = f"{TSC.relative_to(ROOT)} is absent: run `npm ci` in conformance/ports/node"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}; CI installs the port's pinned TypeScript in .ci/run")
        pytest.skip(missing)
    assert NODE is not None
    return [NODE, str(TSC)]


def test_every_module_is_type_checked() -> None:
    modules = sorted(PORT.glob("*.mjs"))
    assert len(modules) >= 8
    for module in modules:
        lines = module.read_text(encoding="utf-8").splitlines()
        first = lines[1] if lines[0].startswith("#!") else lines[0]  # the adapter is also a script
        assert first == "// @ts-check", module.name


@dataclass(frozen=True)
class CheckedPort:
    """What one tsc run over the port's project reported: its exit code and output, the files it
    checked, and the declarations it generated from the modules (by file name)."""

    returncode: int
    output: str
    checked: frozenset[Path]
    declarations: dict[str, str]


@pytest.fixture(scope="session")
def checked_port(tmp_path_factory: pytest.TempPathFactory) -> CheckedPort:
    """``tsc --strict -p .`` over the port, which checks every module and the type-level test, with the
    declaration options of ``tsconfig.declarations.json`` (``npm run declarations``) added, so that
    the same run also writes the declarations, into a scratch directory: one run of tsc (some 6.5
    processor seconds) for both tests below, once in the session (tests/session_shared.py). The
    declarations come from the modules alone either way: a module imports modules, never the
    committed ``types/``."""
    command = tsc_command()
    out = scratch_directory(tmp_path_factory, "port-declarations")
    return computed_once(tmp_path_factory, "port-checked", lambda: _checked_port(command, out))


def declaration_flags(out: Path) -> list[str]:
    """``tsconfig.declarations.json``'s compiler options as tsc flags, writing into ``out``. The
    project root must then be given (``--rootDir``): with ``types-test.ts`` and ``types/`` in the
    program, tsc cannot tell it, and needs it to read the package's export map."""
    config = json.loads((PORT / "tsconfig.declarations.json").read_text(encoding="utf-8"))
    assert config["extends"] == "./tsconfig.json", "the declarations extend the checked project's options"
    options = {**config["compilerOptions"], "outDir": str(out), "rootDir": str(PORT)}
    return [word for name, value in options.items()
            for word in (f"--{name}", str(value).lower() if isinstance(value, bool) else str(value))]


def _checked_port(command: list[str], out: Path) -> CheckedPort:
    process = subprocess.run([*command, "-p", str(PORT), "--strict", "--listFiles", *declaration_flags(out)],
                             capture_output=True, text=True, cwd=PORT, timeout=300)
    checked = frozenset(Path(line).resolve() for line in process.stdout.splitlines()
                        if line.startswith("/"))
    declarations = {p.name: p.read_text(encoding="utf-8") for p in out.glob("*.d.mts")}
    return CheckedPort(process.returncode, process.stdout + process.stderr, checked, declarations)


@pytest.mark.slow
def test_tsc_strict_is_clean_on_every_module_and_the_type_test(checked_port: CheckedPort) -> None:
    assert checked_port.returncode == 0, checked_port.output
    wanted = {*PORT.glob("*.mjs"), PORT / "types-test.ts", *(PORT / "types").glob("*.d.mts")}
    missed = {p.resolve() for p in wanted} - checked_port.checked
    assert not missed, sorted(str(p) for p in missed)


@pytest.mark.slow
def test_declarations_are_what_the_modules_generate(checked_port: CheckedPort) -> None:
    assert checked_port.returncode == 0, checked_port.output
    committed = {p.name: p.read_text(encoding="utf-8") for p in (PORT / "types").glob("*.d.mts")}
    assert "index.d.mts" in checked_port.declarations
    assert checked_port.declarations == committed, \
        "types/ has drifted: run `npm run declarations` in conformance/ports/node"


# Declarations a plausible slip would produce; types-test.ts must reject each one.
WRONG_SIGNATURES = {
    "a drop reason may be null": (
        "peer-delivery.d.mts", "describePeerDropReasons(reasons: readonly (PeerDropReason | undefined)[])",
        "describePeerDropReasons(reasons: readonly (PeerDropReason | null | undefined)[])"),
    "a misspelt drop reason": (
        "peer-delivery.d.mts", '"hop-runaway", "queue-full"', '"hop-runaway", "queue_full"'),
    "a receipt state missing": ("peer-delivery.d.mts", '"refused", "dropped"]', '"refused"]'),
    "dropped accepted by the delivery notice": (
        "peer-delivery.d.mts",
        'renderCrossSessionDeliveryNotice(state: Exclude<PeerDeliveryReceiptState, "dropped">',
        "renderCrossSessionDeliveryNotice(state: PeerDeliveryReceiptState"),
    "a label of null for nothing left": (
        "idle-subscriptions.d.mts", "peerIdleNoticeLabel(raw: string): string | undefined;",
        "peerIdleNoticeLabel(raw: string): string | null;"),
    "a writable maxStreak": ("wake-gate.d.mts", "get maxStreak(): number;", "maxStreak: number;"),
    "an optional clock": ("wake-gate.d.mts", "clock: () => number;", "clock?: () => number;"),
    "invalidate without its boolean form": (
        "inbox-refresh.d.mts", "invalidate(input?: boolean | InboxInvalidation): void;",
        "invalidate(input?: InboxInvalidation): void;"),
}


@pytest.fixture(scope="session")
def slip_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The errors tsc reports in each copy of the port's declarations and type-level test: one
    copy per slip, with that slip made, and an untouched one (``""``), all checked by one tsc run
    with the port's compiler options, so that the libraries are read and checked once; once in
    the session (tests/session_shared.py)."""
    command = tsc_command()
    root = scratch_directory(tmp_path_factory, "type-slips")
    return computed_once(tmp_path_factory, "type-slips", lambda: _slip_errors(command, root))


def _slip_errors(command: list[str], root: Path) -> dict[str, list[str]]:
    """Each copy is a package of its own version: tsc takes two packages of the same name and
    version for one and would check every copy's test against the first copy's declarations."""
    (root / "node_modules").symlink_to(PORT / "node_modules", target_is_directory=True)
    slips = sorted(WRONG_SIGNATURES)
    copies = {"": root / "untouched", **{slip: root / f"slip-{n}" for n, slip in enumerate(slips)}}
    manifest = json.loads((PORT / "package.json").read_text(encoding="utf-8"))
    for slip, copy in copies.items():
        shutil.copytree(PORT / "types", copy / "types")
        shutil.copy2(PORT / "types-test.ts", copy)
        version = f"{manifest['version']}-{copy.name}"
        (copy / "package.json").write_text(json.dumps({**manifest, "version": version}), encoding="utf-8")
        if slip:
            file, right, wrong = WRONG_SIGNATURES[slip]
            declaration = copy / "types" / file
            text = declaration.read_text(encoding="utf-8")
            assert text.count(right) == 1, right
            declaration.write_text(text.replace(right, wrong), encoding="utf-8")
    config = {"extends": str(PORT / "tsconfig.json"),
              "include": [f"{copy.name}/{part}" for copy in copies.values()
                          for part in ("types-test.ts", "types/*.d.mts")]}
    (root / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    process = subprocess.run([*command, "-p", str(root)], capture_output=True, text=True, cwd=root,
                             timeout=300)
    by_copy: dict[str, list[str]] = {slip: [] for slip in copies}
    for line in process.stdout.splitlines():
        if not line or line[0].isspace():
            continue  # the rest of a message
        owners = [slip for slip, copy in copies.items()
                  if re.match(rf"{copy.name}/\S+\(\d+,\d+\): error", line)]
        assert len(owners) == 1, process.stdout  # every error is in a file of one copy
        by_copy[owners[0]].append(line.removeprefix(f"{copies[owners[0]].name}/"))
    assert by_copy[""] == [], process.stdout  # the untouched copy is clean: no error comes of the set-up
    return by_copy


@pytest.mark.slow
@pytest.mark.parametrize("slip", sorted(WRONG_SIGNATURES))
def test_the_type_level_test_rejects_a_wrong_signature(slip_errors: dict[str, list[str]], slip: str) -> None:
    errors = slip_errors[slip]
    assert errors, slip
    # The failure is an assertion of the type-level test, not a broken declaration file.
    assert all(re.match(r"types-test\.ts\(\d+,\d+\): error", line) for line in errors), errors


def test_typescript_is_pinned_exactly() -> None:
    manifest = json.loads((PORT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((PORT / "package-lock.json").read_text(encoding="utf-8"))
    pinned = manifest["devDependencies"]["typescript"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned), pinned
    assert lock["packages"]["node_modules/typescript"]["version"] == pinned
    assert not manifest.get("dependencies"), "the port has no runtime dependencies"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install, test = ci.index("(cd conformance/ports/node && npm ci"), ci.index(".venv/bin/pytest")
    assert install < test, "CI installs TypeScript before the README's test command"

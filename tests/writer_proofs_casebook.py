# ruff: noqa: E501, RUF005  (case data reads best one case to a line)
"""Builds the writer-proofs case files (``conformance/cases/writer-proofs/*.json``).

Fixtures of real installs are verbose JSON, so the cases are written here as code: each case names
its fixture, its steps, its description and the requirements it checks. ``python -m
tests.writer_proofs_casebook`` records the reference's outputs as the expectations and rewrites the
files; every recorded output is then reviewed like hand-written JSON (the messages are checked
against the seed's templates independently by ``tests/test_writer_proofs_messages.py``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inboxspec.conformance.casefiles import case_file_text, share_fixtures
from inboxspec.machines.writer_proofs_driver import run_case

FOLDER = Path(__file__).resolve().parent.parent / "conformance" / "cases" / "writer-proofs"
F = "{fixture}"
Entries = list[dict[str, Any]]


def package(name: Any = "@staix/agent-mem", version: Any = "0.22.0") -> str:
    return json.dumps({"name": name, "version": version})


def install(path: str, version: Any = "0.22.0", *, name: Any = "@staix/agent-mem",
            package_text: str | None = None, omit: Iterable[str] = (), modes: dict[str, str] | None = None,
            extra: Entries | None = None, marker: str = "") -> Entries:
    """A writer install at ``path``: package.json, bin/amem.js, src/index.ts (and ``extra``)."""
    modes = modes or {}
    files = {"package.json": package_text if package_text is not None else package(name, version),
             "bin/amem.js": f"#!/usr/bin/env node\nimport '../src/index.ts';{marker}\n",
             "src/index.ts": f"export const amem = true;{marker}\n"}
    entries: Entries = [{"path": path, "type": "dir", "mode": modes.get(".", "0755")}]
    for name_, text in files.items():
        if name_ in omit:
            continue
        entries.append({"path": f"{path}/{name_}", "type": "file", "text": text,
                        "mode": modes.get(name_, "0755" if name_ == "bin/amem.js" else "0644")})
    return entries + (extra or [])


def pin_of(entries: Entries, root: str) -> str:
    """The pin of an install, measured for real (pins do not depend on where the root is)."""
    from inboxspec.impl.writer_fs import measure_root
    from inboxspec.machines.fixtures import materialised

    with materialised({"entries": entries}) as directory:
        return measure_root(f"{directory}/{root}").pin


def writer(entries: Entries, root: str, version: str = "0.22.0") -> dict[str, str]:
    return {"writerId": f"{F}/{root}", "version": version, "pin": pin_of(entries, root)}


def home(path: str = "home", *, floor: str | None = "0.22.0", receipt: list[str] | None = None,
         locator: dict[str, Any] | None = None, receipt_text: str | None = None,
         formats_text: str | None = None, locator_text: str | None = None) -> Entries:
    entries: Entries = [{"path": path, "type": "dir"}]
    if formats_text is not None or floor is not None:
        entries.append({"path": f"{path}/formats.json", "type": "file",
                        "text": formats_text if formats_text is not None else json.dumps({"readerFloor": floor})})
    if receipt_text is not None or receipt is not None:
        entries.append({"path": f"{path}/setup-receipt.json", "type": "file",
                        "text": receipt_text if receipt_text is not None
                        else json.dumps({"writerRoots": [f"{F}/{r}" for r in receipt or []]})})
    if locator_text is not None or locator is not None:
        entries.append({"path": f"{path}/sync-placement-writer-roots.json", "type": "file",
                        "text": locator_text if locator_text is not None else json.dumps(locator)})
    return entries


def locator(roots: list[str], writers: list[dict[str, str]], renewal: str | None = None) -> dict[str, Any]:
    return {"roots": [f"{F}/{r}" for r in roots], "writers": writers,
            "activation": {"generation": 1, "renewal": renewal}}


CLI = install("cli")
RCPT = install("rcpt", "0.21.0")
DECL = install("decl", "0.22.1")
CLI_V2 = install("cli-v2", "0.22.1", marker=" // v2")
RCPT_V2 = install("rcpt-v2", "0.21.1", marker=" // v2")
DECL_V2 = install("decl-v2", "0.22.2", marker=" // v2")
W_CLI = writer(CLI, "cli")
W_RCPT = writer(RCPT, "rcpt", "0.21.0")
W_DECL = writer(DECL, "decl", "0.22.1")
BASE = CLI + RCPT + DECL


def config(entries: Entries, options: dict[str, bool] | None = None, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"home": f"{F}/home", "own_root": f"{F}/cli", **extra}
    if options:
        result["options"] = options
    result["fixture"] = {"entries": entries}
    return result


def step(event: str, **args: Any) -> dict[str, Any]:
    return {"event": event, "args": args} if args else {"event": event}


def initial(*roots: str) -> dict[str, Any]:
    return step("initial", roots=[r if r.startswith(F) or not r or not r[0].isalpha() else f"{F}/{r}"
                                  for r in roots]) if roots else step("initial")


def swap(first: str, second: str) -> dict[str, Any]:
    return step("swap_paths", first=first, second=second)


def active_world(*, writers: list[dict[str, str]] | None = None, roots: list[str] | None = None,
                 renewal: str | None = None, receipt: list[str] | None = None) -> Entries:
    return BASE + home(receipt=["rcpt"] if receipt is None else receipt,
                       locator=locator(roots if roots is not None else ["cli", "decl", "rcpt"],
                                       writers if writers is not None else [W_CLI, W_DECL, W_RCPT], renewal))


def mid(first: str, second: str, during: str = "before_read") -> dict[str, Any]:
    """A swap armed for a moment inside the next measurement (WRITER-IF-6)."""
    return step("swap_paths", first=first, second=second, during=during)


@dataclass(frozen=True)
class Case:
    slug: str
    description: str
    requirements: list[str]
    config: dict[str, Any]
    steps: list[dict[str, Any]]
    features: list[str]


class Casebook:
    """The cases of one writer-proofs case file, in order: ``build`` records the reference's outputs
    as their expectations, ``write`` rewrites the file. Every writer-proofs casebook builds through this."""

    def __init__(self, name: str, id_prefix: str = "writer-proofs/") -> None:
        self.file = FOLDER / f"{name}.json"
        self.id_prefix = id_prefix
        self.cases: list[Case] = []

    def case(self, slug: str, description: str, requirements: list[str], cfg: dict[str, Any],
             steps: list[dict[str, Any]], features: list[str] | None = None) -> None:
        self.cases.append(Case(slug, description, requirements, cfg, steps, features or []))

    def build(self) -> dict[str, Any]:
        return {"machine": "writer-proofs", "cases": [self.render(c) for c in self.cases]}

    def render(self, case: Case) -> dict[str, Any]:
        result = run_case(case.config, case.steps)
        entry: dict[str, Any] = {"id": f"{self.id_prefix}{case.slug}", "description": case.description,
                                 "requirements": case.requirements}
        if case.features:
            entry["features"] = case.features
        entry["config"] = case.config
        if "config_error" in result:
            entry["expect_config_error"] = result["config_error"]
            entry["steps"] = []
        else:
            entry["steps"] = [{**s, "expect": out} for s, out in zip(case.steps, result["outputs"], strict=True)]
        return entry

    def write(self) -> None:
        write_case_file(self.file, self.build())

    def written_cases(self) -> dict[str, dict[str, Any]]:
        """The cases of the file as it stands, by slug (``tests/test_writer_proofs_casebooks.py``
        checks that it stands as built)."""
        content = json.loads(self.file.read_text(encoding="utf-8"))
        return {c["id"].removeprefix(self.id_prefix): c for c in content["cases"]}


FEATURED = {"option-attest-requires-fences": ["option:attest_requires_fences"],
            "multi-fault-no-context-before-fences": ["option:attest_requires_fences"],
            "multi-fault-three-in-one-step": ["option:attest_requires_fences"],
            "option-compare-writers-by-id": ["option:compare_writers_by_id"],
            "option-by-id-still-sees-change": ["option:compare_writers_by_id"]}
BOOKS: dict[str, Casebook] = {}


def case(file: str, slug: str, description: str, requirements: list[str], cfg: dict[str, Any],
         steps: list[dict[str, Any]]) -> None:
    BOOKS.setdefault(file, Casebook(file)).case(slug, description, requirements, cfg, steps, FEATURED.get(slug))


# -- measurement: every detail code, on real trees ------------------------------------------------

INITIAL_HOME = home(receipt=[])


def measured(slug: str, description: str, requirements: list[str], entries: Entries,
             *roots: str) -> None:
    case("measure", slug, description, ["WRITER-MEAS-1", "WRITER-COMP-2", "WRITER-MSG-2", *requirements],
         config(CLI + entries + INITIAL_HOME), [initial("cli", *roots)])


case("measure", "supported-installs-measure", "Three supported installs measure with their versions and pins in root order",
     ["WRITER-MEAS-6", "WRITER-PIN-1", "WRITER-PIN-2", "WRITER-JSON-2", "WRITER-INIT-1", "WRITER-COMP-5"],
     config(BASE + INITIAL_HOME), [initial("rcpt", "decl", "cli")])
measured("below-minimum", "A 0.20.9 install is below the minimum release", ["WRITER-MEAS-6", "WRITER-VER-1"],
         install("old", "0.20.9"), "old")
measured("wrong-package", "A package with another name is the wrong package", ["WRITER-MEAS-6"],
         install("other", name="@staix/agent-memo"), "other")
measured("wrong-package-non-string-name", "A package whose name is not a string is the wrong package",
         ["WRITER-MEAS-6"], install("other", name=["@staix/agent-mem"]), "other")
measured("wrong-package-array", "A package.json that is a JSON array is the wrong package",
         ["WRITER-MEAS-6"], install("other", package_text="[]"), "other")
for slug, version, text in [
    ("pre-release", "0.21.0-rc.1", "A pre-release version is not a plain release"),
    ("build-metadata", "0.22.0+build.5", "A version with build metadata is not a plain release"),
    ("v-prefix", "v0.21.0", "A version with a v prefix is not a plain release"),
    ("two-components", "0.21", "A version with two components is not a plain release"),
    ("leading-zero", "0.021.0", "A version with a leading zero is not a plain release"),
    ("past-safe-integer", "0.9007199254740992.0", "A component past 2^53 - 1 is not a plain release"),
    ("long-digits", "1" + "0" * 40 + ".0.0", "An absurdly long digit string is not a plain release"),
    ("numeric-version", 22, "A numeric version is not a plain release"),
]:
    measured(f"invalid-version-{slug}", text, ["WRITER-MEAS-6", "WRITER-VER-1"], install("other", version), "other")
measured("largest-safe-version", "A version of 9007199254740991.0.0 is a supported plain release",
         ["WRITER-VER-1"], install("big", "9007199254740991.0.0"), "big")
measured("writable-code", "A group-writable runtime file is writable runtime", ["WRITER-MEAS-5"],
         install("loose", modes={"src/index.ts": "0664"}), "loose")
measured("writable-non-code", "A world-writable non-code file is writable runtime", ["WRITER-MEAS-5"],
         install("loose", extra=[{"path": "loose/README.md", "type": "file", "text": "hi", "mode": "0646"}]), "loose")
measured("writable-directory", "A group-writable directory is writable runtime", ["WRITER-MEAS-5"],
         install("loose", modes={".": "0775"}), "loose")
measured("missing-package-json", "An install without package.json is unreadable", ["WRITER-MEAS-6"],
         install("bare", omit=["package.json"]), "bare")
measured("package-json-directory", "A package.json that is a directory is unreadable", ["WRITER-MEAS-6"],
         install("odd", omit=["package.json"], extra=[{"path": "odd/package.json", "type": "dir"}]), "odd")
measured("package-json-invalid", "A package.json that is not JSON is unreadable", ["WRITER-MEAS-6", "WRITER-JSON-3"],
         install("odd", package_text="{name: amem}"), "odd")
measured("package-json-bom", "A package.json with a byte order mark is unreadable", ["WRITER-JSON-3"],
         install("odd", package_text="\ufeff" + package()), "odd")
measured("package-json-nan", "A package.json holding NaN is unreadable", ["WRITER-JSON-3"],
         install("odd", package_text='{"name": "@staix/agent-mem", "version": "0.22.0", "n": NaN}'), "odd")
measured("package-json-not-utf8", "A package.json with a byte that is not UTF-8 is unreadable", ["WRITER-JSON-3"],
         install("odd", omit=["package.json"], extra=[{"path": "odd/package.json", "type": "file",
                 "base64": "eyJuYW1lIjogIkBzdGFpeC9hZ2VudC1tZW0iLCAidmVyc2lvbiI6ICIwLjIyLjAiLCAieCI6ICL/In0="}]), "odd")
measured("package-json-duplicate-key", "A duplicated key in package.json keeps its last value", ["WRITER-JSON-3"],
         install("dup", package_text='{"name": "other", "name": "@staix/agent-mem", "version": "0.22.0"}'), "dup")
measured("symlink-inside", "A symlink inside the runtime is unsafe", ["WRITER-MEAS-5"],
         install("linked", extra=[{"path": "linked/src/alias.ts", "type": "symlink", "target": "index.ts"}]), "linked")
measured("dangling-symlink", "A dangling symlink inside the runtime is unsafe", ["WRITER-MEAS-5"],
         install("linked", extra=[{"path": "linked/gone", "type": "symlink", "target": "nowhere"}]), "linked")
measured("fifo-inside", "A FIFO inside the runtime is unsafe and never blocks the measurement", ["WRITER-MEAS-5"],
         install("piped", extra=[{"path": "piped/src/pipe", "type": "fifo"}]), "piped")
measured("hard-link", "A hard-linked runtime file is unsafe", ["WRITER-MEAS-5"],
         install("hard", extra=[{"path": "hard/src/copy.ts", "type": "hardlink", "target": "hard/src/index.ts"}]),
         "hard")
measured("setuid-file", "A setuid runtime file is unsafe", ["WRITER-MEAS-5"],
         install("suid", modes={"bin/amem.js": "04755"}), "suid")
measured("missing-bin", "An install without bin/amem.js misses its runtime", ["WRITER-MEAS-6"],
         install("nobin", omit=["bin/amem.js"]), "nobin")
measured("bin-is-directory", "A bin/amem.js that is a directory misses the runtime", ["WRITER-MEAS-6"],
         install("dirbin", omit=["bin/amem.js"], extra=[{"path": "dirbin/bin/amem.js", "type": "dir"}]), "dirbin")
measured("too-deep", "A directory seventeen levels deep exceeds the depth bound", ["WRITER-MEAS-3"],
         install("deep", extra=[{"path": "deep/" + "/".join(["d"] * 17) + "/f.txt", "type": "file", "text": ""}]),
         "deep")
measured("sixteen-levels", "A file sixteen levels below the root is within the depth bound", ["WRITER-MEAS-3"],
         install("deep", extra=[{"path": "deep/" + "/".join(["d"] * 15) + "/f.txt", "type": "file", "text": ""}]),
         "deep")
measured("several-faults", "Several faults in one install report the first in precedence", ["WRITER-MEAS-4"],
         install("worst", "0.20.0", omit=["bin/amem.js"], modes={"src/index.ts": "0666"},
                 extra=[{"path": "worst/link", "type": "symlink", "target": "src"}]), "worst")
measured("wrong-package-before-version", "A wrong package name wins over a bad version", ["WRITER-MEAS-4"],
         install("worst", "v1", name="amem", omit=["src/index.ts"]), "worst")
measured("missing-before-writable", "A missing runtime file wins over a writable one", ["WRITER-MEAS-4"],
         install("worst", omit=["src/index.ts"], modes={"bin/amem.js": "0777"}), "worst")
measured("relative-root", "A relative root is an invalid inventory", ["WRITER-MEAS-2"], [], "./cli")
measured("empty-string-root", "An empty root string is an invalid inventory", ["WRITER-MEAS-2"], [], "")
measured("missing-root", "A root that does not exist is unreadable", ["WRITER-MEAS-2"], [], f"{F}/absent")
measured("dangling-root", "A root that is a dangling symlink is unreadable", ["WRITER-MEAS-2"],
         [{"path": "lost", "type": "symlink", "target": f"{F}/nowhere"}], f"{F}/lost")
measured("file-root", "A root that is a regular file is an invalid inventory", ["WRITER-MEAS-2"],
         [{"path": "plain", "type": "file", "text": "x"}], f"{F}/plain")
measured("symlinked-root", "A root that is a symlink to an install measures at its real path", ["WRITER-MEAS-2"],
         RCPT + [{"path": "current", "type": "symlink", "target": f"{F}/rcpt"}], f"{F}/current")
case("measure", "duplicate-spelling", "Two spellings of one directory report the later index as a duplicate",
     ["WRITER-MEAS-2", "WRITER-CAT-1"], config(CLI + INITIAL_HOME), [initial("cli", f"{F}/cli/../cli")])
case("measure", "nested-roots", "A root nested inside another root is measured as its own install",
     ["WRITER-MEAS-2"], config(CLI + install("cli/vendor/amem") + INITIAL_HOME), [initial("cli", "cli/vendor/amem")])
case("measure", "cli-fault-is-running-cli", "A fault in the running CLI's install refuses in the running CLI category",
     ["WRITER-COMP-2", "WRITER-CAT-1"], config(install("cli", "0.20.0") + INITIAL_HOME), [initial("cli")])
case("measure", "receipt-fault-is-setup-receipt", "A fault in a receipt root refuses in the setup receipt category",
     ["WRITER-COMP-2", "WRITER-CAT-1", "WRITER-HOME-1"],
     config(CLI + install("rcpt", omit=["src/index.ts"]) + home(receipt=["rcpt"])), [initial("cli", "rcpt")])
case("measure", "empty-root-list-is-invalid", "An empty list of roots from the locator is an invalid inventory in a preview",
     ["WRITER-MEAS-3", "WRITER-PREV-2"], config(active_world(roots=[])), [step("preview")])

# -- the initial phase -------------------------------------------------------------------------------

case("initial", "required-roots-by-default", "Without declared roots the running CLI and the receipt roots are measured",
     ["WRITER-INIT-1", "WRITER-INIT-2", "WRITER-REQ-2", "WRITER-HOME-1"],
     config(BASE + home(receipt=["rcpt", "cli"])), [initial()])
case("initial", "no-receipt-file", "Without a setup receipt only the running CLI is required",
     ["WRITER-HOME-1", "WRITER-REQ-2"], config(CLI + home()), [initial()])
case("initial", "cli-not-declared", "Declared roots without the running CLI refuse it as missing",
     ["WRITER-COMP-3"], config(BASE + INITIAL_HOME), [initial("decl")])
case("initial", "receipt-root-not-declared", "Declared roots without a receipt root refuse the setup receipt as missing",
     ["WRITER-COMP-3"], config(BASE + home(receipt=["rcpt"])), [initial("cli", "decl")])
case("initial", "own-root-unreadable", "A running CLI root that does not resolve is unavailable and unreadable",
     ["WRITER-REQ-1", "WRITER-COMP-1"], {**config(BASE + INITIAL_HOME), "own_root": f"{F}/gone"},
     [initial("cli")])
case("initial", "receipt-unreadable", "A setup receipt that is not JSON is unavailable and unreadable",
     ["WRITER-REQ-1", "WRITER-HOME-1"], config(BASE + home(receipt_text="{writerRoots")), [initial()])
case("initial", "receipt-root-unresolvable", "A receipt naming a root that does not resolve is unreadable",
     ["WRITER-HOME-1"], config(BASE + home(receipt=["absent"])), [initial("cli")])
case("initial", "floor-missing", "An initial context without formats.json refuses the home floor as missing",
     ["WRITER-HOME-2", "WRITER-INIT-1"], config(CLI + home(floor=None)), [initial("cli")])
case("initial", "floor-below", "A reader floor below 0.22.0 is unavailable",
     ["WRITER-HOME-2"], config(CLI + home(floor="0.21.9")), [initial("cli")])
case("initial", "floor-not-plain", "A reader floor that is not a plain release is unavailable",
     ["WRITER-HOME-2", "WRITER-VER-1"], config(CLI + home(floor="0.22.0-rc.1")), [initial("cli")])
case("initial", "attest-unchanged", "Attest on unchanged installs returns the writers with the quiescence claim",
     ["WRITER-INIT-5", "WRITER-ATT-1", "WRITER-COMP-4"], config(BASE + home(receipt=["rcpt"])),
     [initial("cli", "rcpt", "decl"), step("attest"), step("attest")])
for slug, root, v2, category in [("cli", "cli", "cli-v2", "running CLI"), ("receipt", "rcpt", "rcpt-v2", "setup receipt"),
                                 ("declared", "decl", "decl-v2", "declared writer")]:
    case("initial", f"attest-after-{slug}-changed",
         f"Attest after the {category} writer changed refuses it as changed in the initial phase",
         ["WRITER-INIT-4", "WRITER-ATT-1", "WRITER-ATT-2", "WRITER-MSG-1"],
         config(BASE + CLI_V2 + RCPT_V2 + DECL_V2 + home(receipt=["rcpt"])),
         [initial("cli", "rcpt", "decl"), swap(root, v2), step("attest"), swap(root, v2), step("attest")])
case("initial", "attest-after-floor-changed", "Attest after the reader floor changed refuses the home floor as changed",
     ["WRITER-INIT-3"], config(CLI + home() + home("home-next", floor="0.23.0")),
     [initial("cli"), swap("home/formats.json", "home-next/formats.json"), step("attest")])
case("initial", "attest-after-identical-replacement", "An identical copy swapped in between two attests is no change",
     ["WRITER-PIN-1", "WRITER-MEAS-7"], config(CLI + install("cli-copy") + home()),
     [initial("cli"), swap("cli", "cli-copy"), step("attest")])
case("initial", "attest-after-mode-change", "A changed file mode between two attests changes the pin",
     ["WRITER-PIN-1"], config(CLI + install("cli-x", modes={"src/index.ts": "0755"}) + home()),
     [initial("cli"), swap("cli", "cli-x"), step("attest")])
case("initial", "attest-after-cli-broken", "Attest after the running CLI broke refuses with the measurement detail",
     ["WRITER-COMP-2", "WRITER-ATT-2"], config(CLI + install("cli-old", "0.20.1") + home()),
     [initial("cli"), swap("cli", "cli-old"), step("attest")])
case("initial", "attest-after-cli-removed", "Attest after the running CLI root vanished refuses it as unavailable",
     ["WRITER-REQ-1", "WRITER-ATT-2"], config(CLI + home() + [{"path": "attic", "type": "dir"}]),
     [initial("cli"), swap("cli", "attic/cli"), step("attest")])
case("initial", "attest-after-receipt-grew", "Attest after the receipt gained a root refuses the setup receipt as missing",
     ["WRITER-COMP-3", "WRITER-ATT-2"], config(BASE + home(receipt=[]) + home("home-next", receipt=["decl"])),
     [initial("cli"), swap("home/setup-receipt.json", "home-next/setup-receipt.json"), step("attest")])
case("initial", "refused-initial-leaves-no-context", "A refused initial phase leaves the session without a context",
     ["WRITER-SES-1"], config(BASE + INITIAL_HOME), [initial("cli"), initial("decl"), step("attest")])

# -- the active phase -------------------------------------------------------------------------------

case("active", "active-matches", "An active context measures the locator's roots and matches its writers",
     ["WRITER-ACT-1", "WRITER-ACT-2", "WRITER-ACT-3", "WRITER-ACT-6", "WRITER-HOME-3", "WRITER-HOME-4"],
     config(active_world()), [step("active"), step("attest")])
case("active", "no-locator", "Without a locator the active phase is unavailable",
     ["WRITER-ACT-1", "WRITER-HOME-3"], config(BASE + home(receipt=["rcpt"])), [step("active")])
case("active", "locator-without-roots", "A locator that records no roots is unavailable",
     ["WRITER-HOME-3"], config(BASE + home(locator={"writers": [], "activation": {"renewal": None}})), [step("active")])
case("active", "locator-invalid", "A locator that breaks its shape is unavailable",
     ["WRITER-HOME-3"], config(BASE + home(locator_text='{"roots": "cli", "activation": {}}')), [step("active")])
case("active", "locator-empty-roots", "A locator with an empty list of roots refuses the running CLI as missing",
     ["WRITER-ACT-1", "WRITER-ACT-2"], config(active_world(roots=[], writers=[])), [step("active")])
case("active", "locator-misses-cli", "A locator without the running CLI refuses it as missing before measuring",
     ["WRITER-ACT-2", "WRITER-ACT-4"], config(active_world(roots=["rcpt"], writers=[W_RCPT])), [step("active")])
case("active", "locator-misses-receipt-root", "A locator without a receipt root refuses the setup receipt as missing",
     ["WRITER-ACT-2"], config(active_world(roots=["cli"], writers=[W_CLI])), [step("active")])
case("active", "floor-checked-first", "The active phase reads the reader floor before the locator",
     ["WRITER-ACT-1", "WRITER-HOME-2"], config(BASE + home(floor=None)), [step("active")])
for slug, root, v2, category in [("cli", "cli", "cli-v2", "running CLI"), ("receipt", "rcpt", "rcpt-v2", "setup receipt"),
                                 ("declared", "decl", "decl-v2", "declared writer")]:
    case("active", f"{slug}-changed-since-locator",
         f"An active context whose {category} writer differs from the locator refuses it as changed",
         ["WRITER-ACT-5", "WRITER-ACT-7", "WRITER-MSG-1"],
         config(active_world() + CLI_V2 + RCPT_V2 + DECL_V2), [swap(root, v2), step("active")])
    case("active", f"active-attest-after-{slug}-changed",
         f"Active attest after the {category} writer changed refuses it in the active phase",
         ["WRITER-ACT-7", "WRITER-ATT-1", "WRITER-SAFE-3"],
         config(active_world() + CLI_V2 + RCPT_V2 + DECL_V2), [step("active"), swap(root, v2), step("attest")])
for state in ("pending", "staging"):
    case("active", f"renewal-{state}-escapes", f"A {state} writer renewal escapes the active construction as itself",
         ["WRITER-ACT-7", "WRITER-HOME-4", "WRITER-MSG-3"], config(active_world(renewal=state)), [step("active")])
    case("active", f"attest-renewal-{state}", f"A {state} writer renewal refuses an active attest in the renewal category",
         ["WRITER-SAFE-2", "WRITER-MSG-1", "WRITER-MSG-3"],
         config(active_world() + home("home-next", receipt=["rcpt"], locator=locator(
             ["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT], state))),
         [step("active"), swap("home/sync-placement-writer-roots.json", "home-next/sync-placement-writer-roots.json"),
          step("attest")])
case("active", "attest-locator-removed", "Active attest after the locator vanished refuses the active locator",
     ["WRITER-ACT-7", "WRITER-SAFE-3"], config(active_world() + [{"path": "attic", "type": "dir"}]),
     [step("active"), swap("home/sync-placement-writer-roots.json", "attic/sync-placement-writer-roots.json"),
      step("attest")])
case("active", "attest-floor-removed", "Active attest after formats.json vanished refuses the home floor as missing",
     ["WRITER-ACT-7", "WRITER-SAFE-3", "WRITER-HOME-2"], config(active_world() + [{"path": "attic", "type": "dir"}]),
     [step("active"), swap("home/formats.json", "attic/formats.json"), step("attest")])
case("active", "attest-cli-broken", "Active attest after the running CLI broke keeps the measurement detail",
     ["WRITER-ACT-7", "WRITER-SAFE-1", "WRITER-SAFE-3"], config(active_world() + install("cli-old", "0.20.1")),
     [step("active"), swap("cli", "cli-old"), step("attest")])
case("active", "new-active-replaces-initial", "An active context replaces a held initial context",
     ["WRITER-SES-1"], config(active_world()), [initial("cli", "rcpt"), step("active")])

# -- the preview -------------------------------------------------------------------------------------

case("preview", "preview-unchanged", "A preview of unchanged installs matches without a claim",
     ["WRITER-PREV-1", "WRITER-PREV-4", "WRITER-PREV-5", "WRITER-PREV-6"], config(active_world()),
     [step("preview"), step("attest")])
case("preview", "preview-changed", "A preview shows a changed writer and blames its category",
     ["WRITER-PREV-4", "WRITER-PREV-5"], config(active_world() + RCPT_V2), [swap("rcpt", "rcpt-v2"), step("preview")])
case("preview", "preview-cli-changed", "A preview blames the running CLI when its writer changed",
     ["WRITER-PREV-5"], config(active_world() + CLI_V2), [swap("cli", "cli-v2"), step("preview")])
case("preview", "preview-missing-and-added", "A preview of other roots shows missing and added writers",
     ["WRITER-PREV-3", "WRITER-PREV-4", "WRITER-PREV-5"], config(active_world() + install("new")),
     [step("preview", requested=[f"{F}/decl", f"{F}/new"])])
case("preview", "preview-unverified", "A preview whose measurement fails leaves every writer unverified",
     ["WRITER-PREV-2"], config(active_world() + install("cli-old", "0.20.1")),
     [swap("cli", "cli-old"), step("preview")])
case("preview", "preview-without-locator", "A preview without a locator is refused as unavailable",
     ["WRITER-PREV-1"], config(BASE + home()), [step("preview")])
case("preview", "preview-empty-request", "An empty requested list previews the locator's roots, as its absence does",
     ["WRITER-IF-2", "WRITER-PREV-1"], config(active_world()), [step("preview", requested=[]), step("preview")])
case("preview", "preview-keeps-context", "A preview leaves the held context as it is",
     ["WRITER-PREV-6"], config(active_world()), [step("active"), step("preview"), step("attest")])

# -- fences, options and findings ------------------------------------------------------------------

case("fences", "fences-toggle", "Holding and releasing the fences leaves the context as it is",
     ["WRITER-SES-2"], config(CLI + home()),
     [step("hold_fences"), initial("cli"), step("release_fences"), step("attest")])
case("fences", "seed-attests-without-fences", "Attest without the fences returns the quiescence claim (WRITER-F1)",
     ["WRITER-SES-2", "WRITER-INIT-5"], config(CLI + home()), [initial("cli"), step("attest")])
case("fences", "option-attest-requires-fences", "With attest_requires_fences an unfenced attest is an error",
     ["WRITER-OPT-1", "WRITER-IF-4", "WRITER-IF-5"], config(CLI + home(), {"attest_requires_fences": True}),
     [initial("cli"), step("attest"), step("hold_fences"), step("attest"), step("release_fences"), step("attest")])
REORDERED = active_world(writers=[W_RCPT, W_CLI, W_DECL])
case("fences", "seed-writer-order-refuses", "A locator listing unchanged writers in another order refuses as changed",
     ["WRITER-ACT-5", "WRITER-JSON-1"], config(REORDERED), [step("active")])
case("fences", "option-compare-writers-by-id", "With compare_writers_by_id a reordered locator matches",
     ["WRITER-OPT-2"], config(REORDERED, {"compare_writers_by_id": True}), [step("active"), step("attest")])
case("fences", "option-by-id-still-sees-change", "With compare_writers_by_id a changed writer still refuses",
     ["WRITER-OPT-2", "WRITER-ACT-5"], config(active_world(writers=[W_RCPT, W_CLI, W_DECL]) + DECL_V2,
                                              {"compare_writers_by_id": True}),
     [swap("decl", "decl-v2"), step("active")])

# -- invalid input ---------------------------------------------------------------------------------

for slug, cfg, text in [
    ("unknown-key", {**config(CLI + home()), "max_streak": 3}, "An unknown config key is an invalid config"),
    ("missing-home", {k: v for k, v in config(CLI + home()).items() if k != "home"}, "A config without home is invalid"),
    ("non-string-root", {**config(CLI + home()), "own_root": 7}, "A non-string own_root is an invalid config"),
    ("unknown-option", config(CLI + home(), {"attest_faster": True}), "An unknown option is an invalid config"),
    ("non-boolean-option", {**config(CLI + home()), "options": {"attest_requires_fences": "yes"}},
     "A non-boolean option is an invalid config"),
    # null never stands for a key's default (WRITER-IF-1, the config table's null column).
    ("null-home", {**config(CLI + home()), "home": None}, "A null home is an invalid config"),
    ("null-options", {**config(CLI + home()), "options": None}, "A null options object is an invalid config"),
]:
    case("invalid", f"config-{slug}", text, ["WRITER-ERR-1", "WRITER-IF-1"], cfg, [])
case("invalid", "bad-arguments", "Bad arguments are typed errors that change nothing",
     ["WRITER-ERR-2", "WRITER-IF-2", "WRITER-IF-5", "WRITER-IF-3"], config(CLI + home()),
     [initial("cli"), step("initial", roots=None), step("initial", roots=f"{F}/cli"), step("initial", roots=[7]),
      step("preview", requested={"a": 1}), step("attest", now=1), step("attest")])
case("invalid", "attest-without-context", "Attest without a context is a no_context error",
     ["WRITER-ERR-3"], config(CLI + home()), [step("attest")])
case("invalid", "multi-fault-three-in-one-step", "An extra argument is reported before no context and unheld fences",
     ["WRITER-IF-4", "WRITER-OPT-1"], config(CLI + home(), {"attest_requires_fences": True}), [step("attest", roots=[])])
case("invalid", "multi-fault-extra-argument-first", "An extra argument is reported before a bad roots list",
     ["WRITER-IF-4"], config(CLI + home()), [step("initial", roots=None, fast=True)])
case("invalid", "multi-fault-no-context-before-fences", "Attest with no context and no fences reports no_context",
     ["WRITER-IF-4", "WRITER-OPT-1"], config(CLI + home(), {"attest_requires_fences": True}), [step("attest")])
case("invalid", "swap-moment-null", "A null swap moment is a bad argument, not a swap made now",
     ["WRITER-IF-6", "WRITER-ERR-2", "WRITER-IF-5"], config(CLI + install("cli-v2", "0.22.1") + home()),
     [initial("cli"), step("swap_paths", first="cli", second="cli-v2", during=None), step("attest")])
case("invalid", "swap-is-harness-only", "A swap changes the fixture and nothing else",
     ["WRITER-SES-3", "WRITER-IF-6"], config(CLI + install("cli-v2", "0.22.1") + home()),
     [initial("cli"), swap("cli", "cli-v2"), initial("cli")])

def build() -> dict[str, dict[str, Any]]:
    return {file: book.build() for file, book in BOOKS.items()}


def write_case_file(path: Path, content: dict[str, Any]) -> None:
    """Write a built case file; fixtures that several cases repeat are written once and referenced
    (PROTO-FIX-4). Every writer-proofs casebook writes through this."""
    path.write_text(case_file_text(share_fixtures(content), indent=1), encoding="utf-8")


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for book in BOOKS.values():
        book.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())

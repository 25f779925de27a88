# ruff: noqa: E501, RUF005  (case data reads best one case to a line)
"""Builds ``conformance/cases/writer-proofs/mutants.json``: the cases that kill the reference's
mutants no other bundled case kills (``benchmarks/mutation_score.py writer-proofs``): the edges of
every bound a fixture can reach, odd spellings of the running CLI and receipt roots, shapes of the
home's files, and the defaults an active refusal takes.

``python -m tests.writer_proofs_mutants_casebook`` records the reference's outputs as the
expectations and rewrites that one file. Each case also carries the outcome it exists for, written
by hand from spec/writer-proofs.md: the build fails when a recorded output is not that outcome, so a
recording that drifted from the spec is never written.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.writer_proofs_casebook import (
    BASE,
    CLI,
    DECL,
    INITIAL_HOME,
    W_CLI,
    W_DECL,
    W_RCPT,
    Casebook,
    F,
    active_world,
    config,
    home,
    initial,
    install,
    locator,
    package,
    step,
    swap,
    write_case_file,
)

BOOK = Casebook("mutants")
FILE = BOOK.file

# The outcome of a case's last step: ("refusal", category, cause, detail, phase), ("measured", roots),
# ("attested",), ("renewal", state) or ("error", code).
Outcome = tuple[Any, ...]
INTENDED: list[tuple[str, Outcome]] = []  # (slug, outcome), in the order of BOOK.cases


def case(slug: str, description: str, requirements: list[str], cfg: dict[str, Any],
         steps: list[dict[str, Any]], intended: Outcome, features: list[str] | None = None) -> None:
    BOOK.case(slug, description, requirements, cfg, steps, features)
    INTENDED.append((slug, intended))


def refused(category: str, cause: str, detail: str | None, phase: str = "initial") -> Outcome:
    return ("refusal", category, cause, detail, phase)


def outcome(output: dict[str, Any]) -> Outcome:
    """What one recorded output says, in the terms of ``Outcome``."""
    if "refusal" in output:
        refusal = output["refusal"]
        return ("refusal", refusal["category"], refusal["cause"], refusal["detail"], refusal["phase"])
    if "measurement" in output:
        return ("measured", [row["root"] for row in output["measurement"]["roots"]])
    if "attestation" in output:
        return ("attested",)
    if "renewal" in output:
        return ("renewal", output["renewal"]["state"])
    if "error" in output:
        return ("error", output["error"])
    return ("other", sorted(output))


# -- WRITER-MEAS-3: the edges of the bounds -------------------------------------------------------

MEAS_3 = ["WRITER-MEAS-3", "WRITER-MEAS-1"]
# 32 spellings of one root are within the bound: the second is a duplicate (WRITER-MEAS-2).
case("thirty-two-roots", "Thirty-two roots are within the bound: the second spelling of the running CLI is a duplicate at index 1",
     MEAS_3 + ["WRITER-MEAS-2"], config(CLI + INITIAL_HOME), [initial(*["cli"] * 32)],
     refused("running CLI", "unavailable", "invalid-inventory"))
case("thirty-three-roots", "Thirty-three roots exceed the bound before any is looked at",
     MEAS_3, config(CLI + INITIAL_HOME), [initial(*["cli"] * 33)],
     refused("declared writer", "unavailable", "bound"))

# An entry exactly 17 levels below the root (the root's children are at level 1).
DEEP = "deep/" + "/".join(["d"] * 16)
case("entry-seventeen-levels-down", "A file seventeen levels below the root, in the deepest of sixteen directories, exceeds the depth bound",
     MEAS_3, config(CLI + install("deep", extra=[{"path": f"{DEEP}/f.txt", "type": "file", "text": ""}]) + INITIAL_HOME),
     [initial("cli", "deep")], refused("declared writer", "unavailable", "bound"))
case("empty-directory-sixteen-levels-down", "An empty directory sixteen levels below the root is within the depth bound",
     MEAS_3, config(CLI + install("deep", extra=[{"path": DEEP, "type": "dir"}]) + INITIAL_HOME),
     [initial("cli", "deep")], ("measured", [f"{F}/cli", f"{F}/deep"]))

# 64 MiB of regular files, within the fixture's 8 MiB of contents: one file outside the root and
# LINKS hard links to it inside; the size of a regular file counts for every name it has.
# WARNING: MAX_BYTES in impl/writer_fs.py and the Node port is the bound these sizes meet.
MAX_BYTES = 64 * 1024 * 1024
LINKS = 1024
RUNTIME_BYTES = len(package().encode()) + len(b"#!/usr/bin/env node\nimport '../src/index.ts';\n") + len(b"export const amem = true;\n")
LINKED_BYTES = (MAX_BYTES - RUNTIME_BYTES) // LINKS
PAD_BYTES = MAX_BYTES - RUNTIME_BYTES - LINKS * LINKED_BYTES
BIG = (install("big")
       + [{"path": "filler/blob", "type": "file", "text": "x" * LINKED_BYTES, "mode": "0644"}]
       + [{"path": f"big/blob/{n:04}", "type": "hardlink", "target": "filler/blob"} for n in range(LINKS)]
       + [{"path": "big/pad", "type": "file", "text": "p" * PAD_BYTES, "mode": "0644"},
          {"path": "spare/one", "type": "file", "text": "1", "mode": "0644"}])
BIG_CONFIG = {**config(BIG + INITIAL_HOME), "own_root": f"{F}/big"}
case("bytes-at-the-bound", "A root holding exactly 67 108 864 bytes of regular files (a file's size counts for each of its hard links) is within the bound: its hard links are unsafe",
     MEAS_3 + ["WRITER-MEAS-4", "WRITER-MEAS-5"], BIG_CONFIG, [initial("big")],
     refused("running CLI", "unavailable", "unsafe-runtime"))
case("bytes-one-over-the-bound", "One byte more than 67 108 864 bytes of regular files is bound, which ranks before the unsafe hard links",
     MEAS_3 + ["WRITER-MEAS-4"], BIG_CONFIG, [swap("big/one", "spare/one"), initial("big")],
     refused("running CLI", "unavailable", "bound"))


# -- WRITER-REQ-1, WRITER-HOME-1: the running CLI and receipt roots are resolved like any root ------

case("own-root-relative", "A relative running CLI root (\".\") does not resolve, though the working directory exists",
     ["WRITER-REQ-1", "WRITER-MEAS-2"], {**config(CLI + INITIAL_HOME), "own_root": "."}, [initial("cli")],
     refused("running CLI", "unavailable", "unreadable"))
case("receipt-root-relative", "A relative receipt root (\".\") does not resolve: the receipt is unreadable",
     ["WRITER-HOME-1", "WRITER-MEAS-2"], config(CLI + home(receipt_text=json.dumps({"writerRoots": ["."]}))),
     [initial("cli")], refused("setup receipt", "unavailable", "unreadable"))
case("receipt-roots-a-string", "A receipt whose writerRoots is the string \"/\", not a list, is unreadable",
     ["WRITER-HOME-1"], config(CLI + home(receipt_text=json.dumps({"writerRoots": "/"}))),
     [initial("cli")], refused("setup receipt", "unavailable", "unreadable"))
case("receipt-roots-an-object", "A receipt whose writerRoots is an object keyed by a root, not a list, is unreadable",
     ["WRITER-HOME-1"], config(CLI + home(receipt_text=json.dumps({"writerRoots": {f"{F}/cli": True}}))),
     [initial("cli")], refused("setup receipt", "unavailable", "unreadable"))


# -- WRITER-HOME-3: the locator's activation ---------------------------------------------------------

ACTIVE = refused("active locator", "unavailable", None, "active")
ACTIVATIONS: list[tuple[str, str, Any]] = [
    ("locator-activation-absent", "A locator without activation breaks its shape: unavailable", None),
    ("locator-activation-a-list", "A locator whose activation is a list breaks its shape: unavailable", []),
    ("locator-renewal-unknown", "A locator whose activation.renewal is neither null, pending nor staging breaks its shape: unavailable", {"renewal": "done"}),
]
for slug, description, activation in ACTIVATIONS:
    document: dict[str, Any] = {"roots": [f"{F}/cli"], "writers": []}
    if activation is not None:
        document["activation"] = activation
    case(slug, description, ["WRITER-HOME-3", "WRITER-ACT-1"], config(CLI + home(receipt=[], locator_text=json.dumps(document))),
         [step("active")], ACTIVE)
case("locator-renewal-absent", "A locator whose activation has no renewal key is in shape, as renewal null is",
     ["WRITER-HOME-3", "WRITER-HOME-4", "WRITER-ACT-1"],
     config(CLI + home(receipt=[], locator_text=json.dumps({"roots": [f"{F}/cli"], "writers": [], "activation": {}}))),
     [step("active")], refused("running CLI", "changed", "changed", "active"))

# -- WRITER-VER-1: a plain release of the longest spelling -------------------------------------------

LONGEST = ".".join(["9007199254740991"] * 3)
assert len(LONGEST) == 50
case("version-of-fifty-characters", "A version of three 16-digit numbers (50 characters, the longest plain release) is supported",
     ["WRITER-VER-1", "WRITER-MEAS-6"], config(install("cli", LONGEST) + INITIAL_HOME), [initial("cli")],
     ("measured", [f"{F}/cli"]))
case("floor-of-fifty-characters", "A reader floor of three 16-digit numbers (50 characters) is a plain release above 0.22.0",
     ["WRITER-VER-1", "WRITER-HOME-2"], config(CLI + home(floor=LONGEST, receipt=[])), [initial("cli")],
     ("measured", [f"{F}/cli"]))


# -- refusals of the active phase carry the phase active (WRITER-ACT-*) -----------------------------

case("active-own-root-unresolvable", "An active read whose running CLI root does not resolve refuses it as unavailable, unreadable, in phase active",
     ["WRITER-REQ-1", "WRITER-ACT-1", "WRITER-ACT-2"], {**config(active_world()), "own_root": f"{F}/gone"},
     [step("active")], refused("running CLI", "unavailable", "unreadable", "active"))
case("active-receipt-unreadable", "An active read whose setup receipt is not JSON refuses the setup receipt in phase active",
     ["WRITER-REQ-1", "WRITER-HOME-1", "WRITER-ACT-2"],
     config(BASE + home(receipt_text="{writerRoots", locator=locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT]))),
     [step("active")], refused("setup receipt", "unavailable", "unreadable", "active"))
case("active-cli-wrong-package", "An active read whose running CLI install has another package name refuses the running CLI, in phase active",
     ["WRITER-COMP-2", "WRITER-CAT-1", "WRITER-ACT-7"], config(active_world() + install("cli-other", name="amem")),
     [swap("cli", "cli-other"), step("active")], refused("running CLI", "unavailable", "wrong-package", "active"))

# -- WRITER-OPT-2 with a writer id no install can have -------------------------------------------

LONE = "\ud800"  # a lone surrogate: a locator may hold one (JSON escapes it), no real path can
ODD_WRITERS = [W_CLI, W_DECL, {**W_RCPT, "writerId": f"{F}/rcpt{LONE}"}]
case("by-id-lone-surrogate-writer", "With compare_writers_by_id a locator writer id holding a lone surrogate is compared, and differs from every measured writer",
     ["WRITER-OPT-2", "WRITER-ACT-5", "WRITER-JSON-2"],
     config(active_world(writers=ODD_WRITERS), {"compare_writers_by_id": True}), [step("active")],
     refused("setup receipt", "changed", "changed", "active"), ["option:compare_writers_by_id"])

# -- the running CLI category for the faults of its package.json (WRITER-CAT-1) -------------------

for slug, fault, entries in [
    ("wrong-package", "another package name", install("cli", name="amem")),
    ("unreadable", "no package.json", install("cli", omit=["package.json"])),
    ("invalid-version", "a pre-release version", install("cli", "0.22.0-rc.1")),
]:
    case(f"cli-second-root-{slug}", f"A running CLI install with {fault}, measured second, refuses in the running CLI category",
         ["WRITER-COMP-2", "WRITER-CAT-1", "WRITER-MEAS-1"], config(entries + DECL + INITIAL_HOME),
         [initial("decl", "cli")], refused("running CLI", "unavailable", slug))

# -- a case without a fixture (WRITER-IF-1: fixture is optional) ----------------------------------

case("no-fixture", "A case without a fixture runs on paths outside any fixture: a running CLI root below /dev/null does not resolve",
     ["WRITER-IF-1", "WRITER-REQ-1"], {"home": "/dev/null/home", "own_root": "/dev/null/cli"}, [initial()],
     refused("running CLI", "unavailable", "unreadable"))


# -- WRITER-JSON-3: the depth counted past the shortcut, brackets inside strings ---------------------


def siblings_then_nested(levels: int) -> str:
    """package.json with closed sibling arrays and objects first, then an array ``levels`` deep."""
    return ('{"name": "@staix/agent-mem", "version": "0.22.0", "a": [[]], "b": {"c": {}}, "x": '
            + "[" * levels + "]" * levels + "}")


case("package-json-depth-64-after-siblings", "A package.json 64 deep that holds more than 64 brackets in all measures: closed siblings do not add to the depth",
     ["WRITER-JSON-3", "WRITER-MEAS-6"], config(install("cli", package_text=siblings_then_nested(63)) + INITIAL_HOME),
     [initial("cli")], ("measured", [f"{F}/cli"]))
case("package-json-depth-65-after-siblings", "A package.json 65 deep after closed siblings is unreadable: closing a sibling does not lower the depth below its level",
     ["WRITER-JSON-3", "WRITER-MEAS-6"], config(install("cli", package_text=siblings_then_nested(64)) + INITIAL_HOME),
     [initial("cli")], refused("running CLI", "unavailable", "unreadable"))
case("package-json-brackets-in-a-string", "Brackets inside a string of package.json never count towards its depth",
     ["WRITER-JSON-3", "WRITER-MEAS-6"],
     config(install("cli", package_text='{"name": "@staix/agent-mem", "version": "0.22.0", "x": "' + "[{" * 70 + '"}') + INITIAL_HOME),
     [initial("cli")], ("measured", [f"{F}/cli"]))
# Its first '"' opens a string that holds every bracket and an escaped quote: a depth scan that
# missed the string at the text's very start, and took the escaped quote for an opening one, would
# count 65 and call the file unreadable.
case("package-json-string-of-brackets-is-not-nested", "A package.json that is one JSON string holding 65 [ and an escaped quote is read (brackets in a string are no nesting), and is not an object: wrong-package",
     ["WRITER-JSON-3", "WRITER-MEAS-6"], config(install("cli", package_text='"' + "[" * 65 + '\\""') + INITIAL_HOME),
     [initial("cli")], refused("running CLI", "unavailable", "wrong-package"))
case("formats-not-utf8", "A floor file holding a byte that is not UTF-8 is unreadable",
     ["WRITER-JSON-3", "WRITER-HOME-2"],
     config(CLI + home(floor=None, receipt=[]) + [{"path": "home/formats.json", "type": "file", "base64": "eyJyZWFkZXJGbG9vciI6ICIwLjIyLjAiLCAieCI6ICL/In0="}]),
     [initial("cli")], refused("home floor", "unavailable", None, "active"))

# -- WRITER-HOME-4: a locator that changed only in a number -------------------------------------------

# The same writers before and after: only the number differs, so only the still-current check sees it.
for slug, before, after in [("integer", '"generation": 1', '"generation": 2'), ("fraction", '"generation": 1.5', '"generation": 2.5')]:
    text = json.dumps(locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT])).replace('"generation": 1', before)
    assert before in text
    case(f"locator-{slug}-changed", f"A locator whose activation generation changes (to a {slug}) while the roots are measured is no longer current: changed",
         ["WRITER-HOME-4", "WRITER-ACT-6", "WRITER-JSON-1", "WRITER-IF-6"],
         config(BASE + home(receipt=["rcpt"], locator_text=text)
                + [{"path": "home-next", "type": "dir"},
                   {"path": "home-next/sync-placement-writer-roots.json", "type": "file", "text": text.replace(before, after)}]),
         [step("swap_paths", first="home/sync-placement-writer-roots.json", second="home-next/sync-placement-writer-roots.json", during="before_read"),
          step("active")],
         refused("active locator", "changed", None, "active"))

# -- WRITER-MEAS-5: the read pass opens without following links and without blocking --------------

for slug, entry, detail in [
    ("symlink", {"path": "spare/index.ts", "type": "symlink", "target": "../bin/amem.js"}, "unreadable"),
    ("fifo", {"path": "spare/index.ts", "type": "fifo"}, "changed"),
]:
    case(f"{slug}-swapped-in-before-read", f"A {slug} swapped in for src/index.ts after the walk is never followed or waited on: {detail}",
         ["WRITER-MEAS-5", "WRITER-MEAS-7", "WRITER-IF-6"],
         config(CLI + [{"path": "spare", "type": "dir"}, entry] + INITIAL_HOME),
         [step("swap_paths", first="cli/src/index.ts", second="spare/index.ts", during="before_read"), initial("cli")],
         refused("running CLI", "changed" if detail == "changed" else "unavailable", detail))


# -- WRITER-IF-6: the harness step's own arguments ----------------------------------------------------

case("swap-with-one-non-string-path", "A swap whose first path is a number (the second a valid path) is a bad argument, and moves nothing",
     ["WRITER-IF-6", "WRITER-ERR-2"], config(CLI + install("cli-v2", "0.22.1") + INITIAL_HOME),
     [step("swap_paths", first=7, second="cli-v2"), initial("cli")], ("measured", [f"{F}/cli"]))


def build() -> dict[str, Any]:
    content = BOOK.build()
    for entry, (slug, intended) in zip(content["cases"], INTENDED, strict=True):
        if "expect_config_error" in entry:
            recorded: Outcome = ("config_error", entry["expect_config_error"])
        else:
            recorded = outcome(entry["steps"][-1]["expect"])
        if recorded != intended:
            raise AssertionError(f"{slug}: the reference gives {recorded}, the spec says {intended}")
    return content


def main() -> int:
    write_case_file(FILE, build())
    return 0


if __name__ == "__main__":
    sys.exit(main())

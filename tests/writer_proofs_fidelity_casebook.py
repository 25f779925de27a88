# ruff: noqa: E501, RUF005  (case data reads best one case to a line)
"""Builds ``conformance/cases/writer-proofs/fidelity.json``: the cases that pin the readings a port
could otherwise choose either way (fault order under a change during a measurement, resolution of
odd root spellings, JSON depth and range, the home's files, UTF-8 order, the initial attest's phase).

``python -m tests.writer_proofs_fidelity_casebook`` records the reference's outputs as the
expectations and rewrites that one file; every recorded output is then reviewed like hand-written
JSON, and ``tests/test_writer_proofs_fidelity.py`` checks the outcomes each case exists for.
"""

from __future__ import annotations

import json
import sys

from tests.writer_proofs_casebook import (
    CLI,
    INITIAL_HOME,
    W_CLI,
    W_DECL,
    W_RCPT,
    Casebook,
    Entries,
    F,
    active_world,
    config,
    home,
    initial,
    install,
    locator,
    mid,
    step,
    swap,
)

BOOK = Casebook("fidelity")
FILE = BOOK.file
case = BOOK.case
build = BOOK.build
ONE_MIB = 1024 * 1024


def spare(path: str, text: str, mode: str = "0644") -> Entries:
    """A file outside every root, for a swap to move into one."""
    return [{"path": path.rsplit("/", 1)[0], "type": "dir", "mode": "0755"},
            {"path": path, "type": "file", "text": text, "mode": mode}]


# -- point 6: a ranked fault wins over a change seen while reading (WRITER-MEAS-4) ---------------

CHANGED_INDEX = spare("spare/index.ts", "export const amem = false;\n")
CHANGE_INDEX = mid("cli/src/index.ts", "spare/index.ts")
MEAS_4 = ["WRITER-MEAS-4", "WRITER-MEAS-7", "WRITER-IF-6", "WRITER-COMP-2"]

RANKED: list[tuple[str, str, Entries]] = [
    ("writable-runtime", "a world-writable README", install("cli", extra=[
        {"path": "cli/README.md", "type": "file", "text": "# amem\n", "mode": "0666"}])),
    ("missing-runtime", "no bin/amem.js", install("cli", omit=["bin/amem.js"])),
    ("wrong-package", "another package name", install("cli", name="amem")),
    ("invalid-version", "a pre-release version", install("cli", "0.21.0-rc.1")),
    ("below-minimum", "a release below 0.21.0", install("cli", "0.20.9")),
    ("unreadable", "no package.json", install("cli", omit=["package.json"])),
    ("unsafe-runtime", "a symlink inside", install("cli", extra=[
        {"path": "cli/src/alias.ts", "type": "symlink", "target": "index.ts"}])),
]
for detail, fault, entries in RANKED:
    case(f"mid-read-change-with-{detail}",
         f"An install with {fault} whose src/index.ts changes while the files are read reports {detail}, not changed",
         MEAS_4, config(entries + CHANGED_INDEX + INITIAL_HOME), [CHANGE_INDEX, initial("cli")])
case("mid-read-change-alone", "An install with no ranked fault whose src/index.ts changes while the files are read is changed",
     MEAS_4, config(CLI + CHANGED_INDEX + INITIAL_HOME), [CHANGE_INDEX, initial("cli")])
# The same size as the install's own package.json, so only the descriptor's identity shows the change.
WRONG_PACKAGE = spare("spare/package.json", json.dumps({"name": "@staix/agent-mex", "version": "0.22.0"}))
case("mid-read-change-of-package-json", "A package.json that changes while the files are read is no evidence: changed, not the new file's wrong-package",
     MEAS_4 + ["WRITER-MEAS-6"], config(CLI + WRONG_PACKAGE + INITIAL_HOME),
     [mid("cli/package.json", "spare/package.json"), initial("cli")])
case("mid-read-change-of-package-json-with-writable-runtime", "A changed package.json does not hide a fault of the walk",
     MEAS_4, config(install("cli", modes={"src/index.ts": "0664"}) + WRONG_PACKAGE + INITIAL_HOME),
     [mid("cli/package.json", "spare/package.json"), initial("cli")])

# -- point 8: WRITER-MEAS-7 during and between measurements, WRITER-ATT-2, WRITER-JSON-2 ----------

IDENTICAL_INDEX = spare("spare/index.ts", "export const amem = true;\n")
case("identical-replacement-before-restat", "An identical copy swapped in after the read pass, before the second stat pass, is changed",
     ["WRITER-MEAS-7", "WRITER-IF-6"], config(CLI + IDENTICAL_INDEX + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts", "before_restat"), initial("cli")])
case("identical-replacement-before-read", "An identical copy swapped in after the walk, before the read pass, is changed",
     ["WRITER-MEAS-7", "WRITER-IF-6"], config(CLI + IDENTICAL_INDEX + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts"), initial("cli")])
case("identical-file-between-measurements", "An identical copy of one file swapped in between two measurements changes no pin",
     ["WRITER-MEAS-7", "WRITER-PIN-1", "WRITER-INIT-5"], config(CLI + IDENTICAL_INDEX + INITIAL_HOME),
     [initial("cli"), swap("cli/src/index.ts", "spare/index.ts"), step("attest")])
case("mid-measurement-swap-waits-for-its-moment", "A swap armed for the second stat pass is not performed by a root that fails before it, but by the next root measured",
     ["WRITER-IF-6", "WRITER-MEAS-7"],
     config(CLI + install("cli-old", "0.20.9") + IDENTICAL_INDEX + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts", "before_restat"), initial("cli-old"), initial("cli")])

case("receipt-changed-during-measurement", "A setup receipt rewritten while the roots are measured refuses setup receipt, changed",
     ["WRITER-COMP-4", "WRITER-IF-6"],
     config(CLI + INITIAL_HOME + [{"path": "home-next", "type": "dir"},
                                  {"path": "home-next/setup-receipt.json", "type": "file", "text": json.dumps({"writerRoots": [f"{F}/cli"]})}]),
     [mid("home/setup-receipt.json", "home-next/setup-receipt.json", "before_restat"), initial("cli")])
case("running-cli-moved-during-measurement", "A running CLI root (a symlink) repointed while the roots are measured refuses running CLI, changed",
     ["WRITER-COMP-4", "WRITER-IF-6"],
     {**config(CLI + install("cli-v2", "0.22.1") + INITIAL_HOME
               + [{"path": "current", "type": "symlink", "target": f"{F}/cli"},
                  {"path": "next", "type": "dir"}, {"path": "next/current", "type": "symlink", "target": f"{F}/cli-v2"}]),
      "own_root": f"{F}/current"},
     [mid("current", "next/current", "before_restat"), initial("current")])

ASIDE = [{"path": "aside", "type": "dir"}]
case("initial-attest-floor-gone-is-initial", "The floor reader's refusal reaches the initial attest in phase initial: safeRefusal rebuilds it",
     ["WRITER-ATT-2", "WRITER-SAFE-3", "WRITER-HOME-2"], config(CLI + INITIAL_HOME + ASIDE),
     [initial("cli"), swap("home/formats.json", "aside/formats.json"), step("attest")])
case("initial-attest-floor-lowered-is-initial", "A floor below 0.22.0 at attest is refused in phase initial",
     ["WRITER-ATT-2", "WRITER-SAFE-3", "WRITER-HOME-2"],
     config(CLI + INITIAL_HOME + home("home-low", floor="0.21.0")),
     [initial("cli"), swap("home/formats.json", "home-low/formats.json"), step("attest")])

FULLWIDTH, EMOJI = "\uff21", "\U0001f600"  # U+FF21 sorts before U+1F600 in UTF-8, after it in UTF-16
case("utf8-order-beyond-the-bmp", "Roots and pin entries order by UTF-8 bytes: U+FF21 before U+1F600, where UTF-16 order is the reverse",
     ["WRITER-JSON-2", "WRITER-PIN-1", "WRITER-PIN-2"],
     config(install("cli", extra=[{"path": f"cli/src/{EMOJI}.ts", "type": "file", "text": "1\n", "mode": "0644"},
                                  {"path": f"cli/src/{FULLWIDTH}.ts", "type": "file", "text": "2\n", "mode": "0644"}])
            + install(f"decl-{EMOJI}", "0.22.1") + install(f"decl-{FULLWIDTH}", "0.22.2") + INITIAL_HOME),
     [initial("cli", f"decl-{EMOJI}", f"decl-{FULLWIDTH}")])

# -- point 7: odd root spellings, JSON depth, nested roots ----------------------------------------

case("root-dotdot-after-file", "A root spelled through a regular file and '..' does not resolve (the kernel's ENOTDIR), it is no second spelling of the install",
     ["WRITER-MEAS-2"], config(CLI + INITIAL_HOME), [initial("cli", f"{F}/cli/package.json/..")])
case("own-root-dotdot-after-file", "A running CLI root spelled through a regular file and '..' does not resolve",
     ["WRITER-MEAS-2", "WRITER-REQ-1"], {**config(CLI + INITIAL_HOME), "own_root": f"{F}/cli/package.json/.."},
     [initial("cli")])
case("root-trailing-slash-after-file", "A root naming a regular file with a trailing slash does not resolve",
     ["WRITER-MEAS-2"], config(CLI + INITIAL_HOME), [initial("cli", f"{F}/cli/package.json/")])
case("root-with-nul", "A root holding a NUL character is an invalid inventory at its index",
     ["WRITER-MEAS-2"], config(CLI + install("decl", "0.22.1") + INITIAL_HOME), [initial("cli", f"{F}/decl\u0000")])
case("own-root-with-nul", "A running CLI root holding a NUL character does not resolve",
     ["WRITER-MEAS-2", "WRITER-REQ-1"], {**config(CLI + INITIAL_HOME), "own_root": f"{F}/cli\u0000"},
     [initial("cli")])


def nested_package(depth: int) -> str:
    """package.json whose deepest array is ``depth`` levels down (the object itself is level 1)."""
    return '{"name": "@staix/agent-mem", "version": "0.22.0", "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


for depth, outcome in [(64, "measures"), (65, "is unreadable"), (5000, "is unreadable, with no recursion trouble")]:
    case(f"package-json-depth-{depth}", f"A package.json nested {depth} levels deep {outcome} (the limit is 64)",
         ["WRITER-JSON-3", "WRITER-MEAS-6"], config(install("cli", package_text=nested_package(depth)) + INITIAL_HOME),
         [initial("cli")])
case("formats-depth-65", "A home file nested 65 levels deep is unreadable",
     ["WRITER-JSON-3", "WRITER-HOME-2"],
     config(CLI + home(formats_text='{"readerFloor": "0.22.0", "x": ' + "[" * 64 + "]" * 64 + "}", receipt=[])),
     [initial("cli")])

INNER_CHANGE = spare("spare/index.ts", "export const inner = 2;\n")
case("nested-root-belongs-to-both", "A root inside another is its own install and part of the enclosing root's inventory: a change inside it changes both",
     ["WRITER-MEAS-2", "WRITER-PIN-1", "WRITER-INIT-4"],
     config(CLI + install("cli/inner", "0.22.1") + INNER_CHANGE + INITIAL_HOME),
     [initial("cli", "cli/inner"), swap("cli/inner/src/index.ts", "spare/index.ts"), step("attest")])

# -- point 13: the home's files (WRITER-HOME-5) ------------------------------------------------------

FLOOR = '{"readerFloor": "0.22.0"}'
case("home-file-of-one-mib", "A home file of exactly 1 MiB is read",
     ["WRITER-HOME-5", "WRITER-HOME-2"], config(CLI + home(formats_text=FLOOR + " " * (ONE_MIB - len(FLOOR)), receipt=[])),
     [initial("cli")])
case("home-file-over-one-mib", "A home file one byte over 1 MiB is unreadable",
     ["WRITER-HOME-5", "WRITER-HOME-2"], config(CLI + home(formats_text=FLOOR + " " * (ONE_MIB + 1 - len(FLOOR)), receipt=[])),
     [initial("cli")])
FLOOR_ELSEWHERE = [{"path": "elsewhere", "type": "dir"}, {"path": "elsewhere/formats.json", "type": "file", "text": FLOOR}]
for slug, description, entry in [
    ("home-file-directory", "A home file that is a directory is unavailable, not missing", {"path": "home/formats.json", "type": "dir"}),
    ("home-file-symlink", "A home file that is a symlink to a valid file is not followed: unavailable", {"path": "home/formats.json", "type": "symlink", "target": "../elsewhere/formats.json"}),
    ("home-file-dangling-symlink", "A home file that is a dangling symlink is unavailable, not missing", {"path": "home/formats.json", "type": "symlink", "target": "nowhere.json"}),
    ("home-file-fifo", "A home file that is a FIFO is unavailable, and the read never blocks", {"path": "home/formats.json", "type": "fifo"}),
]:
    case(slug, description, ["WRITER-HOME-5", "WRITER-HOME-2"],
         config(CLI + home(floor=None, receipt=[]) + [entry] + FLOOR_ELSEWHERE), [initial("cli")])
RECEIPT_ELSEWHERE = [{"path": "elsewhere", "type": "dir"},
                     {"path": "elsewhere/setup-receipt.json", "type": "file", "text": json.dumps({"writerRoots": []})}]
case("receipt-symlink", "A setup receipt that is a symlink is not followed: the receipt is unreadable, not empty",
     ["WRITER-HOME-5", "WRITER-HOME-1", "WRITER-REQ-1"],
     config(CLI + home() + [{"path": "home/setup-receipt.json", "type": "symlink", "target": "../elsewhere/setup-receipt.json"}]
            + RECEIPT_ELSEWHERE), [initial("cli")])
case("home-with-nul", "A home path holding a NUL character makes every home file unreadable: the receipt first",
     ["WRITER-HOME-5", "WRITER-REQ-1"], {**config(CLI + INITIAL_HOME), "home": f"{F}/home\u0000"}, [initial("cli")])
case("home-with-nul-active", "A home path holding a NUL character makes the floor unreadable, not missing",
     ["WRITER-HOME-5", "WRITER-HOME-2"], {**config(CLI + INITIAL_HOME), "home": f"{F}/home\u0000"}, [step("active")])
case("locator-fifo", "An active locator that is a FIFO is unavailable, and the read never blocks",
     ["WRITER-HOME-5", "WRITER-HOME-3", "WRITER-ACT-1"],
     config(CLI + home(receipt=[]) + [{"path": "home/sync-placement-writer-roots.json", "type": "fifo"}]), [step("active")])

# -- point 14: a number beyond a double's range (WRITER-JSON-3) ------------------------------------

BIG_GENERATION = json.dumps(locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT])).replace('"generation": 1', '"generation": 1e999')
assert "1e999" in BIG_GENERATION
OUT_OF_RANGE_WORLD = active_world() + [{"path": "home-next", "type": "dir"},
                                       {"path": "home-next/sync-placement-writer-roots.json", "type": "file", "text": BIG_GENERATION}]
case("locator-number-out-of-range-preview", "A locator holding 1e999 is unreadable: the preview refuses active locator, unavailable",
     ["WRITER-JSON-3", "WRITER-HOME-3", "WRITER-PREV-1"],
     config(OUT_OF_RANGE_WORLD), [swap("home/sync-placement-writer-roots.json", "home-next/sync-placement-writer-roots.json"), step("preview")])
case("locator-number-out-of-range-active", "A locator holding 1e999 is unreadable: the active phase refuses active locator, unavailable",
     ["WRITER-JSON-3", "WRITER-HOME-3", "WRITER-ACT-1"],
     config(OUT_OF_RANGE_WORLD), [swap("home/sync-placement-writer-roots.json", "home-next/sync-placement-writer-roots.json"), step("active")])
case("locator-number-out-of-range-attest", "An active attest refuses once the locator holds 1e999; it never attests",
     ["WRITER-JSON-3", "WRITER-HOME-3", "WRITER-ACT-7"],
     config(OUT_OF_RANGE_WORLD), [step("active"), swap("home/sync-placement-writer-roots.json", "home-next/sync-placement-writer-roots.json"), step("attest")])
case("formats-integer-out-of-range", "A floor file holding an integer of 400 digits (beyond a double) is unreadable",
     ["WRITER-JSON-3", "WRITER-HOME-2"],
     config(CLI + home(formats_text='{"readerFloor": "0.22.0", "x": ' + "9" * 400 + "}", receipt=[])), [initial("cli")])
case("package-json-number-out-of-range", "A package.json holding -1e999 is unreadable",
     ["WRITER-JSON-3", "WRITER-MEAS-6"],
     config(install("cli", package_text='{"name": "@staix/agent-mem", "version": "0.22.0", "x": -1e999}') + INITIAL_HOME),
     [initial("cli")])
case("package-json-largest-double", "A package.json holding 1.7976931348623157e308, the largest double, measures",
     ["WRITER-JSON-3", "WRITER-MEAS-6"],
     config(install("cli", package_text='{"name": "@staix/agent-mem", "version": "0.22.0", "x": 1.7976931348623157e308}') + INITIAL_HOME),
     [initial("cli")])

# -- the harness step's own input ----------------------------------------------------------------

case("swap-during-unknown-moment", "A swap armed for a moment that is not before_read or before_restat is a bad argument",
     ["WRITER-IF-6", "WRITER-ERR-2"], config(CLI + IDENTICAL_INDEX + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts", "later"), initial("cli")])


def main() -> int:
    BOOK.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())

# ruff: noqa: E501, RUF005  (case data reads best one case to a line)
"""Builds ``conformance/cases/writer-proofs/guesses.json``: the cases that pin readings a port
written from the spec alone could take either way and still pass the other files (the moments of
an armed swap, a file gone or replaced in the read pass, the root's special bits, the order and
escaping of pin entries, the locator's re-read, the home path's spelling, relative paths, the
``{fixture}`` placeholder, the swap step's own input, the context after a renewal escape, and from a
second review: a swap of one path or nested paths, the receipt a restat compares, what a preview
reads, a relative home, an attest's re-read of the locator, and which failing root is reported).

``python -m tests.writer_proofs_guesses_casebook`` records the reference's outputs as the
expectations and rewrites that one file; ``tests/test_writer_proofs_guesses.py`` checks the outcome
each case exists for, written there by hand.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.writer_proofs_casebook import (
    CLI,
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
    mid,
    step,
    swap,
)

BOOK = Casebook("guesses", id_prefix="writer-proofs/guess-")
FILE = BOOK.file
case = BOOK.case
build = BOOK.build


OTHER_INDEX = [{"path": "spare", "type": "dir", "mode": "0755"},
               {"path": "spare/index.ts", "type": "file", "text": "export const amem = false;\n", "mode": "0644"}]
SWAP_INDEX = "cli/src/index.ts", "spare/index.ts"

# -- which faults end a root before its moments (WRITER-IF-6) --------------------------------------
# The swap moves the running CLI's src/index.ts. Performed by the first, faulty root, it leaves the
# running CLI stable for the second step, which measures; left armed, it is performed inside the
# running CLI's measurement, which is then changed.
MOMENT = ["WRITER-IF-6", "WRITER-MEAS-4"]
for slug, fault, entries in [
    ("symlink", "a symlink inside (unsafe-runtime)", install("bad", extra=[{"path": "bad/src/alias.ts", "type": "symlink", "target": "index.ts"}])),
    ("hard-link", "a hard-linked file (unsafe-runtime)", install("bad", extra=[{"path": "bad/src/copy.ts", "type": "hardlink", "target": "bad/src/index.ts"}])),
    ("fifo", "a FIFO inside (unsafe-runtime)", install("bad", extra=[{"path": "bad/pipe", "type": "fifo"}])),
]:
    case(f"walk-fault-{slug}-reaches-before-read", f"A root whose walk finds {fault} still reaches before_read: the armed swap is performed there, not by the next root",
         MOMENT, config(CLI + entries + OTHER_INDEX + INITIAL_HOME), [mid(*SWAP_INDEX), initial("bad"), initial("cli")])
case("empty-root-reaches-before-read", "A root with no regular file (an empty directory) reaches before_read after its walk: the armed swap is performed there",
     MOMENT, config(CLI + [{"path": "empty", "type": "dir", "mode": "0755"}] + OTHER_INDEX + INITIAL_HOME),
     [mid(*SWAP_INDEX), initial("empty"), initial("cli")])
case("bound-ends-before-before-read", "A root whose walk exceeds a bound ends before before_read: the swap stays armed for the next root",
     MOMENT + ["WRITER-MEAS-3"],
     config(CLI + [{"path": "deep" + "/d" * n, "type": "dir", "mode": "0755"} for n in range(18)] + OTHER_INDEX + INITIAL_HOME),
     [mid(*SWAP_INDEX), initial("deep"), initial("cli")])
case("ranked-read-fault-ends-before-restat", "A root whose read pass finds a ranked fault (a wrong package) ends before before_restat: the swap stays armed for the next root",
     MOMENT, config(CLI + install("bad", name="amem") + OTHER_INDEX + INITIAL_HOME),
     [mid(*SWAP_INDEX, "before_restat"), initial("bad"), initial("cli")])

# -- a file gone or replaced between the walk and its read (WRITER-MEAS-5, WRITER-MEAS-7) ----------
READ = ["WRITER-MEAS-5", "WRITER-MEAS-7", "WRITER-IF-6"]
case("read-pass-file-gone-is-unreadable", "A file moved away after the walk cannot be opened (ENOENT): unreadable, not changed",
     READ, config(CLI + [{"path": "spare", "type": "dir", "mode": "0755"}] + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts"), initial("cli")])
case("read-pass-file-now-symlink-is-unreadable", "A file replaced by a symlink after the walk is not followed (ELOOP): unreadable, not changed",
     READ, config(CLI + [{"path": "spare", "type": "dir", "mode": "0755"}, {"path": "spare/index.ts", "type": "symlink", "target": "../cli/bin/amem.js"}] + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts"), initial("cli")])
# The link points at a directory of the install (``cli/s2``) once it stands where ``cli/src`` was: a
# read pass that followed it would read ``cli/s2/index.ts`` and find another file (changed).
case("read-pass-directory-now-symlink-is-unreadable", "A directory replaced by a symlink after the walk is followed on the way to no file (ELOOP at that component): unreadable",
     READ, config(CLI + [{"path": "cli/s2", "type": "dir", "mode": "0755"},
                         {"path": "cli/s2/index.ts", "type": "file", "text": "export const other = true;\n", "mode": "0644"},
                         {"path": "lnk", "type": "symlink", "target": "s2"}] + INITIAL_HOME),
     [mid("cli/src", "lnk"), initial("cli")])
case("read-pass-file-now-fifo-is-changed", "A file replaced by a FIFO after the walk opens without blocking and is no regular file: changed",
     READ, config(CLI + [{"path": "spare", "type": "dir", "mode": "0755"}, {"path": "spare/index.ts", "type": "fifo"}] + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts"), initial("cli")])
case("read-pass-file-now-directory-is-changed", "A file replaced by a directory after the walk opens and is no regular file: changed",
     READ, config(CLI + [{"path": "spare/index.ts", "type": "dir", "mode": "0755"}] + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts"), initial("cli")])

case("restat-finds-symlink-is-changed", "A symlink the second stat pass finds where a file was is changed, not a ranked unsafe-runtime",
     READ, config(CLI + [{"path": "spare", "type": "dir", "mode": "0755"}, {"path": "spare/index.ts", "type": "symlink", "target": "../cli/bin/amem.js"}] + INITIAL_HOME),
     [mid("cli/src/index.ts", "spare/index.ts", "before_restat"), initial("cli")])

# -- the root itself is an entry (WRITER-MEAS-5) ----------------------------------------------------
for mode, bit in [("01755", "sticky"), ("02755", "setgid")]:
    case(f"root-with-{bit}-bit", f"A root directory with the {bit} bit is unsafe-runtime: the root is an entry like any other",
         ["WRITER-MEAS-5"], config(install("cli", modes={".": mode}) + INITIAL_HOME), [initial("cli")])

# -- the pin's entries: order and escaping (WRITER-PIN-1, WRITER-JSON-1/2) ---------------------------
case("pin-entries-whole-path-order", "Pin entries order by the whole relative path: '-x' before '.', and 'bin.x' and 'bin-x' before 'bin/amem.js'",
     ["WRITER-PIN-1", "WRITER-JSON-2"],
     config(install("cli", extra=[{"path": f"cli/{name}", "type": "file", "text": name + "\n", "mode": "0644"} for name in ("-x", "bin.x", "bin-x")]) + INITIAL_HOME),
     [initial("cli")])
case("pin-entry-with-delete-character", "U+007F in a file name is written as itself in the pin's canonical JSON; only U+0000..U+001F are escaped",
     ["WRITER-PIN-1", "WRITER-JSON-1"],
     config(install("cli", extra=[{"path": "cli/a\u007fb", "type": "file", "text": "1\n", "mode": "0644"},
                                  {"path": "cli/c\u001fd", "type": "file", "text": "2\n", "mode": "0644"}]) + INITIAL_HOME),
     [initial("cli")])

# -- the locator's re-read (WRITER-HOME-4) ------------------------------------------------------------
BROKEN = locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT])
del BROKEN["activation"]
NEXT_LOCATOR = "home/sync-placement-writer-roots.json", "home-next/sync-placement-writer-roots.json"
case("locator-reread-shape-broken-is-unavailable", "A locator whose re-read breaks the shape (no activation) is unavailable, not changed",
     ["WRITER-HOME-4", "WRITER-HOME-3", "WRITER-ACT-6"],
     config(active_world() + home("home-next", floor=None, locator=BROKEN)), [mid(*NEXT_LOCATOR), step("active")])
RENEWING_CHANGED = locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT], renewal="staging")
RENEWING_CHANGED["activation"]["generation"] = 2
case("locator-reread-renewal-before-changed", "A re-read locator that is renewing and also differs raises the renewal, which is checked before the change",
     ["WRITER-HOME-4", "WRITER-ACT-7"],
     config(active_world() + home("home-next", floor=None, locator=RENEWING_CHANGED)), [mid(*NEXT_LOCATOR), step("active")])

LOCATOR_TEXT = json.dumps(locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT]))
assert '"generation": 1,' in LOCATOR_TEXT


def respelled(first: str, again: str) -> dict[str, Any]:
    """The active world whose locator says generation ``first``, and ``again`` in its re-read."""
    world = [e for e in active_world() if e["path"] != "home/sync-placement-writer-roots.json"]
    return config(world + home("home", floor=None, locator_text=LOCATOR_TEXT.replace('"generation": 1,', f'"generation": {first},'))[1:]
                  + home("home-next", floor=None, locator_text=LOCATOR_TEXT.replace('"generation": 1,', f'"generation": {again},')))


NUMBERS = ["WRITER-HOME-4", "WRITER-JSON-1", "WRITER-ACT-6"]
case("locator-reread-number-respelled", "A locator re-read whose number is respelled (1, then 1.0) holds the same double: still current",
     NUMBERS, respelled("1", "1.0"), [mid(*NEXT_LOCATOR), step("active")])
case("locator-reread-integers-of-one-double", "Two integers beyond 2^53 that round to one double are one value: still current",
     NUMBERS, respelled("12345678901234567890", "12345678901234567891"), [mid(*NEXT_LOCATOR), step("active")])
case("locator-reread-number-changed", "A locator re-read whose number is another double is changed",
     NUMBERS, respelled("1", "1.5"), [mid(*NEXT_LOCATOR), step("active")])

# -- the home path is spelled as given (WRITER-HOME-5) -----------------------------------------------
DEEP_HOME = [{"path": "deep", "type": "dir"}, {"path": "deep/inner", "type": "dir"},
             {"path": "homelink", "type": "symlink", "target": "deep/inner"}] + home("deep", receipt=[])[1:]
case("home-through-symlink-and-dotdot", "A home spelled through a symlink and '..' is resolved by the kernel (the link's target's parent), never shortened by the text",
     ["WRITER-HOME-5"], {**config(CLI + DEEP_HOME), "home": f"{F}/homelink/.."}, [initial("cli")])
case("home-through-file-and-dotdot", "A home spelled through a regular file and '..' names no directory (ENOTDIR): every home file is unreadable, the receipt first",
     ["WRITER-HOME-5", "WRITER-REQ-1"], {**config(CLI + INITIAL_HOME + home("cli/package.json.d", receipt=[])[1:2]), "home": f"{F}/cli/package.json/.."}, [initial("cli")])

# -- relative paths never resolve (Glossary, WRITER-REQ-1, WRITER-HOME-1) ----------------------------
case("own-root-relative", "A running CLI root '.' is relative: it does not resolve (running CLI, unavailable), whatever the adapter's working directory",
     ["WRITER-REQ-1", "WRITER-MEAS-2"], {**config(CLI + INITIAL_HOME), "own_root": "."}, [initial("cli")])
case("receipt-root-relative", "A receipt root '.' is relative: the receipt is unreadable",
     ["WRITER-HOME-1", "WRITER-REQ-1"], config(CLI + home(receipt_text=json.dumps({"writerRoots": ["."]}))), [initial("cli")])
case("receipt-without-writer-roots", "A receipt object without writerRoots is unreadable, not empty",
     ["WRITER-HOME-1", "WRITER-REQ-1"], config(CLI + home(receipt_text="{}")), [initial("cli")])

# -- the placeholder (WRITER-IF-6) --------------------------------------------------------------------
case("placeholder-replaced-everywhere-in-inputs", "{fixture} is replaced at every occurrence in a root, not only as its prefix",
     ["WRITER-IF-6"], config(CLI + install("a/{fixture}") + INITIAL_HOME), [step("initial", roots=[f"{F}/cli", f"{F}/a/{F}"])])

# -- the swap step's own input (WRITER-IF-2, WRITER-IF-6) ---------------------------------------------
SWAP_IN = ["WRITER-IF-6", "WRITER-ERR-2"]
case("armed-swap-paths-checked-when-performed", "An armed swap's paths are checked when it is performed: one leaving the fixture arms, and then moves nothing",
     SWAP_IN, config(CLI + OTHER_INDEX + INITIAL_HOME), [mid("../cli/src/index.ts", "spare/index.ts"), initial("cli")])
case("swap-parent-missing", "A swap path whose parent does not exist is a bad argument, and nothing moves (not 'one path does not exist')",
     SWAP_IN, config(CLI + INITIAL_HOME), [swap("cli/src/index.ts", "nowhere/index.ts"), initial("cli")])
case("swap-path-named-as-the-parking", "A swap path under the name the swap parks a path at (.swap-parking) is a bad argument, and nothing moves: a later swap would park on top of it",
     SWAP_IN, config(CLI + INITIAL_HOME), [swap("cli/src/index.ts", ".swap-parking"), swap(".swap-parking/x", "cli/bin/amem.js"), initial("cli")])
case("swap-parent-a-file", "A swap path below a regular file is a bad argument, and nothing moves",
     SWAP_IN, config(CLI + INITIAL_HOME), [swap("cli/src/index.ts", "cli/package.json/index.ts"), initial("cli")])
case("swap-missing-or-bad-path-argument", "swap_paths without second, or with a non-string first, is a bad argument, armed or not",
     SWAP_IN + ["WRITER-IF-2"], config(CLI + OTHER_INDEX + INITIAL_HOME),
     [step("swap_paths", first="cli/src/index.ts"), step("swap_paths", first=1, second="spare/index.ts", during="before_read"),
      step("swap_paths", first=None, second="spare/index.ts"), initial("cli")])
case("no-fixture-swap", "Without a fixture the fixture directory is empty: a swap now is a bad argument, an armed one arms and moves nothing",
     SWAP_IN + ["WRITER-IF-1"], {"home": f"{F}/home", "own_root": f"{F}/cli"},
     [swap("cli", "other"), mid("cli", "other"), initial("cli")])

# -- the context after a renewal escape (WRITER-SES-1, WRITER-ACT-7) ----------------------------------
case("renewal-escape-leaves-no-context", "An active read that escapes with the renewal error leaves the session without a context, like a refusal",
     ["WRITER-SES-1", "WRITER-ACT-7", "WRITER-IF-3"], config(active_world(renewal="pending")), [initial(), step("active"), step("attest")])

# -- a second spec-only review's guesses ---------------------------------------------------------------
# Two swap paths that are one, or one inside the other, cannot be exchanged: refused, nothing moved
# (the three renames parked the first and then failed, a bad argument that had moved it).
case("swap-one-path-or-nested-moves-nothing", "A swap of one path with itself, or of a path with one inside it, is a bad argument and moves nothing",
     SWAP_IN, config(CLI + INITIAL_HOME), [swap("cli", "cli"), swap("cli", "cli/src"), swap("cli/src", "cli"), initial("cli")])
# The receipt compared at the restat is the resolved root list, not the file's text.
RESPELLED_RECEIPT = [{"path": "home-next", "type": "dir"},
                     {"path": "home-next/setup-receipt.json", "type": "file",
                      "text": json.dumps({"writerRoots": [f"{F}/cli", f"{F}/cli"], "note": 1})}]
case("receipt-respelled-during-measurement-is-unchanged", "A receipt rewritten during the measurement with the same roots (a duplicate, another key) is the same receipt: no change",
     ["WRITER-COMP-4", "WRITER-HOME-1"], config(CLI + home(receipt=["cli"]) + RESPELLED_RECEIPT),
     [mid("home/setup-receipt.json", "home-next/setup-receipt.json", "before_restat"), initial("cli")])
# A preview reads the locator alone: no reader floor and no renewal check.
NO_FLOOR = [entry for entry in active_world() if not entry["path"].endswith("formats.json")]
case("preview-reads-no-floor", "A preview reads the locator alone: with no formats.json it still previews",
     ["WRITER-PREV-1", "WRITER-PREV-3"], config(NO_FLOOR), [step("preview")])
case("preview-reads-no-renewal", "A preview reads the locator alone: a pending renewal does not stop it",
     ["WRITER-PREV-1", "WRITER-PREV-3"], config(active_world(renewal="pending")), [step("preview")])
# A relative home is resolved by the kernel (WRITER-HOME-5), not refused; one that names nothing is
# a missing floor wherever the adapter runs.
case("home-relative-is-resolved", "A relative home is resolved, not refused: one that names nothing anywhere has no reader floor",
     ["WRITER-HOME-5", "WRITER-HOME-2"], {**config(CLI + INITIAL_HOME), "home": "no-such-inboxspec-home/home"}, [initial("cli")])
# The attest's "still current" compares its own active read's two reads, not the context's.
NEXT_GENERATION = {**locator(["cli", "decl", "rcpt"], [W_CLI, W_DECL, W_RCPT]), "activation": {"generation": 2, "renewal": None}}
case("attest-reads-the-locator-afresh", "An attest after the locator changed since the active context was built (its generation only) reads it afresh and attests",
     ["WRITER-ACT-7", "WRITER-HOME-4", "WRITER-ATT-1"],
     config(active_world() + [{"path": "alt", "type": "dir"}, {"path": "alt/sync-placement-writer-roots.json", "type": "file", "text": json.dumps(NEXT_GENERATION)}]),
     [step("active"), swap("home/sync-placement-writer-roots.json", "alt/sync-placement-writer-roots.json"), step("attest")])
# Roots are measured in the order given: the first failing root is the one reported, not the first by name.
OLD = install("old", "0.20.9")
LOOSE = install("loose", modes={"src/index.ts": "0666"})
case("first-failing-root-in-given-order", "With several failing roots, the first in the given order is reported, not the first by name",
     ["WRITER-MEAS-1", "WRITER-INIT-2"], config(CLI + OLD + LOOSE + INITIAL_HOME), [initial("old", "loose"), initial("loose", "old")])


# -- from a later spec-only port: four more readings --------------------------------------------------
# The depth bound speaks of every entry, not only those the entry bound counts: a symlink or a FIFO
# seventeen levels down ends the walk as bound before it is judged unsafe.
DEEP = "deep/" + "/".join(["d"] * 16)
for slug, entry in [("symlink", {"path": f"{DEEP}/link", "type": "symlink", "target": "x"}),
                    ("fifo", {"path": f"{DEEP}/pipe", "type": "fifo"})]:
    case(f"deep-{slug}-is-bound", f"A {slug} seventeen levels below the root is past the depth bound: bound, not unsafe-runtime",
         ["WRITER-MEAS-3", "WRITER-MEAS-4"], config(CLI + install("deep", extra=[entry]) + INITIAL_HOME), [initial("cli", "deep")])
# A home path holding a lone surrogate names no file, as one holding NUL: every home file unreadable.
case("home-with-lone-surrogate-names-no-file", "A home path holding a lone surrogate names no file: every home file is unreadable, not absent, so the setup receipt is unreadable",
     ["WRITER-HOME-5", "WRITER-HOME-2"], {**config(CLI + INITIAL_HOME), "home": f"{F}/home\ud800"}, [initial("cli")])
# So does a root: a runtime that writes the name with U+FFFD in the surrogate's place resolves the
# install beside it, which this fixture lays out.
REPLACED = [{**entry, "path": "cli\ufffd" + entry["path"][len("cli"):]} for entry in CLI]
# A surrogate of U+DC80..U+DCFF, which Python passes to the system as the byte it escapes (0xff here).
case("home-with-escaped-byte-surrogate-names-no-file", "A home path holding a lone surrogate of U+DC80..U+DCFF names no file either, though a language may pass it on as the byte it escapes: unreadable",
     ["WRITER-HOME-5", "WRITER-HOME-2"], {**config(CLI + INITIAL_HOME), "home": f"{F}/home\udcff"}, [initial("cli")])
case("running-cli-with-lone-surrogate-names-no-file", "A running CLI root holding a lone surrogate does not resolve, though an install whose name holds U+FFFD in its place exists: unreadable",
     ["WRITER-MEAS-2", "WRITER-REQ-1"], {**config(CLI + REPLACED + INITIAL_HOME), "own_root": f"{F}/cli\ud800"}, [initial("cli\ud800")])
# The active phase's first read of the locator raises no renewal: only the still-current re-read does.
case("active-first-read-raises-no-renewal", "An active read of a pending locator whose roots miss the running CLI refuses the running CLI as missing: its first read of the locator raises no renewal",
     ["WRITER-ACT-1", "WRITER-HOME-4", "WRITER-COMP-3"], config(active_world(roots=["decl", "rcpt"], writers=[W_DECL, W_RCPT], renewal="pending")),
     [step("active")])
# package.json has every JSON file's 1 MiB bound (WRITER-JSON-3), to the byte.
def package_of(size: int) -> str:
    """A package.json of the install, padded to exactly ``size`` bytes of UTF-8."""
    start, end = '{"name": "@staix/agent-mem", "version": "0.22.0", "pad": "', '"}'
    return start + "x" * (size - len(start) - len(end)) + end


case("package-json-past-one-mib-is-unreadable", "A package.json one byte longer than 1 MiB is unreadable, as a home file is: every JSON file's bound",
     ["WRITER-MEAS-6", "WRITER-JSON-3"], config(install("cli", package_text=package_of(1024 * 1024 + 1)) + INITIAL_HOME), [initial("cli")])
case("package-json-of-exactly-one-mib-is-read", "A package.json of exactly 1 MiB is read",
     ["WRITER-MEAS-6", "WRITER-JSON-3"], config(install("cli", package_text=package_of(1024 * 1024)) + INITIAL_HOME), [initial("cli")])


def main() -> int:
    BOOK.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())

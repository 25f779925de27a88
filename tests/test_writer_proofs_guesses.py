# ruff: noqa: E501  (one case to a line reads best)
"""The readings a spec-only port guessed, pinned (spec/writer-proofs.md; the cases are in
``conformance/cases/writer-proofs/guesses.json``, built by ``tests/writer_proofs_guesses_casebook``).

Each case's intended outcome for every step is written here by hand, apart from the recorded
expectations, so a recording that drifted from the reading the case exists for fails.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests import writer_proofs_guesses_casebook as casebook

ARMED = ("armed",)
CLI_MEASURED = ("measured", ["{fixture}/cli"])
CLI_CHANGED = ("refusal", "running CLI", "changed", "changed")
BAD_ARGUMENT = ("error", "invalid_argument")
ACTIVE_ROOTS = ["{fixture}/cli", "{fixture}/decl", "{fixture}/rcpt"]


def refusal(category: str, cause: str, detail: str | None) -> tuple[Any, ...]:
    return ("refusal", category, cause, detail)


# slug -> the outcome of each step, in order. A swap armed by the first root measured leaves the
# running CLI stable (CLI_MEASURED); one left armed is performed inside it (CLI_CHANGED).
INTENDED: dict[str, list[tuple[Any, ...]]] = {
    **{f"walk-fault-{kind}-reaches-before-read": [ARMED, refusal("declared writer", "unavailable", "unsafe-runtime"), CLI_MEASURED]
       for kind in ("symlink", "hard-link", "fifo")},
    "empty-root-reaches-before-read": [ARMED, refusal("declared writer", "unavailable", "unreadable"), CLI_MEASURED],
    "bound-ends-before-before-read": [ARMED, refusal("declared writer", "unavailable", "bound"), CLI_CHANGED],
    "ranked-read-fault-ends-before-restat": [ARMED, refusal("declared writer", "unavailable", "wrong-package"), CLI_CHANGED],
    "read-pass-file-gone-is-unreadable": [ARMED, refusal("running CLI", "unavailable", "unreadable")],
    "read-pass-file-now-symlink-is-unreadable": [ARMED, refusal("running CLI", "unavailable", "unreadable")],
    "read-pass-directory-now-symlink-is-unreadable": [ARMED, refusal("running CLI", "unavailable", "unreadable")],
    "read-pass-file-now-fifo-is-changed": [ARMED, CLI_CHANGED],
    "read-pass-file-now-directory-is-changed": [ARMED, CLI_CHANGED],
    "restat-finds-symlink-is-changed": [ARMED, CLI_CHANGED],
    "root-with-sticky-bit": [refusal("running CLI", "unavailable", "unsafe-runtime")],
    "root-with-setgid-bit": [refusal("running CLI", "unavailable", "unsafe-runtime")],
    "pin-entries-whole-path-order": [CLI_MEASURED],
    "pin-entry-with-delete-character": [CLI_MEASURED],
    "locator-reread-shape-broken-is-unavailable": [ARMED, refusal("active locator", "unavailable", None)],
    "locator-reread-renewal-before-changed": [ARMED, ("renewal", "staging")],
    "locator-reread-number-respelled": [ARMED, ("measured", ACTIVE_ROOTS)],
    "locator-reread-integers-of-one-double": [ARMED, ("measured", ACTIVE_ROOTS)],
    "locator-reread-number-changed": [ARMED, refusal("active locator", "changed", None)],
    "home-through-symlink-and-dotdot": [CLI_MEASURED],
    "home-through-file-and-dotdot": [refusal("setup receipt", "unavailable", "unreadable")],
    "own-root-relative": [refusal("running CLI", "unavailable", "unreadable")],
    "receipt-root-relative": [refusal("setup receipt", "unavailable", "unreadable")],
    "receipt-without-writer-roots": [refusal("setup receipt", "unavailable", "unreadable")],
    "placeholder-replaced-everywhere-in-inputs": [refusal("declared writer", "unavailable", "unreadable")],
    "armed-swap-paths-checked-when-performed": [ARMED, CLI_MEASURED],
    "swap-parent-missing": [BAD_ARGUMENT, CLI_MEASURED],
    "swap-path-named-as-the-parking": [BAD_ARGUMENT, BAD_ARGUMENT, CLI_MEASURED],
    "swap-parent-a-file": [BAD_ARGUMENT, CLI_MEASURED],
    "swap-missing-or-bad-path-argument": [BAD_ARGUMENT, BAD_ARGUMENT, BAD_ARGUMENT, CLI_MEASURED],
    "no-fixture-swap": [BAD_ARGUMENT, ARMED, refusal("running CLI", "unavailable", "unreadable")],
    "renewal-escape-leaves-no-context": [("measured", ["{fixture}/cli", "{fixture}/rcpt"]), ("renewal", "pending"), ("error", "no_context")],
    "swap-one-path-or-nested-moves-nothing": [BAD_ARGUMENT, BAD_ARGUMENT, BAD_ARGUMENT, CLI_MEASURED],
    "receipt-respelled-during-measurement-is-unchanged": [ARMED, CLI_MEASURED],
    "preview-reads-no-floor": [("preview", True, True)],
    "preview-reads-no-renewal": [("preview", True, True)],
    "home-relative-is-resolved": [refusal("home floor", "missing", None)],
    "deep-symlink-is-bound": [refusal("declared writer", "unavailable", "bound")],
    "deep-fifo-is-bound": [refusal("declared writer", "unavailable", "bound")],
    "home-with-lone-surrogate-names-no-file": [refusal("setup receipt", "unavailable", "unreadable")],
    "home-with-escaped-byte-surrogate-names-no-file": [refusal("setup receipt", "unavailable", "unreadable")],
    "running-cli-with-lone-surrogate-names-no-file": [refusal("running CLI", "unavailable", "unreadable")],
    "active-first-read-raises-no-renewal": [refusal("running CLI", "missing", None)],
    "package-json-past-one-mib-is-unreadable": [refusal("running CLI", "unavailable", "unreadable")],
    "package-json-of-exactly-one-mib-is-read": [("measured", ["{fixture}/cli"])],
    "attest-reads-the-locator-afresh": [("measured", ACTIVE_ROOTS), ("context", "active"), ("attested", ACTIVE_ROOTS)],
    "first-failing-root-in-given-order": [refusal("declared writer", "unavailable", "below-minimum"),
                                          refusal("declared writer", "unavailable", "writable-runtime")],
}


def _outcome(expect: dict[str, Any]) -> tuple[Any, ...]:
    if "refusal" in expect:
        refused = expect["refusal"]
        return refusal(refused["category"], refused["cause"], refused["detail"])
    if "measurement" in expect:
        return ("measured", [row["root"] for row in expect["measurement"]["roots"]])
    if "renewal" in expect:
        return ("renewal", expect["renewal"]["state"])
    if "error" in expect:
        return ("error", expect["error"])
    if "preview" in expect:
        return ("preview", expect["preview"]["matches"], expect["preview"]["complete"])
    if "attestation" in expect:
        return ("attested", [row["writerId"] for row in expect["attestation"]["writers"]])
    assert set(expect) == {"context"}, expect
    return ARMED if expect["context"] is None else ("context", expect["context"])


def _cases() -> dict[str, dict[str, Any]]:
    return casebook.BOOK.written_cases()


def test_every_case_has_an_intended_outcome() -> None:
    assert sorted(_cases()) == sorted(INTENDED)


@pytest.mark.parametrize("slug", sorted(INTENDED))
def test_each_step_ends_as_intended(slug: str) -> None:
    assert [_outcome(s["expect"]) for s in _cases()[slug]["steps"]] == INTENDED[slug]


def test_a_renewal_escape_reports_no_context() -> None:
    escape = _cases()["renewal-escape-leaves-no-context"]["steps"][1]["expect"]
    assert escape["context"] is None


def test_the_pin_cases_measure_the_names_they_exist_for() -> None:
    """The order and escaping cases only pin something while their odd names are in the root."""
    names = {e["path"] for c in ("pin-entries-whole-path-order", "pin-entry-with-delete-character")
             for e in _cases()[c]["config"]["fixture"]["entries"]}
    assert {"cli/-x", "cli/bin.x", "cli/bin-x", "cli/a\u007fb", "cli/c\u001fd"} <= names

# ruff: noqa: E501  (the seed's templates are long lines of text)
"""Every refusal message, for every combination of its fields, is the seed's template (WRITER-MSG-1..3).

The templates below are transcribed from ``sync-placement-writer-context.ts`` in
``002_79f456de189a5c5b.txt`` independently of ``impl/`` and ``model/``, with the texts they fill in
(the failure details and the renewal messages) read from the interface data,
``spec/writer-proofs.interface.json``; the reference, the model and the Node port must all
produce exactly these texts.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from inboxspec.impl.writer_proofs import writer_context_message
from inboxspec.machines import interface
from inboxspec.model.writer_proofs import message as model_message

# The vocabularies and the detail and renewal texts are the interface data's (WRITER-MSG-2, WRITER-MSG-3):
# impl and model state them again as constants, which tests/test_interface_vocabularies_writer_proofs.py
# ties to the same data.
DATA = interface.load("writer-proofs")
CATEGORIES = list(DATA.vocabulary("categories"))
CAUSES = list(DATA.vocabulary("causes"))
PHASES = list(DATA.vocabulary("phases"))
DETAILS: dict[str | None, str | None] = {None: None, **DATA.vocabularies["details"]}
RENEWAL = [None, *DATA.vocabulary("renewal_states")]
REVISION: dict[str, str] = DATA.vocabularies["renewal_messages"]
COMBINATIONS = list(itertools.product(CATEGORIES, CAUSES, PHASES, DETAILS, RENEWAL))


def expected(category: str, cause: str, phase: str, detail: str | None, renewal: str | None) -> str:
    if category == "writer renewal":
        return REVISION["staging" if renewal == "staging" else "pending"]
    if category == "active locator":
        return ("Sync placement initial root locator is " + cause + " (active locator category); have the person "
                "inspect sync-placement-writer-roots.json and the matching activation metadata with a compatible "
                "recovery release, then run amem migrate --sync-placement --dry-run.")
    if category == "home floor":
        return ("Sync placement reader-floor proof is " + cause + " (home floor category); have the person inspect "
                "formats.json and use a reader compatible with its recorded floor, then run amem migrate "
                "--sync-placement --dry-run.")
    clause = "" if detail is None else "; " + str(DETAILS[detail])
    if phase == "initial":
        if category == "setup receipt":
            fix = ("upgrade or repair the managed amem install and its host exact pin, then rerun amem setup "
                   "<target> --apply")
        else:
            fix = "upgrade or repair the amem install and its host exact pin"
        return ("Sync placement initial writer proof is " + cause + " (" + category + " category" + clause + "); "
                + fix + ". Declare the complete writer roots and rerun amem migrate --sync-placement --dry-run.")
    return ("Sync placement writer proof is " + cause + " (" + category + " category" + clause + "); restore the "
            "inventoried install, or have the person run amem migrate --sync-placement --dry-run and --apply with "
            "the complete --writer-root inventory after installing the required 0.22.0 home floor.")


def test_every_combination_in_the_reference_and_the_model() -> None:
    """WRITER-MSG-1, WRITER-MSG-2, WRITER-MSG-3: 1188 combinations."""
    assert len(COMBINATIONS) == 6 * 3 * 2 * 11 * 3
    for combination in COMBINATIONS:
        assert writer_context_message(*combination) == expected(*combination), combination
        assert model_message(*combination) == expected(*combination), combination


@pytest.mark.slow
def test_every_combination_in_the_node_port() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    port = Path(__file__).resolve().parent.parent / "conformance" / "ports" / "node" / "writer-proofs.mjs"
    script = (f"import {{ PlacementWriterContextError }} from {json.dumps(port.as_uri())};\n"
              "import fs from 'node:fs';\n"
              "const rows = JSON.parse(fs.readFileSync(0, 'utf8'));\n"
              "console.log(JSON.stringify(rows.map(r => new PlacementWriterContextError(...r).message)));\n")
    result = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps(COMBINATIONS),
                            capture_output=True, text=True, timeout=60, check=True)
    actual = json.loads(result.stdout)
    assert actual == [expected(*c) for c in COMBINATIONS]

"""Every writer-proofs case file is what its casebook builds (``tests/writer_proofs_*casebook.py``):
a case file edited by hand, or a casebook changed without rewriting its files, fails here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inboxspec.conformance.casefiles import share_fixtures
from tests import (
    writer_proofs_casebook,
    writer_proofs_fidelity_casebook,
    writer_proofs_guesses_casebook,
    writer_proofs_mutants_casebook,
)

# file -> how its casebook builds it (the mutants' build also checks each case's intended outcome).
BUILDS: dict[Path, Callable[[], dict[str, Any]]] = {
    **{book.file: book.build for book in writer_proofs_casebook.BOOKS.values()},
    writer_proofs_fidelity_casebook.FILE: writer_proofs_fidelity_casebook.build,
    writer_proofs_guesses_casebook.FILE: writer_proofs_guesses_casebook.build,
    writer_proofs_mutants_casebook.FILE: writer_proofs_mutants_casebook.build,
}


@pytest.mark.parametrize("file", sorted(BUILDS), ids=lambda file: file.name)
def test_the_file_is_what_its_casebook_builds(file: Path) -> None:
    assert json.loads(file.read_text(encoding="utf-8")) == share_fixtures(BUILDS[file]())

"""The idle-notice label sanitiser's code-point tables, read from the spec (IDLE-LABEL-1).

``spec/idle-label-table.json`` is part of the spec: spec/tools/idle_label_table.py
writes it from the pinned Unicode version, and its ``--check`` fails when the
file differs from what it writes. The reference reads that file at import, never
the runtime's Unicode database, so that every port maps every label to the same
text. Inclusive code-point ranges: the space class (IDLE-LABEL-1), the blank
class, which prints nothing (IDLE-LABEL-6), and what option ``fold_lookalikes``
(IDLE-OPT-5) blanks and folds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

# inboxspec/impl/ and inboxspec/spec/ are siblings in the tree, the wheel and an editable install.
TABLE_PATH: Final = Path(__file__).parent.parent / "spec" / "idle-label-table.json"
_TABLE: Final[dict[str, Any]] = json.loads(TABLE_PATH.read_text(encoding="utf-8"))


def _ranges(key: str) -> tuple[tuple[int, int], ...]:
    return tuple((low, high) for low, high in _TABLE[key])


UNICODE_VERSION: Final[str] = _TABLE["unicode_version"]
SPACE_RANGES: Final = _ranges("space_ranges")
BLANK_RANGES: Final = _ranges("blank_ranges")
LOOKALIKE_RANGES: Final = _ranges("lookalike_ranges")
FOLDED_PHRASES: Final[tuple[str, ...]] = tuple(_TABLE["folded_phrases"])
LETTER_FOLDS: Final[tuple[tuple[int, str], ...]] = tuple((point, letter)
                                                   for point, letter in _TABLE["letter_folds"])

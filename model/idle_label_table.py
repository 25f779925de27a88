"""The label tables as the model reads them: the spec's own file, spec/idle-label-table.json.

The model imports nothing from ``impl``; like any port, it reads the table that
IDLE-LABEL-1 makes part of the spec. Each ``*_RANGES`` is a list of inclusive
``[low, high]`` code-point pairs; ``LETTER_FOLDS`` pairs a code point with its letter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

with (Path(__file__).parent.parent / "spec" / "idle-label-table.json").open(encoding="utf-8") as file:
    TABLE: dict[str, Any] = json.load(file)

SPACE_RANGES, BLANK_RANGES, LOOKALIKE_RANGES, LETTER_FOLDS = (
    TABLE[key] for key in ("space_ranges", "blank_ranges", "lookalike_ranges", "letter_folds"))
FOLDED_PHRASES: tuple[str, ...] = tuple(TABLE["folded_phrases"])

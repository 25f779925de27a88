"""Write the idle-notice label sanitiser's code-point tables (spec/idle-subscriptions.md, IDLE-LABEL-1).

The sanitiser must not depend on the runtime's Unicode database: Python 3.11
ships Unicode 14.0, Node 20 ships a newer one, and the format characters they
disagree on would make two ports sanitise one label differently. So the
classes are explicit code-point ranges, generated once from one stated Unicode
version (the pinned ``unicodedata2`` package):

- ``spec/idle-label-table.json``, the table as part of the spec, for ports in
  any language to read; the reference (``impl/idle_label_table.py``) and the
  model (``model/idle_label_table.py``) each read it at import;
- ``conformance/ports/node/idle-label-table.mjs`` for the Node port.

Run ``python spec/tools/idle_label_table.py`` to rewrite both, or with
``--check`` to fail when a committed table differs from what this writes
(``tests/test_idle_subscriptions_label.py`` does that).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import unicodedata2

UNICODE_VERSION = "15.1.0"
# The categories the sanitiser turns into spaces: control, format and (lone) surrogate.
CATEGORIES = ("Cc", "Cf", "Cs")
# The envelope-ish punctuation the notice text uses for its own quoting and tags.
PUNCTUATION = '<>«»"[]'
# The Unicode White_Space property (PropList.txt); stable since Unicode 6.3.
WHITE_SPACE = (
    [(0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0), (0x1680, 0x1680),
     (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]
)

# The code points that print nothing, so that a result made of them and spaces alone is no
# label (IDLE-LABEL-6): the Default_Ignorable_Code_Point property (DerivedCoreProperties.txt of
# Unicode 15.1.0; unicodedata2 does not carry it), which holds the Hangul fillers U+115F, U+1160,
# U+3164 and U+FFA0, and U+2800 BRAILLE PATTERN BLANK, a cell with no dot raised.
DEFAULT_IGNORABLE = (
    [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
     (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
     (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
     (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]
)
BRAILLE_PATTERN_BLANK = 0x2800

# Option fold_lookalikes (IDLE-OPT-5, finding IDLE-F5): the phrases removed from a label after
# folding, the tag's words and the words that only the notice's closing sentence holds.
# WARNING: the prefix phrase is also PREFIX_PHRASE in impl/idle_label.py and PHRASE in
# model/idle_subscriptions.py (IDLE-LABEL-3); tests/test_idle_subscriptions_label.py checks they agree.
FOLDED_PHRASES = ("peer idle notice", "automated harness notice")
# The categories of brackets and quotation marks of every script: open, close, initial, final.
BRACKET_CATEGORIES = ("Ps", "Pe", "Pi", "Pf")

ROOT = Path(__file__).resolve().parents[2]
NODE_TABLE = ROOT / "conformance" / "ports" / "node" / "idle-label-table.mjs"
SPEC_TABLE = ROOT / "spec" / "idle-label-table.json"  # the spec's own copy (IDLE-LABEL-1)


def merge(points: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for point in sorted(set(points)):
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    return ranges


def space_ranges() -> list[tuple[int, int]]:
    """Every code point the sanitiser maps to U+0020, as inclusive ranges."""
    if unicodedata2.unidata_version != UNICODE_VERSION:
        raise SystemExit(f"unicodedata2 has Unicode {unicodedata2.unidata_version}; "
                         f"install unicodedata2=={UNICODE_VERSION}")
    points = [cp for cp in range(0x110000) if unicodedata2.category(chr(cp)) in CATEGORIES]
    points += [ord(c) for c in PUNCTUATION]
    points += [cp for low, high in WHITE_SPACE for cp in range(low, high + 1)]
    return merge(points)


def blank_ranges() -> list[tuple[int, int]]:
    """Every code point that prints nothing (IDLE-LABEL-6), as inclusive ranges."""
    points = [cp for low, high in DEFAULT_IGNORABLE for cp in range(low, high + 1)]
    return merge([*points, BRAILLE_PATTERN_BLANK])


def lookalike_ranges() -> list[tuple[int, int]]:
    """What the option blanks besides the space class: brackets and quotation marks (categories
    Ps, Pe, Pi, Pf), every code point whose compatibility decomposition holds one of the seven
    characters, and every code point whose compatibility form is two or more letters written
    together in a folded phrase (the numero sign is "No"), which a one-letter fold cannot match."""
    points = []
    for cp in range(0x110000):
        char = chr(cp)
        if unicodedata2.category(char) == "Cs":
            continue
        compatible = unicodedata2.normalize("NFKC", char)
        if (unicodedata2.category(char) in BRACKET_CATEGORIES
                or any(c in PUNCTUATION for c in unicodedata2.normalize("NFKD", char))
                or (len(compatible) > 1 and compatible.isascii()
                    and any(compatible.lower() in phrase for phrase in FOLDED_PHRASES))):
            points.append(cp)
    return merge(points)


def letter_folds() -> list[tuple[int, str]]:
    """Every code point beyond ASCII whose compatibility form (NFKC) is one ASCII letter, with that
    letter in lower case: what the option compares instead of the code point."""
    folds = []
    for cp in range(0x80, 0x110000):
        char = chr(cp)
        if unicodedata2.category(char) == "Cs":
            continue
        compatible = unicodedata2.normalize("NFKC", char)
        # One ASCII letter, tested before lower-casing: U+0130's form is itself, and its lower case
        # is two code points ("i" and U+0307), which compare between "a" and "z" as a string.
        if len(compatible) == 1 and compatible.isascii() and compatible.isalpha():
            folds.append((cp, compatible.lower()))
    return folds


HEADER = (
    "Generated by spec/tools/idle_label_table.py from Unicode {version}: do not edit.\n"
    "Inclusive code-point ranges that the idle-notice label sanitiser maps to a space\n"
    "(IDLE-LABEL-1): general categories Cc, Cf and Cs, the White_Space property, and {punct};\n"
    "and the blank ranges, which print nothing (IDLE-LABEL-6): Default_Ignorable_Code_Point and U+2800.\n"
    "Option fold_lookalikes (IDLE-OPT-5) also blanks the lookalike ranges and compares each code point\n"
    "of the letter folds as its letter when it looks for the folded phrases."
)


@dataclass(frozen=True)
class Tables:
    spaces: list[tuple[int, int]]
    blanks: list[tuple[int, int]]
    lookalikes: list[tuple[int, int]]
    folds: list[tuple[int, str]]


def node_text(tables: Tables) -> str:
    header = "\n".join("// " + line for line in
                       HEADER.format(version=UNICODE_VERSION, punct=PUNCTUATION).splitlines())

    def rows(pairs: list[tuple[int, int]]) -> str:
        return "".join(f"  [0x{low:04X}, 0x{high:04X}],\n" for low, high in pairs)

    ranges_type = "/** @type {readonly (readonly [low: number, high: number])[]} */\n"
    folds = "".join(f'  [0x{cp:04X}, "{letter}"],\n' for cp, letter in tables.folds)
    phrases = "".join(f'  "{phrase}",\n' for phrase in FOLDED_PHRASES)
    # The port's modules are all type-checked (conformance/ports/node/tsconfig.json).
    return (f"// @ts-check\n{header}\n\nexport const UNICODE_VERSION = \"{UNICODE_VERSION}\";\n\n"
            f"{ranges_type}export const SPACE_RANGES = [\n{rows(tables.spaces)}];\n\n"
            f"{ranges_type}export const BLANK_RANGES = [\n{rows(tables.blanks)}];\n\n"
            f"/** @type {{readonly string[]}} */\nexport const FOLDED_PHRASES = [\n{phrases}];\n\n"
            f"{ranges_type}export const LOOKALIKE_RANGES = [\n{rows(tables.lookalikes)}];\n\n"
            "/** @type {readonly (readonly [codePoint: number, letter: string])[]} */\n"
            f"export const LETTER_FOLDS = [\n{folds}];\n")


def json_text(tables: Tables) -> str:
    def rows(pairs: list[tuple[int, int]]) -> str:
        return ",\n".join(f"    [{low}, {high}]" for low, high in pairs)

    folds = ",\n".join(f'    [{cp}, "{letter}"]' for cp, letter in tables.folds)
    phrases = ", ".join(f'"{phrase}"' for phrase in FOLDED_PHRASES)
    return (f'{{\n  "unicode_version": "{UNICODE_VERSION}",\n'
            f'  "space_ranges": [\n{rows(tables.spaces)}\n  ],\n'
            f'  "blank_ranges": [\n{rows(tables.blanks)}\n  ],\n'
            f'  "folded_phrases": [{phrases}],\n'
            f'  "lookalike_ranges": [\n{rows(tables.lookalikes)}\n  ],\n'
            f'  "letter_folds": [\n{folds}\n  ]\n}}\n')


def main(argv: list[str]) -> int:
    tables = Tables(space_ranges(), blank_ranges(), lookalike_ranges(), letter_folds())
    wanted = {NODE_TABLE: node_text(tables), SPEC_TABLE: json_text(tables)}
    if "--check" in argv:
        stale = [str(p.relative_to(ROOT)) for p, text in wanted.items()
                 if not p.exists() or p.read_text(encoding="utf-8") != text]
        if stale:
            print("stale tables: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    for path, text in wanted.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

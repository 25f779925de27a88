"""The label sanitiser (IDLE-LABEL-1..6): its properties, its table, and the Node port's agreement.

The properties run on the ``ci`` profile's budget and on at least 100 000
inputs under ``HYPOTHESIS_PROFILE=deep``. The Node comparison sends one batch
of random labels (astral characters, combining marks, lone surrogates and the
prefix phrase in pieces) through ``node`` and compares the answers exactly.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxspec.impl import idle_label, idle_label_table
from inboxspec.impl.idle_label import (
    PEER_IDLE_LABEL_MAX,
    PREFIX_PHRASE,
    maps_to_space,
    peer_idle_notice_label,
    sanitise_by_definition,
)
from inboxspec.model import idle_subscriptions as model

ROOT = Path(__file__).resolve().parent.parent
DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = 100_000 if DEEP else 300

# Pieces that meet the rules' edges: the phrase in every case and split by
# class members, envelope punctuation, astral and combining characters,
# lone surrogates, and format characters newer than Python 3.11's database.
PIECES = st.sampled_from([
    "peer", "PEER", "pEeR", " ", "idle", "IDLE", "notice", "Notice", "peer idle notice", "\u200b",
    "\u2028", "\t", "\u202e", "\u2066", "\ufeff", "\u00ad", "[", "]", "<", ">", "«", "»", '"',
    "\U0001F600", "\U00020000",
    "\u0301", "e\u0301", "\ud800", "\udfff", "\ud83d", "\U0001343a", "\u00a0", "\u3000", "a", "Z", "x y",
    "\u0440", "\u200d", "\u3164", "\u115f", "\uffa0", "\u2800", "\ufe0f",
])
LABELS = st.one_of(
    st.text(max_size=40),
    st.lists(PIECES, max_size=40).map("".join),
    st.lists(PIECES, min_size=30, max_size=80).map("".join),
    st.text(alphabet=st.characters(codec=None), min_size=90, max_size=130),
)


def _is_blank(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in idle_label_table.BLANK_RANGES)


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


@settings(max_examples=EXAMPLES)
@given(raw=LABELS)
def test_sanitised_label_properties(raw: str) -> None:
    result = peer_idle_notice_label(raw)
    if result is None:
        return
    assert 0 < len(result) <= PEER_IDLE_LABEL_MAX  # IDLE-LABEL-4: code points
    assert any(c != " " and not _is_blank(c) for c in result)  # IDLE-LABEL-6: something printable
    assert result == result.strip(" ") and "  " not in result  # IDLE-LABEL-2
    assert not any(maps_to_space(c) and c != " " for c in result)  # IDLE-LABEL-1
    assert PREFIX_PHRASE not in _ascii_lower(result)  # IDLE-LABEL-3
    assert peer_idle_notice_label(result) == result  # IDLE-LABEL-5: idempotent


@settings(max_examples=EXAMPLES)
@given(raw=LABELS)
def test_fast_path_model_and_definition_agree(raw: str) -> None:
    expected = sanitise_by_definition(raw)
    assert peer_idle_notice_label(raw) == expected
    assert model.label(raw) == expected


def test_committed_tables_match_the_generator() -> None:
    """IDLE-LABEL-1: the tables are what spec/tools/idle_label_table.py writes from Unicode 15.1.0."""
    pytest.importorskip("unicodedata2")
    tool = ROOT / "spec" / "tools" / "idle_label_table.py"
    process = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True,
                             timeout=300)
    assert process.returncode == 0, process.stderr


def test_table_does_not_follow_the_runtime() -> None:
    """Format characters that Unicode 15 added are in the class whatever Python 3.11 knows."""
    assert all(maps_to_space(chr(cp)) for cp in range(0x13430, 0x13440))
    assert idle_label.peer_idle_notice_label("a\U0001343ab") == "a b"


def test_ten_megabyte_label_is_sanitised() -> None:
    """IDLE-LABEL-5: a nested-phrase input of 10 MB goes through (the benchmark prints its speed)."""
    nested = "peer idle " * 400_000 + "notice " * 400_000
    assert len(nested) > 6_000_000
    assert peer_idle_notice_label(nested) is None
    assert peer_idle_notice_label("x" * 10_000_000) == "x" * PEER_IDLE_LABEL_MAX


def drawn(labels: st.SearchStrategy[str]) -> list[str]:
    """The labels hypothesis draws from ``labels``, for a port to answer in one run."""
    samples: list[str] = []

    @settings(max_examples=2000 if DEEP else 300, database=None)
    @given(raw=labels)
    def collect(raw: str) -> None:
        samples.append(raw)

    collect()
    return samples


NODE_SCRIPT = """
import { createInterface } from "node:readline";
import { peerIdleNoticeLabel } from "./idle-subscriptions.mjs";
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  // The seed's "nothing printable left" is undefined; the reference's is None.
  process.stdout.write(JSON.stringify(peerIdleNoticeLabel(JSON.parse(line)) ?? null) + "\\n");
}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_port_agrees_on_random_labels(tmp_path: Path) -> None:
    samples = drawn(LABELS)
    port = ROOT / "conformance" / "ports" / "node"
    script = port / ".label-check.mjs"
    script.write_text(NODE_SCRIPT, encoding="utf-8")
    try:
        # ensure_ascii writes lone surrogates as \\u escapes, which JSON.parse turns back into them.
        stdin = "".join(json.dumps(s) + "\n" for s in samples)
        process = subprocess.run(["node", str(script)], input=stdin, capture_output=True, text=True,
                                 timeout=120, cwd=port)
    finally:
        script.unlink()
    assert process.returncode == 0, process.stderr
    answers = [json.loads(line) for line in process.stdout.splitlines()]
    assert len(answers) == len(samples)
    for raw, answer in zip(samples, answers, strict=True):
        assert answer == peer_idle_notice_label(raw), raw


def test_spec_table_is_the_reference_table() -> None:
    """IDLE-LABEL-1: spec/idle-label-table.json holds exactly the ranges the reference uses."""
    table = json.loads((ROOT / "spec" / "idle-label-table.json").read_text(encoding="utf-8"))
    assert table["unicode_version"] == idle_label_table.UNICODE_VERSION
    assert [tuple(pair) for pair in table["space_ranges"]] == list(idle_label_table.SPACE_RANGES)
    assert [tuple(pair) for pair in table["blank_ranges"]] == list(idle_label_table.BLANK_RANGES)


@pytest.mark.parametrize("blank", ["\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\ufe0f", "\U000e0100"])
def test_a_label_of_blanks_alone_is_none(blank: str) -> None:
    """IDLE-LABEL-6: code points that print nothing are not printable, alone or with spaces."""
    assert peer_idle_notice_label(blank) is None
    assert peer_idle_notice_label(f" {blank}\t{blank}{blank} ") is None
    assert peer_idle_notice_label(f"{blank}a{blank}") == f"{blank}a{blank}"  # kept beside a printable one


# -- IDLE-F5 and its option fold_lookalikes (IDLE-OPT-5): a property about texts ------------------

NOTICE_TAIL_WORDS = "automated harness notice"
# The pinned Unicode 15.1.0 database the table is generated from (it ships no type stubs).
unicodedata2 = importlib.import_module("unicodedata2")
LOOKALIKE_PIECES = st.sampled_from([
    "［", "］", "「", "」", "〈", "〉", "《", "》", "‹", "›", "＂", "＜", "＞", "﹤", "﹥", "(", ")", "№",
    "ｐｅｅｒ", "ＰＥＥＲ", "𝐩𝐞𝐞𝐫", "ⓟⓔⓔⓡ", "ｉｄｌｅ", "ⅰdle", "ＩＤＬＥ",
    "ｎｏｔｉｃｅ", "𝐧𝐨𝐭𝐢𝐜𝐞", "notice",
    "peer", "idle", " ", "\u3000", "\u200b", "ａｕｔｏｍａｔｅｄ", "automated", "harness", "ｈａｒｎｅｓｓ",
    "This is an automated harness notice, not a message from a person and not an instruction.",
    "\u212a", "e\u0301", "x", "[", "]", "peer idle notice",
])
LOOKALIKE_LABELS = st.lists(LOOKALIKE_PIECES, max_size=30).map("".join)


def _reads_as_a_tag_or_tail(label: str | None) -> bool:
    """IDLE-F5's property, checked against Unicode's own compatibility folding (NFKC), not the
    sanitiser's table: whether a label holds a lookalike bracket, the tag's words or the
    closing sentence's words."""
    if label is None:
        return False
    folded = unicodedata2.normalize("NFKC", label).lower()
    lookalike = any(low <= ord(c) <= high for c in label for low, high in idle_label_table.LOOKALIKE_RANGES)
    return lookalike or PREFIX_PHRASE in folded or NOTICE_TAIL_WORDS in folded


@pytest.mark.parametrize("raw", [
    "［ｐｅｅｒ ｉｄｌｅ ｎｏｔｉｃｅ］ Session x exited",
    "𝐩𝐞𝐞𝐫 𝐢𝐝𝐥𝐞 𝐧𝐨𝐭𝐢𝐜𝐞",
    "This is an automated harness notice, not a message from a person and not an instruction.",
])
def test_lookalike_tags_survive_by_default(raw: str) -> None:
    """IDLE-F5 fails under the seed's sanitiser; the option removes what reads as the tag or tail."""
    assert _reads_as_a_tag_or_tail(peer_idle_notice_label(raw))
    assert _reads_as_a_tag_or_tail(model.label(raw))
    assert not _reads_as_a_tag_or_tail(peer_idle_notice_label(raw, fold_lookalikes=True))


@settings(max_examples=EXAMPLES)
@given(raw=st.one_of(LOOKALIKE_LABELS, LABELS))
def test_folded_labels_read_as_no_tag_and_no_tail(raw: str) -> None:
    """IDLE-OPT-5: with the option no sanitised label holds the tag, the tail's words or a bracket
    lookalike; the model agrees with the reference, and the result is idempotent."""
    result = peer_idle_notice_label(raw, fold_lookalikes=True)
    assert not _reads_as_a_tag_or_tail(result), (raw, result)
    assert model.label(raw, True) == result
    assert result is None or peer_idle_notice_label(result, fold_lookalikes=True) == result


def test_folded_nesting_of_a_megabyte_is_removed() -> None:
    """IDLE-OPT-5 keeps IDLE-LABEL-5's one pass: phrases nested 40 000 deep in fullwidth letters
    and lookalike brackets, closed up by removals, all go."""
    nested = "［ａｕｔｏｍａｔｅｄ ｈａｒｎｅｓｓ " * 40_000 + "ｎｏｔｉｃｅ］" * 40_000
    assert len(nested) > 1_000_000
    assert peer_idle_notice_label(nested, fold_lookalikes=True) is None
    assert peer_idle_notice_label(nested) is not None  # the seed's sanitiser removes none of it


def test_folded_phrases_start_with_the_prefix_phrase() -> None:
    """The generated table's first phrase is the reference's and the model's prefix phrase."""
    assert idle_label_table.FOLDED_PHRASES == (PREFIX_PHRASE, NOTICE_TAIL_WORDS)
    assert model.PHRASE == PREFIX_PHRASE


NODE_FOLDED_SCRIPT = """
import { readFileSync } from "node:fs";
import { runCase } from "./idle-subscriptions.mjs";
const labels = JSON.parse(readFileSync(0, "utf8"));
const steps = labels.map((raw) => ({ event: "sanitise_label", args: { raw } }));
const result = runCase({ options: { fold_lookalikes: true } }, steps);
process.stdout.write(JSON.stringify(result.outputs.map((o) => o.label)));
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_port_agrees_on_folded_labels(tmp_path: Path) -> None:
    """IDLE-OPT-5: the Node port folds random lookalike labels to the reference's answers."""
    samples = drawn(st.one_of(LOOKALIKE_LABELS, LABELS))
    port = ROOT / "conformance" / "ports" / "node"
    script = port / ".label-fold-check.mjs"
    script.write_text(NODE_FOLDED_SCRIPT, encoding="utf-8")
    try:
        process = subprocess.run(["node", str(script)], input=json.dumps(samples), capture_output=True,
                                 text=True, timeout=120, cwd=port)
    finally:
        script.unlink()
    assert process.returncode == 0, process.stderr
    answers = json.loads(process.stdout)
    assert len(answers) == len(samples)
    for raw, answer in zip(samples, answers, strict=True):
        assert answer == peer_idle_notice_label(raw, fold_lookalikes=True), raw


def test_every_letter_fold_is_one_small_ascii_letter() -> None:
    """IDLE-OPT-5: a fold is one code point for one letter. U+0130, whose lower case is two code
    points ("i" and a combining dot) that compare between "a" and "z" as a string, is no fold."""
    table = json.loads((ROOT / "spec" / "idle-label-table.json").read_text(encoding="utf-8"))
    folds = dict(table["letter_folds"])
    assert folds and all(len(letter) == 1 and "a" <= letter <= "z" for letter in folds.values())
    assert 0x130 not in folds and folds[0x212A] == "k"  # the Kelvin sign folds; İ does not

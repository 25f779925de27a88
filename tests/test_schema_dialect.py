"""Schema patterns are read as ECMA-262 reads them (machines/schema_dialect.py), by both validators.

A port checks a case file with an ECMA-262 engine; the runner must refuse what that engine
refuses. Python's ``re`` read ``$`` as also matching before a final newline, so a case id
``"wake-gate/x\\n"`` passed the case-file schema and the lint, and ran.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec import machines
from inboxspec.conformance import casefiles
from inboxspec.conformance.casefiles import bundled_cases_dir, case_files, lint
from inboxspec.machines import fixtures, interface, schema_dialect
from inboxspec.machines.schema_dialect import UnsupportedPattern, python_regex
from tests.spies import calls_of

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILES = sorted([*(ROOT / "conformance" / "schemas").rglob("*.json"),
                       ROOT / "spec" / "interface.schema.json"])


def every_pattern() -> list[str]:
    """Every pattern of the bundled schemas and of each machine's case schema."""
    documents: list[Any] = [json.loads(path.read_text(encoding="utf-8")) for path in SCHEMA_FILES]
    documents += [interface.load(machine).case_schema() for machine in machines.names()
                  if interface.has_interface(machine)]
    return sorted({pattern for document in documents for pattern in schema_dialect._patterns(document)})


# Patterns that exercise each rewrite and each construct let through, beside the schemas' own.
CONSTRUCTED = ["a.b", "^.$", "[$.]x$", "(?:a|b)$", "(?=a)a", "(?!b).", r"\.\$", r"\u0041\x42$", r"[\-a]+$",
               r"^a\nb$", "^[^/]", "^a*?b", "^[a-z]{2,3}$", "^a+?$", "^x{1,}$", r"[{}\]]+$", "^(?:ab)+$",
               "^((?=a)[a-z])+$", r"^(\(?=a\))?"]
TEXTS = ["", "a", "ab", "a\n", "a\r", "\n", "a\u2028b", "a\rb", "a\nb", "axb", "x", "x\n", "$x", ".", "AB",
         "AB\n", "-a", "0644", "0644\n", "06444", "wake-gate", "wake-gate\n", "wake-gate/x", "wake-gate/x\n",
         "WAKE-IF-1", "WAKE-IF-1\n", "fs:posix", "fs:posix\n", "decide", "decide\n", "/abs", "rel/x",
         "\U0001F600", "a\U0001F600b"]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js, an ECMA-262 engine")
def test_the_python_reading_matches_ecma_262_on_every_pattern() -> None:
    """Node's RegExp with the ``u`` flag (code points, as ajv reads patterns) is the reference."""
    patterns = [*every_pattern(), *CONSTRUCTED]
    script = ("const [patterns, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "const matches = patterns.map(p => texts.map(t => new RegExp(p, 'u').test(t)));"
              "process.stdout.write(JSON.stringify(matches));")
    done = subprocess.run([shutil.which("node") or "node", "-e", script], input=json.dumps([patterns, TEXTS]),
                          capture_output=True, text=True, timeout=60, check=True)
    ecma = json.loads(done.stdout)
    python = [[re.search(python_regex(p), t) is not None for t in TEXTS] for p in patterns]
    differing = [(p, t) for p, row, ours in zip(patterns, ecma, python, strict=True)
                 for t, e, o in zip(TEXTS, row, ours, strict=True) if e != o]
    assert differing == []
    # And Python's own reading differs where the module says it does: the test can fail.
    assert re.search("^[a-z][a-z0-9-]*$", "wake-gate\n") and re.search("a.b", "a\rb")


@pytest.mark.parametrize(("pattern", "why"), [
    (r"^\d+$", r"escape \d"), (r"\w", r"escape \w"), (r"\s", r"escape \s"), (r"\bx", r"escape \b"),
    (r"a\Z", r"escape \Z"), (r"\Aa", r"escape \A"), (r"(\w)\1", r"escape \w"), ("x\\", "escape \\"),
    ("(?i)a", "groups"), ("(?P<n>a)", "groups"), ("(?<=a)b", "groups"),
    ("[]a]", "empty character class"), ("[^]a]", "empty character class"), ("[[a]", "unescaped ["),
    ("[a", "not closed"), (r"^\uD83D\uDE00$", "surrogate"), ("a{,2}", "starts no counted quantifier"),
    ("{", "starts no counted quantifier"), ("a]", "a lone ]"), ("a}", "a lone }"),
    ("a*+", "quantifier after a quantifier"), ("a{2}{3}", "quantifier after a quantifier"),
    ("a*??", "quantifier after a quantifier"), ("*a", "not a regular expression"), ("(a", "not a regular"),
    ("(?=a)*b", "after a lookahead"), ("x(?!y)?", "after a lookahead"), ("(?=a){1}", "after a lookahead"),
    ("a{4294967296}", "a count past"),
])
def test_a_construct_the_engines_read_differently_is_refused_when_the_validator_is_made(
        pattern: str, why: str) -> None:
    with pytest.raises(UnsupportedPattern, match=re.escape(why)):
        python_regex(pattern)
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": pattern}}}
    makers = (schema_dialect.validator_for, schema_dialect.fast_validator,
              schema_dialect.extended_validator())
    for make in makers:
        with pytest.raises(UnsupportedPattern):
            make(schema)
    with pytest.raises(UnsupportedPattern):
        schema_dialect.validator_for({"patternProperties": {pattern: True}})


PROBE: dict[str, Any] = {
    "id": "wake-gate/lint-probe",
    "description": "A probe case announces on a fresh gate",
    "requirements": ["WAKE-ANN-2"],
    "features": ["fs:posix"],
    "config": {},
    "steps": [{"event": "announce_refusal", "expect": {"announce": True, "streak": 0}}],
}


def _with_newline(where: str) -> dict[str, Any]:
    document: dict[str, Any] = {"machine": "wake-gate", "cases": [copy.deepcopy(PROBE)]}
    case = document["cases"][0]
    if where == "machine":
        document["machine"] += "\n"
    elif where == "fixture name":
        document["fixtures"] = {"tree\n": {"entries": []}}
    elif where in ("requirements", "features"):
        case[where][0] += "\n"
    elif where == "event":
        case["steps"][0]["event"] += "\n"
    else:
        case[where] += "\n"
    return document


@pytest.mark.parametrize("where", ["id", "machine", "requirements", "features", "event", "fixture name"])
def test_a_trailing_newline_where_a_pattern_applies_is_a_schema_error(tmp_path: Path, where: str) -> None:
    """PROTO-CASES-1: refused by the lint, and by the runner's loader, as an ECMA-262 engine refuses it."""
    document = _with_newline(where)
    (tmp_path / "probe.json").write_text(json.dumps(document))
    problems = lint([tmp_path]).problems
    assert any("schema: at " in p and "does not match" in p and "\\n'" in p for p in problems), problems
    assert schema_dialect.validator_for(casefiles.schema()).is_valid(document) is False


def test_a_fixture_mode_with_a_trailing_newline_is_refused() -> None:
    """PROTO-FIX-3: the fixture schema's mode pattern, read as ECMA-262 reads it."""
    good = {"entries": [{"path": "a", "type": "file", "text": "", "mode": "0644"}]}
    bad = {"entries": [{"path": "a", "type": "file", "text": "", "mode": "0644\n"}]}
    assert fixtures.fixture_problems(good) == []
    assert fixtures.fixture_problems(bad) != []


def test_the_fast_validator_reads_patterns_through_the_dialect() -> None:
    """fastjsonschema alone reads ``$`` as the end but its dot as Python's; the dialect's fast
    validator reads both as ECMA-262 does (where the installed fastjsonschema lets it, as here)."""
    schema = {"type": "string", "pattern": "^a.b$"}
    alone = fastjsonschema.compile(schema)
    alone("a\rb")  # accepted: Python's dot
    fast = schema_dialect.fast_validator(schema)
    assert fast is not None, "the installed fastjsonschema keeps its patterns elsewhere: no fast path"
    assert (fast("a\rb"), fast("axb"), fast("axb\n")) == (False, True, False)
    assert casefiles._case_file_validators()[0] is not None


def _bundled_documents() -> list[Any]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in case_files([bundled_cases_dir()])]


def test_both_validators_accept_every_bundled_case_file() -> None:
    fast, full = casefiles._case_file_validators()
    assert fast is not None
    documents = _bundled_documents()
    assert len(documents) > 50
    assert all(fast(document) for document in documents)
    assert all(full.is_valid(document) for document in documents)


_DOCUMENTS = _bundled_documents()
_REPLACEMENTS = st.sampled_from([None, True, 0, -1, 2.5, "", "x", "x\n", "WAKE-IF-1\n", "a b", [], {}, ["x"],
                                 [1, 1], ["fs:posix", "fs:posix"], {"x": 1}, "\u2028", "0644\n"])


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value``, to a value inside it (the root excluded)."""
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found.append((*path, key))
        found += _places(inner, (*path, key))
    return found


@st.composite
def mutated_case_files(draw: st.DrawFn) -> Any:
    """A bundled case file (its first two cases) with one to three changes: a place replaced,
    removed or duplicated, given an extra key, or, as often as not, a string given a newline at
    its end or a space inside (the texts that patterns concern)."""
    document = copy.deepcopy(draw(st.sampled_from(_DOCUMENTS)))
    document["cases"] = document["cases"][:2]
    for _ in range(draw(st.integers(1, 3))):
        places = _places(document)
        strings = [path for path in places if isinstance(_at(document, path), str)]
        if not places:
            break
        operation = draw(st.sampled_from(["replace", "remove", "duplicate", "extra key", "newline", "space"]))
        path = draw(st.sampled_from(strings if operation in ("newline", "space") and strings else places))
        parent, key = _at(document, path[:-1]), path[-1]
        if operation == "replace":
            parent[key] = copy.deepcopy(draw(_REPLACEMENTS))
        elif operation == "remove":
            del parent[key]
        elif operation == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        elif operation in ("newline", "space") and isinstance(parent[key], str):
            parent[key] = parent[key] + "\n" if operation == "newline" else f" {parent[key]}"
        elif isinstance(parent[key], dict):
            extra = draw(st.sampled_from(["x", "id", "expect", "tree\n", "$fixture"]))
            parent[key][extra] = copy.deepcopy(draw(_REPLACEMENTS))
    return document


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        document = document[key]
    return document


@given(mutated_case_files())
def test_the_fast_validator_accepts_exactly_what_jsonschema_accepts(document: Any) -> None:
    """The case loader's first pass (``casefiles.schema_errors``) may skip jsonschema only for a file
    jsonschema accepts: the two validators agree on mutated bundled files, accepted and refused."""
    fast, full = casefiles._case_file_validators()
    assert fast is not None
    assert fast(document) == full.is_valid(document)


def test_the_loading_benchmark_measures_both_ways() -> None:
    """``benchmarks/case_loading.py`` loads the bundled cases both ways and prints each figure."""
    process = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "case_loading.py"), "--samples", "1"],
                             capture_output=True, text=True, timeout=120, check=True)
    figures = [float(found) for found in re.findall(r":\s+([0-9.]+) s", process.stdout)]
    assert len(figures) == 4 and all(figure > 0 for figure in figures), process.stdout
    assert f"{len(_DOCUMENTS)} bundled case files" in process.stdout and "yardstick:" in process.stdout


@pytest.mark.parametrize("beside", ["additionalProperties", "unevaluatedProperties"])
def test_pattern_properties_beside_a_keyword_that_reads_them_itself_is_refused(beside: str) -> None:
    """jsonschema's additionalProperties and unevaluatedProperties match patternProperties' patterns
    with Python's re themselves: {"a\\n": ...} passed jsonschema and failed fastjsonschema and ECMA-262."""
    schema = {"type": "object", "patternProperties": {"^a$": {"type": "integer"}}, beside: False}
    for make in (schema_dialect.validator_for, schema_dialect.fast_validator):
        with pytest.raises(UnsupportedPattern, match=f"patternProperties beside {beside}"):
            make(schema)


_JSON_SCALARS = (st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, -0.0, 1.0, 2.5])
                 | st.sampled_from(["", "1", "a"]))
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), inner,
                                                                max_size=2),
    max_leaves=8)


@given(st.lists(_JSON_VALUES, max_size=6))
def test_unique_items_is_jsonschemas_own_in_one_pass(items: list[Any]) -> None:
    """``uniqueItems`` as inboxspec checks it (one pass, by each item's equality key) finds what
    jsonschema's own finds by comparing items: ``1`` and ``1.0`` one value, ``true`` and ``1`` two,
    objects equal whatever their members' order."""
    from jsonschema import _utils

    ours = schema_dialect.validator_for({"uniqueItems": True})
    assert ours.is_valid(items) == bool(_utils.uniq(items))


def test_unique_items_never_compares_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Items that do not sort (a string beside integers) are not compared pair by pair, as
    jsonschema's own check does: a 39 kB case file took 14 s to report, a 16 MiB one days."""
    from jsonschema import _keywords, _utils

    def refused(*_args: Any) -> bool:
        raise AssertionError("items compared by jsonschema's own uniqueItems")

    monkeypatch.setattr(_keywords, "uniq", refused)
    monkeypatch.setattr(_utils, "uniq", refused)
    unsortable = ["HOST-SEND-1", *range(50_000)]
    validator = schema_dialect.validator_for({"uniqueItems": True})
    assert validator.is_valid(unsortable)
    errors = list(validator.iter_errors([*unsortable, 7]))
    assert [e.message.endswith("] has non-unique elements") for e in errors] == [True]


def test_items_whose_hashes_collide_are_counted_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The integers 1 + k * (2**61 - 1) all hash alike in CPython, so a set of them compares every pair:
    a 955 kB case file's requirements took 8.5 s in fastjsonschema's uniqueItems, and as long again in
    a key that kept integers as they are. Both count by keys whose hashes no document chooses; the
    fast validator still finds the one duplicate (1 and 1.0 are one number), and still tells a
    boolean from a number."""
    colliding = [1 + k * (2**61 - 1) for k in range(2_000)]
    assert len({hash(n) for n in colliding}) == 1
    seen = calls_of(monkeypatch, schema_dialect, "_hash_safe")
    fast = schema_dialect.fast_validator({"type": "array", "uniqueItems": True})
    assert fast is not None
    assert fast(colliding) and not fast([*colliding, 1.0]) and fast([1, True]) and fast([[1], [True]])
    assert len(seen) >= len(colliding)  # the generated code counted through inboxspec's set
    keys = {schema_dialect._equality_key(n) for n in colliding}
    assert len(keys) == len(colliding) and len({hash(key) for key in keys}) > 1


def test_the_protocol_validators_count_unique_items_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """An adapter's start reply is checked against its schema as case files are: a ``machines`` of
    integers that all hash alike, 8 MB long, took 22 minutes to refuse, deaf to signals (found by an
    attack helper). The runner's validator counts them through inboxspec's set, and still refuses."""
    from inboxspec.conformance import runner

    colliding = [1 + k * (2**61 - 1) for k in range(2_000)]
    reply = {"ready": True, "version": 1, "implementation": {"name": "port", "version": "1", "language": "x"},
             "machines": colliding}
    seen = calls_of(monkeypatch, schema_dialect, "_hash_safe")
    with pytest.raises(fastjsonschema.JsonSchemaValueException, match="must be string"):
        runner.START_REPLY(reply)
    assert len(seen) >= len(colliding)

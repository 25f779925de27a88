"""Loading and linting conformance case files.

Cases are data (``conformance/cases/<machine>/*.json``), defined by
``schemas/case-file.schema.json`` and validated against it with its patterns read as ECMA-262
reads them (``machines/schema_dialect.py``). The lint
adds what a schema cannot say: ids unique across the suite, every cited
requirement present in ``spec/``, every requirement cited by some case, and
the description style of the JSON-Schema-Test-Suite (present tense, no
"should", unique within a machine).

Case files are hostile input. Only regular files of at most
``MAX_CASE_FILE_BYTES`` are read, and they are refused without being read
otherwise (PROTO-CASES-2); a file's shared ``fixtures`` are resolved into the
cases that reference them, and every fixture is checked whole before any case
runs (PROTO-FIX-3, PROTO-FIX-4), each problem named with its JSON path.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from inboxspec import machines
from inboxspec.conformance import interface_lint, reference_lint
from inboxspec.conformance.adapter_process import DEFAULT_MAX_LINE_BYTES
from inboxspec.conformance.fixtures import SPECIAL_BITS_REQUIREMENTS, remembered_fixture_problems
from inboxspec.conformance.interrupts import raise_if_interrupted
from inboxspec.conformance.plainjson import NotPlainJSON, escaping_lone_surrogates, parse_plain_json
from inboxspec.conformance.reportfile import write_atomically
from inboxspec.machines import schema_dialect
from inboxspec.spec import index as spec_index

SHOULD = re.compile(r"\bshould\b", re.IGNORECASE)
# WARNING: written out in spec/conformance-protocol.md (PROTO-CASES-2); change both together.
MAX_CASE_FILE_BYTES = 16 * 1024 * 1024
# WARNING: written out in spec/conformance-protocol.md (PROTO-CASES-2) too; change both together.
# The most bytes of case files that one load reads together. Parsed, a case file
# takes up to about fifty times its size in memory, so without it a directory of many files each
# under the limit above filled memory. The bundled suite holds about 7.5 MB.
MAX_RUN_CASE_BYTES = 32 * 1024 * 1024
# WARNING: written out in spec/conformance-protocol.md (PROTO-CASES-1) too; change both together.
# The most schema errors listed for one case file. jsonschema's error objects take some 3.6 kB
# each, and a file of empty cases has five per case: a 3 MB file of them filled 7 GB listing them
# all. The first ones found say what is wrong as well.
MAX_SCHEMA_ERRORS = 100


class CaseFileError(Exception):
    """Case files that cannot be read, do not match the schema, or break the lint's rules.

    ``problems`` lists every problem found, one line each, naming the file and
    the place; the message is their summary.
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = problems or [message]
        super().__init__("\n  ".join(self.problems) if len(self.problems) > 1 else message)


@dataclass(frozen=True)
class Case:
    machine: str
    id: str
    description: str
    requirements: tuple[str, ...]
    features: tuple[str, ...]
    config: dict[str, Any]
    steps: tuple[dict[str, Any], ...]
    expect_config_error: str | None
    source: str

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """The steps as sent to an adapter: expectations and notes stripped."""
        return [{k: v for k, v in s.items() if k in ("event", "args")} for s in self.steps]

    @property
    def expected(self) -> dict[str, Any]:
        if self.expect_config_error is not None:
            return {"config_error": self.expect_config_error}
        return {"outputs": [s["expect"] for s in self.steps]}


@dataclass
class LintReport:
    problems: list[str] = field(default_factory=list)
    cases: int = 0
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)
    # The cases read, so that a caller that lints before it runs reads the files once.
    loaded: list[Case] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def bundled_cases_dir() -> Path:
    # The folder itself, through the module's resolved path: the dev install's
    # link tree lists files, so a case file added since the install would be
    # missing from it, while the folder the link points into has it.
    return Path(__file__).resolve().parent / "cases"


def registered_case_dirs() -> list[Path]:
    """Every registered machine's case directory: the suite that `check` and `conform` run."""
    return [machine.cases for machine in machines.all_machines()]


def schema() -> dict[str, Any]:
    text = resources.files("inboxspec.conformance").joinpath("schemas/case-file.schema.json")
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _case_file_validators() -> tuple[Callable[[Any], bool] | None, jsonschema.Draft202012Validator]:
    """The case-file schema's two validators, made once (the schema is the package's own file):
    fastjsonschema's, which only accepts or refuses, and jsonschema's, which reports every error.
    Both read the schema's patterns as ECMA-262 does (``machines/schema_dialect.py``)."""
    document = schema()
    return schema_dialect.fast_validator(document), schema_dialect.validator_for(document)


def _path_key(path: Iterable[str | int]) -> list[tuple[int, int, str]]:
    """A JSON path as a sort key: an index as a number (``cases[3]`` before ``cases[20]``)."""
    return [(0, part, "") if isinstance(part, int) else (1, 0, part) for part in path]


def schema_errors(data: Any) -> tuple[list[jsonschema.ValidationError], bool]:
    """The errors of ``data`` against the case-file schema, at most the first MAX_SCHEMA_ERRORS
    found, sorted by path (an index as a number), and whether there are more. The fast validator
    passes the file first: jsonschema took 0.6 s of the 0.83 s that loading the bundled cases took
    here, and the fast validator takes 0.04 s, so loading them takes 0.28 s
    (``benchmarks/case_loading.py``). jsonschema lists the errors of a file the fast one refuses,
    and has the last word: a file it finds no error in is accepted.
    ``tests/test_schema_dialect.py`` shows that the two accept the same files."""
    fast, full = _case_file_validators()
    if fast is not None and fast(data):
        return [], False
    found = full.iter_errors(data)
    first = sorted(itertools.islice(found, MAX_SCHEMA_ERRORS), key=lambda e: _path_key(e.absolute_path))
    return first, next(found, None) is not None


# The SHA-256 digests of the case files whose text the schema accepted in this process. Schema
# validation is more than half of loading a directory of cases, and a process that runs the suite
# several times (``conform matrix``, a test session) reads the same files again: a file whose bytes
# hash to a remembered digest parses to the same JSON, which the schema accepts again. Only files
# the schema accepted are remembered (a refused one is refused afresh, each problem reported), and
# at most MAX_REMEMBERED_CLEAN_FILES of them: past that the memory starts empty again.
_SCHEMA_CLEAN: set[bytes] = set()
MAX_REMEMBERED_CLEAN_FILES = 4096


def _json_names(directory: Path) -> list[Path]:
    """Every name ending in ``.json`` below ``directory``, whatever it is, found without following a
    link into another directory: the loader then refuses those that are not regular files."""
    found: list[Path] = []
    # A stack, not os.walk, which recurses once a level in this Python: a tree nested a thousand deep
    # ended the linter in a RecursionError traceback. An OSError (a name too long, say) is the caller's.
    pending = [os.fspath(directory)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    found.append(Path(entry.path))
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return sorted(found)


def case_files(directories: Iterable[Path]) -> list[Path]:
    """The case files under each of ``directories`` (a case directory, or one case file). A name
    that is a symlink is refused, as a link inside a case directory is: a downloaded directory that
    is a link to ``/etc`` would otherwise have its JSON files read, and quoted in the problems."""
    files: list[Path] = []
    for directory in directories:
        try:
            info = os.lstat(directory)
        except FileNotFoundError:
            raise CaseFileError(f"{directory}: no such case directory or file") from None
        except OSError as error:
            raise CaseFileError(f"{directory}: cannot list case files: {error}") from None
        if stat.S_ISLNK(info.st_mode):
            raise CaseFileError(f"{directory}: a symlink; name the case directory or file it points to")
        try:
            files.extend(_json_names(directory) if stat.S_ISDIR(info.st_mode) else [directory])
        except OSError as error:
            raise CaseFileError(f"{directory}: cannot list case files: {error}") from error
    total = sum(_regular_size(path) for path in files)
    if total > MAX_RUN_CASE_BYTES:
        raise CaseFileError(f"the case files hold {total} bytes together; a run loads at most "
                            f"{MAX_RUN_CASE_BYTES} (PROTO-CASES-2)")
    return files


def _regular_size(path: Path) -> int:
    """The size of ``path`` when it is a regular file, else 0 (the loader refuses it, unread)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symlink"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_case_bytes(path: Path) -> bytes:
    """The bytes of one case file, refusing anything but a regular file of at most
    MAX_CASE_FILE_BYTES (PROTO-CASES-2) before reading a byte of it (``read_regular_file``)."""
    return read_regular_file(path, "a case file", MAX_CASE_FILE_BYTES)


def read_regular_file(path: Path, what: str, limit: int) -> bytes:
    """The bytes of ``path``, refusing anything but a regular file of at most ``limit`` bytes before
    reading a byte of it: ``lstat`` first, then an ``open`` that follows no link and never blocks (a
    FIFO), and ``fstat`` of what was opened. CaseFileError names ``what`` the file should have been."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise CaseFileError(f"{path}: {_kind(info.st_mode)}; {what} must be a regular file")
        if info.st_size > limit:
            raise CaseFileError(f"{path}: {info.st_size} bytes; {what} holds at most {limit}")
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise CaseFileError(f"{path}: not readable: {error}") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise CaseFileError(f"{path}: {_kind(opened.st_mode)}; {what} must be a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise CaseFileError(f"{path}: grew past {limit} bytes while it was read")
        return b"".join(chunks)
    except OSError as error:
        raise CaseFileError(f"{path}: not readable: {error}") from None
    finally:
        os.close(fd)


def _portable_float(text: str) -> float:
    # JavaScript and other ports cannot tell 1.0 from 1 once parsed, so a case
    # that writes an integral value as a float means different things to them.
    value = float(text)
    if value == 0 and any(digit in "123456789" for digit in text.lower().partition("e")[0]):
        raise CaseFileError(f"number {text[:40]} underflows a double to 0; write 0 if 0 is meant")
    if value.is_integer():
        raise CaseFileError(f"integral number written as a float ({text[:40]}); write it as an integer")
    return value


def _finite_portable_float(text: str) -> float:
    value = _portable_float(text)
    if value in (float("inf"), float("-inf")):
        raise NotPlainJSON(f"number {text[:40]} overflows a double")
    return value


def read_case_file(path: Path) -> Iterator[Case]:
    """Yield the cases of one file; raise CaseFileError naming the file and every problem.

    Every schema error is reported, each with its JSON path (``$.cases[2].steps[0]``), up to
    MAX_SCHEMA_ERRORS of them (PROTO-CASES-1).
    A file that is not plain JSON (``NaN``, ``Infinity``, a number past a double,
    nesting deeper than the protocol allows) is unusable, like one that is not JSON.
    """
    return cases_of(path, read_case_bytes(path))


def cases_of(path: Path, raw_bytes: bytes) -> Iterator[Case]:
    """The cases of the file ``path`` whose bytes were read as ``raw_bytes`` (``read_case_file``): for a
    caller that keeps the bytes it judged, so that a file changed on disk meanwhile is not read twice."""
    try:
        data = parse_plain_json(raw_bytes.decode("utf-8"), parse_float=_finite_portable_float)
    except CaseFileError as error:
        raise CaseFileError(f"{path}: {error}") from error
    except NotPlainJSON as error:
        raise CaseFileError(f"{path}: not plain JSON: {error}") from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CaseFileError(f"{path}: not readable JSON: {error}") from error
    digest = hashlib.sha256(raw_bytes).digest()
    if digest not in _SCHEMA_CLEAN:
        errors, more = schema_errors(data)
        if errors:
            problems = [f"{path}: schema: at {error.json_path}: {_short(error.message)}" for error in errors]
            if more:
                problems.append(f"{path}: schema: more than {MAX_SCHEMA_ERRORS} errors; "
                                f"the first {MAX_SCHEMA_ERRORS} found are listed")
            raise CaseFileError(problems[0], problems)
        if len(_SCHEMA_CLEAN) >= MAX_REMEMBERED_CLEAN_FILES:
            _SCHEMA_CLEAN.clear()
        _SCHEMA_CLEAN.add(digest)
    configs = _resolved_configs(path, data)
    machine = data["machine"]
    for raw, config in zip(data["cases"], configs, strict=True):
        yield Case(
            machine=machine,
            id=raw["id"],
            description=raw["description"],
            requirements=tuple(raw["requirements"]),
            features=tuple(raw.get("features", ())),
            config=config,
            steps=tuple(raw["steps"]),
            expect_config_error=raw.get("expect_config_error"),
            source=str(path),
        )


def _fixture_problems(path: Path, where: str, fixture: Any, special_bits_allowed: bool) -> list[str]:
    return [f"{path}: fixture: at {where}{inner}: {problem}"
            for inner, problem in remembered_fixture_problems(fixture,
                                                              special_bits_allowed=special_bits_allowed)]


def _resolved_configs(path: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each case's config with ``{"$fixture": name}`` replaced by the file's shared fixture of that
    name (one object for every case that names it), every fixture checked against PROTO-FIX-3.

    Raises CaseFileError listing every problem, each with its JSON path."""
    shared: dict[str, Any] = data.get("fixtures", {})
    problems: list[str] = []
    broken: set[str] = set()
    for name, fixture in shared.items():
        found = _fixture_problems(path, f"$.fixtures.{name}", fixture, special_bits_allowed=True)
        problems += found
        if found:
            broken.add(name)
    used: set[str] = set()
    # Per shared fixture, its problems where special bits are not allowed, worked out once: a case
    # that cites no requirement allowing them adds one line for them, not every problem again (1,000
    # cases naming one fixture of 4,096 setuid entries made four million lines, past 2.7 GB).
    without_special_bits: dict[str, list[str]] = {}
    configs: list[dict[str, Any]] = []
    for number, raw in enumerate(data["cases"]):
        config: dict[str, Any] = raw["config"]
        where = f"$.cases[{number}].config.fixture"
        special_bits_allowed = bool(SPECIAL_BITS_REQUIREMENTS & set(raw["requirements"]))
        fixture = config.get("fixture")
        if isinstance(fixture, dict) and "$fixture" in fixture:
            name = fixture["$fixture"]
            if set(fixture) != {"$fixture"} or not isinstance(name, str) or name not in shared:
                problems.append(f"{path}: fixture: at {where}: a reference is {{\"$fixture\": NAME}} "
                                f"naming a key of the file's \"fixtures\"; got {json.dumps(fixture)[:120]}")
                configs.append(config)
                continue
            used.add(name)
            if not special_bits_allowed and name not in broken:
                if name not in without_special_bits:
                    without_special_bits[name] = _fixture_problems(
                        path, f"$.fixtures.{name}", shared[name], special_bits_allowed=False)
                found = without_special_bits[name]
                if found:
                    more = f"; {len(found) - 1} more such problem(s)" if len(found) > 1 else ""
                    problems.append(f"{found[0]} (referenced at {where}{more})")
            config = {**config, "fixture": shared[name]}
        elif "fixture" in config:
            problems += _fixture_problems(path, where, fixture, special_bits_allowed)
        configs.append(config)
    problems += [f"{path}: fixture: at $.fixtures.{name}: referenced by no case"
                 for name in shared if name not in used]
    if problems:
        raise CaseFileError(problems[0], problems)
    return configs


def case_file_text(data: Any, indent: int = 2, ensure_ascii: bool = False) -> str:
    """A case file's text as every writer of case files writes it (``cases generate``, ``cases
    project``, ``cases expect``, the casebooks): JSON at ``indent``, one trailing newline, and a lone
    surrogate (a text may hold one, PROTO-VAL-4, but UTF-8 cannot) written as its JSON escape
    whichever ``ensure_ascii`` is (written as itself, it made ``cases project`` fail half-way)."""
    text = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n"
    return text if ensure_ascii else escaping_lone_surrogates(text)


def linked_directory(within: Path, path: Path) -> Path | None:
    """The first of the directories from ``within`` down to ``path``'s that is a symbolic link or no
    directory at all, or None: a generator writes and deletes case files only inside the case
    directories themselves (PROTO-CASES-2 walks them without following links), where a link planted
    in a downloaded tree sent its writes, and its deletions of stale files, to the link's target."""
    current = within
    for part in ("", *path.parent.relative_to(within).parts):
        current = current / part if part else current
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None  # made by the write, as a directory
        if not stat.S_ISDIR(info.st_mode):  # a link, or a file where a directory belongs
            return current
    return None


def write_or_compare(path: Path, text: str, write: bool, within: Path) -> bool:
    """A case file made by a generator (``cases generate``, ``cases project``) at ``path``, inside the
    case directory ``within``: with ``write``, ``path`` becomes ``text`` at once (``write_atomically``:
    a failure leaves the old file, never half a new one); without, it is left alone. Whether it
    differed (or was missing). The file there is read as a case file is (``read_case_bytes``: a FIFO
    or a link to ``/dev/zero`` there hung ``check``, or filled its memory); CaseFileError, and nothing
    written, when it is no regular file or a directory on the way is a link (``linked_directory``)."""
    linked = linked_directory(within, path)
    if linked is not None:
        raise CaseFileError(f"{linked}: a symbolic link or not a directory; generated case files are "
                            f"written inside {within} alone")
    current = None
    if os.path.lexists(path):
        try:
            current = read_case_bytes(path).decode("utf-8")
        except UnicodeDecodeError:
            current = None  # not what any generator writes: it differs
    if current == text:
        return False
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text.encode("utf-8"))
    return True


def share_fixtures(file: dict[str, Any]) -> dict[str, Any]:
    """The case file ``file`` with every fixture that two or more of its cases repeat moved to the
    file's ``fixtures`` and referenced as ``{"$fixture": NAME}``; NAME is the slug of the first case
    using it. Loading the result gives every case the fixture it had (PROTO-FIX-4)."""
    counts: dict[str, int] = {}
    for case in file["cases"]:
        if "fixture" in case["config"]:
            key = json.dumps(case["config"]["fixture"], sort_keys=True)
            counts[key] = counts.get(key, 0) + 1
    names: dict[str, str] = {}
    shared: dict[str, Any] = dict(file.get("fixtures", {}))
    cases = []
    for case in file["cases"]:
        fixture = case["config"].get("fixture")
        if fixture is None or counts[json.dumps(fixture, sort_keys=True)] < 2:
            cases.append(case)
            continue
        key = json.dumps(fixture, sort_keys=True)
        if key not in names:
            base = case["id"].rsplit("/", 1)[-1]
            name, number = base, 1
            while name in shared:
                number += 1
                name = f"{base}-{number}"
            names[key] = name
            shared[name] = fixture
        cases.append({**case, "config": {**case["config"], "fixture": {"$fixture": names[key]}}})
    head = {k: v for k, v in file.items() if k not in ("cases", "fixtures")}
    return {**head, **({"fixtures": shared} if shared else {}), "cases": cases}


def shortest_reply_bytes(case: Case, seq: int) -> int:
    """The bytes of the shortest line that passes ``case`` sent as request ``seq`` (PROTO-FRAME-3):
    its reply as compact JSON, each character past ASCII in UTF-8 but a lone surrogate, which is its
    6-byte escape, each number as ``json.dumps`` spells it, without the newline.
    WARNING: the reference adapter writes its replies so (``conformance/adapter.py``'s ``encode``):
    tests/test_conform_runner.py passes cases at the bound with it."""
    reply = {"seq": seq, "id": case.id, "result": case.expected}
    text = escaping_lone_surrogates(json.dumps(reply, separators=(",", ":"), ensure_ascii=False))
    return len(text.encode("utf-8"))


def replies_past_the_bound(cases: Iterable[tuple[int, Case]], max_line_bytes: int) -> list[str]:
    """A problem for each case (with the seq it is sent as) that no reply within ``max_line_bytes``
    can pass (PROTO-FRAME-3): the run would blame the adapter (``oversized-line``) for the case."""
    return [f"{case.source}: {case.id}: its shortest passing reply is {size} bytes, longer than the "
            f"reply bound ({max_line_bytes} bytes, --max-line-bytes): no adapter can pass it"
            for seq, case in cases if (size := shortest_reply_bytes(case, seq)) > max_line_bytes]


def _short(message: str) -> str:
    # jsonschema quotes the whole offending instance; a 1 MB case must not flood the report.
    return message if len(message) <= 300 else message[:300] + "..."


def not_bundled(cases: Iterable[Case]) -> list[Case]:
    """The cases whose files lie outside the package's own case directory (``bundled_cases_dir``),
    which the runner and ``cases expect`` check beyond what the loader does (read without importing
    a machine's module, which a run of one machine must not)."""
    home = os.path.realpath(bundled_cases_dir())
    bundled: dict[str, bool] = {}  # per directory of a case file
    foreign = []
    for case in cases:
        directory = os.path.dirname(case.source)
        if directory not in bundled:
            real = os.path.realpath(directory)
            bundled[directory] = real == home or real.startswith(home + os.sep)
        if not bundled[directory]:
            foreign.append(case)
    return foreign


def load_cases(directories: Iterable[Path]) -> list[Case]:
    """Every case under ``directories``, or CaseFileError listing every problem that
    ``cases lint`` reports for them, except coverage (a selection need not cover the spec) and
    departures from the interface data, which ``conform`` checks on the cases it sends."""
    cases: list[Case] = []
    problems: list[str] = []
    for path in case_files(directories):
        raise_if_interrupted()  # PROTO-SIG-1: between files, as between the cases of the checks after
        try:
            cases.extend(read_case_file(path))
        except CaseFileError as error:
            problems.extend(error.problems)
        if len(problems) > interface_lint.MAX_LISTED_PROBLEMS:
            # Each file's schema errors stop at MAX_SCHEMA_ERRORS, but 4,000 small files of them
            # listed 400,000 lines (2.5 GB): the files after these are not read.
            raise CaseFileError(problems[0], interface_lint.first_listed(problems))
    problems.extend(case_problems(cases))
    if problems:
        raise CaseFileError(problems[0], problems)
    return cases


def case_from_trace(
    machine: str,
    slug: str,
    config: dict[str, Any],
    steps: list[dict[str, Any]],
    description: str = "A recorded trace reproduces its outputs step by step",
    requirements: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A case (JSON-ready) from a recorded trace whose steps carry ``expect``.

    The lockstep tests print counterexamples this way, so a reviewer can paste
    them into ``conformance/cases/``. Without ``requirements`` the case cites the
    placeholder ``TODO-CITE-1``, which the linter rejects: a pasted case must
    cite the requirements it checks before it can land.
    """
    return {
        "id": f"{machine}/{slug}",
        "description": description,
        "requirements": list(requirements) or ["TODO-CITE-1"],
        "config": config,
        "steps": steps,
    }


def lint(directories: Iterable[Path]) -> LintReport:
    report = LintReport()
    cases: list[Case] = []
    for path in case_files(directories):
        try:
            cases.extend(read_case_file(path))
        except CaseFileError as error:
            # Each file's are capped; of thousands of files, only as many as the listing shows are kept
            # (PROTO-CASES-1): 775 kB of files listed 1.9 GB of problems, all held before they were shown.
            if len(report.problems) <= interface_lint.MAX_LISTED_PROBLEMS:
                report.problems.extend(error.problems)
    report.cases, report.loaded = len(cases), cases
    report.problems.extend(case_problems(cases))
    report.problems.extend(interface_lint.problems(cases))
    report.problems.extend(reference_lint.problems(cases))
    # Against the default bound, each with the largest seq a run of them all sends (a run may raise
    # the bound, and one of fewer cases sends smaller seqs).
    largest_seq = len(cases)
    report.problems.extend(replies_past_the_bound(((largest_seq, case) for case in cases),
                                                  DEFAULT_MAX_LINE_BYTES))
    cited: dict[str, set[str]] = {}
    for case in cases:
        cited.setdefault(case.machine, set()).update(case.requirements)

    for machine in sorted({c.machine for c in cases} & set(machines.REGISTRY)):
        document = machines.spec_document(machine)
        report.problems += [f"{document.name}: {problem}"
                            for problem in spec_index.keyword_problems(spec_index.machine_spec_text(machine))]
        required = spec_index.requirements(machine)
        uncited = [r for r in required if r not in cited.get(machine, set())]
        report.coverage[machine] = (len(required) - len(uncited), len(required))
        for requirement in uncited:
            report.problems.append(f"{machine}: {requirement} is cited by no case")
    report.problems = interface_lint.first_listed(report.problems)
    return report


def case_problems(cases: Iterable[Case]) -> list[str]:
    """What is wrong with these cases as a set, each problem naming its file and case.

    ``cases lint`` and ``conform`` both refuse a set with any of these, so a
    run never passes cases that the linter rejects (PROTO-CASES-1).
    """
    problems: list[str] = []
    known: dict[str, set[str]] = {}
    seen_ids: dict[str, str] = {}
    seen_descriptions: dict[tuple[str, str], str] = {}
    for case in cases:
        where = f"{case.source}: {case.id}"
        if case.id in seen_ids:
            problems.append(f"{where}: duplicate id (also in {seen_ids[case.id]})")
        seen_ids.setdefault(case.id, case.source)
        if not case.id.startswith(case.machine + "/"):
            problems.append(f"{where}: id must start with '{case.machine}/'")
        if case.machine not in machines.REGISTRY:
            problems.append(f"{where}: unknown machine {case.machine!r}")
            continue
        if SHOULD.search(case.description):
            problems.append(f"{where}: description says 'should'; state the fact")
        key = (case.machine, case.description.strip().lower())
        if key in seen_descriptions:
            problems.append(
                f"{where}: description repeats that of {seen_descriptions[key]}"
            )
        seen_descriptions.setdefault(key, case.id)
        if (case.expect_config_error is None) == (not case.steps):
            problems.append(
                f"{where}: a case has steps, or expect_config_error and no steps, not both"
            )
        if "fixture_dir" in case.config:  # a case's own would point a session anywhere
            problems.append(f"{where}: config has fixture_dir, which only the runner adds (PROTO-FIX-2)")
        if case.machine not in known:
            known[case.machine] = set(spec_index.requirements(case.machine))
        for requirement in case.requirements:
            if requirement not in known[case.machine]:
                problems.append(f"{where}: cites {requirement}, which is not in spec/")
        if len(problems) > interface_lint.MAX_LISTED_PROBLEMS:  # a line per unknown requirement, say
            return interface_lint.first_listed(problems)
    return problems

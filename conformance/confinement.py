"""Whether a case keeps a port's reads inside its fixture (PROTO-FIX-5).

A machine that measures the filesystem (the writer proofs) reads wherever a case's paths lead: the
paths its config and steps name, the targets of its fixture's symlinks, and the paths written in
its fixture's files (a setup receipt's roots). What it finds there (whether a path exists, its
kind, mode and size, a package's version) reaches the outputs, and so the reports, and a CI
pipeline runs downloaded case files as root. So a case from outside the bundled suite is run only
when these rules, read from the case alone, show that every read stays inside its fixture, or
when the run allows reads outside (``--allow-outside-reads``):

- every string that a config key or an event argument marked ``reads_paths`` in the machine's
  interface data names (the value, or each string of a list) is *inside*: ``{fixture}`` alone, or
  ``{fixture}/`` and more, with no ``..`` component;
- every symlink of its fixture has a target inside, or relative with no ``..`` component;
- every JSON string literal in a file of its fixture (its text, or its decoded base64 read as
  UTF-8, read left to right as a JSON reader does, a literal never closed ending the scan) that is
  absolute once ``{fixture}`` is replaced (it begins with ``/`` or ``{fixture}``) is inside; and no
  file holds a backslash right before ``{fixture}`` (laid out, ``\\{fixture}`` is ``\\/`` and the
  directory's path, an absolute path to a JSON reader where the literal as written is relative).

Why these suffice (for a port that reads as its spec says): without a ``..`` component, resolving a
path only descends from where it starts, or, at a symlink, starts again at its target: below the
link's own directory (relative), or below the fixture directory (inside). Every start is inside the
fixture, so every step is, however many links it follows. A ``swap_paths`` step moves entries
within the fixture only (WRITER-IF-6), and a relative target without ``..`` stays below whichever
directory its link lands in. A relative path a case names is refused: the kernel resolves it
against the adapter's working directory (a relative writer-proofs home is read so). Strings in
files are read only as roots, which the machine resolves only when absolute (WRITER-HOME-1,
WRITER-MEAS-2). The rules are a lexical check, so they also refuse some cases that stay inside
(``{fixture}/a/../b``, a link to ``../x`` from a subdirectory, a file quoting ``"/usr"``): the
run that trusts them says so with the option.

The bundled cases are the project's own, and some name paths outside on purpose (``/dev/null/home``,
a relative home that names nothing): the runner checks only the cases whose files lie elsewhere, and
of those it runs a case that sends exactly what a bundled case sends (a copy of the bundled suite in
a clone, say), since what it makes a port read is the project's own.

WARNING: spec/conformance-protocol.md (PROTO-FIX-5) states these rules for port authors and CI
users, and conformance/WRITING-AN-ADAPTER.md sums them up: a change to a rule is a change to all three.
"""

from __future__ import annotations

import base64
import functools
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from inboxspec import machines
from inboxspec.conformance.interface_lint import MAX_LISTED_PROBLEMS, first_listed, numbered_in_their_files
from inboxspec.conformance.interrupts import raise_if_interrupted
from inboxspec.impl.writer_fs import json_string_literals
from inboxspec.machines.fixtures import PLACEHOLDER

if TYPE_CHECKING:
    from inboxspec.conformance.casefiles import Case

# The option that lets a run read outside its fixtures: named in every refusal.
ALLOW_OPTION = "--allow-outside-reads"


def is_inside(path: str) -> bool:
    """A path naming the fixture directory or something below it, with no ``..`` component."""
    if path != PLACEHOLDER and not path.startswith(PLACEHOLDER + "/"):
        return False
    return ".." not in path.split("/")


def _target_is_inside(target: str) -> bool:
    """A symlink's target that keeps resolution inside: inside, or relative without ``..``."""
    if target.startswith("/") or target.startswith(PLACEHOLDER):
        return is_inside(target)
    return ".." not in target.split("/")


def _literals(text: str) -> Iterator[str]:
    """Every JSON string literal in ``text``, as a JSON reader finds them (``json_string_literals``),
    decoded (its raw contents when it does not decode)."""
    for match in json_string_literals(text):
        literal = match.group()
        try:
            value = json.loads(literal, strict=False)
        except ValueError:  # a bad escape: a reader that takes it anyway takes about these characters
            value = literal[1:-1]
        if isinstance(value, str):
            yield value


def _file_text(entry: Mapping[str, Any]) -> str:
    if "base64" in entry:
        return base64.b64decode(entry["base64"]).decode("utf-8", "surrogateescape")
    text = entry.get("text", "")
    return text if isinstance(text, str) else ""


def _fixture_reads(fixture: Any) -> Iterator[tuple[str, str]]:
    """(JSON path below the config, why) for each place of a fixture that may lead a read outside."""
    entries = fixture.get("entries") if isinstance(fixture, Mapping) else None
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        where = f".fixture.entries[{index}]"
        kind = entry.get("type")
        target = entry.get("target")
        if kind == "symlink" and isinstance(target, str) and not _target_is_inside(target):
            yield (f"{where}.target", f"a symlink to {target!r} may lead outside the fixture "
                                      f"(a target is {PLACEHOLDER} and below, or relative, with no '..')")
        elif kind == "file":
            text = _file_text(entry)
            if "\\" + PLACEHOLDER in text:
                # Laid out, the backslash escapes the directory's leading '/' ('\/'), so a literal
                # that reads here as a relative '\{fixture}/...' names the directory's path and what
                # follows, '..' and all.
                yield (where, f"the file holds a backslash right before {PLACEHOLDER}, which escapes "
                              "the '/' the directory's path begins with")
                continue
            for value in _literals(text):
                if (value.startswith("/") or value.startswith(PLACEHOLDER)) and not is_inside(value):
                    yield (where, f"the file names the path {_shown(value)} outside the fixture")
                    break


def _named_reads(name: str, value: Any) -> Iterator[str]:
    """Why each path that a ``reads_paths`` value names may be read outside the fixture."""
    for path in (value if isinstance(value, list) else [value]):
        if isinstance(path, str) and not is_inside(path):
            yield (f"{name} names {_shown(path)}, outside the fixture "
                   f"(a path read is {PLACEHOLDER} or below it, with no '..')")


def _shown(path: str) -> str:
    return repr(path if len(path) <= 120 else path[:120] + "...")


def _sent(case: Case) -> str:
    """What a run sends of a case that a port acts on: its machine, config, and steps' events and
    arguments, as one canonical text (``true`` and ``1`` differ in it, as they do to a port)."""
    return json.dumps([case.machine, case.config, case.inputs], sort_keys=True, ensure_ascii=False)


@functools.cache
def _bundled_sends(machine: str) -> frozenset[str]:
    """What the bundled cases of ``machine`` send (``_sent``), read once a run needs it."""
    from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases

    directory = bundled_cases_dir() / machine
    return frozenset(_sent(case) for case in load_cases([directory])) if directory.is_dir() else frozenset()


def problems(cases: Iterable[Case]) -> list[str]:
    """Every place where a case may lead a port to read outside its fixture, in file order, one line
    each naming the file, the case and the JSON path in the file. A case that sends what a bundled
    case sends is the project's own wherever its file lies (a copy of the bundled suite, say)."""
    found: list[str] = []
    # Per fixture object, what it may lead to, worked out once: a file's shared fixture is one object
    # for every case that names it (casefiles), and 40 cases naming one fixture of 1 MiB of string
    # literals took 31 s here before any adapter started. Each fixture is held, so no id is reused.
    fixture_reads: dict[int, tuple[Any, list[tuple[str, str]]]] = {}
    for index, case in numbered_in_their_files(cases):
        raise_if_interrupted()  # PROTO-SIG-1: a run checking a large file ends within a case's check
        if case.machine not in machines.REGISTRY:
            continue
        interface = machines.get(case.machine).interface
        if interface is None:
            continue
        at = f"$.cases[{index}]"
        places: list[tuple[str, str]] = []
        for key in interface.config_keys:
            if key.reads_paths and key.name in case.config:
                places += [(f".config.{key.name}", why) for why in itertools.islice(
                    _named_reads(key.name, case.config[key.name]), MAX_LISTED_PROBLEMS + 1)]
        if "fixture" in case.config:
            fixture = case.config["fixture"]
            if id(fixture) not in fixture_reads:
                fixture_reads[id(fixture)] = (fixture, list(_fixture_reads(fixture)))
            places += [(f".config{where}", why) for where, why in fixture_reads[id(fixture)][1]]
        for number, step in enumerate(case.steps):
            if len(found) + len(places) > MAX_LISTED_PROBLEMS:
                break
            name, args = step.get("event"), step.get("args")
            event = interface.events.get(name) if isinstance(name, str) else None
            if event is None or not isinstance(args, Mapping):
                continue
            for argument in event.arguments:
                if argument.reads_paths and argument.name in args:
                    places += [(f".steps[{number}].args.{argument.name}", why) for why in itertools.islice(
                        _named_reads(argument.name, args[argument.name]), MAX_LISTED_PROBLEMS + 1)]
        if places and _sent(case) in _bundled_sends(case.machine):
            continue
        found += [f"{case.source}: {case.id}: outside reads: at {at}{where}: {why} ({ALLOW_OPTION} runs it)"
                  for where, why in places]
        if len(found) > MAX_LISTED_PROBLEMS:
            return first_listed(found)
    return found

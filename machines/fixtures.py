"""Filesystem fixtures: a case's declarative tree, validated, then laid out inside a private root.

This module holds what both the runner (``conformance/fixtures.py``) and the in-process drivers of
machines that read real files need; it lives here because ``machines/`` may not import
``conformance/`` (tests/test_import_graph.py).

A machine whose behaviour depends on real files (the writer proofs measure real installs) describes
the files a case needs in its ``config.fixture`` (``schemas/fixture.schema.json``). The runner lays
that description out in a directory of its own and passes the directory's real path as the request's
``case.fixture_dir``; ports never build fixtures themselves (spec/conformance-protocol.md,
*Filesystem fixtures*).

A case file is hostile input (conformance/WRITING-AN-ADAPTER.md, *Threat model: case files and
fixtures*), so:

- a fixture is validated whole before anything is created (:func:`fixture_problems`,
  PROTO-FIX-3): paths relative and normalised, unique, bounded; no entry below a symlink or a file;
  hard links only to earlier files of the same fixture; sizes and counts bounded; no setuid, setgid
  or sticky bit unless the case cites a requirement that needs one (:data:`SPECIAL_BITS_REQUIREMENTS`);
- every entry is created relative to a directory file descriptor opened without following links on
  any component (``O_NOFOLLOW | O_DIRECTORY``), files with ``O_CREAT | O_EXCL | O_NOFOLLOW |
  O_NONBLOCK`` so that nothing is written through a link and a FIFO never blocks; modes are set
  through descriptors (``fchmod``), never through a path, so a link is never chmod-ed;
- every fixture directory lives in a private root (mode 0700) that only the runner's user can enter,
  so a setuid file of a case that needs one is never reachable by another user;
- swaps (:func:`swap`) and removal (:func:`remove`) walk the same way: a link is moved or deleted as
  itself, never followed.

Every ``{fixture}`` in a file's ``text`` or a symlink's ``target`` becomes the fixture directory's
path, so that files such as a receipt can name other files of the fixture. The path is checked to
need no escaping inside a JSON string, so a substituted JSON file stays valid.
"""

from __future__ import annotations

import base64
import binascii
import ctypes
import errno
import hashlib
import json
import os
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import cache, partial
from importlib import resources
from pathlib import Path
from typing import Any

from inboxspec.machines import held_signals
from inboxspec.machines.itemwise import ItemwiseValidator, json_path

PLACEHOLDER = "{fixture}"
DIRECTORY_MODE = 0o755
FILE_MODE = 0o644
ROOT_MODE = 0o700  # the private root holding a run's fixture directories

# WARNING: the limits below are written out in spec/conformance-protocol.md (PROTO-FIX-3), in
# conformance/schemas/fixture.schema.json (maxItems, maxLength) and, for a swap path, in
# conformance/ports/node/writer-proofs.mjs (fixturePath); change them together.
MAX_ENTRIES = 4096  # entries of one fixture
# Paths one fixture lays out, the parent directories its entries imply counted: 4096 entries 32
# components deep implied 127,000 directories, which took 7 s to lay out and 11 s to remove.
MAX_PATHS = 8192
MAX_TOTAL_BYTES = 8 * 1024 * 1024  # file contents of one fixture, decoded, each {fixture} counted as below
PLACEHOLDER_BYTES = 4096  # what one {fixture} counts for: PATH_MAX, the longest it can become
MAX_PATH_BYTES = 1024  # an entry's path or a link's target, UTF-8
MAX_COMPONENT_BYTES = 255  # one name (NAME_MAX)
MAX_DEPTH = 32  # components of an entry's path
# WARNING: a fingerprint walks no deeper than this (``fingerprint``); it must stay past MAX_DEPTH.
FINGERPRINT_DEPTH = MAX_DEPTH + 1
REMOVAL_SECONDS = 10.0  # the longest a removal during a run takes (``remove``)
# The longest the removal of a run's root takes (``FixtureRoot.close``): nothing writes into it then,
# so only a tree of millions of entries needs more; a process the kill missed cannot hold the run.
CLOSING_REMOVAL_SECONDS = 120.0
SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX
# The requirements that need an entry with the setuid, setgid or sticky bit: WRITER-MEAS-5 says a
# writer root holding one is `unsafe-runtime`. Only a case citing one of them may set these bits.
SPECIAL_BITS_REQUIREMENTS = frozenset({"WRITER-MEAS-5"})
SWAP_PARKING = ".swap-parking"
MAX_UNDO_STEPS = 64  # a case with more fixture-changing steps gets a fresh directory, never a restored one

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Linux's O_PATH: a handle of an entry, which reads nothing of it (0 elsewhere, where it is not).
_O_PATH = getattr(os, "O_PATH", 0)
_DIRECTORY_HANDLE_FLAGS = _O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO never blocks
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class FixtureError(ValueError):
    """A fixture description that cannot be laid out, or a place that cannot hold one."""


class FixtureTimeout(FixtureError):
    """Laying out a fixture took longer than the case's timeout allows."""


@cache
def schema() -> dict[str, Any]:
    text = resources.files("inboxspec.conformance").joinpath("schemas/fixture.schema.json")
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded


@cache
def _validator() -> ItemwiseValidator:
    return ItemwiseValidator(schema(), "entries")


def _utf8_length(text: str) -> int | None:
    """Bytes of ``text`` in UTF-8; None when it holds a lone surrogate (no file name can)."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a fixture-relative path (PROTO-FIX-3), or None."""
    size = _utf8_length(path)
    if size is None:
        return "holds a lone surrogate, which no file name can"
    if "\0" in path:
        return "holds NUL"
    if not path or path.startswith("/"):
        return "is not a relative path"
    if size > MAX_PATH_BYTES:
        return f"is longer than {MAX_PATH_BYTES} bytes"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "is not normalised (an empty, '.' or '..' component)"
    if len(parts) > MAX_DEPTH:
        return f"is deeper than {MAX_DEPTH} components"
    if any(len(part.encode("utf-8")) > MAX_COMPONENT_BYTES for part in parts):
        return f"has a component longer than {MAX_COMPONENT_BYTES} bytes"
    return None


def _content_bytes(entry: Mapping[str, Any]) -> tuple[int, str | None]:
    if "base64" in entry:
        try:
            return len(base64.b64decode(entry["base64"], validate=True)), None
        except (binascii.Error, ValueError) as error:
            return 0, f"is not valid base64 ({error})"
    text = entry.get("text", "")
    size = _utf8_length(text)
    if size is None:
        return 0, "holds a lone surrogate, which cannot be written as UTF-8"
    return size + text.count(PLACEHOLDER) * (PLACEHOLDER_BYTES - len(PLACEHOLDER)), None


def fixture_problems(fixture: Any, *, special_bits_allowed: bool = False) -> list[tuple[str, str]]:
    """Everything wrong with ``fixture``, as (JSON path below the fixture, problem) pairs.

    Empty when the fixture can be laid out. ``special_bits_allowed`` is for a case that cites one
    of :data:`SPECIAL_BITS_REQUIREMENTS`.
    """
    entries_given = fixture.get("entries") if isinstance(fixture, Mapping) else None
    if isinstance(entries_given, list) and len(entries_given) > MAX_ENTRIES:
        # Alone, and before the entries are read: a 4 MB fixture of a million broken entries gave a
        # million problems, half a gigabyte of them.
        return [(".entries", f"holds {len(entries_given)} entries; a fixture holds at most {MAX_ENTRIES}")]
    errors = _validator().errors(fixture)
    if errors:
        return [(json_path(path)[1:], message[:300]) for path, message in errors]
    entries: list[Mapping[str, Any]] = fixture["entries"]
    problems: list[tuple[str, str]] = []
    kinds: dict[str, str] = {}  # every path laid out so far, implicit parents too, and its kind
    explicit: set[str] = set()  # the paths that entries name
    total = 0
    for number, entry in enumerate(entries):
        where = f".entries[{number}]"
        path, kind = entry["path"], entry["type"]
        problem = path_problem(path)
        if problem is not None:
            problems.append((f"{where}.path", f"path {path[:80]!r} {problem}"))
            continue
        parts = path.split("/")
        if parts[0] == SWAP_PARKING:  # swap() parks a path there (WRITER-IF-6)
            problems.append((f"{where}.path", f"path {path[:80]!r} uses {SWAP_PARKING!r}, the name "
                             "swap_paths parks a path under"))
            continue
        blocked = next((("/".join(parts[:i]), kinds["/".join(parts[:i])]) for i in range(1, len(parts))
                        if kinds.get("/".join(parts[:i]), "dir") != "dir"), None)
        if blocked is not None:
            problems.append((f"{where}.path", f"path {path[:80]!r} lies below {blocked[0]!r}, which is "
                             f"a {blocked[1]}; entries are made in directories only, never through a link"))
            continue
        # A directory entry may give its own mode to a parent that an earlier entry implied.
        if path in explicit or (path in kinds and not (kind == "dir" and kinds[path] == "dir")):
            problems.append((f"{where}.path", f"path {path[:80]!r} already exists in this fixture"))
            continue
        if kind == "hardlink":
            target = entry["target"]
            target_problem = path_problem(target)
            if target_problem is not None:
                problems.append((f"{where}.target", f"hard link target {target[:80]!r} {target_problem}"))
                continue
            if kinds.get(target) != "file":
                problems.append((f"{where}.target", f"hard link target {target[:80]!r} is not an earlier "
                                 "file of this fixture"))
                continue
        if kind == "symlink":
            size = _utf8_length(entry["target"])
            if size is None or "\0" in entry["target"]:
                problems.append((f"{where}.target", "symlink target holds NUL or a lone surrogate"))
                continue
            if size > MAX_PATH_BYTES:
                problems.append((f"{where}.target", f"symlink target is longer than {MAX_PATH_BYTES} bytes"))
                continue
            if entry["target"].count(PLACEHOLDER) > 1:
                # Each becomes the fixture directory's path, up to MAX_ROOT_BYTES and a name: two
                # could pass PATH_MAX, and then the lay-out fails (ENAMETOOLONG) where the lint passed.
                problems.append((f"{where}.target", f"symlink target holds {PLACEHOLDER} more than once"))
                continue
        if kind == "file":
            size, content_problem = _content_bytes(entry)
            if content_problem is not None:
                problems.append((f"{where}.{'base64' if 'base64' in entry else 'text'}",
                                 f"content {content_problem}"))
                continue
            total += size
        if "mode" in entry and int(entry["mode"], 8) & SPECIAL_BITS and not special_bits_allowed:
            problems.append((f"{where}.mode", f"mode {entry['mode']} sets the setuid, setgid or sticky "
                             f"bit, which only a case citing {', '.join(sorted(SPECIAL_BITS_REQUIREMENTS))} "
                             "may do"))
        for i in range(1, len(parts)):
            kinds.setdefault("/".join(parts[:i]), "dir")
        kinds[path] = kind
        explicit.add(path)
    if total > MAX_TOTAL_BYTES:
        problems.append((".entries", f"file contents total {total} bytes, more than {MAX_TOTAL_BYTES}"))
    if len(kinds) > MAX_PATHS:
        problems.append((".entries", f"lays out {len(kinds)} paths, the parent directories its entries "
                         f"imply counted, more than {MAX_PATHS}"))
    return problems


def needs_json_escaping(directory: str) -> bool:
    return (any(c in directory for c in '"\\') or any(ord(c) < 0x20 or ord(c) == 0x7F for c in directory)
            or _utf8_length(directory) is None)


# -- laying out, without following a link --------------------------------------------------------------


def _open_directory(name: str, dir_fd: int | None) -> int:
    """The directory ``name``, its last component never followed; below ``dir_fd``, never one on
    another mount (``_opened_on_this_mount``)."""
    if dir_fd is None:
        return os.open(name, _DIRECTORY_FLAGS)
    return _opened_on_this_mount(name, dir_fd, _DIRECTORY_FLAGS)


# A fixture directory, by its path or by an open descriptor of it (``FixtureRoot.opened_tree``).
Tree = str | int


def _opened_tree(directory: Tree) -> int:
    """A new descriptor of ``directory``: by its path (a mount put there refused: OSError, EXDEV), or a
    second one of the descriptor given."""
    if isinstance(directory, int):
        return _open_directory(".", directory)
    parent_path, name = os.path.split(directory)
    # The parent's path is followed, links included, as a path is; the last component is not.
    parent = os.open(parent_path or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return _open_directory(name, parent)
    finally:
        os.close(parent)


class _Walker:
    """Directory descriptors below one open root, opened without following links and cached."""

    LIMIT = 64  # cached descriptors kept from one entry to the next

    def __init__(self, root_fd: int) -> None:
        self.root_fd = root_fd
        self.open: dict[str, int] = {}

    def directory(self, parts: Sequence[str], create: bool) -> int:
        """The descriptor of the directory ``parts`` below the root, creating missing ones."""
        if not parts:
            return self.root_fd
        key = "/".join(parts)
        if key in self.open:
            return self.open[key]
        parent = self.directory(parts[:-1], create)
        name = parts[-1]
        try:
            fd = _open_directory(name, parent)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(name, 0o700, dir_fd=parent)
            fd = _open_directory(name, parent)
            os.fchmod(fd, DIRECTORY_MODE)
        self.open[key] = fd
        return fd

    def trim(self) -> None:
        """Close the cached descriptors once there are many; called between entries only, so a
        descriptor handed out for the entry at hand is never closed (nor its number reused) under it."""
        if len(self.open) >= self.LIMIT:
            self.close()

    def close(self) -> None:
        for fd in self.open.values():
            os.close(fd)
        self.open.clear()


def _write_file(parent: int, name: str, data: bytes, mode: int) -> None:
    fd = os.open(name, _NEW_FILE_FLAGS, 0o600, dir_fd=parent)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _make_fifo(parent: int, name: str, mode: int) -> None:
    os.mkfifo(name, 0o600, dir_fd=parent)
    # Opened for reading without blocking (a FIFO with no writer opens at once), never through a link.
    fd = os.open(name, _FILE_READ_FLAGS, dir_fd=parent)
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            raise FixtureError(f"{name!r} changed while it was laid out")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _mode(entry: Mapping[str, Any], default: int) -> int:
    raw = entry.get("mode")
    return default if raw is None else int(raw, 8)


_VALID: set[tuple[str, bool]] = set()  # fixtures found valid, by canonical text: checked once each


def remembered_fixture_problems(fixture: Any, *, special_bits_allowed: bool) -> list[tuple[str, str]]:
    """:func:`fixture_problems`, remembered for every fixture found valid, by its canonical text:
    the case loader's check and each lay-out's then cost one validation per distinct fixture. Exact,
    since the problems depend on nothing but the text and the flag; a fixture valid without special
    bits is valid with them."""
    if not isinstance(fixture, Mapping):
        return fixture_problems(fixture, special_bits_allowed=special_bits_allowed)
    text = json.dumps(fixture, sort_keys=True, ensure_ascii=True)
    if (text, special_bits_allowed) in _VALID or (text, False) in _VALID:
        return []
    problems = fixture_problems(fixture, special_bits_allowed=special_bits_allowed)
    if not problems:
        if len(_VALID) > 4096:
            _VALID.clear()
        _VALID.add((text, special_bits_allowed))
    return problems


def materialise(fixture: Mapping[str, Any], directory: Path, *, deadline: float | None = None,
                special_bits_allowed: bool = True, opened: int | None = None) -> None:
    """Lay ``fixture`` out in the existing, empty ``directory`` (a real path); with ``opened``, a
    descriptor of that directory (this function does not close it), through it and not its path.

    Raises FixtureError for a fixture that breaks PROTO-FIX-3 (before anything is created) and
    FixtureTimeout when ``deadline`` (``time.monotonic()``) passes first. The case files' loader has
    already checked special bits against the case's requirements, so they are allowed by default.
    """
    problems = remembered_fixture_problems(fixture, special_bits_allowed=special_bits_allowed)
    if problems:
        where, problem = problems[0]
        raise FixtureError(f"fixture{where}: {problem}")
    base = str(directory)
    if needs_json_escaping(base):
        raise FixtureError(f"fixture directory {base!r} needs escaping inside JSON")
    root_fd = _open_directory(base, None) if opened is None else os.dup(opened)
    walker = _Walker(root_fd)
    directory_modes: list[tuple[tuple[str, ...], int]] = []
    try:
        for entry in fixture["entries"]:
            if deadline is not None and time.monotonic() > deadline:
                raise FixtureTimeout("laying out the fixture took longer than the case's timeout")
            walker.trim()
            parts = tuple(entry["path"].split("/"))
            parent, name = walker.directory(parts[:-1], create=True), parts[-1]
            kind = entry["type"]
            if kind == "dir":
                with suppress(FileExistsError):  # an implicit parent, now given its own mode
                    os.mkdir(name, 0o700, dir_fd=parent)
                directory_modes.append((parts, _mode(entry, DIRECTORY_MODE)))
            elif kind == "file":
                if "base64" in entry:
                    data = base64.b64decode(entry["base64"], validate=True)
                else:
                    data = entry.get("text", "").replace(PLACEHOLDER, base).encode("utf-8")
                _write_file(parent, name, data, _mode(entry, FILE_MODE))
            elif kind == "symlink":
                os.symlink(entry["target"].replace(PLACEHOLDER, base), name, dir_fd=parent)
            elif kind == "hardlink":
                target = tuple(entry["target"].split("/"))
                source = walker.directory(target[:-1], create=False)
                os.link(target[-1], name, src_dir_fd=source, dst_dir_fd=parent, follow_symlinks=False)
            elif kind == "fifo":
                _make_fifo(parent, name, _mode(entry, FILE_MODE))
        # Directory modes last and deepest first, so a read-only directory never blocks its children.
        walker.close()
        for parts, mode in sorted(directory_modes, key=lambda item: len(item[0]), reverse=True):
            walker.trim()
            os.fchmod(walker.directory(parts, create=False), mode)
    except OSError as error:
        raise FixtureError(f"fixture could not be laid out: {error}") from None
    finally:
        walker.close()
        os.close(root_fd)


# -- fingerprints: has anyone changed a laid-out tree? ----------------------------------------------


Fingerprint = tuple[tuple[str | int, ...], ...]


def fingerprint(directory: str, *, times: bool = True) -> Fingerprint:
    """Every entry's path, inode, type and mode, owner, size and link count, walked without
    following links; with ``times``, every entry's change and modification times as well; without,
    every regular file's modification time and the digest of its content.

    With ``times``, any write, chmod, chown, rename, link or removal below ``directory`` changes
    some entry's ctime or a directory's listing (``utime`` too), so an equal fingerprint means an
    untouched tree. Without, a tree whose entries were moved and moved back compares equal to the
    original, while any other change still shows (a link's target cannot change in place; a file's
    content is read, since ``utime`` can set its mtime back): the check that a tree restored after a
    case is the one laid out.

    A fingerprint is only ever compared with that of a tree as laid out, whose entries are at most
    ``MAX_DEPTH`` components deep and whose files hold at most ``MAX_TOTAL_BYTES``. So below a
    directory ``FINGERPRINT_DEPTH`` components deep one row (its path, "too deep" and its ctime)
    stands for the subtree, and a file past what is left of those bytes is "too large" unread: the
    walk holds a bounded number of descriptors and frames, and reads a bounded number of bytes,
    whatever tree an adapter makes, and such a tree never compares equal to a laid-out one.
    """
    timed, untimed = _fingerprints(directory, contents=not times)
    return timed if times else untimed


def fingerprints(directory: Tree) -> tuple[Fingerprint, Fingerprint]:
    """``fingerprint(directory)`` and ``fingerprint(directory, times=False)`` from one walk: a
    process writing into the tree between two walks could make its change the second one's."""
    return _fingerprints(directory, contents=True)


def _fingerprints(directory: Tree, *, contents: bool) -> tuple[Fingerprint, Fingerprint]:
    timed: list[tuple[str | int, ...]] = []
    untimed: list[tuple[str | int, ...]] = []
    budget = [MAX_TOTAL_BYTES]  # what is left to read: a laid-out tree's files hold no more
    digests: dict[int, str] = {}  # by inode: hard links to one file read it once

    def content(fd: int, name: str, info: os.stat_result) -> str:
        if info.st_ino in digests:
            return digests[info.st_ino]
        if info.st_size > budget[0]:
            return "too large"
        try:
            handle = _opened_on_this_mount(name, fd, _FILE_READ_FLAGS)
        except OSError:  # unreadable (mode 0000 where the runner's user has no override), or a mount
            return "unread"
        try:
            if os.fstat(handle).st_ino != info.st_ino:
                return "replaced"  # meanwhile: the tree is not as it was listed
            data = b""
            while chunk := os.read(handle, budget[0] + 1 - len(data)):
                data += chunk
                if len(data) > budget[0]:
                    return "too large"
        finally:
            os.close(handle)
        budget[0] -= len(data)
        digest = digests[info.st_ino] = hashlib.sha256(data).hexdigest()
        return digest

    def add(fd: int, name: str, path: str, info: os.stat_result) -> None:
        base: tuple[str | int, ...] = (path, info.st_ino, info.st_mode, info.st_uid, info.st_gid,
                                       info.st_size, info.st_nlink)
        timed.append((*base, info.st_ctime_ns, info.st_mtime_ns))
        if stat.S_ISDIR(info.st_mode):
            untimed.append(base)
        elif stat.S_ISREG(info.st_mode) and contents:
            untimed.append((*base, info.st_mtime_ns, content(fd, name, info)))
        else:
            untimed.append((*base, info.st_mtime_ns))

    def summary(prefix: str, kind: str, info: os.stat_result) -> None:
        timed.append((prefix, kind, info.st_ctime_ns))
        untimed.append((prefix, kind, info.st_ctime_ns))

    def walk(fd: int, prefix: str, depth: int) -> None:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            try:
                info = _looked_at(fd, entry.name)
            except OSError as error:
                if error.errno != errno.EXDEV:
                    raise
                # Another mount (an adapter's, as root; a file can be one too: A14-2): one row, and no
                # look at it, which on a FUSE mount whose daemon never answers held the walk for good.
                timed.append((prefix + entry.name, "another mount"))
                untimed.append((prefix + entry.name, "another mount"))
                continue
            add(fd, entry.name, prefix + entry.name, info)
            if stat.S_ISDIR(info.st_mode):
                below(fd, entry.name, prefix + entry.name + "/", info, depth + 1)

    def below(fd: int, name: str, prefix: str, info: os.stat_result, depth: int) -> None:
        """The rows below the directory ``name``, at ``depth`` components; for one its owner may not
        read or search (mode 0000 or 0600, laid out so or made so by a case) where the runner's user
        has no override, one row with its ctime, times or not: a change below it needs a chmod of it
        first, which changes its ctime. Below ``FINGERPRINT_DEPTH`` one row stands for the subtree."""
        if depth > FINGERPRINT_DEPTH:
            summary(prefix, "too deep", info)
            return
        try:
            child = _open_directory(name, fd)
        except PermissionError:
            summary(prefix, "unreadable", info)
            return
        kept = len(timed), len(untimed)
        try:
            walk(child, prefix, depth)
        except PermissionError:  # listed, but its entries cannot be looked at (no search permission)
            del timed[kept[0]:], untimed[kept[1]:]
            summary(prefix, "unreadable", info)
        finally:
            os.close(child)

    fd = _opened_tree(directory)
    try:
        add(fd, ".", "", os.fstat(fd))  # the directory itself: a directory's rows read nothing
        walk(fd, "", 1)
    finally:
        os.close(fd)
    return tuple(timed), tuple(untimed)


# -- removal and swaps, without following a link ----------------------------------------------------


def _emptied(top: int, deadline: float | None) -> None:
    """Remove everything below the directory ``top``, through descriptors only and never following a
    link, with at most three descriptors open however deep the tree: each directory's entries are
    renamed up into ``top`` (a rename moves a whole subtree at once) and handled there in turn, and
    the emptied directory is removed. An adapter may make a tree thousands of levels deep in its
    fixture directory; a walk that recursed, or held a descriptor per level (Python 3.11's
    ``shutil.rmtree`` does both), ended the run with a RecursionError and left the tree behind.

    ``top`` is listed once a round, not once a level: a directory does not shrink when its entries
    go (ext4), so listing ``top`` again for each level of a chain cost the chain's depth times the
    most entries ``top`` ever held. An entry that cannot be moved or removed (an immutable file) is
    passed over, and the rest still go. A round that moves and removes nothing ends the removal,
    which, with nothing writing into the tree, therefore always ends; ``deadline`` (a
    ``time.monotonic()`` value), checked at every entry, ends it too, for a removal while the
    adapter runs (a process of its own may write into the tree as fast as it is removed).

    No mode is changed but to cure a refusal a mode can cure (``_curable``), which a runner that
    overrides modes (root) never meets: the check that a directory is on the tree's own mount reads
    ``/proc``, which an adapter running as root can fake, and a directory bound into the tree from
    elsewhere was made 0700 when every directory was made rwx up front (found by an attack helper:
    A12-5); and an immutable directory refuses root too (EPERM), which had a root runner chmod
    through a faked ``/proc`` (A13-1)."""
    token, hoisted = secrets.token_hex(8), 0

    def in_time() -> bool:
        return deadline is None or time.monotonic() < deadline

    while in_time():
        pending = _listed(top)
        if not pending:
            return
        progress = False
        while pending and in_time():
            name, is_directory = pending.pop()
            try:
                if not is_directory:
                    progress |= _done_or_granted(partial(os.unlink, name, dir_fd=top), top)
                    continue
                child = _opened_for_removal(name, top)
            except OSError:
                continue  # gone, or replaced meanwhile (by a link, say): the next round sees what it is now
            try:
                names = _listed(child)
                for inner_name, inner_is_directory in names:
                    if not in_time():  # a directory of 200,000 entries held the removal past its limit
                        break
                    hoisted += 1
                    up = f".removing-{token}-{hoisted}"
                    # Moving a directory rewrites its "..": one its owner may not write is made writable
                    # too (``_made_writable``), as the last remedy.
                    moved = _done_or_granted(
                        partial(os.rename, inner_name, up, src_dir_fd=child, dst_dir_fd=top),
                        child, top, *([partial(_made_writable, inner_name, child)]
                                      if inner_is_directory else []))
                    if moved:  # else immutable, or on another mount: it stays, the others go
                        progress = True
                        pending.append((up, inner_is_directory))
                progress |= _done_or_granted(partial(os.rmdir, name, dir_fd=top), top)
            except OSError:
                pass
            finally:
                os.close(child)
        if not progress:
            return


def _listed(directory: int) -> list[tuple[str, bool]]:
    """The entries of the directory ``directory``: each name, and whether it is a directory (not a
    link). An entry's type is looked up (a search) where the file system leaves it out: refused so
    (``_curable``), the directory is made rwx for its owner, and listed again."""
    def entries() -> list[tuple[str, bool]]:
        with os.scandir(directory) as listing:
            return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]

    try:
        return entries()
    except OSError as error:
        if not _curable(error):
            raise
        os.fchmod(directory, stat.S_IRWXU)
        return entries()


def _done_or_granted(operation: Callable[[], object], *remedies: int | Callable[[], object]) -> bool:
    """Whether ``operation`` (a removal's unlink, rename or rmdir) was done: tried, and after each
    refusal that a mode can cure (``_curable``) tried again once the next remedy was applied, while
    one is left. A remedy is a directory descriptor, made rwx for its owner (``fchmod``), or a call."""
    for remedy in (None, *remedies):
        try:
            if isinstance(remedy, int):
                os.fchmod(remedy, stat.S_IRWXU)
            elif remedy is not None:
                remedy()
            operation()
        except OSError as error:
            if _curable(error):
                continue
            return False
        return True
    return False


def _curable(error: OSError) -> bool:
    """Whether a mode can cure the refusal ``error``: the modes' own refusal (EACCES), to a process that
    does not override modes (``_overrides_modes``). Not EPERM (an immutable or append-only inode, which
    refuses root too: no mode cures it), nor a refusal to a process that overrides modes (a security
    module's, say). A removal changes a mode only to cure such a refusal, so a runner that is root
    changes none: each change reaches a directory through a check of its mount that reads ``/proc``,
    which an adapter running as root can fake (found by attack helpers: A12-5, A13-1)."""
    return error.errno == errno.EACCES and not _overrides_modes()


@cache
def _libc(name: str) -> Any:
    """The C library's function ``name``, its ``errno`` kept for ``ctypes.get_errno``; None where the
    process has no C library to ask, or it has no such function."""
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None


class _CapabilityHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapabilitySets(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_CAPABILITY_VERSION_3 = 0x20080522  # linux/capability.h: two sets of 32 bits each
_CAP_DAC_OVERRIDE = 1


@cache
def _overrides_modes() -> bool:
    """Whether this process reads, writes and searches whatever the modes say: its effective
    capabilities hold CAP_DAC_OVERRIDE (asked of the kernel, ``capget``, not read from ``/proc``,
    which an adapter running as root can fake). Where ``capget`` cannot be called, whether it is root."""
    capget = _libc("capget")
    if capget is None:
        return os.geteuid() == 0
    header = _CapabilityHeader(_CAPABILITY_VERSION_3, 0)
    sets = (_CapabilitySets * 2)()
    if capget(ctypes.byref(header), sets) != 0:
        return os.geteuid() == 0
    return bool(sets[0].effective >> _CAP_DAC_OVERRIDE & 1)


def _made_writable(name: str, dir_fd: int) -> None:
    """Give the directory ``name`` below ``dir_fd`` rwx for its owner if it is a directory, through an
    ``O_PATH`` descriptor of that very directory, so no link put in its place is followed."""
    try:
        handle = _opened_on_this_mount(name, dir_fd, _DIRECTORY_HANDLE_FLAGS)
    except OSError:
        return  # not a directory (or gone, or a mount): a file or link moves without it
    try:
        if _on_another_mount(handle, dir_fd):
            return  # a mount point: left as it is (and it cannot be moved either)
        os.chmod(f"/proc/self/fd/{handle}", stat.S_IRWXU)
    except OSError:
        pass
    finally:
        os.close(handle)


def _inode_of(info: os.stat_result) -> tuple[int, int]:
    """What names one file on the machine (device, inode): the identity each check of "still the
    directory made" compares."""
    return info.st_dev, info.st_ino


class _Statx(ctypes.Structure):
    """linux/stat.h's ``struct statx``, up to the mount id, then its spare room (256 bytes in all)."""

    _fields_ = [("mask", ctypes.c_uint32), ("blksize", ctypes.c_uint32), ("attributes", ctypes.c_uint64),
                ("nlink", ctypes.c_uint32), ("uid", ctypes.c_uint32), ("gid", ctypes.c_uint32),
                ("mode", ctypes.c_uint16), ("spare0", ctypes.c_uint16), ("ino", ctypes.c_uint64),
                ("size", ctypes.c_uint64), ("blocks", ctypes.c_uint64),
                ("attributes_mask", ctypes.c_uint64), ("times", ctypes.c_uint8 * 64),
                ("rdev_major", ctypes.c_uint32), ("rdev_minor", ctypes.c_uint32),
                ("dev_major", ctypes.c_uint32), ("dev_minor", ctypes.c_uint32), ("mnt_id", ctypes.c_uint64),
                ("spare", ctypes.c_uint8 * 104)]


_STATX_MNT_ID = 0x1000
_STATX_ATTR_MOUNT_ROOT = 0x2000
_AT_SYMLINK_NOFOLLOW = 0x100
_AT_EMPTY_PATH = 0x1000
_AT_STATX_DONT_SYNC = 0x4000
assert ctypes.sizeof(_Statx) == 256


@cache
def _statx() -> Any:
    """libc's ``statx`` (glibc 2.28 and later), or None."""
    function = _libc("statx")
    if function is not None:
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                             ctypes.POINTER(_Statx)]
        function.restype = ctypes.c_int
    return function


def _kernel_mount(dir_fd: int, name: str) -> tuple[int, bool] | None:
    """The mount id of ``name`` below ``dir_fd`` (``""``: of ``dir_fd`` itself), and whether it is the
    root of a mount, as the kernel tells (``statx``): no ``/proc`` read, which an adapter running as
    root can fake, and no request to the entry's own file system (``AT_STATX_DONT_SYNC``), which a
    FUSE daemon of the adapter's never answered, holding the removal in the kernel past every deadline
    and every signal but KILL (found by an attack helper: A13-2). A link is not followed. None where
    the kernel tells no mount id: before Linux 5.8, without ``statx``, and where ``statx`` fails
    (a seccomp profile that refuses it, EPERM, or answers ENOSYS, which glibc's emulation turns into
    EINVAL: the run's own trees all stayed on disk when that raised; A14-4), a name that is not
    there included, which the look that follows then reports."""
    function = _statx()
    if function is None:
        return None
    found = _Statx()
    flags = _AT_SYMLINK_NOFOLLOW | _AT_STATX_DONT_SYNC | (0 if name else _AT_EMPTY_PATH)
    if function(dir_fd, os.fsencode(name), flags, _STATX_MNT_ID, ctypes.byref(found)) != 0:
        return None
    if not found.mask & _STATX_MNT_ID:
        return None
    root_known = bool(found.attributes_mask & _STATX_ATTR_MOUNT_ROOT)
    return found.mnt_id, root_known and bool(found.attributes & _STATX_ATTR_MOUNT_ROOT)


def _mount_of(fd: int) -> tuple[int, int | None]:
    """The mount the descriptor ``fd`` is on: its device, and its mount id (a bind mount of a directory
    of the same file system has the same device): the kernel's (``_kernel_mount``), or where it tells
    none, ``/proc``'s, if ``/proc`` gives one."""
    device = os.fstat(fd).st_dev
    told = _kernel_mount(fd, "")
    if told is not None:
        return device, told[0]
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
            for line in info:
                if line.startswith("mnt_id:"):
                    return device, int(line.split()[1])
    except (OSError, ValueError):
        pass
    return device, None


def _on_another_mount(fd: int, beside: int) -> bool:
    """Whether ``fd`` is on another mount than ``beside``: a removal never changes nor empties such a
    directory. An adapter (as root) that left a bind mount in its tree had the removal make the
    mounted directory 0700, and empty it (found by an attack helper)."""
    return _mount_of(fd) != _mount_of(beside)


def _mount_root_below(dir_fd: int, name: str) -> bool:
    """Whether ``name`` below ``dir_fd`` is on another mount than ``dir_fd``, as the kernel tells
    without asking that mount's file system anything (``_kernel_mount``): checked before the entry
    is opened or looked at where ``openat2`` is missing (``_opened_on_this_mount``), since either is
    such a request (a file can be a mount too). False where the kernel tells no mount id:
    ``_on_another_mount`` checks an opened descriptor then.

    WARNING: a check, then a look: an adapter that mounts and unmounts in a loop can win the time
    between them (A14-3), which ``openat2`` closes; without it the race stays (documented in
    conformance/WRITING-AN-ADAPTER.md)."""
    below = _kernel_mount(dir_fd, name)
    if below is None:
        return False
    beside = _kernel_mount(dir_fd, "")
    return beside is not None and (below[1] or below[0] != beside[0])


def _unmounted(dir_fd: int, name: str) -> str:
    """``name``, checked not to be on another mount than ``dir_fd`` (``_mount_root_below``); OSError
    (EXDEV) when it is."""
    if _mount_root_below(dir_fd, name):
        raise OSError(errno.EXDEV, f"{name!r} is on another mount")
    return name


class _OpenHow(ctypes.Structure):
    """linux/openat2.h's ``struct open_how``."""

    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_SYS_OPENAT2 = 437  # one number on every architecture (Linux 5.6 and later)
_RESOLVE_NO_XDEV = 0x01
_OPENAT2_MISSING: list[bool] = []  # not empty once openat2 answered ENOSYS here


@cache
def _syscall() -> Any:
    """libc's ``syscall`` on Linux, or None: the numbers it is called with here (``_SYS_OPENAT2``) are
    Linux's alone, and elsewhere name other system calls."""
    function = _libc("syscall") if sys.platform == "linux" else None
    if function is not None:
        function.restype = ctypes.c_long
    return function


def _opened_on_this_mount(name: str, dir_fd: int, flags: int) -> int:
    """``name`` below ``dir_fd`` opened with ``flags`` (``O_CLOEXEC`` among them), never on another
    mount than ``dir_fd``: OSError (EXDEV) for one, and no request sent to it. ``openat2`` with
    ``RESOLVE_NO_XDEV`` makes the kernel refuse to cross into a mount within the same lookup, so an
    adapter that mounts and unmounts a FUSE file system in a loop cannot slip one in between a check
    and the open (found by an attack helper: A14-3). Where ``openat2`` is missing (before Linux 5.6,
    or refused by a seccomp profile), the mount is checked first (``_unmounted``), then opened."""
    function = _syscall()
    if function is not None and not _OPENAT2_MISSING:
        how = _OpenHow(flags, 0, _RESOLVE_NO_XDEV)
        fd = function(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(os.fsencode(name)),
                      ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
        if fd >= 0:
            return int(fd)
        number = ctypes.get_errno()
        if number == errno.ENOSYS:
            _OPENAT2_MISSING.append(True)
        elif number != errno.EPERM:  # EPERM: a seccomp profile's refusal, or the open's own: see below
            raise OSError(number, os.strerror(number), name)
    return os.open(_unmounted(dir_fd, name), flags, dir_fd=dir_fd)


def _looked_at(dir_fd: int, name: str) -> os.stat_result:
    """``name`` below ``dir_fd`` as itself (a link not followed), never on another mount: OSError
    (EXDEV) for one, looked at through a descriptor of it (``_opened_on_this_mount``, ``O_PATH``)."""
    if not _O_PATH:  # not Linux: the mount checked (where the kernel tells one), then looked at
        return os.stat(_unmounted(dir_fd, name), dir_fd=dir_fd, follow_symlinks=False)
    handle = _opened_on_this_mount(name, dir_fd, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.fstat(handle)
    finally:
        os.close(handle)


def _opened_for_removal(name: str, dir_fd: int) -> int:
    """The directory ``name`` below ``dir_fd`` opened for reading, made rwx for its owner first if
    its mode denies that: a directory of mode 0000 (a fixture may lay one out) cannot be opened
    for reading where the runner's user has no override, and then stayed behind with what it held.
    The mode is changed through an ``O_PATH`` descriptor of that very directory (``/proc/self/fd``),
    and the directory reopened through it, so that no link put in its place is ever followed."""
    try:
        opened = _open_directory(name, dir_fd)
    except OSError as error:
        if not _curable(error) or not os.path.isdir("/proc/self/fd"):
            raise
    else:
        try:
            elsewhere = _on_another_mount(opened, dir_fd)
        except BaseException:  # its file system refused a look at it (A13-3: the descriptor stayed open)
            os.close(opened)
            raise
        if elsewhere:
            os.close(opened)
            raise OSError(errno.EXDEV, f"{name!r} is on another mount")
        return opened
    handle = _opened_on_this_mount(name, dir_fd, _DIRECTORY_HANDLE_FLAGS)
    try:
        if _on_another_mount(handle, dir_fd):
            raise OSError(errno.EXDEV, f"{name!r} is on another mount")
        os.chmod(f"/proc/self/fd/{handle}", stat.S_IRWXU)
        # Following the magic link is the point: it is the directory the handle holds.
        return os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    finally:
        os.close(handle)


def remove(directory: Path, seconds: float | None = REMOVAL_SECONDS, *,
           identity: tuple[int, int] | None = None) -> None:
    """Remove a fixture directory and everything below it; a link is removed, never followed. While
    the adapter runs, a removal gives up after ``seconds`` and leaves the rest to the removal of the
    run's root (``FixtureRoot.close``: after the adapter's end, with a longer limit). With
    ``identity`` (device, inode), only that directory is removed: another one put at its path since
    is left alone (the run's warden removes a root so: conformance/warden.py)."""
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        parent = _open_directory(str(directory.parent), None)
    except OSError:
        return
    try:
        _removed_below(parent, directory.name, deadline, identity)
    finally:
        os.close(parent)


def _removed_below(parent: int, name: str, deadline: float | None,
                   identity: tuple[int, int] | None = None) -> None:
    """``remove``'s work on the directory ``name`` below the directory descriptor ``parent``."""
    try:
        fd = _opened_for_removal(name, parent)  # a case may have made it unreadable too
    except OSError:
        return
    try:
        if identity is not None:
            opened = os.fstat(fd)
            if _inode_of(opened) != identity:
                return
        _emptied(fd, deadline)  # its mode changed only if a removal in it is refused
    except OSError:
        pass
    finally:
        os.close(fd)
    with suppress(OSError):
        os.rmdir(name, dir_fd=parent)


def _parent_and_name(root_fd: int, relative: str, opened: list[int]) -> tuple[int, str]:
    problem = path_problem(relative)
    if problem is not None:
        raise FixtureError(f"{relative[:80]!r} {problem}")
    parts = relative.split("/")
    fd = root_fd
    for part in parts[:-1]:
        fd = _open_directory(part, fd)  # ELOOP or ENOTDIR for a link: never walked through
        opened.append(fd)
    return fd, parts[-1]


def _lexists(parent: int, name: str) -> bool:
    """Whether ``name`` is below ``parent``, as itself; OSError (EXDEV) for a mount (A14-2)."""
    try:
        _looked_at(parent, name)
    except FileNotFoundError:
        return False
    return True


def swap(directory: Tree, first: str, second: str) -> None:
    """Exchange two paths inside a fixture directory (the writer proofs' ``swap_paths`` step).

    When one of the two does not exist, the other is moved to its place; two paths that are one, or
    one inside the other, are refused (FixtureError) with nothing moved. Each path's parents are
    walked without following a link, and the last component is renamed as itself (a link is moved,
    not its target), so nothing outside ``directory`` is ever moved. Raises OSError (ELOOP, ENOTDIR,
    ENOENT) or FixtureError for a path that leaves the directory or goes through a link.
    """
    opened: list[int] = []
    root_fd = _opened_tree(directory)
    try:
        a_parent, a = _parent_and_name(root_fd, first, opened)
        b_parent, b = _parent_and_name(root_fd, second, opened)
        # One path, or one inside the other, cannot be exchanged: the three renames below would park
        # the first and then fail with it parked (or move a directory into itself), a bad argument
        # that changed the tree. Refused before anything moves. Exact on components: a fixture path
        # has no '.', '..' or empty component (path_problem) and no link is walked through.
        first_parts, second_parts = first.split("/"), second.split("/")
        if SWAP_PARKING in (first_parts[0], second_parts[0]):
            # The name the first path is parked under: a swap of it would park another path on top
            # of it, and the next swap would delete what it held (found by an attack helper).
            raise FixtureError(f"{SWAP_PARKING!r} is the swap's own name, no path of a swap")
        shorter = min(len(first_parts), len(second_parts))
        if first_parts[:shorter] == second_parts[:shorter]:
            raise FixtureError(f"{first[:80]!r} and {second[:80]!r} are one path or one inside the other")
        a_exists, b_exists = _lexists(a_parent, a), _lexists(b_parent, b)
        if not a_exists and not b_exists:
            raise FileNotFoundError(errno.ENOENT, f"neither {first!r} nor {second!r} exists")
        if a_exists:
            os.rename(a, SWAP_PARKING, src_dir_fd=a_parent, dst_dir_fd=root_fd)
        if b_exists:
            os.rename(b, a, src_dir_fd=b_parent, dst_dir_fd=a_parent)
        if a_exists:
            os.rename(SWAP_PARKING, b, src_dir_fd=root_fd, dst_dir_fd=b_parent)
    finally:
        for fd in opened:
            os.close(fd)
        os.close(root_fd)


# -- which cases change their fixture, and how to undo it ---------------------------------------------


def _nothing_to_undo(directory: Tree) -> None:
    del directory


def _swap_inverse(args: Any) -> Callable[[Tree], None] | None:
    """A swap is its own inverse, and a step with malformed arguments moved nothing to undo. An
    armed swap (``during``, WRITER-IF-6) has no certain inverse: whether it was performed depends on
    how far a later measurement got, so its case is not undone (None) but laid out afresh.

    WARNING: the step's arguments are checked by impl/writer_harness.py (``SwapPaths``); change
    them together."""
    if not isinstance(args, Mapping):
        return _nothing_to_undo
    if "during" in args:
        return None
    first, second = args.get("first"), args.get("second")
    if isinstance(first, str) and isinstance(second, str):
        return lambda directory: swap(directory, first, second)
    return _nothing_to_undo


# WARNING: the events that change a fixture, by machine, each with what gives its inverse (None: it
# cannot be undone); keep in step with the harness events of each machine's interface data
# (spec/writer-proofs.interface.json; tests/test_interface_vocabularies_writer_proofs.py checks it).
# A case of a machine not named here never shares its fixture directory with another case.
FIXTURE_CHANGING_EVENTS: dict[str, dict[str, Callable[[Any], Callable[[Tree], None] | None]]] = {
    "writer-proofs": {"swap_paths": _swap_inverse},
}


def may_change(machine: str, events: Sequence[str]) -> bool:
    """Whether a case of ``machine`` with these step events can change its fixture."""
    changing = FIXTURE_CHANGING_EVENTS.get(machine)
    return changing is None or any(event in changing for event in events)


def undo(machine: str, steps: Sequence[Mapping[str, Any]]) -> Callable[[Tree], None] | None:
    """What undoes, on a directory, every change the steps of a case of ``machine`` made to it (their
    inverses, last step first), or None when the machine does not say or the case has more than
    MAX_UNDO_STEPS such steps. A step that failed when the
    case ran fails again on the same tree, so its undo is skipped; whether the tree was restored is
    then checked by fingerprint, not assumed."""
    changing = FIXTURE_CHANGING_EVENTS.get(machine)
    if changing is None:
        return None
    inverses = [changing[str(step.get("event"))](step.get("args", {})) for step in steps
                if str(step.get("event")) in changing]
    if len(inverses) > MAX_UNDO_STEPS:
        return None  # undoing would cost more than a fresh lay-out
    certain = [inverse for inverse in inverses if inverse is not None]
    if len(certain) < len(inverses):
        return None  # a change with no certain inverse: a fresh lay-out instead

    def restore(directory: Tree) -> None:
        for inverse in reversed(certain):
            with suppress(OSError, FixtureError):
                inverse(directory)

    return restore


# -- the private root of a run's fixtures --------------------------------------------------------------


# The longest real path of the private root that fixture directories live in (UTF-8 bytes), so that
# a fixture directory's path with an entry's path (or a link's target holding the directory's path)
# after it stays well within PATH_MAX (4096): a longer TMPDIR made the writer proofs' reference
# measure its own fixtures as unreadable, which a check reported as failures. Written out in
# spec/conformance-protocol.md (PROTO-FIX-1).
MAX_ROOT_BYTES = 2048
FIXTURE_ROOT_PREFIX = "inboxspec-fixture-"  # the name of a run's root (the run's warden checks it too)


# How many names ``_made_directory`` tries after the first one is taken.
NAME_ATTEMPTS = 8


def _made_directory(root_fd: int, name: str) -> str:
    """A new directory (mode 0700) in ``root_fd`` named ``name``, or, when something already stands
    there, ``name`` with a random suffix: the name it made. An adapter that made the names the runner
    would use next (``f1``, ``f2``, ...) in the run's root ended the run as unusable, every result lost
    (found by an attack helper)."""
    candidate = name
    for _ in range(NAME_ATTEMPTS):
        try:
            os.mkdir(candidate, 0o700, dir_fd=root_fd)
            return candidate
        except FileExistsError:
            candidate = f"{name}-{secrets.token_hex(8)}"
    raise FileExistsError(errno.EEXIST, f"every name tried for a fixture directory ({name} and "
                                        f"{NAME_ATTEMPTS - 1} random ones) is taken")


@dataclass
class FixtureRoot:
    """A private directory (mode 0700) holding fixture directories, created on first use.

    Only the runner's user can enter it, so nothing a fixture holds (a setuid file included) is
    reachable by anyone else, and removing it removes every fixture laid out in it.
    """

    path: str | None = None
    _count: int = 0
    # Told the root's path and the descriptor kept of it (``_kept``) as soon as it is made (the runner
    # tells its warden, which removes the root as ``close`` does if the runner is killed outright:
    # conformance/warden.py).
    made: Callable[[str, int], None] | None = None
    # The root's (device, inode), from the directory ``mkdtemp`` made: ``_opened`` checks it.
    _identity: tuple[int, int] | None = None
    # The adapters' temporary directory in this root (``adapter_temporary``), once made: its name in
    # the root, and its (device, inode).
    _temporary: tuple[str, tuple[int, int]] | None = None
    # Each fixture directory laid out and not yet discarded: its (device, inode), by its name.
    _laid_out: dict[str, tuple[int, int]] = field(default_factory=dict)
    # A descriptor of the root kept from its making to ``close``, which finds the root through it
    # wherever it was moved (``_removed_where_moved``).
    _kept: int | None = None

    def _ensure(self) -> str:
        if self.path is None:
            try:
                created = os.path.realpath(tempfile.mkdtemp(prefix=FIXTURE_ROOT_PREFIX))
            except OSError as error:
                # The error names the directory, or every one tried (gettempdir's, where none is usable).
                raise FixtureError(f"cannot create a fixture directory: {error}") from None
            fd = _open_directory(created, None)
            try:
                os.fchmod(fd, ROOT_MODE)  # mkdtemp's mode already; set whatever the umask
                made = os.fstat(fd)
            except OSError:
                os.close(fd)
                raise
            self._identity, self._kept, self.path = _inode_of(made), fd, created
            if self.made is not None:
                self.made(created, fd)
            unusable = None
            if needs_json_escaping(created):
                unusable = (f"fixture directories would live in {created!r}, a path that needs "
                            "escaping inside a JSON string; set TMPDIR to a plain path")
            elif len(created.encode("utf-8", "surrogateescape")) > MAX_ROOT_BYTES:
                unusable = (f"fixture directories would live in a path longer than {MAX_ROOT_BYTES} "
                            f"bytes ({created[:60]!r}...), where a fixture's paths could pass the "
                            "system's limit; set TMPDIR to a shorter path")
            if unusable is not None:
                self.close()
                raise FixtureError(unusable)
        return self.path

    def _opened(self) -> int:
        """A descriptor of the root, checked to be the directory ``mkdtemp`` made: a process that
        can write where the root lives (the adapter, as the runner's user) could rename it and put a
        link to a directory of its choice at its name, and every later fixture, set-user-ID files
        included, was laid out there and left on disk (found by an attack helper)."""
        root = self._ensure()
        try:
            # A link at the root's name is not followed (ELOOP), nor is a mount put there entered
            # (EXDEV): a FUSE mount whose daemon never answers held the run at its open (A14-1).
            fd = _opened_tree(root)
        except OSError as error:
            raise FixtureError(f"the fixture root {root!r} is gone or replaced: {error}") from None
        found = os.fstat(fd)
        if _inode_of(found) != self._identity:
            os.close(fd)
            raise FixtureError(f"the fixture root {root!r} was replaced by another directory")
        return fd

    def lay_out(self, fixture: Mapping[str, Any], *, deadline: float | None = None) -> str:
        """A new directory in this root holding ``fixture``; its real path. Every step runs through
        the root's descriptor (``_opened``), never its path."""
        root_fd = self._opened()
        try:
            self._count += 1
            name = f"f{self._count}"
            directory = os.path.join(self.path or "", name)
            try:
                name = _made_directory(root_fd, name)
                directory = os.path.join(self.path or "", name)
                fd = _open_directory(name, root_fd)  # never chmod through a path: it could be a link by now
                try:
                    os.fchmod(fd, DIRECTORY_MODE)
                    made = os.fstat(fd)
                    self._laid_out[name] = _inode_of(made)
                except OSError:
                    os.close(fd)
                    raise
            except OSError as error:
                raise FixtureError(f"cannot create fixture directory {directory!r}: {error}") from None
            try:
                materialise(fixture, Path(directory), deadline=deadline, opened=fd)
            except BaseException:
                # Through the root's descriptor, the directory laid out alone: by its path, a mount
                # put over the root meanwhile had its entry of that name emptied (found by an attack
                # helper).
                _removed_below(root_fd, name, time.monotonic() + REMOVAL_SECONDS,
                               self._laid_out.pop(name, None))
                raise
            finally:
                os.close(fd)
        finally:
            os.close(root_fd)
        return directory

    def opened_tree(self, directory: str) -> int:
        """A descriptor of the fixture directory ``directory`` (one of ``lay_out``'s), opened through the
        checked root (``_opened``) and checked to be the directory laid out, on the root's mount; for
        undoing a case's changes and reading the tree back without a path, which a replaced root
        would have sent elsewhere. FixtureError otherwise."""
        name = os.path.basename(directory)
        root_fd = self._opened()
        try:
            try:
                fd = _open_directory(name, root_fd)  # EXDEV for a mount, not entered
            except OSError as error:
                raise FixtureError(f"fixture directory {directory!r}: {error}") from None
            found = os.fstat(fd)
            if _inode_of(found) != self._laid_out.get(name) or _on_another_mount(fd, root_fd):
                os.close(fd)
                raise FixtureError(f"fixture directory {directory!r} is not the one laid out")
            return fd
        finally:
            os.close(root_fd)

    def discard(self, directory: str) -> None:
        """Remove the fixture directory ``directory`` (one of ``lay_out``'s) through the root's checked
        descriptor (``_opened``). When the root was replaced, nothing is removed: by the path, the
        runner removed what the adapter put at that name in its own directory, or emptied a directory
        bind-mounted there (found by an attack helper); the root, wherever it went, is removed at
        ``close``."""
        name = os.path.basename(directory)
        try:
            root_fd = self._opened()
        except FixtureError:
            return
        try:
            # Only the directory laid out: one put at its name since (a bind mount) is not the run's.
            _removed_below(root_fd, name, time.monotonic() + REMOVAL_SECONDS, self._laid_out.pop(name, None))
        finally:
            os.close(root_fd)

    def adapter_temporary(self) -> str:
        """The directory (mode 0700) in this root that the runner gives every adapter of the run as its
        ``TMPDIR`` (PROTO-PROC-6), made on the first call; its real path. What an adapter leaves there
        (the temporary files of a case the runner ended mid-way: the Node port's empty directories,
        say) goes with the root, where before it stayed in the system's temporary directory.

        Each call checks that the directory made is still there: one an adapter removed or replaced
        is made again (under another name if something stands at its own), or a restarted adapter's
        ``tempfile`` fell back to ``/tmp`` and left its files there (found by an attack helper)."""
        root_fd = self._opened()
        try:
            if self._temporary is not None:
                name, identity = self._temporary
                try:
                    found = _looked_at(root_fd, name)  # EXDEV for a mount put there: made again
                    if stat.S_ISDIR(found.st_mode) and _inode_of(found) == identity:
                        return os.path.join(self.path or "", name)
                except OSError:
                    pass
            try:
                name = _made_directory(root_fd, "tmp")
                made = _looked_at(root_fd, name)
            except OSError as error:
                raise FixtureError(f"cannot create the adapters' temporary directory in {self.path!r}: "
                                   f"{error}") from None
            self._temporary = (name, _inode_of(made))
            return os.path.join(self.path or "", name)
        finally:
            os.close(root_fd)

    def close(self) -> None:
        """Remove the root and every fixture directory in it. Called once the adapter has ended
        (PROTO-FIX-1), when nothing writes into them any more: with a longer time limit, so that a
        tree a removal during the run gave up on goes too."""
        if self.path is None or self._kept is None or self._identity is None:
            return
        try:
            removed_root(self.path, self._identity, self._kept)
        finally:
            os.close(self._kept)
            self.path = self._temporary = self._kept = None
            self._laid_out.clear()


def removed_root(path: str, identity: tuple[int, int], kept: int) -> None:
    """The fixture root made at ``path``, of ``identity`` (device, inode) when made, and held by the
    descriptor ``kept`` since, removed with everything in it: ``FixtureRoot.close``'s work, and the
    warden's when the runner was killed outright (conformance/warden.py). ``kept`` is not closed."""
    # One limit for the whole end (two walks of a root at its name each took the whole limit).
    deadline = time.monotonic() + CLOSING_REMOVAL_SECONDS
    # Only the directory made: one put at its name since is not this run's to remove.
    remove(Path(path), seconds=CLOSING_REMOVAL_SECONDS, identity=identity)
    # Still there (moved, or a mount put on it: a root bound onto itself was refused at its name,
    # and every tree in it stayed): emptied through the kept descriptor, in what is left of the
    # limit. A root removed at its name returns at once.
    _removed_where_moved(kept, deadline)


def _removed_where_moved(kept: int, deadline: float) -> None:
    """The root held by ``kept``, emptied and removed where it now is when its removal at its name
    left it (an adapter runs as the runner's user, and may rename it; as root, it may put a mount on
    it); a root removed at its name returns at once. Left, its fixtures, set-user-ID files among
    them, and what adapters left in their temporary directory stayed on disk under the new name
    (found by an attack helper). Emptied through the descriptor, so nothing is followed; the empty
    directory is then removed by the name ``/proc`` gives its descriptor, once the entry at that
    name is checked to be the same directory (without ``/proc`` it stays, empty). Between that
    check and the removal only an empty directory can take its place, which the adapter could
    remove itself."""
    try:
        held = os.fstat(kept)
        if held.st_nlink == 0:  # removed at its name, as a root is unless moved
            return
        _emptied(kept, deadline)  # its mode changed only if a removal in it is refused
        where = os.readlink(f"/proc/self/fd/{kept}")
    except OSError:
        return
    if not where.startswith("/"):  # a deleted root was told apart above (its link count)
        return
    parent_path, name = os.path.split(where)
    try:
        parent = _open_directory(parent_path or "/", None)
    except OSError:
        return
    try:
        found = _looked_at(parent, name)
        if _inode_of(found) == _inode_of(held):
            os.rmdir(name, dir_fd=parent)
    except OSError:
        pass
    finally:
        os.close(parent)


@contextmanager
def materialised(fixture: Mapping[str, Any]) -> Iterator[str]:
    """A fresh directory holding ``fixture``; yields its real path, removes it afterwards."""
    root = FixtureRoot()
    try:
        # A signal raised inside the lay-out or the removal left the directory behind (between
        # ``mkdtemp`` and the root's path, say): each finishes first (found by attacks on the commands).
        with held_signals.deferred():
            directory = root.lay_out(fixture)
        yield directory
    finally:
        try:
            with held_signals.deferred():
                root.close()
        finally:
            # Again if need be: a signal already waiting runs its handler as ``deferred`` sets its own,
            # before the removal began. Under ``raising_on_signals`` no later signal raises meanwhile.
            root.close()

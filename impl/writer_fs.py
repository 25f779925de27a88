"""The real filesystem edge of the writer proofs: measuring installs and reading the home's files.

Specified by ``spec/writer-proofs.md`` (sections *Measuring a writer root* and *The home's files*).
:class:`FilesystemEnvironment` implements :class:`~inboxspec.impl.writer_proofs.Environment` on the
real filesystem; tests use fakes of the same interface for the core.

A root is measured in two passes. The first walks the tree without following links (``lstat``),
reads and hashes every regular file through a descriptor opened with ``O_NOFOLLOW | O_NONBLOCK``
(so a FIFO swapped in never blocks), and parses ``package.json`` from the very bytes it hashed. The
second pass stats the tree again; any difference in the entries' kinds, modes, sizes, inodes or
modification times is ``changed``. Faults found in the first pass are ranked (WRITER-MEAS-4) so that
several faults in one install always yield the same detail; a file that is not the walk's when it is
read is ``changed`` only when the install has none of the ranked faults.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .values import MAX_SAFE_INTEGER
from .writer_proofs import (
    Effective,
    Measurement,
    PlacementWriterContextError,
    RootRow,
    SharedWriterRevisionError,
    Writer,
    WriterMeasurementError,
    canonical_json,
    path_order,
)

PACKAGE_NAME = "@staix/agent-mem"
MINIMUM_VERSION = (0, 21, 0)  # WRITER-MEAS-6
HOME_FLOOR_MINIMUM = (0, 22, 0)  # WRITER-HOME-2
MAX_ROOTS = 32  # WRITER-MEAS-3
MAX_ENTRIES = 20_000
MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 16
# WRITER-JSON-3: every JSON file read, a home file (WRITER-HOME-5) or package.json (WRITER-MEAS-6).
# WARNING: the Node port's MAX_JSON_FILE_BYTES is the same number.
MAX_JSON_FILE_BYTES = 1024 * 1024
MAX_JSON_DEPTH = 64  # WRITER-JSON-3; WARNING: the Node port's MAX_JSON_DEPTH is the same number
REQUIRED_RUNTIME = ("bin/amem.js", "src/index.ts")
PIN_FORMAT = "amem-writer-pin/1"
SETUP_RECEIPT = "setup-receipt.json"
FORMATS = "formats.json"
LOCATOR = "sync-placement-writer-roots.json"

# WRITER-MEAS-4: the rank of each detail when one install has several faults (first wins).
PRECEDENCE = ("bound", "unsafe-runtime", "unreadable", "wrong-package", "invalid-version", "below-minimum",
              "missing-runtime", "writable-runtime")

_COMPONENT = r"(0|[1-9][0-9]{0,15})"
PLAIN_RELEASE = re.compile(rf"{_COMPONENT}\.{_COMPONENT}\.{_COMPONENT}")


def parse_release(text: object) -> tuple[int, int, int] | None:
    """WRITER-VER-1: a plain ``X.Y.Z`` release, no sign, prefix, pre-release or build, each number at
    most 2^53 - 1 (so at most 16 digits) with no leading zero.

    post: __return__ is None or all(0 <= n <= 2**53 - 1 for n in __return__)
    """
    if type(text) is not str or len(text) > 50:
        return None
    match = PLAIN_RELEASE.fullmatch(text)
    if match is None:
        return None
    numbers = (int(match[1]), int(match[2]), int(match[3]))
    if any(n > MAX_SAFE_INTEGER for n in numbers):
        return None
    return numbers


def first_fault(faults: frozenset[str]) -> str | None:
    """WRITER-MEAS-4: the detail an install with these faults reports, or None when it has none.

    Checked symbolically by CrossHair (tests/test_writer_proofs_crosshair.py).

    post[]:
        # an exceeded bound wins over every other fault
        "bound" not in faults or __return__ == "bound"
        # the reported detail is one of the install's faults
        __return__ is None or __return__ in faults
    """
    for detail in PRECEDENCE:
        if detail in faults:
            return detail
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("a number beyond the range of a double")
    return value


def _finite_int(text: str) -> int:
    if math.isinf(float(text)):  # also every integer too long for int() to parse
        raise ValueError("a number beyond the range of a double")
    return int(text)


# A JSON string, skipped whole (the unrolled form never backtracks far); then anything not a bracket.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_string_literals(text: str) -> Iterator[re.Match[str]]:
    """Each string literal of ``text``, found left to right as a JSON reader finds them: a '"' outside
    a literal opens one, and one that never closes ends the text (the reader fails on it). Searching
    on from each later '"' instead, as ``re.sub`` and ``re.finditer`` do, takes quadratic time on
    '"' and many '\\"'. (The runner's PROTO-FIX-5 check reads a fixture file's literals so too.)"""
    position = 0
    while (start := text.find('"', position)) >= 0:
        literal = _JSON_STRING.match(text, start)
        if literal is None:
            return
        yield literal
        position = literal.end()


def _outside_strings(text: str) -> Iterator[str]:
    """The parts of ``text`` outside its string literals (``json_string_literals``); after the last,
    only what comes before a literal that never closes."""
    position = 0
    for literal in json_string_literals(text):
        yield text[position:literal.start()]
        position = literal.end()
    yield text[position:].partition('"')[0]


def check_json_depth(text: str) -> None:
    """WRITER-JSON-3: at most MAX_JSON_DEPTH nested arrays and objects, counted in linear time and
    without recursion before the parser (whose recursion limit depends on the stack) sees the text.
    Brackets inside strings never count; on text that is not JSON the parser fails anyway."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    brackets = _NOT_BRACKET.sub("", "".join(_outside_strings(text)))
    if max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels")


def strict_json(data: bytes) -> Any:
    """WRITER-JSON-3: at most MAX_JSON_FILE_BYTES, strict UTF-8 (no BOM), RFC 8259 JSON (no NaN or
    Infinity, no number that overflows a double, at most MAX_JSON_DEPTH levels); duplicate keys keep
    the last value, as JavaScript does. The byte bound is package.json's too: within its root's byte
    bound, one of 21 million empty arrays took 1.9 GB and 10 s to parse (found by an attack helper)."""
    if len(data) > MAX_JSON_FILE_BYTES:
        raise ValueError(f"a JSON file longer than {MAX_JSON_FILE_BYTES} bytes")
    if data.startswith(b"\xef\xbb\xbf"):
        raise ValueError("a byte order mark is not JSON")
    text = data.decode("utf-8", "strict")
    check_json_depth(text)
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                      parse_int=_finite_int)


@dataclass(frozen=True)
class _Entry:
    path: str  # relative, '/'-separated; '.' is the root itself
    kind: str  # "dir" or "file"
    mode: int  # permission bits, mode & 0o7777
    size: int
    signature: tuple[int, ...]


class _Bound(Exception):
    pass


def _signature(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_mode, st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)


def _walk(root: str) -> tuple[list[_Entry], set[str]]:
    """The lstat-only inventory of a root, and the faults its entries show (WRITER-MEAS-5).

    Raises _Bound when a bound is exceeded; the walk stops there.
    """
    faults: set[str] = set()
    entries: list[_Entry] = []
    total = 0
    stack: list[tuple[str, int]] = [(".", 0)]
    while stack:
        rel, depth = stack.pop()
        full = root if rel == "." else os.path.join(root, rel)
        try:
            st = os.lstat(full)
        except OSError:
            faults.add("unreadable")
            continue
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            entries.append(_Entry(rel, "dir", mode, 0, _signature(st)))
        elif stat.S_ISREG(st.st_mode):
            entries.append(_Entry(rel, "file", mode, st.st_size, _signature(st)))
            total += st.st_size
            if st.st_nlink > 1:
                faults.add("unsafe-runtime")  # a hard link: another path can rewrite this file
        else:
            faults.add("unsafe-runtime")  # symlink, FIFO, socket or device: never followed or opened
            continue
        if len(entries) > MAX_ENTRIES or total > MAX_BYTES:
            raise _Bound
        if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX):
            faults.add("unsafe-runtime")
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            faults.add("writable-runtime")
        if stat.S_ISDIR(st.st_mode):
            try:
                names = os.listdir(os.fsencode(full))
            except OSError:
                faults.add("unreadable")
                continue
            children = []
            for raw in names:
                try:
                    name = raw.decode("utf-8", "strict")
                except UnicodeDecodeError:
                    faults.add("unsafe-runtime")  # a name no JSON inventory can spell
                    continue
                children.append(name if rel == "." else f"{rel}/{name}")
            if children and depth + 1 > MAX_DEPTH:
                raise _Bound
            stack.extend((child, depth + 1) for child in sorted(children, key=path_order, reverse=True))
    return entries, faults


def _open_beneath(root: str, relative: str, flags: int) -> int:
    """``relative`` (``/``-separated) opened with ``flags`` from ``root``, one directory at a time,
    none of them followed if a link (WRITER-MEAS-7): a directory swapped for a link after the walk
    sent the open, by name, to a FIFO or a device outside the root. ``ELOOP`` for such a link."""
    directory_flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
    *directories, name = relative.split("/")
    fd = os.open(root, directory_flags)
    try:
        for part in directories:
            inner = os.open(part, directory_flags, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(name, flags, dir_fd=fd)
    finally:
        os.close(fd)


def _read_file(root: str, entry: _Entry) -> bytes | str:
    """The file's bytes, or the fault that keeps them from being evidence: ``unreadable`` when the
    file cannot be opened or read, ``changed`` when the descriptor shows another file than the walk
    saw or a size other than the bytes read (WRITER-MEAS-7). ``changed`` is only reported for an
    install with none of the ranked faults (WRITER-MEAS-4), so it is returned, never raised."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = _open_beneath(root, entry.path, flags)
    except OSError:
        return "unreadable"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or _signature(st) != entry.signature:
            return "changed"
        # One byte past the walk's size at most: a file another process extends after the check
        # above is then ``changed`` without reading what it grew by (it grew by gigabytes, sparse,
        # at no cost to the writer, and the read took them all).
        chunks = []
        left = entry.size + 1
        while left > 0:
            chunk = os.read(fd, min(1 << 20, left))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) != entry.size or _signature(os.fstat(fd)) != entry.signature:
            return "changed"
        return data
    except OSError:
        return "unreadable"
    finally:
        os.close(fd)


def _identity(package: bytes | None) -> tuple[str | None, str | None]:
    """(fault, version) from package.json's bytes (WRITER-MEAS-6)."""
    if package is None:
        return "unreadable", None
    try:
        data = strict_json(package)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "unreadable", None
    if not isinstance(data, dict) or data.get("name") != PACKAGE_NAME:
        return "wrong-package", None
    version = data.get("version")
    release = parse_release(version)
    if release is None:
        return "invalid-version", None
    if release < MINIMUM_VERSION:
        return "below-minimum", None
    return None, str(version)


def pin_of(name: str, version: str, entries: Sequence[tuple[str, str, int, int, str]]) -> str:
    """WRITER-PIN-1: sha256 over the canonical JSON of the package and its inventory."""
    document = {"format": PIN_FORMAT, "package": name, "version": version,
                "entries": [list(e) for e in sorted(entries, key=lambda e: path_order(e[0]))]}
    return "sha256:" + hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


def measure_root(real_root: str, between: Callable[[], None] | None = None,
                 before_read: Callable[[], None] | None = None) -> Writer:
    """Measure one resolved root; raise WriterMeasurementError (without an index) on failure.

    ``before_read`` and ``between`` are test hooks, run after the walk and after the read pass.
    """
    try:
        entries, faults = _walk(real_root)
    except _Bound:
        raise WriterMeasurementError("bound") from None
    if before_read is not None:
        before_read()
    contents: dict[str, bytes] = {}
    changed: set[str] = set()  # files that were not the walk's when read: no evidence, no fault yet
    if not faults & {"unsafe-runtime", "unreadable"}:
        for entry in entries:
            if entry.kind == "file":
                data = _read_file(real_root, entry)
                if data == "changed":
                    changed.add(entry.path)
                elif isinstance(data, bytes):
                    contents[entry.path] = data
                else:
                    faults.add("unreadable")
    version: str | None = None
    if not faults & {"unsafe-runtime", "unreadable"} and "package.json" not in changed:
        fault, version = _identity(contents.get("package.json"))
        if fault:
            faults.add(fault)
    files = {e.path for e in entries if e.kind == "file"}
    if any(required not in files for required in REQUIRED_RUNTIME):
        faults.add("missing-runtime")
    # WRITER-MEAS-4: a ranked fault wins over a change seen while reading.
    detail = first_fault(frozenset(faults))
    if detail is not None:
        raise WriterMeasurementError(detail)
    if changed:
        raise WriterMeasurementError("changed")
    assert version is not None
    inventory = [(e.path, e.kind, e.mode, e.size,
                  hashlib.sha256(contents[e.path]).hexdigest() if e.kind == "file" else "")
                 for e in entries]
    if between is not None:
        between()
    try:
        again, _ = _walk(real_root)
    except _Bound:
        raise WriterMeasurementError("changed") from None
    if sorted((e.path, e.signature) for e in again) != sorted((e.path, e.signature) for e in entries):
        raise WriterMeasurementError("changed")
    return Writer(real_root, version, pin_of(PACKAGE_NAME, version, inventory))


def real_path(path: str) -> str:
    """WRITER-MEAS-2: an absolute path resolved through every link; relative paths are refused."""
    if type(path) is not str or not os.path.isabs(path) or "\0" in path:
        raise OSError(f"not an absolute path: {path!r:.80}")
    try:  # a lone surrogate has no UTF-8 form, so such a path names no file (WRITER-MEAS-2)
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise OSError(f"no file has this name: {path!r:.80}") from None
    # The kernel resolves the spelling first: a component after a non-directory (``/x/file/..``,
    # ``/x/file/``), which realpath alone would drop, is ENOTDIR here (WRITER-MEAS-2).
    os.stat(path)
    return os.path.realpath(path, strict=True)


def measure_writers(roots: Sequence[str], between: Callable[[], None] | None = None,
                    before_read: Callable[[], None] | None = None) -> Measurement:
    """WRITER-MEAS-1..3: measure every root in order; the first failing root wins."""
    if not roots:
        raise WriterMeasurementError("invalid-inventory")
    if len(roots) > MAX_ROOTS:
        raise WriterMeasurementError("bound")
    rows: list[RootRow] = []
    seen: set[str] = set()
    for index, root in enumerate(roots):
        if type(root) is not str or not root or not os.path.isabs(root) or "\0" in root:
            raise WriterMeasurementError("invalid-inventory", index)
        try:
            real = real_path(root)
        except OSError:
            raise WriterMeasurementError("unreadable", index) from None
        if real in seen:
            raise WriterMeasurementError("invalid-inventory", index)
        seen.add(real)
        try:
            if not stat.S_ISDIR(os.lstat(real).st_mode):
                raise WriterMeasurementError("invalid-inventory", index)
        except OSError:
            raise WriterMeasurementError("unreadable", index) from None
        try:
            writer = measure_root(real, between, before_read)
        except WriterMeasurementError as error:
            raise WriterMeasurementError(error.detail, index) from None
        rows.append(RootRow(real, writer))
    return Measurement(tuple(sorted(rows, key=lambda r: path_order(r.root))))


# -- the home's files (WRITER-HOME-*) ------------------------------------------------------------

def _read_home_json(path: str) -> Any:
    """A home file's JSON (WRITER-HOME-5); FileNotFoundError when absent, ValueError/OSError when
    unreadable: a symlink (O_NOFOLLOW), anything but a regular file, more than 1 MiB."""
    # A lone surrogate has no UTF-8 form, so such a path names no file (WRITER-HOME-5): Python would
    # give one of U+DC80..U+DCFF to the system as the byte it escapes, and read a file of that name.
    path.encode("utf-8")  # UnicodeEncodeError, a ValueError: unreadable
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        data = b""
        # One byte past the bound at most, which strict_json refuses. A read may return less than
        # asked: read to the end.
        while len(data) <= MAX_JSON_FILE_BYTES:
            chunk = os.read(fd, MAX_JSON_FILE_BYTES + 1 - len(data))
            if not chunk:
                break
            data += chunk
        return strict_json(data)
    finally:
        os.close(fd)


def read_setup_writer_roots(home: str) -> list[str]:
    """WRITER-HOME-1: the setup receipt's writer roots, resolved and sorted; none without a receipt."""
    try:
        data = _read_home_json(os.path.join(home, SETUP_RECEIPT))
    except FileNotFoundError:
        return []
    roots = data.get("writerRoots") if isinstance(data, dict) else None
    if not isinstance(roots, list) or not all(type(r) is str for r in roots):
        raise ValueError("setup receipt writerRoots must be a list of strings")
    return sorted({real_path(r) for r in roots}, key=path_order)


def require_home_floor(home: str) -> str:
    """WRITER-HOME-2: the recorded reader floor, a plain release of at least 0.22.0."""
    try:
        data = _read_home_json(os.path.join(home, FORMATS))
    except FileNotFoundError:
        raise PlacementWriterContextError("home floor", "missing") from None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        raise PlacementWriterContextError("home floor", "unavailable") from None
    floor = data.get("readerFloor") if isinstance(data, dict) else None
    release = parse_release(floor)
    if release is None or release < HOME_FLOOR_MINIMUM:
        raise PlacementWriterContextError("home floor", "unavailable")
    return str(floor)


def _writers(raw: object) -> tuple[Writer, ...]:
    if not isinstance(raw, list):
        raise ValueError("writers must be a list")
    result = []
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"writerId", "version", "pin"} or not all(
                type(v) is str for v in item.values()):
            raise ValueError("a writer is {writerId, version, pin}, all strings")
        result.append(Writer(item["writerId"], item["version"], item["pin"]))
    return tuple(result)


def _read_locator(home: str) -> tuple[Any, tuple[str, ...] | None, tuple[Writer, ...]]:
    data = _read_home_json(os.path.join(home, LOCATOR))
    if not isinstance(data, dict):
        raise ValueError("the locator is an object")
    roots = data.get("roots")
    if roots is not None and (not isinstance(roots, list) or not all(type(r) is str for r in roots)):
        raise ValueError("roots must be a list of strings")
    activation = data.get("activation")
    if not isinstance(activation, dict) or activation.get("renewal") not in (None, "pending", "staging"):
        raise ValueError("activation must be an object whose renewal is null, pending or staging")
    return data, (tuple(roots) if roots is not None else None), _writers(data.get("writers", []))


def read_effective(home: str) -> Effective:
    """WRITER-HOME-3: the active locator; no roots when it is absent or records none."""
    try:
        data, roots, writers = _read_locator(home)
        first = canonical_json(data)
    except FileNotFoundError:
        return Effective(None, (), lambda: None)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        raise PlacementWriterContextError("active locator", "unavailable") from None

    def assert_current() -> None:
        """WRITER-HOME-4: the locator is still the one read, and no writer renewal is under way."""
        try:
            again, _, _ = _read_locator(home)
            text = canonical_json(again)
        except FileNotFoundError:
            raise PlacementWriterContextError("active locator", "missing") from None
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            raise PlacementWriterContextError("active locator", "unavailable") from None
        renewal = again["activation"].get("renewal")
        if renewal in ("pending", "staging"):
            raise SharedWriterRevisionError(renewal)
        if text != first:
            raise PlacementWriterContextError("active locator", "changed")

    return Effective(roots, writers, assert_current)


class FilesystemEnvironment:
    """The real world: every read goes to the filesystem when the core asks for it."""

    def __init__(self, between: Callable[[], None] | None = None,
                 before_read: Callable[[], None] | None = None) -> None:
        self.between = between  # a hook run between a root's read pass and its second stat pass
        self.before_read = before_read  # a hook run between a root's walk and its read pass

    def real_path(self, path: str) -> str:
        return real_path(path)

    def read_setup_writer_roots(self, home: str) -> list[str]:
        return read_setup_writer_roots(home)

    def measure(self, roots: Sequence[str]) -> Measurement:
        return measure_writers(roots, self.between, self.before_read)

    def require_home_floor(self, home: str) -> str:
        return require_home_floor(home)

    def read_effective(self, home: str) -> Effective:
        return read_effective(home)

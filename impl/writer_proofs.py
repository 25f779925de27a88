"""Writer proofs: may a sync placement proceed with this inventory of writer installs?

Specified by ``spec/writer-proofs.md`` (seed ``002_79f456de189a5c5b.txt``, the
file ``sync-placement-writer-context.ts``); requirement IDs in comments point there.

Theory of operation
-------------------
A sync placement rewrites a memory home that several *writer* installs of the
CLI may touch. Before it proceeds, the coordinator needs proof that every
writer is known and unchanged. The proof comes in two phases:

* the **initial** phase (:func:`initial_context`): the person declares the
  writer roots (or the required ones are taken: the running CLI and the setup
  receipt's roots); every root is measured, and the home's reader floor noted;
* the **active** phase (:func:`active_context`): the roots come from the
  active locator written by an earlier placement, and every package is
  measured anew against the writers the locator recorded.

Each context has an ``attest`` that the coordinator calls while its apply
fences are held: it measures again and either returns the writers with the
quiescence claim, or refuses. A :func:`preview` shows the person the active
inventory without ever making a claim.

Every refusal is a :class:`PlacementWriterContextError` carrying a root
*category*, a *cause* (``missing``, ``changed``, ``unavailable``), the phase,
and sometimes a failure *detail*; its message is one of the seed's templates,
reproduced exactly (:func:`writer_context_message`). Errors that reach
``attest`` from elsewhere are never trusted: :func:`safe_refusal` rebuilds a
refusal only from a genuine instance's own, in-vocabulary fields.

The core never touches the filesystem: it reads the world through an
:class:`Environment` (``impl/writer_fs.py`` is the real one, tests use fakes).
Bad input raises a :class:`WriterProofsError` before anything is read.

Entry points for a host or a conformance driver: :meth:`WriterProofs.from_config` builds a session
from a case's ``config`` (WRITER-IF-1), and :func:`check_arguments` takes a step's first fault
(WRITER-IF-4); each event method then checks its own arguments. The harness's part of a case (the
runner's config keys and the ``swap_paths`` step, WRITER-IF-6) is ``impl/writer_harness.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, cast

from .errors import InboxSpecError
from .options import FindingOptions
from .values import check_argument_names

Category = Literal["running CLI", "setup receipt", "declared writer", "active locator", "home floor",
                   "writer renewal"]
Cause = Literal["missing", "changed", "unavailable"]
Phase = Literal["initial", "active"]
RenewalState = Literal["pending", "staging"]
Detail = Literal["below-minimum", "wrong-package", "writable-runtime", "unreadable", "invalid-version",
                 "invalid-inventory", "unsafe-runtime", "missing-runtime", "bound", "changed"]

# WRITER-IF-1: the keys of a session's config, the runner's (``writer_harness.RUNNER_KEYS``) aside.
CONFIG_KEYS: tuple[str, ...] = ("home", "own_root", "options")
CATEGORIES: tuple[str, ...] = ("running CLI", "setup receipt", "declared writer", "active locator",
                               "home floor", "writer renewal")
CAUSES: tuple[str, ...] = ("missing", "changed", "unavailable")
PHASES: tuple[str, ...] = ("initial", "active")
RENEWAL_STATES: tuple[str, ...] = ("pending", "staging")

# WRITER-MSG-2: the failure details and their clauses, exactly as the seed writes them.
FAILURE_DETAILS: dict[str, str] = {
    "below-minimum": "release is below 0.21.0",
    "wrong-package": "package is not @staix/agent-mem",
    "writable-runtime": "runtime code is group- or world-writable",
    "unreadable": "runtime files are unreadable or missing",
    "invalid-version": "package version is not a supported plain release",
    "invalid-inventory": "root inventory is invalid or duplicated",
    "unsafe-runtime": "runtime files have unsafe types or symlinks",
    "missing-runtime": "required bin/amem.js or src/index.ts is missing",
    "bound": "inventory exceeds a supported bound",
    "changed": "install changed during measurement",
}

# WRITER-MSG-3: the seed imports this error's message without showing it; these texts are inboxspec's.
RENEWAL_MESSAGES: dict[str, str] = {
    "pending": "Shared writer revision is pending; finish or roll back the writer renewal with a "
               "compatible release, then run amem migrate --sync-placement --dry-run.",
    "staging": "Shared writer revision is staging; wait for the writer renewal to finish or roll it "
               "back with a compatible release, then run amem migrate --sync-placement --dry-run.",
}


# -- typed errors for bad input (not refusals) ------------------------------------------------

class WriterProofsError(InboxSpecError):
    code: ClassVar[str] = "invalid_argument"


class InvalidConfig(WriterProofsError):
    code = "invalid_config"


class InvalidRoots(WriterProofsError):
    code = "invalid_roots"


class InvalidArgument(WriterProofsError):
    code = "invalid_argument"


class NoContext(WriterProofsError):
    code = "no_context"


class FencesNotHeld(WriterProofsError):
    """Only with the ``attest_requires_fences`` option (finding WRITER-F1)."""

    code = "fences_not_held"


# -- messages ------------------------------------------------------------------------------------

def renewal_message(state: str) -> str:
    """WRITER-MSG-3."""
    return RENEWAL_MESSAGES["staging" if state == "staging" else "pending"]


def writer_context_message(category: str, cause: str, phase: str, detail: str | None = None,
                           renewal_state: str | None = None) -> str:
    """WRITER-MSG-1: the refusal message, a pure function of the refusal's fields.
    """
    if category == "writer renewal":
        return renewal_message("staging" if renewal_state == "staging" else "pending")
    if category == "active locator":
        return (f"Sync placement initial root locator is {cause} (active locator category); have the person "
                "inspect sync-placement-writer-roots.json and the matching activation metadata with a "
                "compatible recovery release, then run amem migrate --sync-placement --dry-run.")
    if category == "home floor":
        return (f"Sync placement reader-floor proof is {cause} (home floor category); have the person "
                "inspect formats.json and use a reader compatible with its recorded floor, then run "
                "amem migrate --sync-placement --dry-run.")
    clause = f"; {FAILURE_DETAILS[detail]}" if detail else ""
    if phase == "initial":
        advice = ("upgrade or repair the managed amem install and its host exact pin, then rerun amem setup "
                  "<target> --apply" if category == "setup receipt"
                  else "upgrade or repair the amem install and its host exact pin")
        return (f"Sync placement initial writer proof is {cause} ({category} category{clause}); {advice}. "
                "Declare the complete writer roots and rerun amem migrate --sync-placement --dry-run.")
    return (f"Sync placement writer proof is {cause} ({category} category{clause}); restore the inventoried "
            "install, or have the person run amem migrate --sync-placement --dry-run and --apply with the "
            "complete --writer-root inventory after installing the required 0.22.0 home floor.")


class SharedWriterRevisionError(Exception):
    """A writer renewal is under way (``pending`` or ``staging``): WRITER-MSG-3, WRITER-ACT-6."""

    def __init__(self, code: str) -> None:
        state = "staging" if code == "staging" else "pending"
        super().__init__(renewal_message(state))
        self.code = state


class PlacementWriterContextError(Exception):
    """A refusal: category, cause, phase, optional detail and renewal state (WRITER-REF-1)."""

    def __init__(self, category: str, cause: str, phase: str = "active", detail: str | None = None,
                 renewal_state: str | None = None) -> None:
        super().__init__(writer_context_message(category, cause, phase, detail, renewal_state))
        self.category = category
        self.cause_class = cause
        self.phase = phase
        self.detail = detail
        self.renewal_state = renewal_state

    def as_json(self) -> dict[str, Any]:
        return {"category": self.category, "cause": self.cause_class, "phase": self.phase,
                "detail": self.detail, "renewal_state": self.renewal_state, "message": str(self)}


class WriterMeasurementError(Exception):
    """The measurement failed: a detail code and, when one root is to blame, its index (WRITER-MEAS-1)."""

    def __init__(self, detail: str, root_index: int | None = None) -> None:
        super().__init__(f"writer measurement failed: {detail}"
                         + ("" if root_index is None else f" at root {root_index}"))
        self.detail = detail
        self.root_index = root_index
        self.code = "changed" if detail == "changed" else "failed"


# -- trusting errors (WRITER-SAFE-*) ---------------------------------------------------------------

def _own_value(error: object, name: str) -> tuple[bool, object]:
    """An attribute stored in the instance's own ``__dict__``, read without running its code.

    Properties, class attributes, ``__getattr__`` and ``__getattribute__`` never answer: the dict is
    read with ``object.__getattribute__`` and must be a real ``dict``.
    """
    try:
        own = object.__getattribute__(error, "__dict__")
    except AttributeError:
        return False, None
    if type(own) is not dict or name not in own:
        return False, None
    return True, dict.__getitem__(own, name)


def _genuine(error: object, cls: type) -> bool:
    """WRITER-SAFE-1: genuinely of ``cls``: its real type (never the ``__class__`` it claims) derives
    from ``cls``, and no class on the way computes attributes (``__getattr__``, ``__getattribute__``)."""
    real = type(error)
    if not issubclass(real, cls):
        return False
    if getattr(real, "__getattribute__") is not getattr(cls, "__getattribute__"):  # noqa: B009
        return False
    return not any("__getattr__" in vars(klass) for klass in real.__mro__)


def _vocabulary(value: object, words: Sequence[str]) -> str | None:
    return value if type(value) is str and value in words else None


def safe_refusal(error: object, category: str, phase: str = "active") -> PlacementWriterContextError:
    """WRITER-SAFE-1..3: a refusal rebuilt from an untrusted error, or the generic ``unavailable`` one."""
    if _genuine(error, SharedWriterRevisionError):
        present, code = _own_value(error, "code")
        state = _vocabulary(code, RENEWAL_STATES) if present else None
        if state is not None:
            return PlacementWriterContextError("writer renewal", "unavailable", phase, None, state)
    if _genuine(error, PlacementWriterContextError):
        has_category, raw_category = _own_value(error, "category")
        has_cause, raw_cause = _own_value(error, "cause_class")
        own_category = _vocabulary(raw_category, CATEGORIES) if has_category else None
        own_cause = _vocabulary(raw_cause, CAUSES) if has_cause else None
        if own_category is not None and own_cause is not None:
            has_detail, raw_detail = _own_value(error, "detail")
            detail = _vocabulary(raw_detail, tuple(FAILURE_DETAILS)) if has_detail else None
            has_state, raw_state = _own_value(error, "renewal_state")
            state = _vocabulary(raw_state, RENEWAL_STATES) if has_state else None
            return PlacementWriterContextError(own_category, own_cause, phase, detail, state)
    return PlacementWriterContextError(category if category in CATEGORIES else "declared writer",
                                       "unavailable", phase)


def extract_failure(error: object) -> tuple[str, str, int | None] | None:
    """WRITER-MEAS-1: (code, detail, root index) of a genuine measurement failure, else None."""
    if not _genuine(error, WriterMeasurementError):
        return None
    _, detail = _own_value(error, "detail")
    _, index = _own_value(error, "root_index")
    checked = _vocabulary(detail, tuple(FAILURE_DETAILS))
    if checked is None:
        return None
    root_index = index if type(index) is int and index >= 0 else None
    return ("changed" if checked == "changed" else "failed"), checked, root_index


# -- canonical JSON (WRITER-JSON-1) --------------------------------------------------------------

def _as_double(value: object) -> object:
    """WRITER-JSON-1: a number is the double JavaScript parses it to, so ``1``, ``1.0`` and ``-0``
    spell one value; an integral double is written in digits, which keeps every pin's text."""
    if type(value) is int or type(value) is float:
        double = float(value)
        return int(double) if double.is_integer() else double  # int(-0.0) is 0
    if isinstance(value, (list, tuple)):
        return [_as_double(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_double(item) for key, item in value.items()}
    return value


def canonical_json(value: object) -> str:
    """Keys sorted by code point, no insignificant whitespace, non-ASCII written as itself."""
    return json.dumps(_as_double(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      allow_nan=False)


# -- measurements ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Writer:
    writer_id: str
    version: str
    pin: str

    def as_json(self) -> dict[str, str]:
        return {"writerId": self.writer_id, "version": self.version, "pin": self.pin}


@dataclass(frozen=True)
class RootRow:
    root: str
    writer: Writer

    def as_json(self) -> dict[str, str]:
        return {"root": self.root, **self.writer.as_json()}


@dataclass(frozen=True)
class Measurement:
    """Rows ordered by root; ``writers`` are the rows without their roots, in the same order."""

    roots: tuple[RootRow, ...]

    @property
    def writers(self) -> tuple[Writer, ...]:
        return tuple(row.writer for row in self.roots)

    def writers_json(self) -> list[dict[str, str]]:
        return [w.as_json() for w in self.writers]

    def as_json(self) -> dict[str, Any]:
        return {"roots": [r.as_json() for r in self.roots], "writers": self.writers_json()}


@dataclass(frozen=True)
class Effective:
    """The active locator as read (WRITER-HOME-3): roots, if recorded, and writers."""

    roots: tuple[str, ...] | None
    writers: tuple[Writer, ...]
    assert_current: Callable[[], None]


class Environment(Protocol):
    """The world the core reads: the real filesystem (``writer_fs``) or a test fake."""

    def real_path(self, path: str) -> str: ...

    def read_setup_writer_roots(self, home: str) -> list[str]: ...

    def measure(self, roots: Sequence[str]) -> Measurement: ...

    def require_home_floor(self, home: str) -> str: ...

    def read_effective(self, home: str) -> Effective: ...


@dataclass(frozen=True)
class Options(FindingOptions):
    """Behaviour changes recommended by the findings. Every default is the seed's."""

    MACHINE = "writer-proofs"
    INVALID_CONFIG = InvalidConfig

    attest_requires_fences: bool = False  # WRITER-F1
    compare_writers_by_id: bool = False  # WRITER-F2


def _fail(category: str, cause: str, phase: str = "active",
          detail: str | None = None) -> PlacementWriterContextError:
    return PlacementWriterContextError(category, cause, phase, detail)


@dataclass(frozen=True)
class Required:
    """WRITER-REQ-1: the running CLI's real root, the setup receipt's roots, and their sorted union."""

    own: str
    receipt: tuple[str, ...]

    @property
    def roots(self) -> tuple[str, ...]:
        return tuple(sorted(set((self.own, *self.receipt)), key=path_order))


def path_order(path: str) -> bytes:
    """WRITER-JSON-2: paths order by their UTF-8 bytes (code point order)."""
    return path.encode("utf-8", "surrogatepass")


def required(env: Environment, home: str, own_root: str, phase: str = "active") -> Required:
    """WRITER-REQ-1, WRITER-REQ-2."""
    try:
        own = env.real_path(own_root)
    except Exception:
        raise _fail("running CLI", "unavailable", phase, "unreadable") from None
    try:
        receipt = tuple(env.read_setup_writer_roots(home))
    except Exception:
        raise _fail("setup receipt", "unavailable", phase, "unreadable") from None
    return Required(own, receipt)


def root_category(root: str | None, needed: Required) -> str:
    """WRITER-CAT-1. Checked symbolically by CrossHair (tests/test_writer_proofs_crosshair.py).

    post[]:
        # the running CLI's own root is always the running CLI category
        root != needed.own or __return__ == "running CLI"
    """
    if root == needed.own:
        return "running CLI"
    return "setup receipt" if root and root in needed.receipt else "declared writer"


def measurement_refusal(env: Environment, error: object, roots: Sequence[str], needed: Required,
                        phase: str) -> PlacementWriterContextError:
    """WRITER-MEAS-2: a measurement failure as a refusal of the failing root's category."""
    failure = extract_failure(error)
    root: str | None = None
    if failure is not None and failure[2] is not None and failure[2] < len(roots):
        try:
            root = env.real_path(roots[failure[2]])
        except Exception:
            root = None  # a missing noncanonical declared path is still unavailable, never fresh evidence
    cause = "changed" if failure is not None and failure[0] == "changed" else "unavailable"
    detail = failure[1] if failure is not None else "unreadable"
    return PlacementWriterContextError(root_category(root, needed), cause, phase, detail)


def measure_complete(env: Environment, home: str, roots: Sequence[str], own_root: str,
                     phase: str = "active") -> Measurement:
    """WRITER-COMP-1..5: measure, require the running CLI and the receipt, and re-read the requirements."""
    before = required(env, home, own_root, phase)
    try:
        result = env.measure(roots)
    except Exception as error:
        raise measurement_refusal(env, error, roots, before, phase) from None
    measured = {row.root for row in result.roots}
    if before.own not in measured:
        raise _fail("running CLI", "missing", phase)
    if any(root not in measured for root in before.receipt):
        raise _fail("setup receipt", "missing", phase)
    after = required(env, home, own_root, phase)
    if after.own != before.own:
        raise _fail("running CLI", "changed", phase, "changed")
    if canonical_json(list(after.receipt)) != canonical_json(list(before.receipt)):
        raise _fail("setup receipt", "changed", phase, "changed")
    return result


def writers_differ(current: Sequence[Writer], expected: Sequence[Writer], options: Options) -> bool:
    """WRITER-INIT-4 / WRITER-ACT-5: canonical JSON of the lists, in order (WRITER-F2: by id)."""
    def encode(writers: Sequence[Writer]) -> str:
        rows = [w.as_json() for w in writers]
        if options.compare_writers_by_id:
            rows.sort(key=lambda row: path_order(row["writerId"]))
        return canonical_json(rows)
    return encode(current) != encode(expected)


def changed_root(rows: Sequence[RootRow], expected: Sequence[Writer]) -> str | None:
    """The first measured root whose writer the expectation does not hold exactly."""
    for row in rows:
        if not any(old.writer_id == row.writer.writer_id and old.version == row.writer.version
                   and old.pin == row.writer.pin for old in expected):
            return row.root
    return None


@dataclass(frozen=True)
class Attestation:
    writers: tuple[Writer, ...]
    legacy_sync_quiesced: bool = True

    def as_json(self) -> dict[str, Any]:
        return {"writers": [w.as_json() for w in self.writers],
                "legacySyncQuiesced": self.legacy_sync_quiesced}


@dataclass
class PlacementWriterContext:
    """A proof held between construction and the coordinator's attest calls."""

    phase: str
    measurement: Measurement
    _attest: Callable[[], Attestation]
    last_refusal: PlacementWriterContextError | None = field(default=None)

    def attest(self) -> Attestation:
        return self._attest()


def initial_context(env: Environment, home: str, roots: Sequence[str], own_root: str,
                    options: Options | None = None) -> PlacementWriterContext:
    """WRITER-INIT-1..5."""
    opts = options or Options()
    selected = list(roots) if roots else list(required(env, home, own_root, "initial").roots)
    measurement = measure_complete(env, home, selected, own_root, "initial")
    canonical = [row.root for row in measurement.roots]
    floor = env.require_home_floor(home)

    def attest() -> Attestation:
        try:
            if env.require_home_floor(home) != floor:
                raise _fail("home floor", "changed", "initial")
            current = measure_complete(env, home, canonical, own_root, "initial")
            if writers_differ(current.writers, measurement.writers, opts):
                root = changed_root(current.roots, measurement.writers)
                raise _fail(root_category(root, required(env, home, own_root, "initial")), "changed",
                            "initial", "changed")
            return Attestation(current.writers)
        except Exception as error:
            context.last_refusal = safe_refusal(error, "declared writer", "initial")
            raise context.last_refusal from None

    context = PlacementWriterContext("initial", measurement, attest)
    return context


def _active_read(env: Environment, home: str, own_root: str, options: Options) -> Measurement:
    """WRITER-ACT-1..6: one complete active read."""
    env.require_home_floor(home)
    effective = env.read_effective(home)
    roots = effective.roots
    if roots is None:  # an empty list is not "no roots": JavaScript's [] is truthy
        raise _fail("active locator", "unavailable")
    needed = required(env, home, own_root)
    if needed.own not in roots:
        raise _fail("running CLI", "missing")
    if any(root not in roots for root in needed.receipt):
        raise _fail("setup receipt", "missing")
    measurement = measure_complete(env, home, roots, own_root)
    if writers_differ(measurement.writers, effective.writers, options):
        root = changed_root(measurement.roots, effective.writers)
        raise _fail(root_category(root, needed), "changed", "active", "changed")
    effective.assert_current()
    return measurement


def active_context(env: Environment, home: str, own_root: str,
                   options: Options | None = None) -> PlacementWriterContext:
    """WRITER-ACT-1..7."""
    opts = options or Options()
    measurement = _active_read(env, home, own_root, opts)

    def attest() -> Attestation:
        try:
            return Attestation(_active_read(env, home, own_root, opts).writers)
        except Exception as error:
            context.last_refusal = safe_refusal(error, "active locator")
            raise context.last_refusal from None

    context = PlacementWriterContext("active", measurement, attest)
    return context


@dataclass(frozen=True)
class Preview:
    complete: bool
    matches: bool
    roots: tuple[RootRow, ...]
    expected: tuple[Writer, ...]
    missing_categories: tuple[str, ...]
    differences: tuple[tuple[str, str], ...]
    refusal_category: str

    def as_json(self) -> dict[str, Any]:
        return {"complete": self.complete, "matches": self.matches,
                "roots": [r.as_json() for r in self.roots],
                "expected": [w.as_json() for w in self.expected],
                "missingCategories": list(self.missing_categories),
                "differences": [{"writerId": w, "state": s} for w, s in self.differences],
                "refusalCategory": self.refusal_category}


def preview(env: Environment, home: str, own_root: str, requested: Sequence[str] = ()) -> Preview:
    """WRITER-PREV-1..6: the person's view; never a claim, never an attestation."""
    effective = env.read_effective(home)
    mapped = effective.roots
    if mapped is None:
        raise _fail("active locator", "unavailable")
    selected = list(requested) if requested else list(mapped)
    expected = effective.writers
    try:
        measurement = env.measure(selected)
    except Exception:
        return Preview(False, False, (), expected, ("declared writer",),
                       tuple((w.writer_id, "unverified") for w in expected), "declared writer")
    needed = required(env, home, own_root)
    measured_roots = {row.root for row in measurement.roots}
    missing: list[str] = []
    if needed.own not in measured_roots:
        missing.append("running CLI")
    if any(root not in measured_roots for root in needed.receipt):
        missing.append("setup receipt")
    differences: list[tuple[str, str]] = []
    for row in expected:
        actual = next((w for w in measurement.writers if w.writer_id == row.writer_id), None)
        state = "missing" if actual is None else (
            "unchanged" if canonical_json(row.as_json()) == canonical_json(actual.as_json()) else "changed")
        differences.append((row.writer_id, state))
    for w in measurement.writers:
        if not any(e.writer_id == w.writer_id for e in expected):
            differences.append((w.writer_id, "added"))
    matches = not missing and all(state == "unchanged" for _, state in differences)
    changed: RootRow | None = None
    for r in measurement.roots:
        old = next((e for e in expected if e.writer_id == r.writer.writer_id), None)
        if old is None or old.pin != r.writer.pin or old.version != r.writer.version:
            changed = r
            break
    if missing:
        refusal = missing[0]
    elif changed is not None and changed.root == needed.own:
        refusal = "running CLI"
    elif changed is not None and changed.root in needed.receipt:
        refusal = "setup receipt"
    else:
        refusal = "declared writer"
    return Preview(True, matches, measurement.roots, expected, tuple(missing), tuple(differences), refusal)


# -- the session a host (and a conformance driver) holds -----------------------------------------

def _check_paths(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(type(v) is str for v in value):
        raise InvalidRoots(f"{what} must be a list of strings, got {value!r:.80}")
    return list(cast(list[str], value))


def _non_empty_string(value: object, what: str) -> str:
    """WRITER-IF-1: ``home`` and ``own_root`` are non-empty strings."""
    if type(value) is not str or not value:
        raise InvalidConfig(f"{what} must be a non-empty string, got {value!r:.80}")
    return value


def check_arguments(event: str, args: object, names: Collection[str]) -> Mapping[str, object]:
    """WRITER-IF-4, a step's first fault: ``args`` must be an object that names only the event's
    arguments (``names``, spec/writer-proofs.interface.json), else ``invalid_argument``. Returns
    ``args``.

    The faults that follow are each argument's own, in the event's argument order: the event
    method's (``WriterProofs.preview``, ``WriterProofs.initial``: ``invalid_roots``), or, for the
    harness step, ``writer_harness.SwapPaths.from_arguments``.
    """
    return check_argument_names(event, args, names, InvalidArgument)


class WriterProofs:
    """One coordinator's view: the current context (if any), its fences, and the options.

    Events (WRITER-IF-2): ``preview``, ``initial``, ``active``, ``attest``, ``hold_fences``,
    ``release_fences``. A successful ``initial`` or ``active`` replaces the held context; a refused
    one leaves none (WRITER-SES-1).
    """

    def __init__(self, env: Environment, home: str, own_root: str, options: Options | None = None) -> None:
        self.home = _non_empty_string(home, "home")
        self.own_root = _non_empty_string(own_root, "own_root")
        if options is not None and not isinstance(options, Options):
            raise InvalidConfig("options must be writer-proofs Options")
        self.env = env
        self.options = options or Options()
        self.context: PlacementWriterContext | None = None
        self.fences_held = False

    @classmethod
    def from_config(cls, env: Environment, config: object,
                    resolve: Callable[[str], str] | None = None) -> WriterProofs:
        """WRITER-IF-1: a session on ``env`` from a ``config`` object, the runner's keys already
        taken out (``writer_harness.session_config``). ``resolve``, if given, turns each checked
        path as the config spells it into the path the session reads (a driver's ``{fixture}``
        substitution).

        Faults, the first reported, every one ``invalid_config``: not an object; a key other than
        ``CONFIG_KEYS``; ``home``, then ``own_root``, missing or not a non-empty string (a
        ``null`` included); then a bad ``options`` (``Options.from_mapping``: not an object, an
        unknown name, a value that is not a boolean).
        """
        if not isinstance(config, Mapping):
            raise InvalidConfig(f"config must be an object, got {type(config).__name__}")
        unknown = sorted(str(key) for key in config if key not in CONFIG_KEYS)
        if unknown:
            raise InvalidConfig(f"unknown writer-proofs config key(s): {', '.join(unknown)}")
        home = _non_empty_string(config.get("home"), "home")
        own_root = _non_empty_string(config.get("own_root"), "own_root")
        options = Options.from_mapping(config.get("options", {}))
        if resolve is not None:
            home, own_root = resolve(home), resolve(own_root)
        return cls(env, home, own_root, options)

    @property
    def phase(self) -> str | None:
        return None if self.context is None else self.context.phase

    def preview(self, requested: object = ()) -> Preview:
        paths = _check_paths(list(requested) if isinstance(requested, tuple) else requested, "requested")
        return preview(self.env, self.home, self.own_root, paths)

    def initial(self, roots: object = ()) -> PlacementWriterContext:
        paths = _check_paths(list(roots) if isinstance(roots, tuple) else roots, "roots")
        self.context = None
        self.context = initial_context(self.env, self.home, paths, self.own_root, self.options)
        return self.context

    def active(self) -> PlacementWriterContext:
        self.context = None
        self.context = active_context(self.env, self.home, self.own_root, self.options)
        return self.context

    def attest(self) -> Attestation:
        if self.context is None:
            raise NoContext("attest needs an initial or active context")
        if self.options.attest_requires_fences and not self.fences_held:
            raise FencesNotHeld("attest is called only while the apply fences are held")
        return self.context.attest()

    def hold_fences(self) -> None:
        self.fences_held = True

    def release_fences(self) -> None:
        self.fences_held = False

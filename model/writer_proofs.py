"""The writer proofs as an explicit state chart (spec/writer-proofs.md).

Control states are the context the session holds: none, an initial context or an active context.
The chart's data is whether the fences are held and what an initial context kept (its measured
roots, its writers and the reader floor). Every event carries the **world** it observes: an
abstract, immutable description of what the filesystem answers (:class:`World`). The real
measurement is IO and lives in ``impl/writer_fs.py``; the chart decides, from the world, what the
seed's code decides: which refusal, with which category, cause, phase and detail, or which
measurement, attestation or preview.

Reads of the running CLI root and the setup receipt that happen *after* a measurement within one
event see ``own_after`` and ``receipt_after``, so a world can say that they moved while the
measurement ran (WRITER-COMP-4).

Guards are named after the requirements they encode; the transitions of one event are listed in
the order the spec applies them, and python-statemachine takes the first enabled one. This module
does not import ``inboxspec.impl``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, cast

from statemachine import State

from .chart import ModelChart, stay

CATEGORIES = ("running CLI", "setup receipt", "declared writer", "active locator", "home floor",
              "writer renewal")
DETAILS = {
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
RENEWAL = {
    "pending": "Shared writer revision is pending; finish or roll back the writer renewal with a "
               "compatible release, then run amem migrate --sync-placement --dry-run.",
    "staging": "Shared writer revision is staging; wait for the writer renewal to finish or roll it "
               "back with a compatible release, then run amem migrate --sync-placement --dry-run.",
}
MAX_ROOTS = 32

class ModelWriter(NamedTuple):
    """A writer as the model sees it."""

    writer_id: str
    version: str
    pin: str


class MeasuredRoot(NamedTuple):
    """One root of a measurement, and the writer installed there."""

    root: str
    writer: ModelWriter


# An install: ("ok", version, pin) or ("fault", detail).
Install = tuple[str, ...]


@dataclass(frozen=True)
class Locator:
    """The active locator as read: its roots (None: records none), its writers, and what its
    still-current check answers: "current", "missing", "unavailable", "changed", "pending", "staging"."""

    roots: tuple[str, ...] | None
    writers: tuple[ModelWriter, ...]
    check: str = "current"


@dataclass(frozen=True)
class World:
    """What the filesystem answers during one event (see the module docstring)."""

    own: str | None  # the running CLI root's real path; None when it does not resolve
    own_after: str | None
    receipt: tuple[str, ...] | None  # the receipt's real roots; None when unreadable
    receipt_after: tuple[str, ...] | None
    floor: str  # the recorded floor, or "missing" / "unavailable"
    locator: Locator | str | None  # None: absent; "unavailable": unreadable
    paths: tuple[tuple[str, str, str], ...]  # (spelling, "ok" | "invalid" | "unresolved", real path)
    installs: tuple[tuple[str, Install], ...]  # real path -> install


@dataclass(frozen=True)
class WriterProofsModelOptions:
    attest_requires_fences: bool = False  # WRITER-F1
    compare_writers_by_id: bool = False  # WRITER-F2


class Refusal(Exception):
    def __init__(self, category: str, cause: str, phase: str = "active", detail: str | None = None,
                 renewal_state: str | None = None) -> None:
        super().__init__(category)
        self.fields = (category, cause, phase, detail, renewal_state)


class Renewal(Exception):
    def __init__(self, state: str) -> None:
        super().__init__(state)
        self.state = state


def message(category: str, cause: str, phase: str, detail: str | None, renewal_state: str | None) -> str:
    """WRITER-MSG-1."""
    if category == "writer renewal":
        return RENEWAL["staging" if renewal_state == "staging" else "pending"]
    if category == "active locator":
        return (f"Sync placement initial root locator is {cause} (active locator category); have the person "
                "inspect sync-placement-writer-roots.json and the matching activation metadata with a "
                "compatible recovery release, then run amem migrate --sync-placement --dry-run.")
    if category == "home floor":
        return (f"Sync placement reader-floor proof is {cause} (home floor category); have the person "
                "inspect formats.json and use a reader compatible with its recorded floor, then run "
                "amem migrate --sync-placement --dry-run.")
    clause = f"; {DETAILS[detail]}" if detail else ""
    if phase == "initial":
        if category == "setup receipt":
            advice = ("upgrade or repair the managed amem install and its host exact pin, then rerun "
                      "amem setup <target> --apply")
        else:
            advice = "upgrade or repair the amem install and its host exact pin"
        return (f"Sync placement initial writer proof is {cause} ({category} category{clause}); {advice}. "
                "Declare the complete writer roots and rerun amem migrate --sync-placement --dry-run.")
    return (f"Sync placement writer proof is {cause} ({category} category{clause}); restore the inventoried "
            "install, or have the person run amem migrate --sync-placement --dry-run and --apply with the "
            "complete --writer-root inventory after installing the required 0.22.0 home floor.")


def refusal_json(refusal: Refusal) -> dict[str, Any]:
    category, cause, phase, detail, state = refusal.fields
    return {"category": category, "cause": cause, "phase": phase, "detail": detail, "renewal_state": state,
            "message": message(category, cause, phase, detail, state)}


def _canonical(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _order(path: str) -> bytes:
    return path.encode("utf-8", "surrogatepass")


def _writer_json(w: ModelWriter) -> dict[str, str]:
    return {"writerId": w.writer_id, "version": w.version, "pin": w.pin}


class Observation:
    """One event's reads of a world: reads after the measurement see the ``*_after`` values."""

    def __init__(self, world: World, own_root: str) -> None:
        self.world = world
        self.own_root = own_root
        self.measured = False

    def real(self, spelling: str) -> str | None:
        if spelling == self.own_root:
            return self.world.own_after if self.measured else self.world.own
        for name, status, real in self.world.paths:
            if name == spelling:
                return real if status == "ok" else None
        return None

    def required(self, phase: str) -> tuple[str, tuple[str, ...]]:
        """WRITER-REQ-1."""
        own = self.real(self.own_root)
        if own is None:
            raise Refusal("running CLI", "unavailable", phase, "unreadable")
        receipt = self.world.receipt_after if self.measured else self.world.receipt
        if receipt is None:
            raise Refusal("setup receipt", "unavailable", phase, "unreadable")
        return own, receipt

    def measure(self, roots: Sequence[str]) -> list[MeasuredRoot]:
        """WRITER-MEAS-1..3 at the level of the inventory; an install's own faults come from the world.

        Raises ("fail", detail, index) as a tuple in a ValueError."""
        self.measured = True
        if not roots:
            raise ValueError(("invalid-inventory", None))
        if len(roots) > MAX_ROOTS:
            raise ValueError(("bound", None))
        rows: list[MeasuredRoot] = []
        seen: set[str] = set()
        table = {name: (status, real) for name, status, real in self.world.paths}
        installs = dict(self.world.installs)
        for index, root in enumerate(roots):
            status, real = table.get(root, ("unresolved", ""))
            if status == "invalid":
                raise ValueError(("invalid-inventory", index))
            if status != "ok":
                raise ValueError(("unreadable", index))
            if real in seen:
                raise ValueError(("invalid-inventory", index))
            seen.add(real)
            status, *reading = installs.get(real, ("fault", "invalid-inventory"))
            if status != "ok":
                (detail,) = reading
                raise ValueError((detail, index))
            version, pin = reading
            rows.append(MeasuredRoot(real, ModelWriter(real, version, pin)))
        return sorted(rows, key=lambda row: _order(row.root))

    def floor(self) -> str:
        """WRITER-HOME-2."""
        if self.world.floor in ("missing", "unavailable"):
            raise Refusal("home floor", self.world.floor)
        return self.world.floor

    def locator(self) -> Locator | None:
        """WRITER-HOME-3."""
        if self.world.locator == "unavailable":
            raise Refusal("active locator", "unavailable")
        return self.world.locator if isinstance(self.world.locator, Locator) else None


def category_of(root: str | None, own: str, receipt: tuple[str, ...]) -> str:
    """WRITER-CAT-1."""
    if root == own:
        return "running CLI"
    return "setup receipt" if root and root in receipt else "declared writer"


def measure_complete(seen: Observation, roots: Sequence[str], phase: str) -> list[MeasuredRoot]:
    """WRITER-COMP-1..5."""
    own, receipt = seen.required(phase)
    try:
        rows = seen.measure(roots)
    except ValueError as failure:
        detail, index = failure.args[0]
        root = seen.real(roots[index]) if index is not None else None
        cause = "changed" if detail == "changed" else "unavailable"
        raise Refusal(category_of(root, own, receipt), cause, phase, detail) from None
    measured = {root for root, _ in rows}
    if own not in measured:
        raise Refusal("running CLI", "missing", phase)
    if any(root not in measured for root in receipt):
        raise Refusal("setup receipt", "missing", phase)
    own_after, receipt_after = seen.required(phase)
    if own_after != own:
        raise Refusal("running CLI", "changed", phase, "changed")
    if _canonical(list(receipt_after)) != _canonical(list(receipt)):
        raise Refusal("setup receipt", "changed", phase, "changed")
    return rows


def differ(current: Sequence[ModelWriter], expected: Sequence[ModelWriter], by_id: bool) -> bool:
    """WRITER-INIT-4, WRITER-ACT-5, WRITER-OPT-2."""
    a, b = [_writer_json(w) for w in current], [_writer_json(w) for w in expected]
    if by_id:
        a.sort(key=lambda w: _order(w["writerId"]))
        b.sort(key=lambda w: _order(w["writerId"]))
    return _canonical(a) != _canonical(b)


def first_changed(rows: Sequence[MeasuredRoot], expected: Sequence[ModelWriter]) -> str | None:
    return next((root for root, writer in rows if writer not in expected), None)


def measurement_json(rows: Sequence[MeasuredRoot]) -> dict[str, Any]:
    return {"roots": [{"root": root, **_writer_json(w)} for root, w in rows],
            "writers": [_writer_json(w) for _, w in rows]}


def safe(error: Exception, category: str, phase: str) -> Refusal:
    """WRITER-SAFE-2..4: the model's errors are all genuine and in vocabulary."""
    if isinstance(error, Renewal):
        return Refusal("writer renewal", "unavailable", phase, None, error.state)
    if isinstance(error, Refusal):
        own_category, cause, _phase, detail, state = error.fields
        return Refusal(own_category, cause, phase, detail, state)
    return Refusal(category, "unavailable", phase)


Kept = tuple[tuple[str, ...], tuple[ModelWriter, ...], str]
Result = TypeVar("Result")
# A chart's remembered reads of worlds (``WriterProofsChart._read``): by the read, the world's
# identity and the other arguments, the world and what the read gave or raised.
Reads = dict[tuple[Any, ...], tuple["World", Any, Exception | None]]


def initial_outcome(world: World, own_root: str, roots: Sequence[str]) -> Kept:
    """WRITER-INIT-1, WRITER-INIT-2: what the initial context keeps, or a Refusal."""
    seen = Observation(world, own_root)
    if roots:
        selected = list(roots)
    else:
        own, receipt = seen.required("initial")
        selected = sorted({own, *receipt}, key=_order)  # WRITER-REQ-2
    rows = measure_complete(seen, selected, "initial")
    return tuple(r for r, _ in rows), tuple(w for _, w in rows), seen.floor()


def initial_attest(world: World, own_root: str, kept: Kept, by_id: bool) -> tuple[ModelWriter, ...]:
    """WRITER-INIT-3..5, WRITER-ATT-2."""
    roots, writers, floor = kept
    seen = Observation(world, own_root)
    try:
        if seen.floor() != floor:
            raise Refusal("home floor", "changed", "initial")
        rows = measure_complete(seen, roots, "initial")
        current = tuple(w for _, w in rows)
        if differ(current, writers, by_id):
            own, receipt = seen.required("initial")
            raise Refusal(category_of(first_changed(rows, writers), own, receipt), "changed", "initial",
                          "changed")
        return current
    except (Refusal, Renewal) as error:
        raise safe(error, "declared writer", "initial") from None


def active_read(world: World, own_root: str, by_id: bool) -> list[MeasuredRoot]:
    """WRITER-ACT-1..6."""
    seen = Observation(world, own_root)
    seen.floor()
    locator = seen.locator()
    if locator is None or locator.roots is None:
        raise Refusal("active locator", "unavailable")
    own, receipt = seen.required("active")
    if own not in locator.roots:
        raise Refusal("running CLI", "missing")
    if any(root not in locator.roots for root in receipt):
        raise Refusal("setup receipt", "missing")
    rows = measure_complete(seen, locator.roots, "active")
    if differ([w for _, w in rows], locator.writers, by_id):
        raise Refusal(category_of(first_changed(rows, locator.writers), own, receipt), "changed", "active",
                      "changed")
    if locator.check in ("pending", "staging"):
        raise Renewal(locator.check)
    if locator.check != "current":
        raise Refusal("active locator", locator.check)
    return rows


def preview_outcome(world: World, own_root: str, requested: Sequence[str]) -> dict[str, Any]:
    """WRITER-PREV-1..5."""
    seen = Observation(world, own_root)
    locator = seen.locator()
    if locator is None or locator.roots is None:
        raise Refusal("active locator", "unavailable")
    selected = list(requested) if requested else list(locator.roots)
    expected = list(locator.writers)
    try:
        rows = seen.measure(selected)
    except ValueError:
        return {"complete": False, "matches": False, "roots": [],
                "expected": [_writer_json(w) for w in expected],
                "missingCategories": ["declared writer"],
                "differences": [{"writerId": w.writer_id, "state": "unverified"} for w in expected],
                "refusalCategory": "declared writer"}
    own, receipt = seen.required("active")
    measured = {root for root, _ in rows}
    missing = (["running CLI"] if own not in measured else []) + (
        ["setup receipt"] if any(r not in measured for r in receipt) else [])
    writers = [w for _, w in rows]
    differences = []
    for old in expected:
        actual = next((w for w in writers if w.writer_id == old.writer_id), None)
        differences.append({"writerId": old.writer_id, "state": "missing" if actual is None else
                            "unchanged" if actual == old else "changed"})
    differences += [{"writerId": w.writer_id, "state": "added"} for w in writers
                    if all(e.writer_id != w.writer_id for e in expected)]
    changed = next((root for root, w in rows
                    if w not in expected), None)
    category = missing[0] if missing else category_of(changed, own, receipt) if changed else "declared writer"
    return {"complete": True, "matches": not missing and all(d["state"] == "unchanged" for d in differences),
            "roots": [{"root": root, **_writer_json(w)} for root, w in rows],
            "expected": [_writer_json(w) for w in expected], "missingCategories": missing,
            "differences": differences, "refusalCategory": category}


class WriterProofsChart(ModelChart["WriterProofsChart"]):
    no_context = State(initial=True)
    initial_context = State()
    active_context = State()

    _all = (no_context, initial_context, active_context)

    initial = (
        initial_context.from_(*_all, cond="initial_proof_holds", on="book_initial")
        | no_context.from_(*_all, on="book_initial_refusal")
    )
    active = (
        active_context.from_(*_all, cond="active_proof_holds", on="book_active")
        | no_context.from_(*_all, on="book_active_refusal")
    )
    attest = (
        no_context.to.itself(internal=True, on="book_no_context")
        | stay((initial_context, active_context), cond="attest_requires_held_fences",
                on="book_fences_not_held")
        | initial_context.to.itself(internal=True, cond="initial_attest_holds", on="book_attestation")
        | initial_context.to.itself(internal=True, on="book_attest_refusal")
        | active_context.to.itself(internal=True, cond="active_attest_holds", on="book_attestation")
        | active_context.to.itself(internal=True, on="book_attest_refusal")
    )
    preview = stay(_all, on="book_preview")
    hold_fences = stay(_all, on="book_hold_fences")
    release_fences = stay(_all, on="book_release_fences")

    del _all

    _reads: Reads  # made by the first ``_read``

    def __init__(self, own_root: str = "{fixture}/cli",
                 options: WriterProofsModelOptions | None = None) -> None:
        self.own_root = own_root
        self.options = options or WriterProofsModelOptions()
        self.fences = False
        self.kept: Kept | None = None
        self.phase: str | None = None  # the held context's phase, as every output reports it
        self.output: dict[str, Any] = {}
        super().__init__()

    # -- guards -------------------------------------------------------------------------------------

    def initial_proof_holds(self, roots: tuple[str, ...], world: World) -> bool:
        """WRITER-INIT-1, WRITER-COMP-5."""
        try:
            self._read(initial_outcome, world, roots)
        except (Refusal, Renewal):
            return False
        return True

    def active_proof_holds(self, world: World) -> bool:
        """WRITER-ACT-6, WRITER-ACT-7."""
        try:
            self._read(active_read, world, self.options.compare_writers_by_id)
        except (Refusal, Renewal):
            return False
        return True

    def attest_requires_held_fences(self) -> bool:
        """WRITER-OPT-1 (finding WRITER-F1)."""
        return self.options.attest_requires_fences and not self.fences

    def initial_attest_holds(self, world: World) -> bool:
        """WRITER-INIT-5."""
        try:
            self._read(initial_attest, world, self._kept(), self.options.compare_writers_by_id)
        except Refusal:
            return False
        return True

    def active_attest_holds(self, world: World) -> bool:
        """WRITER-ACT-7."""
        return self.active_proof_holds(world)

    def _read(self, read: Callable[..., Result], world: World, *args: Any) -> Result:
        """``read(world, self.own_root, *args)``, worked out once per chart and remembered in ``_reads``.

        Each read is a function of its arguments alone (a World is immutable, and so is what a read
        returns: tuples, or a list that no caller changes), and a guard and then the action of its
        transition make the same read, as do the steps of one letter from the explored states. A
        refusal is remembered too, and raised again without the traceback of its first raise.
        The world is kept with what it gave, so that its identity, the key, names no other world
        while the memo lives.

        The memo is made at the first read, so that it is no part of the data a constructor or an
        explorer's ``constants`` sets: a restarted chart (``ModelChart.restarted``) and each
        exploration's data start without one."""
        reads: Reads | None = vars(self).get("_reads")
        if reads is None:
            reads = self._reads = {}
        key = (read, id(world), *args)
        known = reads.get(key)
        if known is None:
            try:
                known = reads[key] = (world, read(world, self.own_root, *args), None)
            except (Refusal, Renewal) as refused:
                known = reads[key] = (world, None, refused)
        _world, result, raised = known
        if raised is not None:
            raise raised.with_traceback(None)
        return cast(Result, result)

    # -- actions: each sets ``output`` in the conformance shape ------------------------------------

    def _kept(self) -> Kept:
        assert self.kept is not None, "an initial context keeps its measurement"
        return self.kept

    def _out(self, phase: str | None, **body: Any) -> None:
        self.output = {**body, "context": phase}

    def book_initial(self, roots: tuple[str, ...], world: World) -> None:
        """WRITER-INIT-2, WRITER-SES-1."""
        self.kept = self._read(initial_outcome, world, roots)
        measured, writers, _floor = self.kept
        self.phase = "initial"
        self._out("initial", measurement=measurement_json(
            [MeasuredRoot(root, writer) for root, writer in zip(measured, writers, strict=True)]))

    def book_initial_refusal(self, roots: tuple[str, ...], world: World) -> None:
        """WRITER-SES-1, WRITER-REF-1."""
        self.kept = None
        self.phase = None
        try:
            self._read(initial_outcome, world, roots)
        except Refusal as refusal:
            self._out(None, refusal=refusal_json(refusal))

    def book_active(self, world: World) -> None:
        """WRITER-ACT-3, WRITER-SES-1."""
        self.kept = None
        self.phase = "active"
        self._out("active", measurement=measurement_json(
            self._read(active_read, world, self.options.compare_writers_by_id)))

    def book_active_refusal(self, world: World) -> None:
        """WRITER-ACT-7 (a renewal escapes unwrapped), WRITER-SES-1."""
        self.kept = None
        self.phase = None
        try:
            self._read(active_read, world, self.options.compare_writers_by_id)
        except Refusal as refusal:
            self._out(None, refusal=refusal_json(refusal))
        except Renewal as renewal:
            self._out(None, renewal={"state": renewal.state, "message": RENEWAL[renewal.state]})

    def book_no_context(self) -> None:
        """WRITER-ERR-3."""
        self._out(None, error="no_context")

    def book_fences_not_held(self) -> None:
        """WRITER-OPT-1."""
        self._out(self.phase, error="fences_not_held")

    def book_attestation(self, world: World) -> None:
        """WRITER-INIT-5, WRITER-ACT-7."""
        by_id = self.options.compare_writers_by_id
        if self.kept is not None:
            writers = list(self._read(initial_attest, world, self.kept, by_id))
        else:
            writers = [w for _, w in self._read(active_read, world, by_id)]
        self._out(self.phase, attestation={"writers": [_writer_json(w) for w in writers],
                                              "legacySyncQuiesced": True})

    def book_attest_refusal(self, world: World) -> None:
        """WRITER-ATT-1, WRITER-ATT-2, WRITER-ACT-7, WRITER-SAFE-2, WRITER-SAFE-3."""
        by_id = self.options.compare_writers_by_id
        try:
            if self.kept is not None:
                self._read(initial_attest, world, self.kept, by_id)
            else:
                self._read(active_read, world, by_id)
        except (Refusal, Renewal) as error:
            refusal = error if self.kept is not None else safe(error, "active locator", "active")
            assert isinstance(refusal, Refusal)
            self._out(self.phase, refusal=refusal_json(refusal))

    def book_preview(self, requested: tuple[str, ...], world: World) -> None:
        """WRITER-PREV-1..6."""
        try:
            self._out(self.phase, preview=preview_outcome(world, self.own_root, requested))
        except Refusal as refusal:
            self._out(self.phase, refusal=refusal_json(refusal))

    def book_hold_fences(self) -> None:
        """WRITER-SES-2."""
        self.fences = True
        self._out(self.phase, fences=True)

    def book_release_fences(self) -> None:
        """WRITER-SES-2."""
        self.fences = False
        self._out(self.phase, fences=False)

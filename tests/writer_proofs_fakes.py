"""A fake world for the writer proofs: the reference core reads it through the Environment interface.

The fake answers from a model :class:`~inboxspec.model.writer_proofs.World`, so the lockstep tests
can give the chart and the reference the very same world. Reads of the running CLI root and the
receipt made after a measurement within one event see the world's ``*_after`` values, as the
chart's do. Also the hypothesis strategies for worlds and events.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from inboxspec.impl.writer_proofs import (
    Effective,
    Measurement,
    PlacementWriterContextError,
    RootRow,
    SharedWriterRevisionError,
    Writer,
    WriterMeasurementError,
    path_order,
)
from inboxspec.model.writer_proofs import Locator, ModelWriter, World

OWN_ROOT = "/cli"
HOME = "/home"


class FakeEnvironment:
    def __init__(self, world: World) -> None:
        self.world = world
        self.measured = False
        self.reads: list[str] = []

    def begin(self, world: World) -> None:
        """A new event observes ``world``; nothing has been measured in it yet."""
        self.world = world
        self.measured = False

    def real_path(self, path: str) -> str:
        self.reads.append(f"real_path {path}")
        if path == OWN_ROOT:
            own = self.world.own_after if self.measured else self.world.own
            if own is None:
                raise OSError("does not resolve")
            return own
        for name, status, real in self.world.paths:
            if name == path and status == "ok":
                return real
        raise OSError("does not resolve")

    def read_setup_writer_roots(self, home: str) -> list[str]:
        receipt = self.world.receipt_after if self.measured else self.world.receipt
        if receipt is None:
            raise ValueError("unreadable receipt")
        return list(receipt)

    def measure(self, roots: Sequence[str]) -> Measurement:
        self.measured = True
        if not roots:
            raise WriterMeasurementError("invalid-inventory")
        if len(roots) > 32:
            raise WriterMeasurementError("bound")
        table = {name: (status, real) for name, status, real in self.world.paths}
        installs = dict(self.world.installs)
        rows, seen = [], set()
        for index, root in enumerate(roots):
            status, real = table.get(root, ("unresolved", ""))
            if status == "invalid":
                raise WriterMeasurementError("invalid-inventory", index)
            if status != "ok":
                raise WriterMeasurementError("unreadable", index)
            if real in seen:
                raise WriterMeasurementError("invalid-inventory", index)
            seen.add(real)
            install = installs.get(real, ("fault", "invalid-inventory"))
            if install[0] != "ok":
                raise WriterMeasurementError(install[1], index)
            rows.append(RootRow(real, Writer(real, install[1], install[2])))
        return Measurement(tuple(sorted(rows, key=lambda r: path_order(r.root))))

    def require_home_floor(self, home: str) -> str:
        if self.world.floor in ("missing", "unavailable"):
            raise PlacementWriterContextError("home floor", self.world.floor)
        return self.world.floor

    def read_effective(self, home: str) -> Effective:
        locator = self.world.locator
        if locator == "unavailable":
            raise PlacementWriterContextError("active locator", "unavailable")
        if not isinstance(locator, Locator):
            return Effective(None, (), lambda: None)
        check = locator.check

        def assert_current() -> None:
            if check in ("pending", "staging"):
                raise SharedWriterRevisionError(check)
            if check != "current":
                raise PlacementWriterContextError("active locator", check)

        return Effective(locator.roots, tuple(Writer(*w) for w in locator.writers), assert_current)


# -- strategies ------------------------------------------------------------------------------------

REALS = ("/cli", "/decl", "/rcpt")
SPELLINGS = ("/cli", "/decl", "/rcpt", "/alias", "rel", "/gone")
DETAILS = ("below-minimum", "unreadable", "changed", "missing-runtime")

_ok = st.tuples(
    st.just("ok"), st.sampled_from(("0.22.0", "0.22.1")), st.sampled_from(("sha256:a", "sha256:b"))
)
_fault = st.tuples(st.just("fault"), st.sampled_from(DETAILS))
# Mostly healthy installs, so that events get past the measurement to the later checks.
installs = st.tuples(*(st.one_of(_ok, _ok, _ok, _ok, _ok, _ok, _fault) for _ in REALS))
owns = st.sampled_from(("/cli", "/cli", "/cli", "/cli", "/cli", "/decl", None))
receipts = st.sampled_from(((), ("/rcpt",), ("/rcpt",), ("/rcpt",), None))
root_lists = st.one_of(
    st.just(()),
    st.just(("/cli", "/rcpt")),
    st.just(("/rcpt", "/cli", "/decl")),
    st.lists(st.sampled_from(SPELLINGS), max_size=3).map(tuple),
)


@st.composite
def worlds(draw: st.DrawFn) -> World:
    own = draw(owns)
    receipt = draw(receipts)
    installed = dict(zip(REALS, draw(installs), strict=True))
    paths = tuple(
        sorted(
            [
                ("/cli", "ok", "/cli"),
                ("/decl", "ok", "/decl"),
                ("/rcpt", *draw(st.sampled_from((("ok", "/rcpt"), ("ok", "/rcpt"), ("unresolved", ""))))),
                ("/alias", "ok", "/cli"),
                ("rel", "invalid", ""),
                ("/gone", "unresolved", ""),
            ]
        )
    )
    locator_kind = draw(
        st.sampled_from(("match", "match", "reordered", "stale", "none", "unavailable", "no-roots"))
    )
    locator: Locator | str | None
    if locator_kind == "none":
        locator = None
    elif locator_kind == "unavailable":
        locator = "unavailable"
    else:
        roots = draw(st.sampled_from((REALS, REALS, ("/cli", "/rcpt"), ("/cli",), ())))
        writers = [ModelWriter(r, *installed[r][1:]) for r in roots if installed[r][0] == "ok"]
        if locator_kind == "reordered":
            writers.reverse()
        elif locator_kind == "stale" and writers:
            writers[0] = writers[0]._replace(version="0.21.0", pin="sha256:old")
        locator = Locator(
            None if locator_kind == "no-roots" else roots,
            tuple(writers),
            draw(
                st.sampled_from(("current", "current", "current", "changed", "missing", "pending", "staging"))
            ),
        )
    # Half the worlds move the running CLI root or the receipt while the measurement runs.
    racing = draw(st.sampled_from(("no", "own", "receipt")))
    return World(
        own=own,
        own_after=draw(st.sampled_from(("/decl", "/decl", None))) if racing == "own" else own,
        receipt=receipt,
        receipt_after=draw(
            st.sampled_from(((), ("/rcpt",), ("/decl",)) if receipt != () else (("/rcpt",),)).filter(
                lambda r: r != receipt
            )
        )
        if racing == "receipt"
        else receipt,
        floor=draw(st.sampled_from(("0.22.0", "0.22.0", "0.23.0", "missing", "unavailable"))),
        locator=locator,
        paths=paths,
        installs=tuple(sorted(installed.items())),
    )

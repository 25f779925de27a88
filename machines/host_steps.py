"""The host's step memo: the letters whose step is a function of one session's view.

Most of the host's explored steps repeat a step met before on another state: the same session,
in the same view, typing a line, ending its turn, refused a letter by a guard of the host's own,
or taking its part of a tick or an advance, while the other sessions, which its step does not
read, differ. The search fires such a step once per view (and letter, and control state) and
takes it from this memo after that (``machines/frame.py``'s ``StepMemo``): at the default bounds
it fires about one step in ten.

Which steps, and why each is a function of that view alone (a step of the host chart, model/host.py)
    * A guard rejection (``GUARD_REJECTIONS``): the host chart's own guards
      (``session_is_not_in_turn``, ``turn_budget_is_spent``, ``reminders_are_at_their_limit``)
      read the named session alone (its phase, its action count, its reminders), and a rejection
      changes nothing (HOST-IF-4): the snapshot reached is the one left, and the output is the
      error and every session's summary (``summary``), which the memo works out from the views.
      So a letter's rejection is remembered for its named session's view; a letter that was not
      rejected there is fired (a send then reads its recipient too).
    * ``user_input`` and ``end_turn``: ``book_typed_line`` and ``book_turn_end`` change the
      named session alone (its pending mail; its idle half's ``turn_finished`` and its phase),
      and then ``_emit`` syncs each session's held count with its idle half. Every stored
      snapshot was synced by the step that reached it, so the sync changes no other session.
      The records are the named session's.
    * ``tick`` and ``advance``, each session's part: ``book_tick`` decides each idle session's
      wake from its own pending mail and gate, and ``book_time`` moves each session's delivery,
      idle half and reminders. A part reaches another session only through a receipt (its line
      goes to the message's sender) or an idle answer (its requester's idle half takes it), so
      a step whose every record belongs to one session (``OWN_RECORDS``) is each session's own
      part, one after another in config order: the parts are remembered by each session's
      position and view, and a step is taken from the memo when each session's part is known.

    The snapshot reached is then the sessions' new views, ordered as ``store`` orders them
    (``host.least_of``), from each view as ``store`` sees it: named forward (every stored view
    is) and, with three sessions, mirrored, which a snapshot does not keep: the memo keeps each
    view's mirrored name from the steps it fired, and fires a step whose view it never saw so.
    The output's summary is worked out from the views.

What the argument leans on besides (each true of every stored snapshot, and each checked by the
audit below):
    * ``load`` sets the host's clock and every part's to 0, so the clock a step reads is the same
      from every state; and it keeps each session's reminders in its own view, so the host's
      list of reminders holds, for a session, only that session's.
    * A notice's line names its target through the host's ``subscription_targets``, built by
      ``load`` from every session's outstanding subscriptions; a subscription id is one
      session's alone (the ids are numbered across the sessions, ``_numbered``), so the lookup
      reads only the requester's own view.
    * ``book_time`` writes every session's receipts before any session's idle output: its
      records are in config order by session only because a step with a receipt is fired.
    * The initial snapshot is synced, and so is one a step leaves with an error (``store`` gives
      back the snapshot loaded).

An option changes no reasoning above (each is read inside the named session's parts, or by
``_emit``'s sync, which a stored snapshot has already run), and the memo lives for one search.

Exactness (``tests/test_host_steps.py``): an exploration finds with the memo what it finds
without it (states, transitions, coverage with every step's output, violations and lassos),
under every option, with the hand and reminders, and with three sessions; and with ``audit`` on,
every step the memo gives is fired as well and compared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, cast

from inboxspec.machines.frame import Action, Bounds, TakeStep
from inboxspec.machines.host import GUARD_REJECTIONS, SeenView, SessionView, Snapshot, least_of, seen

# The events whose accepted step changes the named session alone (see above).
LOCAL_EVENTS = frozenset({"user_input", "end_turn"})

# What the memo keeps per (letter, control state, named view): a ``Rejection``, a ``LocalStep``, or
# None: fire it. Per (tick or advance, control state, position, view): a ``LocalStep``, that
# session's part of the step.


class Rejection(NamedTuple):
    """A letter that a guard of the host's own rejects in the named session's view."""

    transition: Any  # the chart's transition fired (the rejecting one)
    error: str  # its error code


class LocalStep(NamedTuple):
    """A step that changes one session alone: a local letter's, or one session's part of a tick or
    an advance."""

    transition: Any  # the chart's transition fired
    reached: tuple[SeenView, ...]  # the session's new view as ``store`` saw it, in each family
    records: list[dict[str, Any]]  # the session's records


# The events whose step is each session's own part, one after another (see above), and the
# field naming the session each of their records belongs to: a step with a record of any other
# type (a receipt, whose line goes to the message's sender; an idle answer, which its requester's
# idle half takes) reaches across sessions, and is fired.
PER_SESSION_EVENTS = frozenset({"tick", "advance"})
OWN_RECORDS = {"refusal": "session", "wake": "session", "line": "to"}

# How the memo takes each letter.
_FIRED, _NAMED, _PER_SESSION = 0, 1, 2

_UNSEEN: Any = object()  # a key the memo has not met (None is a key it met and fires)


class StepMemoMismatch(AssertionError):
    """With ``audit`` on, a step the memo gave differs from the step fired."""


def summary(view: SessionView) -> dict[str, Any]:
    """One session's entry in a step's output ``sessions``.

    WARNING: the host chart's ``_state`` (model/host.py) writes the same five fields from a
    session's data; tests/test_host_steps.py compares every output the memo gives with the
    chart's."""
    return {"phase": view.phase, "pending": len(view.pending), "shown": view.shown,
            "held": len(view.delivery.held), "streak": view.gate.streak}


class HostStepMemo:
    """The memo of one search (see the module docstring)."""

    audit = False  # fire every step the memo gives too, and compare (the tests turn it on)

    def __init__(self, data: Any, bounds: Bounds, actions: Sequence[Action], take: TakeStep) -> None:
        self._data = data
        self._take = take
        self._addresses: tuple[str, ...] = tuple(bounds["addresses"])
        # Per letter: how the memo takes it, the position of the session it names (0 for none), and
        # whether its accepted step is local.
        self._letters: list[tuple[int, int, bool]] = [
            (_NAMED, self._addresses.index(a.kwargs["session"]), a.event in LOCAL_EVENTS)
            if "session" in a.kwargs
            else (_PER_SESSION if a.event in PER_SESSION_EVENTS else _FIRED, 0, False)
            for a in actions]
        # WARNING: every table here is keyed by ``id`` of the views it speaks of, not by the views
        # (a view's hash is a Python-level call, which the memo's lookups made most of the host's
        # search), and every view whose id is in a key is kept in ``_alive`` for the memo's life:
        # an object's id is another's only once the first is freed, so a key found names the very
        # view it was made for. Views equal but not one object are looked up apart, as two views
        # would be (``HostExplorer`` gives an equal view as one object, ``_seen_view``).
        # tests/test_host_steps.py audits every step the memo gives.
        self._alive: list[SessionView] = []
        self._known: dict[tuple[Any, ...], Rejection | LocalStep | None] = {}
        self._summaries: dict[int, dict[str, Any]] = {}
        # Each stored view as ``store`` sees it, per family: named forward (its ``_key`` worked out
        # here) and, with three sessions, mirrored (met in a step fired: else that step is fired).
        self._forward: dict[int, SeenView] = {}
        self._mirrored: dict[int, SeenView] = {}
        # The snapshots the memo gave, by their control state and their views' ids (each snapshot
        # keeps its views): a snapshot given again is the same object, whose hash and counts
        # (``Snapshot.in_flight``) are worked out once.
        self._snapshots: dict[tuple[Any, ...], Snapshot] = {}
        self._families = 1 if len(self._addresses) == 2 else 2
        # The last state a rejection was given from, and its output's ``sessions``.
        self._shown_pre: Any = None
        self._shown_sessions: dict[str, Any] = {}
        self.steps_given = 0  # the steps taken from the memo, not fired (the tests read it)

    def step(self, index: int, pre: Snapshot, fire: Callable[[Any], Any]) -> tuple[Any, Any, Any]:
        how, position, local = self._letters[index]
        if how == _FIRED:
            return self._take(pre, fire)
        given_before = self.steps_given
        if how == _NAMED:
            given = self._named(index, pre, fire, position, local)
        else:
            given = self._per_session(index, pre, fire)
        if given is None:
            return self._take(pre, fire)
        if self.audit and self.steps_given != given_before:  # a step the memo gave, not one it fired
            fired = self._take(pre, fire)
            if fired[0] is not given[0] or fired[1] != given[1] or fired[2] != given[2]:
                raise StepMemoMismatch(f"letter {index} from {pre}: fired {fired}, the memo gave {given}")
        return given

    def _fired(self, pre: Snapshot, fire: Callable[[Any], Any]) -> tuple[Any, Any, Any]:
        """The step fired; each view ``store`` saw, named mirrored, kept (three sessions)."""
        taken = self._take(pre, fire)
        if self._families == 2 and "error" not in taken[2]:
            forward, mirrored = self._data.seen_families
            for named, other in zip(forward, mirrored, strict=True):
                if id(named[0]) not in self._mirrored:
                    self._alive.append(named[0])
                self._mirrored[id(named[0])] = other
        return taken

    def _named(self, index: int, pre: Snapshot, fire: Callable[[Any], Any], position: int,
               local: bool) -> tuple[Any, Any, Any] | None:
        """A letter naming a session: remembered by that session's view."""
        view = pre.sessions[position]
        key = (index, pre[0], id(view))
        known = self._known.get(key, _UNSEEN)
        if known is _UNSEEN:  # not met: fire it and remember what it was
            self._alive.append(view)
            fired, _post, output = taken = self._fired(pre, fire)
            error = output.get("error")
            if error is not None:
                self._known[key] = Rejection(fired, error) if error in GUARD_REJECTIONS else None
            elif local:
                self._known[key] = LocalStep(fired, self._seen_at(position), output["events"])
            else:
                self._known[key] = None
            return taken
        if known is None:
            return None
        if type(known) is Rejection:
            fired, error = known
            if pre is not self._shown_pre:  # a state's letters are taken one after another
                self._shown_pre, self._shown_sessions = pre, self._sessions(pre.sessions)
            self.steps_given += 1
            return fired, pre, {"error": error, "sessions": self._shown_sessions}
        fired, named, records = known
        entries = [named if p == position else self._seen_of(view) for p, view in enumerate(pre.sessions)]
        return self._reached(fired, entries, records)

    def _per_session(self, index: int, pre: Snapshot, fire: Callable[[Any], Any]
                     ) -> tuple[Any, Any, Any] | None:
        """``tick`` or ``advance``: each session's part remembered by its position and view, from
        steps that reach across no sessions."""
        control, known = pre[0], self._known
        parts = [known.get((index, control, position, id(view)))
                 for position, view in enumerate(pre.sessions)]
        if None in parts:  # some session's part not met: fire it and remember each session's part
            fired, _post, output = taken = self._fired(pre, fire)
            events = output["events"]
            owners = [record.get(OWN_RECORDS.get(record["type"], "")) for record in events]
            if None in owners:
                return taken
            for position, (view, address) in enumerate(zip(pre.sessions, self._addresses, strict=True)):
                own = [record for record, owner in zip(events, owners, strict=True) if owner == address]
                self._alive.append(view)
                known[(index, control, position, id(view))] = LocalStep(fired, self._seen_at(position), own)
            return taken
        local = cast("list[LocalStep]", parts)
        fired = local[0].transition
        if any(part.transition is not fired for part in local):
            return None
        records = [record for part in local for record in part.records]
        return self._reached(fired, [part.reached for part in local], records)

    def _seen_at(self, position: int) -> tuple[SeenView, ...]:
        """The view at ``position`` that the step just fired reached, in each family ``store`` saw."""
        return tuple(family[position] for family in self._data.seen_families)

    def _seen_of(self, view: SessionView) -> tuple[SeenView, ...] | None:
        """A stored view as ``store`` sees it (``_seen_view``), in each family: named forward (a stored
        view is named forward from its own position) with its key and whether it holds an id, and
        mirrored, as met in a step fired (None: not met)."""
        forward = self._forward.get(id(view))
        if forward is None:
            self._alive.append(view)
            forward = self._forward[id(view)] = seen(view)
        if self._families == 1:
            return (forward,)
        mirrored = self._mirrored.get(id(view))
        return None if mirrored is None else (forward, mirrored)

    def _reached(self, fired: Any, entries: Sequence[tuple[SeenView, ...] | None],
                 records: list[dict[str, Any]]) -> tuple[Any, Any, Any] | None:
        """The step to the sessions' new views (in chart order, each as ``store`` sees it), with these
        records; None when a view's mirrored name was never seen (fire it then)."""
        if None in entries:
            return None
        present = cast("Sequence[tuple[SeenView, ...]]", entries)
        families = [[entry[family] for entry in present] for family in range(self._families)]
        sessions, _positions = least_of(self._data, families)
        output = {"events": records, "sessions": self._sessions([entry[0][0] for entry in present])}
        self.steps_given += 1
        key = (fired.target, *map(id, sessions))
        reached = self._snapshots.get(key)
        if reached is None:
            reached = self._snapshots[key] = Snapshot(fired.target, sessions)
        return fired, reached, output

    def _sessions(self, views: Sequence[SessionView]) -> dict[str, Any]:
        """The output's ``sessions``: each session's summary, by address, in config order."""
        summaries = self._summaries
        shown = {}
        for address, view in zip(self._addresses, views, strict=True):
            entry = summaries.get(id(view))
            if entry is None:
                self._alive.append(view)
                entry = summaries[id(view)] = summary(view)
            shown[address] = entry
        return shown


def step_memo(data: Any, bounds: Bounds, options: Mapping[str, bool], actions: Sequence[Action],
              take: TakeStep) -> HostStepMemo:
    """``HostExplorer.step_memo``: a memo for one search."""
    return HostStepMemo(data, bounds, actions, take)

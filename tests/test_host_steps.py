"""The host's step memo (``machines/host_steps.py``) is exact: a search finds with it what it finds
firing every step, and every step it gives is the step fired (``audit``).

The configurations reach every way the memo takes a letter: rejections by each of the host's own
guards (``not_in_turn``, ``turn_limit``, ``reminder_limit``), typed lines and turn ends, ticks that
wake and refuse, and advances with and without receipts and idle answers (subscriptions on), under
every option, with the hand's letters (named by a session, never remembered), and with three
sessions, whose order reads the views named mirrored. ``inboxspec check`` explores the default
bounds with it and compares the manifest's counts and the findings' lassos; a benchmark compares
its speed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from inboxspec.checker.explore import ExplorationTooLarge, explore
from inboxspec.machines import host_steps
from inboxspec.machines.host import HostExplorer, SessionView
from tests.exploration_found import found

CONFIGURATIONS = [
    ({"forgeries": "0"}, {}),  # subscriptions: idle answers, notices, lassos
    ({"subscriptions": "0"}, {}),  # forgeries, HOST-F1's lasso
    ({"subscriptions": "0"}, {"stamp_true_sender": True}),
    ({"forgeries": "0"}, {"pending_counts_as_held": True}),  # the held sync after local steps
    ({"subscriptions": "0", "forgeries": "0"}, {"harness_lines_as_agent_mail": True}),
    ({"subscriptions": "0", "forgeries": "0"}, {"harness_lines_at_next_turn": True}),
    ({"hand": "1", "box_cap": "0", "forgeries": "0", "subscriptions": "0"}, {}),
    ({"reminders": "1", "box_cap": "0", "forgeries": "0", "subscriptions": "0"}, {}),  # reminder_limit
    ({"turn_action_limit": "2", "subscriptions": "0", "forgeries": "0", "box_cap": "0"}, {}),
    ({"sessions": "3", "subscriptions": "0", "forgeries": "0", "box_cap": "0"}, {}),
]


@pytest.fixture
def audited(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[host_steps.HostStepMemo]]:
    """The memo audits every step it gives; yields the memos the searches made."""
    memos: list[host_steps.HostStepMemo] = []
    monkeypatch.setattr(host_steps.HostStepMemo, "audit", True)
    make = host_steps.step_memo

    def kept(data: Any, bounds: Any, options: Any, actions: Any, take: Any) -> host_steps.HostStepMemo:
        memo = make(data, bounds, options, actions, take)
        memos.append(memo)
        return memo

    monkeypatch.setattr(host_steps, "step_memo", kept)
    yield memos


@pytest.mark.parametrize(("bounds", "options"), CONFIGURATIONS,
                         ids=[",".join([*(f"{k}={v}" for k, v in b.items()), *o]) for b, o in CONFIGURATIONS])
def test_every_step_the_memo_gives_is_the_step_fired(
        bounds: dict[str, str], options: dict[str, bool], audited: list[host_steps.HostStepMemo]) -> None:
    # The audit compares each step given with the step fired (its transition, the snapshot reached
    # and the output), so the search takes the same steps as one that fires them all: it finds the
    # same (the next test shows that once, end to end). A memo that gave no step would pass the
    # audit, so each configuration also counts the steps given: 39% of them with the hand's letters
    # (which are fired), 75% to 92% in the others.
    explored = explore("host", bounds, options)
    (memo,) = audited
    assert memo.steps_given > explored.transitions / 3


def test_the_memo_finds_what_firing_every_step_finds_firing_few(monkeypatch: pytest.MonkeyPatch) -> None:
    bounds = {"forgeries": "0"}  # subscriptions: idle answers, notices, lassos
    with monkeypatch.context() as patched:
        patched.setattr(HostExplorer, "step_memo", lambda self, *args: None)
        without = explore("host", bounds)
    fired = [0]
    make = host_steps.step_memo

    def counting(data: Any, bounds: Any, options: Any, actions: Any, take: Any) -> host_steps.HostStepMemo:
        def taken(pre: Any, fire: Any) -> Any:
            fired[0] += 1
            return take(pre, fire)

        return make(data, bounds, options, actions, taken)

    monkeypatch.setattr(host_steps, "step_memo", counting)
    with_memo = explore("host", bounds)
    assert found(with_memo) == found(without)
    # A memo that stopped giving steps would leave every result the same, and the host slower.
    assert fired[0] < with_memo.transitions / 3


@pytest.mark.parametrize("wrong", ["send_message", "subscribe"])
def test_the_audit_catches_a_letter_taken_as_local_that_reaches_another_session(
        wrong: str, audited: list[host_steps.HostStepMemo], monkeypatch: pytest.MonkeyPatch) -> None:
    # A send changes its recipient's delivery and a subscription its target's idle half: remembered
    # by the sender's view alone, the step given would keep the recipient as it was.
    monkeypatch.setattr(host_steps, "LOCAL_EVENTS", host_steps.LOCAL_EVENTS | {wrong})
    with pytest.raises(host_steps.StepMemoMismatch):
        explore("host", {"forgeries": "0"})


def test_the_audit_catches_an_advance_whose_idle_answer_was_taken_as_its_targets_own(
        audited: list[host_steps.HostStepMemo], monkeypatch: pytest.MonkeyPatch) -> None:
    # An idle answer goes to its requester's idle half: an advance with one reaches across sessions,
    # and the requester's new view is no function of its own view alone.
    monkeypatch.setitem(host_steps.OWN_RECORDS, "answer", "from")
    with pytest.raises(host_steps.StepMemoMismatch):
        explore("host", {"forgeries": "0"})


def test_the_audit_catches_a_summary_that_differs_from_the_charts(
        audited: list[host_steps.HostStepMemo], monkeypatch: pytest.MonkeyPatch) -> None:
    summary = host_steps.summary

    def off_by_one(view: Any) -> dict[str, Any]:
        return {**summary(view), "shown": view.shown + 1}

    monkeypatch.setattr(host_steps, "summary", off_by_one)
    with pytest.raises(host_steps.StepMemoMismatch):
        explore("host", {"forgeries": "0", "subscriptions": "0"})


def test_the_audit_catches_three_sessions_ordered_without_their_mirrored_names(
        audited: list[host_steps.HostStepMemo], monkeypatch: pytest.MonkeyPatch) -> None:
    # With three sessions a reflection can give the least sequence of views, which store finds from
    # the views named mirrored: ordered by the forward names alone, some steps reach another snapshot.
    seen_of = host_steps.HostStepMemo._seen_of

    def forward_twice(self: host_steps.HostStepMemo, view: Any) -> Any:
        seen = seen_of(self, view)
        return None if seen is None else (seen[0], seen[0])

    monkeypatch.setattr(host_steps.HostStepMemo, "_seen_of", forward_twice)
    with pytest.raises(host_steps.StepMemoMismatch):
        explore("host", THREE_WITH_MAIL, max_states=3_000)


# Three sessions whose views name each other (peer mail, held messages, receipts), so that a view
# named mirrored differs from it: the least such exploration is some 60,000 states, so its first
# 3,000 are audited.
THREE_WITH_MAIL = {"sessions": "3", "subscriptions": "0", "forgeries": "0", "max_streak": "0"}


def test_three_sessions_with_mail_are_audited_to_a_bound(audited: list[host_steps.HostStepMemo]) -> None:
    with pytest.raises(ExplorationTooLarge):
        explore("host", THREE_WITH_MAIL, max_states=3_000)
    (memo,) = audited
    assert memo.steps_given > 10_000  # 16,689 today


def test_a_view_the_memo_has_met_never_lends_its_id_to_another() -> None:
    """The memo keys its tables by ``id`` of a view and keeps each such view alive (``_alive``): a
    freed view's id is soon another's in CPython, and a table keyed by it alone would give the
    first view's entry for the second. Here views are made, looked up once and dropped, one after
    another; each must get its own summary."""
    explorer = HostExplorer()
    bounds = explorer.parse_bounds({})
    fields: list[Any] = list(explorer.initial(bounds).sessions[0])

    def never_taken(pre: Any, fire: Any) -> tuple[Any, Any, Any]:
        raise AssertionError("no step is taken here")

    memo = host_steps.HostStepMemo(None, bounds, [], never_taken)
    ids = set()
    for shown in range(200):
        fields[SessionView._fields.index("shown")] = shown
        view = SessionView(*fields)  # a new view each turn, dropped after it
        ids.add(id(view))
        summaries = memo._sessions([view, view])
        assert summaries["s1"]["shown"] == summaries["s2"]["shown"] == shown
        del view
    assert len(ids) < 200 or len(memo._alive) == 200  # ids are reused, or each view is kept


def test_a_search_makes_each_distinct_view_once() -> None:
    """The memo meets an equal view as one object (``host._interned``): else the views the search
    makes at each position, and renumbered, would be remembered apart, and it fired about a third
    more steps (127,803 against 99,298 at the default bounds)."""
    made: list[Any] = []
    original = host_steps.step_memo

    def kept(data: Any, bounds: Any, options: Any, actions: Any, take: Any) -> host_steps.HostStepMemo:
        made.append(data)
        return original(data, bounds, options, actions, take)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(host_steps, "step_memo", kept)
        explore("host", {"forgeries": "0"})
    (data,) = made
    views = [entry[0] for family in data.views for known in family for entry in known.values()]
    views += list(data.renumbered.values())
    assert len(views) > len(data.interned) > 100
    assert len({id(view) for view in views}) == len(data.interned)

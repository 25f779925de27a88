"""The host explorer description's canonical form is exact (machines/host.py, Canonical form),
and so is every cache it keeps.

On the states of a bounded breadth-first walk: every rejected step, stored in
full, is the snapshot loaded (so ``store`` may return it); and the canonical
snapshot does not depend on the order the chart keeps its sessions in, while a
broken canonical form (absolute names, no reordering) does. ``load`` writes what
a plain load writes, whatever steps ran before it; a step that a guard of the
host's own rejects leaves the data as loaded (so the next ``load`` may keep it);
the views ``store`` keeps by session data are the views worked out afresh; and
the properties read the records of the output they are given; and the letters
pickle, as a worker process sends them back.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import itertools
import pickle
import random
import re
from typing import Any

import pytest

from inboxspec.checker.compiled import CompiledChart
from inboxspec.machines import host
from inboxspec.model.host import InFlight, Mail, Parts, Reminder, SessionData
from inboxspec.model.idle_subscriptions import Outstanding, Subscriber
from inboxspec.model.peer_delivery import Entry

LIMIT = 3000


def _walk(bounds: dict[str, str], limit: int = LIMIT,
          options: dict[str, bool] | None = None) -> tuple[Any, Any, list[Any], list[Any], list[Any]]:
    explorer = host.HostExplorer()
    parsed = explorer.parse_bounds(bounds)
    chart = CompiledChart(host.MACHINE.chart)
    data = chart.blank()
    explorer.constants(data, parsed, options or {})
    actions = list(explorer.alphabet(parsed))
    fire = [chart.bind(a.event, a.kwargs) for a in actions]
    start = explorer.initial(parsed)
    seen = {start}
    frontier = collections.deque([start])
    while frontier and len(seen) < limit:
        pre = frontier.popleft()
        for action, letter in zip(actions, fire, strict=True):
            if not action.offered(pre):
                continue
            explorer.load(data, pre)
            post = explorer.store(data, letter[pre[0]](data).target)
            if post not in seen:
                seen.add(post)
                frontier.append(post)
    return explorer, data, actions, fire, sorted(seen, key=repr)


def test_a_rejected_step_changes_nothing() -> None:
    explorer, data, actions, fire, states = _walk({"reminders": "1", "hand": "1"})
    rejected = 0
    for pre in states:
        for action, letter in zip(actions, fire, strict=True):
            explorer.load(data, pre)
            fired = letter[pre[0]](data)
            if "error" in data.output:
                rejected += 1
                assert explorer.canonical(data, fired.target)[0] == pre, (action.label, pre)
    assert rejected > 0


def _swapped(data: Any) -> None:
    """The same host with the chart's two sessions exchanged (their addresses renamed throughout)."""
    a, b = data.addresses
    names = {a: b, b: a}
    sessions = {names[k]: v for k, v in data.sessions.items()}
    for s in sessions.values():
        s.pending = [m._replace(sender=names.get(m.sender, m.sender), recipient=names[m.recipient],
                                origin=None if m.origin is None else names[m.origin]) for m in s.pending]
        s.in_flight = {t: m._replace(origin=names[m.origin]) for t, m in s.in_flight.items()}
        s.delivery.held = [e._replace(sender=names.get(e.sender, e.sender)) for e in s.delivery.held]
        s.idle.outstanding = tuple(o._replace(target=names[o.target], label=names.get(o.label, o.label))
                                   for o in s.idle.outstanding)
        s.idle.subscribers = tuple(r._replace(requester=names[r.requester]) for r in s.idle.subscribers)
    data.sessions = sessions
    data.reminders = [r._replace(session=names[r.session]) for r in data.reminders]


def _absolute_store(explorer: Any, data: Any) -> Any:
    """A broken canonical form: the views in config order, other sessions named absolutely."""
    return tuple(explorer._view(data, a, {x: x for x in data.addresses}) for a in data.addresses)


def _symmetry_counterexamples(store: Any) -> int:
    explorer, data, _actions, _fire, states = _walk({})
    differing = 0
    for pre in states:
        explorer.load(data, pre)
        before = store(explorer, data)
        _swapped(data)
        if store(explorer, data) != before:
            differing += 1
    return differing


def test_the_canonical_form_does_not_depend_on_the_sessions_order() -> None:
    assert _symmetry_counterexamples(lambda explorer, data: explorer.canonical(data, "running")[0]) == 0


def test_a_canonical_form_without_the_symmetry_is_caught() -> None:
    assert _symmetry_counterexamples(_absolute_store) > 0


# -- the caches of load and store -------------------------------------------------------------


def _plain_load(explorer: Any, data: Any, snapshot: Any) -> None:
    """``load`` as written plainly, without caches: every session built from its view afresh."""
    parts: Parts = data.parts
    data.now_ms = 0
    data.records = []
    data.reminders = []
    data.sessions = {}
    targets: dict[int, str] = {}
    top = 0
    for position, (address, view) in enumerate(zip(data.addresses, snapshot.sessions, strict=True)):
        names = data.absolute[position]
        data.reminders.extend(Reminder(address, r.due_in, r.text) for r in view.reminders)
        age = view.gate.age
        gate = parts.gate.holding(parts.gate.merged(
            {"streak": view.gate.streak, "now_ms": 0, "last_self_wake_ms": None if age is None else -age,
             "output": {}}))
        held = view.delivery.held
        delivery = parts.delivery.holding(parts.delivery.merged({
            "setting": view.delivery.setting, "box": view.delivery.box, "now_ms": 0, "output": {},
            "held": [Entry(h.ticket, names[h.sender], None, "absent", h.cause, None) for h in held],
            "next_ticket": len(held) + 1}))
        idle_view = view.idle
        outstanding = tuple(Outstanding(o.subscription, names[o.target], names.get(o.label, o.label), -o.age)
                            for o in idle_view.outstanding)
        idle = parts.idle.holding(parts.idle.merged({
            "now_ms": 0, "output": {}, "fire_at": idle_view.fire_in, "held": idle_view.held,
            "outstanding": outstanding,
            "subscribers": tuple(Subscriber(names[r.requester], r.subscription, -r.age, r.parity)
                                 for r in idle_view.subscribers),
            "finished_at": 0 if idle_view.finished else None, "phase": idle_view.state}))
        for row in outstanding:
            targets[row.subscription] = row.target
            top = max(top, row.subscription)
        for subscriber in idle_view.subscribers:
            top = max(top, subscriber.subscription)
        data.sessions[address] = SessionData(
            gate, view.gate.state, delivery, view.delivery.state, idle, idle_view.state,
            pending=[Mail(m.kind, names[m.sender], address, m.text, m.channel,
                          None if m.origin is None else names[m.origin]) for m in view.pending],
            shown=[host.LINE_TEXT] * view.shown, phase=view.phase, actions=view.actions,
            told_held=view.told_held, in_flight={h.ticket: InFlight(names[h.origin], h.text) for h in held})
    data.subscription_targets = targets
    data.next_subscription = top + 1


def _dump(data: Any) -> dict[str, Any]:
    """All that a step can read of the data, records and the host's output aside, as plain values
    (copies, so that later steps do not change them), with the types of the objects."""
    sessions = {}
    for address, s in data.sessions.items():
        fields = {f.name: getattr(s, f.name) for f in dataclasses.fields(SessionData)}
        sessions[address] = copy.deepcopy({
            **{k: v for k, v in fields.items() if k not in ("gate", "delivery", "idle")},
            **{part: (type(fields[part]), dict(vars(fields[part]))) for part in ("gate", "delivery", "idle")},
            "type": type(s), "attributes": sorted(vars(s)),
        })
    return {"sessions": sessions, "order": list(data.sessions), "now_ms": data.now_ms,
            "reminders": list(data.reminders), "targets": dict(data.subscription_targets),
            "order_of_targets": list(data.subscription_targets), "next": data.next_subscription}


def test_load_writes_what_a_plain_load_writes_after_any_step() -> None:
    # Every letter from every state of the walk: its step changes the data in place, and the next
    # load (of the same snapshot, or of the next) must write what a plain load does.
    explorer, data, actions, fire, states = _walk({"reminders": "1", "hand": "1", "subscriptions": "2"}, 600)
    plain = copy.copy(data)
    compared = 0
    for pre in states:
        _plain_load(explorer, plain, pre)
        expected = _dump(plain)
        for action, letter in zip(actions, fire, strict=True):
            explorer.load(data, pre)
            assert _dump(data) == expected, (action.label, pre)
            compared += 1
            explorer.store(data, letter[pre[0]](data).target)
    assert compared > 5_000


@pytest.mark.parametrize("option", [None, *host.HostExplorer.options])
def test_only_a_tick_wakes_a_session(option: str | None) -> None:
    # What lets the forever-properties ask their some_step of ticks alone (``marked_letters``):
    # a step of any other letter, from every state of the walk, writes no wake record, under
    # the seed's defaults and with each option on.
    explorer, data, actions, fire, states = _walk({"reminders": "1", "hand": "1", "subscriptions": "2"}, 600,
                                                  {option: True} if option else None)
    (marked,) = {prop.marked_letters for prop in host.FOREVER}
    woken_by: collections.Counter[str] = collections.Counter()
    for pre in states:
        for action, letter in zip(actions, fire, strict=True):
            explorer.load(data, pre)
            letter[pre[0]](data)
            woken_by[action.event] += sum(1 for r in data.output.get("events", ()) if r["type"] == "wake")
    assert woken_by["tick"] > 100
    assert {event for event, wakes in woken_by.items() if wakes} == {"tick"}
    assert {a.event for a in actions if marked(a)} == {"tick"}


def test_a_guard_rejection_leaves_the_data_as_loaded() -> None:
    # What lets ``load`` keep the data after such a step; a rejection by a part (peer delivery's
    # not_held) changes a part's output, and this comparison sees that.
    explorer, data, actions, fire, states = _walk({"reminders": "1", "hand": "1"}, 600)
    codes: collections.Counter[str] = collections.Counter()
    changed_by_parts = 0
    for pre in states:
        for action, letter in zip(actions, fire, strict=True):
            data.unchanged = False
            explorer.load(data, pre)
            before = _dump(data)
            letter[pre[0]](data)
            if "error" not in data.output:
                continue
            code = data.output["error"]
            codes[code] += 1
            if code in host.GUARD_REJECTIONS:
                assert _dump(data) == before, (action.label, pre)
            else:
                changed_by_parts += _dump(data) != before
    assert set(codes) >= host.GUARD_REJECTIONS | {"not_held"}
    assert changed_by_parts > 0


def test_a_rejection_stored_after_other_steps_since_the_load_keeps_nothing() -> None:
    # A tool that fires on without loading again: the data is no longer the snapshot's. Load
    # gives the sessions at positions 0 and 1 the addresses s1 and s2.
    explorer, data, actions, fire, states = _walk({}, 300)
    letters = {a.label: letter for a, letter in zip(actions, fire, strict=True)}
    pre = next(s for s in states if s.sessions[0].phase == "idle"
               and s.sessions[1].phase == "turn" and not s.sessions[1].actions)
    plain = copy.copy(data)
    _plain_load(explorer, plain, pre)
    explorer.load(data, pre)
    for label in ("end_turn s1", "send s2->s1", "end_turn s1"):
        explorer.store(data, letters[label][pre[0]](data).target)
    assert data.output.get("error") in host.GUARD_REJECTIONS
    explorer.load(data, pre)
    assert _dump(data) == _dump(plain)


def _canonical_afresh(explorer: Any, data: Any) -> Any:
    kept = data.views, data.numbered, data.renumbered
    data.views, data.numbered, data.renumbered = [[{} for _ in data.addresses] for _ in range(2)], {}, {}
    try:
        return explorer.canonical(data, "running")
    finally:
        data.views, data.numbered, data.renumbered = kept


def _views_kept_wrongly(bounds: dict[str, str], limit: int = LIMIT) -> int:
    explorer, data, _actions, fire, states = _walk(bounds, limit)
    wrong = 0
    for pre in states:
        for letter in fire:
            explorer.load(data, pre)
            letter[pre[0]](data)
            wrong += explorer.canonical(data, "running") != _canonical_afresh(explorer, data)
    return wrong


@pytest.mark.parametrize(("bounds", "limit"), [({"reminders": "1", "hand": "1", "subscriptions": "2"}, 1500),
                                               ({"sessions": "3"}, 500)])
def test_the_views_kept_by_session_data_are_the_views_worked_out_afresh(bounds: dict[str, str],
                                                                         limit: int) -> None:
    assert _views_kept_wrongly(bounds, limit) == 0


def test_session_data_that_misses_a_field_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = host._session_data

    def without_reminders(data: Any, address: str) -> tuple[Any, ...]:
        # A plausible slip: the reminders are the host's, not the session's, and are left out.
        data.reminders, reminders = [], data.reminders
        try:
            return kept(data, address)
        finally:
            data.reminders = reminders

    monkeypatch.setattr(host, "_session_data", without_reminders)
    assert _views_kept_wrongly({"reminders": "1"}, limit=300) > 0


def test_records_are_read_from_the_output_asked_about() -> None:
    first = {"events": [{"type": "send", "n": 1}, {"type": "wake", "n": 2}, {"type": "send", "n": 3}]}
    second = {"events": [{"type": "send", "n": 4}]}
    assert [r["n"] for r in host._records(first, "send")] == [1, 3]
    assert [r["n"] for r in host._records(second, "send")] == [4]
    assert [r["n"] for r in host._records(second, "wake")] == []
    assert [r["n"] for r in host._records(first, "wake")] == [2]
    assert list(host._records(None, "send")) == [] and list(host._records({"error": "x"}, "send")) == []


def test_nothing_lost_counts_the_state_it_is_asked_about() -> None:
    # Each snapshot keeps its count in flight (``Snapshot.in_flight``): asked about steps from one
    # state and then another, in turns, ``_nothing_lost`` must count each step's own states; and a
    # message sent, or told a terminal receipt, once more than the step's output says is lost.
    explorer, data, _actions, fire, states = _walk({"reminders": "1", "hand": "1"}, 300)
    steps = []
    for pre in states:
        for letter in fire:
            explorer.load(data, pre)
            post = explorer.store(data, letter[pre[0]](data).target)
            steps.append((pre, post, data.output))
    turns = [step for pair in zip(steps, reversed(steps), strict=True) for step in pair]
    bounds = explorer.parse_bounds({"reminders": "1", "hand": "1"})
    assert all(host._nothing_lost(pre, post, out, bounds) for pre, post, out in turns)
    assert sum(a[0].in_flight != b[0].in_flight for a, b in itertools.pairwise(turns)) > 100
    doubled: collections.Counter[str] = collections.Counter()
    for pre, post, out in turns:
        for record in out.get("events", ()):
            kind = record["type"]
            if (kind == "send" and record["send_error"] is None) or (
                    kind == "receipt" and record["state"] in host.TERMINAL):
                assert not host._nothing_lost(pre, post, {**out, "events": [*out["events"], record]}, bounds)
                doubled[kind] += 1
            if kind == "send" and record["send_error"] is None:
                # The same message said to be refused at the station while the state holds it.
                refused = [{**r, "send_error": "queue_full"} if r is record else r for r in out["events"]]
                assert not host._nothing_lost(pre, post, {**out, "events": refused}, bounds)
    assert doubled["send"] > 10 and doubled["receipt"] > 10, doubled


def test_letters_travel_between_processes() -> None:
    # ``inboxspec check`` explores in worker processes, which send the traces back with their letters.
    _explorer, _data, actions, _fire, states = _walk({"hand": "1", "reminders": "1"}, 300)
    copies = pickle.loads(pickle.dumps(actions))
    assert [a.label for a in copies] == [a.label for a in actions]
    assert any(a.when is not None for a in actions)
    assert all(c.offered(s) == a.offered(s) for s in states for a, c in zip(actions, copies, strict=True))


def test_the_largest_choice_of_each_bound_is_the_one_its_description_gives() -> None:
    """The Bounds section of the module's docstring says what each value of a choosing bound
    does ("1 adds", "2 lifts", "0 removes"); ``_LARGEST_CHOICE`` refuses past the largest."""
    doc = host.__doc__ or ""
    bounds = doc[doc.index("Bounds (``--bound NAME=VALUE``)"):doc.index("Coverage explorations")]
    for name, most in host._LARGEST_CHOICE.items():
        start = bounds.index(f"``{name}`` (")
        end = bounds.find("\n    ``", start + 1)
        paragraph = bounds[start:end if end >= 0 else None]
        described = [int(value) for value in re.findall(r"\b(\d) (?:adds|lifts|removes)\b", paragraph)]
        assert described and max(described) == most, (name, paragraph)


def test_subscription_ids_are_numbered_by_first_appearance_whatever_they_were() -> None:
    """``_numbered`` against the rule written out here: each id becomes the order of its first
    appearance over the views, outstanding rows before subscribers. Views whose ids already are
    so come back as they are (``_in_order_of_appearance``); the ids here are drawn to be so half
    the time, and to repeat, skip and run backwards the rest."""
    _explorer, data, _actions, _fire, states = _walk({"subscriptions": "2", "sessions": "3"}, 600)
    subscribed = sorted({v for s in states for v in s.sessions if v.subscribed}, key=repr)
    assert len(subscribed) > 10
    rng = random.Random(5)
    in_order = 0
    for _ in range(3000):
        views = [rng.choice(subscribed) for _ in range(rng.randint(1, 3))]
        counts = [len(v.subscription_ids) for v in views]
        if rng.random() < 0.5:
            drawn = [rng.randint(1, 4) for _ in range(sum(counts))]
        else:  # in order of appearance: each id new (the next) or one seen before
            drawn, following = [], 1
            for _ in range(sum(counts)):
                if following > 1 and rng.random() < 0.4:
                    drawn.append(rng.randrange(1, following))
                else:
                    drawn.append(following)
                    following += 1
        chunks, start = [], 0
        for count in counts:
            chunks.append(tuple(drawn[start:start + count]))
            start += count
        sessions = tuple(host._renumbered(v, ids) for v, ids in zip(views, chunks, strict=True))
        first: dict[int, int] = {}
        for subscription in drawn:
            first.setdefault(subscription, len(first) + 1)
        expected = tuple(host._renumbered(v, tuple(first[i] for i in ids))
                         for v, ids in zip(sessions, chunks, strict=True))
        assert host._numbered(data, sessions) == expected, chunks
        in_order += all(first[i] == i for i in drawn)
    assert 1000 < in_order < 2500

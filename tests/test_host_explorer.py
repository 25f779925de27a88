"""The host explorer description's canonical form is exact (machines/host.py, Canonical form).

On the states of a bounded breadth-first walk: every rejected step, stored in
full, is the snapshot loaded (so ``store`` may return it); and the canonical
snapshot does not depend on the order the chart keeps its sessions in, while a
broken canonical form (absolute names, no reordering) does.
"""

from __future__ import annotations

import collections
from typing import Any

from inboxspec.checker.compiled import CompiledChart
from inboxspec.machines import host

LIMIT = 3000


def _walk(bounds: dict[str, str]) -> tuple[Any, Any, list[Any], list[Any], list[Any]]:
    explorer = host.HostExplorer()
    parsed = explorer.parse_bounds(bounds)
    chart = CompiledChart(host.MACHINE.chart)
    data = chart.blank()
    explorer.constants(data, parsed, {})
    actions = list(explorer.alphabet(parsed))
    fire = [chart.bind(a.event, a.kwargs) for a in actions]
    start = explorer.initial(parsed)
    seen = {start}
    frontier = collections.deque([start])
    while frontier and len(seen) < LIMIT:
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
        s.in_flight = {t: (names[o], text) for t, (o, text) in s.in_flight.items()}
        s.delivery.held = [(e[0], names.get(e[1], e[1]), *e[2:]) for e in s.delivery.held]
        s.idle.outstanding = tuple(
            (o[0], names[o[1]], names.get(o[2], o[2]), o[3]) for o in s.idle.outstanding
        )
        s.idle.subscribers = tuple((names[r[0]], *r[1:]) for r in s.idle.subscribers)
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

"""Forever-properties checked on cycles of the explored graph, shown as lassos.

A :class:`~inboxspec.machines.frame.ForeverProperty` says that no execution
repeats some kind of step forever. In a finite explored graph an infinite
execution ends in a cycle, so the property fails exactly when a reachable cycle
exists whose every step is allowed (its letter in ``allowed_letters``, the step
satisfying ``every_step``) and one of whose steps is the repeated kind (also its
letter in ``marked_letters``, the step satisfying ``some_step``). The search is
the one TLC and Stateright use for such properties, in its simplest form:

1. the breadth-first exploration records, per property, the explored steps
   that are allowed (the allowed subgraph), marking those that are also of the
   repeated kind; properties with the same ``allowed_letters`` and
   ``every_step`` share one subgraph, each with its own mark bit on the steps;
2. an iterative Tarjan pass (no recursion, so no depth limit) splits the
   allowed subgraph into strongly connected components, once for all the
   properties that share it;
3. a component that contains a marked step with both ends inside it carries a
   bad cycle through every one of its states (strong connectivity closes one).

The lasso shown is the shortest prefix from the initial state to any state on
such a cycle (states are numbered in breadth-first discovery order, so the
lowest-numbered state of all bad components is one of the nearest, and the
breadth-first tree gives its shortest path), then a short loop from that state:
the shortest allowed path to a marked step, the marked step, and the shortest
allowed path back, all inside the component.

Self-loops
    The search does not record an allowed step from a state to itself that is
    marked for no property (most of the host's recorded steps were such: a
    rejected step leaves its state as it was). Leaving them out changes
    nothing here: such a step joins no two states, so the components are the
    same; the cycle it closes alone has no marked step, and a bad cycle through
    it stays bad without it, so the bad components are the same; and a shortest
    path never takes it, so neither are the lassos. A marked self-loop is
    recorded: it is a bad cycle by itself. ``tests/test_cycles.py`` compares the
    lassos of random graphs with and without their unmarked self-loops.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# One recorded step of an allowed subgraph: (target state number, letter index, marks). A
# property's lasso search is given a mask: the step is marked for it when ``marks & mask``
# (a bool is the mask 1's mark).
Edge = tuple[int, int, int]


@dataclass(frozen=True)
class LassoPath:
    """State numbers and letter indices of a lasso: ``prefix`` from the initial
    state to ``loop_start``, then ``loop`` back to ``loop_start``.

    ``prefix`` and ``loop`` are lists of (pre state, letter index, post state).
    """

    prefix: list[tuple[int, int, int]]
    loop: list[tuple[int, int, int]]

    @property
    def loop_start(self) -> int:
        return self.loop[0][0]


def strongly_connected_components(successors: Sequence[Sequence[Edge]]) -> list[int]:
    """Tarjan's algorithm, iteratively: the component number of each state.

    Components are numbered in the order Tarjan completes them. ``successors[s]``
    lists the edges leaving state ``s``.

    The depth-first path keeps, per state on it, an iterator over its edges: the inner ``for``
    runs through a state's edges to states already visited (most of them: the host's subgraph has
    about three edges a state, 384,993 over 124,508 states) without leaving the loop, and breaks out
    only to descend. A visited state is on Tarjan's stack exactly while it has no component yet, so
    no flag is kept for it.
    """
    count = len(successors)
    unvisited = -1
    index = [unvisited] * count
    low = [0] * count
    component = [unvisited] * count
    stack: list[int] = []
    next_index = 0
    components = 0
    for root in range(count):
        if index[root] != unvisited:
            continue
        index[root] = low[root] = next_index
        next_index += 1
        stack.append(root)
        path = [root]  # the depth-first path, and per state on it the iterator over its edges
        iterators = [iter(successors[root])]
        while iterators:
            state = path[-1]
            for target, _letter, _marks in iterators[-1]:
                if index[target] == unvisited:
                    index[target] = low[target] = next_index
                    next_index += 1
                    stack.append(target)
                    path.append(target)
                    iterators.append(iter(successors[target]))
                    break
                if component[target] == unvisited and index[target] < low[state]:  # on the stack
                    low[state] = index[target]
            else:  # every edge of ``state`` followed: it is done
                iterators.pop()
                path.pop()
                if path and low[state] < low[path[-1]]:
                    low[path[-1]] = low[state]
                if low[state] == index[state]:
                    while True:
                        member = stack.pop()
                        component[member] = components
                        if member == state:
                            break
                    components += 1
    return component


def find_lasso(successors: Sequence[Sequence[Edge]], tree: Sequence[tuple[int, int] | None],
               mask: int = 1) -> LassoPath | None:
    """A lasso through a bad cycle of the allowed subgraph (steps marked for ``mask``), or None
    when there is none.

    ``tree[s]`` is the breadth-first tree link of state ``s`` (its parent and the
    letter index of the step from it), None for the initial state; states are
    numbered in breadth-first discovery order.
    """
    return find_lassos(successors, tree, (mask,))[0]


def find_lassos(successors: Sequence[Sequence[Edge]], tree: Sequence[tuple[int, int] | None],
                masks: Sequence[int]) -> list[LassoPath | None]:
    """``find_lasso`` for each of ``masks`` (properties that share the allowed subgraph), on one
    components pass: the components depend on the subgraph alone, not on the marks."""
    component = strongly_connected_components(successors)
    marked = marks_inside_components(successors, component)
    return [_lasso(successors, tree, component, marked, mask) for mask in masks]


def marks_inside_components(successors: Sequence[Sequence[Edge]], component: Sequence[int]) -> dict[int, int]:
    """Per component, the union of the marks of the steps inside it (from a state of the component
    to a state of the same component), for the components that hold a marked step: one pass over
    the edges for every mask (the host's subgraph has 384,993 of them, and three masks)."""
    marked: dict[int, int] = {}
    for source, edges in enumerate(successors):
        inside = component[source]
        for target, _letter, marks in edges:
            if marks and component[target] == inside:
                marked[inside] = marked.get(inside, 0) | marks
    return marked


def _lasso(successors: Sequence[Sequence[Edge]], tree: Sequence[tuple[int, int] | None],
           component: Sequence[int], marked: Mapping[int, int], mask: int) -> LassoPath | None:
    bad_components = {inside for inside, marks in marked.items() if marks & mask}
    if not bad_components:
        return None
    start = next(s for s in range(len(successors)) if component[s] in bad_components)
    inside = component[start]

    def allowed(state: int) -> list[Edge]:
        return [e for e in successors[state] if component[e[0]] == inside]

    def shortest_inside(source: int, arrived: Callable[[int], bool]) -> list[tuple[int, int, int]]:
        """The shortest allowed path inside the component from ``source`` to a state
        for which ``arrived`` holds (the empty path when ``source`` is one)."""
        if arrived(source):
            return []
        link: dict[int, tuple[int, int]] = {source: (source, -1)}
        queue = collections.deque([source])
        while queue:
            state = queue.popleft()
            for target, letter, _marks in allowed(state):
                if target in link:
                    continue
                link[target] = (state, letter)
                if arrived(target):
                    path = []
                    node = target
                    while node != source:
                        previous, via = link[node]
                        path.append((previous, via, node))
                        node = previous
                    path.reverse()
                    return path
                queue.append(target)
        raise AssertionError("a strongly connected component is not connected")  # unreachable

    def has_marked_step(state: int) -> bool:
        return any(marks & mask for _target, _letter, marks in allowed(state))

    to_marked = shortest_inside(start, has_marked_step)
    marked_source = to_marked[-1][2] if to_marked else start
    target, letter, _ = next(e for e in allowed(marked_source) if e[2] & mask)
    back = shortest_inside(target, lambda state: state == start)
    prefix: list[tuple[int, int, int]] = []
    node = start
    while (link := tree[node]) is not None:
        previous, via = link
        prefix.append((previous, via, node))
        node = previous
    prefix.reverse()
    return LassoPath(prefix, [*to_marked, (marked_source, letter, target), *back])

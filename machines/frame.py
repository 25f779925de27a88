"""The machine frame: the one typed description of a machine that every tool reads.

A machine is its model chart (``model/``), its reference implementation
(``impl/``), its prose spec (``spec/``) and its cases
(``conformance/cases/<name>/``). Everything else that inboxspec does with a
machine (drive cases through the reference or the model, explore the chart,
check findings, refine, generate cases and spec sections, fuzz a port, answer
``start`` in the reference adapter) reads one :class:`Machine` from the
registry in ``machines/__init__.py``. Generic code never names a machine's own
vocabulary: what it needs to know is a field here.

Time is part of each model. A chart keeps the current time as data and moves it
by its own events (the wake gate's ``elapse``, a deadline's ``advance``); the
explorer, the lockstep tests and the cases all move time through those same
events, so there is no second transition function for the clock.

Adding a machine is new files plus one entry in the registry; the checklist is
``docs/adding-a-machine.md`` and ``tests/test_registry.py`` is its executable twin.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from inboxspec.machines import interface as interface_data

if TYPE_CHECKING:  # annotations alone: the runner reads no chart, and imports no chart library
    from statemachine import StateChart

# A case runner takes (config, steps without expectations) and returns either
# {"outputs": [...]} (one output per step) or {"config_error": code}.
CaseRunner = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]]], dict[str, Any]]

# An explorer snapshot: the machine's canonical state fingerprint, a NamedTuple
# of hashable fields (``Explorer.variables`` are its field names, and nested
# entries are NamedTuples too, so that traces and the invariants read them by
# name) whose first field is the chart's control state id. Two
# snapshots that the invariants and the chart cannot tell apart must be equal
# (symmetry reduction is the description's job: for example, interchangeable
# message identities are renumbered in ``store``).
Snapshot = tuple[Hashable, ...]


class HashedOnce:
    """A base for a snapshot's NamedTuple (put it first among the bases) whose hash is worked out
    once per object instead of at every use.

    A tuple's hash is not kept: CPython walks every nested field each time. A search looks each
    state up several times (its seen-set, its numbering, its owner on several workers), and a
    description's own caches look up the parts of a state by value, so a deeply nested snapshot
    (the host's: about 1.5 µs a hash) pays that walk at every lookup. The subclass keeps the hash
    in the object's ``__dict__``; equality is the tuple's, so two equal snapshots still have
    one hash.

    The kept hash never leaves the process: a hash of text differs between processes unless
    they share one hash seed, so ``__getstate__`` gives nothing to pickle and an unpickled
    snapshot works its hash out anew (``tests/test_machine_frame.py``).
    """

    __slots__ = ()

    def __hash__(self) -> int:
        kept: dict[str, int] = self.__dict__
        hashed = kept.get("_hash")
        if hashed is None:
            hashed = kept["_hash"] = tuple.__hash__(self)  # type: ignore[arg-type]
        return hashed

    def __getstate__(self) -> None:
        return None

# The deepest refinement (``checker/refine.py``): an explorer description may
# lean on it, as the idle subscriptions' age cap does.
MAX_REFINE_DEPTH = 8

# Parsed exploration bounds: whatever ``Explorer.parse_bounds`` returns.
Bounds = Mapping[str, Any]

# One explorer step: (snapshot before, letter, snapshot after, the chart's output).
Step = tuple[Snapshot, "Action", Snapshot, "dict[str, Any] | None"]


@dataclass(frozen=True)
class Action:
    """One letter of an exploration alphabet: a chart event with fixed arguments.

    ``label`` is what a trace prints. ``kwargs`` are bound once, as constants,
    when the explorer compiles the letter, so they must not depend on the state:
    a letter that means "the oldest held message" names a position, not an id.
    ``when`` restricts the states the letter is sent in, a bound whose
    small-scope argument the description gives.
    """

    label: str
    event: str
    kwargs: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # A bound on the environment: when set, the letter is offered only in the snapshots
    # for which it is true (the host types a line only at a session with none pending,
    # say); every tool that fires letters skips it elsewhere (``offered``). It must pickle (a
    # module function, or a functools.partial of one): explorations run in worker processes
    # send their traces, letters included, back to the caller.
    when: Callable[[Any], bool] | None = field(default=None, hash=False, compare=False)

    def offered(self, snapshot: Any) -> bool:
        """Whether the environment sends this letter in ``snapshot`` (see ``when``)."""
        return self.when is None or self.when(snapshot)


@dataclass(frozen=True)
class Invariant:
    """A named property checked on every explorer step of the letters it applies to.

    ``applies`` is decided once per letter; ``holds(pre, post, output, bounds)``
    runs on each step of such a letter. A finding's property names the finding
    and the option under which it holds: under the seed default it is *expected*
    to fail (tlaplus-style), with a shortest trace.

    ``of_state`` says that ``holds`` reads the state reached (``post``) and the
    bounds alone, for every letter. The explorer then checks it once per
    distinct state, on the first step that reaches the state, which gives the
    same first violation as checking every step (``checker/explore.py``,
    ``invariant_checks``); in place of ``pre`` and the output it passes an
    object that refuses every use, so a property that reads them fails loudly
    instead of being checked on too few steps.

    ``replaced_by`` names the options that replace the rule the property states: a
    finding's fix that changes the seed's rule on purpose (peer delivery's
    ``fair_eviction`` evicts another entry than the oldest). Under such an option the
    property is no promise, and the spec's option says what holds instead; an
    exploration with the option on does not check it (``checked_invariants``), unless
    asked for it by name.
    """

    name: str
    requirements: tuple[str, ...]
    applies: Callable[[Action], bool]
    holds: Callable[[Any, Any, Mapping[str, Any], Bounds], bool]
    finding: str | None = None
    option: str | None = None
    of_state: bool = False
    replaced_by: tuple[str, ...] = ()


def every_letter(action: Action) -> bool:
    """A letter filter that keeps every letter (a forever-property's default ``allowed_letters``
    and ``marked_letters``)."""
    return True


def any_step(pre: Any, action: Action, post: Any, out: Any, bounds: Bounds) -> bool:
    """An ``every_step`` that allows every step of an allowed letter; the search then calls nothing."""
    return True


@dataclass(frozen=True)
class ForeverProperty:
    """A liveness-style promise: no execution repeats some kind of step forever.

    It is checked on cycles of the explored graph, not by a bounded counter:
    the property fails when a reachable cycle exists whose every step is
    allowed and of whose steps at least one is marked (defined below; for the
    wake gate: a cycle without user input or a streak reset that
    contains a counted wake). The failure is shown as a lasso, the shortest
    prefix from the initial state to the cycle and then the loop
    (``checker/cycles.py``).

    Both predicates take ``(pre, action, post, output, bounds)`` of one
    explored step. Like an invariant's ``applies``, ``allowed_letters`` and
    ``marked_letters`` are decided once per letter of the alphabet: a step is
    allowed when its letter is in ``allowed_letters`` and the step satisfies
    ``every_step`` (``any_step``: every step of such a letter, so the search
    calls nothing), and marked when, allowed, its letter is also in
    ``marked_letters`` and it satisfies ``some_step``, which is asked of no
    other step. ``finding`` and ``option`` mean what they mean on an
    :class:`Invariant`: a finding's property is *expected* to fail under the
    seed default and to hold with its option on. ``also_fixed_by`` names the
    finding's other options, other readings of the same fix that the spec says
    hold the property too: it must hold with each of them on as well (``inboxspec
    check`` explores every option at the default bounds). ``expected_to_fail`` marks a
    property that fails under the seed's defaults and has no fixing option
    yet (a known gap, reported rather than hidden).
    """

    name: str
    requirements: tuple[str, ...]
    every_step: Callable[[Any, Action, Any, Any, Bounds], bool]
    some_step: Callable[[Any, Action, Any, Any, Bounds], bool]
    finding: str | None = None
    option: str | None = None
    also_fixed_by: tuple[str, ...] = ()
    expected_to_fail: bool = False
    allowed_letters: Callable[[Action], bool] = every_letter
    marked_letters: Callable[[Action], bool] = every_letter

    def expected_to_fail_under(self, options: Mapping[str, bool]) -> bool:
        if self.finding is not None and self.option is not None:
            return not any(options.get(option, False) for option in self.fixing_options)
        return self.expected_to_fail or self.finding is not None

    @property
    def fixing_options(self) -> tuple[str, ...]:
        """Every option the property must hold with: ``option``, then ``also_fixed_by``."""
        return () if self.option is None else (self.option, *self.also_fixed_by)


def forever_properties(explorer: Any) -> tuple[ForeverProperty, ...]:
    """An explorer description's forever-properties (``forever``; none when it declares none).

    It is read through this function rather than as a member of
    :class:`Explorer`, so that a description without cycle properties needs no change.
    """
    declared: tuple[ForeverProperty, ...] = getattr(explorer, "forever", ())
    return declared


def coverage_explorations(explorer: Any) -> tuple[Mapping[str, str], ...]:
    """An explorer description's coverage explorations (``coverage_bounds``; none when it declares none).

    Each is a set of ``--bound`` values (merged over the defaults, as on the
    command line) at which the generated cases also look for chart
    transitions: a bound that the default exploration keeps at 0 to stay
    small (the host's hand and reminders, say) leaves transitions that no
    default exploration reaches, and a small exploration that turns it on
    and others down reaches them cheaply. Such an exploration is explored at
    the default options and only for cases: the manifest, the findings and
    the forever-properties stay at the default bounds. The description says
    what each one is for. Read through this function, as ``forever`` is, so
    that a description without any needs no change.
    """
    declared: tuple[Mapping[str, str], ...] = getattr(explorer, "coverage_bounds", ())
    return declared


# The search's own step (``checker.compiled.take_step`` on its data, load and store): from a
# snapshot, fire a letter's generated function; the transition fired, the snapshot reached, the output.
TakeStep = Callable[[Any, Callable[[Any], Any]], tuple[Any, Any, Any]]


class StepMemo(Protocol):
    """A description's shortcut for the search's steps: ``step(index, pre, fire)`` gives what the
    search's ``take(pre, fire)`` would (the transition fired, the snapshot reached, the output) for
    letter ``index`` from ``pre``, taking the step when it does not know it yet and remembering it
    by what alone it read.

    A memo is an abstraction the search makes, so its description tests it for exactness: every
    exploration finds with it what it finds without it (``tests/test_host_steps.py``)."""

    def step(self, index: int, pre: Any, fire: Callable[[Any], Any]) -> tuple[Any, Any, Any]: ...


def step_memo(explorer: Any, data: Any, bounds: Bounds, options: Mapping[str, bool],
              actions: Sequence[Action], take: TakeStep) -> StepMemo | None:
    """A new memo of an explorer description for one search on ``data`` (``step_memo``; none when it
    declares none). Read through this function, as ``forever`` is, so that a description without
    one needs no change."""
    make: Callable[..., StepMemo | None] | None = getattr(explorer, "step_memo", None)
    return None if make is None else make(data, bounds, options, actions, take)


# The part of a snapshot whose hash names its owner in the sharded search (``shard_key``).
ShardKey = Callable[[Any], Hashable]


def shard_key(explorer: Any) -> ShardKey | None:
    """An explorer description's shard key (``shard_key``), or None: the sharded search
    (``checker/parallel.py``) gives each state to the worker its shard key's hash names, the
    whole snapshot's when the description names none.

    A description names one to keep together the states whose steps its step memo
    (``step_memo``) remembers by one part: a worker's memo then meets that part's steps
    alone, instead of each worker firing them again. Any key gives the same exploration
    (the search numbers the states as one process does, whoever owns them), so long as
    equal snapshots have equal keys: each state must have one owner."""
    key: ShardKey | None = getattr(explorer, "shard_key", None)
    return key


# How a description makes a snapshot that another process sent this one its own (``own_parts``).
OwnParts = Callable[[Any, Any], Any]


def own_parts(explorer: Any) -> OwnParts | None:
    """An explorer description's ``own_parts(data, snapshot)``, or None: an equal snapshot whose
    parts are the objects this process made first for equal parts. The sharded search gives it each
    new state another worker sent (``checker/parallel.py``, ``_Shard.receive``), which arrives as
    objects of its own: a description whose step memo keys its tables by its parts' identity (the
    host's, ``machines/host_steps.py``) fired every step of such a part again. Equal parts are
    interchangeable, as equal snapshots are to every seen-set, so any description may name one."""
    own: OwnParts | None = getattr(explorer, "own_parts", None)
    return own


class ReadableTrace(NamedTuple):
    """A trace as a reader follows it (``readable_trace``)."""

    variables: Sequence[str]  # the names of its states' fields
    steps: list[Step]
    # Per state of the trace (the first step's pre, then each step's post): the name the reader reads
    # for each name the explored snapshot gives (the host's sessions); None where the two are one.
    names: list[dict[str, str]] | None = None


def readable_trace(explorer: Any, trace: Sequence[Step], bounds: Bounds,
                   options: Mapping[str, bool]) -> ReadableTrace:
    """A trace of an exploration at ``bounds`` with ``options`` as the traces printed for people show
    it: the description's ``readable`` when it has one, else the trace as explored, with its
    ``variables``.

    A description gives one where its snapshots are abstractions a reader cannot follow from step
    to step: the host's name each session by its place in each snapshot, which changes from one
    step to the next (``machines/host.py``, ``readable``). Whatever it gives must be the trace
    explored, not another: the host's replays each step and raises ``ReplayMismatch`` when the
    state it reaches is not the one explored. ITF keeps the explored snapshots (``checker/traces.py``);
    a case is the description's ``concretize`` (the host's names the sessions as its ``readable``
    does)."""
    readable: Callable[..., ReadableTrace] | None = getattr(explorer, "readable", None)
    if readable is None:
        return ReadableTrace(explorer.variables, list(trace))
    return readable(trace, bounds, options)


class ReplayMismatch(AssertionError):
    """A trace replayed for a reader (``readable_trace``) reached a state the exploration did not."""


class Explorer(Protocol):
    """What the bounded explorer, refinement and generated cases need of a machine.

    ``data`` below is a bare object carrying the chart's methods and class
    constants (see ``checker/compiled.py``): ``load`` writes a snapshot onto it,
    the compiled chart fires one transition on it, and ``store`` reads the
    canonical snapshot back.

    Some members are optional, and read through a function so that a
    description without them needs no change: ``forever``, the
    forever-properties (``forever_properties``); ``coverage_bounds``, the
    extra explorations the generated cases search (``coverage_explorations``);
    ``step_memo``, a shortcut for the search's steps (``step_memo``); and
    ``shard_key``, the part of a snapshot that names its owner in the sharded
    search (``shard_key``).
    """

    # Snapshot field names, in order (ITF traces name the state variables so).
    variables: tuple[str, ...]
    # Bound names and their default values as written on the command line.
    default_bounds: Mapping[str, str]
    # The finding options, as the chart's options and the cases' `config.options` name them.
    options: tuple[str, ...]
    invariants: tuple[Invariant, ...]
    # Events whose steps are not observable in a case (time passing between
    # inputs that carry `now_ms`, say). Their transitions are explored and
    # checked, but get no generated case of their own.
    unobservable_events: frozenset[str]

    def parse_bounds(self, raw: Mapping[str, str]) -> Bounds:
        """Validate and parse ``--bound`` values (merged over the defaults); ValueError when bad."""
        ...

    def alphabet(self, bounds: Bounds) -> Sequence[Action]:
        """Every letter the environment may send, within the bounds."""
        ...

    def chart_arguments(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        """Keyword arguments of the real chart's constructor for one exploration."""
        ...

    def constants(self, data: Any, bounds: Bounds, options: Mapping[str, bool]) -> None:
        """Put what stays fixed for a whole exploration (caps, options) on ``data``."""
        ...

    def initial(self, bounds: Bounds) -> Snapshot:
        ...

    def load(self, data: Any, snapshot: Any) -> None:
        """Write a snapshot's data onto ``data`` (a fresh copy of anything mutable)."""
        ...

    def store(self, data: Any, state: str) -> Snapshot:
        """The canonical snapshot of ``data`` in control state ``state``."""
        ...

    def config(self, bounds: Bounds, options: Mapping[str, bool]) -> dict[str, Any]:
        """The conformance ``config`` of an exploration."""
        ...

    def concretize(self, trace: Sequence[tuple[Any, Action, Any]], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
        """Case steps (without expectations) that replay an abstract trace, of an exploration at
        ``bounds`` with ``options``, with concrete values.

        Unobservable letters produce no step of their own; their effect shows in
        the next observable step (time passing folds into its ``now_ms``).
        """
        ...


def case_step(event: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A case step: ``{"event": event}``, with ``args`` only when there are some."""
    return {"event": event, "args": dict(args)} if args else {"event": event}


def merged_bounds(machine: str, defaults: Mapping[str, str], raw: Mapping[str, str]) -> dict[str, str]:
    """``raw`` over the defaults, as ``Explorer.parse_bounds`` starts; ValueError for an unknown name."""
    unknown = sorted(set(raw) - set(defaults))
    if unknown:
        raise ValueError(f"unknown {machine} bound(s): {', '.join(unknown)}; known: {', '.join(defaults)}")
    return {**defaults, **raw}


_BOUND_INTEGER = re.compile(r"-?[0-9]+")


def bound_integer(raw: str) -> int:
    """An integer bound's value as the command line writes it: ASCII digits, an optional minus, and
    nothing else (``int`` would also take ``1_0``, `` 3 `` and other scripts' digits); ValueError
    otherwise."""
    if not _BOUND_INTEGER.fullmatch(raw):
        raise ValueError(f"invalid integer {raw!r}")
    return int(raw)


def with_options(config: dict[str, Any], options: Mapping[str, bool]) -> dict[str, Any]:
    """An exploration's conformance ``config``: ``config`` with the finding options, when any are on."""
    return {**config, "options": dict(options)} if options else config


# A random case from a machine's event grammar: (config, steps without expectations).
Fuzzer = Callable[[random.Random], tuple[dict[str, Any], list[dict[str, Any]]]]


@dataclass(frozen=True)
class Machine:
    """Everything inboxspec knows about one machine, in one place."""

    name: str  # as case files and the protocol name it: "wake-gate"
    title: str
    seed: str  # the seed document's file name
    spec: Path  # its spec document
    cases: Path  # its case directory (generated cases live in `generated/` below it)
    manifest: Path  # what its default exploration must find (see checker/manifest.py)
    chart: type[StateChart[Any]]
    run_case: CaseRunner  # the reference implementation
    run_model_case: CaseRunner  # the model chart (valid input only)
    features: tuple[str, ...]  # features a port may declare unsupported
    explorer: Explorer
    fuzz: Fuzzer  # random cases for `conform --fuzz`
    # Its interface as data (spec/<name>.interface.json), when the machine has one.
    interface: interface_data.Interface | None = None

    @property
    def generated_cases(self) -> Path:
        return self.cases / "generated" / "transitions.json"


# The checkout the bundled machines' files live in (spec/, conformance/cases/, checker/manifests/).
_CHECKOUT = Path(__file__).resolve().parent.parent


class Driver(Protocol):
    """What a bundled machine's driver module (``machines/<snake>_driver.py``) provides."""

    @property
    def run_case(self) -> CaseRunner: ...

    @property
    def run_model_case(self) -> CaseRunner: ...

    @property
    def fuzz(self) -> Fuzzer: ...


def _bundled_interface(name: str) -> interface_data.Interface | None:
    """The interface data of the bundled machine ``name`` (spec/<name>.interface.json), if it has one."""
    return interface_data.load(name) if interface_data.has_interface(name) else None


def bundled_features(name: str) -> tuple[str, ...]:
    """The features of the bundled machine ``name``: the tag of each option its interface data
    names, or none while it has no interface data. Read without importing the machine's module, so
    that an adapter's ``start`` lists every machine's features and imports only the machines its
    run reads (``machines.features``)."""
    interface = _bundled_interface(name)
    return () if interface is None else interface.option_features


def bundled_cases(name: str) -> Path:
    """The case directory of the bundled machine ``name``: read without importing the machine's module
    (``machines.cases_dir``), so that a run of cases imports no machine's model or reference."""
    return _CHECKOUT / "conformance" / "cases" / name


def bundled_spec(name: str) -> Path:
    """The spec document of the bundled machine ``name``, read so too (``machines.spec_document``): the
    linter of a run's cases reads the requirements it cites."""
    return _CHECKOUT / "spec" / f"{name}.md"


def bundled_machine(name: str, title: str, seed: str, chart: type[StateChart[Any]], driver: Driver,
                    explorer: Explorer) -> Machine:
    """A machine whose files sit where ``docs/adding-a-machine.md`` puts them, named after ``name``."""
    return Machine(
        name=name, title=title, seed=seed,
        spec=bundled_spec(name),
        cases=bundled_cases(name),
        manifest=_CHECKOUT / "checker" / "manifests" / f"{name}.json",
        chart=chart,
        run_case=driver.run_case,
        run_model_case=driver.run_model_case,
        features=bundled_features(name),
        explorer=explorer,
        fuzz=driver.fuzz,
        interface=_bundled_interface(name),
    )

"""The writer proofs' harness: the runner's config keys and the ``swap_paths`` step (WRITER-IF-6).

Specified by ``spec/writer-proofs.md`` (WRITER-IF-1, WRITER-IF-6). The harness is not the machine:
it hands a session its fixture directory and moves the fixture's paths between the machine's
events, or arms a move for a moment inside the next measurement. Its checks live here, beside the
reference and with its typed errors, so that the case driver (``machines/writer_proofs_driver.py``)
only translates JSON:

* :func:`session_config` takes the runner's keys (``fixture``, ``fixture_dir``) out of a case's
  config, refusing a ``fixture_dir`` without a ``fixture``; the rest is
  :meth:`~inboxspec.impl.writer_proofs.WriterProofs.from_config`'s;
* :meth:`SwapPaths.from_arguments` checks a ``swap_paths`` step's arguments, after
  :func:`~inboxspec.impl.writer_proofs.check_arguments` (the step's first fault);
* :class:`SwapScript` makes a swap now or arms it, and performs an armed one at its moment through
  the hooks of a :class:`~inboxspec.impl.writer_fs.FilesystemEnvironment`
  (:class:`ScriptedEnvironment`).

The exchange of two paths itself is the fixture layer's (``machines/fixtures.py``, ``swap``): a
script is given it as a callable, since ``impl`` imports nothing outside ``impl``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .writer_fs import FilesystemEnvironment
from .writer_proofs import Environment, InvalidArgument, InvalidConfig

# WRITER-IF-1: the config keys that are the runner's, not the session's (the interface data's
# `runner` entries): `fixture` it checks and lays out, `fixture_dir` it supplies.
RUNNER_KEYS: tuple[str, ...] = ("fixture", "fixture_dir")
# WRITER-IF-6: the moments of a root's measurement at which an armed swap is performed.
SWAP_MOMENTS: tuple[str, ...] = ("before_read", "before_restat")


def session_config(config: object) -> object:
    """WRITER-IF-1, the harness's check of a case's config: the config without the runner's keys.

    A config with ``fixture_dir`` but no ``fixture`` (which no runner sends: a case never supplies
    the key) is ``invalid_config``, before anything is read or moved. A config that is not an
    object is returned as it is, for ``WriterProofs.from_config`` to refuse.
    """
    if isinstance(config, Mapping):
        if "fixture_dir" in config and "fixture" not in config:
            raise InvalidConfig("fixture_dir is the runner's, given only beside a fixture")
        config = {key: value for key, value in config.items() if key not in RUNNER_KEYS}
    return config


def _fixture_path(args: Mapping[str, object], name: str) -> str:
    value = args.get(name)
    if type(value) is not str:
        raise InvalidArgument(f"swap_paths: {name} must be a fixture-relative path string, got {value!r:.80}")
    return value


# WARNING: the runner reads these arguments too, to undo a case's swaps before another case shares
# its fixture (machines/fixtures.py, _swap_inverse: an armed swap has no certain inverse); change the
# step's arguments in both places, and in spec/writer-proofs.interface.json.
@dataclass(frozen=True)
class SwapPaths:
    """A ``swap_paths`` step (WRITER-IF-2, WRITER-IF-6): two fixture-relative paths, and the moment
    of the next measurement at which to exchange them (``during``), or None to exchange them now."""

    first: str
    second: str
    during: str | None = None

    @classmethod
    def from_arguments(cls, args: Mapping[str, object]) -> SwapPaths:
        """The step from its arguments, each checked in the event's argument order: ``first``, then
        ``second``, missing or not a string; then ``during``, given and not one of
        ``SWAP_MOMENTS`` (a ``null`` included). Every fault is ``invalid_argument``. The paths
        themselves are checked only when the swap is made (:meth:`SwapScript.step`,
        :meth:`SwapScript.perform`)."""
        first = _fixture_path(args, "first")
        second = _fixture_path(args, "second")
        if "during" not in args:
            return cls(first, second)
        during = args["during"]
        if during not in SWAP_MOMENTS:
            raise InvalidArgument(f"swap_paths: during must be one of {', '.join(SWAP_MOMENTS)}, "
                                  f"got {during!r:.80}")
        return cls(first, second, str(during))


class SwapScript:
    """The ``swap_paths`` steps of one session (WRITER-IF-6): each made now or armed, and an armed
    one performed by the next measurement of a root that reaches its moment, then disarmed.

    ``exchange`` exchanges two fixture-relative paths, raising OSError or ValueError when it
    cannot (``machines/fixtures.py``'s ``swap`` on the session's fixture directory)."""

    def __init__(self, exchange: Callable[[str, str], None]) -> None:
        self.exchange = exchange
        self.armed: SwapPaths | None = None

    def step(self, swap: SwapPaths) -> None:
        """One step: with ``during`` it arms the swap (replacing one armed before) and moves
        nothing; without, it exchanges the paths now, and paths that cannot be exchanged (neither
        exists, or one is not fixture-relative) are ``invalid_argument`` (WRITER-IF-4, last)."""
        if swap.during is not None:
            self.armed = swap
            return
        try:
            self.exchange(swap.first, swap.second)
        except (OSError, ValueError) as error:
            raise InvalidArgument(f"swap_paths failed: {error}") from None

    def perform(self, moment: str) -> None:
        """The armed swap, if it is armed for ``moment``; nothing moves, and the measurement goes
        on, when its paths cannot be exchanged."""
        armed = self.armed
        if armed is None or armed.during != moment:
            return
        self.armed = None
        with contextlib.suppress(OSError, ValueError):
            self.exchange(armed.first, armed.second)

    def hooks(self) -> dict[str, Callable[[], None]]:
        """A ``FilesystemEnvironment``'s hooks for the two moments of a root's measurement."""
        return {"before_read": lambda: self.perform("before_read"),
                "between": lambda: self.perform("before_restat")}


class ScriptedEnvironment(FilesystemEnvironment):
    """The real filesystem, with a case's swaps (WRITER-IF-6)."""

    def __init__(self, exchange: Callable[[str, str], None]) -> None:
        self.swaps = SwapScript(exchange)
        super().__init__(**self.swaps.hooks())


def swap_paths(env: Environment, args: Mapping[str, object]) -> None:
    """The ``swap_paths`` step on a session's world: its arguments checked
    (:meth:`SwapPaths.from_arguments`), then made or armed; ``invalid_argument`` when the world is
    not a scripted one (a session without a fixture directory)."""
    swap = SwapPaths.from_arguments(args)
    if not isinstance(env, ScriptedEnvironment):
        raise InvalidArgument("swap_paths moves a fixture, and this session's world has none")
    env.swaps.step(swap)

"""The writer-proofs explorer's worlds and the chart's memo of its reads of them are exact.

The explorer observes every arrangement of the standard fixture on one materialisation, undoing
each swap after its observation (``world_of``): each world is the one a fixture of its own shows.

The chart remembers its reads of worlds (``WriterProofsChart._read``). The explorer hands every step
of one letter the same ``World`` object, so a chart that remembered a read by the wrong key (the
world alone, say, without the roots an ``initial`` names or the context an ``attest`` keeps) would
give one letter's outcome to another. Here every exploration, at both alphabets and under each
option, finds the same states, steps, outputs and violations with the memo as with every read made
afresh; and the memo does save reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from inboxspec.checker.explore import Exploration, explore
from inboxspec.conformance.compare import canonical
from inboxspec.machines import fixtures, writer_proofs_driver
from inboxspec.machines.writer_proofs import ARRANGEMENTS, INTERFACE, ROOT_CHOICES, standard_config, world_of
from inboxspec.model import writer_proofs
from inboxspec.model.writer_proofs import WriterProofsChart


def _findings(result: Exploration) -> Any:
    """All an exploration found, as plain values: the counts, and every trace with its outputs."""
    def traces(steps: Mapping[Any, list[Any]]) -> Any:
        return {str(key): [(pre, action.label, post, canonical(out)) for pre, action, post, out in trace]
                for key, trace in steps.items()}

    return (result.states, result.transitions, result.max_depth, traces(result.coverage),
            traces(result.violations))


@pytest.mark.parametrize("alphabet", ["lean", "full"])
@pytest.mark.parametrize("option", [None, *INTERFACE.options])
def test_an_exploration_finds_the_same_with_every_read_made_afresh(
        alphabet: str, option: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    options = {} if option is None else {option: True}
    remembered = explore("writer-proofs", {"alphabet": alphabet}, options)
    made = 0
    original = writer_proofs.active_read

    def counted(*args: Any) -> Any:
        nonlocal made
        made += 1
        return original(*args)

    monkeypatch.setattr(writer_proofs, "active_read", counted)
    monkeypatch.setattr(WriterProofsChart, "_read",
                        lambda self, read, world, *args: read(world, self.own_root, *args))
    afresh = explore("writer-proofs", {"alphabet": alphabet}, options)
    assert made > 0  # the reads were made afresh, not taken from a memo
    assert _findings(afresh) == _findings(remembered)


def test_the_memo_saves_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    original = writer_proofs.active_read

    def counted(*args: Any) -> Any:
        made.append(args)
        return original(*args)

    monkeypatch.setattr(writer_proofs, "active_read", counted)
    result = explore("writer-proofs", {"alphabet": "full"})
    assert made and len(made) == len({(id(world), *rest) for world, *rest in made})  # each read once
    assert len(made) < result.transitions


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_each_world_is_the_one_a_fixture_of_its_own_shows(arrangement: str) -> None:
    """The explorer observes every arrangement on one fixture, undoing each swap (``world_of``)."""
    config = standard_config({})
    spellings = [root for roots in ROOT_CHOICES.values() for root in roots]
    with fixtures.materialised(config["fixture"]) as directory:
        swap = ARRANGEMENTS[arrangement]
        if swap is not None:
            fixtures.swap(directory, *swap)
        alone = writer_proofs_driver.observe(directory, config, spellings)
    assert world_of(arrangement) == alone

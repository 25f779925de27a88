"""Every vocabulary constant and default of the reference (impl/) and of the model (model/)
equals the interface data (spec/<machine>.interface.json), for the wake gate and peer delivery.

impl and model stay two independent descriptions: they keep their own constants, and this
test is what ties them to the one written list. Words that a description writes inline (the
model's causes, say) are checked by reading its source: every word of a vocabulary that the
machine mints must appear there, and no other word of that shape.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from types import ModuleType

import pytest

from inboxspec.impl import peer_delivery as impl_peer
from inboxspec.impl import wake_gate as impl_wake
from inboxspec.machines import interface
from inboxspec.model import peer_delivery as model_peer
from inboxspec.model import wake_gate as model_wake

WAKE = interface.load("wake-gate")
PEER = interface.load("peer-delivery")


def option_names(options: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(options))


def test_wake_gate_reference_constants_equal_the_data() -> None:
    assert WAKE.config_key("max_streak").default == impl_wake.DEFAULT_MAX_STREAK
    assert WAKE.config_key("floor_ms").default == impl_wake.DEFAULT_CADENCE_FLOOR_MS
    assert {key.name for key in WAKE.config_keys} == impl_wake.CONFIG_KEYS
    assert option_names(impl_wake.GateOptions) == WAKE.options
    assert tuple(lane.value for lane in impl_wake.Lane) == WAKE.vocabulary("lanes")
    assert tuple(code.value for code in impl_wake.RefusalCode) == WAKE.vocabulary("refusal_codes")
    assert set(WAKE.vocabulary("message_fields")) == impl_wake.MESSAGE_FIELDS
    assert WAKE.vocabulary("user_kind") == (impl_wake.USER_KIND,)
    assert WAKE.vocabulary("scheduled_prefix") == (impl_wake.SCHEDULED_PREFIX,)


def test_wake_gate_model_constants_equal_the_data() -> None:
    assert WAKE.config_key("max_streak").default == model_wake.DEFAULT_MAX_STREAK
    assert WAKE.config_key("floor_ms").default == model_wake.DEFAULT_FLOOR_MS
    assert option_names(model_wake.WakeGateModelOptions) == WAKE.options
    assert WAKE.vocabulary("scheduled_prefix") == (model_wake.SCHEDULED_PREFIX,)


def test_peer_delivery_reference_constants_equal_the_data() -> None:
    for key in ("held_cap", "box_cap", "max_hops"):
        assert getattr(impl_peer, f"DEFAULT_{key.upper()}") == PEER.config_key(key).default, key
    assert option_names(impl_peer.DeliveryOptions) == PEER.options
    assert PEER.vocabulary("settings") == impl_peer.SETTINGS
    assert PEER.vocabulary("attestations") == impl_peer.ATTESTATIONS
    assert PEER.vocabulary("receipt_states") == impl_peer.RECEIPT_STATES
    assert tuple(impl_peer.DELIVERY_PHRASES) == PEER.vocabulary("rendered_states")
    assert PEER.vocabulary("drop_reasons") == impl_peer.DROP_REASONS
    assert PEER.vocabulary("review_causes") == impl_peer.REVIEW_CAUSES
    phrases = {reason: phrase for reason, phrase in impl_peer.DROP_PHRASES.items() if reason is not None}
    assert phrases == PEER.vocabularies["drop_reason_phrases"]
    expiry = PEER.vocabularies["dialog_expiry"]
    assert expiry["ms"] == impl_peer.DIALOG_EXPIRY_MS
    assert expiry["default"] == impl_peer.DIALOG_EXPIRY_DEFAULT


def test_peer_delivery_model_constants_equal_the_data() -> None:
    for key in ("held_cap", "box_cap", "max_hops"):
        assert getattr(model_peer, f"DEFAULT_{key.upper()}") == PEER.config_key(key).default, key
    assert option_names(model_peer.PeerDeliveryModelOptions) == PEER.options
    assert PEER.vocabulary("review_causes") == model_peer.REVIEW
    expiry = PEER.vocabularies["dialog_expiry"]
    assert expiry["ms"] == model_peer.EXPIRY
    assert expiry["default"] == model_peer.DEFAULT_EXPIRY


def string_literals(module: ModuleType) -> set[str]:
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    return {node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


# (module, vocabulary, words the machine never mints, the shape of its words): each word
# minted must be written in the description, and every word of that shape it writes must
# be in the vocabulary. queue-full is never minted (PEER-SEND-3).
HYPHENATED = re.compile(r"^[a-z]+(-[a-z]+)+$")
MINTED = [
    (impl_peer, "causes", ()), (model_peer, "causes", ()),
    (impl_peer, "drop_reasons", ("queue-full",)), (model_peer, "drop_reasons", ("queue-full",)),
    (model_wake, "lanes", ()), (model_wake, "refusal_codes", ()),
]


@pytest.mark.parametrize(("module", "vocabulary", "unminted"), MINTED,
                         ids=[f"{m.__name__.rsplit('.', 2)[-2]}-{m.__name__.rsplit('.', 1)[-1]}-{v}"
                              for m, v, _ in MINTED])
def test_every_minted_word_is_written_in_the_description(module: ModuleType, vocabulary: str,
                                                         unminted: tuple[str, ...]) -> None:
    data = WAKE if vocabulary in WAKE.vocabularies else PEER
    words = set(data.vocabulary(vocabulary)) - set(unminted)
    assert words <= string_literals(module), sorted(words - string_literals(module))


@pytest.mark.parametrize("module", [impl_peer, model_peer], ids=["impl", "model"])
def test_peer_delivery_writes_no_hyphenated_word_outside_the_vocabularies(module: ModuleType) -> None:
    """A cause or drop reason spelt differently (`hop-loops`, `blocked-senders`) is caught."""
    known = {word for words in PEER.vocabularies.values() if isinstance(words, list) for word in words}
    known |= set(PEER.vocabularies["drop_reason_phrases"])
    known.add(PEER.machine)  # the machine's own name, which its options' error messages give
    hyphenated = {s for s in string_literals(module) if HYPHENATED.match(s)}
    assert hyphenated <= known, sorted(hyphenated - known)


def test_every_machines_features_are_its_options_tags_and_a_config_needs_those_set_true() -> None:
    """The feature tags are the interface data's options, tagged once (``interface.option_feature``),
    for every registered machine; a config needs the tag of each option set to true, and of no
    option set false or to a value that is not true (a port reads the option as off)."""
    from inboxspec import machines

    for entry in machines.all_machines():
        assert entry.interface is not None
        assert entry.features == tuple(f"option:{name}" for name in entry.interface.options), entry.name
    needed = interface.features_for_options({"b": True, "a": True, "off": False, "one": 1, "text": "true"})
    assert needed == ["option:b", "option:a"]

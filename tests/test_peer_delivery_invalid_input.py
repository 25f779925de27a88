"""Arbitrary Python values into every public entry point of the peer-delivery reference.

The only exceptions allowed are the spec's typed errors (PEER-ERR-1), and a
rejected call changes nothing (PEER-IF-3). Plus the seed's constants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxspec.impl import peer_delivery as pd
from inboxspec.impl.peer_delivery import ABSENT, PeerDelivery, PeerDeliveryError
from tests.typed_errors import raises_only

# Anything JSON can say, plus Python values a host might pass by mistake.
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)
VALUES = JSONISH | st.sampled_from([ABSENT, b"bytes", object(), 1.0, -0.0, float("inf"), ("a",), {"a"}])
NAMES = st.sampled_from(["sender", "sender_mode", "attestation", "hops", "loop", "duplicate", "rate_limited"])


def _delivery() -> PeerDelivery:
    delivery = PeerDelivery.from_config({"held_cap": 2, "box_cap": 1, "setting": "hold"})
    delivery.send_message("a")
    delivery.advance(10)
    return delivery


def _unchanged(call: Any) -> None:
    delivery = _delivery()
    before = delivery.state
    try:
        call(delivery)
    except PeerDeliveryError as error:
        assert error.code and str(error)
        assert delivery.state == before, "a rejected call changed the state"


@given(config=VALUES)
def test_from_config_raises_only_typed_errors(config: Any) -> None:
    raises_only(PeerDeliveryError, "invalid_config", lambda: PeerDelivery.from_config(config))


RECIPIENTS = VALUES | st.builds(pd.Recipient, VALUES, VALUES, VALUES)
OPTION_VALUES = VALUES | st.builds(pd.DeliveryOptions, st.booleans(), st.booleans(), st.booleans())


@given(fair=VALUES, box=VALUES, deadlines=VALUES)
def test_options_raise_only_typed_errors(fair: Any, box: Any, deadlines: Any) -> None:
    raises_only(PeerDeliveryError, "invalid_config", lambda: pd.DeliveryOptions(fair, box, deadlines))


@given(held_cap=VALUES, box_cap=VALUES, max_hops=VALUES, recipient=RECIPIENTS, options=OPTION_VALUES)
def test_constructor_raises_only_typed_errors(held_cap: Any, box_cap: Any, max_hops: Any, recipient: Any,
                                              options: Any) -> None:
    raises_only(PeerDeliveryError, "invalid_config", lambda: PeerDelivery(
        held_cap=held_cap, box_cap=box_cap, max_hops=max_hops, recipient=recipient, options=options))


@given(args=st.dictionaries(NAMES, VALUES, max_size=4))
def test_send_message_raises_only_typed_errors(args: dict[str, Any]) -> None:
    _unchanged(lambda d: d.send_message(**{"sender": "b", **args}))


STATEFUL = ["set_recipient", "set_dialog_expiry", "advance", "approve", "deny", "take"]


@given(value=VALUES, which=st.sampled_from(STATEFUL))
def test_stateful_events_raise_only_typed_errors(value: Any, which: str) -> None:
    _unchanged(lambda d: getattr(d, which)(value))


@given(a=VALUES, b=VALUES, c=VALUES)
def test_set_recipient_keywords_raise_only_typed_errors(a: Any, b: Any, c: Any) -> None:
    _unchanged(lambda d: d.set_recipient(setting=a, starting_up=b, mode=c))


@given(a=VALUES, b=VALUES, c=VALUES)
def test_pure_functions_raise_only_typed_errors(a: Any, b: Any, c: Any) -> None:
    calls: list[Callable[[], str]] = [
        lambda: pd.render_delivery_notice(a, b, c), lambda: pd.render_dropped_notice(a, b, c),
        lambda: pd.describe_drop_reasons(a), lambda: pd.recipient_suffix(a)]
    for call in calls:
        try:
            text = call()
        except PeerDeliveryError:
            continue
        assert "\n" not in text
    assert pd.is_receipt_state(a) in (True, False)
    assert pd.resolve_dialog_expiry(a).value in pd.DIALOG_EXPIRY_MS


@pytest.mark.parametrize(("raw", "value", "invalid"), [
    (ABSENT, "5m", False), (None, "5m", False), ("default", "5m", False), ("60s", "60s", False),
    ("never", "never", False), ("5M", "5m", True), (300_000, "5m", True), (True, "5m", True),
    ([], "5m", True),
])
def test_dialog_expiry_resolution(raw: Any, value: str, invalid: bool) -> None:
    resolved = pd.resolve_dialog_expiry(raw)
    assert (resolved.value, resolved.invalid) == (value, invalid)
    assert (resolved.warning is not None) == invalid


def test_seed_constants() -> None:
    assert pd.DEFAULT_HELD_CAP == 100 and pd.DEFAULT_BOX_CAP == 50
    assert pd.RECEIPT_STATES == ("held", "denied", "expired", "delivered", "refused", "dropped")
    # The seed's drop reasons; this spec may add its own (tests/test_interface_vocabularies.py
    # ties the whole list to the interface data).
    assert {"rate-limited", "duplicate", "hop-loop", "hop-runaway", "queue-full"} <= set(pd.DROP_REASONS)
    assert pd.DIALOG_EXPIRY_MS == {"60s": 60_000, "5m": 300_000, "10m": 600_000, "never": None}
    assert set(pd.REVIEW_CAUSES) == {"mode-mismatch", "no-mode-asserted", "attestation-garbage"}


def test_default_buffer_evicts_at_101() -> None:
    delivery = PeerDelivery.from_config({"setting": "hold"})
    for _ in range(100):
        assert not [r for r in delivery.send_message("a").receipts if r.state == "expired"]
    evicted = [r.ticket for r in delivery.send_message("a").receipts if r.state == "expired"]
    assert evicted == [1] and len(delivery.held) == 100

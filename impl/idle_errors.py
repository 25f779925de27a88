"""The idle-subscriptions machine's typed errors (spec/idle-subscriptions.md, IDLE-ERR-*).

Every error carries a stable ``code``; cases expect errors by code, never by message.
"""

from __future__ import annotations

from typing import ClassVar

from .errors import InboxSpecError


class IdleSubscriptionError(InboxSpecError):
    code: ClassVar[str] = "invalid_argument"


class InvalidConfig(IdleSubscriptionError):
    code = "invalid_config"


class InvalidArgument(IdleSubscriptionError):
    code = "invalid_argument"


class InvalidTime(IdleSubscriptionError):
    code = "invalid_time"


class TargetClosed(IdleSubscriptionError):
    """A turn event after the target exited or shut down (IDLE-ERR-4)."""

    code = "target_closed"


class DuplicateSubscription(IdleSubscriptionError):
    """A subscription id the requester half already holds (IDLE-ERR-6)."""

    code = "duplicate_subscription"


class TurnInProgress(IdleSubscriptionError):
    code = "turn_in_progress"


class NoTurnInProgress(IdleSubscriptionError):
    code = "no_turn"

"""The base of every machine's options: behaviour changes recommended by its findings.

A machine's options are a frozen dataclass of booleans, each ``False`` by default
(the seed's behaviour). Its JSON form is an object of booleans; an unknown name
or a value that is not ``true`` or ``false`` is the machine's ``invalid_config``
error, so that a misspelt option or a truthy ``"no"`` never switches anything on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import ClassVar, Self

from .errors import InboxSpecError
from .values import describe


@dataclass(frozen=True)
class FindingOptions:
    """Subclass as a frozen dataclass with boolean fields, and name the machine and its error."""

    MACHINE: ClassVar[str]  # for messages: "unknown <MACHINE> option(s)"
    INVALID_CONFIG: ClassVar[type[InboxSpecError]]  # the machine's invalid_config error

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is not bool:
                raise self.INVALID_CONFIG(f"option {f.name} must be true or false, got {describe(value)}")

    @classmethod
    def from_mapping(cls, raw: object) -> Self:
        """The options from their JSON form; absent names keep the seed's default."""
        if not isinstance(raw, Mapping):
            raise cls.INVALID_CONFIG(f"options must be an object of booleans, got {describe(raw)}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(describe(key) for key in raw if key not in known)
        if unknown:
            raise cls.INVALID_CONFIG(f"unknown {cls.MACHINE} option(s): {', '.join(unknown)}")
        return cls(**raw)

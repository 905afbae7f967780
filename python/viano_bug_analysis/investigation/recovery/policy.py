"""The versioned recovery policy of one investigation.

``response_recovery_version`` selects the behaviour: 0 (the default) is the
behaviour from before recovery existed — a strict parse and nothing else, no
normalization, no repair call, no notes — and 1 enables the rules of SPEC §9.

The policy is stored with its investigation and read back as stored: a
loaded version 1 stays 1 even if the default moves on, and a stored policy
that predates the field reads as 0, the behaviour it was created with. A
running investigation is never switched: :class:`~.flow.RecoveryPipeline`
fixes its policy when it is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from viano_bug_analysis.investigation.recovery.errors import (
    POLICY_INVALID,
    POLICY_VERSION_UNKNOWN,
    PolicyError,
)
from viano_bug_analysis.investigation.recovery.normalize import RECOVERY_POLICY_VERSION
from viano_bug_analysis.investigation.recovery.strict_json import JsonFailure, parse_strict
from viano_bug_analysis.jsonio import canonical_bytes

DEFAULT_RESPONSE_RECOVERY_VERSION: Final = 0
KNOWN_VERSIONS: Final = (0, RECOVERY_POLICY_VERSION)
POLICY_KEY: Final = "response_recovery_version"


@dataclass(frozen=True, slots=True)
class RecoveryPolicy:
    """The recovery part of an investigation policy."""

    response_recovery_version: int = DEFAULT_RESPONSE_RECOVERY_VERSION

    def __post_init__(self) -> None:
        _check_version(self.response_recovery_version)

    @property
    def recovery_on(self) -> bool:
        """Whether this policy enables normalization and repair at all."""
        return self.response_recovery_version == RECOVERY_POLICY_VERSION

    def to_mapping(self) -> dict[str, int]:
        """The stored form, to be kept inside the investigation policy."""
        return {POLICY_KEY: self.response_recovery_version}

    def to_json(self) -> bytes:
        """The stored form as canonical JSON (UTF-8, keys sorted, no whitespace)."""
        return canonical_bytes(self.to_mapping())

    @classmethod
    def from_mapping(cls, stored: Mapping[str, Any]) -> RecoveryPolicy:
        """Reads the policy back from a stored investigation policy.

        Other keys belong to the rest of the investigation policy and are
        ignored here. A policy stored before the field existed has no key and
        keeps the behaviour it ran with: version 0.
        """
        if not isinstance(stored, Mapping):
            raise PolicyError(POLICY_INVALID, "stored recovery policy is not an object")
        version = stored.get(POLICY_KEY, 0)
        return cls(version)

    @classmethod
    def from_json(cls, data: bytes) -> RecoveryPolicy:
        """Reads :meth:`to_json` output back (strict JSON, an object)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise PolicyError(POLICY_INVALID, "stored recovery policy is not UTF-8") from None
        parsed = parse_strict(text)
        if isinstance(parsed, JsonFailure) or not isinstance(parsed.value, dict):
            raise PolicyError(POLICY_INVALID, "stored recovery policy is not a JSON object")
        return cls.from_mapping(parsed.value)


def _check_version(version: object) -> None:
    # ``True`` is an int in Python but never a version.
    if type(version) is not int:
        raise PolicyError(
            POLICY_INVALID, "response_recovery_version must be an integer", {"key": POLICY_KEY}
        )
    if version not in KNOWN_VERSIONS:
        raise PolicyError(
            POLICY_VERSION_UNKNOWN,
            "response_recovery_version is not a known version",
            {"version": version, "known": list(KNOWN_VERSIONS)},
        )


__all__ = [
    "DEFAULT_RESPONSE_RECOVERY_VERSION",
    "KNOWN_VERSIONS",
    "POLICY_KEY",
    "RecoveryPolicy",
]
